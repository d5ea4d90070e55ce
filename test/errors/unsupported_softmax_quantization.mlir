// Unsupported operator: an int8 softmax whose output quantization is not 1/256:-128, the only one
// TFLite's int8 kernel accepts. Valid nn (cascade-opt accepts it), but it cannot be executed.
// RUN: cd %S && cascade-opt unsupported_softmax_quantization.mlir | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run unsupported_softmax_quantization.mlir 2>&1 | filecheck %s --check-prefix=EXE

func.func @main(%x: tensor<1x10xi8>) -> tensor<1x10xi8> {
  %0 = nn.softmax %x {beta = 1.0 : f32, input_quant = #nn.quant<0.1:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x10xi8>) -> tensor<1x10xi8>
  func.return %0 : tensor<1x10xi8>
}

// OPT-NOT:  Traceback
// OPT:      nn.softmax %x {{.*}}output_quant = #nn.quant<0.5:0>} : (tensor<1x10xi8>) -> tensor<1x10xi8>

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: nn.softmax at unsupported_softmax_quantization.mlir:7:3: int8 softmax needs the output quantization 1/256:-128, as TFLite requires{{$}}
// EXE-NOT:  {{.}}
