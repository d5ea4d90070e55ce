// What the verifiers let through but Vela's generator refuses (here a DMA source that is not
// 16-byte aligned, which an Ethos-U55 needs) is reported as Vela's refusal of that command,
// on one line with its location, exit 1: not as an internal error, and no file is written.
// RUN: not cascade-opt %s -t ethosu-cs 2>&1 | filecheck %s
// RUN: not cascade-opt %s -t ethosu-cs{payload=true} 2>&1 | filecheck %s
// RUN: not cascade-opt %s -t ethosu-tflite -o %t.tflite 2>&1 | filecheck %s --check-prefix=TFLITE
// RUN: not test -e %t.tflite

// CHECK:      cascade-opt: error: ethosu-cs: {{.*}}serialize_vela_rejected.mlir:18:7: Vela rejected 'ethosu.dma' (command 0 of the stream): Unaligned Value: Cmd1 payload of size: 8 Bytes is not 16-byte aligned
// CHECK-NOT:  internal error
// CHECK-NOT:  Traceback
// TFLITE:     cascade-opt: error: ethosu-tflite: {{.*}}serialize_vela_rejected.mlir:18:7: Vela rejected 'ethosu.dma' (command 0 of the stream): Unaligned Value: Cmd1 payload of size: 8 Bytes is not 16-byte aligned
// TFLITE-NOT: internal error

builtin.module {
  func.func @exact_scales(%x: tensor<1x4xi8> {cascade.placement = #cascade.placement<sram, 0, 16>, nn.quant = #nn.quant<0.1:0>}) -> tensor<1x4xi8> attributes {cascade.peak_sram_bytes = 32 : i64, cascade.cycles = 91 : i64, cascade.lower_bound_bytes = 32 : i64, cascade.accelerator = "ethos-u55-128", cascade.allocated_peak_bytes = 32 : i64, cascade.max_live_bytes = 32 : i64} {
    ethosu.command_stream "ethos-u55-128" attributes {ethosu.flash = array<i8>} {
      ethosu.dma src <1, 0x8, 8> dest <1, 0x18, 8>
      ethosu.pooling average ifm <i8, region 1, shape [1, 1, 4], at 0, strides [4, 4, 1], layout nhwc, quant 0.10000000149011612:0> ofm <i8, region 1, shape [1, 1, 4], at 0x10, strides [4, 4, 1], layout nhwc, quant 0.005524271728063468:3> kernel <[1, 1]> padding <0, 0, 0, 0> block <1, 2, 8> fused_quantize
    }
    %0 = builtin.unrealized_conversion_cast to tensor<1x4xi8> {cascade.placement = #cascade.placement<sram, 16, 16>, nn.quant = #nn.quant<0.005524271728063468 f64:3>}
    func.return %0 : tensor<1x4xi8>
  }
}

