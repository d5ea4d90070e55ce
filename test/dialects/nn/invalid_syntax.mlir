// RUN: not cascade-opt %s 2>&1 | filecheck %s

// A quantization scale must be written as a float; the parse error names the position.

func.func @bad_quant_syntax(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.tanh %x {input_quant = #nn.quant<1:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  func.return
}
// CHECK: invalid_syntax.mlir:6:45: error: expected a floating-point scale, such as 0.5
// CHECK-NOT: Traceback
