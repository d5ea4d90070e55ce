// A convolution to 40 channels and a global mean (test_planner_pass.py): in its smallest plan,
// three channel stripes of 16, the last one 8 wide.
func.func @main(%x: tensor<1x4x4x8xi8>) -> tensor<1x40xi8> {
  %w = arith.constant dense<1> : tensor<40x1x1x8xi8>
  %b = arith.constant dense<0> : tensor<40xi32>
  %t = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x8xi8>, tensor<40x1x1x8xi8>, tensor<40xi32>) -> tensor<1x4x4x40xi8>
  %m = nn.mean %t {input_quant = #nn.quant<0.5:0>, axes = array<i64: 1, 2>, keep_dims = false, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x40xi8>) -> tensor<1x40xi8>
  func.return %m : tensor<1x40xi8>
}
