// RUN: cascade-opt %s --split-input-file -p legalize-tosa | filecheck %s
// RUN: cascade-opt %s --split-input-file -p 'legalize-tosa{fully-connected=conv}' | filecheck %s --check-prefix=CONV

// ADD, MEAN and FULLY_CONNECTED as tosa-converter-for-tflite lowers them (generic form).

// TFLite ADD: both inputs shifted left by 20 bits (the larger-scale one by 19: its multiplier is
// exactly 1/2), the other rescaled by 1231347816 * 2^-32, the sum by 1513704102 * 2^-49. Taking
// s(%a) = 1.0: s(%b) = 0.5 / (1231347816 * 2^-32) and s_out = 2 s(%b) / (2^20 * 1513704102 * 2^-49).
func.func @add(%a: tensor<1x2x2x4xi8>, %b: tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8> {
  %half = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %k10 = "tosa.const"() <{values = dense<10> : tensor<1xi8>}> : () -> tensor<1xi8>
  %k11 = "tosa.const"() <{values = dense<11> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m1 = "tosa.const"() <{values = dense<1231347816> : tensor<1xi32>}> : () -> tensor<1xi32>
  %k1 = "tosa.const"() <{values = dense<32> : tensor<1xi8>}> : () -> tensor<1xi8>
  %mo = "tosa.const"() <{values = dense<1513704102> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ko = "tosa.const"() <{values = dense<49> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp_a = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp_b = "tosa.const"() <{values = dense<-54> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zero = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = "tosa.rescale"(%a, %half, %k10, %zp_a, %zero) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x2x2x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x2x2x4xi32>
  %1 = "tosa.rescale"(%0, %m1, %k1, %zero, %zero) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x2x2x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x2x2x4xi32>
  %2 = "tosa.rescale"(%b, %half, %k11, %zp_b, %zero) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x2x2x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x2x2x4xi32>
  %3 = "tosa.add"(%1, %2) : (tensor<1x2x2x4xi32>, tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi32>
  %4 = "tosa.rescale"(%3, %mo, %ko, %zero, %zp_a) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x2x2x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x2x4xi8>
  %5 = "tosa.clamp"(%4) <{max_val = 127 : i8, min_val = -128 : i8}> : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8>
  return %5 : tensor<1x2x2x4xi8>
}

// CHECK-LABEL: func.func @add
// CHECK-NEXT:    %[[Y:.*]] = nn.add %a, %b {input_quant = #nn.quant<1.0:-128>, input2_quant = #nn.quant<1.744010603743175 f64:-54>, output_quant = #nn.quant<1.2371091049197263 f64:-128>, activation = #nn<activation none>} : (tensor<1x2x2x4xi8>, tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8>
// CHECK-NEXT:    func.return %[[Y]]

// -----

// TFLite MEAN over 5x5 with keep_dims=false, then FULLY_CONNECTED without bias: the sum's
// multiplier 1145324666 * 2^-34 is TFLite's QuantizeMultiplier(s_in / s_out) folded with 1/25,
// and 1789569791 * 2^-30 (= s_in / s_out) folds to it. The 1x1 convolution on weights reshaped
// from [3, 4] and the reshape to [1, 3] are the FULLY_CONNECTED, so the mean keeps no axes.
func.func @mean_fully_connected(%x: tensor<1x5x5x4xi8>) -> tensor<1x3xi8> {
  %one = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %k30 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zero = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %mm = "tosa.const"() <{values = dense<1145324666> : tensor<1xi32>}> : () -> tensor<1xi32>
  %km = "tosa.const"() <{values = dense<34> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = "tosa.rescale"(%x, %one, %k30, %zp, %zero) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x5x5x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x5x5x4xi32>
  %1 = "tosa.reduce_sum"(%0) <{axis = 1 : i32}> : (tensor<1x5x5x4xi32>) -> tensor<1x1x5x4xi32>
  %2 = "tosa.reduce_sum"(%1) <{axis = 2 : i32}> : (tensor<1x1x5x4xi32>) -> tensor<1x1x1x4xi32>
  %3 = "tosa.rescale"(%2, %mm, %km, %zero, %zp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x1x1x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x1x1x4xi8>
  %w = "tosa.const"() <{values = dense<[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]> : tensor<3x4xi8>}> : () -> tensor<3x4xi8>
  %wshape = "tosa.const_shape"() <{values = dense<[3, 1, 1, 4]> : tensor<4xindex>}> : () -> !tosa.shape<4>
  %w4 = "tosa.reshape"(%w, %wshape) : (tensor<3x4xi8>, !tosa.shape<4>) -> tensor<3x1x1x4xi8>
  %w_zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m = "tosa.const"() <{values = dense<[1518500250, 1073741824, 2147483647]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %k = "tosa.const"() <{values = dense<[38, 36, 40]> : tensor<3xi8>}> : () -> tensor<3xi8>
  %out_zp = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
  %4 = "tosa.conv2d"(%3, %w4, %zero, %zp, %w_zp) <{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x1x1x4xi8>, tensor<3x1x1x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x1x3xi32>
  %5 = "tosa.rescale"(%4, %m, %k, %zero, %out_zp) <{input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x1x1x3xi32>, tensor<3xi32>, tensor<3xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x1x1x3xi8>
  %oshape = "tosa.const_shape"() <{values = dense<[1, 3]> : tensor<2xindex>}> : () -> !tosa.shape<2>
  %6 = "tosa.reshape"(%5, %oshape) : (tensor<1x1x1x3xi8>, !tosa.shape<2>) -> tensor<1x3xi8>
  return %6 : tensor<1x3xi8>
}

// CHECK-LABEL: func.func @mean_fully_connected
// CHECK-NEXT:    %[[MEAN:.*]] = nn.mean %x {input_quant = #nn.quant<1.0:-128>, output_quant = #nn.quant<0.5999999717250479 f64:-128>, axes = array<i64: 1, 2>, keep_dims = false} : (tensor<1x5x5x4xi8>) -> tensor<1x4xi8>
// CHECK-NEXT:    %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<3x4xi8>
// CHECK-NEXT:    %[[Y:.*]] = nn.fully_connected %[[MEAN]], %[[W]] {input_quant = #nn.quant<0.5999999717250479 f64:-128>, weight_quant = #nn.quant<axis 0: [0.009207119980657241 f64:0, 0.026041667893878184 f64:0, 0.0032552084852189487 f64:0]>, output_quant = #nn.quant<1.0:7>, activation = #nn<activation none>} : (tensor<1x4xi8>, tensor<3x4xi8>) -> tensor<1x3xi8>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x3xi8>

// CONV-LABEL: func.func @mean_fully_connected
// CONV-NEXT:    %[[MEAN:.*]] = nn.mean %x {{.*}}keep_dims = true} : (tensor<1x5x5x4xi8>) -> tensor<1x1x1x4xi8>
// CONV-NEXT:    %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<3x1x1x4xi8>
// CONV-NEXT:    %[[B:.*]] = arith.constant dense<0> : tensor<3xi32>
// CONV-NEXT:    %[[C:.*]] = nn.conv2d %[[MEAN]], %[[W]], %[[B]] {{.*}}weight_quant = #nn.quant<axis 0: [0.009207119980657241 f64:0, 0.026041667893878184 f64:0, 0.0032552084852189487 f64:0]>, output_quant = #nn.quant<1.0:7>} : (tensor<1x1x1x4xi8>, tensor<3x1x1x4xi8>, tensor<3xi32>) -> tensor<1x1x1x3xi8>
// CONV-NEXT:    %[[Y:.*]] = nn.reshape %[[C]] {input_quant = #nn.quant<1.0:7>, output_quant = #nn.quant<1.0:7>} : (tensor<1x1x1x3xi8>) -> tensor<1x3xi8>
// CONV-NEXT:    func.return %[[Y]] : tensor<1x3xi8>
