// The generic form of every ethosu command stream parses in upstream MLIR, and what upstream
// prints back parses, verifies and prints in cascade-opt as the same custom syntax. (Upstream
// sorts the attribute dictionary of the unregistered `test.op` holding the standalone
// attributes, so that line is compared attribute by attribute instead.)
// REQUIRES: iree-opt
// RUN: cascade-opt %S/../dialects/ethosu/ops.mlir --split-input-file > %t.direct.mlir
// RUN: cascade-opt %S/../dialects/ethosu/ops.mlir --split-input-file --print-op-generic \
// RUN:   | %mlir_opt --split-input-file --allow-unregistered-dialect --mlir-print-op-generic --mlir-print-local-scope \
// RUN:   | cascade-opt --split-input-file > %t.upstream.mlir
// RUN: grep -v '"test.op"' %t.direct.mlir > %t.direct.streams
// RUN: grep -v '"test.op"' %t.upstream.mlir > %t.upstream.streams
// RUN: diff %t.direct.streams %t.upstream.streams
// RUN: filecheck %s < %t.upstream.mlir

// CHECK: "test.op"() {accumulator = #ethosu<accumulator default>
// CHECK-SAME: fm = #ethosu.fm<u16, region 0, shape [2, 3, 20], at 0x10, strides [96, 32, 48], layout nhcwb16, quant none:7, name "x \22quoted\22">
// CHECK-SAME: fm_tiles = #ethosu.fm<i32, region 5, shape [6, 8, 4], tiles [2, 3, 5 | 0x100, 0x200, 0x300, 0x400], layout nhwc>
// CHECK-SAME: kernel_strided = #ethosu.kernel<[1, 7], stride [3, 1], dilation [2, 1]>
// CHECK-SAME: lut = #ethosu.activation<table_lookup, index 2, min -10.0>
// CHECK-SAME: scalar_quant = #ethosu.scalar<0.1, i16, quant 0.001:0>
// CHECK-SAME: shram = #ethosu.address_range<shram, 0, 2048>
// CHECK-SAME: tiles = #ethosu.tiles<2, 2, 16 | 0xc00, 0, 0x800, 0>
