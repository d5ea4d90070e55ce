// Malformed MLIR: a constant that does not fit its element type (xDSL raises ValueError, not a parse error).
// RUN: cd %S && %exit1 cascade-opt syntax_constant_out_of_range.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run syntax_constant_out_of_range.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate syntax_constant_out_of_range.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<2xi32> {
  %0 = arith.constant dense<[1, 4294967297]> : tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}syntax_constant_out_of_range.mlir:7:3: error: Integer value 4294967297 is out of range for type i32 which supports values in the range [-2147483648, 4294967296){{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: syntax_constant_out_of_range.mlir:7:3: Integer value 4294967297 is out of range for type i32 which supports values in the range [-2147483648, 4294967296){{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: syntax_constant_out_of_range.mlir:7:3: Integer value 4294967297 is out of range for type i32 which supports values in the range [-2147483648, 4294967296){{$}}
// EST-NOT:  {{.}}
