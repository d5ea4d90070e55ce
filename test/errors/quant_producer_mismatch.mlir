// Missing quantization: a consumer reads its input with another quantization than its producer wrote.
// RUN: cd %S && %exit1 cascade-opt quant_producer_mismatch.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run quant_producer_mismatch.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate quant_producer_mismatch.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8> {
  %0 = nn.tanh %x {input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.0078125:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>
  %1 = nn.sigmoid %0 {input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.00390625:-128>} : (tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>
  func.return %1 : tensor<1x4x4x2xi8>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}quant_producer_mismatch.mlir:8:3: error: 'nn.sigmoid' op input quantization #nn.quant<0.5:0> differs from #nn.quant<0.0078125:0> written by its producer nn.tanh{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: quant_producer_mismatch.mlir:8:3: 'nn.sigmoid' op input quantization #nn.quant<0.5:0> differs from #nn.quant<0.0078125:0> written by its producer nn.tanh{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: quant_producer_mismatch.mlir:8:3: 'nn.sigmoid' op input quantization #nn.quant<0.5:0> differs from #nn.quant<0.0078125:0> written by its producer nn.tanh{{$}}
// EST-NOT:  {{.}}
