func.func @clamp(%x: tensor<1x2x2x1xi8>) -> tensor<1x2x2x1xi8> {
  %w = "tosa.const"() <{values = dense<1> : tensor<1x1x1x1xi8>}> : () -> tensor<1x1x1x1xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %out_zp = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %k = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc_zp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = "tosa.conv2d"(%x, %w, %b, %zp, %zp) <{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x2x2x1xi8>, tensor<1x1x1x1xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x1xi32>
  %1 = "tosa.rescale"(%0, %m, %k, %acc_zp, %out_zp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x2x2x1xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x2x1xi8>
  %2 = "tosa.clamp"(%1) <{max_val = 50 : i8, min_val = 0 : i8}> : (tensor<1x2x2x1xi8>) -> tensor<1x2x2x1xi8>
  return %2 : tensor<1x2x2x1xi8>
}
