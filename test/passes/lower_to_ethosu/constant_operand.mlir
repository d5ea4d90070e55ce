// An elementwise operator with a constant operand stays on the CPU, saying why: the lowering
// reads both operands from the arena, where no constant is placed (it used to read the add's
// constant at its output's address, and every element came out wrong, silently).
// REQUIRES: litert
// RUN: %python %S/Inputs/add_constant.py %t.tflite
// RUN: cascade-opt %t.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.mlir
// RUN: filecheck %s < %t.mlir
// RUN: cascade-run %t.mlir --seed 1 --compare-tflite %t.tflite | filecheck %s --check-prefix=EXEC

// CHECK: nn.add {{.*}}cascade.on_cpu = "a constant operand of an elementwise operator is not lowered to the NPU"
// EXEC: bit-exact: 1/1 tensors
