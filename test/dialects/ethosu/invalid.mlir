// RUN: cascade-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s --match-full-lines

// One case per verifier rule of the ethosu dialect, each checking the exact message.

// Attribute verifiers: reported while the attribute is parsed.

"test.op"() {a = #ethosu.address_range<8, 0, 16>} : () -> ()
// CHECK: address range region must be 0-7 (or 0x103 for SHRAM), got 8

// -----

"test.op"() {a = #ethosu.address_range<0, -16, 16>} : () -> ()
// CHECK: address range address and length must be non-negative, got -16 and 16

// -----

"test.op"() {a = #ethosu.shape<8, -1, 8>} : () -> ()
// CHECK: shape must be non-negative, got [8, -1, 8]

// -----

"test.op"() {a = #ethosu.padding<0, -1, 0, 0>} : () -> ()
// CHECK: padding must be non-negative, got [0, -1, 0, 0]

// -----

"test.op"() {a = #ethosu.kernel<[3, 0]>} : () -> ()
// CHECK: kernel size must be positive, got [3, 0]

// -----

"test.op"() {a = #ethosu.kernel<[3, 3], stride [4, 1]>} : () -> ()
// CHECK: kernel stride must be in [1, 3], got [4, 1]

// -----

"test.op"() {a = #ethosu.kernel<[3, 3], dilation [1, 3]>} : () -> ()
// CHECK: kernel dilation must be in [1, 2], got [1, 3]

// -----

"test.op"() {a = #ethosu.tiles<2, 2, 16 | -16, 0, 0, 0>} : () -> ()
// CHECK: tile sizes and addresses must be non-negative, got [2, 2, 16, -16, 0, 0, 0]

// -----

"test.op"() {a = #ethosu.activation<none_or_relu, min 6.0, max 0.0>} : () -> ()
// CHECK: activation min (6.0) must not exceed max (0.0)

// -----

"test.op"() {a = #ethosu.activation<tanh, index 1>} : () -> ()
// CHECK: lookup table index only applies to table_lookup

// -----

"test.op"() {a = #ethosu.activation<table_lookup, index 8>} : () -> ()
// CHECK: lookup table index must be 0-7, got 8

// -----

// Feature maps: region, shape, tile box against the shape, alignment of addresses and strides.

"test.op"() {a = #ethosu.fm<i8, region 8, shape [9, 16, 8], at 0, layout nhwc>} : () -> ()
// CHECK: feature map region must be 0-7, got 8

// -----

"test.op"() {a = #ethosu.fm<i8, region 1, shape [0, 16, 8], at 0, layout nhwc>} : () -> ()
// CHECK: feature map shape must be positive, got [0, 16, 8]

// -----

"test.op"() {a = #ethosu.fm<i8, region 1, shape [9, 16, 8], tiles [10, 10, 16 | 0, 0, 0, 0], layout nhwc>} : () -> ()
// CHECK: tile height_0 (10) must be in [1, 9]

// -----

"test.op"() {a = #ethosu.fm<i8, region 1, shape [9, 16, 8], tiles [9, 9, 0 | 0, 0, 0, 0], layout nhwc>} : () -> ()
// CHECK: tile width_0 (0) must be in [1, 16]

// -----

"test.op"() {a = #ethosu.fm<i8, region 1, shape [9, 16, 8], tiles [4, 10, 8 | 0, 0x100, 0x200, 0x300], layout nhwc>} : () -> ()
// CHECK: tile height_1 (10) must not exceed 9

// -----

"test.op"() {a = #ethosu.fm<i8, region 1, shape [9, 16, 8], tiles [4, 0, 8 | 0, 0x100, 0x200, 0x300], layout nhwc>} : () -> ()
// CHECK: tile height_1 must be at least 1 when tile 1 is used

// -----

"test.op"() {a = #ethosu.fm<i8, region 1, shape [9, 16, 8], tiles [4, 3, 16 | 0, 0, 0x200, 0], layout nhwc>} : () -> ()
// CHECK: tile height_1 (3) must be 0 or height_0 when tile 1 is unused

// -----

"test.op"() {a = #ethosu.fm<i8, region 1, shape [9, 16, 8], tiles [4, 4, 16 | 0x100, 0, 0x208, 0], layout nhcwb16>} : () -> ()
// CHECK: nhcwb16 tile address 2 (0x208) must be a multiple of 16

// -----

"test.op"() {a = #ethosu.fm<i16, region 1, shape [9, 16, 8], at 0x3, layout nhwc>} : () -> ()
// CHECK: nhwc tile address 0 (0x3) must be a multiple of 2

// -----

"test.op"() {a = #ethosu.fm<i8, region 1, shape [9, 16, 8], at 0, strides [256, 16, 8], layout nhcwb16>} : () -> ()
// CHECK: nhcwb16 c stride (8) must be a multiple of 16

// -----

"test.op"() {a = #ethosu.fm<i16, region 1, shape [9, 16, 8], at 0, strides [32, 3, 2], layout nhwc>} : () -> ()
// CHECK: nhwc x stride (3) must be a multiple of 2

// -----

// Command stream and placement.

ethosu.command_stream "ethos-u85-256" {
}
// CHECK: unknown accelerator 'ethos-u85-256', expected one of ethos-u55-32, ethos-u55-64, ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512

// -----

ethosu.dma src <0, 0x40, 64> dest <1, 0x1500, 64>
// CHECK: 'ethosu.dma' expects parent op 'ethosu.command_stream'

// -----

// Block ops: block config, weights and biases (one range per core, 16-byte units).

ethosu.command_stream "ethos-u55-128" {
  ethosu.conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 256>] biases [#ethosu.address_range<0, 0, 160>] block <0, 8, 16> traversal depth_first
}
// CHECK: block config must be positive, got [0, 8, 16]

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[3, 3]> padding <0, 0, 0, 0> biases [#ethosu.address_range<0, 0, 160>] block <8, 8, 16> traversal depth_first
}
// CHECK: 'ethosu.conv2d' needs 1-2 weight ranges (one per core), got 0

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.depthwise_conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 256>, #ethosu.address_range<0, 0x200, 256>, #ethosu.address_range<0, 0x300, 256>] biases [#ethosu.address_range<0, 0, 160>] block <8, 8, 16>
}
// CHECK: 'ethosu.depthwise_conv2d' needs 1-2 weight ranges (one per core), got 3

// -----

ethosu.command_stream "ethos-u65-512" {
  ethosu.conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 256>, #ethosu.address_range<1, 0x200, 256>] biases [#ethosu.address_range<0, 0, 160>, #ethosu.address_range<0, 0xa0, 160>] block <8, 8, 16> traversal depth_first
}
// CHECK: all weight ranges must be in the same region

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<shram, 0x100, 256>] biases [#ethosu.address_range<0, 0, 160>] block <8, 8, 16> traversal depth_first
}
// CHECK: weight ranges cannot be in the SHRAM region

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x24, 928>] biases [#ethosu.address_range<0, 0, 160>] block <8, 8, 16> traversal depth_first
}
// CHECK: weight range address (0x24) and length (928) must be multiples of 16

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 256>] biases [#ethosu.address_range<0, 0, 77>] block <8, 8, 16> traversal depth_first
}
// CHECK: bias range address (0) and length (77) must be multiples of 16

// -----

ethosu.command_stream "ethos-u65-512" {
  ethosu.conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 256>, #ethosu.address_range<0, 0x200, 256>] biases [#ethosu.address_range<0, 0, 160>] block <8, 8, 16> traversal depth_first
}
// CHECK: weight and bias range counts differ (2 and 1)

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.pooling max ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[2, 2]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 256>] block <8, 8, 16>
}
// CHECK: 'ethosu.pooling' must not have weights or biases

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise add ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ifm2 <i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> biases [#ethosu.address_range<0, 0, 160>] block <8, 8, 16>
}
// CHECK: 'ethosu.elementwise' must not have weights or biases

// -----

// Kernel limits (Vela's tflite_supported_operators): convolutions 64 rows and 64 * 64
// elements after dilation, pooling 256 rows and 256 * 256 elements.

ethosu.command_stream "ethos-u55-128" {
  ethosu.conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[33, 1], dilation [2, 1]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 256>] biases [#ethosu.address_range<0, 0, 160>] block <8, 8, 16> traversal depth_first
}
// CHECK: 'ethosu.conv2d' kernel height 65 (dilated) exceeds 64

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[64, 65]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 256>] biases [#ethosu.address_range<0, 0, 160>] block <8, 8, 16> traversal depth_first
}
// CHECK: 'ethosu.conv2d' kernel area 4160 (dilated) exceeds 4096

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.pooling max ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[257, 1]> padding <0, 0, 0, 0> block <8, 8, 16>
}
// CHECK: 'ethosu.pooling' kernel height 257 (dilated) exceeds 256

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.pooling max ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[256, 257]> padding <0, 0, 0, 0> block <8, 8, 16>
}
// CHECK: 'ethosu.pooling' kernel area 65792 (dilated) exceeds 65536

// -----

// Depthwise convolution.

ethosu.command_stream "ethos-u55-128" {
  ethosu.depthwise_conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 8], at 0x800, layout nhwc> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 256>] biases [#ethosu.address_range<0, 0, 160>] block <8, 8, 16>
}
// CHECK: depthwise convolution needs equal IFM and OFM depth, got 16 and 8

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.depthwise_conv2d ifm <i8, region 1, shape [10, 10, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 256>] biases [#ethosu.address_range<0, 0, 160>] block <8, 8, 16> traversal part_kernel_first
}
// CHECK: depthwise convolution requires depth_first block traversal

// -----

// Elementwise operands, reversed operands and rescale.

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise add ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16>
}
// CHECK: binary elementwise 'add' needs exactly one of ifm2 and scalar

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise mul ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ifm2 <i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc> scalar <2.0, i8> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16>
}
// CHECK: binary elementwise 'mul' needs exactly one of ifm2 and scalar

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise abs ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> scalar <2.0, i8> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16>
}
// CHECK: unary elementwise 'abs' takes no ifm2 or scalar

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise clz ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16> reversed_operands
}
// CHECK: reversed_operands needs a binary elementwise kind

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise max ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ifm2 <i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16> rescale [3, 4]
}
// CHECK: rescale applies to add, sub and mul only, not 'max'

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise add ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ifm2 <i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16> rescale [3, 4, 5]
}
// CHECK: rescale must be [scale, shift], got 3 values

// -----

// DMA.

ethosu.command_stream "ethos-u55-128" {
  ethosu.dma src <0, 0x40, 64> dest <1, 0x1500, 32>
}
// CHECK: dma source and destination lengths differ (64 and 32)

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.dma src <0, 0x40, 64> dest <1, 0x1500, 64> mode 2
}
// CHECK: dma mode must be 0 (external) or 1 (internal), got 2

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.dma src <0, 0x40, 64> dest <1, 0x1500, 64> channel -1
}
// CHECK: dma channel must be non-negative, got -1

// -----

// Syntax errors of the feature-map attribute (--parsing-diagnostics).

"test.op"() {a = #ethosu.fm<i8, region 1, shape [9, 16, 8], at 0>} : () -> ()
// CHECK: feature map requires 'layout'

// -----

"test.op"() {a = #ethosu.fm<i8, region 1, shape [9, 16, 8], at 0, tiles [9, 9, 16 | 0, 0, 0, 0], layout nhwc>} : () -> ()
// CHECK: feature map requires exactly one of 'at' and 'tiles'

// -----

"test.op"() {a = #ethosu.fm<i8, region 1, shape [9, 16, 8], at 0, layout nhwc, quant 0.5:1, quant 0.5:1>} : () -> ()
// CHECK: 'quant' appears twice in feature map
