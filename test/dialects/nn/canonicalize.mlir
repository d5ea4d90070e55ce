// nn.reshape's canonicalization patterns: a chain of reshapes is one reshape of the first
// input, a reshape to its input's own shape is that input; a reshape another operator also
// reads stays. The program computes the same before and after.
// RUN: cascade-opt %s -p canonicalize | filecheck %s
// RUN: cascade-run %s --seed 1 > %t.reference
// RUN: filecheck %s --check-prefix=VALUES < %t.reference
// RUN: cascade-opt %s -p canonicalize -o %t.folded.mlir
// RUN: cascade-run %t.folded.mlir --seed 1 | diff %t.reference -

// Squeezed then expanded back (%e, and %b from %a): %x itself. Reshaped twice (%f): one
// reshape of %x. %a is returned too, so the reshape producing it stays.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %f = nn.reshape %x {{.*}} : (tensor<1x1x8x4xi8>) -> tensor<1x32xi8>
// CHECK-NEXT:    %a = nn.reshape %x {{.*}} : (tensor<1x1x8x4xi8>) -> tensor<1x8x4xi8>
// CHECK-NEXT:    func.return %x, %f, %a, %x : tensor<1x1x8x4xi8>, tensor<1x32xi8>, tensor<1x8x4xi8>, tensor<1x1x8x4xi8>
// VALUES: output 0: int8[1, 1, 8, 4] {{.*}} distinct {{[1-9][0-9]+}} sha256
func.func @main(%x: tensor<1x1x8x4xi8>) -> (tensor<1x1x8x4xi8>, tensor<1x32xi8>, tensor<1x8x4xi8>, tensor<1x1x8x4xi8>) {
  %s = nn.reshape %x {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x1x8x4xi8>) -> tensor<1x8x4xi8>
  %e = nn.reshape %s {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x8x4xi8>) -> tensor<1x1x8x4xi8>
  %t = nn.reshape %x {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x1x8x4xi8>) -> tensor<1x2x4x4xi8>
  %f = nn.reshape %t {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x2x4x4xi8>) -> tensor<1x32xi8>
  %a = nn.reshape %x {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x1x8x4xi8>) -> tensor<1x8x4xi8>
  %b = nn.reshape %a {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x8x4xi8>) -> tensor<1x1x8x4xi8>
  func.return %e, %f, %a, %b : tensor<1x1x8x4xi8>, tensor<1x32xi8>, tensor<1x8x4xi8>, tensor<1x1x8x4xi8>
}
