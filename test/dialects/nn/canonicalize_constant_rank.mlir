// A constant operand of a lower rank than its elementwise operator's output gets leading 1s
// (broadcasting aligns trailing axes, so it reads the same); one of a single value keeps its
// rank, and so does one of the output's rank. The program computes the same before and after.
// RUN: cascade-opt %s -p canonicalize | filecheck %s
// RUN: cascade-run %s --seed 3 > %t.reference
// RUN: filecheck %s --check-prefix=VALUES < %t.reference
// RUN: cascade-opt %s -p canonicalize -o %t.raised.mlir
// RUN: cascade-run %t.raised.mlir --seed 3 | diff %t.reference -
// Without the pattern the NPU lowering refuses such constants, naming it; with it, the whole
// program runs on the NPU and computes the same.
// RUN: cascade-opt %s -p 'ethosu-pipeline{accelerator=ethos-u55-128}' | filecheck %s --check-prefix=RAW
// RUN: cascade-opt %s -p 'canonicalize,ethosu-pipeline{accelerator=ethos-u55-128}' -o %t.lowered.mlir
// RUN: filecheck %s --check-prefix=LOWERED < %t.lowered.mlir
// RUN: cascade-run %t.lowered.mlir --seed 3 | diff %t.reference -

// %k ([4], read by %a and %s) becomes one [1, 1, 1, 4] constant for both; %r ([2, 1, 4], read
// by %m) [1, 2, 1, 4]; %one ([1]) and %full ([1, 2, 3, 4]) stay as they are.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     tensor<4xi8>
// CHECK-DAG:     %k = arith.constant dense<{{\[\[\[\[}}-50, 3, 41, 90]]]]> : tensor<1x1x1x4xi8>
// CHECK-DAG:     %r = arith.constant dense<{{.*}}> : tensor<1x2x1x4xi8>
// CHECK-DAG:     %one = arith.constant dense<17> : tensor<1xi8>
// CHECK-DAG:     %full = arith.constant dense<{{.*}}> : tensor<1x2x3x4xi8>
// CHECK:         %a = nn.add %x, %k {{.*}} : (tensor<1x2x3x4xi8>, tensor<1x1x1x4xi8>) -> tensor<1x2x3x4xi8>
// CHECK-NEXT:    %s = nn.sub %k, %a {{.*}} : (tensor<1x1x1x4xi8>, tensor<1x2x3x4xi8>) -> tensor<1x2x3x4xi8>
// CHECK-NEXT:    %m = nn.mul %s, %r {{.*}} : (tensor<1x2x3x4xi8>, tensor<1x2x1x4xi8>) -> tensor<1x2x3x4xi8>
// CHECK-NEXT:    %b = nn.add %m, %one {{.*}} : (tensor<1x2x3x4xi8>, tensor<1xi8>) -> tensor<1x2x3x4xi8>
// CHECK-NEXT:    %c = nn.maximum %b, %full {{.*}} : (tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>) -> tensor<1x2x3x4xi8>
// RAW: %a = nn.add {{.*}}cascade.on_cpu = "a constant operand of a lower rank is not lowered (-p canonicalize gives it the output's rank)"
// LOWERED-NOT: on_cpu
// LOWERED: ethosu.command_stream
// LOWERED-NOT: on_cpu
// VALUES: output 0: int8[1, 2, 3, 4] {{.*}} distinct {{[1-9][0-9]+}} sha256
func.func @main(%x: tensor<1x2x3x4xi8>) -> tensor<1x2x3x4xi8> {
  %k = arith.constant dense<[-50, 3, 41, 90]> : tensor<4xi8>
  %r = arith.constant dense<[[[20, -7, 33, -61]], [[5, 70, -19, 2]]]> : tensor<2x1x4xi8>
  %one = arith.constant dense<17> : tensor<1xi8>
  %full = arith.constant dense<[[[[-60, -50, -40, -30], [-20, -10, 0, 10], [20, 30, 40, 50]], [[-55, -45, -35, -25], [-15, -5, 5, 15], [25, 35, 45, 55]]]]> : tensor<1x2x3x4xi8>
  %a = nn.add %x, %k {activation = #nn<activation none>, input_quant = #nn.quant<0.1:0>, input2_quant = #nn.quant<0.05:2>, output_quant = #nn.quant<0.15:-1>} : (tensor<1x2x3x4xi8>, tensor<4xi8>) -> tensor<1x2x3x4xi8>
  %s = nn.sub %k, %a {activation = #nn<activation none>, input_quant = #nn.quant<0.05:2>, input2_quant = #nn.quant<0.15:-1>, output_quant = #nn.quant<0.2:3>} : (tensor<4xi8>, tensor<1x2x3x4xi8>) -> tensor<1x2x3x4xi8>
  %m = nn.mul %s, %r {activation = #nn<activation none>, input_quant = #nn.quant<0.2:3>, input2_quant = #nn.quant<0.02:1>, output_quant = #nn.quant<0.1:-2>} : (tensor<1x2x3x4xi8>, tensor<2x1x4xi8>) -> tensor<1x2x3x4xi8>
  %b = nn.add %m, %one {activation = #nn<activation none>, input_quant = #nn.quant<0.1:-2>, input2_quant = #nn.quant<0.1:0>, output_quant = #nn.quant<0.1:0>} : (tensor<1x2x3x4xi8>, tensor<1xi8>) -> tensor<1x2x3x4xi8>
  %c = nn.maximum %b, %full {activation = #nn<activation none>, input_quant = #nn.quant<0.1:0>, input2_quant = #nn.quant<0.1:0>, output_quant = #nn.quant<0.1:0>} : (tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>) -> tensor<1x2x3x4xi8>
  func.return %c : tensor<1x2x3x4xi8>
}
