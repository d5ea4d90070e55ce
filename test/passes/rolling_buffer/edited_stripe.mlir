// Every nn operator of a planned cascade carries its cascade.stripe. Without it (here renamed
// by hand on %t3 of the planned residual.mlir), the planner's view takes the operator for a
// rolling intermediate that rolling-buffer gives no rolling buffer: both passes refuse the
// cascade, naming the operator, instead of an allocation that fails its own check.
// RUN: cascade-opt %S/residual.mlir --cascade-plan='objective=min-sram accelerator=ethos-u55-128' \
// RUN:   | sed -e '/t3 = nn/s/cascade\.stripe/cascade.bogus_op/' > %t.mlir
// RUN: not cascade-opt %t.mlir --rolling-buffer --allocate-memory 2>&1 | filecheck %s -DPASS=rolling-buffer
// RUN: not cascade-opt %t.mlir --allocate-memory 2>&1 | filecheck %s -DPASS=allocate-memory
// Unedited, the same plan goes through both.
// RUN: cascade-opt %S/residual.mlir --cascade-plan='objective=min-sram accelerator=ethos-u55-128' \
// RUN:   --rolling-buffer --allocate-memory | filecheck %s --check-prefix=VALID

// CHECK-NOT:  internal error
// CHECK:      {{^}}cascade-opt: error: [[PASS]]: @residual: nn.conv2d at {{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}} in the cascade.group at {{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}} has no 'cascade.stripe': every operator of a cascade needs its stripe map{{$}}
// CHECK-NOT:  {{.}}

// VALID: %t3_rolling = cascade.rolling_buffer %t3 {{.*}} placement #cascade.placement<sram,
