// ethosu-pipeline with no budget compiles every small model to command streams that run
// bit-exact on the NPU's functional model against TFLite. mbv2_035_96's fastest plans roll
// intermediates along columns, which lower-to-ethosu does not address: the pipeline plans
// with `rolling-axes=h`, and the planned IR keeps every rolling buffer on rows (axis 1).
// RUN: cascade-opt %models/mbv2_035_96.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.mlir
// RUN: cascade-run %t.mlir --compare-tflite %models/mbv2_035_96.tflite | filecheck %s
// RUN: cascade-opt %models/mbv2_035_96.tflite -p 'cascade-plan{accelerator=ethos-u55-128 rolling-axes=h},rolling-buffer' | filecheck %s --check-prefix=ROWS
// RUN: cascade-opt %models/mbv1_025_96.tflite -p 'ethosu-pipeline{accelerator=ethos-u65-256}' -o %t.u65.mlir
// RUN: cascade-run %t.u65.mlir --compare-tflite %models/mbv1_025_96.tflite | filecheck %s

// CHECK: bit-exact: 1/1 tensors

// A rolling buffer's index map wraps the row index (d1 mod k), never the column index.
// ROWS:     cascade.rolling_buffer
// ROWS-NOT: (d2 mod
