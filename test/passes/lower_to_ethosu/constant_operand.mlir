// An elementwise operator with a constant operand runs on the NPU, as in Vela: a constant of
// one value goes in the command (`scalar`), any other is read from the stream's constants
// (region 0) as a feature map, IFM2 when it broadcasts and IFM when the other operand does.
// The lowered program computes what LiteRT computes, and so does the deployable .tflite.
// REQUIRES: litert
// RUN: %python %S/Inputs/add_constant.py %t.channel.tflite channel
// RUN: cascade-opt %t.channel.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.channel.mlir
// RUN: filecheck %s --check-prefix=CHANNEL < %t.channel.mlir
// RUN: cascade-run %t.channel.mlir --seed 1 --compare-tflite %t.channel.tflite | filecheck %s --check-prefix=EXEC
// RUN: %python %S/Inputs/add_constant.py %t.scalar.tflite scalar
// RUN: cascade-opt %t.scalar.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.scalar.mlir
// RUN: filecheck %s --check-prefix=SCALAR < %t.scalar.mlir
// RUN: cascade-run %t.scalar.mlir --seed 1 --compare-tflite %t.scalar.tflite | filecheck %s --check-prefix=EXEC
// RUN: %python %S/Inputs/add_constant.py %t.full.tflite full
// RUN: cascade-opt %t.full.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.full.mlir
// RUN: filecheck %s --check-prefix=FULL < %t.full.mlir
// RUN: cascade-run %t.full.mlir --seed 1 --compare-tflite %t.full.tflite | filecheck %s --check-prefix=EXEC
// RUN: %python %S/Inputs/add_constant.py %t.rank.tflite rank
// RUN: cascade-opt %t.rank.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.rank.mlir
// RUN: filecheck %s --check-prefix=RANK < %t.rank.mlir
// RUN: cascade-run %t.rank.mlir --seed 1 --compare-tflite %t.rank.tflite | filecheck %s --check-prefix=EXEC

// The three bytes of the constant, then the stripes of the add reading them at 0 of region 0.
// CHANNEL-NOT: on_cpu
// CHANNEL: ethosu.command_stream "ethos-u55-128" attributes {ethosu.flash = array<i8: 1, 2, 3, 0,
// CHANNEL: ethosu.elementwise add ifm <i8, region 1, shape [8, 8, 3], {{.*}} ifm2 <i8, region 0, shape [1, 1, 3], at 0, strides [3, 3, 1], layout nhwc, quant 0.05{{[0-9]*}}:2>
// CHANNEL-NOT: on_cpu

// (37 - 2) * 0.05 = 1.75; the SUB computes c - y, so its constant is IFM2 reversed.
// SCALAR-NOT: on_cpu
// SCALAR: ethosu.elementwise add ifm <i8, {{.*}} scalar <1.75{{[0-9]*}}, i8, quant 0.05{{[0-9]*}}:2> ofm <{{[^>]*}}> block <{{[0-9, ]*}}>{{$}}
// SCALAR: ethosu.elementwise sub ifm <i8, {{.*}} scalar <1.75{{[0-9]*}}, i8, quant 0.05{{[0-9]*}}:2> ofm <{{[^>]*}}> block <{{[0-9, ]*}}> reversed_operands{{$}}
// SCALAR-NOT: on_cpu

// x broadcasts over nothing here, so the constant (first operand) stays the IFM.
// FULL-NOT: on_cpu
// FULL: ethosu.elementwise mul ifm <i8, region 0, shape [{{[0-9]+}}, 8, 3], {{.*}} layout nhwc, quant 0.03125:-3> ifm2 <i8, region 1,
// FULL-NOT: on_cpu

// A [3] and an [8, 1, 3] constant, imported as [1, 1, 1, 3] and [1, 8, 1, 3]: the ADD's bytes
// at 0, the MUL's 24 after them at 16 (0x10), each IFM2 broadcast along what it lacks.
// RANK-NOT: on_cpu
// RANK: ethosu.elementwise add {{.*}} ifm2 <i8, region 0, shape [1, 1, 3], at 0, strides [3, 3, 1], layout nhwc
// RANK: ethosu.elementwise mul {{.*}} ifm2 <i8, region 0, shape [8, 1, 3], at 0x10, strides [3, 3, 1], layout nhwc
// RANK-NOT: on_cpu

// EXEC: bit-exact: 1/1 tensors
