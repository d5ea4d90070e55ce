// cascade-run on lowered IR edited by hand: what the streams and the CPU operators need is
// checked, one error line each, where it used to fail inside (KeyError, AssertionError) or in
// the NPU's functional model (an internal FunctionalModelError).
// RUN: cascade-opt %S/../models/ds_cnn_kws.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.mlir
// RUN: cascade-run %t.mlir | filecheck %s --check-prefix=VALID
// RUN: sed -e 's/, cascade.allocated_peak_bytes = [0-9]* : i64//' %t.mlir \
// RUN:   | %exit1 cascade-run - 2>&1 | filecheck %s --check-prefix=PEAK
// RUN: sed -e '0,/ifm <i8, region 1, shape \[49, 10, 1\], at 0,/s//ifm <i8, region 1, shape [49, 10, 1], at 0x7fff0,/' %t.mlir \
// RUN:   | %exit1 cascade-run - 2>&1 | filecheck %s --check-prefix=OUTSIDE

// VALID:   output 0: int8[1, 12]
// PEAK:    {{^}}cascade-run: error: @main has no integer cascade.allocated_peak_bytes (lowered by lower-to-ethosu?){{$}}
// OUTSIDE: {{^}}cascade-run: error: ethosu.command_stream at <stdin>:{{[0-9]+}}:{{[0-9]+}}: the NPU cannot run it: feature map reads outside its region (20752 bytes){{$}}
