// One case per verifier rule of the cascade dialect, each with its exact message.
// RUN: cascade-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// ===== cascade.group / cascade.for_stripes: body and terminator =====

func.func @block_arg_count(%x: tensor<1x16x16x8xi8>) {
  %r = "cascade.group"(%x) <{stripe_shape = array<i64: 1, 4, 16, 8>, stripe_order = array<i64: 1>, num_stripes = array<i64: 4>}> ({
  ^bb0(%a: tensor<1x16x16x8xi8>, %b: tensor<1x16x16x8xi8>):
    "cascade.yield"(%a) : (tensor<1x16x16x8xi8>) -> ()
  }) : (tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: body has 2 arguments but expected 1 (0 stripe indices and 1 input)

// -----

func.func @block_arg_type(%x: tensor<1x16x16x8xi8>) {
  %r = "cascade.group"(%x) <{stripe_shape = array<i64: 1, 4, 16, 8>, stripe_order = array<i64: 1>, num_stripes = array<i64: 4>}> ({
  ^bb0(%a: tensor<1x16x16x8xi16>):
    %c = arith.constant dense<0> : tensor<1x16x16x8xi8>
    "cascade.yield"(%c) : (tensor<1x16x16x8xi8>) -> ()
  }) : (tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: body argument 0 has type tensor<1x16x16x8xi16> but operand 0 has type tensor<1x16x16x8xi8>

// -----

func.func @index_arg_count(%x: tensor<1x16x16x8xi8>) {
  %r = "cascade.for_stripes"(%x) <{stripe_shape = array<i64: 1, 4, 8, 8>, stripe_order = array<i64: 1, 2>, num_stripes = array<i64: 4, 2>}> ({
  ^bb0(%i: index, %a: tensor<1x16x16x8xi8>):
    "cascade.yield"(%a) : (tensor<1x16x16x8xi8>) -> ()
  }) : (tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: body has 2 arguments but expected 3 (2 stripe indices and 1 input)

// -----

func.func @index_arg_type(%x: tensor<1x16x16x8xi8>) {
  %r = "cascade.for_stripes"(%x) <{stripe_shape = array<i64: 1, 4, 16, 8>, stripe_order = array<i64: 1>, num_stripes = array<i64: 4>}> ({
  ^bb0(%i: i32, %a: tensor<1x16x16x8xi8>):
    "cascade.yield"(%a) : (tensor<1x16x16x8xi8>) -> ()
  }) : (tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: body argument 0 is a stripe index and must have type index, got i32

// -----

func.func @yield_count(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    cascade.yield %a, %a : tensor<1x16x16x8xi8>, tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: cascade.yield returns 2 values but the op has 1 result

// -----

func.func @yield_type(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x8x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [2] {
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: cascade.yield operand 0 has type tensor<1x16x16x8xi8> but result 0 has type tensor<1x8x16x8xi8>

// -----

func.func @yield_parent(%x: tensor<1x16x16x8xi8>) {
  cascade.yield %x : tensor<1x16x16x8xi8>
}
// CHECK: Operation does not verify: 'cascade.yield' expects parent op to be one of 'cascade.group', 'cascade.for_stripes'

// -----

// ===== cascade.group / cascade.for_stripes: tiling and annotations =====

func.func @no_result(%x: tensor<1x16x16x8xi8>) {
  cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> () stripe_shape [] stripe_order [] num_stripes [] {
    cascade.yield
  }
  func.return
}
// CHECK: Operation does not verify: cascade.group must have at least one result

// -----

func.func @dynamic_result(%x: tensor<1x?x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x?x16x8xi8>) -> tensor<1x?x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    cascade.yield %a : tensor<1x?x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: result 0 must be a statically shaped tensor, got tensor<1x?x16x8xi8>

// -----

func.func @stripe_shape_rank(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16] stripe_order [1] num_stripes [4] {
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: stripe_shape has 3 entries but result 0 (tensor<1x16x16x8xi8>) has rank 4

// -----

func.func @stripe_shape_zero(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 0, 16, 8] stripe_order [1] num_stripes [4] {
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: stripe_shape[1] = 0 must be in [1, 16] (the extent of result 0)

// -----

func.func @stripe_shape_too_big(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 32, 16, 8] stripe_order [1] num_stripes [1] {
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: stripe_shape[1] = 32 must be in [1, 16] (the extent of result 0)

// -----

func.func @stripe_order_range(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 16, 16, 8] stripe_order [4] num_stripes [1] {
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: stripe_order axis 4 is out of range for rank 4

// -----

func.func @stripe_order_repeated(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1, 1] num_stripes [4, 4] {
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: stripe_order has a repeated axis: [1, 1]

// -----

func.func @unstriped_axis_partial(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 8, 8] stripe_order [1] num_stripes [4] {
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: axis 2 is not in stripe_order, so its stripe size must be the full extent 16, got 8

// -----

func.func @num_stripes_length(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4, 1] {
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: num_stripes has 2 entries but stripe_order has 1

// -----

func.func @num_stripes_value(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.for_stripes (%i) ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 5, 16, 8] stripe_order [1] num_stripes [3] {
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: num_stripes for axis 1 is 3 but ceil(16 / 5) = 4

// -----

func.func @negative_peak(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] peak_sram_bytes -1 {
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: peak_sram_bytes must be non-negative, got -1

// -----

func.func @negative_cycles(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] cycles -5 {
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: cycles must be non-negative, got -5

// -----

func.func @stripe_not_a_stripe(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %0 = arith.addi %a, %a {cascade.stripe = 3 : i64} : tensor<1x16x16x8xi8>
    cascade.yield %0 : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: 'cascade.stripe' of body op #0 (arith.addi) must be a #cascade.stripe attribute

// -----

func.func @stripe_multi_result(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %0:2 = cascade.group ins(%b = %a : tensor<1x16x16x8xi8>) -> (tensor<1x16x16x8xi8>, tensor<1x16x16x8xi8>) stripe_shape [1, 16, 16, 8] stripe_order [] num_stripes [] attributes {cascade.stripe = #cascade.stripe<shape = [1, 4, 16, 8], offset = affine_map<(d0) -> (0, d0 * 4, 0, 0)>>} {
      cascade.yield %b, %b : tensor<1x16x16x8xi8>, tensor<1x16x16x8xi8>
    }
    cascade.yield %0#0 : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: 'cascade.stripe' needs a single-result op, body op #0 (cascade.group) has 2 results

// -----

func.func @stripe_not_tensor(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %c = arith.constant {cascade.stripe = #cascade.stripe<shape = [1], offset = affine_map<(d0) -> (0)>, mode = recompute>} 1 : i32
    cascade.yield %a : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: 'cascade.stripe' of body op #0 (arith.constant) needs a statically shaped tensor result, got i32

// -----

func.func @stripe_rank(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %0 = arith.addi %a, %a {cascade.stripe = #cascade.stripe<shape = [4, 16], offset = affine_map<(d0) -> (d0 * 4, 0)>>} : tensor<1x16x16x8xi8>
    cascade.yield %0 : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: stripe shape of body op #0 (arith.addi) has rank 2 but its result tensor<1x16x16x8xi8> has rank 4

// -----

func.func @stripe_dims(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %0 = arith.addi %a, %a {cascade.stripe = #cascade.stripe<shape = [1, 4, 16, 8], offset = affine_map<(d0, d1) -> (0, d0 * 4, d1, 0)>>} : tensor<1x16x16x8xi8>
    cascade.yield %0 : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: stripe offset map of body op #0 (arith.addi) has 2 dims but the cascade has 1 striped axis

// -----

func.func @yielded_with_mode(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %0 = arith.addi %a, %a {cascade.stripe = #cascade.stripe<shape = [1, 4, 16, 8], offset = affine_map<(d0) -> (0, d0 * 4, 0, 0)>, mode = rolling>} : tensor<1x16x16x8xi8>
    cascade.yield %0 : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: result of body op #0 (arith.addi) leaves the cascade and is stored in full: its stripe must have no buffer mode, got rolling

// -----

func.func @intermediate_without_mode(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %0 = arith.addi %a, %a {cascade.stripe = #cascade.stripe<shape = [1, 4, 16, 8], offset = affine_map<(d0) -> (0, d0 * 4, 0, 0)>>} : tensor<1x16x16x8xi8>
    %1 = arith.addi %0, %0 : tensor<1x16x16x8xi8>
    cascade.yield %1 : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: intermediate body op #0 (arith.addi) needs a buffer mode (rolling or recompute) in its stripe

// -----

func.func @placement_not_a_placement(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %0 = arith.addi %a, %a {cascade.placement = "sram"} : tensor<1x16x16x8xi8>
    cascade.yield %0 : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: 'cascade.placement' of body op #0 (arith.addi) must be a #cascade.placement attribute

// -----

// ===== cascade.rolling_buffer =====

func.func @rb_dynamic(%x: tensor<1x?x16x8xi8>) {
  %b = cascade.rolling_buffer %x depth 3 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1 mod 3, d2, d3)> : tensor<1x?x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: rolling buffer needs a statically shaped tensor, got tensor<1x?x16x8xi8>

// -----

func.func @rb_depth_zero(%x: tensor<1x16x16x8xi8>) {
  %b = cascade.rolling_buffer %x depth 0 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)> : tensor<1x16x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: depth must be >= 1, got 0

// -----

func.func @rb_map_rank(%x: tensor<1x16x16x8xi8>) {
  %b = cascade.rolling_buffer %x depth 3 index_map affine_map<(d0, d1, d2) -> (d0, d1 mod 3, d2)> : tensor<1x16x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: index_map must have 4 dims, no symbols and 4 results (the rank of tensor<1x16x16x8xi8>), got (d0, d1, d2) -> (d0, (d1 mod 3), d2)

// -----

func.func @rb_map_not_identity(%x: tensor<1x16x16x8xi8>) {
  %b = cascade.rolling_buffer %x depth 3 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1 mod 3, d2 + 1, d3)> : tensor<1x16x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: index_map result 2 must be d2 or d2 mod 3, got (d2 + 1)

// -----

func.func @rb_modulus(%x: tensor<1x16x16x8xi8>) {
  %b = cascade.rolling_buffer %x depth 3 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1 mod 4, d2, d3)> : tensor<1x16x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: index_map wraps axis 1 modulo 4 but depth is 3

// -----

func.func @rb_no_rolling_axis(%x: tensor<1x16x16x8xi8>) {
  %b = cascade.rolling_buffer %x depth 3 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)> : tensor<1x16x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: index_map must wrap exactly one axis modulo 3, got (d0, d1, d2, d3) -> (d0, d1, d2, d3)

// -----

func.func @rb_two_rolling_axes(%x: tensor<1x16x16x8xi8>) {
  %b = cascade.rolling_buffer %x depth 3 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1 mod 3, d2 mod 3, d3)> : tensor<1x16x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: index_map must wrap exactly one axis, got axes [1, 2] in (d0, d1, d2, d3) -> (d0, (d1 mod 3), (d2 mod 3), d3)

// -----

func.func @rb_depth_exceeds_extent(%x: tensor<1x2x16x8xi8>) {
  %b = cascade.rolling_buffer %x depth 3 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1 mod 3, d2, d3)> : tensor<1x2x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: depth 3 exceeds the extent 2 of rolling axis 1

// -----

func.func @rb_not_outer_axis(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 8, 8] stripe_order [1, 2] num_stripes [4, 2] {
    %b = cascade.rolling_buffer %a depth 3 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 mod 3, d3)> : tensor<1x16x16x8xi8>
    cascade.yield %b : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: rolling axis 2 is not the outer striped axis 1 of the enclosing cascade.group

// -----

func.func @rb_source_recompute(%x: tensor<1x16x16x8xi8>) {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %0 = arith.addi %a, %a {cascade.stripe = #cascade.stripe<shape = [1, 6, 16, 8], offset = affine_map<(d0) -> (0, d0 * 4 - 1, 0, 0)>, mode = recompute>} : tensor<1x16x16x8xi8>
    %b = cascade.rolling_buffer %0 depth 6 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1 mod 6, d2, d3)> : tensor<1x16x16x8xi8>
    cascade.yield %b : tensor<1x16x16x8xi8>
  }
  func.return
}
// CHECK: Operation does not verify: source is marked recompute by its producer (arith.addi); only rolling intermediates are stored in rolling buffers

// -----

func.func @rb_placement_too_small(%x: tensor<1x16x16x8xi8>) {
  %b = cascade.rolling_buffer %x depth 3 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1 mod 3, d2, d3)> placement #cascade.placement<sram, 0, 100> : tensor<1x16x16x8xi8>
  func.return
}
// CHECK: Operation does not verify: placement size 100 is smaller than the 384 bytes of the buffer

// -----

// ===== Attributes (verified when parsed) =====

func.func @stripe_shape_entry() attributes {s = #cascade.stripe<shape = [1, 0], offset = affine_map<(d0) -> (0, d0)>>} {
  func.return
}
// CHECK: stripe shape entries must be >= 1, got [1, 0]

// -----

func.func @stripe_symbols() attributes {s = #cascade.stripe<shape = [1, 4], offset = affine_map<(d0)[s0] -> (0, d0 + s0)>>} {
  func.return
}
// CHECK: stripe offset map must not have symbols, got 1

// -----

func.func @stripe_results() attributes {s = #cascade.stripe<shape = [1, 4], offset = affine_map<(d0) -> (0, d0, 0)>>} {
  func.return
}
// CHECK: stripe offset map has 3 results but the stripe shape has rank 2

// -----

func.func @stripe_offset_not_a_map() attributes {s = #cascade.stripe<shape = [1, 4], offset = 3 : i64>} {
  func.return
}
// CHECK: expected an affine_map<...> stripe offset

// -----

func.func @placement_negative_offset() attributes {p = #cascade.placement<flash, -16, 32>} {
  func.return
}
// CHECK: placement offset must be non-negative, got -16

// -----

func.func @placement_negative_size() attributes {p = #cascade.placement<dram, 0, -1>} {
  func.return
}
// CHECK: placement size must be non-negative, got -1

// -----

func.func @placement_unaligned() attributes {p = #cascade.placement<sram, 8, 16>} {
  func.return
}
// CHECK: SRAM placement offset 8 is not a multiple of 16

// -----

func.func @placement_region() attributes {p = #cascade.placement<rom, 0, 16>} {
  func.return
}
// CHECK: Expected `sram`, `flash`, or `dram`.
