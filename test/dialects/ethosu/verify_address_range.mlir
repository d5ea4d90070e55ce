// A feature map past the end of the address space (2^32 bytes on an Ethos-U55) is a located
// verifier error, exit 1, for every tool that reads the IR: Vela's generator would refuse it
// with "Address offset out of range". (A fuzzed lowered program: an IFM depth of 2^63 - 1.)
// RUN: not cascade-opt %s -t ethosu-cs 2>&1 | filecheck %s
// RUN: not cascade-opt %s -t ethosu-tflite -o %t.tflite 2>&1 | filecheck %s
// RUN: not test -e %t.tflite
// RUN: not cascade-run %s 2>&1 | filecheck %s --check-prefix=EXEC

// CHECK:     {{.*}}verify_address_range.mlir:18:7: error: 'ethosu.pooling' op ifm ends at byte 0x7fffffffffffffff of region 1, past the ethos-u55-128 address space (0x100000000 bytes)
// CHECK-NOT: internal error
// CHECK-NOT: Traceback
// EXEC:      cascade-run: error: {{.*}}verify_address_range.mlir:18:7: 'ethosu.pooling' op ifm ends at byte 0x7fffffffffffffff of region 1, past the ethos-u55-128 address space (0x100000000 bytes)
// EXEC-NOT:  internal error

builtin.module {
  func.func @exact_scales(%x: tensor<1x4xi8> {cascade.placement = #cascade.placement<sram, 0, 16>, nn.quant = #nn.quant<0.1:0>}) -> tensor<1x4xi8> attributes {cascade.peak_sram_bytes = 32 : i64, cascade.cycles = 91 : i64, cascade.lower_bound_bytes = 32 : i64, cascade.accelerator = "ethos-u55-128", cascade.allocated_peak_bytes = 32 : i64, cascade.max_live_bytes = 32 : i64} {
    ethosu.command_stream "ethos-u55-128" attributes {ethosu.flash = array<i8>} {
      ethosu.pooling average ifm <i8, region 1, shape [1, 1, 9223372036854775807], at 0, strides [4, 4, 1], layout nhwc, quant 0.10000000149011612:0> ofm <i8, region 1, shape [1, 1, 4], at 0x10, strides [4, 4, 1], layout nhwc, quant 0.005524271728063468:3> kernel <[1, 1]> padding <0, 0, 0, 0> block <1, 2, 8> fused_quantize
    }
    %0 = builtin.unrealized_conversion_cast to tensor<1x4xi8> {cascade.placement = #cascade.placement<sram, 16, 16>, nn.quant = #nn.quant<0.005524271728063468 f64:3>}
    func.return %0 : tensor<1x4xi8>
  }
}

