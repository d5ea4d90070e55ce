// RUN: cascade-opt %s --split-input-file -p legalize-tosa | filecheck %s

// Convolutions as tosa-converter-for-tflite lowers them (generic form), back into nn. The TOSA
// multiplier m with shift k is the real m * 2^-k: with input and output scale 1.0 it is the weight
// scale itself, exact as a double (`f64`) when float32 cannot hold it.

// Per-channel conv2d, zero points -128 and 5, and a clamp to [5, 127]: RELU.
func.func @conv_relu(%x: tensor<1x4x4x2xi8>) -> tensor<1x4x4x3xi8> {
  %w = "tosa.const"() <{values = dense<[[[[1, 2]]], [[[3, 4]]], [[[5, 6]]]]> : tensor<3x1x1x2xi8>}> : () -> tensor<3x1x1x2xi8>
  %b = "tosa.const"() <{values = dense<[10, 20, 30]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %in_zp = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w_zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m = "tosa.const"() <{values = dense<[1073741824, 1518500250, 2147483647]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %k = "tosa.const"() <{values = dense<[31, 38, 40]> : tensor<3xi8>}> : () -> tensor<3xi8>
  %acc_zp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %out_zp = "tosa.const"() <{values = dense<5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = "tosa.conv2d"(%x, %w, %b, %in_zp, %w_zp) <{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x4x4x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x3xi32>
  %1 = "tosa.rescale"(%0, %m, %k, %acc_zp, %out_zp) <{input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x4x4x3xi32>, tensor<3xi32>, tensor<3xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x3xi8>
  %2 = "tosa.clamp"(%1) <{max_val = 127 : i8, min_val = 5 : i8}> : (tensor<1x4x4x3xi8>) -> tensor<1x4x4x3xi8>
  return %2 : tensor<1x4x4x3xi8>
}

// CHECK-LABEL: func.func @conv_relu
// CHECK-NEXT:    %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<3x1x1x2xi8>
// CHECK-NEXT:    %[[B:.*]] = arith.constant dense<{{.*}}> : tensor<3xi32>
// CHECK-NEXT:    %[[Y:.*]] = nn.conv2d %x, %[[W]], %[[B]] {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation relu>, input_quant = #nn.quant<1.0:-128>, weight_quant = #nn.quant<axis 0: [0.5:0, 0.005524271728063468 f64:0, 0.0019531249990905053 f64:0]>, output_quant = #nn.quant<1.0:5>} : (tensor<1x4x4x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>) -> tensor<1x4x4x3xi8>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x4x3xi8>

// -----

// Depthwise with the converter's weight reshape 1HW(C*M) -> HWCM, TOSA's [top, bottom, left,
// right] padding, a per-tensor multiplier, a broadcast bias and no clamp: activation none.
func.func @depthwise(%x: tensor<1x5x5x2xi8>) -> tensor<1x6x8x4xi8> {
  %w = "tosa.const"() <{values = dense<[[[[1, 2, 3, 4], [5, 6, 7, 8]], [[9, 10, 11, 12], [13, 14, 15, 16]]]]> : tensor<1x2x2x4xi8>}> : () -> tensor<1x2x2x4xi8>
  %shape = "tosa.const_shape"() <{values = dense<[2, 2, 2, 2]> : tensor<4xindex>}> : () -> !tosa.shape<4>
  %hwcm = "tosa.reshape"(%w, %shape) : (tensor<1x2x2x4xi8>, !tosa.shape<4>) -> tensor<2x2x2x2xi8>
  %b = "tosa.const"() <{values = dense<7> : tensor<1xi32>}> : () -> tensor<1xi32>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %k = "tosa.const"() <{values = dense<33> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc_zp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = "tosa.depthwise_conv2d"(%x, %hwcm, %b, %zp, %zp) <{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 2, 2>, stride = array<i64: 1, 1>}> : (tensor<1x5x5x2xi8>, tensor<2x2x2x2xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x6x8x4xi32>
  %1 = "tosa.rescale"(%0, %m, %k, %acc_zp, %zp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x6x8x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x6x8x4xi8>
  return %1 : tensor<1x6x8x4xi8>
}

// CHECK-LABEL: func.func @depthwise
// CHECK-NEXT:    %[[W:.*]] = arith.constant dense<{{\[\[\[\[}}1, 2, 3, 4], [5, 6, 7, 8]], {{\[\[}}9, 10, 11, 12], [13, 14, 15, 16]]]]> : tensor<1x2x2x4xi8>
// CHECK-NEXT:    %[[B:.*]] = arith.constant dense<7> : tensor<4xi32>
// CHECK-NEXT:    nn.depthwise_conv2d %x, %[[W]], %[[B]] {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 2, 1, 2>, activation = #nn<activation none>, input_quant = #nn.quant<1.0:0>, weight_quant = #nn.quant<0.125:0>, output_quant = #nn.quant<1.0:0>} : (tensor<1x5x5x2xi8>, tensor<1x2x2x4xi8>, tensor<4xi32>) -> tensor<1x6x8x4xi8>
// CHECK-NOT:     tosa.

// -----

// The converter slices 8 rows to 7 so that a 1x1 stride-2 convolution covers its input exactly;
// nn's windows need no exact cover, so the convolution reads the unsliced tensor.
func.func @slice_before_strided_conv(%x: tensor<1x8x8x4xi8>) -> tensor<1x4x4x2xi8> {
  %start = "tosa.const_shape"() <{values = dense<0> : tensor<4xindex>}> : () -> !tosa.shape<4>
  %size = "tosa.const_shape"() <{values = dense<[1, 7, 7, 4]> : tensor<4xindex>}> : () -> !tosa.shape<4>
  %s = "tosa.slice"(%x, %start, %size) : (tensor<1x8x8x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x7x7x4xi8>
  %w = "tosa.const"() <{values = dense<1> : tensor<2x1x1x4xi8>}> : () -> tensor<2x1x1x4xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
  %zp = "tosa.const"() <{values = dense<-3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w_zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %k = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc_zp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = "tosa.conv2d"(%s, %w, %b, %zp, %w_zp) <{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}> : (tensor<1x7x7x4xi8>, tensor<2x1x1x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %1 = "tosa.rescale"(%0, %m, %k, %acc_zp, %w_zp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  return %1 : tensor<1x4x4x2xi8>
}

// CHECK-LABEL: func.func @slice_before_strided_conv
// CHECK:         nn.conv2d %x, %{{.*}}, %{{.*}} {stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, {{.*}}input_quant = #nn.quant<1.0:-3>{{.*}} : (tensor<1x8x8x4xi8>, tensor<2x1x1x4xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi8>
// CHECK-NOT:     tosa.

// -----

// A clamp to [-128, -28] after a rescale to zero point -128 is RELU6 for an output scale of
// 6/100, rounded to float32; the weight scale follows: 2^-1 * 0.06 / 1.0, also a float32.
func.func @conv_relu6(%x: tensor<1x2x2x1xi8>) -> tensor<1x2x2x1xi8> {
  %w = "tosa.const"() <{values = dense<1> : tensor<1x1x1x1xi8>}> : () -> tensor<1x1x1x1xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %out_zp = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %k = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc_zp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = "tosa.conv2d"(%x, %w, %b, %zp, %zp) <{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x2x2x1xi8>, tensor<1x1x1x1xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x1xi32>
  %1 = "tosa.rescale"(%0, %m, %k, %acc_zp, %out_zp) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}> : (tensor<1x2x2x1xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x2x1xi8>
  %2 = "tosa.clamp"(%1) <{max_val = -28 : i8, min_val = -128 : i8}> : (tensor<1x2x2x1xi8>) -> tensor<1x2x2x1xi8>
  return %2 : tensor<1x2x2x1xi8>
}

// CHECK-LABEL: func.func @conv_relu6
// CHECK:         nn.conv2d {{.*}}activation = #nn<activation relu6>, input_quant = #nn.quant<1.0:0>, weight_quant = #nn.quant<0.03:0>, output_quant = #nn.quant<0.06:-128>}
