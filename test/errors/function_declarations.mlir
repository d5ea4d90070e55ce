// Function declarations (no body) have no operators to plan, allocate or lower: every pass and
// tool skips them and works on the functions that have a body. A module of declarations only is
// one error line for the tools that need a program (cascade-estimate), and left unchanged by the
// passes.
// RUN: cd %S && cascade-opt function_declarations.mlir -p ethosu-pipeline | filecheck %s --check-prefix=PIPELINE
// RUN: cd %S && cascade-estimate function_declarations.mlir | filecheck %s --check-prefix=ESTIMATE
// RUN: cd %S && grep -v '@main\|nn.pool2d\|return %0\|^}' function_declarations.mlir > %t.mlir
// RUN: cascade-opt %t.mlir -p ethosu-pipeline | filecheck %s --check-prefix=ONLY
// RUN: %exit1 cascade-estimate %t.mlir 2>&1 | filecheck %s --check-prefix=ONLY-ESTIMATE -DFILE=%t.mlir

func.func private @helper(tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>
func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// PIPELINE:      func.func private @helper(tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>
// PIPELINE:      func.func @main
// PIPELINE:      ethosu.command_stream
// PIPELINE:      ethosu.pool

// ESTIMATE:      {{^}}0  pool2d    NPU

// ONLY:          builtin.module {
// ONLY-NEXT:       func.func private @helper(tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>
// ONLY-NEXT:     }

// ONLY-ESTIMATE-NOT: Traceback
// ONLY-ESTIMATE:     {{^}}cascade-estimate: error: [[FILE]]: @helper is a declaration without a body{{$}}
// ONLY-ESTIMATE-NOT: {{.}}
