// One case per verifier rule of cascade's tosa operations, each with its message.
// RUN: cascade-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @conv_output_height(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x4xi8>, %b: tensor<8xi32>, %zp: tensor<1xi8>) {
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x7x8x8xi32>
  func.return
}
// CHECK: output height must be 8, got 7

// -----

func.func @conv_inexact_stride(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x4xi8>, %b: tensor<8xi32>, %zp: tensor<1xi8>) {
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x3x8xi32>
  func.return
}
// CHECK: input height 8 with padding 0+0, kernel 3, dilation 1 is not covered exactly by stride 2

// -----

func.func @conv_channels(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x5xi8>, %b: tensor<8xi32>, %zp: tensor<1xi8>) {
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x5xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x8xi32>
  func.return
}
// CHECK: weight input channels 5 must equal input channels 4

// -----

func.func @conv_accumulator(%x: tensor<1x8x8x4xi8>, %w: tensor<8x1x1x4xi8>, %b: tensor<8xi32>, %zp: tensor<1xi8>) {
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xi8>, tensor<8x1x1x4xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x8xi8>
  func.return
}
// CHECK: i8 input needs acc_type i32 and a i32 result, got i32 and i8

// -----

func.func @conv_bias(%x: tensor<1x8x8x4xi8>, %w: tensor<8x1x1x4xi8>, %b: tensor<4xi32>, %zp: tensor<1xi8>) {
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xi8>, tensor<8x1x1x4xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x8xi32>
  func.return
}
// CHECK: bias must have shape (8,) or (1,), got (4,)

// -----

func.func @conv_zero_point(%x: tensor<1x8x8x4xi8>, %w: tensor<8x1x1x4xi8>, %b: tensor<8xi32>, %zp: tensor<2xi8>) {
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xi8>, tensor<8x1x1x4xi8>, tensor<8xi32>, tensor<2xi8>, tensor<2xi8>) -> tensor<1x8x8x8xi32>
  func.return
}
// CHECK: input_zp must be a one-element tensor, got tensor<2xi8>

// -----

func.func @depthwise_channels(%x: tensor<1x8x8x4xi8>, %w: tensor<3x3x4x2xi8>, %b: tensor<8xi32>, %zp: tensor<1xi8>) {
  %0 = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xi8>, tensor<3x3x4x2xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x4xi32>
  func.return
}
// CHECK: output batch and channels must be (1, 8), got (1, 4)

// -----

func.func @rescale_per_channel(%x: tensor<1x4x4x8xi32>, %m: tensor<4xi32>, %s: tensor<4xi8>, %izp: tensor<1xi32>, %ozp: tensor<1xi8>) {
  %0 = tosa.rescale %x, %m, %s, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x8xi32>, tensor<4xi32>, tensor<4xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x8xi8>
  func.return
}
// CHECK: multiplier must have shape (8,), got (4,)

// -----

func.func @rescale_shape(%x: tensor<1x4x4x8xi32>, %m: tensor<1xi32>, %s: tensor<1xi8>, %izp: tensor<1xi32>, %ozp: tensor<1xi8>) {
  %0 = tosa.rescale %x, %m, %s, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x8x4xi8>
  func.return
}
// CHECK: output shape (1, 4, 8, 4) must equal input shape (1, 4, 4, 8)

// -----

func.func @rescale_zero_point_type(%x: tensor<1x4xi32>, %m: tensor<1xi32>, %s: tensor<1xi8>, %izp: tensor<1xi8>, %ozp: tensor<1xi8>) {
  %0 = tosa.rescale %x, %m, %s, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4xi8>
  func.return
}
// CHECK: input_zp element type must be i32, got i8

// -----

func.func @clamp_bounds(%x: tensor<1x4xi8>) {
  %0 = tosa.clamp %x {max_val = -1 : i8, min_val = 0 : i8} : (tensor<1x4xi8>) -> tensor<1x4xi8>
  func.return
}
// CHECK: min_val 0 must not exceed max_val -1

// -----

func.func @reduce_sum_shape(%x: tensor<1x4x4x8xi32>) {
  %0 = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<1x4x4x8xi32>) -> tensor<1x4x1x8xi32>
  func.return
}
// CHECK: output shape must be (1, 1, 4, 8), got (1, 4, 1, 8)

// -----

func.func @reshape_count(%x: tensor<2x3xi8>) {
  %s = tosa.const_shape {values = dense<[7]> : tensor<1xindex>} : () -> !tosa.shape<1>
  %0 = tosa.reshape %x, %s : (tensor<2x3xi8>, !tosa.shape<1>) -> tensor<7xi8>
  func.return
}
// CHECK: reshape must keep the element count: (2, 3) to (7,)

// -----

func.func @reshape_target(%x: tensor<2x3xi8>) {
  %s = tosa.const_shape {values = dense<[3, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.reshape %x, %s : (tensor<2x3xi8>, !tosa.shape<2>) -> tensor<6x1xi8>
  func.return
}
// CHECK: shape operand [3, 2] differs from the output shape (6, 1)

// -----

func.func @const_shape_rank() {
  %s = tosa.const_shape {values = dense<[3, 2]> : tensor<2xindex>} : () -> !tosa.shape<3>
  func.return
}
// CHECK: 2 values do not make a !tosa.shape<3>

// -----

func.func @slice_bounds(%x: tensor<1x8x8x4xi8>) {
  %start = tosa.const_shape {values = dense<[0, 2, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 7, 8, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.slice %x, %start, %size : (tensor<1x8x8x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x7x8x4xi8>
  func.return
}
// CHECK: slice at [0, 2, 0, 0] of size [1, 7, 8, 4] exceeds the input (1, 8, 8, 4)

// -----

func.func @pad_shape(%x: tensor<1x8x8x4xi8>, %c: tensor<1xi8>) {
  %p = tosa.const_shape {values = dense<[0, 0, 1, 1, 1, 1, 0, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %0 = tosa.pad %x, %p, %c : (tensor<1x8x8x4xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x9x10x4xi8>
  func.return
}
// CHECK: output shape must be (1, 10, 10, 4), got (1, 9, 10, 4)

// -----

func.func @transpose_perms(%x: tensor<1x8x4xi8>) {
  %0 = tosa.transpose %x {perms = array<i32: 0, 0, 1>} : (tensor<1x8x4xi8>) -> tensor<1x1x8xi8>
  func.return
}
// CHECK: perms [0, 0, 1] is not a permutation of 3 axes

// -----

func.func @max_pool_channels(%x: tensor<1x8x8x4xi8>) {
  %0 = tosa.max_pool2d %x {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xi8>) -> tensor<1x4x4x8xi8>
  func.return
}
// CHECK: pooling keeps batch and channels: input (1, 8, 8, 4), output (1, 4, 4, 8)

// -----

func.func @const_type() {
  %0 = "tosa.const"() <{values = dense<1> : tensor<4xi8>}> : () -> tensor<4xi32>
  func.return
}
// CHECK: values of type tensor<4xi8> do not match the result tensor<4xi32>
