// An operation of an unknown dialect is a located parse error unless unregistered ops are allowed.
// RUN: not cascade-opt %s 2>&1 | filecheck %s
// RUN: cascade-opt %s --allow-unregistered-dialect | filecheck %s --check-prefix=ALLOWED

// CHECK:      {{.*}}unknown_op.mlir:11:17: error: Operation foo.bar is not registered
// CHECK-NOT:  Traceback

// ALLOWED:    %0 = "foo.bar"(%a) : (i32) -> i32

func.func @f(%a: i32) -> i32 {
  %0 = "foo.bar"(%a) : (i32) -> i32
  func.return %0 : i32
}
