// A plan that spills (test/passes/cascade_plan/spill.mlir: the residual block under a 4096-byte
// budget on Ethos-U65, below its smallest plan in SRAM) all the way down. allocate-memory places
// the spilled tensors (the graph input among them) in DRAM on their own, the DRAM peak the
// plan's; the program runs stripe by stripe bit-exact, with a DRAM array beside the SRAM one.
// RUN: cascade-opt %S/../rolling_buffer/residual.mlir --cascade-plan='sram-budget=4096 accelerator=ethos-u65-256' \
// RUN:   --rolling-buffer --allocate-memory=accelerator=ethos-u65-256 > %t.allocated.mlir
// RUN: filecheck %s --check-prefix=ALLOC < %t.allocated.mlir
// RUN: %python -m cascade.interpreter.scheduled %t.allocated.mlir %S/../rolling_buffer/residual.mlir --seed 3 \
// RUN:   | filecheck %s --check-prefix=EXEC
// Lowered, the spilled tensors are region 1 (the DRAM arena, Vela's scratch) and the SRAM is
// region 2 (scratch_fast); serialized by Vela and run by the functional model, bit-exact.
// RUN: cascade-opt %t.allocated.mlir --lower-to-ethosu=accelerator=ethos-u65-256 > %t.mlir
// RUN: filecheck %s --check-prefix=LOWER < %t.mlir
// RUN: %python -m cascade.passes.lower_to_ethosu %t.mlir %S/../rolling_buffer/residual.mlir --seed 3 \
// RUN:   | filecheck %s --check-prefix=NPU
// The .tflite passes the DRAM arena as scratch and the SRAM as a separate scratch_fast, placed
// after it; the model's input and output lie at their DRAM placements inside the scratch.
// RUN: cascade-opt %t.mlir -t ethosu-tflite -o %t.tflite
// RUN: %python %inputs/ethosu_tflite_summary.py %t.tflite > %t.summary
// RUN: grep -o 'allocated_[a-z]*_bytes = [0-9]*' %t.mlir > %t.ir
// RUN: cat %t.ir %t.summary | filecheck %s --check-prefix=TFLITE

// ALLOC:      func.func @residual(%x: tensor<1x16x8x4xi8> {cascade.spilled, cascade.placement = #cascade.placement<dram, {{[0-9]+}}, 512>})
// ALLOC-SAME:   cascade.peak_dram_bytes = [[DRAM:[0-9]+]] : i64
// ALLOC-SAME:   cascade.allocated_peak_bytes = [[PEAK:[0-9]+]] : i64
// ALLOC-SAME:   cascade.allocated_dram_bytes = [[DRAM]] : i64
// ALLOC:      cascade.spilled, cascade.placement = #cascade.placement<dram,
// ALLOC:      func.return

// EXEC:       sram: {{[0-9]+}} bytes
// EXEC-NEXT:  dram: {{[1-9][0-9]*}} bytes
// EXEC-NEXT:  bit-exact: [[N:[0-9]+]]/[[N]] tensors

// LOWER:      ethosu.command_stream "ethos-u65-256"
// LOWER:        ethosu.conv2d ifm <i8, region 1,
// LOWER:        region 2
// LOWER:      builtin.unrealized_conversion_cast to tensor<1x16x8x32xi8> {cascade.placement = #cascade.placement<dram,

// NPU:        bit-exact: 1/1 outputs

// TFLITE:      allocated_peak_bytes = [[PEAK:[0-9]+]]
// TFLITE:      allocated_dram_bytes = [[DRAM:[0-9]+]]
// TFLITE:      operator 0: ethos-u 010401
// TFLITE:        in  'scratch' uint8[[[DRAM]]] at 0
// TFLITE-NEXT:   in  'scratch_fast' uint8[[[PEAK]]] at [[DRAM]]
// TFLITE-NEXT:   in  'x' int8[1x16x8x4] at
// TFLITE-NEXT:   out 'out' int8[1x16x8x32] at
