// Names that are not ASCII: the printer escapes their UTF-8 bytes (loc("entr\C3\A9e") for
// "entrée"), and the parser reads that back as the same string, as MLIR does. xDSL 0.75 read
// it as bytes: the location did not parse, and a string attribute came back as bytes.
// RUN: cascade-opt %s --print-debuginfo | cascade-opt --print-debuginfo | filecheck %s
// RUN: cascade-opt %s -p 'ethosu-pipeline{accelerator=ethos-u55-128}' --report %t.json -o %t.mlir 2>/dev/null
// RUN: filecheck %s --check-prefix=REPORT < %t.json

// CHECK:      builtin.module attributes {test.label = "caf\C3\A9"} {
// CHECK-NEXT:   func.func @main(%x: tensor<1x8x8x4xi8> loc("entr\C3\A9e")) -> tensor<1x8x8x4xi8> {
// CHECK-NEXT:     %y = nn.pool2d %x {{.*}} loc("sortie_\C3\A9\22q\\")

// The report names the operator by its location, decoded.
// REPORT: "name": "sortie_\u00e9\"q\\"

builtin.module attributes {test.label = "caf\C3\A9"} {
  func.func @main(%x: tensor<1x8x8x4xi8> loc("entr\C3\A9e")) -> tensor<1x8x8x4xi8> {
    %y = nn.pool2d %x {input_quant = #nn.quant<0.05:-3>, kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 1, 1>, activation = #nn<activation none>, output_quant = #nn.quant<0.05:-3>} : (tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8> loc("sortie_\C3\A9\22q\\")
    func.return %y : tensor<1x8x8x4xi8>
  }
}
