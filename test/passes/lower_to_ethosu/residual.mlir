// lower-to-ethosu turns the allocated residual block (test/passes/rolling_buffer/residual.mlir:
// %y alone, then one stripe loop with three rolling buffers) into one ethosu.command_stream:
// per stripe, every operator's computed box, reading and writing SRAM (region 1) at the
// allocated offsets, the rolling buffers as wrapping tiles, constants in the stream's flash
// image (region 0). The loop writes its output rows over the rows of %y it has read (%y at
// 0x200, the output 2 rows of 256 bytes below it, at 0): stripe 0's add reads %y's row 0 and
// writes row 0 at 0, stripe 2's writes row 2 at 0x200, over %y's row 0.
// RUN: cascade-opt %S/../rolling_buffer/residual.mlir --cascade-plan='objective=min-sram accelerator=ethos-u55-128' \
// RUN:   --rolling-buffer --allocate-memory=accelerator=ethos-u55-128 --lower-to-ethosu=accelerator=ethos-u55-128 \
// RUN:   > %t.mlir
// RUN: filecheck %s < %t.mlir
// The lowered IR parses back.
// RUN: cascade-opt %t.mlir | filecheck %s
// Serialized by Vela and run by the functional model, it is bit-exact with the nn interpreter.
// RUN: %python -m cascade.passes.lower_to_ethosu %t.mlir %S/../rolling_buffer/residual.mlir --seed 3 \
// RUN:   | filecheck %s --check-prefix=EXEC

// CHECK:      func.func @residual(%x: tensor<1x16x8x4xi8> {cascade.placement = #cascade.placement<sram, [[X:[0-9]+]], 512>, nn.quant = #nn.quant<0.5:0>})
// CHECK-NOT:  cascade.for_stripes
// CHECK:        ethosu.command_stream "ethos-u55-128" attributes {ethosu.flash = array<i8:
// CHECK-NEXT:     ethosu.conv2d ifm <i8, region 1, shape [16, 8, 4], at 0, {{.*}} ofm <i8, region 1, shape [16, 8, 32], at 0x200,
// CHECK:          ethosu.elementwise add ifm <i8, region 1, shape [1, 8, 32], at 0x200, {{.*}} ofm <i8, region 1, shape [1, 8, 32], at 0, strides [256, 32, 1], layout nhwc
// CHECK:          ethosu.elementwise add ifm <i8, region 1, shape [1, 8, 32], at 0x300, {{.*}} ofm <i8, region 1, shape [1, 8, 32], at 0x100,
// CHECK:          ethosu.depthwise_conv2d ifm <i8, region 1, shape [3, 8, 32], tiles
// CHECK:          ethosu.elementwise add ifm <i8, region 1, shape [1, 8, 32], at 0x400, {{.*}} ofm <i8, region 1, shape [1, 8, 32], at 0x200,
// CHECK:        }
// CHECK-NEXT:   %{{.*}} = builtin.unrealized_conversion_cast to tensor<1x16x8x32xi8> {cascade.placement = #cascade.placement<sram, {{[0-9]+}}, {{[0-9]+}}>, nn.quant = #nn.quant<
// CHECK-NEXT:   func.return
// CHECK-NOT:  nn.

// EXEC:       npu commands: {{[1-9][0-9]*}} in 1 streams
// EXEC-NEXT:  bit-exact: 1/1 outputs
