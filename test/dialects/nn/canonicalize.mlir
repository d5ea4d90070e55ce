// nn.reshape's canonicalization patterns: a chain of reshapes is one reshape of the first
// input, a reshape to its input's own shape is that input; a reshape another operator also
// reads stays.
// RUN: cascade-opt %s -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @squeeze_then_expand
// CHECK-NEXT:    func.return %x : tensor<1x1x8x4xi8>
func.func @squeeze_then_expand(%x: tensor<1x1x8x4xi8>) -> tensor<1x1x8x4xi8> {
  %s = nn.reshape %x {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x1x8x4xi8>) -> tensor<1x8x4xi8>
  %e = nn.reshape %s {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x8x4xi8>) -> tensor<1x1x8x4xi8>
  func.return %e : tensor<1x1x8x4xi8>
}

// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %f = nn.reshape %x {{.*}} : (tensor<1x2x4x4xi8>) -> tensor<1x32xi8>
// CHECK-NEXT:    func.return %f : tensor<1x32xi8>
func.func @chain(%x: tensor<1x2x4x4xi8>) -> tensor<1x32xi8> {
  %a = nn.reshape %x {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x2x4x4xi8>) -> tensor<1x8x4xi8>
  %f = nn.reshape %a {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x8x4xi8>) -> tensor<1x32xi8>
  func.return %f : tensor<1x32xi8>
}

// CHECK-LABEL: func.func @shared
// CHECK-NEXT:    %a = nn.reshape %x {{.*}} : (tensor<1x1x8x4xi8>) -> tensor<1x8x4xi8>
// CHECK-NEXT:    func.return %x, %a : tensor<1x1x8x4xi8>, tensor<1x8x4xi8>
func.func @shared(%x: tensor<1x1x8x4xi8>) -> (tensor<1x1x8x4xi8>, tensor<1x8x4xi8>) {
  %a = nn.reshape %x {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x1x8x4xi8>) -> tensor<1x8x4xi8>
  %b = nn.reshape %a {input_quant = #nn.quant<0.5:1>, output_quant = #nn.quant<0.5:1>} : (tensor<1x8x4xi8>) -> tensor<1x1x8x4xi8>
  func.return %b, %a : tensor<1x1x8x4xi8>, tensor<1x8x4xi8>
}
