// cascade-run executes a model or a program and compares it with TFLite's reference kernels.
// resnet8 has 15 operators: its input and the 15 operator outputs are compared.
// RUN: cascade-run %models/resnet8.tflite --seed 3 --compare-tflite %models/resnet8.tflite | filecheck %s --check-prefix=MODEL
// MODEL:      output 0: int8[1, 10] min {{-?[0-9]+}} max {{-?[0-9]+}} distinct {{[0-9]+}} sha256 {{[0-9a-f]+}}
// MODEL-NEXT: bit-exact: 16/16 tensors

// `-` reads standard input: a model there is known by its flatbuffer identifier.
// RUN: cascade-run - --seed 3 --compare-tflite %models/resnet8.tflite < %models/resnet8.tflite | filecheck %s --check-prefix=MODEL

// Printed with its locations, the nn program still names every TFLite tensor.
// RUN: cascade-opt %models/resnet8.tflite --print-debuginfo -o %t.mlir
// RUN: cascade-run %t.mlir --seed 3 --compare-tflite %models/resnet8.tflite | filecheck %s --check-prefix=MODEL

// Without locations only the outputs can be matched, by position.
// RUN: cascade-opt %models/resnet8.tflite -o %t.bare.mlir
// RUN: cascade-run %t.bare.mlir --compare-tflite %models/resnet8.tflite | filecheck %s --check-prefix=BARE
// RUN: cascade-run - --compare-tflite %models/resnet8.tflite < %t.bare.mlir | filecheck %s --check-prefix=BARE
// BARE: bit-exact: 1/1 tensors

// The same seed gives the same outputs; --outputs and --inputs round-trip through .npz.
// RUN: cascade-run %models/ds_cnn_kws_nosoftmax.tflite --seed 5 --outputs %t.out.npz > %t.first
// RUN: cascade-run %models/ds_cnn_kws_nosoftmax.tflite --seed 5 > %t.second
// RUN: diff %t.first %t.second

// A mismatching model (another network's reference) is reported and fails.
// RUN: not cascade-run %models/resnet8_nosoftmax.tflite --compare-tflite %models/resnet8.tflite | filecheck %s --check-prefix=WRONG
// WRONG: mismatch {{.*}}: {{[0-9]+}} of 10 elements differ
// WRONG: bit-exact: {{[0-9]+}}/{{[0-9]+}} tensors

// Bad input: one line, exit 1, no traceback.
// RUN: not cascade-run %t.missing.tflite 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: cascade-run: error: {{.*}}missing.tflite: cannot read: No such file or directory
// MISSING-NOT: Traceback
// RUN: not cascade-run %models/resnet8.tflite --inputs %t.out.npz 2>&1 | filecheck %s --check-prefix=SHAPE
// SHAPE: cascade-run: error: {{.*}}out.npz: input 'arr_0' is int8[1, 12], expected int8[1, 32, 32, 3]

// Lowered to Ethos-U commands: Vela serializes each command stream and the functional model of
// the NPU runs it over the allocated SRAM; the outputs still match TFLite.
// RUN: cascade-opt %models/resnet8_nosoftmax.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128 sram-budget=30000}' -o %t.lowered.mlir
// RUN: cascade-run %t.lowered.mlir --seed 3 --compare-tflite %models/resnet8_nosoftmax.tflite | filecheck %s --check-prefix=LOWERED
// LOWERED-NOT: Warning
// LOWERED: bit-exact: 1/1 tensors

// Printed with its locations, lowered ds_cnn_kws names what the CPU reads back from the NPU (the
// pooled features) and what the CPU computes from it: with the input, 4 tensors. Its softmax
// output holds one value (the logits' scale is too fine for it), the features do not.
// RUN: cascade-opt %models/ds_cnn_kws.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' --print-debuginfo -o %t.ds.mlir
// RUN: cascade-run %t.ds.mlir --seed 3 --compare-tflite %models/ds_cnn_kws.tflite | filecheck %s --check-prefix=FEATURES
// FEATURES:      output 0: int8[1, 12] min -107 max -107 distinct 1
// FEATURES-NEXT: bit-exact: 4/4 tensors
