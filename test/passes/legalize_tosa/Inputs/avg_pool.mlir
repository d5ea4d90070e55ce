func.func @avg_pool(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = "tosa.avg_pool2d"(%x, %zp, %zp) <{acc_type = i32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}> : (tensor<1x4x4x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x2xi8>
  return %0 : tensor<1x2x2x2xi8>
}
