// The two MLPerf Tiny models through TOSA: tosa-converter-for-tflite, tosa-opt (generic form with
// the TFLite tensor names as locations), legalize-tosa, then cascade-run against LiteRT's reference
// kernels. Every operator's output is compared by tensor name, so a mismatch names its operator.
// Several seeds and the TOSA reference model: test/unit/test_legalize_tosa.py.
// REQUIRES: tosa-tools, litert

// RUN: tosa-converter-for-tflite %S/../../models/resnet8_nosoftmax.tflite --text --emit-debug-info -o %t.resnet8.tosa.mlir
// RUN: tosa-opt %t.resnet8.tosa.mlir --mlir-print-op-generic --mlir-print-local-scope --mlir-print-debuginfo -o %t.resnet8.generic.mlir
// RUN: cascade-opt %t.resnet8.generic.mlir -p legalize-tosa --print-debuginfo -o %t.resnet8.nn.mlir
// RUN: cascade-opt %t.resnet8.nn.mlir | filecheck %s --check-prefix=RESNET8-IR
// RUN: cascade-run %t.resnet8.nn.mlir --seed 0 --compare-tflite %S/../../models/resnet8_nosoftmax.tflite | filecheck %s --check-prefix=RESNET8

// RUN: tosa-converter-for-tflite %S/../../models/ds_cnn_kws_nosoftmax.tflite --text --emit-debug-info -o %t.ds_cnn.tosa.mlir
// RUN: tosa-opt %t.ds_cnn.tosa.mlir --mlir-print-op-generic --mlir-print-local-scope --mlir-print-debuginfo -o %t.ds_cnn.generic.mlir
// RUN: cascade-opt %t.ds_cnn.generic.mlir -p legalize-tosa --print-debuginfo -o %t.ds_cnn.nn.mlir
// RUN: cascade-opt %t.ds_cnn.nn.mlir | filecheck %s --check-prefix=DS-CNN-IR
// RUN: cascade-run %t.ds_cnn.nn.mlir --seed 0 --compare-tflite %S/../../models/ds_cnn_kws_nosoftmax.tflite | filecheck %s --check-prefix=DS-CNN

// The operators of the TFLite file, one nn operator each, and no TOSA left.
// RESNET8-IR-COUNT-3: nn.conv2d
// RESNET8-IR:         nn.add
// RESNET8-IR-COUNT-3: nn.conv2d
// RESNET8-IR:         nn.add
// RESNET8-IR-COUNT-3: nn.conv2d
// RESNET8-IR:         nn.add
// RESNET8-IR:         nn.mean {{.*}} -> tensor<1x64xi8>
// RESNET8-IR-NEXT:    arith.constant
// RESNET8-IR-NEXT:    nn.fully_connected {{.*}} -> tensor<1x10xi8>
// RESNET8-IR-NOT:     tosa.

// DS-CNN-IR:          nn.conv2d {{.*}}padding = array<i64: 4, 1, 5, 1>
// DS-CNN-IR-COUNT-4:  nn.depthwise_conv2d
// DS-CNN-IR-NEXT:     arith.constant
// DS-CNN-IR-NEXT:     arith.constant
// DS-CNN-IR-NEXT:     nn.conv2d
// DS-CNN-IR:          nn.mean {{.*}} -> tensor<1x64xi8>
// DS-CNN-IR:          nn.fully_connected {{.*}} -> tensor<1x12xi8>
// DS-CNN-IR-NOT:      tosa.

// Outputs with several distinct values (not saturated), and all 14 (11) tensors bit-exact.
// RESNET8:      output 0: int8[1, 10] {{.*}} distinct {{[4-9]|10}} sha256
// RESNET8-NOT:  mismatch
// RESNET8:      bit-exact: 14/14 tensors
// DS-CNN:       output 0: int8[1, 12] {{.*}} distinct {{[4-9]|1[0-2]}} sha256
// DS-CNN-NOT:   mismatch
// DS-CNN:       bit-exact: 11/11 tensors
