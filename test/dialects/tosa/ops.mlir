// RUN: CASCADE_ROUNDTRIP
// RUN: CASCADE_GENERIC_ROUNDTRIP

// The TOSA operations cascade's `tosa` dialect adds to xDSL's, in the custom syntax tosa-opt
// prints; printed, parsed back (also through upstream tosa-opt) and printed again.

func.func @int8_conv(%x: tensor<1x8x8x4xi8>) -> tensor<1x4x4x8xi8> {
  %w = "tosa.const"() <{values = dense<1> : tensor<8x3x3x4xi8>}> : () -> tensor<8x3x3x4xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<8xi32>}> : () -> tensor<8xi32>
  %zp = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<38> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = tosa.conv2d %x, %w, %b, %zp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x8xi32>
  %1 = tosa.rescale %0, %m, %s, %izp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x8xi8>
  %2 = tosa.clamp %1 {max_val = 127 : i8, min_val = -128 : i8} : (tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8>
  return %2 : tensor<1x4x4x8xi8>
}

// CHECK-LABEL: func.func @int8_conv
// CHECK:      tosa.conv2d %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x8xi32>
// CHECK-NEXT: tosa.rescale %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true}
// CHECK-NEXT: tosa.clamp %{{.*}} {max_val = 127 : i8, min_val = -128 : i8} : (tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8>

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "int8_conv"
// CHECK-GENERIC:      "tosa.conv2d"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 2, 2>}>
// CHECK-GENERIC-NEXT: "tosa.rescale"({{.*}}) <{input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true}>
// CHECK-GENERIC-NEXT: "tosa.clamp"

// -----

func.func @layout(%x: tensor<1x32x32x16xi8>, %d: tensor<1x8x8x8xi8>) -> (tensor<1x31x31x16xi8>, tensor<3x3x8x1xi8>, tensor<1x10x10x8xi8>, tensor<8x1x8x1xi8>, tensor<1x1x8x8xi8>) {
  %start = tosa.const_shape {values = dense<0> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 31, 31, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.slice %x, %start, %size : (tensor<1x32x32x16xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x31x31x16xi8>
  %w = "tosa.const"() <{values = dense<3> : tensor<1x3x3x8xi8>}> : () -> tensor<1x3x3x8xi8>
  %shape = tosa.const_shape {values = dense<[3, 3, 8, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %1 = tosa.reshape %w, %shape : (tensor<1x3x3x8xi8>, !tosa.shape<4>) -> tensor<3x3x8x1xi8>
  %padding = tosa.const_shape {values = dense<[0, 0, 1, 1, 1, 1, 0, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %pad_const = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
  %2 = tosa.pad %d, %padding, %pad_const : (tensor<1x8x8x8xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x10x10x8xi8>
  %3 = tosa.transpose %d {perms = array<i32: 3, 0, 1, 2>} : (tensor<1x8x8x8xi8>) -> tensor<8x1x8x8xi8>
  %4 = tosa.max_pool2d %d {kernel = array<i64: 8, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x8xi8>) -> tensor<1x1x8x8xi8>
  %5 = tosa.reduce_sum %3 {axis = 2 : i32} : (tensor<8x1x8x8xi8>) -> tensor<8x1x1x8xi8>
  %six = tosa.const_shape {values = dense<[8, 1, 8, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %6 = tosa.reshape %5, %six : (tensor<8x1x1x8xi8>, !tosa.shape<4>) -> tensor<8x1x8x1xi8>
  return %0, %1, %2, %6, %4 : tensor<1x31x31x16xi8>, tensor<3x3x8x1xi8>, tensor<1x10x10x8xi8>, tensor<8x1x8x1xi8>, tensor<1x1x8x8xi8>
}

// CHECK-LABEL: func.func @layout
// CHECK:      tosa.const_shape {values = dense<0> : tensor<4xindex>} : () -> !tosa.shape<4>
// CHECK:      tosa.slice %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x32x32x16xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x31x31x16xi8>
// CHECK:      tosa.reshape %{{.*}}, %{{.*}} : (tensor<1x3x3x8xi8>, !tosa.shape<4>) -> tensor<3x3x8x1xi8>
// CHECK:      tosa.pad %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x8x8x8xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x10x10x8xi8>
// CHECK-NEXT: tosa.transpose %{{.*}} {perms = array<i32: 3, 0, 1, 2>} : (tensor<1x8x8x8xi8>) -> tensor<8x1x8x8xi8>
// CHECK-NEXT: tosa.max_pool2d %{{.*}} {kernel = array<i64: 8, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
// CHECK-NEXT: tosa.reduce_sum %{{.*}} {axis = 2 : i32} : (tensor<8x1x8x8xi8>) -> tensor<8x1x1x8xi8>

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "layout"
// CHECK-GENERIC:  "tosa.const_shape"() <{values = dense<0> : tensor<4xindex>}> : () -> !tosa.shape<4>
// CHECK-GENERIC:  "tosa.slice"
// CHECK-GENERIC:  "tosa.pad"

// -----

func.func @depthwise(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x4x2xi8>) -> tensor<1x8x8x8xi32> {
  %b = "tosa.const"() <{values = dense<7> : tensor<1xi32>}> : () -> tensor<1xi32>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = "tosa.depthwise_conv2d"(%x, %w, %b, %zp, %zp) <{acc_type = i32, dilation = array<i64: 2, 2>, pad = array<i64: 2, 2, 2, 2>, stride = array<i64: 1, 1>}> : (tensor<1x8x8x4xi8>, tensor<3x3x4x2xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x8xi32>
  return %0 : tensor<1x8x8x8xi32>
}

// CHECK-LABEL: func.func @depthwise
// CHECK: tosa.depthwise_conv2d %{{.*}} {acc_type = i32, dilation = array<i64: 2, 2>, pad = array<i64: 2, 2, 2, 2>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xi8>, tensor<3x3x4x2xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x8xi32>

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "depthwise"
// CHECK-GENERIC: "tosa.depthwise_conv2d"
