// Valid nn operators whose own parameters the NPU cannot take (stride 4, dilation 3, a depth
// multiplier of 2, batch 2) are kept out of cascades by the planner, even when the smallest plan
// would cascade them: each runs alone, on the CPU, saying why (cascade.on_cpu), and the program
// still runs bit-exactly. Formerly the min-sram plan cascaded the stride-4 convolution and
// lower-to-ethosu refused it ("stride [4, 4] is outside the NPU's range [1, 3]").
// RUN: cascade-opt %s -p 'cascade-plan{objective=min-sram accelerator=ethos-u55-128},rolling-buffer,allocate-memory,lower-to-ethosu' -o %t.mlir
// RUN: filecheck %s < %t.mlir
// RUN: %python -m cascade.passes.lower_to_ethosu %t.mlir %s --seed 3 | filecheck %s --check-prefix=EXEC
// RUN: cascade-opt %S/Inputs/batch2.mlir -p 'cascade-plan{objective=min-sram accelerator=ethos-u55-128},rolling-buffer,allocate-memory,lower-to-ethosu' -o %t.batch.mlir
// RUN: filecheck %s --check-prefix=BATCH < %t.batch.mlir
// RUN: %python -m cascade.passes.lower_to_ethosu %t.batch.mlir %S/Inputs/batch2.mlir --seed 3 | filecheck %s --check-prefix=EXEC
// A rank-3 add (it failed in lower-to-ethosu: "no [height, width, depth] view of shape").
// RUN: cascade-opt %S/Inputs/rank3.mlir --ethosu-pipeline -o %t.rank3.mlir
// RUN: filecheck %s --check-prefix=RANK3 < %t.rank3.mlir
// RUN: %python -m cascade.passes.lower_to_ethosu %t.rank3.mlir %S/Inputs/rank3.mlir --seed 3 | filecheck %s --check-prefix=EXEC

// The first convolution is the only operator on the NPU, and the last one's stream follows the
// three CPU operators. A CPU operator reads its weights where they are: the plan gives it no
// SRAM weight buffer (weights<stream>).
// CHECK:      ethosu.command_stream
// CHECK:      %s4 = nn.conv2d {{.*}}cascade.weights = #cascade.weights<stream>{{.*}}cascade.on_cpu = "stride [4, 4] is outside the NPU's range [1, 3]"
// CHECK-NEXT: %d3 = nn.depthwise_conv2d {{.*}}cascade.weights = #cascade.weights<stream>{{.*}}cascade.on_cpu = "dilation [3, 3] is outside the NPU's range [1, 2]"
// CHECK-NEXT: %m2 = nn.depthwise_conv2d {{.*}}cascade.on_cpu = "depthwise convolution with a depth multiplier needs a rewrite first"
// CHECK-NEXT: ethosu.command_stream
// CHECK-NOT:  = nn.

// BATCH-COUNT-2: nn.conv2d {{.*}}cascade.on_cpu = "the NPU lowering handles batch 1 only"
// BATCH-NOT:     ethosu.command_stream

// RANK3: nn.add {{.*}}cascade.on_cpu = "the NPU lowering handles NHWC (rank 4) and [rows, columns] (rank 2) tensors only"

// EXEC: bit-exact: 1/1 outputs

func.func @main(%x: tensor<1x32x32x8xi8> {nn.quant = #nn.quant<0.5:0>}) -> tensor<1x8x8x8xi8> {
  %w0 = arith.constant dense<"0x12050810030B0EF5EEF8F70F11EC000DF10CF0FF0DF8FAF709F614FEFF00030200140D0C0805F914FFF40EF20F05F0EDFEEDF10113FF0D110D05FE01F600FBF614ECEFF3130810F409FB00EC050E07F201F61310F300120E0906ED0AFFEFF6020900050F08FA0604F0EE07FB04F9F5F2FB0DFCFB0314FC04FE04FE06020713F203FEFAF5EEFC0DEFFC1313F4EC07ECF8000FEF0701F10E0EFF1204111303F7F103F30A12F602EEF3FB1013060303EEFB14FCF4F509ED130F03FF0B02FFF9FE0AEEED09FB0CED11F1FD13F00609FDEF01FD0F07FAEE04F7080FFA1101010B0C1114F2FC12F8EC030A0A0D06F10EFD0E0D13EC0F05FF0C1301EF09F5F5F3F411FAF0F3FCFAF8120F0314F9F1F7EF13F4FEF414F201120110100B0A03030EFD1210FBFC0911EFEEF6FDF20102120AF60C0D0707F809F1051113F8F905FC09F4F2EEFFF4F8110D0E04F00A0411FFF304FE07FBF8F1130AFFF505FC06EFF30AEE07FCEC0B080D10090EF01111080C0A0F10010D11F8EDF2EDFDECF6F608F612F31303F6EDF804F0F2F007EFECFEF803120F02060DFD06F405F5F30B03FBEDF50CFF13100FECEE03F90EF9F2F0F805F10CF8F8070FFD0CF8F10D0B0A1000F40303FB06F6040CEFFE07EE05110D080CFAF9EF09F80FFF10F1F2FAED000607F4F203051210FBF2F610FE140604F004FB0EF1F307070E01FBF8FB0702F8F409F6F4F90EFE04EFFA0A0B030FF8F2EFF40B11F100F10EF106EF0A1109F70EF80A0EFF050FF3ECFDF3100FFBF809FEEF0709EE0B010D0E07F9FB09EEF501120B0DF3F7F60A01"> : tensor<8x3x3x8xi8>
  %w1 = arith.constant dense<"0xF40A061002F110F3EE0CFE06F109FC1406120C0EEF0B04FCF806F4F30F0B040BF909F4FEF2FBF9FDFFEDFA0EFD02F0FB1302EC090BFBED0EF611FAFB0CF1ED0B1114F1F2F909110DFB11F6F1FDEF0714F0F0F3F3010312FE110A0FF3FE110AF40E0BF2EEF6FFF2EDF0F8FBF8FE09F6FE09EE1214F710F61107F6EEFC0AF501F1FDED14000EF1F2F3030F04FF12F3F2070FF6F6010BF70D010805FF0114FC120CF30FFBF3F6F1F9F002141312F5F507130DF40A00FE0002110CED0BF8F90414EE01F511FF0F10F00B0C0D140B0E09F80E0807130AF9F8F9F2EF0B0CF2FC110E0413F90E1204F2F801F7EFF213FB03FD0CF0F7030CFE080C060D12F4FDF5FDEC08F50E09F9FE07FDF4ED02010BF1EE0A090CEC06130BFFFFFCEE090201120913EF1303FC02ED1205ED11FEF005EE020BEF0C04F9F5ECF4F71001F40AFE0E0A1208F002FD0DF2FF0D05ED0DFB070606FDFCF002F7FCF20A11FBFDFFEE0A1000EEF9F20D0CFBFB0EEF0C13FE0A0910ED08FB0F0FF70300020E070B07F603FBFDF0F3FAF706F8F6FD031400FAF9FE11FBF6030B12F7100FFBF9F6F910F8001208F1EFF50FF5F80200EFF414FDF70DFF0DF2FF0D0B07FE0DFB0702F8F401F801080C0B00EEF30A040D00FEF6EEF10703F6FA06FBFBF70610F6F7FFF3011005F2F4EF13FAF70FF8F5F6FCEE06FD130BFB090DF4F2F1EDF90C0BFB000B11F70604050C0BFC0AEEFAF4F610FDEE00EEF1FBFEF50600F10DF1FAF312F70F13F4EDECF3FCF213FF0EECF1FEF2F2ECF70B0C00F3FE05F2FC0DFDFF0D07F20411F4100407F9EE"> : tensor<8x3x3x8xi8>
  %w2 = arith.constant dense<"0xED071404FA0B12F4F013ED10F1F0F7F8F9ED0F0E07111214FB050B070C07FB03F41310040BF9FB01F6ECFC09F60804FD090E130AEFF901EFFDF102F3F7F813FE0212ECF7FD100907"> : tensor<1x3x3x8xi8>
  %w3 = arith.constant dense<"0xFB0EF3FCFAECEF0C12F6EFF1EE0CED080CF4F5F60B120AF70908FDF1F80D01F01101FAED0302F20E00EFF4F70A0B0D0411F80305FBFE080F11F8090B1206F40AF2FB0009F208F1FBF0EDF9130309F5F4110900F70FFFEE0FFDFEFBF704F800EF0EF404F7F3F308EE0CFFFEF4FA0A101105F7EF03020001EFFCF10F100DFF0C0CFAEE0E04FE0F120FECEC0001F5FB030B"> : tensor<1x3x3x16xi8>
  %w4 = arith.constant dense<"0x0BEFFBF6F70DFDFF14FE0A1314F9FCED0AFCECF2F3EFEE03F513030301060CF90503080A0B04EE0C1302FEF4FE030B00F3F20105100D03F10D020E0AF8FCFCF70BFB0802FC08F302F2F00E0D071104F0FBF609F3040EF31108ED01F908F300FF001112EE0CF3F2FF1301040AFFFD08F110FA04140B0A0DF0FE0DF6F80F0CF6EC"> : tensor<8x1x1x16xi8>
  %b8 = arith.constant dense<"0xF5FFFFFFDE0000001C00000035FFFFFFF5FFFFFFE5FFFFFF3E00000061000000"> : tensor<8xi32>
  %b16 = arith.constant dense<"0x66FFFFFF04000000FAFFFFFF37FFFFFFFFFFFFFF27FFFFFF49FFFFFF7EFFFFFF1A010000F3FEFFFFD600000055FFFFFF0C01000022FFFFFF42000000EAFFFFFF"> : tensor<16xi32>
  %a = nn.conv2d %x, %w0, %b8 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.0625:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x32x32x8xi8>, tensor<8x3x3x8xi8>, tensor<8xi32>) -> tensor<1x32x32x8xi8>
  %s4 = nn.conv2d %a, %w1, %b8 {stride = array<i64: 4, 4>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.0625:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x32x32x8xi8>, tensor<8x3x3x8xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
  %d3 = nn.depthwise_conv2d %s4, %w2, %b8 {stride = array<i64: 1, 1>, dilation = array<i64: 3, 3>, padding = array<i64: 3, 3, 3, 3>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.0625:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x8xi8>, tensor<1x3x3x8xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
  %m2 = nn.depthwise_conv2d %d3, %w3, %b16 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.0625:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x8xi8>, tensor<1x3x3x16xi8>, tensor<16xi32>) -> tensor<1x8x8x16xi8>
  %c = nn.conv2d %m2, %w4, %b8 {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.0625:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x8x8x16xi8>, tensor<8x1x1x16xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>
  func.return %c : tensor<1x8x8x8xi8>
}
