// -t ethosu-tflite when lower-to-ethosu leaves operators to the CPU that the old writer could not
// export (it knew only FULLY_CONNECTED, SOFTMAX and RESHAPE), and when it leaves all of them:
// each is the TFLite builtin it stands for, and the file computes what the program computes.
//
// Batch 2 runs all on the CPU: no ethos-u operator, two CONV_2Ds (the file used to be refused,
// "no ethosu.command_stream"). cascade-run reads the file back and checks it against LiteRT,
// and its outputs hash as the program's do.
// RUN: cascade-opt %S/../passes/lower_to_ethosu/Inputs/batch2.mlir -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -t ethosu-tflite -o %t.batch.tflite
// RUN: %python %inputs/ethosu_tflite_summary.py %t.batch.tflite | filecheck %s --check-prefix=BATCH
// RUN: cascade-run %S/../passes/lower_to_ethosu/Inputs/batch2.mlir --seed 5 > %t.batch.expected
// RUN: cascade-run %t.batch.tflite --seed 5 --compare-tflite %t.batch.tflite > %t.batch.actual
// RUN: cat %t.batch.expected %t.batch.actual | filecheck %s --check-prefix=SAME
//
// The chain of test/passes/lower_to_ethosu/outside_npu_range.mlir: two streams around the three
// operators the NPU cannot take; the stride-4 convolution is padded (1, 1) where TFLite's SAME
// would pad (1, 2), so a PAD comes before it. The Vela-format runner (interpreter.litert) runs
// the file as TFLite Micro would and matches the nn interpreter.
// RUN: cascade-opt %S/../passes/lower_to_ethosu/outside_npu_range.mlir -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -t ethosu-tflite -o %t.chain.tflite
// RUN: %python %inputs/ethosu_tflite_summary.py %t.chain.tflite | filecheck %s --check-prefix=CHAIN
// RUN: %python %inputs/ethosu_tflite_run.py %t.chain.tflite %S/../passes/lower_to_ethosu/outside_npu_range.mlir | filecheck %s --check-prefix=EXEC
//
// A function that returns its argument: a model with no operator at all.
// RUN: cascade-opt %s -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -t ethosu-tflite -o %t.identity.tflite
// RUN: %python %inputs/ethosu_tflite_run.py %t.identity.tflite %s | filecheck %s --check-prefix=EXEC

func.func @main(%x: tensor<1x4x4x8xi8> {nn.quant = #nn.quant<0.5:0>}) -> tensor<1x4x4x8xi8> {
  func.return %x : tensor<1x4x4x8xi8>
}

// BATCH-NOT:  ethos-u
// BATCH:      operator 0: CONV_2D
// BATCH-NEXT:   in  'x' int8[2x16x16x8]
// BATCH:      operator 1: CONV_2D
// BATCH-NOT:  operator

// SAME:       output 0: int8[2, 16, 16, 8] {{.*}} sha256 [[HASH:[0-9a-f]+]]
// SAME:       output 0: int8[2, 16, 16, 8] {{.*}} sha256 [[HASH]]
// SAME:       bit-exact: [[N:[0-9]+]]/[[N]] tensors

// CHAIN:      operator 0: ethos-u
// CHAIN:      operator 1: PAD
// CHAIN:      operator 2: CONV_2D
// CHAIN:      operator 3: DEPTHWISE_CONV_2D
// CHAIN:      operator 4: DEPTHWISE_CONV_2D
// CHAIN:      operator 5: ethos-u

// EXEC:       bit-exact: 1/1 outputs
