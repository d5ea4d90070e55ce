// Unsupported data type: float32 tensors (nn is int8).
// RUN: cd %S && %exit1 cascade-opt unsupported_float_tensor.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run unsupported_float_tensor.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate unsupported_float_tensor.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}unsupported_float_tensor.mlir:7:3: error: 'nn.pool2d' op input must have element type i8, got f32{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: unsupported_float_tensor.mlir:7:3: 'nn.pool2d' op input must have element type i8, got f32{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: unsupported_float_tensor.mlir:7:3: 'nn.pool2d' op input must have element type i8, got f32{{$}}
// EST-NOT:  {{.}}
