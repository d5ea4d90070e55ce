// Round trip of every cascade op and attribute, in custom and in generic syntax.
// RUN: CASCADE_ROUNDTRIP
// RUN: CASCADE_GENERIC_ROUNDTRIP

// An unstriped cascade (one stripe): empty stripe_order, two inputs, no annotations.

// CHECK-LABEL: func.func @single_stripe
// CHECK-NEXT:    %r = cascade.group ins(%a = %x : tensor<1x8x8x4xi8>, %b = %y : tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8> stripe_shape [1, 8, 8, 4] stripe_order [] num_stripes [] {
// CHECK-NEXT:      %s = arith.addi %a, %b : tensor<1x8x8x4xi8>
// CHECK-NEXT:      cascade.yield %s : tensor<1x8x8x4xi8>
// CHECK-NEXT:    }

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "single_stripe"
// CHECK-GENERIC:         %r = "cascade.group"(%x, %y) <{stripe_shape = array<i64: 1, 8, 8, 4>, stripe_order = array<i64>, num_stripes = array<i64>}> ({
// CHECK-GENERIC-NEXT:    ^bb0(%a: tensor<1x8x8x4xi8>, %b: tensor<1x8x8x4xi8>):
// CHECK-GENERIC-NEXT:      %s = "arith.addi"(%a, %b)
// CHECK-GENERIC-NEXT:      "cascade.yield"(%s) : (tensor<1x8x8x4xi8>) -> ()
// CHECK-GENERIC-NEXT:    }) : (tensor<1x8x8x4xi8>, tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8>

func.func @single_stripe(%x: tensor<1x8x8x4xi8>, %y: tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8> {
  %r = cascade.group ins(%a = %x : tensor<1x8x8x4xi8>, %b = %y : tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8>
         stripe_shape [1, 8, 8, 4] stripe_order [] num_stripes [] {
    %s = arith.addi %a, %b : tensor<1x8x8x4xi8>
    cascade.yield %s : tensor<1x8x8x4xi8>
  }
  func.return %r : tensor<1x8x8x4xi8>
}

// -----

// Height striping (4 stripes of 4 rows), every planner annotation, stripe maps with both
// buffer modes, a rolling buffer with a placement, placed intermediates and output.

// CHECK-LABEL: func.func @rows
// CHECK-NEXT:    %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] weights stream peak_sram_bytes 6144 cycles 1200 attributes {cascade.note = "chain"} {
// CHECK-NEXT:      %0 = arith.addi %a, %a {cascade.stripe = #cascade.stripe<shape = [1, 8, 16, 8], offset = affine_map<(d0) -> (0, ((d0 * 4) + -2), 0, 0)>, mode = rolling>} : tensor<1x16x16x8xi8>
// CHECK-NEXT:      %1 = cascade.rolling_buffer %0 depth 8 index_map affine_map<(d0, d1, d2, d3) -> (d0, (d1 mod 8), d2, d3)> placement #cascade.placement<sram, 0, 1024> : tensor<1x16x16x8xi8>
// CHECK-NEXT:      %2 = arith.muli %1, %1 {cascade.stripe = #cascade.stripe<shape = [1, 6, 16, 8], offset = affine_map<(d0) -> (0, ((d0 * 4) + -1), 0, 0)>, mode = recompute>, cascade.placement = #cascade.placement<sram, 1024, 768>} : tensor<1x16x16x8xi8>
// CHECK-NEXT:      %3 = arith.subi %2, %a {cascade.stripe = #cascade.stripe<shape = [1, 4, 16, 8], offset = affine_map<(d0) -> (0, (d0 * 4), 0, 0)>>, cascade.placement = #cascade.placement<sram, 2048, 2048>} : tensor<1x16x16x8xi8>
// CHECK-NEXT:      cascade.yield %3 : tensor<1x16x16x8xi8>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<1x16x16x8xi8>

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "rows"
// CHECK-GENERIC:         %r = "cascade.group"(%x) <{stripe_shape = array<i64: 1, 4, 16, 8>, stripe_order = array<i64: 1>, num_stripes = array<i64: 4>, weights = #cascade.weights<stream>, peak_sram_bytes = 6144 : i64, cycles = 1200 : i64}> ({
// CHECK-GENERIC-NEXT:    ^bb0(%a: tensor<1x16x16x8xi8>):
// CHECK-GENERIC-NEXT:      %0 = "arith.addi"(%a, %a) <{overflowFlags = #arith.overflow<none>}> {cascade.stripe = #cascade.stripe<shape = [1, 8, 16, 8], offset = affine_map<(d0) -> (0, ((d0 * 4) + -2), 0, 0)>, mode = rolling>}
// CHECK-GENERIC-NEXT:      %1 = "cascade.rolling_buffer"(%0) <{depth = 8 : i64, index_map = affine_map<(d0, d1, d2, d3) -> (d0, (d1 mod 8), d2, d3)>, placement = #cascade.placement<sram, 0, 1024>}> : (tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
// CHECK-GENERIC-NEXT:      %2 = "arith.muli"(%1, %1) <{overflowFlags = #arith.overflow<none>}> {cascade.stripe = #cascade.stripe<shape = [1, 6, 16, 8], offset = affine_map<(d0) -> (0, ((d0 * 4) + -1), 0, 0)>, mode = recompute>, cascade.placement = #cascade.placement<sram, 1024, 768>}
// CHECK-GENERIC-NEXT:      %3 = "arith.subi"(%2, %a) <{overflowFlags = #arith.overflow<none>}> {cascade.stripe = #cascade.stripe<shape = [1, 4, 16, 8], offset = affine_map<(d0) -> (0, (d0 * 4), 0, 0)>>, cascade.placement = #cascade.placement<sram, 2048, 2048>}
// CHECK-GENERIC-NEXT:      "cascade.yield"(%3) : (tensor<1x16x16x8xi8>) -> ()
// CHECK-GENERIC-NEXT:    }) {cascade.note = "chain"} : (tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
// CHECK-GENERIC-NOT:   #builtin.int

func.func @rows(%x: tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
         stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4]
         weights stream peak_sram_bytes 6144 cycles 1200 attributes {cascade.note = "chain"} {
    %0 = arith.addi %a, %a {cascade.stripe = #cascade.stripe<shape = [1, 8, 16, 8], offset = affine_map<(d0) -> (0, d0 * 4 - 2, 0, 0)>, mode = rolling>} : tensor<1x16x16x8xi8>
    %1 = cascade.rolling_buffer %0 depth 8 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1 mod 8, d2, d3)>
           placement #cascade.placement<sram, 0, 1024> : tensor<1x16x16x8xi8>
    %2 = arith.muli %1, %1 {cascade.stripe = #cascade.stripe<shape = [1, 6, 16, 8], offset = affine_map<(d0) -> (0, d0 * 4 - 1, 0, 0)>, mode = recompute>,
                            cascade.placement = #cascade.placement<sram, 1024, 768>} : tensor<1x16x16x8xi8>
    %3 = arith.subi %2, %a {cascade.stripe = #cascade.stripe<shape = [1, 4, 16, 8], offset = affine_map<(d0) -> (0, d0 * 4, 0, 0)>>,
                            cascade.placement = #cascade.placement<sram, 2048, 2048>} : tensor<1x16x16x8xi8>
    cascade.yield %3 : tensor<1x16x16x8xi8>
  }
  func.return %r : tensor<1x16x16x8xi8>
}

// -----

// 2-D striping (rows outer, then columns; the last stripe of each axis is partial), two
// results, weights kept in SRAM, a depth-1 rolling buffer (MLIR canonicalises `d1 mod 1` to 0).

// CHECK-LABEL: func.func @rows_and_columns
// CHECK-NEXT:    %r, %r_1 = cascade.group ins(%a = %x : tensor<1x10x12x8xi8>) -> (tensor<1x10x12x8xi8>, tensor<1x10x12x8xi8>) stripe_shape [1, 4, 5, 8] stripe_order [1, 2] num_stripes [3, 3] weights sram {
// CHECK-NEXT:      %c = arith.constant {cascade.stripe = #cascade.stripe<shape = [1, 4, 5, 8], offset = affine_map<(d0, d1) -> (0, (d0 * 4), (d1 * 5), 0)>, mode = rolling>} dense<1> : tensor<1x10x12x8xi8>
// CHECK-NEXT:      %b = cascade.rolling_buffer %c depth 1 index_map affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)> : tensor<1x10x12x8xi8>
// CHECK-NEXT:      %s = arith.addi %a, %b {cascade.stripe = #cascade.stripe<shape = [1, 4, 5, 8], offset = affine_map<(d0, d1) -> (0, (d0 * 4), (d1 * 5), 0)>>} : tensor<1x10x12x8xi8>
// CHECK-NEXT:      cascade.yield %s, %a : tensor<1x10x12x8xi8>, tensor<1x10x12x8xi8>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r, %r_1 : tensor<1x10x12x8xi8>, tensor<1x10x12x8xi8>

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "rows_and_columns"
// CHECK-GENERIC:         %r, %r_1 = "cascade.group"(%x) <{stripe_shape = array<i64: 1, 4, 5, 8>, stripe_order = array<i64: 1, 2>, num_stripes = array<i64: 3, 3>, weights = #cascade.weights<sram>}> ({
// CHECK-GENERIC:           %b = "cascade.rolling_buffer"(%c) <{depth = 1 : i64, index_map = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>}> : (tensor<1x10x12x8xi8>) -> tensor<1x10x12x8xi8>
// CHECK-GENERIC:           "cascade.yield"(%s, %a) : (tensor<1x10x12x8xi8>, tensor<1x10x12x8xi8>) -> ()
// CHECK-GENERIC-NEXT:    }) : (tensor<1x10x12x8xi8>) -> (tensor<1x10x12x8xi8>, tensor<1x10x12x8xi8>)

func.func @rows_and_columns(%x: tensor<1x10x12x8xi8>) -> (tensor<1x10x12x8xi8>, tensor<1x10x12x8xi8>) {
  %r:2 = cascade.group ins(%a = %x : tensor<1x10x12x8xi8>) -> (tensor<1x10x12x8xi8>, tensor<1x10x12x8xi8>)
           stripe_shape [1, 4, 5, 8] stripe_order [1, 2] num_stripes [3, 3] weights sram {
    %c = arith.constant {cascade.stripe = #cascade.stripe<shape = [1, 4, 5, 8], offset = affine_map<(d0, d1) -> (0, d0 * 4, d1 * 5, 0)>, mode = rolling>} dense<1> : tensor<1x10x12x8xi8>
    %b = cascade.rolling_buffer %c depth 1 index_map affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)> : tensor<1x10x12x8xi8>
    %s = arith.addi %a, %b {cascade.stripe = #cascade.stripe<shape = [1, 4, 5, 8], offset = affine_map<(d0, d1) -> (0, d0 * 4, d1 * 5, 0)>>} : tensor<1x10x12x8xi8>
    cascade.yield %s, %a : tensor<1x10x12x8xi8>, tensor<1x10x12x8xi8>
  }
  func.return %r#0, %r#1 : tensor<1x10x12x8xi8>, tensor<1x10x12x8xi8>
}

// -----

// The explicit stripe loop: one index argument per striped axis, usable in the body.

// CHECK-LABEL: func.func @explicit_loop
// CHECK-NEXT:    %r = cascade.for_stripes (%i, %j) ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 8, 8] stripe_order [1, 2] num_stripes [4, 2] peak_sram_bytes 2048 {
// CHECK-NEXT:      %c4 = arith.constant 4 : index
// CHECK-NEXT:      %row = arith.muli %i, %c4 : index
// CHECK-NEXT:      %0 = arith.addi %a, %a {cascade.stripe = #cascade.stripe<shape = [1, 6, 16, 8], offset = affine_map<(d0, d1) -> (0, ((d0 * 4) + -2), 0, 0)>, mode = rolling>} : tensor<1x16x16x8xi8>
// CHECK-NEXT:      %1 = cascade.rolling_buffer %0 depth 6 index_map affine_map<(d0, d1, d2, d3) -> (d0, (d1 mod 6), d2, d3)> : tensor<1x16x16x8xi8>
// CHECK-NEXT:      %2 = arith.addi %1, %1 {cascade.stripe = #cascade.stripe<shape = [1, 4, 8, 8], offset = affine_map<(d0, d1) -> (0, (d0 * 4), (d1 * 8), 0)>>} : tensor<1x16x16x8xi8>
// CHECK-NEXT:      cascade.yield %2 : tensor<1x16x16x8xi8>
// CHECK-NEXT:    }

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "explicit_loop"
// CHECK-GENERIC:         %r = "cascade.for_stripes"(%x) <{stripe_shape = array<i64: 1, 4, 8, 8>, stripe_order = array<i64: 1, 2>, num_stripes = array<i64: 4, 2>, peak_sram_bytes = 2048 : i64}> ({
// CHECK-GENERIC-NEXT:    ^bb0(%i: index, %j: index, %a: tensor<1x16x16x8xi8>):
// CHECK-GENERIC-NEXT:      %c4 = "arith.constant"() <{value = 4 : index}> : () -> index
// CHECK-GENERIC-NEXT:      %row = "arith.muli"(%i, %c4)
// CHECK-GENERIC:           "cascade.yield"(%2) : (tensor<1x16x16x8xi8>) -> ()
// CHECK-GENERIC-NEXT:    }) : (tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>

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

// -----

// An unstriped explicit loop has no index arguments.

// CHECK-LABEL: func.func @explicit_single
// CHECK-NEXT:    %r = cascade.for_stripes () ins(%a = %x : tensor<2x3xi8>) -> tensor<2x3xi8> stripe_shape [2, 3] stripe_order [] num_stripes [] {
// CHECK-NEXT:      cascade.yield %a : tensor<2x3xi8>
// CHECK-NEXT:    }

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "explicit_single"
// CHECK-GENERIC:         %r = "cascade.for_stripes"(%x) <{stripe_shape = array<i64: 2, 3>, stripe_order = array<i64>, num_stripes = array<i64>}> ({
// CHECK-GENERIC-NEXT:    ^bb0(%a: tensor<2x3xi8>):

func.func @explicit_single(%x: tensor<2x3xi8>) -> tensor<2x3xi8> {
  %r = cascade.for_stripes () ins(%a = %x : tensor<2x3xi8>) -> tensor<2x3xi8> stripe_shape [2, 3] stripe_order [] num_stripes [] {
    cascade.yield %a : tensor<2x3xi8>
  }
  func.return %r : tensor<2x3xi8>
}

// -----

// The attributes on their own (unaligned offsets are fine outside SRAM).

// CHECK-LABEL: func.func @attributes() attributes {
// CHECK-SAME:    stripe = #cascade.stripe<shape = [1, 3, 3, 8], offset = affine_map<(d0, d1) -> (0, ((d0 * 2) + -1), ((d1 * 2) + -1), 0)>, mode = recompute>
// CHECK-SAME:    stripe_1d = #cascade.stripe<shape = [4, 16], offset = affine_map<(d0) -> ((d0 * 4), 0)>>
// CHECK-SAME:    flash = #cascade.placement<flash, 3, 100>, dram = #cascade.placement<dram, 0, 0>
// CHECK-SAME:    mode = #cascade.buffer_mode<rolling>, region = #cascade.memory_region<sram>, weights = #cascade.weights<stream>

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "attributes"
// CHECK-GENERIC:         stripe = #cascade.stripe<shape = [1, 3, 3, 8], offset = affine_map<(d0, d1) -> (0, ((d0 * 2) + -1), ((d1 * 2) + -1), 0)>, mode = recompute>
// CHECK-GENERIC-SAME:    flash = #cascade.placement<flash, 3, 100>
// CHECK-GENERIC-SAME:    mode = #cascade.buffer_mode<rolling>, region = #cascade.memory_region<sram>, weights = #cascade.weights<stream>

func.func @attributes() attributes {
    stripe = #cascade.stripe<shape = [1, 3, 3, 8], offset = affine_map<(d0, d1) -> (0, d0 * 2 - 1, d1 * 2 - 1, 0)>, mode = recompute>,
    stripe_1d = #cascade.stripe<shape = [4, 16], offset = affine_map<(d0) -> (d0 * 4, 0)>>,
    flash = #cascade.placement<flash, 3, 100>, dram = #cascade.placement<dram, 0, 0>,
    mode = #cascade.buffer_mode<rolling>, region = #cascade.memory_region<sram>,
    weights = #cascade.weights<stream>} {
  func.return
}
