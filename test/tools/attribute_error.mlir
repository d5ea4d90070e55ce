// An attribute that fails its verifier while being parsed is reported at its operation.
// RUN: not cascade-opt %s 2>&1 | filecheck %s
// RUN: cascade-opt %s --verify-diagnostics | filecheck %s --check-prefix=DIAG

// CHECK:     {{.*}}attribute_error.mlir:10:3: error: Integer value 300 is out of range for type i8
// CHECK-NOT: Traceback
// DIAG:      Integer value 300 is out of range for type i8

func.func @f() -> i8 {
  %0 = arith.constant 300 : i8
  func.return %0 : i8
}
