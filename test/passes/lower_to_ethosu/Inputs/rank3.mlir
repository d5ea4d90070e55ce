func.func @main(%x: tensor<2x4x8xi8> {nn.quant = #nn.quant<0.5:0>}, %y: tensor<2x1x1xi8> {nn.quant = #nn.quant<0.5:0>}) -> tensor<2x4x8xi8> {
  %s = nn.add %x, %y {activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, input2_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<2x4x8xi8>, tensor<2x1x1xi8>) -> tensor<2x4x8xi8>
  func.return %s : tensor<2x4x8xi8>
}
