func.func @accumulator(%x: tensor<1x2x2x1xi8>) -> tensor<1x2x2x1xi32> {
  %w = "tosa.const"() <{values = dense<1> : tensor<1x1x1x1xi8>}> : () -> tensor<1x1x1x1xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = "tosa.conv2d"(%x, %w, %b, %zp, %zp) <{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x2x2x1xi8>, tensor<1x1x1x1xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x1xi32>
  return %0 : tensor<1x2x2x1xi32>
}
