// The Ethos-U targets write lowered IR only: on an nn program, one error line each, not an
// empty output.
// RUN: cd %S && %exit1 cascade-opt target_not_lowered.mlir -t ethosu-cs 2>&1 | filecheck %s --check-prefix=CS
// RUN: cd %S && %exit1 cascade-opt target_not_lowered.mlir --cascade-plan -t ethosu-cs{payload=true} 2>&1 | filecheck %s --check-prefix=CS
// RUN: cd %S && %exit1 cascade-opt target_not_lowered.mlir -t ethosu-tflite -o %t.tflite 2>&1 | filecheck %s --check-prefix=TFLITE

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// CS-NOT:  Traceback
// CS:      {{^}}cascade-opt: error: ethosu-cs: the module has no ethosu.command_stream to write: run ethosu-pipeline (or lower-to-ethosu) first{{$}}
// CS-NOT:  {{.}}

// TFLITE-NOT:  Traceback
// TFLITE:      {{^}}cascade-opt: error: ethosu-tflite: @main is not allocated: run ethosu-pipeline (or lower-to-ethosu) first{{$}}
// TFLITE-NOT:  {{.}}
