// Inconsistent shapes: an addition of a 4-wide and a 3-wide tensor.
// RUN: cd %S && %exit1 cascade-opt shape_add_broadcast.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run shape_add_broadcast.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate shape_add_broadcast.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%a: tensor<1x4x4x2xi8>, %b: tensor<1x4x3x2xi8>) -> tensor<1x4x4x2xi8> {
  %0 = nn.add %a, %b {activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, input2_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<1.0:0>} : (tensor<1x4x4x2xi8>, tensor<1x4x3x2xi8>) -> tensor<1x4x4x2xi8>
  func.return %0 : tensor<1x4x4x2xi8>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}shape_add_broadcast.mlir:7:3: error: 'nn.add' op input shapes (1, 4, 4, 2) and (1, 4, 3, 2) do not broadcast{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: shape_add_broadcast.mlir:7:3: 'nn.add' op input shapes (1, 4, 4, 2) and (1, 4, 3, 2) do not broadcast{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: shape_add_broadcast.mlir:7:3: 'nn.add' op input shapes (1, 4, 4, 2) and (1, 4, 3, 2) do not broadcast{{$}}
// EST-NOT:  {{.}}
