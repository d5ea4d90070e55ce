// The network that scripts/quickstart.sh runs parses, verifies and prints back unchanged.
// RUN: cascade-opt %inputs/example_nn.mlir | filecheck %s
// RUN: cascade-opt %inputs/example_nn.mlir | cascade-opt | filecheck %s

// CHECK-LABEL: func.func @block(%image: tensor<1x16x16x3xi8>
// CHECK-NEXT:    %0 = nn.conv2d %image, %w0, %b0 {stride = array<i64: 2, 2>
// CHECK-SAME:      -> tensor<1x8x8x8xi8>
// CHECK-NEXT:    %1 = nn.depthwise_conv2d %0, %w1, %b1
// CHECK-NEXT:    %2 = nn.conv2d %1, %w2, %b2
// CHECK-NEXT:    %3 = nn.pool2d %2 {kind = #nn<pool_kind avg>
// CHECK-SAME:      -> tensor<1x4x4x16xi8>
// CHECK-NEXT:    func.return %3 : tensor<1x4x4x16xi8>
