// ethosu-pipeline cuts stripes of rows and of channels by default (striping=hc); striping=hw
// tries stripes of rows and columns (the program of test/passes/cascade_plan/patches_2d.mlir, with output scales that
// keep its values apart).
//
// x: 1x16x16x16 -> %t0 = conv 1x1 (64 ch) -> %t1 = depthwise 3x3 pad 1 -> %out = conv 1x1 (16 ch).
// In rows the least is 1-row stripes: x and %out 4096 each, 3 rows of %t0 and 1 of %t1 (1024
// each): 12288. In 1 x 1 patches, both intermediates recomputed: 4096 + 4096 + 3*3*64 + 64 = 8832.
//
// Rows (or channels, which cannot help here: the last 1x1 convolution reads every channel of
// %t1) by default: 9000 bytes are too few, and the message says which stripes were tried.
// RUN: not cascade-opt %s --ethosu-pipeline='accelerator=ethos-u55-128 sram-budget=9000' 2>&1 | filecheck %s --check-prefix=ROWS-TOO-SMALL
// ROWS-TOO-SMALL: {{^}}cascade-opt: error: cascade-plan: @patches: sram-budget of 9000 bytes is too small: nn.conv2d at {{.*}}:{{[0-9]+}}:3 needs at least 12288 bytes (its smallest working set in stripes of rows or of channels, or of columns where an output is one row high; striping=hwc also cuts columns){{$}}
//
// 12288 bytes fit rows; 9000 fit patches with striping=hw. Both lowered programs run on the
// NPU's functional model bit-exact with the nn program (same seed, same output digest).
// RUN: cascade-opt %s --ethosu-pipeline='accelerator=ethos-u55-128 sram-budget=12288' -o %t.rows.mlir
// RUN: cascade-opt %s --ethosu-pipeline='accelerator=ethos-u55-128 sram-budget=9000 striping=hw' -o %t.patches.mlir
// RUN: filecheck %s --check-prefix=ROWS < %t.rows.mlir
// RUN: filecheck %s --check-prefix=PATCHES < %t.patches.mlir
// RUN: cascade-run %s --seed 1 > %t.reference
// RUN: filecheck %s --check-prefix=VALUES < %t.reference
// RUN: cascade-run %t.rows.mlir --seed 1 | diff %t.reference -
// RUN: cascade-run %t.patches.mlir --seed 1 | diff %t.reference -
//
// ROWS:         cascade.peak_sram_bytes = 12288 : i64
// ROWS-SAME:    cascade.allocated_peak_bytes = 12288 : i64
// ROWS:         ethosu.conv2d ifm <i8, region 1, shape [{{[12]}}, 16, 16]
// PATCHES:      cascade.peak_sram_bytes = 8832 : i64
// PATCHES-SAME: cascade.allocated_peak_bytes = 8832 : i64
// PATCHES:      ethosu.conv2d ifm <i8, region 1, shape [2, 2, 16]
// VALUES:       output 0: int8[1, 16, 16, 16] {{.*}} distinct {{([2-9]|[1-9][0-9]+)}} sha256

func.func @patches(%x: tensor<1x16x16x16xi8>) -> tensor<1x16x16x16xi8> {
  %w0 = arith.constant dense<1> : tensor<64x1x1x16xi8>
  %b0 = arith.constant dense<0> : tensor<64xi32>
  %w1 = arith.constant dense<1> : tensor<1x3x3x64xi8>
  %w2 = arith.constant dense<1> : tensor<16x1x1x64xi8>
  %b2 = arith.constant dense<0> : tensor<16xi32>
  %t0 = nn.conv2d %x, %w0, %b0 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<8.0:0>} : (tensor<1x16x16x16xi8>, tensor<64x1x1x16xi8>, tensor<64xi32>) -> tensor<1x16x16x64xi8>
  %t1 = nn.depthwise_conv2d %t0, %w1, %b0 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<8.0:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<16.0:0>} : (tensor<1x16x16x64xi8>, tensor<1x3x3x64xi8>, tensor<64xi32>) -> tensor<1x16x16x64xi8>
  %out = nn.conv2d %t1, %w2, %b2 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<16.0:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<64.0:0>} : (tensor<1x16x16x64xi8>, tensor<16x1x1x64xi8>, tensor<16xi32>) -> tensor<1x16x16x16xi8>
  func.return %out : tensor<1x16x16x16xi8>
}
