// The generic form of every cascade op and attribute parses in upstream MLIR, and what
// upstream prints back parses and verifies in cascade-opt.
// REQUIRES: iree-opt
// RUN: cascade-opt %S/../dialects/cascade/ops.mlir --split-input-file --print-op-generic \
// RUN:   | %mlir_opt --split-input-file --allow-unregistered-dialect --mlir-print-op-generic --mlir-print-local-scope \
// RUN:   | cascade-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @single_stripe
// CHECK:         cascade.group ins(%{{.*}} = %{{.*}} : tensor<1x8x8x4xi8>, %{{.*}} = %{{.*}} : tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8> stripe_shape [1, 8, 8, 4] stripe_order [] num_stripes []
// CHECK-LABEL: func.func @rows
// CHECK:         cascade.group {{.*}} stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] weights stream peak_sram_bytes 6144 cycles 1200 attributes {cascade.note = "chain"}
// CHECK:         #cascade.stripe<shape = [1, 8, 16, 8], offset = affine_map<(d0) -> (0, ((d0 * 4) + -2), 0, 0)>, mode = rolling>
// CHECK:         cascade.rolling_buffer %{{.*}} depth 8 index_map affine_map<(d0, d1, d2, d3) -> (d0, (d1 mod 8), d2, d3)> placement #cascade.placement<sram, 0, 1024>
// CHECK-LABEL: func.func @rows_and_columns
// CHECK:         cascade.rolling_buffer %{{.*}} depth 1 index_map affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-LABEL: func.func @explicit_loop
// CHECK:         cascade.for_stripes (%{{.*}}, %{{.*}}) ins(
// CHECK-LABEL: func.func @attributes
// CHECK-SAME:    #cascade.placement<flash, 3, 100>
