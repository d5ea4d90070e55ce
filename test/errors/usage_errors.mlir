// Command lines that do not parse: one error line and exit status 1 (argparse would print the
// whole usage and exit 2).
// RUN: cd %S && %exit1 cascade-opt usage_errors.mlir --no-such-flag 2>&1 | filecheck %s --check-prefix=OPT-FLAG
// RUN: cd %S && %exit1 cascade-opt usage_errors.mlir -f nosuchformat 2>&1 | filecheck %s --check-prefix=OPT-FRONTEND
// RUN: cd %S && %exit1 cascade-opt usage_errors.mlir --split-input-file --cascade-plan --report %t.json 2>&1 | filecheck %s --check-prefix=OPT-SPLIT-REPORT
// RUN: cd %S && %exit1 cascade-run 2>&1 | filecheck %s --check-prefix=EXE-NONE
// RUN: cd %S && %exit1 cascade-run usage_errors.mlir --seed x 2>&1 | filecheck %s --check-prefix=EXE-SEED
// RUN: cd %S && %exit1 cascade-estimate usage_errors.mlir --no-such-flag 2>&1 | filecheck %s --check-prefix=EST-FLAG

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// OPT-FLAG-NOT:  Traceback
// OPT-FLAG:      {{^}}cascade-opt: error: unrecognized arguments: --no-such-flag{{$}}
// OPT-FLAG-NOT:  {{.}}

// OPT-FRONTEND-NOT:  Traceback
// OPT-FRONTEND:      {{^}}cascade-opt: error: argument -f/--frontend: invalid choice: 'nosuchformat' (choose from mlir, tflite){{$}}
// OPT-FRONTEND-NOT:  {{.}}

// EXE-NONE-NOT:  Traceback
// EXE-NONE:      {{^}}cascade-run: error: the following arguments are required: file{{$}}
// EXE-NONE-NOT:  {{.}}

// EXE-SEED-NOT:  Traceback
// EXE-SEED:      {{^}}cascade-run: error: argument --seed: expected a non-negative integer, got 'x'{{$}}
// EXE-SEED-NOT:  {{.}}

// EST-FLAG-NOT:  Traceback
// EST-FLAG:      {{^}}cascade-estimate: error: unrecognized arguments: --no-such-flag{{$}}
// EST-FLAG-NOT:  {{.}}

// OPT-SPLIT-REPORT-NOT: Traceback
// OPT-SPLIT-REPORT:     {{^}}cascade-opt: error: --report describes one module: compile the chunks of --split-input-file one by one{{$}}
// OPT-SPLIT-REPORT-NOT: {{.}}
