// Malformed MLIR: a '(' inside a dense literal (found by the MLIR fuzzer, seed 4201). xDSL takes
// it for a complex number and asserted its ')' (an internal error); the loader reports it where
// the ')' is missing.
// RUN: cd %S && %exit1 cascade-opt syntax_dense_parenthesis.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run syntax_dense_parenthesis.mlir 2>&1 | filecheck %s --check-prefix=EXE

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<4xi32> {
  %0 = arith.constant dense<[1, (2, 3, 4]> : tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// OPT-NOT:   Traceback
// OPT:       {{^}}syntax_dense_parenthesis.mlir:8:38: error: ')' expected, found ','{{$}}
// OPT-NEXT:  {{^}}  %0 = arith.constant dense<[1, (2, 3, 4]> : tensor<4xi32>{{$}}
// OPT-NEXT:  {{^}}                                     ^{{$}}
// OPT-NOT:   {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: syntax_dense_parenthesis.mlir:8:38: ')' expected, found ','{{$}}
// EXE-NOT:  {{.}}
