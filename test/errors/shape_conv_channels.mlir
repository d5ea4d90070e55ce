// Inconsistent shapes: a convolution whose weights have 3 input channels for a 2-channel input.
// RUN: cd %S && %exit1 cascade-opt shape_conv_channels.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run shape_conv_channels.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate shape_conv_channels.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xi8>, %w: tensor<4x1x1x3xi8>, %b: tensor<4xi32>) -> tensor<1x4x4x4xi8> {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.25:0>, output_quant = #nn.quant<1.0:0>} : (tensor<1x4x4x2xi8>, tensor<4x1x1x3xi8>, tensor<4xi32>) -> tensor<1x4x4x4xi8>
  func.return %0 : tensor<1x4x4x4xi8>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}shape_conv_channels.mlir:7:3: error: 'nn.conv2d' op weight input channels 3 must equal input channels 2{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: shape_conv_channels.mlir:7:3: 'nn.conv2d' op weight input channels 3 must equal input channels 2{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: shape_conv_channels.mlir:7:3: 'nn.conv2d' op weight input channels 3 must equal input channels 2{{$}}
// EST-NOT:  {{.}}
