// Weights and biases given as function arguments, not constants. The NPU needs an operator's
// weights encoded when the stream is compiled, so such an operator runs on the CPU, as in Vela;
// lower-to-ethosu says so on the operator (cascade.on_cpu) and the report lists it with the
// reason. Planned into a cascade, it cannot run at all: one error line (it was an internal
// KeyError). The .tflite writer names the argument and its reader.
// RUN: cd %S && cascade-opt weights_as_arguments.mlir -p 'ethosu-pipeline{accelerator=ethos-u55-128}' --report %t.json -o %t.mlir 2>&1 | filecheck %s --check-prefix=SUMMARY
// RUN: filecheck %s --check-prefix=IR < %t.mlir
// RUN: filecheck %s --check-prefix=JSON < %t.json
// RUN: cd %S && %exit1 cascade-opt weights_as_arguments.mlir -p 'cascade-plan{objective=min-sram accelerator=ethos-u55-128},rolling-buffer,allocate-memory,lower-to-ethosu' 2>&1 | filecheck %s --check-prefix=CASCADE
// RUN: cd %S && %exit1 cascade-opt weights_as_arguments.mlir -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -t ethosu-tflite -o %t.tflite 2>&1 | filecheck %s --check-prefix=TFLITE
// The operators a model from TFLite leaves to the CPU, and why:
// RUN: cascade-opt %models/resnet8.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' --report %t.resnet8.json -o /dev/null 2>&1 | filecheck %s --check-prefix=RESNET8

func.func @block(%image: tensor<1x16x16x3xi8>, %w0: tensor<8x3x3x3xi8>, %b0: tensor<8xi32>) -> tensor<1x4x4x8xi8> {
  %w1 = arith.constant dense<3> : tensor<1x3x3x8xi8>
  %b1 = arith.constant dense<7> : tensor<8xi32>
  %0 = nn.conv2d %image, %w0, %b0 {stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 1, 1>, activation = #nn<activation relu6>, input_quant = #nn.quant<0.0078125:0>, weight_quant = #nn.quant<0.02:0>, output_quant = #nn.quant<0.0235:-128>} : (tensor<1x16x16x3xi8>, tensor<8x3x3x3xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
  %1 = nn.depthwise_conv2d %0, %w1, %b1 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation relu6>, input_quant = #nn.quant<0.0235:-128>, weight_quant = #nn.quant<0.03:0>, output_quant = #nn.quant<0.0235:-128>} : (tensor<1x8x8x8xi8>, tensor<1x3x3x8xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
  %2 = nn.pool2d %1 {kind = #nn<pool_kind avg>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.0235:-128>, output_quant = #nn.quant<0.0235:-128>} : (tensor<1x8x8x8xi8>) -> tensor<1x4x4x8xi8>
  func.return %2 : tensor<1x4x4x8xi8>
}

// SUMMARY:      CPU operators         1
// SUMMARY-NEXT:   nn.conv2d 'v3' at weights_as_arguments.mlir:17:3: its weights or bias are not constants, which the NPU needs encoded at compile time
// SUMMARY-NEXT: Command streams       1

// IR:      nn.conv2d %image, %w0, %b0 {{{.*}}cascade.on_cpu = "its weights or bias are not constants, which the NPU needs encoded at compile time"
// IR:      ethosu.command_stream
// IR-NOT:  nn.depthwise_conv2d
// IR-NOT:  nn.pool2d

// JSON:      "cpu_operators": [
// JSON-NEXT:   {
// JSON-NEXT:     "location": "weights_as_arguments.mlir:17:3",
// JSON-NEXT:     "name": "v3",
// JSON-NEXT:     "op": "nn.conv2d",
// JSON-NEXT:     "reason": "its weights or bias are not constants, which the NPU needs encoded at compile time"
// JSON-NEXT:   }
// JSON-NEXT: ],
// JSON:      "cpu_ops": 1,
// The per-operator entries name it alike (the planner's name for its result), off the NPU.
// JSON:      "cascade": null,
// JSON-NEXT: "cycles": 0,
// JSON-NEXT: "name": "v3",
// JSON-NEXT: "on_cpu": true,
// JSON-NEXT: "op": "nn.conv2d"
// JSON:      "cycles": {{[1-9][0-9]*}},
// JSON-NEXT: "name": "v6",
// JSON-NEXT: "on_cpu": false,

// CASCADE-NOT: Traceback
// CASCADE:     {{^}}cascade-opt: error: lower-to-ethosu: @block: nn.conv2d at weights_as_arguments.mlir:17:3 inside a stripe loop has no NPU lowering: its weights or bias are not constants, which the NPU needs encoded at compile time{{$}}

// TFLITE: {{^}}cascade-opt: error: ethosu-tflite: @block: argument #1 is the weights of nn.conv2d at weights_as_arguments.mlir:17:3: a .tflite needs an operator's weights and bias as constants (arith.constant){{$}}

// RESNET8:      CPU operators         2
// RESNET8-NEXT:   nn.fully_connected 'functional_3_1/dense_3_1/MatMul2': fully_connected runs on the CPU unless fc-on-npu (the NPU's rounding differs from TFLite's by 1 LSB)
// RESNET8-NEXT:   nn.softmax 'StatefulPartitionedCall_1:0': the NPU lowering has no nn.softmax
