// A plan records the accelerator it was made for (`cascade.accelerator`): allocate-memory and
// lower-to-ethosu follow it, and refuse another one given explicitly instead of emitting
// streams for the wrong NPU or memory. IR planned before the record (here: the attribute
// removed) is checked the old way: a plan that keeps tensors in DRAM (U65's Dedicated_Sram)
// cannot be allocated or lowered for an accelerator whose memory mode has no DRAM arena.
// RUN: cd %S && %exit1 cascade-opt spill_accelerator_mismatch.mlir --cascade-plan='sram-budget=4096 accelerator=ethos-u65-256' --rolling-buffer --allocate-memory=accelerator=ethos-u55-256 2>&1 | filecheck %s --check-prefix=ALLOCATE
// RUN: cd %S && %exit1 cascade-opt spill_accelerator_mismatch.mlir --cascade-plan='sram-budget=4096 accelerator=ethos-u65-256' --rolling-buffer --allocate-memory --lower-to-ethosu=accelerator=ethos-u55-128 2>&1 | filecheck %s --check-prefix=LOWER
// RUN: cd %S && cascade-opt spill_accelerator_mismatch.mlir --cascade-plan='sram-budget=4096 accelerator=ethos-u65-256' --rolling-buffer --allocate-memory --lower-to-ethosu -t ethosu-cs 2>&1 | filecheck %s --check-prefix=FOLLOW
// RUN: cd %S && cascade-opt spill_accelerator_mismatch.mlir --cascade-plan='sram-budget=4096 accelerator=ethos-u65-256' --rolling-buffer | sed -e 's/, cascade.accelerator = "ethos-u65-256"//' > %t.planned.mlir
// RUN: %exit1 cascade-opt %t.planned.mlir --allocate-memory 2>&1 | filecheck %s --check-prefix=OLD-ALLOCATE
// RUN: cascade-opt %t.planned.mlir --allocate-memory=accelerator=ethos-u65-256 > %t.allocated.mlir
// RUN: %exit1 cascade-opt %t.allocated.mlir --lower-to-ethosu 2>&1 | filecheck %s --check-prefix=OLD-LOWER

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
// ALLOCATE:      {{^}}cascade-opt: error: allocate-memory: @residual was planned for 'ethos-u65-256', not 'ethos-u55-256' (plan it again with accelerator=ethos-u55-256, or leave accelerator out){{$}}
// ALLOCATE-NOT:  {{.}}

// LOWER-NOT:  Traceback
// LOWER:      {{^}}cascade-opt: error: lower-to-ethosu: @residual was planned for 'ethos-u65-256', not 'ethos-u55-128' (plan it again with accelerator=ethos-u55-128, or leave accelerator out){{$}}
// LOWER-NOT:  {{.}}

// FOLLOW:     {{^}}// ethosu.command_stream 0 (ethos-u65-256): command stream, {{[0-9]+}} words{{$}}

// OLD-ALLOCATE-NOT:  Traceback
// OLD-ALLOCATE:      {{^}}cascade-opt: error: allocate-memory: @residual: the plan keeps tensors in DRAM, which 'ethos-u55-256' in its default memory mode has not (was the plan made for another accelerator?){{$}}
// OLD-ALLOCATE-NOT:  {{.}}

// OLD-LOWER-NOT:  Traceback
// OLD-LOWER:      {{^}}cascade-opt: error: lower-to-ethosu: @residual: the function keeps tensors in DRAM, which 'ethos-u55-256' in its default memory mode has not (was it planned for another accelerator?){{$}}
// OLD-LOWER-NOT:  {{.}}
