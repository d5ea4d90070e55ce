// A hand-written cascade striped along channels whose second operator, a 1x1 convolution,
// reads every channel of the first one's output for each of its own: no stripe of channels can
// run it. The passes after cascade-plan name the operator, not an internal error. The same
// cascade cut into rows is fine (row stripes of a 1x1 convolution read the same rows).
// RUN: cd %S && %exit1 cascade-opt cascade_stripes_impossible.mlir --rolling-buffer 2>&1 | filecheck %s
// RUN: cd %S && %exit1 cascade-opt cascade_stripes_impossible.mlir --allocate-memory 2>&1 | filecheck %s
// RUN: cd %S && sed -e 's/stripe_shape \[1, 4, 4, 8\] stripe_order \[3\]/stripe_shape [1, 2, 4, 16] stripe_order [1]/' \
// RUN:   -e 's/offset = affine_map<(d0) -> (0, 0, 0, (d0 \* 8))>/offset = affine_map<(d0) -> (0, (d0 * 2), 0, 0)>/' \
// RUN:   -e 's/shape = \[1, 4, 4, 8\]/shape = [1, 2, 4, 16]/' cascade_stripes_impossible.mlir \
// RUN:   | cascade-opt --rolling-buffer --allocate-memory | filecheck %s --check-prefix=ROWS

func.func @main(%x: tensor<1x4x4x8xi8>) -> tensor<1x4x4x16xi8> {
  %w0 = arith.constant dense<1> : tensor<16x1x1x8xi8>
  %w1 = arith.constant dense<1> : tensor<16x1x1x16xi8>
  %b = arith.constant dense<0> : tensor<16xi32>
  %y = cascade.group ins(%x_1 = %x : tensor<1x4x4x8xi8>) -> tensor<1x4x4x16xi8> stripe_shape [1, 4, 4, 8] stripe_order [3] num_stripes [2] weights stream {
    %t0 = nn.conv2d %x_1, %w0, %b {cascade.stripe = #cascade.stripe<shape = [1, 4, 4, 8], offset = affine_map<(d0) -> (0, 0, 0, (d0 * 8))>, mode = recompute>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x8xi8>, tensor<16x1x1x8xi8>, tensor<16xi32>) -> tensor<1x4x4x16xi8>
    %t1 = nn.conv2d %t0, %w1, %b {cascade.stripe = #cascade.stripe<shape = [1, 4, 4, 8], offset = affine_map<(d0) -> (0, 0, 0, (d0 * 8))>>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x16xi8>, tensor<16x1x1x16xi8>, tensor<16xi32>) -> tensor<1x4x4x16xi8>
    cascade.yield %t1 : tensor<1x4x4x16xi8>
  }
  func.return %y : tensor<1x4x4x16xi8>
}

// CHECK-NOT:  Traceback
// CHECK:      {{^}}cascade-opt: error: nn.conv2d at cascade_stripes_impossible.mlir:18:5 in a cascade of stripes c8: each of its output channels reads every channel of t0, which the cascade computes: a cascade striped on channels may start with such an operator, not continue with it{{$}}
// CHECK-NOT:  {{.}}

// ROWS:       cascade.for_stripes
// ROWS-SAME:    stripe_order [1] num_stripes [2]
