// Malformed MLIR: a file without a single operation (these comments are all it has).
// RUN: cd %S && %exit1 cascade-opt syntax_no_operations.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run syntax_no_operations.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate syntax_no_operations.mlir 2>&1 | filecheck %s --check-prefix=EST



// OPT-NOT:  Traceback
// OPT:      {{^}}syntax_no_operations.mlir:21:1: error: the input has no operations (it is empty or only comments){{$}}
// OPT-NEXT: {{^$}}
// OPT-NEXT: {{^}}^{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: syntax_no_operations.mlir:21:1: the input has no operations (it is empty or only comments){{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: syntax_no_operations.mlir:21:1: the input has no operations (it is empty or only comments){{$}}
// EST-NOT:  {{.}}
