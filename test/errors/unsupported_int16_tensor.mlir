// Unsupported data type: int16 activations (16x8 quantization is not supported).
// RUN: cd %S && %exit1 cascade-opt unsupported_int16_tensor.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run unsupported_int16_tensor.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate unsupported_int16_tensor.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xi16>) -> tensor<1x2x2x2xi16> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi16>) -> tensor<1x2x2x2xi16>
  func.return %0 : tensor<1x2x2x2xi16>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}unsupported_int16_tensor.mlir:7:3: error: 'nn.pool2d' op input must have element type i8, got i16{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: unsupported_int16_tensor.mlir:7:3: 'nn.pool2d' op input must have element type i8, got i16{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: unsupported_int16_tensor.mlir:7:3: 'nn.pool2d' op input must have element type i8, got i16{{$}}
// EST-NOT:  {{.}}
