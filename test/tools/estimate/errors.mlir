// Bad input is one `cascade-estimate: error:` line and exit status 1, never a traceback.
// RUN: not cascade-estimate %inputs/example_nn.mlir --accelerator ethos-u99 2>&1 \
// RUN:   | filecheck %s --check-prefix=ACCEL
// RUN: not cascade-estimate %inputs/example_nn.mlir --system-config Nope 2>&1 \
// RUN:   | filecheck %s --check-prefix=SYSTEM
// RUN: not cascade-estimate %inputs/example_nn.mlir --memory-mode Nope 2>&1 \
// RUN:   | filecheck %s --check-prefix=MODE
// RUN: not cascade-estimate %t.does-not-exist.tflite 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not cascade-estimate 2>&1 | filecheck %s --check-prefix=USAGE
// RUN: echo 'garbage' > %t.bad.mlir
// RUN: not cascade-estimate %t.bad.mlir 2>&1 | filecheck %s --check-prefix=PARSE
// Lowered IR: only the operators left to the CPU are nn there (it printed an estimate of 0 cycles).
// RUN: cascade-opt %inputs/../passes/lower_to_ethosu/outside_npu_range.mlir --ethosu-pipeline -o %t.lowered.mlir
// RUN: not cascade-estimate %t.lowered.mlir 2>&1 | filecheck %s --check-prefix=LOWERED

// ACCEL:       cascade-estimate: error: unknown accelerator 'ethos-u99'; expected one of: ethos-u55-32, {{.*}}, ethos-u65-512
// ACCEL-NOT:   Traceback
// SYSTEM:      cascade-estimate: error: unknown system config 'Nope'; expected one of: {{.*}}Ethos_U55_High_End_Embedded
// MODE:        cascade-estimate: error: unknown memory mode 'Nope'; expected one of: {{.*}}Shared_Sram
// MISSING:     cascade-estimate: error: {{.*}}does-not-exist.tflite: cannot read: No such file or directory
// USAGE:       cascade-estimate: error: the following arguments are required: model
// PARSE:       cascade-estimate: error: {{.*}}bad.mlir:{{[0-9]+}}:{{[0-9]+}}: Operation garbage is not registered
// PARSE-NOT:   {{.}}
// LOWERED:     {{^}}cascade-estimate: error: {{.*}}lowered.mlir: lowered IR holds its NPU work in command streams, which cascade-estimate does not price: estimate the model or its nn program, or compile it with cascade-opt ... --report FILE{{$}}
// LOWERED-NOT: {{.}}
