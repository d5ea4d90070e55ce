// RUN: CASCADE_ROUNDTRIP
// RUN: CASCADE_GENERIC_ROUNDTRIP

// Every ethosu op and attribute form, in custom syntax; printed, parsed back and printed again,
// in custom (CHECK) and generic (CHECK-GENERIC) form. Optional fields at their default value
// are left out when printed.

// Two interleaved stripes of two 3x3 convs (reference/vela_api_example.py): B is a 10-row
// rolling buffer, so conv1_s1 writes and conv2_s1 reads it in two tiles.

ethosu.command_stream "ethos-u55-128" {
  ethosu.dma src <0, 0x3f0, 1008> dest <1, 0x1500, 1008> name "dma_w2"
  ethosu.conv2d ifm <i8, region 1, shape [9, 16, 8], at 0, strides [128, 8, 1], layout nhwc, quant 0.05:-3, name "A"> ofm <i8, region 1, shape [8, 16, 8], at 0x800, strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B"> kernel <[3, 3]> padding <1, 1, 0, 1> weights [#ethosu.address_range<0, 0x50, 928>] biases [#ethosu.address_range<0, 0, 80>] block <8, 16, 8> traversal depth_first activation <none_or_relu, min 0.0> name "conv1_s0"
  ethosu.conv2d ifm <i8, region 1, shape [8, 16, 8], at 0x800, strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B"> ofm <i8, region 1, shape [7, 16, 8], at 0xd00, strides [128, 8, 1], layout nhwc, quant 0.1:2, name "C"> kernel <[3, 3]> padding <1, 1, 0, 1> weights [#ethosu.address_range<1, 0x1550, 928>] biases [#ethosu.address_range<1, 0x1500, 80>] block <8, 16, 8> traversal depth_first activation <none_or_relu, min 0.0> name "conv2_s0"
  ethosu.conv2d ifm <i8, region 1, shape [9, 16, 8], at 0x380, strides [128, 8, 1], layout nhwc, quant 0.05:-3, name "A"> ofm <i8, region 1, shape [8, 16, 8], tiles [2, 2, 16 | 0xc00, 0, 0x800, 0], strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B"> kernel <[3, 3]> padding <0, 1, 1, 1> weights [#ethosu.address_range<0, 0x50, 928>] biases [#ethosu.address_range<0, 0, 80>] block <8, 16, 8> traversal depth_first activation <none_or_relu, min 0.0> name "conv1_s1"
  ethosu.conv2d ifm <i8, region 1, shape [10, 16, 8], tiles [4, 4, 16 | 0xb00, 0, 0x800, 0], strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B"> ofm <i8, region 1, shape [9, 16, 8], at 0x1080, strides [128, 8, 1], layout nhwc, quant 0.1:2, name "C"> kernel <[3, 3]> padding <0, 1, 1, 1> weights [#ethosu.address_range<1, 0x1550, 928>] biases [#ethosu.address_range<1, 0x1500, 80>] block <8, 16, 8> traversal depth_first activation <none_or_relu, min 0.0> name "conv2_s1"
}

// CHECK: ethosu.command_stream "ethos-u55-128" {
// CHECK-NEXT: ethosu.dma src <0, 0x3f0, 1008> dest <1, 0x1500, 1008> name "dma_w2"
// CHECK-NEXT: ethosu.conv2d ifm <i8, region 1, shape [9, 16, 8], at 0, strides [128, 8, 1], layout nhwc, quant 0.05:-3, name "A"> ofm <i8, region 1, shape [8, 16, 8], at 0x800, strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B"> kernel <[3, 3]> padding <1, 1, 0, 1> weights [#ethosu.address_range<0, 0x50, 928>] biases [#ethosu.address_range<0, 0, 80>] block <8, 16, 8> traversal depth_first activation <none_or_relu, min 0.0> name "conv1_s0"
// CHECK-NEXT: ethosu.conv2d ifm <i8, region 1, shape [8, 16, 8], at 0x800, strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B"> ofm <i8, region 1, shape [7, 16, 8], at 0xd00, strides [128, 8, 1], layout nhwc, quant 0.1:2, name "C"> kernel <[3, 3]> padding <1, 1, 0, 1> weights [#ethosu.address_range<1, 0x1550, 928>] biases [#ethosu.address_range<1, 0x1500, 80>] block <8, 16, 8> traversal depth_first activation <none_or_relu, min 0.0> name "conv2_s0"
// CHECK-NEXT: ethosu.conv2d ifm <i8, region 1, shape [9, 16, 8], at 0x380, strides [128, 8, 1], layout nhwc, quant 0.05:-3, name "A"> ofm <i8, region 1, shape [8, 16, 8], tiles [2, 2, 16 | 0xc00, 0, 0x800, 0], strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B"> kernel <[3, 3]> padding <0, 1, 1, 1> weights [#ethosu.address_range<0, 0x50, 928>] biases [#ethosu.address_range<0, 0, 80>] block <8, 16, 8> traversal depth_first activation <none_or_relu, min 0.0> name "conv1_s1"
// CHECK-NEXT: ethosu.conv2d ifm <i8, region 1, shape [10, 16, 8], tiles [4, 4, 16 | 0xb00, 0, 0x800, 0], strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B"> ofm <i8, region 1, shape [9, 16, 8], at 0x1080, strides [128, 8, 1], layout nhwc, quant 0.1:2, name "C"> kernel <[3, 3]> padding <0, 1, 1, 1> weights [#ethosu.address_range<1, 0x1550, 928>] biases [#ethosu.address_range<1, 0x1500, 80>] block <8, 16, 8> traversal depth_first activation <none_or_relu, min 0.0> name "conv2_s1"
// CHECK-NEXT: }
// CHECK-GENERIC: "ethosu.command_stream"() <{accelerator = "ethos-u55-128"}> ({
// CHECK-GENERIC-NEXT: "ethosu.dma"() <{src = #ethosu.address_range<0, 0x3f0, 1008>, dest = #ethosu.address_range<1, 0x1500, 1008>, debug_name = "dma_w2"}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.conv2d"() <{ifm = #ethosu.fm<i8, region 1, shape [9, 16, 8], at 0, strides [128, 8, 1], layout nhwc, quant 0.05:-3, name "A">, ofm = #ethosu.fm<i8, region 1, shape [8, 16, 8], at 0x800, strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B">, kernel = #ethosu.kernel<[3, 3]>, padding = #ethosu.padding<1, 1, 0, 1>, weights = [#ethosu.address_range<0, 0x50, 928>], biases = [#ethosu.address_range<0, 0, 80>], block_config = #ethosu.shape<8, 16, 8>, block_traversal = #ethosu<traversal depth_first>, activation = #ethosu.activation<none_or_relu, min 0.0>, debug_name = "conv1_s0"}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.conv2d"() <{ifm = #ethosu.fm<i8, region 1, shape [8, 16, 8], at 0x800, strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B">, ofm = #ethosu.fm<i8, region 1, shape [7, 16, 8], at 0xd00, strides [128, 8, 1], layout nhwc, quant 0.1:2, name "C">, kernel = #ethosu.kernel<[3, 3]>, padding = #ethosu.padding<1, 1, 0, 1>, weights = [#ethosu.address_range<1, 0x1550, 928>], biases = [#ethosu.address_range<1, 0x1500, 80>], block_config = #ethosu.shape<8, 16, 8>, block_traversal = #ethosu<traversal depth_first>, activation = #ethosu.activation<none_or_relu, min 0.0>, debug_name = "conv2_s0"}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.conv2d"() <{ifm = #ethosu.fm<i8, region 1, shape [9, 16, 8], at 0x380, strides [128, 8, 1], layout nhwc, quant 0.05:-3, name "A">, ofm = #ethosu.fm<i8, region 1, shape [8, 16, 8], tiles [2, 2, 16 | 0xc00, 0, 0x800, 0], strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B">, kernel = #ethosu.kernel<[3, 3]>, padding = #ethosu.padding<0, 1, 1, 1>, weights = [#ethosu.address_range<0, 0x50, 928>], biases = [#ethosu.address_range<0, 0, 80>], block_config = #ethosu.shape<8, 16, 8>, block_traversal = #ethosu<traversal depth_first>, activation = #ethosu.activation<none_or_relu, min 0.0>, debug_name = "conv1_s1"}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.conv2d"() <{ifm = #ethosu.fm<i8, region 1, shape [10, 16, 8], tiles [4, 4, 16 | 0xb00, 0, 0x800, 0], strides [128, 8, 1], layout nhwc, quant 0.08:1, name "B">, ofm = #ethosu.fm<i8, region 1, shape [9, 16, 8], at 0x1080, strides [128, 8, 1], layout nhwc, quant 0.1:2, name "C">, kernel = #ethosu.kernel<[3, 3]>, padding = #ethosu.padding<0, 1, 1, 1>, weights = [#ethosu.address_range<1, 0x1550, 928>], biases = [#ethosu.address_range<1, 0x1500, 80>], block_config = #ethosu.shape<8, 16, 8>, block_traversal = #ethosu<traversal depth_first>, activation = #ethosu.activation<none_or_relu, min 0.0>, debug_name = "conv2_s1"}> : () -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

// Command streams: empty, with Vela system config, memory mode and an attribute dictionary.
// DMA: defaults left out; channel, mode, SHRAM destination and discardable attributes kept.

ethosu.command_stream "ethos-u55-32" {
}
ethosu.command_stream "ethos-u65-512" system_config "Ethos_U65_High_End" memory_mode "Dedicated_Sram" attributes {cascade.note = "lut"} {
  ethosu.dma src <0, 0x100, 2048> dest <shram, 0x800, 2048> channel 0 mode 0
  ethosu.dma src <2, 0x100, 64> dest <7, 0xfffff0, 64> channel 1 mode 1 {cascade.tag}
}

// CHECK: ethosu.command_stream "ethos-u55-32" {
// CHECK-NEXT: }
// CHECK-NEXT: ethosu.command_stream "ethos-u65-512" system_config "Ethos_U65_High_End" memory_mode "Dedicated_Sram" attributes {cascade.note = "lut"} {
// CHECK-NEXT: ethosu.dma src <0, 0x100, 2048> dest <shram, 0x800, 2048>
// CHECK-NEXT: ethosu.dma src <2, 0x100, 64> dest <7, 0xfffff0, 64> channel 1 mode 1 {cascade.tag}
// CHECK-NEXT: }
// CHECK-GENERIC: "ethosu.command_stream"() <{accelerator = "ethos-u55-32"}> ({
// CHECK-GENERIC-NEXT: ^bb0:
// CHECK-GENERIC-NEXT: }) : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.command_stream"() <{accelerator = "ethos-u65-512", system_config = "Ethos_U65_High_End", memory_mode = "Dedicated_Sram"}> ({
// CHECK-GENERIC-NEXT: "ethosu.dma"() <{src = #ethosu.address_range<0, 0x100, 2048>, dest = #ethosu.address_range<shram, 0x800, 2048>, channel = 0 : i64, mode = 0 : i64}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.dma"() <{src = #ethosu.address_range<2, 0x100, 64>, dest = #ethosu.address_range<7, 0xfffff0, 64>, channel = 1 : i64, mode = 1 : i64}> {cascade.tag} : () -> ()
// CHECK-GENERIC-NEXT: }) {cascade.note = "lut"} : () -> ()

// -----

// conv2d with every option; two cores (Ethos-U65-512) take one weight and bias range each.
// The 1-tile IFM with height_1 = 0 is not the canonical single tile, so it prints `tiles`.

ethosu.command_stream "ethos-u65-512" {
  ethosu.conv2d ifm <u8, region 2, shape [4, 5, 32], tiles [4, 0, 5 | 0x40, 0, 0, 0], strides [160, 32, 1], layout nhwc, quant 0.0078125:128> ofm <i16, region 3, shape [2, 3, 16], at 0x200, layout nhcwb16, quant 2.5e-05:0> kernel <[3, 2], stride [2, 2], dilation [1, 2]> padding <1, 0, 1, 2> weights [#ethosu.address_range<0, 0x100, 512>, #ethosu.address_range<0, 0x300, 496>] biases [#ethosu.address_range<0, 0, 96>, #ethosu.address_range<0, 0x60, 96>] block <2, 4, 16> traversal part_kernel_first activation <tanh> rounding truncate upscale transpose accumulator int32 fused_quantize name "every_option"
  ethosu.conv2d ifm <i32, region 1, shape [1, 1, 64], at 0x1000, layout nhwc> ofm <i8, region 1, shape [1, 1, 10], tiles [1, 1, 1 | 0x2000, 0x2000, 0x2000, 0x2000], layout nhwc, quant none:-128> kernel <[1, 1]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0, 640>] biases [#ethosu.address_range<0, 0x280, 112>] block <2, 2, 16> traversal depth_first activation <none_or_relu, min -1.5, max 6.0>
}

// CHECK: ethosu.command_stream "ethos-u65-512" {
// CHECK-NEXT: ethosu.conv2d ifm <u8, region 2, shape [4, 5, 32], tiles [4, 0, 5 | 0x40, 0, 0, 0], strides [160, 32, 1], layout nhwc, quant 0.0078125:128> ofm <i16, region 3, shape [2, 3, 16], at 0x200, layout nhcwb16, quant 2.5e-05:0> kernel <[3, 2], stride [2, 2], dilation [1, 2]> padding <1, 0, 1, 2> weights [#ethosu.address_range<0, 0x100, 512>, #ethosu.address_range<0, 0x300, 496>] biases [#ethosu.address_range<0, 0, 96>, #ethosu.address_range<0, 0x60, 96>] block <2, 4, 16> traversal part_kernel_first activation <tanh> rounding truncate upscale transpose accumulator int32 fused_quantize name "every_option"
// CHECK-NEXT: ethosu.conv2d ifm <i32, region 1, shape [1, 1, 64], at 0x1000, layout nhwc> ofm <i8, region 1, shape [1, 1, 10], tiles [1, 1, 1 | 0x2000, 0x2000, 0x2000, 0x2000], layout nhwc, quant none:-128> kernel <[1, 1]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0, 640>] biases [#ethosu.address_range<0, 0x280, 112>] block <2, 2, 16> traversal depth_first activation <none_or_relu, min -1.5, max 6.0>
// CHECK-NEXT: }
// CHECK-GENERIC: "ethosu.command_stream"() <{accelerator = "ethos-u65-512"}> ({
// CHECK-GENERIC-NEXT: "ethosu.conv2d"() <{ifm = #ethosu.fm<u8, region 2, shape [4, 5, 32], tiles [4, 0, 5 | 0x40, 0, 0, 0], strides [160, 32, 1], layout nhwc, quant 0.0078125:128>, ofm = #ethosu.fm<i16, region 3, shape [2, 3, 16], at 0x200, layout nhcwb16, quant 2.5e-05:0>, kernel = #ethosu.kernel<[3, 2], stride [2, 2], dilation [1, 2]>, padding = #ethosu.padding<1, 0, 1, 2>, weights = [#ethosu.address_range<0, 0x100, 512>, #ethosu.address_range<0, 0x300, 496>], biases = [#ethosu.address_range<0, 0, 96>, #ethosu.address_range<0, 0x60, 96>], block_config = #ethosu.shape<2, 4, 16>, block_traversal = #ethosu<traversal part_kernel_first>, activation = #ethosu.activation<tanh>, rounding_mode = #ethosu<rounding truncate>, ifm_upscale = #ethosu<upscale transpose>, accumulator_type = #ethosu<accumulator int32>, fused_quantize, debug_name = "every_option"}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.conv2d"() <{ifm = #ethosu.fm<i32, region 1, shape [1, 1, 64], at 0x1000, layout nhwc>, ofm = #ethosu.fm<i8, region 1, shape [1, 1, 10], tiles [1, 1, 1 | 0x2000, 0x2000, 0x2000, 0x2000], layout nhwc, quant none:-128>, kernel = #ethosu.kernel<[1, 1]>, padding = #ethosu.padding<0, 0, 0, 0>, weights = [#ethosu.address_range<0, 0, 640>], biases = [#ethosu.address_range<0, 0x280, 112>], block_config = #ethosu.shape<2, 2, 16>, block_traversal = #ethosu<traversal depth_first>, activation = #ethosu.activation<none_or_relu, min -1.5, max 6.0>}> : () -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

// depthwise_conv2d: the depth_first traversal is the default and is left out when printed.

ethosu.command_stream "ethos-u55-256" {
  ethosu.depthwise_conv2d ifm <i8, region 1, shape [18, 18, 16], at 0, layout nhcwb16, quant 0.5:0> ofm <i8, region 1, shape [16, 16, 16], at 0x1800, layout nhcwb16, quant 0.5:0> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 160>] biases [#ethosu.address_range<0, 0, 160>] block <8, 16, 16> traversal depth_first activation <sigmoid>
  ethosu.depthwise_conv2d ifm <i16, region 1, shape [9, 9, 8], at 0, layout nhwc> ofm <i16, region 1, shape [5, 5, 8], at 0x800, layout nhwc> kernel <[5, 5], stride [2, 2], dilation [2, 2]> padding <4, 4, 4, 4> weights [#ethosu.address_range<0, 0x100, 256>] biases [#ethosu.address_range<0, 0, 80>] block <6, 6, 8> rounding natural
}

// CHECK: ethosu.command_stream "ethos-u55-256" {
// CHECK-NEXT: ethosu.depthwise_conv2d ifm <i8, region 1, shape [18, 18, 16], at 0, layout nhcwb16, quant 0.5:0> ofm <i8, region 1, shape [16, 16, 16], at 0x1800, layout nhcwb16, quant 0.5:0> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 160>] biases [#ethosu.address_range<0, 0, 160>] block <8, 16, 16> activation <sigmoid>
// CHECK-NEXT: ethosu.depthwise_conv2d ifm <i16, region 1, shape [9, 9, 8], at 0, layout nhwc> ofm <i16, region 1, shape [5, 5, 8], at 0x800, layout nhwc> kernel <[5, 5], stride [2, 2], dilation [2, 2]> padding <4, 4, 4, 4> weights [#ethosu.address_range<0, 0x100, 256>] biases [#ethosu.address_range<0, 0, 80>] block <6, 6, 8> rounding natural
// CHECK-NEXT: }
// CHECK-GENERIC: "ethosu.command_stream"() <{accelerator = "ethos-u55-256"}> ({
// CHECK-GENERIC-NEXT: "ethosu.depthwise_conv2d"() <{ifm = #ethosu.fm<i8, region 1, shape [18, 18, 16], at 0, layout nhcwb16, quant 0.5:0>, ofm = #ethosu.fm<i8, region 1, shape [16, 16, 16], at 0x1800, layout nhcwb16, quant 0.5:0>, kernel = #ethosu.kernel<[3, 3]>, padding = #ethosu.padding<0, 0, 0, 0>, weights = [#ethosu.address_range<0, 0x100, 160>], biases = [#ethosu.address_range<0, 0, 160>], block_config = #ethosu.shape<8, 16, 16>, block_traversal = #ethosu<traversal depth_first>, activation = #ethosu.activation<sigmoid>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.depthwise_conv2d"() <{ifm = #ethosu.fm<i16, region 1, shape [9, 9, 8], at 0, layout nhwc>, ofm = #ethosu.fm<i16, region 1, shape [5, 5, 8], at 0x800, layout nhwc>, kernel = #ethosu.kernel<[5, 5], stride [2, 2], dilation [2, 2]>, padding = #ethosu.padding<4, 4, 4, 4>, weights = [#ethosu.address_range<0, 0x100, 256>], biases = [#ethosu.address_range<0, 0, 80>], block_config = #ethosu.shape<6, 6, 8>, rounding_mode = #ethosu<rounding natural>}> : () -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

// pooling: max, average with an output rescale, reduce_sum (Vela scales its OFM by the IFM and OFM quantization).

ethosu.command_stream "ethos-u55-64" {
  ethosu.pooling max ifm <i8, region 1, shape [16, 16, 8], at 0, layout nhwc, quant 0.25:-1> ofm <i8, region 1, shape [8, 8, 8], at 0x800, layout nhwc, quant 0.25:-1> kernel <[2, 2], stride [2, 2]> padding <0, 0, 0, 0> block <8, 8, 8>
  ethosu.pooling average ifm <i8, region 1, shape [4, 4, 8], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 8], at 0x200, layout nhwc> kernel <[2, 2]> padding <0, 0, 1, 1> block <8, 8, 8> rescale 0.25 activation <none_or_relu, max 6.0> upscale nearest
  ethosu.pooling reduce_sum ifm <i32, region 1, shape [1, 64, 16], at 0, layout nhwc, quant 1.0:0> ofm <i32, region 1, shape [1, 64, 1], at 0x1000, layout nhwc, quant 1.0:0> kernel <[1, 1]> padding <0, 0, 0, 0> block <1, 64, 8> accumulator int40
}

// CHECK: ethosu.command_stream "ethos-u55-64" {
// CHECK-NEXT: ethosu.pooling max ifm <i8, region 1, shape [16, 16, 8], at 0, layout nhwc, quant 0.25:-1> ofm <i8, region 1, shape [8, 8, 8], at 0x800, layout nhwc, quant 0.25:-1> kernel <[2, 2], stride [2, 2]> padding <0, 0, 0, 0> block <8, 8, 8>
// CHECK-NEXT: ethosu.pooling average ifm <i8, region 1, shape [4, 4, 8], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 8], at 0x200, layout nhwc> kernel <[2, 2]> padding <0, 0, 1, 1> block <8, 8, 8> rescale 2.500000e-01 activation <none_or_relu, max 6.0> upscale nearest
// CHECK-NEXT: ethosu.pooling reduce_sum ifm <i32, region 1, shape [1, 64, 16], at 0, layout nhwc, quant 1.0:0> ofm <i32, region 1, shape [1, 64, 1], at 0x1000, layout nhwc, quant 1.0:0> kernel <[1, 1]> padding <0, 0, 0, 0> block <1, 64, 8> accumulator int40
// CHECK-NEXT: }
// CHECK-GENERIC: "ethosu.command_stream"() <{accelerator = "ethos-u55-64"}> ({
// CHECK-GENERIC-NEXT: "ethosu.pooling"() <{kind = #ethosu<pooling_kind max>, ifm = #ethosu.fm<i8, region 1, shape [16, 16, 8], at 0, layout nhwc, quant 0.25:-1>, ofm = #ethosu.fm<i8, region 1, shape [8, 8, 8], at 0x800, layout nhwc, quant 0.25:-1>, kernel = #ethosu.kernel<[2, 2], stride [2, 2]>, padding = #ethosu.padding<0, 0, 0, 0>, block_config = #ethosu.shape<8, 8, 8>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.pooling"() <{kind = #ethosu<pooling_kind average>, ifm = #ethosu.fm<i8, region 1, shape [4, 4, 8], at 0, layout nhwc>, ofm = #ethosu.fm<i8, region 1, shape [8, 8, 8], at 0x200, layout nhwc>, kernel = #ethosu.kernel<[2, 2]>, padding = #ethosu.padding<0, 0, 1, 1>, block_config = #ethosu.shape<8, 8, 8>, rescale = 2.500000e-01 : f64, activation = #ethosu.activation<none_or_relu, max 6.0>, ifm_upscale = #ethosu<upscale nearest>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.pooling"() <{kind = #ethosu<pooling_kind reduce_sum>, ifm = #ethosu.fm<i32, region 1, shape [1, 64, 16], at 0, layout nhwc, quant 1.0:0>, ofm = #ethosu.fm<i32, region 1, shape [1, 64, 1], at 0x1000, layout nhwc, quant 1.0:0>, kernel = #ethosu.kernel<[1, 1]>, padding = #ethosu.padding<0, 0, 0, 0>, block_config = #ethosu.shape<1, 64, 8>, accumulator_type = #ethosu<accumulator int40>}> : () -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

// elementwise: binary kinds read an IFM2 feature map or a scalar; abs, lrelu, clz are unary.

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise add ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0> ifm2 <i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc, quant 0.25:3> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc, quant 0.5:0> block <8, 8, 16>
  ethosu.elementwise sub ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ifm2 <i8, region 1, shape [1, 1, 16], at 0x400, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16> reversed_operands rescale [1073741824, 30]
  ethosu.elementwise mul ifm <i16, region 1, shape [8, 8, 16], at 0, layout nhwc> scalar <-2.0, i16, quant 0.5:0> ofm <i16, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16> rescale [3, 4]
  ethosu.elementwise min ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> scalar <127.0, i8> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16>
  ethosu.elementwise max ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ifm2 <i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16> activation <table_lookup, index 7>
  ethosu.elementwise shr ifm <i32, region 1, shape [8, 8, 16], at 0, layout nhwc> scalar <3.0, i32> ofm <i32, region 1, shape [8, 8, 16], at 0x2000, layout nhwc> block <8, 8, 16>
  ethosu.elementwise shl ifm <i32, region 1, shape [8, 8, 16], at 0, layout nhwc> ifm2 <i32, region 1, shape [8, 8, 16], at 0x1000, layout nhwc> ofm <i32, region 1, shape [8, 8, 16], at 0x2000, layout nhwc> block <8, 8, 16>
  ethosu.elementwise abs ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc, quant 0.5:0> block <8, 8, 16>
  ethosu.elementwise lrelu ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc, quant 0.1:0> block <8, 8, 16>
  ethosu.elementwise clz ifm <i32, region 1, shape [8, 8, 16], at 0, layout nhwc> ofm <i32, region 1, shape [8, 8, 16], at 0x2000, layout nhwc> block <8, 8, 16>
}

// CHECK: ethosu.command_stream "ethos-u55-128" {
// CHECK-NEXT: ethosu.elementwise add ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0> ifm2 <i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc, quant 0.25:3> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc, quant 0.5:0> block <8, 8, 16>
// CHECK-NEXT: ethosu.elementwise sub ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ifm2 <i8, region 1, shape [1, 1, 16], at 0x400, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16> reversed_operands rescale [1073741824, 30]
// CHECK-NEXT: ethosu.elementwise mul ifm <i16, region 1, shape [8, 8, 16], at 0, layout nhwc> scalar <-2.0, i16, quant 0.5:0> ofm <i16, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16> rescale [3, 4]
// CHECK-NEXT: ethosu.elementwise min ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> scalar <127.0, i8> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16>
// CHECK-NEXT: ethosu.elementwise max ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ifm2 <i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16> activation <table_lookup, index 7>
// CHECK-NEXT: ethosu.elementwise shr ifm <i32, region 1, shape [8, 8, 16], at 0, layout nhwc> scalar <3.0, i32> ofm <i32, region 1, shape [8, 8, 16], at 0x2000, layout nhwc> block <8, 8, 16>
// CHECK-NEXT: ethosu.elementwise shl ifm <i32, region 1, shape [8, 8, 16], at 0, layout nhwc> ifm2 <i32, region 1, shape [8, 8, 16], at 0x1000, layout nhwc> ofm <i32, region 1, shape [8, 8, 16], at 0x2000, layout nhwc> block <8, 8, 16>
// CHECK-NEXT: ethosu.elementwise abs ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc, quant 0.5:0> block <8, 8, 16>
// CHECK-NEXT: ethosu.elementwise lrelu ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc, quant 0.1:0> block <8, 8, 16>
// CHECK-NEXT: ethosu.elementwise clz ifm <i32, region 1, shape [8, 8, 16], at 0, layout nhwc> ofm <i32, region 1, shape [8, 8, 16], at 0x2000, layout nhwc> block <8, 8, 16>
// CHECK-NEXT: }
// CHECK-GENERIC: "ethosu.command_stream"() <{accelerator = "ethos-u55-128"}> ({
// CHECK-GENERIC-NEXT: "ethosu.elementwise"() <{kind = #ethosu<elementwise_kind add>, ifm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0>, ifm2 = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc, quant 0.25:3>, ofm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc, quant 0.5:0>, block_config = #ethosu.shape<8, 8, 16>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.elementwise"() <{kind = #ethosu<elementwise_kind sub>, ifm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0, layout nhwc>, ifm2 = #ethosu.fm<i8, region 1, shape [1, 1, 16], at 0x400, layout nhwc>, ofm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc>, block_config = #ethosu.shape<8, 8, 16>, reversed_operands, rescale = array<i64: 1073741824, 30>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.elementwise"() <{kind = #ethosu<elementwise_kind mul>, ifm = #ethosu.fm<i16, region 1, shape [8, 8, 16], at 0, layout nhwc>, ifm2_scalar = #ethosu.scalar<-2.0, i16, quant 0.5:0>, ofm = #ethosu.fm<i16, region 1, shape [8, 8, 16], at 0x800, layout nhwc>, block_config = #ethosu.shape<8, 8, 16>, rescale = array<i64: 3, 4>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.elementwise"() <{kind = #ethosu<elementwise_kind min>, ifm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0, layout nhwc>, ifm2_scalar = #ethosu.scalar<127.0, i8>, ofm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc>, block_config = #ethosu.shape<8, 8, 16>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.elementwise"() <{kind = #ethosu<elementwise_kind max>, ifm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0, layout nhwc>, ifm2 = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc>, ofm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc>, block_config = #ethosu.shape<8, 8, 16>, activation = #ethosu.activation<table_lookup, index 7>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.elementwise"() <{kind = #ethosu<elementwise_kind shr>, ifm = #ethosu.fm<i32, region 1, shape [8, 8, 16], at 0, layout nhwc>, ifm2_scalar = #ethosu.scalar<3.0, i32>, ofm = #ethosu.fm<i32, region 1, shape [8, 8, 16], at 0x2000, layout nhwc>, block_config = #ethosu.shape<8, 8, 16>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.elementwise"() <{kind = #ethosu<elementwise_kind shl>, ifm = #ethosu.fm<i32, region 1, shape [8, 8, 16], at 0, layout nhwc>, ifm2 = #ethosu.fm<i32, region 1, shape [8, 8, 16], at 0x1000, layout nhwc>, ofm = #ethosu.fm<i32, region 1, shape [8, 8, 16], at 0x2000, layout nhwc>, block_config = #ethosu.shape<8, 8, 16>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.elementwise"() <{kind = #ethosu<elementwise_kind abs>, ifm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0>, ofm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc, quant 0.5:0>, block_config = #ethosu.shape<8, 8, 16>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.elementwise"() <{kind = #ethosu<elementwise_kind lrelu>, ifm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0>, ofm = #ethosu.fm<i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc, quant 0.1:0>, block_config = #ethosu.shape<8, 8, 16>}> : () -> ()
// CHECK-GENERIC-NEXT: "ethosu.elementwise"() <{kind = #ethosu<elementwise_kind clz>, ifm = #ethosu.fm<i32, region 1, shape [8, 8, 16], at 0, layout nhwc>, ofm = #ethosu.fm<i32, region 1, shape [8, 8, 16], at 0x2000, layout nhwc>, block_config = #ethosu.shape<8, 8, 16>}> : () -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

// Every attribute in its standalone form, fields in a non-canonical order where allowed.

"test.op"() {
  shape = #ethosu.shape<16, 16, 8>,
  padding = #ethosu.padding<1, 2, 3, 4>,
  range = #ethosu.address_range<7, 4096, 16>,
  shram = #ethosu.address_range<shram, 0, 2048>,
  kernel = #ethosu.kernel<[3, 3]>,
  kernel_strided = #ethosu.kernel<[1, 7], dilation [2, 1], stride [3, 1]>,
  tiles = #ethosu.tiles<2, 2, 16 | 3072, 0, 2048, 0>,
  quant = #ethosu.quant<0.5:-3>,
  quant_int_scale = #ethosu.quant<2:5>,
  quant_no_scale = #ethosu.quant<none:0>,
  relu6 = #ethosu.activation<none_or_relu, max 6, min 0>,
  tanh = #ethosu.activation<tanh>,
  lut = #ethosu.activation<table_lookup, index 2, min -1.0e+01>,
  scalar = #ethosu.scalar<1, u8>,
  scalar_quant = #ethosu.scalar<0.1, i16, quant 0.001:0>,
  fm = #ethosu.fm<u16, layout nhcwb16, shape [2, 3, 20], region 0, at 0x10, quant none:7, strides [96, 32, 48], name "x \"quoted\"">,
  fm_tiles = #ethosu.fm<i32, region 5, shape [6, 8, 4], tiles [2, 3, 5 | 0x100, 0x200, 0x300, 0x400], layout nhwc>,
  data_type = #ethosu<data_type u16>,
  layout = #ethosu<layout nhcwb16>,
  rounding = #ethosu<rounding natural>,
  traversal = #ethosu<traversal part_kernel_first>,
  upscale = #ethosu<upscale transpose>,
  accumulator = #ethosu<accumulator default>,
  pooling_kind = #ethosu<pooling_kind reduce_sum>,
  elementwise_kind = #ethosu<elementwise_kind lrelu>,
  activation_kind = #ethosu<activation_kind table_lookup>
} : () -> ()

// CHECK: "test.op"() {shape = #ethosu.shape<16, 16, 8>, padding = #ethosu.padding<1, 2, 3, 4>, range = #ethosu.address_range<7, 0x1000, 16>, shram = #ethosu.address_range<shram, 0, 2048>, kernel = #ethosu.kernel<[3, 3]>, kernel_strided = #ethosu.kernel<[1, 7], stride [3, 1], dilation [2, 1]>, tiles = #ethosu.tiles<2, 2, 16 | 0xc00, 0, 0x800, 0>, quant = #ethosu.quant<0.5:-3>, quant_int_scale = #ethosu.quant<2.0:5>, quant_no_scale = #ethosu.quant<none:0>, relu6 = #ethosu.activation<none_or_relu, min 0.0, max 6.0>, tanh = #ethosu.activation<tanh>, lut = #ethosu.activation<table_lookup, index 2, min -10.0>, scalar = #ethosu.scalar<1.0, u8>, scalar_quant = #ethosu.scalar<0.1, i16, quant 0.001:0>, fm = #ethosu.fm<u16, region 0, shape [2, 3, 20], at 0x10, strides [96, 32, 48], layout nhcwb16, quant none:7, name "x \22quoted\22">, fm_tiles = #ethosu.fm<i32, region 5, shape [6, 8, 4], tiles [2, 3, 5 | 0x100, 0x200, 0x300, 0x400], layout nhwc>, data_type = #ethosu<data_type u16>, layout = #ethosu<layout nhcwb16>, rounding = #ethosu<rounding natural>, traversal = #ethosu<traversal part_kernel_first>, upscale = #ethosu<upscale transpose>, accumulator = #ethosu<accumulator default>, pooling_kind = #ethosu<pooling_kind reduce_sum>, elementwise_kind = #ethosu<elementwise_kind lrelu>, activation_kind = #ethosu<activation_kind table_lookup>} : () -> ()
// CHECK-GENERIC: "test.op"() {shape = #ethosu.shape<16, 16, 8>, padding = #ethosu.padding<1, 2, 3, 4>, range = #ethosu.address_range<7, 0x1000, 16>, shram = #ethosu.address_range<shram, 0, 2048>, kernel = #ethosu.kernel<[3, 3]>, kernel_strided = #ethosu.kernel<[1, 7], stride [3, 1], dilation [2, 1]>, tiles = #ethosu.tiles<2, 2, 16 | 0xc00, 0, 0x800, 0>, quant = #ethosu.quant<0.5:-3>, quant_int_scale = #ethosu.quant<2.0:5>, quant_no_scale = #ethosu.quant<none:0>, relu6 = #ethosu.activation<none_or_relu, min 0.0, max 6.0>, tanh = #ethosu.activation<tanh>, lut = #ethosu.activation<table_lookup, index 2, min -10.0>, scalar = #ethosu.scalar<1.0, u8>, scalar_quant = #ethosu.scalar<0.1, i16, quant 0.001:0>, fm = #ethosu.fm<u16, region 0, shape [2, 3, 20], at 0x10, strides [96, 32, 48], layout nhcwb16, quant none:7, name "x \22quoted\22">, fm_tiles = #ethosu.fm<i32, region 5, shape [6, 8, 4], tiles [2, 3, 5 | 0x100, 0x200, 0x300, 0x400], layout nhwc>, data_type = #ethosu<data_type u16>, layout = #ethosu<layout nhcwb16>, rounding = #ethosu<rounding natural>, traversal = #ethosu<traversal part_kernel_first>, upscale = #ethosu<upscale transpose>, accumulator = #ethosu<accumulator default>, pooling_kind = #ethosu<pooling_kind reduce_sum>, elementwise_kind = #ethosu<elementwise_kind lrelu>, activation_kind = #ethosu<activation_kind table_lookup>} : () -> ()
