// Malformed MLIR: a file that is not UTF-8 text.
// RUN: printf 'func.func @f() {\n  \377\376\n}\n' > %t.mlir
// RUN: cd %S && %exit1 cascade-opt %t.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run %t.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate %t.mlir 2>&1 | filecheck %s --check-prefix=EST



// OPT-NOT:  Traceback
// OPT:      {{^}}cascade-opt: error: {{.*}}syntax_not_utf8.mlir.tmp.mlir: input is not UTF-8 text ('utf-8' codec can't decode byte 0xff in position 19: invalid start byte){{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: {{.*}}syntax_not_utf8.mlir.tmp.mlir: not a text MLIR file (and not named .tflite){{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: {{.*}}syntax_not_utf8.mlir.tmp.mlir: not a text MLIR file (and not named .tflite){{$}}
// EST-NOT:  {{.}}
