// Impossible SRAM budget: the hard limit of cascade-plan is smaller than the smallest working set
// of an operator. The message names the function, the budget, the operator that cannot fit (where
// it is written, or its TFLite tensor name) and its working set: a 2x2/2 max pool of 1x4x4x2 int8
// is a 32-byte input and an 8-byte output, each rounded up to 16 bytes: 32 + 16 = 48.
// RUN: cd %S && %exit1 cascade-opt sram_budget_too_small.mlir --cascade-plan='sram-budget=16' 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: cd %S && %exit1 cascade-opt sram_budget_too_small.mlir -p 'cascade-plan{sram-budget=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: cd %S && %exit1 cascade-opt %models/resnet8.tflite --cascade-plan=sram-budget=1000 2>&1 | filecheck %s --check-prefix=TFLITE

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// FLAG-NOT:  Traceback
// FLAG:      {{^}}cascade-opt: error: cascade-plan: @main: sram-budget of 16 bytes is too small: nn.pool2d at sram_budget_too_small.mlir:10:3 needs at least 48 bytes (its smallest working set){{$}}
// FLAG-NOT:  {{.}}

// ZERO-NOT:  Traceback
// ZERO:      {{^}}cascade-opt: error: cascade-plan: @main: sram-budget of 0 bytes is too small: nn.pool2d at sram_budget_too_small.mlir:10:3 needs at least 48 bytes (its smallest working set){{$}}
// ZERO-NOT:  {{.}}

// TFLITE-NOT:  Traceback
// TFLITE:      {{^}}cascade-opt: error: cascade-plan: @main: sram-budget of 1000 bytes is too small: nn.conv2d 'functional_3_1/re_lu_9_1/Relu;functional_3_1/conv2d_5_1/convolution' needs at least 15744 bytes (its smallest working set){{$}}
// TFLITE-NOT:  {{.}}
