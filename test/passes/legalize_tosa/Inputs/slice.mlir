func.func @slice(%x: tensor<1x8x8x4xi8>) -> tensor<1x7x7x4xi8> {
  %start = "tosa.const_shape"() <{values = dense<0> : tensor<4xindex>}> : () -> !tosa.shape<4>
  %size = "tosa.const_shape"() <{values = dense<[1, 7, 7, 4]> : tensor<4xindex>}> : () -> !tosa.shape<4>
  %0 = "tosa.slice"(%x, %start, %size) : (tensor<1x8x8x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x7x7x4xi8>
  return %0 : tensor<1x7x7x4xi8>
}
