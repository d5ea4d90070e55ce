// A missing input file or output directory, or an unknown input format, is one line, exit 1.
// RUN: not cascade-opt %t.does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not cascade-opt %S 2>&1 | filecheck %s --check-prefix=DIRECTORY
// RUN: not cascade-opt %s -o %t.no-such-dir/out.mlir 2>&1 | filecheck %s --check-prefix=OUTPUT
// RUN: not cascade-opt %s -f nosuchformat 2>&1 | filecheck %s --check-prefix=FRONTEND

// MISSING:       cascade-opt: error: cannot read '{{.*}}does-not-exist.mlir': No such file or directory
// MISSING-NOT:   Traceback
// DIRECTORY:     cascade-opt: error: cannot read '{{.*}}tools': Is a directory
// OUTPUT:        cascade-opt: error: cannot write '{{.*}}out.mlir': No such file or directory
// FRONTEND:      argument -f/--frontend: invalid choice: 'nosuchformat'

func.func @f() {
  func.return
}

// RUN: echo 'func.func @f() { func.return }' > %t.txt
// RUN: not cascade-opt %t.txt 2>&1 | filecheck %s --check-prefix=EXTENSION
// EXTENSION:     cascade-opt: error: {{.*}}missing_input.mlir.tmp.txt: Unrecognized file extension 'txt'; known input formats: .mlir, .tflite (or -f FORMAT)
