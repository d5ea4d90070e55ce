// Malformed MLIR: a value used on a line before the one defining it. xDSL's parser takes it (a
// name used outside the region defining it it does reject); MLIR requires a value defined
// above every use, in its block or an enclosing one.
// RUN: cd %S && %exit1 cascade-opt syntax_use_before_def.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run syntax_use_before_def.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate syntax_use_before_def.mlir 2>&1 | filecheck %s --check-prefix=EST
// RUN: cd %S && %exit1 cascade-opt syntax_use_before_def.mlir -p cascade-plan 2>&1 | filecheck %s --check-prefix=OPT

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x1x1x2xi8> {
  %1 = nn.pool2d %0 {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x2x2x2xi8>) -> tensor<1x1x1x2xi8>
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %1 : tensor<1x1x1x2xi8>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}syntax_use_before_def.mlir:10:3: error: 'nn.pool2d' op operand #0 is the result of 'nn.pool2d' at syntax_use_before_def.mlir:11:3, which does not come before it in this block or an enclosing one{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: syntax_use_before_def.mlir:10:3: 'nn.pool2d' op operand #0 is the result of 'nn.pool2d' at syntax_use_before_def.mlir:11:3, which does not come before it in this block or an enclosing one{{$}}
// EXE-NOT:  {{.}}

// EST:      {{^}}cascade-estimate: error: syntax_use_before_def.mlir:10:3: 'nn.pool2d' op operand #0
