// Malformed MLIR: the function body is never closed.
// RUN: cd %S && %exit1 cascade-opt syntax_unterminated_body.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run syntax_unterminated_body.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate syntax_unterminated_body.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>

// OPT-NOT:  Traceback
// OPT:      {{^}}syntax_unterminated_body.mlir:23:1: error: unexpected end of input: '}' expected to close the region{{$}}
// OPT-NEXT: {{^$}}
// OPT-NEXT: {{^}}^{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: syntax_unterminated_body.mlir:23:1: unexpected end of input: '}' expected to close the region{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: syntax_unterminated_body.mlir:23:1: unexpected end of input: '}' expected to close the region{{$}}
// EST-NOT:  {{.}}
