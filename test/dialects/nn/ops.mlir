// RUN: CASCADE_ROUNDTRIP
// RUN: CASCADE_GENERIC_ROUNDTRIP

// Every nn operator, in custom syntax; printed, parsed back and printed again.

func.func @convolutions(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x4xi8>, %b: tensor<8xi32>,
                        %dw: tensor<1x3x3x8xi8>, %tw: tensor<4x3x3x8xi8>, %tb: tensor<4xi32>) -> tensor<1x8x8x4xi8> {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 1, 1>, activation = #nn<activation relu6>, input_quant = #nn.quant<0.5:-3>, weight_quant = #nn.quant<axis 0: [0.1:0, 0.2:0, 0.1:0, 0.2:0, 0.1:0, 0.2:0, 0.1:0, 0.023529412:0]>, output_quant = #nn.quant<0.25:1>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>) -> tensor<1x4x4x8xi8>
  %1 = nn.depthwise_conv2d %0, %dw, %b {stride = array<i64: 1, 1>, dilation = array<i64: 2, 2>, padding = array<i64: 2, 2, 2, 2>, activation = #nn<activation relu>, input_quant = #nn.quant<0.25:1>, weight_quant = #nn.quant<0.05:0>, output_quant = #nn.quant<0.125:-128>} : (tensor<1x4x4x8xi8>, tensor<1x3x3x8xi8>, tensor<8xi32>) -> tensor<1x4x4x8xi8>
  %2 = nn.transpose_conv2d %1, %tw, %tb {stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.125:-128>, weight_quant = #nn.quant<0.01:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x8xi8>, tensor<4x3x3x8xi8>, tensor<4xi32>) -> tensor<1x8x8x4xi8>
  func.return %2 : tensor<1x8x8x4xi8>
}

// CHECK-LABEL: func.func @convolutions
// CHECK:      nn.conv2d %{{.*}}, %{{.*}}, %{{.*}} {stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 1, 1>, activation = #nn<activation relu6>, input_quant = #nn.quant<0.5:-3>, weight_quant = #nn.quant<axis 0: [0.1:0, 0.2:0, 0.1:0, 0.2:0, 0.1:0, 0.2:0, 0.1:0, 0.023529412:0]>, output_quant = #nn.quant<0.25:1>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>) -> tensor<1x4x4x8xi8>
// CHECK-NEXT: nn.depthwise_conv2d {{.*}} dilation = array<i64: 2, 2>, padding = array<i64: 2, 2, 2, 2>, activation = #nn<activation relu>
// CHECK-NEXT: nn.transpose_conv2d {{.*}} -> tensor<1x8x8x4xi8>

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "convolutions"
// CHECK-GENERIC: "nn.conv2d"(%{{.*}}, %{{.*}}, %{{.*}}) <{stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 1, 1>, activation = #nn<activation relu6>, input_quant = #nn.quant<0.5:-3>
// CHECK-GENERIC: "nn.depthwise_conv2d"
// CHECK-GENERIC: "nn.transpose_conv2d"

// -----

func.func @pooling_and_elementwise(%x: tensor<1x8x8x4xi8>, %c: tensor<1x1x1x4xi8>) -> tensor<1x4x4x4xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x4xi8>) -> tensor<1x4x4x4xi8>
  %1 = nn.pool2d %0 {kind = #nn<pool_kind avg>, kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation relu_n1_to_1>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  %2 = nn.add %1, %c {activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, input2_quant = #nn.quant<0.75:3>, output_quant = #nn.quant<1.0:0>} : (tensor<1x4x4x4xi8>, tensor<1x1x1x4xi8>) -> tensor<1x4x4x4xi8>
  %3 = nn.sub %2, %2 {activation = #nn<activation none>, input_quant = #nn.quant<1.0:0>, input2_quant = #nn.quant<1.0:0>, output_quant = #nn.quant<1.0:0>} : (tensor<1x4x4x4xi8>, tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  %4 = nn.mul %3, %c {activation = #nn<activation relu>, input_quant = #nn.quant<1.0:0>, input2_quant = #nn.quant<0.75:3>, output_quant = #nn.quant<2.0:-1>} : (tensor<1x4x4x4xi8>, tensor<1x1x1x4xi8>) -> tensor<1x4x4x4xi8>
  %5 = nn.minimum %4, %4 {activation = #nn<activation none>, input_quant = #nn.quant<2.0:-1>, input2_quant = #nn.quant<2.0:-1>, output_quant = #nn.quant<2.0:-1>} : (tensor<1x4x4x4xi8>, tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  %6 = nn.maximum %5, %4 {activation = #nn<activation none>, input_quant = #nn.quant<2.0:-1>, input2_quant = #nn.quant<2.0:-1>, output_quant = #nn.quant<2.0:-1>} : (tensor<1x4x4x4xi8>, tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  %7 = nn.tanh %6 {input_quant = #nn.quant<2.0:-1>, output_quant = #nn.quant<0.0078125:0>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  %8 = nn.sigmoid %7 {input_quant = #nn.quant<0.0078125:0>, output_quant = #nn.quant<0.00390625:-128>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  %9 = nn.leaky_relu %8 {alpha = 0.1 : f32, input_quant = #nn.quant<0.00390625:-128>, output_quant = #nn.quant<0.00390625:-128>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  %10 = nn.rescale %9 {input_quant = #nn.quant<0.00390625:-128>, output_quant = #nn.quant<0.5:7>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  %11 = nn.hard_swish %10 {input_quant = #nn.quant<0.5:7>, output_quant = #nn.quant<0.25:-3>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  %12 = nn.relu %11 {activation = #nn<activation relu6>, input_quant = #nn.quant<0.25:-3>, output_quant = #nn.quant<0.03125:-128>} : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8>
  func.return %12 : tensor<1x4x4x4xi8>
}

// CHECK-LABEL: func.func @pooling_and_elementwise
// CHECK:      nn.pool2d %{{.*}} {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>
// CHECK-NEXT: nn.pool2d %{{.*}} {kind = #nn<pool_kind avg>, {{.*}} activation = #nn<activation relu_n1_to_1>
// CHECK-NEXT: nn.add {{.*}} input2_quant = #nn.quant<0.75:3>, output_quant = #nn.quant<1.0:0>} : (tensor<1x4x4x4xi8>, tensor<1x1x1x4xi8>) -> tensor<1x4x4x4xi8>
// CHECK-NEXT: nn.sub
// CHECK-NEXT: nn.mul
// CHECK-NEXT: nn.minimum
// CHECK-NEXT: nn.maximum
// CHECK-NEXT: nn.tanh %{{.*}} {input_quant = #nn.quant<2.0:-1>, output_quant = #nn.quant<0.0078125:0>}
// CHECK-NEXT: nn.sigmoid
// CHECK-NEXT: nn.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f32
// CHECK-NEXT: nn.rescale
// CHECK-NEXT: nn.hard_swish %{{.*}} {input_quant = #nn.quant<0.5:7>, output_quant = #nn.quant<0.25:-3>}
// CHECK-NEXT: nn.relu %{{.*}} {activation = #nn<activation relu6>, input_quant = #nn.quant<0.25:-3>, output_quant = #nn.quant<0.03125:-128>}

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "pooling_and_elementwise"
// CHECK-GENERIC-COUNT-2: "nn.pool2d"
// CHECK-GENERIC: "nn.add"(%{{.*}}, %{{.*}}) <{activation = #nn<activation none>

// -----

func.func @whole_tensor(%x: tensor<1x5x5x8xi8>, %fw: tensor<10x8xi8>, %fb: tensor<10xi32>) -> tensor<1x10xi8> {
  %0 = nn.pad %x {padding = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, input_quant = #nn.quant<0.5:-3>, output_quant = #nn.quant<0.5:-3>} : (tensor<1x5x5x8xi8>) -> tensor<1x7x7x8xi8>
  %1 = nn.resize %0 {mode = #nn<resize_mode bilinear>, align_corners = false, half_pixel_centers = true, input_quant = #nn.quant<0.5:-3>, output_quant = #nn.quant<0.5:-3>} : (tensor<1x7x7x8xi8>) -> tensor<1x14x14x8xi8>
  %2 = nn.concat %1, %1 {axis = 3 : i64, input_quants = [#nn.quant<0.5:-3>, #nn.quant<0.5:-3>], output_quant = #nn.quant<0.5:-3>} : (tensor<1x14x14x8xi8>, tensor<1x14x14x8xi8>) -> tensor<1x14x14x16xi8>
  %3 = nn.mean %0 {axes = array<i64: 1, 2>, keep_dims = true, input_quant = #nn.quant<0.5:-3>, output_quant = #nn.quant<0.25:0>} : (tensor<1x7x7x8xi8>) -> tensor<1x1x1x8xi8>
  %4 = nn.reshape %3 {input_quant = #nn.quant<0.25:0>, output_quant = #nn.quant<0.25:0>} : (tensor<1x1x1x8xi8>) -> tensor<1x8xi8>
  %5 = nn.fully_connected %4, %fw, %fb {activation = #nn<activation none>, input_quant = #nn.quant<0.25:0>, weight_quant = #nn.quant<0.02:0>, output_quant = #nn.quant<0.1:4>} : (tensor<1x8xi8>, tensor<10x8xi8>, tensor<10xi32>) -> tensor<1x10xi8>
  %6 = nn.fully_connected %4, %fw {activation = #nn<activation none>, input_quant = #nn.quant<0.25:0>, weight_quant = #nn.quant<0.02:0>, output_quant = #nn.quant<0.1:4>} : (tensor<1x8xi8>, tensor<10x8xi8>) -> tensor<1x10xi8>
  %7 = nn.softmax %6 {beta = 1.0 : f32, input_quant = #nn.quant<0.1:4>, output_quant = #nn.quant<0.00390625:-128>} : (tensor<1x10xi8>) -> tensor<1x10xi8>
  func.return %7 : tensor<1x10xi8>
}

// CHECK-LABEL: func.func @whole_tensor
// CHECK:      nn.pad %{{.*}} {padding = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>
// CHECK-NEXT: nn.resize %{{.*}} {mode = #nn<resize_mode bilinear>, align_corners = false, half_pixel_centers = true
// CHECK-NEXT: nn.concat %{{.*}}, %{{.*}} {axis = 3 : i64, input_quants = [#nn.quant<0.5:-3>, #nn.quant<0.5:-3>]
// CHECK-NEXT: nn.mean %{{.*}} {axes = array<i64: 1, 2>, keep_dims = true
// CHECK-NEXT: nn.reshape
// CHECK-NEXT: nn.fully_connected %{{.*}}, %{{.*}}, %{{.*}} {
// CHECK-NEXT: nn.fully_connected %{{.*}}, %{{.*}} {
// CHECK-NEXT: nn.softmax %{{.*}} {beta = 1.000000e+00 : f32

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "whole_tensor"
// CHECK-GENERIC: "nn.fully_connected"(%{{.*}}, %{{.*}}, %{{.*}}) <{
// CHECK-GENERIC: "nn.fully_connected"(%{{.*}}, %{{.*}}) <{

// -----

// A scale written as a decimal is a float32, as in TFLite; one that must stay an exact double
// (1518500250 * 2^-38, recovered from an integer multiplier) carries the suffix f64.
func.func @exact_scales(%x: tensor<1x4xi8>) -> tensor<1x4xi8> {
  %0 = nn.rescale %x {input_quant = #nn.quant<0.1:0>, output_quant = #nn.quant<0.005524271728063468 f64:3>} : (tensor<1x4xi8>) -> tensor<1x4xi8>
  func.return %0 : tensor<1x4xi8>
}

// CHECK-LABEL: func.func @exact_scales
// CHECK: nn.rescale %{{.*}} {input_quant = #nn.quant<0.1:0>, output_quant = #nn.quant<0.005524271728063468 f64:3>}
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "exact_scales"
// CHECK-GENERIC: output_quant = #nn.quant<0.005524271728063468 f64:3>
