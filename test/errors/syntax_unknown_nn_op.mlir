// Malformed MLIR: an operator the nn dialect does not have.
// RUN: cd %S && %exit1 cascade-opt syntax_unknown_nn_op.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run syntax_unknown_nn_op.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate syntax_unknown_nn_op.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8> {
  %0 = nn.elu %x {input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>
  func.return %0 : tensor<1x4x4x2xi8>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}syntax_unknown_nn_op.mlir:7:15: error: Operation nn.elu is not registered{{$}}
// OPT-NEXT: {{^}}  %0 = nn.elu %x {input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>{{$}}
// OPT-NEXT: {{^}}              ^^{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: syntax_unknown_nn_op.mlir:7:15: Operation nn.elu is not registered{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: syntax_unknown_nn_op.mlir:7:15: Operation nn.elu is not registered{{$}}
// EST-NOT:  {{.}}
