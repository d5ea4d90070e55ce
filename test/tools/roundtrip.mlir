// CASCADE_ROUNDTRIP and CASCADE_GENERIC_ROUNDTRIP on builtin IR: both syntaxes parse back.
// RUN: CASCADE_ROUNDTRIP
// RUN: CASCADE_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @scale
// CHECK-NEXT:  %c = arith.constant 3 : i32
// CHECK-NEXT:  %0 = arith.muli %a, %c : i32
// CHECK-NEXT:  func.return %0 : i32

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "scale", function_type = (i32) -> i32}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%a: i32):
// CHECK-GENERIC-NEXT:    %c = "arith.constant"() <{value = 3 : i32}> : () -> i32
// CHECK-GENERIC-NEXT:    %0 = "arith.muli"(%a, %c) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
// CHECK-GENERIC-NEXT:    "func.return"(%0) : (i32) -> ()

func.func @scale(%a: i32) -> i32 {
  %c = arith.constant 3 : i32
  %0 = arith.muli %a, %c : i32
  func.return %0 : i32
}

// -----

// CHECK:         {{//}} -----
// CHECK-LABEL:   func.func @tensor_identity(%x: tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8>
// CHECK-GENERIC: {{//}} -----
// CHECK-GENERIC: "func.func"() <{sym_name = "tensor_identity", function_type = (tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8>}>

func.func @tensor_identity(%x: tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8> {
  func.return %x : tensor<1x8x8x4xi8>
}
