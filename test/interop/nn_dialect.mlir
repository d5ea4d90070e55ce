// The generic form of every nn operator parses in upstream MLIR, and what upstream prints back
// parses and verifies in cascade-opt with the same operators.
// REQUIRES: iree-opt
// RUN: cascade-opt %S/../dialects/nn/ops.mlir --split-input-file --print-op-generic \
// RUN:   | %mlir_opt --split-input-file --allow-unregistered-dialect --mlir-print-op-generic --mlir-print-local-scope \
// RUN:   | cascade-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @convolutions
// CHECK:         nn.conv2d {{.*}} weight_quant = #nn.quant<axis 0: [0.1:0, 0.2:0, 0.1:0, 0.2:0, 0.1:0, 0.2:0, 0.1:0, 0.023529412:0]>
// CHECK:         nn.depthwise_conv2d
// CHECK:         nn.transpose_conv2d
// CHECK-LABEL: func.func @pooling_and_elementwise
// CHECK-COUNT-2: nn.pool2d
// CHECK:         nn.add
// CHECK:         nn.leaky_relu
// CHECK-LABEL: func.func @whole_tensor
// CHECK:         nn.concat
// CHECK:         nn.softmax
// CHECK-LABEL: func.func @exact_scales
// CHECK:         #nn.quant<0.005524271728063468 f64:3>

// A whole imported model survives the trip through upstream MLIR, weights (hex blobs) and
// tensor names (locations) included, and still computes exactly what TFLite computes.
// RUN: cascade-opt %models/resnet8.tflite --print-op-generic --print-debuginfo \
// RUN:   | %mlir_opt --allow-unregistered-dialect --mlir-print-op-generic --mlir-print-debuginfo --mlir-print-local-scope -o %t.upstream.mlir
// RUN: cascade-run %t.upstream.mlir --seed 2 --compare-tflite %models/resnet8.tflite | filecheck %s --check-prefix=MODEL
// MODEL: bit-exact: 16/16 tensors
