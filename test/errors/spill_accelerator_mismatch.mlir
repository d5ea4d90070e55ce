// A plan that keeps tensors in DRAM (U65's Dedicated_Sram) cannot be allocated or lowered for
// an accelerator whose memory mode has no DRAM arena (here U55's default, Shared_Sram): both
// passes say so instead of emitting streams for the wrong memory.
// RUN: cd %S && %exit1 cascade-opt spill_accelerator_mismatch.mlir --cascade-plan='sram-budget=4096 accelerator=ethos-u65-256' --rolling-buffer --allocate-memory 2>&1 | filecheck %s --check-prefix=ALLOCATE
// RUN: cd %S && %exit1 cascade-opt spill_accelerator_mismatch.mlir --cascade-plan='sram-budget=4096 accelerator=ethos-u65-256' --rolling-buffer --allocate-memory=accelerator=ethos-u65-256 --lower-to-ethosu 2>&1 | filecheck %s --check-prefix=LOWER

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

// ALLOCATE-NOT:  Traceback
// ALLOCATE:      {{^}}cascade-opt: error: allocate-memory: @residual: the plan keeps tensors in DRAM, which 'ethos-u55-256' in its default memory mode has not (was the plan made for another accelerator?){{$}}
// ALLOCATE-NOT:  {{.}}

// LOWER-NOT:  Traceback
// LOWER:      {{^}}cascade-opt: error: lower-to-ethosu: @residual: the function keeps tensors in DRAM, which 'ethos-u55-256' in its default memory mode has not (was it planned for another accelerator?){{$}}
// LOWER-NOT:  {{.}}
