// --disassemble reads a command stream back as ethosu IR: lowering resnet8, serializing it with
// -t ethosu-cs and disassembling gives the same sequence of operations; the accelerator comes
// from the stream's header comment. A model without ethos-u operators is one error line.
// RUN: cascade-opt %models/resnet8.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.mlir
// RUN: cascade-opt %t.mlir -t ethosu-cs -o %t.cs
// RUN: cascade-opt --disassemble %t.cs -o %t.dis.mlir
// RUN: filecheck %s < %t.dis.mlir
// RUN: grep -o '^ *ethosu\.[a-z_0-9]*' %t.mlir | sed 's/^ *//' > %t.lowered.ops
// RUN: grep -o '^ *ethosu\.[a-z_0-9]*' %t.dis.mlir | sed 's/^ *//' > %t.decoded.ops
// RUN: diff %t.lowered.ops %t.decoded.ops
// RUN: cascade-opt --disassemble %t.cs | cascade-opt -t ethosu-cs -o %t.again.cs
// RUN: filecheck %s --check-prefix=REPRINT < %t.again.cs
// Serialized again, the disassembly is the same stream, word for word:
// RUN: diff %t.cs %t.again.cs
// RUN: not cascade-opt --disassemble %models/resnet8.tflite 2>&1 | filecheck %s --check-prefix=NOT-VELA
// Passes and --report have nothing to act on (they were ignored, the report not written):
// RUN: not cascade-opt --disassemble %t.cs -p canonicalize 2>&1 | filecheck %s --check-prefix=NO-PASSES
// RUN: not cascade-opt --disassemble %t.cs --rolling-buffer 2>&1 | filecheck %s --check-prefix=NO-PASSES
// RUN: not cascade-opt --disassemble %t.cs --report %t.json 2>&1 | filecheck %s --check-prefix=NO-REPORT

// The stream opens with the copies of the weights of the two convolutions of the first
// cascade, prefetched while the first convolution runs (its own weights stream from flash).
// CHECK:      builtin.module {
// CHECK-NEXT:   ethosu.command_stream "ethos-u55-128" {
// CHECK-NEXT:     ethosu.dma src <0, {{.*}}> dest <1, {{.*}}>
// CHECK-NEXT:     ethosu.dma src <0, {{.*}}> dest <1, {{.*}}>
// CHECK-NEXT:     ethosu.conv2d ifm <i8, region 1, shape [32, 32, 3], {{.*}} weights [#ethosu.address_range<0,
// CHECK-NOT:  ethosu.flash

// REPRINT: // ethosu.command_stream 0 (ethos-u55-128): command stream, {{[0-9]+}} words

// NOT-VELA: cascade-opt: error: {{.*}}resnet8.tflite: the .tflite has no ethos-u operator
// NO-PASSES: {{^}}cascade-opt: error: --disassemble takes no passes: it only decodes the stream (pipe its output into cascade-opt for more){{$}}
// NO-REPORT: {{^}}cascade-opt: error: --disassemble takes no --report: it only decodes the stream (pipe its output into cascade-opt for more){{$}}
