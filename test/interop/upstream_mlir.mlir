// Round trip through upstream MLIR: cascade-opt (generic) -> iree-opt -> cascade-opt.
// Add one split-input chunk per construct that must stay readable by upstream MLIR tools.
// REQUIRES: iree-opt
// RUN: CASCADE_MLIR_ROUNDTRIP

// CHECK-LABEL: func.func @scale(%arg0: i32, %arg1: i32) -> i32
// CHECK-NEXT:    %0 = arith.constant 3 : i32
// CHECK-NEXT:    %1 = arith.addi %arg0, %arg1 : i32
// CHECK-NEXT:    %2 = arith.muli %1, %0 : i32
// CHECK-NEXT:    func.return %2 : i32

func.func @scale(%a: i32, %b: i32) -> i32 {
  %c = arith.constant 3 : i32
  %0 = arith.addi %a, %b : i32
  %1 = arith.muli %0, %c : i32
  func.return %1 : i32
}

// -----

// CHECK-LABEL: func.func @tensors(%arg0: tensor<1x8x8x4xi8>, %arg1: tensor<4xi32>) -> tensor<1x8x8x4xi8>
// CHECK-NEXT:    %0 = arith.constant dense<0> : tensor<4xi32>
// CHECK-NEXT:    func.return %arg0 : tensor<1x8x8x4xi8>

func.func @tensors(%x: tensor<1x8x8x4xi8>, %bias: tensor<4xi32>) -> tensor<1x8x8x4xi8> {
  %zero = arith.constant dense<0> : tensor<4xi32>
  func.return %x : tensor<1x8x8x4xi8>
}

// -----

// nn: opaque dialect attributes (#nn.quant, #nn<activation ...>) survive upstream MLIR.

// CHECK-LABEL: func.func @nn_conv(%arg0: tensor<1x8x8x4xi8>, %arg1: tensor<8x3x3x4xi8>, %arg2: tensor<8xi32>) -> tensor<1x8x8x8xi8>
// CHECK-NEXT:    %0 = nn.conv2d %arg0, %arg1, %arg2 {activation = #nn<activation relu6>, dilation = array<i64: 1, 1>, input_quant = #nn.quant<0.5:-3>, output_quant = #nn.quant<0.25:1>, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, weight_quant = #nn.quant<axis 0: [0.1:0, 0.2:0, 0.1:0, 0.2:0, 0.1:0, 0.2:0, 0.1:0, 0.2:0]>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
// CHECK-NEXT:    func.return %0 : tensor<1x8x8x8xi8>

func.func @nn_conv(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x4xi8>, %b: tensor<8xi32>) -> tensor<1x8x8x8xi8> {
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation relu6>, input_quant = #nn.quant<0.5:-3>, weight_quant = #nn.quant<axis 0: [0.1:0, 0.2:0, 0.1:0, 0.2:0, 0.1:0, 0.2:0, 0.1:0, 0.2:0]>, output_quant = #nn.quant<0.25:1>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
  func.return %0 : tensor<1x8x8x8xi8>
}

// -----

// cascade: a region op with block arguments, and an affine_map inside an opaque attribute.

// CHECK-LABEL: func.func @cascade_group(%arg0: tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
// CHECK-NEXT:    %0 = cascade.group ins(%arg1 = %arg0 : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
// CHECK-NEXT:      %1 = arith.addi %arg1, %arg1 {cascade.stripe = #cascade.stripe<shape = [1, 4, 16, 8], offset = affine_map<(d0) -> (0, (d0 * 4), 0, 0)>>} : tensor<1x16x16x8xi8>
// CHECK-NEXT:      cascade.yield %1 : tensor<1x16x16x8xi8>
// CHECK-NEXT:    }

func.func @cascade_group(%x: tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
         stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %s = arith.addi %a, %a {cascade.stripe = #cascade.stripe<shape = [1, 4, 16, 8], offset = affine_map<(d0) -> (0, (d0 * 4), 0, 0)>>} : tensor<1x16x16x8xi8>
    cascade.yield %s : tensor<1x16x16x8xi8>
  }
  func.return %r : tensor<1x16x16x8xi8>
}

// -----

// ethosu: a command stream (a region op at module level) with a DMA and a convolution.

// CHECK:      ethosu.command_stream "ethos-u55-128" {
// CHECK-NEXT:   ethosu.dma src <0, 0x3f0, 1008> dest <1, 0x1500, 1008> name "dma_w2"
// CHECK-NEXT:   ethosu.conv2d ifm <i8, region 1, shape [9, 16, 8], at 0, strides [128, 8, 1], layout nhwc, quant 0.05:-3, name "A"> ofm <i8, region 1, shape [8, 16, 8], tiles [2, 2, 16 | 0xc00, 0, 0x800, 0], strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B"> kernel <[3, 3]> padding <1, 1, 0, 1> weights [#ethosu.address_range<0, 0x50, 928>] biases [#ethosu.address_range<0, 0, 80>] block <8, 16, 8> traversal depth_first activation <none_or_relu, min 0.0> name "conv1_s0"
// CHECK-NEXT: }

ethosu.command_stream "ethos-u55-128" {
  ethosu.dma src <0, 0x3f0, 1008> dest <1, 0x1500, 1008> name "dma_w2"
  ethosu.conv2d ifm <i8, region 1, shape [9, 16, 8], at 0, strides [128, 8, 1], layout nhwc, quant 0.05:-3, name "A"> ofm <i8, region 1, shape [8, 16, 8], tiles [2, 2, 16 | 0xc00, 0, 0x800, 0], strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B"> kernel <[3, 3]> padding <1, 1, 0, 1> weights [#ethosu.address_range<0, 0x50, 928>] biases [#ethosu.address_range<0, 0, 80>] block <8, 16, 8> traversal depth_first activation <none_or_relu, min 0.0> name "conv1_s0"
}
