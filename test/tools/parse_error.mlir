// A parse error prints file:line:col, the source line and a caret, and exits 1 with no traceback.
// RUN: not cascade-opt %s 2>&1 | filecheck %s
// --parsing-diagnostics keeps xdsl-opt's behaviour: the message, exit status 0.
// RUN: cascade-opt %s --parsing-diagnostics | filecheck %s --check-prefix=DIAG

// CHECK:      {{.*}}parse_error.mlir:15:15: error: operand is used with type i64, but has been previously used or defined with type i32
// CHECK-NEXT: {{^}}  func.return %0 : i64
// CHECK-NEXT: {{^              \^\^$}}
// CHECK-NOT:  Traceback

// DIAG: operand is used with type i64, but has been previously used or defined with type i32

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  func.return %0 : i64
}
