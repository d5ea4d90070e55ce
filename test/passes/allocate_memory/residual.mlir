// allocate-memory places every SRAM buffer of the scheduled residual block (see
// test/passes/rolling_buffer/residual.mlir) and the placed peak is the planner's prediction:
// at %y's step the graph input and %y (512 + 4096); at the loop's step %y, the loop's output
// written over %y's rows from 2 rows (512 bytes) below it (4096 + 512), and the three rolling
// buffers (768 + 256 + 256): 5888 bytes, which is also the max-live lower bound.
// RUN: cascade-opt %S/../rolling_buffer/residual.mlir --cascade-plan='objective=min-sram accelerator=ethos-u55-128' \
// RUN:   --rolling-buffer --allocate-memory=accelerator=ethos-u55-128 > %t.mlir
// RUN: filecheck %s < %t.mlir
// The scheduled program runs stripe by stripe in one flat 5888-byte SRAM, bit-exact with the
// unscheduled one (the output and the one full tensor both programs have).
// RUN: %python -m cascade.interpreter.scheduled %t.mlir %S/../rolling_buffer/residual.mlir --seed 3 \
// RUN:   | filecheck %s --check-prefix=EXEC
// Allocation also works on planned IR without explicit rolling buffers (placements go on the
// producers), and placements parse back.
// RUN: cascade-opt %S/../rolling_buffer/residual.mlir --cascade-plan='objective=min-sram accelerator=ethos-u55-128' \
// RUN:   --allocate-memory=accelerator=ethos-u55-128 | cascade-opt | filecheck %s --check-prefix=GROUP

// CHECK:      func.func @residual(%x: tensor<1x16x8x4xi8> {cascade.placement = #cascade.placement<sram, [[X:[0-9]+]], 512>})
// CHECK-SAME:   cascade.peak_sram_bytes = 5888 : i64
// CHECK-SAME:   cascade.allocated_peak_bytes = 5888 : i64, cascade.max_live_bytes = 5888 : i64
// CHECK:      %y = nn.conv2d {{.*}}cascade.placement = #cascade.placement<sram, {{[0-9]+}}, 4096>
// CHECK:      cascade.for_stripes (%row) {{.*}} attributes {cascade.placement = #cascade.placement<sram, {{[0-9]+}}, 4096>}
// CHECK:      cascade.rolling_buffer %t1 depth 3 {{.*}} placement #cascade.placement<sram, {{[0-9]+}}, 768>
// CHECK:      cascade.rolling_buffer %t2 depth 1 {{.*}} placement #cascade.placement<sram, {{[0-9]+}}, 256>
// CHECK:      cascade.rolling_buffer %t3 depth 1 {{.*}} placement #cascade.placement<sram, {{[0-9]+}}, 256>

// EXEC:       sram: 5888 bytes
// EXEC-NEXT:  bit-exact: 3/3 tensors

// GROUP:      cascade.allocated_peak_bytes = 5888
// GROUP:      %y = nn.conv2d {{.*}}cascade.placement = #cascade.placement<sram, {{[0-9]+}}, 4096>
// GROUP:      cascade.group
