// A block config that is not a multiple of the accelerator's micro-block (here 2x2x8 on the
// Ethos-U65-512) is a located verifier error, exit 1. (The conv2d case of ops.mlir, as it
// stood: its first command is valid, the second is not.)
// RUN: not cascade-opt %s -t ethosu-cs 2>&1 | filecheck %s

// CHECK:     {{.*}}verify_block_config_shape.mlir:12:3: error: 'ethosu.conv2d' op block config [1, 1, 16] is not a block ethos-u65-512 runs: blocks are multiples of [2, 2, 8] up to [32, 64, 128]; for this operation [2, 2, 16] does
// CHECK-NOT: internal error
// CHECK-NOT: Traceback

ethosu.command_stream "ethos-u65-512" {
  ethosu.conv2d ifm <u8, region 2, shape [4, 5, 32], tiles [4, 0, 5 | 0x40, 0, 0, 0], strides [160, 32, 1], layout nhwc, quant 0.0078125:128> ofm <i16, region 3, shape [2, 3, 16], at 0x200, layout nhcwb16, quant 2.5e-05:0> kernel <[3, 2], stride [2, 2], dilation [1, 2]> padding <1, 0, 1, 2> weights [#ethosu.address_range<0, 0x100, 512>, #ethosu.address_range<0, 0x300, 496>] biases [#ethosu.address_range<0, 0, 96>, #ethosu.address_range<0, 0x60, 96>] block <2, 4, 16> traversal part_kernel_first activation <tanh> rounding truncate upscale transpose accumulator int32 fused_quantize name "every_option"
  ethosu.conv2d ifm <i32, region 1, shape [1, 1, 64], at 0x1000, layout nhwc> ofm <i8, region 1, shape [1, 1, 10], tiles [1, 1, 1 | 0x2000, 0x2000, 0x2000, 0x2000], layout nhwc, quant none:-128> kernel <[1, 1]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0, 640>] biases [#ethosu.address_range<0, 0x280, 112>] block <1, 1, 16> traversal depth_first activation <none_or_relu, min -1.5, max 6.0>
}
