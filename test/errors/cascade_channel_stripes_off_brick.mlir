// The plan of test/passes/cascade_plan/channel_stripes.mlir edited to stripes of 8 channels:
// the stripe executor runs it, but on the NPU a stripe of a bricked (NHCWB16) buffer must start
// on a 16-channel brick. lower-to-ethosu names the operator and the stripe instead of writing
// a command stream that would read the wrong bytes.
// RUN: cascade-opt %S/../passes/cascade_plan/channel_stripes.mlir --cascade-plan='objective=min-sram accelerator=ethos-u55-128' \
// RUN:   | sed -e 's/stripe_shape \[1, 16\] stripe_order \[1\] num_stripes \[4\]/stripe_shape [1, 8] stripe_order [1] num_stripes [8]/' \
// RUN:     -e 's/shape = \[1, 4, 4, 16\]/shape = [1, 4, 4, 8]/g' -e 's/shape = \[1, 16\]/shape = [1, 8]/' -e 's/d0 \* 16/d0 * 8/g' \
// RUN:   | cascade-opt --rolling-buffer --allocate-memory=accelerator=ethos-u55-128 -o %t.mlir
// RUN: %python -m cascade.interpreter.scheduled %t.mlir %S/../passes/cascade_plan/channel_stripes.mlir | filecheck %s --check-prefix=RUNS
// RUN: %exit1 cascade-opt %t.mlir --lower-to-ethosu 2>&1 | filecheck %s

// RUNS:       bit-exact: 2/2 tensors

// CHECK-NOT:  Traceback
// CHECK:      {{^}}cascade-opt: error: lower-to-ethosu: @head: nn.conv2d at {{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}}: its stripe at [0, 0, 0, 8]: an NHCWB16 box must start on a 16-channel brick, not channel 8{{$}}
// CHECK-NOT:  {{.}}
