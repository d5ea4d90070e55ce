// Operators that read their whole input (mean, fully connected) run alone, and a cascade that
// would need more memory than running its operators one at a time is not formed.
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128' | filecheck %s
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128 fc-on-npu=true' \
// RUN:   | filecheck %s --check-prefix=FC-NPU
//
// x: 1x8x8x16 -> %a = conv 3x3 pad 1 -> %b = conv 3x3 pad 1 -> %m = mean over H, W -> %fc (10).
// Bytes: x, %a, %b 8*8*16 = 1024 each; %m 16; %fc (graph output, NHWC) 10 -> 16.
// One at a time: x + %a = 2048, %a + %b = 2048, %b + %m = 1040, %m + %fc = 32: peak 2048.
// Cascading %a and %b in 1-row stripes: x + %b + 3 rows of %a (3*8*16 = 384) = 2432 > 2048.
// Weights kept in SRAM count: the convolutions' (2304 bytes + scales) would raise the peak, so
// they stream. The fully connected layer runs on the CPU (lower-to-ethosu leaves it there unless
// fc-on-npu), which reads its weights where they are: it gets no SRAM buffer either. Planned
// with fc-on-npu, it runs on the NPU, and its few bytes fit under the peak and are faster in SRAM.

// CHECK-LABEL: func.func @head
// CHECK-SAME:    cascade.peak_sram_bytes = 2048 : i64
// CHECK-NOT:     cascade.group
// CHECK:         %a = nn.conv2d {{.*}}cascade.weights = #cascade.weights<stream>
// CHECK:         %b = nn.conv2d {{.*}}cascade.weights = #cascade.weights<stream>
// CHECK:         %m = nn.mean %b {input_quant
// CHECK:         %fc = nn.fully_connected {{.*}}cascade.weights = #cascade.weights<stream>
// CHECK-NOT:     cascade.group

// FC-NPU-LABEL: func.func @head
// FC-NPU-SAME:    cascade.peak_sram_bytes = 2048 : i64
// FC-NPU-SAME:    cascade.fc_on_npu
// FC-NPU:         %fc = nn.fully_connected {{.*}}cascade.weights = #cascade.weights<sram>

func.func @head(%x: tensor<1x8x8x16xi8>) -> tensor<1x10xi8> {
  %w = arith.constant dense<1> : tensor<16x3x3x16xi8>
  %bias = arith.constant dense<0> : tensor<16xi32>
  %wfc = arith.constant dense<1> : tensor<10x16xi8>
  %bfc = arith.constant dense<0> : tensor<10xi32>
  %a = nn.conv2d %x, %w, %bias {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x16xi8>, tensor<16x3x3x16xi8>, tensor<16xi32>) -> tensor<1x8x8x16xi8>
  %b = nn.conv2d %a, %w, %bias {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x16xi8>, tensor<16x3x3x16xi8>, tensor<16xi32>) -> tensor<1x8x8x16xi8>
  %m = nn.mean %b {input_quant = #nn.quant<0.5:0>, axes = array<i64: 1, 2>, keep_dims = false, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x16xi8>) -> tensor<1x16xi8>
  %fc = nn.fully_connected %m, %wfc, %bfc {input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, activation = #nn<activation none>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16xi8>, tensor<10x16xi8>, tensor<10xi32>) -> tensor<1x10xi8>
  func.return %fc : tensor<1x10xi8>
}
