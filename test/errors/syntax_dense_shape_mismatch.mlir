// Malformed MLIR: a dense literal with more elements than its type holds. xDSL reports it at the
// token after the type, the start of the next line (here 8:3); the loader points at the literal.
// RUN: cd %S && %exit1 cascade-opt syntax_dense_shape_mismatch.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run syntax_dense_shape_mismatch.mlir 2>&1 | filecheck %s --check-prefix=EXE

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<2xi32> {
  %0 = arith.constant dense<[1, 2, 3]> : tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// OPT-NOT:   Traceback
// OPT:       {{^}}syntax_dense_shape_mismatch.mlir:7:23: error: Shape mismatch in dense literal. Expected [2] shape from the type, but got [3] shape.{{$}}
// OPT-NEXT:  {{^}}  %0 = arith.constant dense<[1, 2, 3]> : tensor<2xi32>{{$}}
// OPT-NEXT:  {{^}}                      ^^^^^^{{$}}
// OPT-NOT:   {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: syntax_dense_shape_mismatch.mlir:7:23: Shape mismatch in dense literal. Expected [2] shape from the type, but got [3] shape.{{$}}
// EXE-NOT:  {{.}}
