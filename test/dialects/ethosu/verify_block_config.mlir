// A block config that does not fit the accelerator's shared buffer is a located verifier
// error, exit 1 (Vela's generator would assert); the message names a block that fits.
// (The first command of the depthwise case of ops.mlir, as it stood.)
// RUN: not cascade-opt %s -t ethosu-cs 2>&1 | filecheck %s
// RUN: not cascade-opt %s 2>&1 | filecheck %s

// CHECK:     {{.*}}verify_block_config.mlir:12:3: error: 'ethosu.depthwise_conv2d' op block config [16, 16, 16] does not fit the shared buffer (SHRAM) of ethos-u55-256 for this operation; [14, 14, 16] does
// CHECK-NOT: internal error
// CHECK-NOT: Traceback

ethosu.command_stream "ethos-u55-256" {
  ethosu.depthwise_conv2d ifm <i8, region 1, shape [18, 18, 16], at 0, layout nhcwb16, quant 0.5:0> ofm <i8, region 1, shape [16, 16, 16], at 0x1800, layout nhcwb16, quant 0.5:0> kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 160>] biases [#ethosu.address_range<0, 0, 160>] block <16, 16, 16> traversal depth_first activation <sigmoid>
}
