// The documented everyday command on the MobileNet-style block of test/Inputs/example_nn.mlir:
// the first convolution runs alone; the depthwise, pointwise and pool run as one cascade in
// 1-row output stripes (%row = 0..3), the two intermediates in 2-row rolling buffers.
// RUN: cascade-opt --cascade-plan='objective=min-sram accelerator=ethos-u55-128' --rolling-buffer %inputs/example_nn.mlir \
// RUN:   | filecheck %s
// With allocation, the scheduled program computes the same as the nn program.
// RUN: cascade-opt %inputs/example_nn.mlir --cascade-plan='objective=min-sram accelerator=ethos-u55-128' --rolling-buffer \
// RUN:   --allocate-memory=accelerator=ethos-u55-128 > %t.mlir
// RUN: %python -m cascade.interpreter.scheduled %t.mlir %inputs/example_nn.mlir | filecheck %s --check-prefix=EXEC

// CHECK:      func.func @block({{.*}}) -> tensor<1x4x4x16xi8> attributes {cascade.peak_sram_bytes = 1792 : i64
// CHECK-NEXT:   %0 = nn.conv2d %image, %w0, %b0 {cascade.weights = #cascade.weights<stream>,
// CHECK-NEXT:   %1 = cascade.for_stripes (%row) ins(%2 = %0 : tensor<1x8x8x8xi8>, {{.*}}) -> tensor<1x4x4x16xi8> stripe_shape [1, 1, 4, 16] stripe_order [1] num_stripes [4] weights stream
// CHECK-NEXT:     %3 = nn.depthwise_conv2d %2, {{.*}}offset = affine_map<(d0) -> (0, (d0 * 2), 0, 0)>, mode = rolling>
// CHECK-NEXT:     %rolling = cascade.rolling_buffer %3 depth 2 index_map affine_map<(d0, d1, d2, d3) -> (d0, (d1 mod 2), d2, d3)> : tensor<1x8x8x8xi8>
// CHECK-NEXT:     %4 = nn.conv2d %rolling, {{.*}}mode = rolling>
// CHECK-NEXT:     %rolling_1 = cascade.rolling_buffer %4 depth 2 index_map affine_map<(d0, d1, d2, d3) -> (d0, (d1 mod 2), d2, d3)> : tensor<1x8x8x16xi8>
// CHECK-NEXT:     %5 = nn.pool2d %rolling_1 {cascade.stripe = #cascade.stripe<shape = [1, 1, 4, 16], offset = affine_map<(d0) -> (0, d0, 0, 0)>>
// CHECK-NEXT:     cascade.yield %5 : tensor<1x4x4x16xi8>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %1 : tensor<1x4x4x16xi8>

// EXEC:       bit-exact: 3/3 tensors
