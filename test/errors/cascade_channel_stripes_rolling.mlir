// The plan of test/passes/cascade_plan/channel_stripes.mlir edited to keep its intermediates in
// rolling buffers: channel stripes never overlap, so a cascade cut along channels recomputes
// every intermediate. rolling-buffer and allocate-memory name the first operator marked
// rolling instead of failing inside.
// RUN: cascade-opt %S/../passes/cascade_plan/channel_stripes.mlir --cascade-plan='objective=min-sram accelerator=ethos-u55-128' \
// RUN:   | sed -e 's/mode = recompute/mode = rolling/' > %t.mlir
// RUN: %exit1 cascade-opt %t.mlir --rolling-buffer 2>&1 | filecheck %s
// RUN: %exit1 cascade-opt %t.mlir --allocate-memory 2>&1 | filecheck %s

// CHECK-NOT:  Traceback
// CHECK:      {{^}}cascade-opt: error: nn.conv2d at {{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}} in a cascade of stripes c16: its result is marked rolling, but channel stripes do not overlap: a cascade striped on channels recomputes every intermediate{{$}}
// CHECK-NOT:  {{.}}
