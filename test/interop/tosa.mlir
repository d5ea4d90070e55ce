// TOSA from upstream tosa-opt reads into cascade-opt (generic form, unregistered ops allowed), and
// cascade-opt's generic output verifies again in tosa-opt.
// REQUIRES: tosa-tools
// RUN: tosa-opt %s --mlir-print-op-generic --mlir-print-local-scope \
// RUN:   | cascade-opt --allow-unregistered-dialect --print-op-generic \
// RUN:   | tosa-opt --mlir-print-op-generic | filecheck %s
// RUN: tosa-converter-for-tflite --help | filecheck %s --check-prefix=CONVERTER

// CHECK:      "func.func"() <{function_type = (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>) -> tensor<1x2x2x8xi8>, sym_name = "main"}>
// CHECK:      "tosa.maximum"(%arg0, %arg1) <{nan_mode = #tosa.nan_mode<PROPAGATE>}>
// CHECK-NEXT: "tosa.max_pool2d"(%0) <{kernel = array<i64: 2, 2>, nan_mode = #tosa.nan_mode<PROPAGATE>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}>
// CHECK-SAME: (tensor<1x4x4x8xi8>) -> tensor<1x2x2x8xi8>

// CONVERTER: usage: tosa-converter-for-tflite

func.func @main(%a: tensor<1x4x4x8xi8>, %b: tensor<1x4x4x8xi8>) -> tensor<1x2x2x8xi8> {
  %0 = tosa.maximum %a, %b : (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8>
  %1 = tosa.max_pool2d %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x8xi8>) -> tensor<1x2x2x8xi8>
  return %1 : tensor<1x2x2x8xi8>
}
