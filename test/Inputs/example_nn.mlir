// A small int8 network in the nn dialect: a MobileNet-style block on a 16x16x3 image.
// conv 3x3/2 -> depthwise 3x3 -> pointwise conv 1x1 -> average pool 2x2/2.
func.func @block(%image: tensor<1x16x16x3xi8>,
                 %w0: tensor<8x3x3x3xi8>, %b0: tensor<8xi32>,
                 %w1: tensor<1x3x3x8xi8>, %b1: tensor<8xi32>,
                 %w2: tensor<16x1x1x8xi8>, %b2: tensor<16xi32>) -> tensor<1x4x4x16xi8> {
  %0 = nn.conv2d %image, %w0, %b0 {stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 1, 1>, activation = #nn<activation relu6>, input_quant = #nn.quant<0.0078125:0>, weight_quant = #nn.quant<0.02:0>, output_quant = #nn.quant<0.0235:-128>} : (tensor<1x16x16x3xi8>, tensor<8x3x3x3xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
  %1 = nn.depthwise_conv2d %0, %w1, %b1 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation relu6>, input_quant = #nn.quant<0.0235:-128>, weight_quant = #nn.quant<0.03:0>, output_quant = #nn.quant<0.0235:-128>} : (tensor<1x8x8x8xi8>, tensor<1x3x3x8xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
  %2 = nn.conv2d %1, %w2, %b2 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.0235:-128>, weight_quant = #nn.quant<0.01:0>, output_quant = #nn.quant<0.05:3>} : (tensor<1x8x8x8xi8>, tensor<16x1x1x8xi8>, tensor<16xi32>) -> tensor<1x8x8x16xi8>
  %3 = nn.pool2d %2 {kind = #nn<pool_kind avg>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.05:3>, output_quant = #nn.quant<0.05:3>} : (tensor<1x8x8x16xi8>) -> tensor<1x4x4x16xi8>
  func.return %3 : tensor<1x4x4x16xi8>
}
