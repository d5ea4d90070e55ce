// The everyday command on a residual block: cascade-plan runs %y alone and groups the rest,
// rolling-buffer makes the stripe loop explicit (%row is the stripe index) and stores every
// rolling intermediate in a k-row cascade.rolling_buffer; the add reads its skip input %y, a
// full tensor, as a loop input.
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128' --rolling-buffer | filecheck %s
// The output parses back (custom and generic syntax) to the same IR.
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128' --rolling-buffer \
// RUN:   | cascade-opt | filecheck %s
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128' --rolling-buffer --print-op-generic \
// RUN:   | cascade-opt | filecheck %s
// Running the pass again changes nothing (there is no cascade.group left).
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128' --rolling-buffer --rolling-buffer \
// RUN:   | filecheck %s
//
// Depths (1-row stripes, see test/passes/cascade_plan/residual.mlir): %t1 feeds a 3x3
// depthwise: 3 rows; %t2 and %t3: 1 row.

// CHECK:      %y = nn.conv2d %x, {{.*}}cascade.weights = #cascade.weights<stream>
// CHECK-NEXT: %out = cascade.for_stripes (%row) ins(%y_1 = %y : tensor<1x16x8x32xi8>) -> tensor<1x16x8x32xi8> stripe_shape [1, 1, 8, 32] stripe_order [1] num_stripes [16] weights stream peak_sram_bytes 5888
// CHECK-NEXT:   %t1 = nn.conv2d %y_1, {{.*}}offset = affine_map<(d0) -> (0, (d0 + -1), 0, 0)>, mode = rolling>
// CHECK-NEXT:   %t1_rolling = cascade.rolling_buffer %t1 depth 3 index_map affine_map<(d0, d1, d2, d3) -> (d0, (d1 mod 3), d2, d3)> : tensor<1x16x8x32xi8>
// CHECK-NEXT:   %t2 = nn.depthwise_conv2d %t1_rolling, {{.*}}mode = rolling>
// CHECK-NEXT:   %t2_rolling = cascade.rolling_buffer %t2 depth 1 index_map affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)> : tensor<1x16x8x32xi8>
// CHECK-NEXT:   %t3 = nn.conv2d %t2_rolling, {{.*}}mode = rolling>
// CHECK-NEXT:   %t3_rolling = cascade.rolling_buffer %t3 depth 1 index_map affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)> : tensor<1x16x8x32xi8>
// CHECK-NEXT:   %out_1 = nn.add %y_1, %t3_rolling {cascade.stripe = #cascade.stripe<shape = [1, 1, 8, 32], offset = affine_map<(d0) -> (0, d0, 0, 0)>>
// CHECK-NEXT:   cascade.yield %out_1 : tensor<1x16x8x32xi8>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %out : tensor<1x16x8x32xi8>

func.func @residual(%x: tensor<1x16x8x4xi8>) -> tensor<1x16x8x32xi8> {
  %w0 = arith.constant dense<1> : tensor<32x1x1x4xi8>
  %w1 = arith.constant dense<1> : tensor<32x1x1x32xi8>
  %w2 = arith.constant dense<1> : tensor<1x3x3x32xi8>
  %w3 = arith.constant dense<1> : tensor<32x1x1x32xi8>
  %b = arith.constant dense<0> : tensor<32xi32>
  %y = nn.conv2d %x, %w0, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x8x4xi8>, tensor<32x1x1x4xi8>, tensor<32xi32>) -> tensor<1x16x8x32xi8>
  %t1 = nn.conv2d %y, %w1, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x8x32xi8>, tensor<32x1x1x32xi8>, tensor<32xi32>) -> tensor<1x16x8x32xi8>
  %t2 = nn.depthwise_conv2d %t1, %w2, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x8x32xi8>, tensor<1x3x3x32xi8>, tensor<32xi32>) -> tensor<1x16x8x32xi8>
  %t3 = nn.conv2d %t2, %w3, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x8x32xi8>, tensor<32x1x1x32xi8>, tensor<32xi32>) -> tensor<1x16x8x32xi8>
  %out = nn.add %y, %t3 {input_quant = #nn.quant<0.5:0>, input2_quant = #nn.quant<0.5:0>, activation = #nn<activation none>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x8x32xi8>, tensor<1x16x8x32xi8>) -> tensor<1x16x8x32xi8>
  func.return %out : tensor<1x16x8x32xi8>
}
