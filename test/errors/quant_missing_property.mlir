// Missing quantization: an operator without its output quantization.
// RUN: cd %S && %exit1 cascade-opt quant_missing_property.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run quant_missing_property.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate quant_missing_property.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}quant_missing_property.mlir:7:3: error: 'nn.pool2d' op property 'output_quant' expected in operation 'nn.pool2d'{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: quant_missing_property.mlir:7:3: 'nn.pool2d' op property 'output_quant' expected in operation 'nn.pool2d'{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: quant_missing_property.mlir:7:3: 'nn.pool2d' op property 'output_quant' expected in operation 'nn.pool2d'{{$}}
// EST-NOT:  {{.}}
