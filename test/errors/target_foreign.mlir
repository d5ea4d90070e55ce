// xDSL's other targets print their own dialects: given nn operations they failed deep inside
// (riscv-asm's message was the whole module) or printed nothing and exited 0 (wat, wgsl, csl).
// RUN: cd %S && %exit1 cascade-opt target_foreign.mlir -t riscv-asm 2>&1 | filecheck %s --check-prefix=ASM
// RUN: cd %S && %exit1 cascade-opt target_foreign.mlir -t wat 2>&1 | filecheck %s --check-prefix=WAT
// A pass whose message holds the whole module shows its start and its end, on one line:
// RUN: cd %S && %exit1 cascade-opt target_foreign.mlir -p transform-interpreter 2>&1 | filecheck %s --check-prefix=LONG
// RUN: cd %S && cascade-opt target_foreign.mlir -t mlir | filecheck %s --check-prefix=MLIR

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// ASM:      {{^}}cascade-opt: error: -t riscv-asm: xDSL's riscv-asm target does not take nn/cascade/ethosu operations (nn.pool2d at target_foreign.mlir:10:3); use -t mlir, ethosu-cs or ethosu-tflite{{$}}
// ASM-NOT:  {{.}}
// WAT:      {{^}}cascade-opt: error: -t wat: xDSL's wat target does not take nn/cascade/ethosu operations (nn.pool2d at target_foreign.mlir:10:3)
// LONG:     {{^}}cascade-opt: error: ModuleOp( ... ) could not find a nested named sequence with name: __transform_main{{$}}
// LONG-NOT: {{.}}
// MLIR:     nn.pool2d
