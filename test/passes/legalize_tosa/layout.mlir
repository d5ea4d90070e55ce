// RUN: cascade-opt %s --split-input-file -p legalize-tosa | filecheck %s

// Operators that keep or copy the quantization: MAX_POOL_2D (a clamp after it is its fused
// activation), RESHAPE, QUANTIZE int8 -> int8 (s_in / s_out is the rescale's multiplier), and a
// clamp to the whole int8 range, which is the identity.

func.func @pool_reshape_quantize(%x: tensor<1x4x4x2xi8>) -> tensor<1x8xi8> {
  %0 = "tosa.max_pool2d"(%x) <{kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}> : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  %1 = "tosa.clamp"(%0) <{max_val = 127 : i8, min_val = -3 : i8}> : (tensor<1x2x2x2xi8>) -> tensor<1x2x2x2xi8>
  %shape = "tosa.const_shape"() <{values = dense<[1, 8]> : tensor<2xindex>}> : () -> !tosa.shape<2>
  %2 = "tosa.reshape"(%1, %shape) : (tensor<1x2x2x2xi8>, !tosa.shape<2>) -> tensor<1x8xi8>
  %m = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %k = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %in_zp = "tosa.const"() <{values = dense<-3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %out_zp = "tosa.const"() <{values = dense<10> : tensor<1xi8>}> : () -> tensor<1xi8>
  %3 = "tosa.rescale"(%2, %m, %k, %in_zp, %out_zp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8xi8>
  %4 = "tosa.clamp"(%3) <{max_val = 127 : i8, min_val = -128 : i8}> : (tensor<1x8xi8>) -> tensor<1x8xi8>
  return %4 : tensor<1x8xi8>
}

// The pool's input zero point -3 comes from the rescale that reads it; 1518500250 * 2^-30 is
// s_in / s_out, so s_out = 1 / 1.41421356... The reshape moves below the rescale (as the nn
// canonicalization moves a reshape below an elementwise operator): the rescale runs on the
// pool's 4-D output.
// CHECK-LABEL: func.func @pool_reshape_quantize
// CHECK-NEXT:    %[[P:.*]] = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation relu>, input_quant = #nn.quant<1.0:-3>, output_quant = #nn.quant<1.0:-3>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
// CHECK-NEXT:    %[[Q:.*]] = nn.rescale %[[P]] {input_quant = #nn.quant<1.0:-3>, output_quant = #nn.quant<0.7071067811809711 f64:10>} : (tensor<1x2x2x2xi8>) -> tensor<1x2x2x2xi8>
// CHECK-NEXT:    %[[R:.*]] = nn.reshape %[[Q]] {input_quant = #nn.quant<0.7071067811809711 f64:10>, output_quant = #nn.quant<0.7071067811809711 f64:10>} : (tensor<1x2x2x2xi8>) -> tensor<1x8xi8>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x8xi8>
