// Stripes cut along rows and columns, with recompute intermediates, go below the row-striping
// lower bound of a wide expansion block.
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128' | filecheck %s
//
// x: 1x16x16x16 -> %t0 = conv 1x1 (64 ch) -> %t1 = depthwise 3x3 pad 1 -> %out = conv 1x1 (16 ch).
// Bytes: x and %out are graph input/output (NHWC) 16*16*16 = 4096 each; %t0 and %t1 16384 each,
// one full-width row 16*64 = 1024.
//
// Rows only (1-row stripes, rolling): 4096 + 4096 + 3 rows of %t0 + 1 row of %t1
//   = 8192 + 3072 + 1024 = 12288: the row-striping lower bound.
// 2-D stripes of 1 x 1 output pixels, both intermediates recomputed: %t1 holds the pixel,
// 1*1*64 = 64, %t0 the 3x3 window under it, 3*3*64 = 576: 8192 + 576 + 64 = 8832.
// Larger patches need more: 1 x 2 gives %t0 3*4*64 + %t1 2*64 = 896 > 640. Keeping %t1 rolling
// costs a full row (1024) on its own. Every other split keeps a 16384-byte tensor in full.

// CHECK-LABEL: func.func @patches
// CHECK-SAME:    cascade.peak_sram_bytes = 8832 : i64
// CHECK-SAME:    cascade.lower_bound_bytes = 12288 : i64
// CHECK:         cascade.group ins(%x_1 = %x : tensor<1x16x16x16xi8>) -> tensor<1x16x16x16xi8>
// CHECK-SAME:      stripe_shape [1, 1, 1, 16] stripe_order [{{[12]}}, {{[12]}}] num_stripes [16, 16] weights stream peak_sram_bytes 8832
// CHECK-NEXT:      nn.conv2d {{.*}}#cascade.stripe<shape = [1, 3, 3, 64], offset = affine_map<(d0, d1) -> (0, (d{{[01]}} + -1), (d{{[01]}} + -1), 0)>, mode = recompute>
// CHECK-NEXT:      nn.depthwise_conv2d {{.*}}#cascade.stripe<shape = [1, 1, 1, 64], offset = affine_map<(d0, d1) -> (0, d{{[01]}}, d{{[01]}}, 0)>, mode = recompute>
// CHECK-NEXT:      nn.conv2d {{.*}}#cascade.stripe<shape = [1, 1, 1, 16], offset = affine_map<(d0, d1) -> (0, d{{[01]}}, d{{[01]}}, 0)>>

func.func @patches(%x: tensor<1x16x16x16xi8>) -> tensor<1x16x16x16xi8> {
  %w0 = arith.constant dense<1> : tensor<64x1x1x16xi8>
  %b0 = arith.constant dense<0> : tensor<64xi32>
  %w1 = arith.constant dense<1> : tensor<1x3x3x64xi8>
  %w2 = arith.constant dense<1> : tensor<16x1x1x64xi8>
  %b2 = arith.constant dense<0> : tensor<16xi32>
  %t0 = nn.conv2d %x, %w0, %b0 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x16x16xi8>, tensor<64x1x1x16xi8>, tensor<64xi32>) -> tensor<1x16x16x64xi8>
  %t1 = nn.depthwise_conv2d %t0, %w1, %b0 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x16x64xi8>, tensor<1x3x3x64xi8>, tensor<64xi32>) -> tensor<1x16x16x64xi8>
  %out = nn.conv2d %t1, %w2, %b2 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x16x64xi8>, tensor<16x1x1x64xi8>, tensor<16xi32>) -> tensor<1x16x16x16xi8>
  func.return %out : tensor<1x16x16x16xi8>
}
