// A verifier error names the failing operation and where it is written, exits 1, no traceback;
// with --split-input-file the line is counted in the whole file.
// RUN: not cascade-opt %s --split-input-file 2>&1 | filecheck %s
// --verify-diagnostics keeps xdsl-opt's behaviour: the message, exit status 0.
// RUN: cascade-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=DIAG

// CHECK:      builtin.module {
// CHECK:      func.func @ok
// CHECK:      {{.*}}verify_error.mlir:24:3: error: 'func.return' op Expected arguments to have the same types as the function output types: expected [i32], got []
// CHECK-NOT:  Traceback

// DIAG:       func.func @ok
// DIAG:       Expected arguments to have the same types as the function output types: expected [i32], got []
// DIAG:       Operation does not verify

func.func @ok() {
  func.return
}

// -----

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  func.return
}
