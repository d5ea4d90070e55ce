// ethosu-pipeline with no budget compiles to command streams that run bit-exact on the NPU's
// functional model against TFLite, on U55 and U65. The models executed here have outputs with
// many distinct values (the random-weight MobileNets saturate to a single value, which would
// prove nothing): ds_cnn_kws_nosoftmax and resnet8_nosoftmax.
// RUN: cascade-opt %models/ds_cnn_kws_nosoftmax.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.u55.mlir
// RUN: cascade-run %t.u55.mlir --compare-tflite %models/ds_cnn_kws_nosoftmax.tflite | filecheck %s
// RUN: cascade-opt %models/resnet8_nosoftmax.tflite -p 'ethosu-pipeline{accelerator=ethos-u65-256}' -o %t.u65.mlir
// RUN: cascade-run %t.u65.mlir --compare-tflite %models/resnet8_nosoftmax.tflite | filecheck %s
// The pipeline plans with `rolling-axes=h` (lower-to-ethosu wraps rows only): mbv2_035_96
// compiles, and the planned IR keeps every rolling buffer on rows (axis 1).
// RUN: cascade-opt %models/mbv2_035_96.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.mbv2.mlir
// RUN: cascade-opt %models/mbv2_035_96.tflite -p 'cascade-plan{accelerator=ethos-u55-128 rolling-axes=h},rolling-buffer' | filecheck %s --check-prefix=ROWS

// CHECK:      output 0: {{.*}} distinct {{([2-9]|[1-9][0-9]+)}} sha256
// CHECK:      bit-exact: 1/1 tensors

// A rolling buffer's index map wraps the row index (d1 mod k), never the column index.
// ROWS:     cascade.rolling_buffer
// ROWS-NOT: (d2 mod
