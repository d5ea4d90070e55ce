// Plain xdsl-opt knows all our passes through the `xdsl.universe` entry point in pyproject.toml:
// the pipeline is accepted (no "Unrecognized passes") and runs; every pass leaves a function
// without nn operators unchanged.
// RUN: xdsl-opt %s -p 'legalize-tosa,cascade-plan{sram-budget=1},rolling-buffer,allocate-memory,lower-to-ethosu,ethosu-pipeline' 2>&1 \
// RUN:   | filecheck %s

// CHECK-NOT: Unrecognized passes
// CHECK:     func.func @f() {
// CHECK-NEXT:  func.return
// CHECK-NOT: Exception

func.func @f() {
  func.return
}
