// Inconsistent shapes: a reshape that changes the number of elements.
// RUN: cd %S && %exit1 cascade-opt shape_reshape_volume.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run shape_reshape_volume.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate shape_reshape_volume.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x30xi8> {
  %0 = nn.reshape %x {input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x30xi8>
  func.return %0 : tensor<1x30xi8>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}shape_reshape_volume.mlir:7:3: error: 'nn.reshape' op reshape must keep the element count: (1, 4, 4, 2) to (1, 30){{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: shape_reshape_volume.mlir:7:3: 'nn.reshape' op reshape must keep the element count: (1, 4, 4, 2) to (1, 30){{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: shape_reshape_volume.mlir:7:3: 'nn.reshape' op reshape must keep the element count: (1, 4, 4, 2) to (1, 30){{$}}
// EST-NOT:  {{.}}
