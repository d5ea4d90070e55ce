// lower-to-ethosu needs allocated IR (allocate-memory's placements); a function without nn
// operators is left unchanged.
// RUN: not cascade-opt %S/../rolling_buffer/residual.mlir --cascade-plan --rolling-buffer --lower-to-ethosu 2>&1 \
// RUN:   | filecheck %s
// RUN: cascade-opt %s -p 'lower-to-ethosu' --split-input-file 2>&1 | filecheck %s --check-prefix=EMPTY

// CHECK: cascade-opt: error: lower-to-ethosu: @residual: the function is not allocated (run allocate-memory first)
// EMPTY: func.func @f(%a: i32) -> i32

func.func @f(%a: i32) -> i32 {
  func.return %a : i32
}
