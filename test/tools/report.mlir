// --report FILE writes the compile report (JSON, sorted keys) and a summary on stderr; an
// unplanned module is one error line. The peak and cycles are the plan's own attributes below.
// RUN: cascade-opt %inputs/example_nn.mlir --cascade-plan='accelerator=ethos-u55-128 report="%t.plan.json"' --report %t.json -o %t.mlir 2>&1 | filecheck %s --check-prefix=SUMMARY
// RUN: filecheck %s < %t.json
// RUN: filecheck %s --check-prefix=PLAN < %t.plan.json
// RUN: not cascade-opt %inputs/example_nn.mlir --report %t.json 2>&1 | filecheck %s --check-prefix=UNPLANNED
// The report names what the plan was made for, given to cascade-plan alone, and so does a
// report of the planned file allocated on, the pass after following the plan:
// RUN: cascade-opt %inputs/example_nn.mlir --cascade-plan='accelerator=ethos-u65-256 memory-mode=Sram_Only system-config=Ethos_U65_High_End' --report %t.target.json -o %t.target.mlir 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: cascade-opt %t.target.mlir --rolling-buffer --allocate-memory --report %t.target.json -o /dev/null 2>&1 | filecheck %s --check-prefix=TARGET
// With --report, ethosu-pipeline runs as its stages to keep the planned module, but what runs
// between the passes (printing, verifying, timing) still runs between the passes as given:
// RUN: cascade-opt %inputs/example_nn.mlir -p 'canonicalize,ethosu-pipeline{accelerator=ethos-u55-128}' \
// RUN:   --print-between-passes --time-passes --report %t.stages.json -o /dev/null 2>&1 | filecheck %s --check-prefix=BETWEEN

// TARGET:        Accelerator           ethos-u65-256
// TARGET-NEXT:   System configuration  Ethos_U65_High_End
// TARGET-NEXT:   Memory mode           Sram_Only

// SUMMARY:      Network summary for {{.*}}example_nn.mlir
// SUMMARY-NEXT:   Accelerator           ethos-u55-128
// SUMMARY-NEXT:   System configuration  Ethos_U55_High_End_Embedded
// SUMMARY-NEXT:   Memory mode           Shared_Sram
// SUMMARY:        Total cycles          [[CYCLES:[0-9]+]] (

// CHECK:      "accelerator": "ethos-u55-128",
// CHECK:      "command_streams": 0,
// CHECK:      "per_op": [
// CHECK:          "op": "nn.conv2d"
// CHECK:          "op": "nn.depthwise_conv2d"
// CHECK:          "op": "nn.conv2d"
// CHECK:          "op": "nn.pool2d"
// CHECK:      "tool": "cascade-opt",

// PLAN: "chosen"

// BETWEEN:     Pass canonicalize took
// BETWEEN-NEXT: IR after canonicalize:
// BETWEEN-NOT:  IR after
// BETWEEN:      Pass ethosu-pipeline took
// BETWEEN-NOT:  Pass {{.*}} took
// BETWEEN:      Network summary for {{.*}}example_nn.mlir
// BETWEEN:        Command streams       1

// UNPLANNED: cascade-opt: error: --report: {{.*}}example_nn.mlir: the report needs planned IR (functions with cascade.cycles): run cascade-plan or ethosu-pipeline first
// UNPLANNED-NOT: Traceback
