// -t ethosu-tflite: lowered ds_cnn as a .tflite in Vela's format. The scratch tensor is the
// allocated peak of the IR, the model input sits at its placement (8000, as the IR says) inside
// it; the custom operator reads the input and leaves the pooled features for the CPU's
// FULLY_CONNECTED and SOFTMAX. Two runs give the same bytes, and so does stdout when it is not
// a terminal. The command stream inside disassembles to the lowered IR's operations.
// RUN: cascade-opt %models/ds_cnn_kws.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' --print-debuginfo -o %t.mlir
// RUN: cascade-opt %t.mlir -t ethosu-tflite -o %t.tflite
// RUN: cascade-opt %t.mlir -t ethosu-tflite -o %t.again.tflite
// RUN: cmp %t.tflite %t.again.tflite
// RUN: cascade-opt %t.mlir -t ethosu-tflite > %t.stdout.tflite
// RUN: cmp %t.tflite %t.stdout.tflite
// RUN: %python %inputs/ethosu_tflite_summary.py %t.tflite > %t.summary
// RUN: grep -o 'allocated_peak_bytes = [0-9]*\|<sram, [0-9]*, [0-9]*>[^}]*} loc("serving[^"]*")' %t.mlir > %t.ir
// RUN: cat %t.ir %t.summary | filecheck %s
// RUN: cascade-opt --disassemble %t.tflite -o %t.dis.mlir
// RUN: grep -o '^ *ethosu\.[a-z_0-9]*' %t.mlir | sed 's/^ *//' > %t.lowered.ops
// RUN: grep -o '^ *ethosu\.[a-z_0-9]*' %t.dis.mlir | sed 's/^ *//' > %t.decoded.ops
// RUN: diff %t.lowered.ops %t.decoded.ops

// CHECK:      <sram, [[IN:[0-9]+]], {{[0-9]+}}>, nn.quant = #nn.quant<{{.*}}>} loc("serving_default_keras_tensor_490:0")
// CHECK:      allocated_peak_bytes = [[PEAK:[0-9]+]]
// CHECK:      metadata OfflineMemoryAllocation: version 0, subgraphs 1, tensors 8
// CHECK-NEXT: operator 0: ethos-u 010401
// CHECK-NEXT:   in  'ethos_u_command_stream' uint8[{{[0-9]+}}] const COP1
// CHECK-NEXT:   in  'read_only' uint8[{{[0-9]+}}] const
// CHECK-NEXT:   in  'scratch' uint8[[[PEAK]]] at 0
// CHECK-NEXT:   in  'scratch' uint8[[[PEAK]]] at 0
// CHECK-NEXT:   in  'serving_default_keras_tensor_490:0' int8[1x49x10x1] at [[IN]] quant 0.00783832:0
// CHECK-NEXT:   out '[[POOLED:functional_2_1/global_average_pooling2d_4_1/Mean]]' int8[1x64] at {{[0-9]+}} quant
// CHECK-NEXT: operator 1: FULLY_CONNECTED
// CHECK-NEXT:   in  '[[POOLED]]'
// CHECK-NEXT:   in  'functional_2_1/dense_2_1/MatMul1' int8[12x64] const
// CHECK-NEXT:   in  none
// CHECK-NEXT:   out '[[LOGITS:.*MatMul2]]' int8[1x12]
// CHECK-NEXT: operator 2: SOFTMAX
// CHECK-NEXT:   in  '[[LOGITS]]'
// CHECK-NEXT:   out 'StatefulPartitionedCall_1:0' int8[1x12] at {{[0-9]+}} quant 0.00390625:-128
// CHECK-NEXT: inputs 'serving_default_keras_tensor_490:0' int8[1x49x10x1] at [[IN]]
// CHECK-NEXT: outputs 'StatefulPartitionedCall_1:0' int8[1x12]
