// ds_cnn_kws (with softmax), planned at a budget, lowered to one command stream; fully_connected
// and softmax stay nn operators on the CPU, reading their input back
// (every test model is run in test/unit/test_lower_to_ethosu.py).
// RUN: cascade-opt %models/ds_cnn_kws.tflite --cascade-plan='accelerator=ethos-u55-128 sram-budget=30000' \
// RUN:   --rolling-buffer --allocate-memory=accelerator=ethos-u55-128 --lower-to-ethosu=accelerator=ethos-u55-128 \
// RUN:   > %t.ds.mlir
// RUN: filecheck %s < %t.ds.mlir
// Its softmax answers 1/12 for every class on any input (-107: the logits' scale is too fine for
// beta to tell them apart, in LiteRT too), so an equal output would prove little: the pooled
// features the CPU reads from the NPU are compared too. The model without softmax runs alike,
// and its logits (an output) are compared.
// RUN: %python -m cascade.passes.lower_to_ethosu %t.ds.mlir %models/ds_cnn_kws.tflite | filecheck %s --check-prefix=FEATURES
// RUN: cascade-opt %models/ds_cnn_kws_nosoftmax.tflite --cascade-plan='accelerator=ethos-u55-128 sram-budget=30000' \
// RUN:   --rolling-buffer --allocate-memory=accelerator=ethos-u55-128 --lower-to-ethosu=accelerator=ethos-u55-128 \
// RUN:   > %t.logits.mlir
// RUN: %python -m cascade.passes.lower_to_ethosu %t.logits.mlir %models/ds_cnn_kws_nosoftmax.tflite | filecheck %s --check-prefix=EXEC
// mbv1_025_96's random weights saturate it: on these inputs even its pooled features hold one
// value, and a run where every compared tensor does is refused.
// RUN: cascade-opt %models/mbv1_025_96.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' > %t.mbv1.mlir
// RUN: not %python -m cascade.passes.lower_to_ethosu %t.mbv1.mlir %models/mbv1_025_96.tflite | filecheck %s --check-prefix=CONSTANT

// CHECK:      func.func @main(
// CHECK:        ethosu.command_stream "ethos-u55-128" attributes {ethosu.flash = array<i8:
// CHECK:        builtin.unrealized_conversion_cast to tensor<1x64xi8> {cascade.placement = #cascade.placement<sram,
// CHECK-NEXT:   nn.fully_connected
// CHECK-NEXT:   nn.softmax
// CHECK-NEXT:   func.return

// EXEC:       npu commands: {{[1-9][0-9]*}} in 1 streams
// EXEC-NEXT:  bit-exact: 1/1 outputs
// EXEC-NOT:   degenerate

// FEATURES:      bit-exact: 1/1 outputs
// FEATURES-NEXT: bit-exact: 1/1 tensors read from the NPU
// FEATURES-NOT:  degenerate

// CONSTANT:      bit-exact: 1/1 outputs
// CONSTANT-NEXT: bit-exact: 1/1 tensors read from the NPU
// CONSTANT-NEXT: degenerate: every tensor compared holds one value; choose another program or seed
