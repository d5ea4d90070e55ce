// Inconsistent shapes: a 2x2/2 pooling of 4x4 declared to give 3x2.
// RUN: cd %S && %exit1 cascade-opt shape_pool_output.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run shape_pool_output.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate shape_pool_output.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x3x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x3x2x2xi8>
  func.return %0 : tensor<1x3x2x2xi8>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}shape_pool_output.mlir:7:3: error: 'nn.pool2d' op output height must be 2 for input height 4, kernel 2, stride 2, dilation 1, padding 0; got 3{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: shape_pool_output.mlir:7:3: 'nn.pool2d' op output height must be 2 for input height 4, kernel 2, stride 2, dilation 1, padding 0; got 3{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: shape_pool_output.mlir:7:3: 'nn.pool2d' op output height must be 2 for input height 4, kernel 2, stride 2, dilation 1, padding 0; got 3{{$}}
// EST-NOT:  {{.}}
