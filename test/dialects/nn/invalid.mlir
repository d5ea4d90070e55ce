// RUN: cascade-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One case per verifier rule of the nn dialect.

func.func @conv_output_height(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x4xi8>, %b: tensor<8xi32>) {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>) -> tensor<1x8x6x8xi8>
  func.return
}
// CHECK: output height must be 6 for input height 8, kernel 3, stride 1, dilation 1, padding 0; got 8

// -----

func.func @conv_channels(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x5xi8>, %b: tensor<8xi32>) {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x5xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
  func.return
}
// CHECK: weight input channels 5 must equal input channels 4

// -----

func.func @conv_out_channels(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x4xi8>, %b: tensor<8xi32>) {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>) -> tensor<1x8x8x7xi8>
  func.return
}
// CHECK: weight output channels 8 must equal output channels 7

// -----

func.func @kernel_too_big(%x: tensor<1x2x2x4xi8>, %w: tensor<8x3x3x4xi8>, %b: tensor<8xi32>) {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x2x2x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>) -> tensor<1x1x1x8xi8>
  func.return
}
// CHECK: kernel 3 (dilation 1) does not fit the input height 2 with padding 0

// -----

func.func @bad_stride(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x4xi8>, %b: tensor<8xi32>) {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 0, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
  func.return
}
// CHECK: stride entries must be >= 1, got [0, 1]

// -----

func.func @bias_shape(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x4xi8>, %b: tensor<4xi32>) {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<4xi32>) -> tensor<1x8x8x8xi8>
  func.return
}
// CHECK: bias must have shape (8,), got (4,)

// -----

func.func @bias_type(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x4xi8>, %b: tensor<8xi8>) {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi8>) -> tensor<1x8x8x8xi8>
  func.return
}
// CHECK: bias must have element type i32, got i8

// -----

func.func @float_input(%x: tensor<1x8x8x4xf32>, %w: tensor<8x3x3x4xi8>, %b: tensor<8xi32>) {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xf32>, tensor<8x3x3x4xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
  func.return
}
// CHECK: input must have element type i8, got f32

// -----

func.func @per_channel_count(%x: tensor<1x8x8x4xi8>, %w: tensor<2x3x3x4xi8>, %b: tensor<2xi32>) {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<axis 0: [0.5:0, 0.5:0, 0.5:0]>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>, tensor<2x3x3x4xi8>, tensor<2xi32>) -> tensor<1x8x8x2xi8>
  func.return
}
// CHECK: per-channel weight quantization has 3 scales for 2 output channels

// -----

func.func @per_channel_axis(%x: tensor<1x8x8x4xi8>, %w: tensor<1x3x3x4xi8>, %b: tensor<4xi32>) {
  %0 = nn.depthwise_conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<axis 0: [0.5:0, 0.5:0, 0.5:0, 0.5:0]>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>, tensor<1x3x3x4xi8>, tensor<4xi32>) -> tensor<1x8x8x4xi8>
  func.return
}
// CHECK: per-channel weight quantization must be along axis 3, got 0

// -----

func.func @per_channel_input(%x: tensor<1x8x8x4xi8>) {
  %0 = nn.tanh %x {input_quant = #nn.quant<axis 3: [0.5:0, 0.5:0, 0.5:0, 0.5:0]>, output_quant = #nn.quant<0.0078125:0>} : (tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8>
  func.return
}
// CHECK: input must be per-tensor quantized

// -----

func.func @depthwise_multiple(%x: tensor<1x8x8x4xi8>, %w: tensor<1x3x3x6xi8>, %b: tensor<6xi32>) {
  %0 = nn.depthwise_conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>, tensor<1x3x3x6xi8>, tensor<6xi32>) -> tensor<1x8x8x6xi8>
  func.return
}
// CHECK: output channels 6 must be a multiple of input channels 4

// -----

func.func @producer_quant(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.rescale %x {input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.25:3>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  %1 = nn.tanh %0 {input_quant = #nn.quant<0.25:4>, output_quant = #nn.quant<0.0078125:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  func.return
}
// CHECK: input quantization #nn.quant<0.25:4> differs from #nn.quant<0.25:3> written by its producer nn.rescale

// -----

func.func @zero_point_range(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.rescale %x {input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.25:200>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  func.return
}
// CHECK: output zero point must be in [-128, 127], got [200]

// -----

func.func @negative_scale(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.rescale %x {input_quant = #nn.quant<-0.5:0>, output_quant = #nn.quant<0.25:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  func.return
}
// CHECK: quantization scales must be positive

// -----

func.func @no_broadcast(%x: tensor<1x4x4x4xi8>, %y: tensor<1x4x3x4xi8>) {
  %0 = nn.add %x, %y {activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, input2_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>, tensor<1x4x3x4xi8>) -> tensor<1x4x4x4xi8>
  func.return
}
// CHECK: input shapes (1, 4, 4, 4) and (1, 4, 3, 4) do not broadcast

// -----

func.func @pool_channels(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x2x2x3xi8>
  func.return
}
// CHECK: pooling keeps batch and channels: input (1, 4, 4, 4), output (1, 2, 2, 3)

// -----

func.func @fc_shape(%x: tensor<1x8xi8>, %w: tensor<10x8xi8>) {
  %0 = nn.fully_connected %x, %w {activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8xi8>, tensor<10x8xi8>) -> tensor<1x9xi8>
  func.return
}
// CHECK: output shape must be (1, 10), got (1, 9)

// -----

func.func @mean_axes(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.mean %x {axes = array<i64: 1, 4>, keep_dims = true, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x1x4x4xi8>
  func.return
}
// CHECK: mean axes [1, 4] out of range for rank 4

// -----

func.func @pad_quant(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.pad %x {padding = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:1>} : (tensor<1x4x4x4xi8>) -> tensor<1x6x6x4xi8>
  func.return
}
// CHECK: pad must keep the quantization of its input

// -----

func.func @reshape_count(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.reshape %x {input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x60xi8>
  func.return
}
// CHECK: reshape must keep the element count: (1, 4, 4, 4) to (1, 60)

// -----

func.func @resize_factor(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.resize %x {mode = #nn<resize_mode nearest>, align_corners = false, half_pixel_centers = false, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x6x8x4xi8>
  func.return
}
// CHECK: output height 6 must be an integer multiple of input height 4

// -----

func.func @concat_extent(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.concat %x, %x {axis = 3 : i64, input_quants = [#nn.quant<0.5:0>, #nn.quant<0.5:0>], output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>, tensor<1x4x4x4xi8>) -> tensor<1x4x4x9xi8>
  func.return
}
// CHECK: output extent 9 along axis 3 must be 8

// -----

func.func @concat_quants(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.concat %x, %x {axis = 3 : i64, input_quants = [#nn.quant<0.5:0>], output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>, tensor<1x4x4x4xi8>) -> tensor<1x4x4x8xi8>
  func.return
}
// CHECK: concat has 2 inputs but 1 input quantizations

// -----

func.func @transpose_size(%x: tensor<1x4x4x8xi8>, %w: tensor<4x3x3x8xi8>, %b: tensor<4xi32>) {
  %0 = nn.transpose_conv2d %x, %w, %b {stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x8xi8>, tensor<4x3x3x8xi8>, tensor<4xi32>) -> tensor<1x9x8x4xi8>
  func.return
}
// CHECK: output height must be 8, got 9

// -----

func.func @missing_quant(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.tanh %x {input_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  func.return
}
// CHECK: property 'output_quant' expected in operation 'nn.tanh'

// -----

func.func @minimum_quant(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.minimum %x, %x {activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, input2_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.25:0>} : (tensor<1x4x4x4xi8>, tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  func.return
}
// CHECK: nn.minimum needs the same quantization on its inputs and output

// -----

func.func @maximum_activation(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.maximum %x, %x {activation = #nn<activation relu>, input_quant = #nn.quant<0.5:0>, input2_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>, tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  func.return
}
// CHECK: nn.maximum has no fused activation

// -----

func.func @pool_quant(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.pool2d %x {kind = #nn<pool_kind avg>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:1>} : (tensor<1x4x4x4xi8>) -> tensor<1x2x2x4xi8>
  func.return
}
// CHECK: nn.pool2d needs the same quantization on its inputs and output

// -----

func.func @resize_align_corners(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.resize %x {mode = #nn<resize_mode nearest>, align_corners = true, half_pixel_centers = false, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x8x8x4xi8>
  func.return
}
// CHECK: resize with align_corners is not supported

// -----

// 0.5 / 128 / 0.00390625 = 1: TFLite's output multiplier must stay below 1.
func.func @hard_swish_output_scale(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.hard_swish %x {input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.00390625:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  func.return
}
// CHECK: hard_swish needs an output scale above input scale / 128 (TFLite's output multiplier is below 1)

// -----

func.func @relu_without_activation(%x: tensor<1x4x4x4xi8>) {
  %0 = nn.relu %x {activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  func.return
}
// CHECK: nn.relu needs an activation other than none
