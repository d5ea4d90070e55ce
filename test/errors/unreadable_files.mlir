// Unreadable files: a missing file, a directory, an output that cannot be written, an unknown
// extension. One line each, exit status 1. (A file without read permission cannot be tested
// here: the tests may run as root, who reads it anyway.)
// RUN: cd %S && %exit1 cascade-opt %t.missing.mlir 2>&1 | filecheck %s --check-prefix=OPT-MISSING
// RUN: cd %S && %exit1 cascade-run %t.missing.tflite 2>&1 | filecheck %s --check-prefix=EXE-MISSING
// RUN: cd %S && %exit1 cascade-estimate %t.missing.tflite 2>&1 | filecheck %s --check-prefix=EST-MISSING
// RUN: rm -rf %t.dir.tflite && mkdir %t.dir.tflite
// RUN: cd %S && %exit1 cascade-opt %t.dir.tflite 2>&1 | filecheck %s --check-prefix=OPT-DIR
// RUN: cd %S && %exit1 cascade-run %t.dir.tflite 2>&1 | filecheck %s --check-prefix=EXE-DIR
// RUN: cd %S && %exit1 cascade-estimate %t.dir.tflite 2>&1 | filecheck %s --check-prefix=EST-DIR
// RUN: cd %S && %exit1 cascade-opt unreadable_files.mlir -o %t.no-such-dir/out.mlir 2>&1 | filecheck %s --check-prefix=OPT-OUT
// RUN: cd %S && %exit1 cascade-run unreadable_files.mlir --outputs %t.no-such-dir/out.npz 2>&1 | filecheck %s --check-prefix=EXE-OUT
// RUN: cd %S && %exit1 cascade-estimate unreadable_files.mlir --csv %t.no-such-dir/out.csv 2>&1 | filecheck %s --check-prefix=EST-OUT
// RUN: cp %s %t.txt
// RUN: cd %S && %exit1 cascade-opt %t.txt 2>&1 | filecheck %s --check-prefix=OPT-EXT

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// OPT-MISSING-NOT:  Traceback
// OPT-MISSING:      {{^}}cascade-opt: error: cannot read '{{.*}}unreadable_files.mlir.tmp.missing.mlir': No such file or directory{{$}}
// OPT-MISSING-NOT:  {{.}}

// EXE-MISSING-NOT:  Traceback
// EXE-MISSING:      {{^}}cascade-run: error: {{.*}}unreadable_files.mlir.tmp.missing.tflite: cannot read: No such file or directory{{$}}
// EXE-MISSING-NOT:  {{.}}

// EST-MISSING-NOT:  Traceback
// EST-MISSING:      {{^}}cascade-estimate: error: {{.*}}unreadable_files.mlir.tmp.missing.tflite: cannot read: No such file or directory{{$}}
// EST-MISSING-NOT:  {{.}}

// OPT-DIR-NOT:  Traceback
// OPT-DIR:      {{^}}cascade-opt: error: cannot read '{{.*}}unreadable_files.mlir.tmp.dir.tflite': Is a directory{{$}}
// OPT-DIR-NOT:  {{.}}

// EXE-DIR-NOT:  Traceback
// EXE-DIR:      {{^}}cascade-run: error: {{.*}}unreadable_files.mlir.tmp.dir.tflite: cannot read: Is a directory{{$}}
// EXE-DIR-NOT:  {{.}}

// EST-DIR-NOT:  Traceback
// EST-DIR:      {{^}}cascade-estimate: error: {{.*}}unreadable_files.mlir.tmp.dir.tflite: cannot read: Is a directory{{$}}
// EST-DIR-NOT:  {{.}}

// OPT-OUT-NOT:  Traceback
// OPT-OUT:      {{^}}cascade-opt: error: cannot write '{{.*}}unreadable_files.mlir.tmp.no-such-dir/out.mlir': No such file or directory{{$}}
// OPT-OUT-NOT:  {{.}}

// EXE-OUT-NOT:  Traceback
// EXE-OUT:      {{^}}output 0: int8[1, 2, 2, 2] min -67 max 120 distinct 7 sha256 {{[0-9a-f]+}}{{$}}
// EXE-OUT-NEXT: {{^}}cascade-run: error: {{.*}}unreadable_files.mlir.tmp.no-such-dir/out.npz: cannot write: No such file or directory{{$}}
// EXE-OUT-NOT:  {{.}}

// EST-OUT-NOT:  Traceback
// EST-OUT:      {{^}}cascade-estimate: error: {{.*}}unreadable_files.mlir.tmp.no-such-dir/out.csv: cannot write: No such file or directory{{$}}
// EST-OUT-NOT:  {{.}}

// OPT-EXT-NOT:  Traceback
// OPT-EXT:      {{^}}cascade-opt: error: {{.*}}unreadable_files.mlir.tmp.txt: Unrecognized file extension 'txt'; known input formats: .mlir, .tflite (or -f FORMAT){{$}}
// OPT-EXT-NOT:  {{.}}
