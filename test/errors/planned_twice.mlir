// Planning the output of cascade-plan (or of the passes after it) again is one error line
// naming the evidence, not a second plan of the plan or an internal error.
// RUN: cd %S && cascade-opt planned_twice.mlir --cascade-plan=sram-budget=1000 -o %t.planned.mlir
// RUN: cascade-opt %t.planned.mlir --rolling-buffer --allocate-memory -o %t.allocated.mlir
// RUN: cascade-opt %t.allocated.mlir --lower-to-ethosu -o %t.lowered.mlir
// RUN: %exit1 cascade-opt %t.planned.mlir --cascade-plan 2>&1 | filecheck %s --check-prefix=PEAK
// RUN: %exit1 cascade-opt %t.allocated.mlir -p ethosu-pipeline 2>&1 | filecheck %s --check-prefix=PEAK
// RUN: %exit1 cascade-opt %t.lowered.mlir -p ethosu-pipeline 2>&1 | filecheck %s --check-prefix=PEAK
// Without the function's attributes, what the passes left in its body says it:
// RUN: sed -e 's/ attributes {[^}]*}//' %t.allocated.mlir | %exit1 cascade-opt --cascade-plan 2>&1 | filecheck %s --check-prefix=LOOP
// RUN: sed -e 's/ attributes {[^}]*}//' %t.lowered.mlir | %exit1 cascade-opt --cascade-plan 2>&1 | filecheck %s --check-prefix=STREAM

func.func @main(%x: tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8> {
  %w = arith.constant dense<1> : tensor<4x3x3x4xi8>
  %b = arith.constant dense<0> : tensor<4xi32>
  %y = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>, tensor<4x3x3x4xi8>, tensor<4xi32>) -> tensor<1x8x8x4xi8>
  %z = nn.conv2d %y, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>, tensor<4x3x3x4xi8>, tensor<4xi32>) -> tensor<1x8x8x4xi8>
  func.return %z : tensor<1x8x8x4xi8>
}

// PEAK-NOT:  Traceback
// PEAK:      {{^}}cascade-opt: error: cascade-plan: @main is already planned (it carries cascade.peak_sram_bytes){{$}}
// PEAK-NOT:  {{.}}

// LOOP:      {{^}}cascade-opt: error: cascade-plan: @main is already planned (it contains cascade.for_stripes){{$}}
// STREAM:    {{^}}cascade-opt: error: cascade-plan: @main is already planned (it contains ethosu.command_stream){{$}}
