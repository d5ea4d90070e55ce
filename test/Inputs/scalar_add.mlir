// An add of a scalar argument (test_planner_pass.py).
func.func @main(%x: tensor<1x4x4x8xi8>, %s: tensor<i8>) -> tensor<1x4x4x8xi8> {
  %0 = nn.add %x, %s {activation = #nn<activation none>, input_quant = #nn.quant<0.3:0>, input2_quant = #nn.quant<0.3:0>, output_quant = #nn.quant<0.3:0>} : (tensor<1x4x4x8xi8>, tensor<i8>) -> tensor<1x4x4x8xi8>
  func.return %0 : tensor<1x4x4x8xi8>
}
