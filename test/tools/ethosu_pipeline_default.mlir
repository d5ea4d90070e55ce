// ethosu-pipeline with no budget compiles to command streams that run bit-exact on the NPU's
// functional model against TFLite, on U55 and U65. The models executed here have outputs with
// many distinct values (the random-weight MobileNets saturate to a single value, which would
// prove nothing): ds_cnn_kws_nosoftmax and resnet8_nosoftmax.
// RUN: cascade-opt %models/ds_cnn_kws_nosoftmax.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.u55.mlir
// RUN: cascade-run %t.u55.mlir --compare-tflite %models/ds_cnn_kws_nosoftmax.tflite | filecheck %s
// RUN: cascade-opt %models/resnet8_nosoftmax.tflite -p 'ethosu-pipeline{accelerator=ethos-u65-256}' -o %t.u65.mlir
// RUN: cascade-run %t.u65.mlir --compare-tflite %models/resnet8_nosoftmax.tflite | filecheck %s

// CHECK:      output 0: {{.*}} distinct {{([2-9]|[1-9][0-9]+)}} sha256
// CHECK:      bit-exact: 1/1 tensors
