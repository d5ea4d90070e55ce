// Spilling on Ethos-U65 (Dedicated_Sram: the tensor arena is DRAM, the SRAM a 384 KiB cache):
// full tensors may stay in DRAM, where they take no SRAM and cost slower traffic.
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u65-256' | filecheck %s
// RUN: cascade-opt %s --cascade-plan='sram-budget=4096 accelerator=ethos-u65-256' | filecheck %s --check-prefix=BUDGET
// RUN: not cascade-opt %s --cascade-plan='sram-budget=4096 accelerator=ethos-u55-256' 2>&1 | filecheck %s --check-prefix=U55
//
// The network of residual.mlir: x: 1x16x8x4 -> %y = conv 1x1 (32 ch) -> %t1 = conv 1x1 ->
// %t2 = depthwise 3x3 pad 1 -> %t3 = conv 1x1 -> %out = add(%y, %t3), returned. Every
// 32-channel tensor takes 4096 bytes, x 512. Keeping tensors in SRAM, its smallest plan needs
// 6400 bytes (residual.mlir), so a 4096-byte budget fails on U55 (Shared_Sram: no DRAM arena).
//
// The smallest SRAM on U65 spills every tensor, streams every weight and cascades nothing (a
// cascade's rolling buffers would take SRAM): 0 bytes of SRAM. In DRAM, one operator at a time
// (steps y, t1, t2, t3, out; %out written in place over %y, both in DRAM):
//   step 0: x + y = 4608; step 1: y + t1 = 8192; step 2: y + t1 + t2 = 12288;
//   step 3: y + t2 + t3 = 12288; step 4: y (= out) + t3 = 8192          -> 12288 bytes.
// CHECK-LABEL: func.func @residual(%x: tensor<1x16x8x4xi8> {cascade.spilled})
// CHECK-SAME:    cascade.peak_dram_bytes = 12288 : i64, cascade.peak_sram_bytes = 0 : i64
// CHECK-NOT:     cascade.group
// CHECK-COUNT-4: weights = #cascade.weights<stream>, cascade.spilled
// CHECK:         %out = nn.add %y, %t3 {cascade.spilled
//
// Under 4096 bytes, the graph input and output stay in DRAM (TFLite and the CPU see them
// there) and the plan fits.
// BUDGET-LABEL: func.func @residual(%x: tensor<1x16x8x4xi8> {cascade.spilled})
// BUDGET-SAME:    cascade.peak_dram_bytes =
// BUDGET-SAME:    cascade.peak_sram_bytes = {{[0-9]|[1-9][0-9]|[1-9][0-9][0-9]|[1-3][0-9][0-9][0-9]|40[0-8][0-9]|409[0-6]}} : i64
// BUDGET:         {{%out|nn.add}}{{.*}}cascade.spilled
//
// U55: cascade-plan: @residual: sram-budget of 4096 bytes is too small

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
