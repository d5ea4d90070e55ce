// cascade-opt records where each operation is written, as MLIR does; an explicit loc(...) wins.
// RUN: cascade-opt %s --print-debuginfo | filecheck %s

// CHECK:      %0 = arith.addi %a, %a : i32 loc("{{.*}}debuginfo.mlir":9:3)
// CHECK-NEXT: func.return %0 : i32 loc("given.mlir":1:2)
// CHECK-NEXT: } loc("{{.*}}debuginfo.mlir":8:1)

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  func.return %0 : i32 loc("given.mlir":1:2)
}
