// RUN: cascade-opt %s --split-input-file --verify-diagnostics | filecheck %s --match-full-lines

// What Vela's register-stream generator cannot encode, rejected by the verifiers (one case per
// rule, each checking the exact message); without them the generator fails inside.

// Block configs: Vela's own SHRAM check (`get_arch_block_config`) for the stream's accelerator;
// the message names one that fits, as the lowering would pick it.

ethosu.command_stream "ethos-u55-256" {
  ethosu.depthwise_conv2d ifm <i8, region 1, shape [18, 18, 16], at 0, layout nhcwb16, quant 0.5:0> ofm <i8, region 1, shape [16, 16, 16], at 0x1800, layout nhcwb16, quant 0.5:0> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 160>] biases [#ethosu.address_range<0, 0, 160>] block <16, 16, 16> activation <sigmoid>
}
// CHECK: block config [16, 16, 16] does not fit the shared buffer (SHRAM) of ethos-u55-256 for this operation; [14, 14, 16] does

// -----

// Half the block fits, and that depends on the accelerator: the SHRAM of an Ethos-U55-128 is
// smaller than an Ethos-U55-256's.

ethosu.command_stream "ethos-u55-256" {
  ethosu.depthwise_conv2d ifm <i8, region 1, shape [18, 18, 16], at 0, layout nhcwb16, quant 0.5:0> ofm <i8, region 1, shape [16, 16, 16], at 0x1800, layout nhcwb16, quant 0.5:0> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 160>] biases [#ethosu.address_range<0, 0, 160>] block <8, 16, 16> activation <sigmoid>
}
// CHECK: builtin.module {
// CHECK-NEXT: ethosu.command_stream "ethos-u55-256" {

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.depthwise_conv2d ifm <i8, region 1, shape [18, 18, 16], at 0, layout nhcwb16, quant 0.5:0> ofm <i8, region 1, shape [16, 16, 16], at 0x1800, layout nhcwb16, quant 0.5:0> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 160>] biases [#ethosu.address_range<0, 0, 160>] block <8, 16, 16> activation <sigmoid>
}
// CHECK: block config [8, 16, 16] does not fit the shared buffer (SHRAM) of ethos-u55-128 for this operation; [14, 6, 16] does

// -----

ethosu.command_stream "ethos-u65-512" {
  ethosu.conv2d ifm <i32, region 1, shape [1, 1, 64], at 0x1000, layout nhwc> ofm <i8, region 1, shape [1, 1, 10], at 0x2000, layout nhwc, quant none:-128> kernel <[1, 1]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0, 640>] biases [#ethosu.address_range<0, 0x280, 112>] block <1, 1, 16> traversal depth_first
}
// CHECK: block config [1, 1, 16] is not a block ethos-u65-512 runs: blocks are multiples of [2, 2, 8] up to [32, 64, 128]; for this operation [2, 2, 16] does

// -----

// When Vela's `npu_find_block_configs` finds none (it skips odd heights on an Ethos-U55-128),
// the micro-block may still fit.

ethosu.command_stream "ethos-u55-128" {
  ethosu.conv2d ifm <i32, region 1, shape [15, 9, 24], at 0, layout nhcwb16, quant none:0> ofm <i16, region 1, shape [5, 2, 24], at 0x100000, layout nhcwb16, quant 0.5:1> kernel <[5, 5], stride [2, 2]> padding <1, 1, 1, 1> weights [#ethosu.address_range<0, 0x100, 160>] biases [#ethosu.address_range<0, 0, 160>] block <2, 2, 8> traversal depth_first activation <tanh>
}
// CHECK: block config [2, 2, 8] does not fit the shared buffer (SHRAM) of ethos-u55-128 for this operation; [1, 2, 8] does

// -----

// Quantization the generator reads: an average or reduce-sum pooling without padding gets one
// OFM scale, from the IFM and OFM quantization (unless it has a rescale).

ethosu.command_stream "ethos-u55-64" {
  ethosu.pooling reduce_sum ifm <i32, region 1, shape [1, 64, 16], at 0, layout nhwc> ofm <i32, region 1, shape [1, 64, 1], at 0x1000, layout nhwc> kernel <[1, 1]> padding <0, 0, 0, 0> block <1, 64, 8>
}
// CHECK: unpadded reduce_sum pooling needs IFM and OFM quantization, or a rescale, to scale its OFM

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.pooling average ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant none:0> ofm <i8, region 1, shape [4, 4, 16], at 0x400, layout nhwc, quant 0.0078125:0> kernel <[2, 2], stride [2, 2]> padding <0, 0, 0, 0> block <4, 4, 16> activation <tanh>
}
// CHECK: unpadded average pooling with tanh needs an IFM quantization scale

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.pooling average ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0> ofm <i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc, quant none:0> kernel <[1, 1]> padding <0, 0, 0, 0> block <8, 8, 16> fused_quantize
}
// CHECK: unpadded average pooling with fused_quantize needs IFM and OFM quantization scales

// -----

// A reduce-sum reads an nhwc IFM when it is i32, and always on the two cores of an Ethos-U65-512.

ethosu.command_stream "ethos-u55-128" {
  ethosu.pooling reduce_sum ifm <i32, region 1, shape [4, 8, 16], at 0, layout nhcwb16, quant none:0> ofm <i32, region 1, shape [4, 8, 1], at 0x1000, layout nhwc, quant none:0> kernel <[1, 1]> padding <0, 0, 0, 0> block <4, 8, 8>
}
// CHECK: reduce_sum pooling of an i32 IFM needs it in nhwc layout

// -----

ethosu.command_stream "ethos-u65-512" {
  ethosu.pooling reduce_sum ifm <i8, region 1, shape [4, 8, 16], at 0, layout nhcwb16, quant none:0> ofm <i32, region 1, shape [4, 8, 1], at 0x1000, layout nhwc, quant none:0> kernel <[1, 1]> padding <0, 0, 0, 0> block <4, 8, 8>
}
// CHECK: reduce_sum pooling on ethos-u65-512 needs an nhwc IFM

// -----

// Padded pooling has no OFM scale, so no quantization is needed.

ethosu.command_stream "ethos-u55-128" {
  ethosu.pooling average ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x400, layout nhwc> kernel <[3, 3]> padding <1, 1, 1, 1> block <8, 8, 16>
}
// CHECK: builtin.module {
// CHECK-NEXT: ethosu.command_stream "ethos-u55-128" {

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise lrelu ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16>
}
// CHECK: elementwise 'lrelu' needs an OFM quantization scale

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise add ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ifm2 <i8, region 1, shape [8, 4, 16], at 0x400, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16>
}
// CHECK: ifm2 shape [8, 4, 16] must equal the ifm shape [8, 8, 16] or be 1 where it differs (broadcast)

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise min ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> scalar <100.0, i8, quant 0.5:0> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> block <8, 8, 16>
}
// CHECK: scalar 100.0 quantizes outside the i8 range [-128, 127]

// -----

// Memory ranges: Vela checks every range against the region's address space, 2^32 bytes on
// Ethos-U55 and 2^40 on Ethos-U65, and the SHRAM size for LUT DMAs. The last byte of the
// address space may be used.

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise abs ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0> ofm <i8, region 1, shape [8, 8, 16], at 0xfffffc00, layout nhwc, quant 0.5:0> block <8, 8, 16>
}
// CHECK: builtin.module {
// CHECK-NEXT: ethosu.command_stream "ethos-u55-128" {

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.elementwise abs ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc, quant 0.5:0> ofm <i8, region 1, shape [8, 8, 16], at 0xfffffc10, layout nhwc, quant 0.5:0> block <8, 8, 16>
}
// CHECK: ofm ends at byte 0x100000010 of region 1, past the ethos-u55-128 address space (0x100000000 bytes)

// -----

ethosu.command_stream "ethos-u65-256" {
  ethosu.elementwise abs ifm <i8, region 1, shape [8, 8, 16], at 0x10000000000, layout nhwc, quant 0.5:0> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc, quant 0.5:0> block <8, 8, 16>
}
// CHECK: ifm ends at byte 0x10000000400 of region 1, past the ethos-u65-256 address space (0x10000000000 bytes)

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.conv2d ifm <i8, region 1, shape [1, 1, 16], at 0, layout nhwc> ofm <i8, region 1, shape [1, 1, 16], at 0x100, layout nhwc> kernel <[1, 1]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0xfffffff0, 256>] biases [#ethosu.address_range<0, 0, 160>] block <2, 2, 16> traversal depth_first
}
// CHECK: weight range ends at byte 0x1000000f0 of region 0, past the ethos-u55-128 address space (0x100000000 bytes)

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.dma src <0, 0xfffffff0, 32> dest <1, 0, 32>
}
// CHECK: dma source ends at byte 0x100000010 of region 0, past the ethos-u55-128 address space (0x100000000 bytes)

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.dma src <0, 0x100, 2048> dest <shram, 0x5c00, 2048>
}
// CHECK: dma destination ends at byte 0x6400 of SHRAM, past the ethos-u55-128 SHRAM (0x6000 bytes)

// -----

// Registers: sizes are programmed minus one in 16 bits, strides within the address space.

ethosu.command_stream "ethos-u55-128" {
  ethosu.pooling max ifm <i8, region 1, shape [1, 65537, 1], at 0, layout nhwc> ofm <i8, region 1, shape [1, 65537, 1], at 0x20000, layout nhwc> kernel <[1, 1]> padding <0, 0, 0, 0> block <1, 16, 8>
}
// CHECK: ifm shape [1, 65537, 1] exceeds 65536 in a dimension (the NPU's 16-bit size registers)

// -----

ethosu.command_stream "ethos-u55-128" {
  ethosu.pooling max ifm <i8, region 1, shape [1, 8, 16], at 0, strides [0x100000000, 16, 1], layout nhwc> ofm <i8, region 1, shape [1, 8, 16], at 0x800, layout nhwc> kernel <[1, 1]> padding <0, 0, 0, 0> block <2, 8, 16>
}
// CHECK: ifm strides [4294967296, 16, 1] exceed the 0x100000000-byte address space
