// TOSA that has no nn equivalent fails the pass with one located line, exit status 1.
// RUN: not cascade-opt %S/Inputs/avg_pool.mlir -p legalize-tosa 2>&1 | filecheck %s --check-prefix=AVG-POOL
// RUN: not cascade-opt %S/Inputs/unregistered.mlir --allow-unregistered-dialect -p legalize-tosa 2>&1 | filecheck %s --check-prefix=UNREGISTERED
// A TFLite SOFTMAX through the converter: tosa.table (and clz, shifts) has no definition here.
// RUN: not cascade-opt %S/Inputs/table.mlir -p legalize-tosa 2>&1 | filecheck %s --check-prefix=TABLE
// RUN: not cascade-opt %S/Inputs/clamp.mlir -p legalize-tosa 2>&1 | filecheck %s --check-prefix=CLAMP
// RUN: not cascade-opt %S/Inputs/accumulator.mlir -p legalize-tosa 2>&1 | filecheck %s --check-prefix=ACCUMULATOR
// RUN: not cascade-opt %S/Inputs/add_single_rounding.mlir -p legalize-tosa 2>&1 | filecheck %s --check-prefix=ROUNDING
// RUN: not cascade-opt %S/Inputs/slice.mlir -p legalize-tosa 2>&1 | filecheck %s --check-prefix=SLICE
// RUN: not cascade-opt %S/Inputs/slice.mlir -p 'legalize-tosa{fully-connected=matmul}' 2>&1 | filecheck %s --check-prefix=OPTION

// AVG-POOL:         cascade-opt: error: {{.*}}avg_pool.mlir:3:3: unsupported TOSA pattern: 'tosa.avg_pool2d': it averages x - zero point, TFLite's AVERAGE_POOL_2D (nn.pool2d avg) the raw int8 values, and a mean ending in .5 rounds to different sides (no nn equivalent)
// AVG-POOL-NOT:     {{.}}
// UNREGISTERED:     cascade-opt: error: {{.*}}unregistered.mlir:2:3: unsupported TOSA pattern: 'tosa.frobnicate': the operation is not registered: is cascade's tosa dialect loaded?
// UNREGISTERED-NOT: {{.}}
// TABLE:            {{.*}}table.mlir:3:20: error: Operation tosa.table is not registered: legalize-tosa reads the TOSA of int8 CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, MEAN, MAX_POOL_2D, RESHAPE and QUANTIZE (a SOFTMAX becomes tosa.table and integer arithmetic, which it does not rebuild); compile the .tflite itself
// CLAMP:            cascade-opt: error: {{.*}}clamp.mlir:11:3: unsupported TOSA pattern: 'tosa.clamp': clamp to [0, 50] with output zero point -128 is not a TFLite fused activation
// CLAMP-NOT:        {{.}}
// ACCUMULATOR:      cascade-opt: error: {{.*}}accumulator.mlir:5:3: unsupported TOSA pattern: 'tosa.conv2d': its i32 result must be rescaled to i8 by exactly one tosa.rescale
// ACCUMULATOR-NOT:  {{.}}
// ROUNDING:         cascade-opt: error: {{.*}}add_single_rounding.mlir:10:3: unsupported TOSA pattern: 'tosa.rescale': rounding mode SINGLE_ROUND differs from TFLite's double rounding
// ROUNDING-NOT:     {{.}}
// SLICE:            cascade-opt: error: {{.*}}slice.mlir:4:3: unsupported TOSA pattern: 'tosa.slice': a tosa.slice is supported only as the input of a strided convolution
// SLICE-NOT:        {{.}}
// OPTION:           cascade-opt: error: legalize-tosa: fully-connected must be one of tflite, conv, got 'matmul'
// OPTION-NOT:       {{.}}
