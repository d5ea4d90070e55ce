// The explicit stripe loop of test/dialects/cascade/ops.mlir (valid IR, but of arith
// operators): allocate-memory places the buffers of nn operators as cascade-plan planned
// them, so it refuses a loop without any, naming it. rolling-buffer has nothing to do on a
// loop and leaves it as it is.
// RUN: not cascade-opt %s --allocate-memory 2>&1 | filecheck %s
// RUN: not cascade-opt %s --rolling-buffer --allocate-memory 2>&1 | filecheck %s
// RUN: cascade-opt %s --rolling-buffer | filecheck %s --check-prefix=KEPT

// CHECK-NOT:  internal error
// CHECK:      {{^}}cascade-opt: error: allocate-memory: @explicit_loop: cascade.for_stripes at {{.*}}not_planned.mlir:17:3 has no nn operator: allocate-memory works on cascades of nn operators, as cascade-plan plans them{{$}}
// CHECK-NOT:  {{.}}

// KEPT:      %r = cascade.for_stripes (%i, %j) ins(%a = %x : tensor<1x16x16x8xi8>)
// KEPT-NOT:  cascade.placement

func.func @explicit_loop(%x: tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> {
  %r = cascade.for_stripes (%i, %j) ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
         stripe_shape [1, 4, 8, 8] stripe_order [1, 2] num_stripes [4, 2] peak_sram_bytes 2048 {
    %c4 = arith.constant 4 : index
    %row = arith.muli %i, %c4 : index
    %0 = arith.addi %a, %a {cascade.stripe = #cascade.stripe<shape = [1, 6, 16, 8], offset = affine_map<(d0, d1) -> (0, d0 * 4 - 2, 0, 0)>, mode = rolling>} : tensor<1x16x16x8xi8>
    %1 = cascade.rolling_buffer %0 depth 6 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1 mod 6, d2, d3)> : tensor<1x16x16x8xi8>
    %2 = arith.addi %1, %1 {cascade.stripe = #cascade.stripe<shape = [1, 4, 8, 8], offset = affine_map<(d0, d1) -> (0, d0 * 4, d1 * 8, 0)>>} : tensor<1x16x16x8xi8>
    cascade.yield %2 : tensor<1x16x16x8xi8>
  }
  func.return %r : tensor<1x16x16x8xi8>
}
