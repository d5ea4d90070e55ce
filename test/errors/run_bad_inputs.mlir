// cascade-run with inputs and references it cannot use: one line naming the file, exit status 1.
// RUN: cd %S && %exit1 cascade-run run_bad_inputs.mlir --inputs %t.missing.npz 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: %python -c "import numpy; numpy.save('%t.npy', numpy.zeros(3))"
// RUN: cd %S && %exit1 cascade-run run_bad_inputs.mlir --inputs %t.npy 2>&1 | filecheck %s --check-prefix=NPY
// RUN: %python -c "import numpy; numpy.savez('%t.shape.npz', numpy.zeros((1, 4, 4, 3), numpy.int8))"
// RUN: cd %S && %exit1 cascade-run run_bad_inputs.mlir --inputs %t.shape.npz 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: %python -c "import numpy; numpy.savez('%t.dtype.npz', numpy.zeros((1, 4, 4, 2), numpy.float32))"
// RUN: cd %S && %exit1 cascade-run run_bad_inputs.mlir --inputs %t.dtype.npz 2>&1 | filecheck %s --check-prefix=DTYPE
// RUN: %python -c "import numpy; numpy.savez('%t.extra.npz', numpy.ones((1, 4, 4, 2), numpy.int8), x=numpy.ones((1, 4, 4, 2), numpy.int8))"
// RUN: cd %S && %exit1 cascade-run run_bad_inputs.mlir --inputs %t.extra.npz 2>&1 | filecheck %s --check-prefix=EXTRA
// RUN: cd %S && %exit1 cascade-run run_bad_inputs.mlir --compare-tflite run_bad_inputs.mlir 2>&1 | filecheck %s --check-prefix=NOT-TFLITE
// RUN: cd %S && %exit1 cascade-run run_bad_inputs.mlir --compare-tflite %t.missing.tflite 2>&1 | filecheck %s --check-prefix=REF-MISSING

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// MISSING-NOT:  Traceback
// MISSING:      {{^}}cascade-run: error: {{.*}}run_bad_inputs.mlir.tmp.missing.npz: cannot read inputs: No such file or directory{{$}}
// MISSING-NOT:  {{.}}

// NPY-NOT:  Traceback
// NPY:      {{^}}cascade-run: error: {{.*}}run_bad_inputs.mlir.tmp.npy: cannot read inputs: expected an .npz archive (numpy.savez), got a single array{{$}}
// NPY-NOT:  {{.}}

// SHAPE-NOT:  Traceback
// SHAPE:      {{^}}cascade-run: error: {{.*}}run_bad_inputs.mlir.tmp.shape.npz: input 'arr_0' is int8[1, 4, 4, 3], expected int8[1, 4, 4, 2]{{$}}
// SHAPE-NOT:  {{.}}

// EXTRA-NOT:  Traceback
// EXTRA:      {{^}}cascade-run: error: {{.*}}run_bad_inputs.mlir.tmp.extra.npz: no input of @main takes 'x' (it has 1 input: arr_0, ... or their names){{$}}
// EXTRA-NOT:  {{.}}

// DTYPE-NOT:  Traceback
// DTYPE:      {{^}}cascade-run: error: {{.*}}run_bad_inputs.mlir.tmp.dtype.npz: input 'arr_0' is float32[1, 4, 4, 2], expected int8[1, 4, 4, 2]{{$}}
// DTYPE-NOT:  {{.}}

// NOT-TFLITE-NOT:  Traceback
// NOT-TFLITE:      {{^}}cascade-run: error: run_bad_inputs.mlir: not a TFLite file: the flatbuffer identifier 'TFL3' is missing{{$}}
// NOT-TFLITE-NOT:  {{.}}

// REF-MISSING-NOT:  Traceback
// REF-MISSING:      {{^}}cascade-run: error: {{.*}}run_bad_inputs.mlir.tmp.missing.tflite: cannot read: No such file or directory{{$}}
// REF-MISSING-NOT:  {{.}}
