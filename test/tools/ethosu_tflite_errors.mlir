// -t ethosu-tflite on IR that is not lowered: one error line, exit 1, and no file written.
// An allocated but unlowered program still has its stripe loops.
// RUN: not cascade-opt %s -t ethosu-tflite -o %t.tflite 2>&1 | filecheck %s --check-prefix=NN
// RUN: not test -e %t.tflite
// RUN: not cascade-opt %models/resnet8.tflite --cascade-plan='accelerator=ethos-u55-128' --rolling-buffer --allocate-memory='accelerator=ethos-u55-128' -t ethosu-tflite -o %t.tflite 2>&1 | filecheck %s --check-prefix=ALLOCATED
// RUN: not test -e %t.tflite

// NN:            cascade-opt: error: ethosu-tflite: @main is not allocated: run ethosu-pipeline (or lower-to-ethosu) first
// NN-NOT:        Traceback
// ALLOCATED:     cascade-opt: error: ethosu-tflite: @main: cascade.for_stripes is not lowered: run ethosu-pipeline (or lower-to-ethosu) first
// ALLOCATED-NOT: Traceback

func.func @main(%x: tensor<1x10xi8>) -> tensor<1x10xi8> {
  %y = nn.softmax %x {input_quant = #nn.quant<0.0023802337:-67>, beta = 1.000000e+00 : f32, output_quant = #nn.quant<0.00390625:-128>} : (tensor<1x10xi8>) -> tensor<1x10xi8>
  func.return %y : tensor<1x10xi8>
}
