// A reduce-sum (or average) pooling without padding needs the IFM and OFM quantization that
// Vela's generator derives its OFM scale from: without them, a located verifier error, exit 1.
// (The pooling case of ops.mlir, as it stood: max and padded average need none.)
// RUN: not cascade-opt %s -t ethosu-cs 2>&1 | filecheck %s

// CHECK:     {{.*}}verify_pooling_quant.mlir:13:3: error: 'ethosu.pooling' op unpadded reduce_sum pooling needs IFM and OFM quantization, or a rescale, to scale its OFM
// CHECK-NOT: internal error
// CHECK-NOT: Traceback

ethosu.command_stream "ethos-u55-64" {
  ethosu.pooling max ifm <i8, region 1, shape [16, 16, 8], at 0, layout nhwc, quant 0.25:-1> ofm <i8, region 1, shape [8, 8, 8], at 0x800, layout nhwc, quant 0.25:-1> kernel <[2, 2], stride [2, 2]> padding <0, 0, 0, 0> block <8, 8, 8>
  ethosu.pooling average ifm <i8, region 1, shape [4, 4, 8], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 8], at 0x200, layout nhwc> kernel <[2, 2]> padding <0, 0, 1, 1> block <8, 8, 8> rescale 0.25 activation <none_or_relu, max 6.0> upscale nearest
  ethosu.pooling reduce_sum ifm <i32, region 1, shape [1, 64, 16], at 0, layout nhwc> ofm <i32, region 1, shape [1, 64, 1], at 0x1000, layout nhwc> kernel <[1, 1]> padding <0, 0, 0, 0> block <1, 64, 8> accumulator int40
}
