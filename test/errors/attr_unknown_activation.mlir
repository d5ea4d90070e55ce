// Wrong attribute value: an activation the nn dialect does not know.
// RUN: cd %S && %exit1 cascade-opt attr_unknown_activation.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run attr_unknown_activation.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate attr_unknown_activation.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation sigmoid>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}attr_unknown_activation.mlir:7:194: error: Expected `none`, `relu`, `relu6`, or `relu_n1_to_1`.{{$}}
// OPT-NEXT: {{^}}  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation sigmoid>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>{{$}}
// OPT-NEXT: {{^}}                                                                                                                                                                                                 ^^^^^^^{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: attr_unknown_activation.mlir:7:194: Expected `none`, `relu`, `relu6`, or `relu_n1_to_1`.{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: attr_unknown_activation.mlir:7:194: Expected `none`, `relu`, `relu6`, or `relu_n1_to_1`.{{$}}
// EST-NOT:  {{.}}
