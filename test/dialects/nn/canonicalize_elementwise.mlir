// The elementwise operators' canonicalization pattern: a reshape from a higher rank moves below
// an elementwise operator that reads it, the operator then running on the higher-rank shape; an
// operand not reshaped is read through an earlier reshape of it to that shape, a smaller operand
// that broadcasts alike over both shapes as it is. A reshape from a lower rank stays, and so
// does an operator with an operand of its shape that nothing reshapes, or with a smaller operand
// that broadcasts otherwise over the wider shape. The program computes the same before and after.
// RUN: cascade-opt %s -p canonicalize | filecheck %s
// RUN: cascade-run %s --seed 2 > %t.reference
// RUN: filecheck %s --check-prefix=VALUES < %t.reference
// RUN: cascade-opt %s -p canonicalize -o %t.sunk.mlir
// RUN: cascade-run %t.sunk.mlir --seed 2 | diff %t.reference -

// %sum reads %x squeezed and %y (expanded by %ye before it): it adds %x and %ye. %m multiplies
// that by the per-channel %k, %t takes its tanh, and %te expands %t back: all on [1, 1, 8, 4],
// and no reshape left between. %q adds %x to the expansion %ye: it stays 4-D. %n subtracts %z,
// which nothing reshapes, from %xs: it stays 3-D. %v adds a value per row (%row, [8, 1]) to
// %u squeezed: over [1, 8, 1, 4] that would be a value per column, so it stays 3-D. %h takes
// the tanh of %p squeezed: a 5-D tanh would not run on the NPU, so it stays 3-D.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %xs = nn.reshape %x {{.*}} : (tensor<1x1x8x4xi8>) -> tensor<1x8x4xi8>
// CHECK-NEXT:    %ye = nn.reshape %y {{.*}} : (tensor<1x8x4xi8>) -> tensor<1x1x8x4xi8>
// CHECK-NEXT:    %sum_4d = nn.add %x, %ye {{.*}} : (tensor<1x1x8x4xi8>, tensor<1x1x8x4xi8>) -> tensor<1x1x8x4xi8>
// CHECK-NEXT:    %m_4d = nn.mul %sum_4d, %k {{.*}} : (tensor<1x1x8x4xi8>, tensor<1x1x4xi8>) -> tensor<1x1x8x4xi8>
// CHECK-NEXT:    %t_4d = nn.tanh %m_4d {{.*}} : (tensor<1x1x8x4xi8>) -> tensor<1x1x8x4xi8>
// CHECK-NEXT:    %q = nn.add %ye, %x {{.*}} : (tensor<1x1x8x4xi8>, tensor<1x1x8x4xi8>) -> tensor<1x1x8x4xi8>
// CHECK-NEXT:    %n = nn.sub %xs, %z {{.*}} : (tensor<1x8x4xi8>, tensor<1x8x4xi8>) -> tensor<1x8x4xi8>
// CHECK-NEXT:    %us = nn.reshape %u {{.*}} : (tensor<1x8x1x4xi8>) -> tensor<1x8x4xi8>
// CHECK-NEXT:    %v = nn.add %us, %row {{.*}} : (tensor<1x8x4xi8>, tensor<8x1xi8>) -> tensor<1x8x4xi8>
// CHECK-NEXT:    %ps = nn.reshape %p {{.*}} : (tensor<1x1x1x8x4xi8>) -> tensor<1x8x4xi8>
// CHECK-NEXT:    %h = nn.tanh %ps {{.*}} : (tensor<1x8x4xi8>) -> tensor<1x8x4xi8>
// CHECK-NEXT:    func.return %t_4d, %q, %n, %v, %h : tensor<1x1x8x4xi8>, tensor<1x1x8x4xi8>, tensor<1x8x4xi8>, tensor<1x8x4xi8>, tensor<1x8x4xi8>
// VALUES: output 0: int8[1, 1, 8, 4] {{.*}} distinct {{[1-9][0-9]+}} sha256
// VALUES: output 1: int8[1, 1, 8, 4] {{.*}} distinct {{[1-9][0-9]+}} sha256
// VALUES: output 2: int8[1, 8, 4] {{.*}} distinct {{[1-9][0-9]+}} sha256
// VALUES: output 3: int8[1, 8, 4] {{.*}} distinct {{[1-9][0-9]+}} sha256
// VALUES: output 4: int8[1, 8, 4] {{.*}} distinct {{[1-9][0-9]+}} sha256
func.func @main(%x: tensor<1x1x8x4xi8>, %y: tensor<1x8x4xi8>, %k: tensor<1x1x4xi8>, %z: tensor<1x8x4xi8>, %u: tensor<1x8x1x4xi8>, %row: tensor<8x1xi8>, %p: tensor<1x1x1x8x4xi8>) -> (tensor<1x1x8x4xi8>, tensor<1x1x8x4xi8>, tensor<1x8x4xi8>, tensor<1x8x4xi8>, tensor<1x8x4xi8>) {
  %xs = nn.reshape %x {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x1x8x4xi8>) -> tensor<1x8x4xi8>
  %ye = nn.reshape %y {input_quant = #nn.quant<0.25:-3>, output_quant = #nn.quant<0.25:-3>} : (tensor<1x8x4xi8>) -> tensor<1x1x8x4xi8>
  %sum = nn.add %xs, %y {activation = #nn<activation none>, input_quant = #nn.quant<0.5:1>, input2_quant = #nn.quant<0.25:-3>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x4xi8>, tensor<1x8x4xi8>) -> tensor<1x8x4xi8>
  %m = nn.mul %sum, %k {activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, input2_quant = #nn.quant<0.0005:2>, output_quant = #nn.quant<0.03125:0>} : (tensor<1x8x4xi8>, tensor<1x1x4xi8>) -> tensor<1x8x4xi8>
  %t = nn.tanh %m {input_quant = #nn.quant<0.03125:0>, output_quant = #nn.quant<0.0078125:0>} : (tensor<1x8x4xi8>) -> tensor<1x8x4xi8>
  %te = nn.reshape %t {input_quant = #nn.quant<0.0078125:0>, output_quant = #nn.quant<0.0078125:0>} : (tensor<1x8x4xi8>) -> tensor<1x1x8x4xi8>
  %q = nn.add %ye, %x {activation = #nn<activation none>, input_quant = #nn.quant<0.25:-3>, input2_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:0>} : (tensor<1x1x8x4xi8>, tensor<1x1x8x4xi8>) -> tensor<1x1x8x4xi8>
  %n = nn.sub %xs, %z {activation = #nn<activation none>, input_quant = #nn.quant<0.5:1>, input2_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x4xi8>, tensor<1x8x4xi8>) -> tensor<1x8x4xi8>
  %us = nn.reshape %u {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x8x1x4xi8>) -> tensor<1x8x4xi8>
  %v = nn.add %us, %row {activation = #nn<activation none>, input_quant = #nn.quant<0.5:1>, input2_quant = #nn.quant<0.25:-3>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x4xi8>, tensor<8x1xi8>) -> tensor<1x8x4xi8>
  %ps = nn.reshape %p {input_quant = #nn.quant<0.03125:0>, output_quant = #nn.quant<0.03125:0>} : (tensor<1x1x1x8x4xi8>) -> tensor<1x8x4xi8>
  %h = nn.tanh %ps {input_quant = #nn.quant<0.03125:0>, output_quant = #nn.quant<0.0078125:0>} : (tensor<1x8x4xi8>) -> tensor<1x8x4xi8>
  func.return %te, %q, %n, %v, %h : tensor<1x1x8x4xi8>, tensor<1x1x8x4xi8>, tensor<1x8x4xi8>, tensor<1x8x4xi8>, tensor<1x8x4xi8>
}
