// A one-row (1-D) network cascades in stripes of columns, its intermediates rolling along
// columns (ethosu-pipeline's default striping=h cuts the columns of an output one row high); the
// lowering wraps those buffers with the NPU's tile 1 (the columns right of width_0), and the
// command streams run bit-exact on the NPU's functional model.
//
// x: 1x1x128x16 -> %t0 = conv 1x3 pad 1 (64 ch) -> %t1 = depthwise 1x3 pad 1 -> %out = conv 1x1 (16 ch).
// Unstriped, the depthwise needs all of %t0 and %t1: 8192 + 8192 bytes.
// In 1-column stripes: x and %out 2048 each, 3 columns of %t0 (the depthwise window, 3 x 64)
// and 1 of %t1 (64): 4096 + 192 + 64 = 4352 bytes, the least.
// RUN: not cascade-opt %s -p 'cascade-plan{accelerator=ethos-u55-128 sram-budget=4352 striping=none}' 2>&1 | filecheck %s --check-prefix=UNSTRIPED
// UNSTRIPED: error: cascade-plan: @wide: sram-budget of 4352 bytes is too small: nn.depthwise_conv2d at {{.*}}:{{[0-9]+}}:3 needs at least 16384 bytes (its smallest working set unstriped; striping=h or hw cuts stripes)
//
// RUN: cascade-opt %s -p 'cascade-plan{accelerator=ethos-u55-128 sram-budget=4352 striping=h},rolling-buffer' | filecheck %s --check-prefix=PLAN
// PLAN: cascade.for_stripes (%col) {{.*}} stripe_shape [1, 1, 1, 16] stripe_order [2] num_stripes [128] {{.*}} peak_sram_bytes 4352
// PLAN: cascade.rolling_buffer %t0 depth 3 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 mod 3), d3)>
// PLAN: cascade.rolling_buffer %t1 depth 1
//
// RUN: cascade-opt %s -p 'ethosu-pipeline{accelerator=ethos-u55-128 sram-budget=4352}' -o %t.lowered.mlir
// RUN: filecheck %s --check-prefix=LOWERED < %t.lowered.mlir
// RUN: cascade-run %s --seed 1 > %t.reference
// RUN: filecheck %s --check-prefix=VALUES < %t.reference
// RUN: cascade-run %t.lowered.mlir --seed 1 | diff %t.reference -
//
// x at 0, %out at 0x800, %t0's 3 columns at 0x1000 (NHCWB16: a column is 16 bytes a brick, a
// brick 3 x 16 = 48), %t1 at 0x10c0. Stripe 2 writes %t0's column 3 into buffer column 0 and
// the depthwise reads columns 1..3: buffer columns 1..2 (tile 0, width_0 2, at 0x1010), then
// column 0 (tile 1, at 0x1000). Stripe 3 writes column 4 at 0x1010 and reads 2..4: buffer
// column 2 (width_0 1, at 0x1020), then columns 0..1.
// LOWERED:      cascade.peak_sram_bytes = 4352 : i64
// LOWERED-SAME: cascade.allocated_peak_bytes = 4352 : i64
// LOWERED:      ethosu.conv2d ifm <i8, region 1, shape [1, 3, 16], at 0x20, {{.*}} ofm <i8, region 1, shape [1, 1, 64], at 0x1000, strides [192, 16, 48], layout nhcwb16
// LOWERED-NEXT: ethosu.depthwise_conv2d ifm <i8, region 1, shape [1, 3, 64], tiles [1, 1, 2 | 0x1010, 0x1000, 0, 0], strides [192, 16, 48]
// LOWERED:      ethosu.conv2d ifm <i8, region 1, shape [1, 3, 16], at 0x30, {{.*}} ofm <i8, region 1, shape [1, 1, 64], at 0x1010, strides [192, 16, 48]
// LOWERED-NEXT: ethosu.depthwise_conv2d ifm <i8, region 1, shape [1, 3, 64], tiles [1, 1, 1 | 0x1020, 0x1000, 0, 0], strides [192, 16, 48]
// VALUES:       output 0: int8[1, 1, 128, 16] {{.*}} distinct {{([2-9]|[1-9][0-9]+)}} sha256

func.func @wide(%x: tensor<1x1x128x16xi8>) -> tensor<1x1x128x16xi8> {
  %w0 = arith.constant dense<1> : tensor<64x1x3x16xi8>
  %b0 = arith.constant dense<0> : tensor<64xi32>
  %w1 = arith.constant dense<1> : tensor<1x1x3x64xi8>
  %w2 = arith.constant dense<1> : tensor<16x1x1x64xi8>
  %b2 = arith.constant dense<0> : tensor<16xi32>
  %t0 = nn.conv2d %x, %w0, %b0 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 1, 0, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<8.0:0>} : (tensor<1x1x128x16xi8>, tensor<64x1x3x16xi8>, tensor<64xi32>) -> tensor<1x1x128x64xi8>
  %t1 = nn.depthwise_conv2d %t0, %w1, %b0 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 1, 0, 1>, activation = #nn<activation none>, input_quant = #nn.quant<8.0:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<16.0:0>} : (tensor<1x1x128x64xi8>, tensor<1x1x3x64xi8>, tensor<64xi32>) -> tensor<1x1x128x64xi8>
  %out = nn.conv2d %t1, %w2, %b2 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<16.0:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<64.0:0>} : (tensor<1x1x128x64xi8>, tensor<16x1x1x64xi8>, tensor<16xi32>) -> tensor<1x1x128x16xi8>
  func.return %out : tensor<1x1x128x16xi8>
}
