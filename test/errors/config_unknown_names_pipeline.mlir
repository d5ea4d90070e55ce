// Unknown system config, memory mode, accelerator and striping names given to the whole pipeline.
// ethosu-pipeline checks the names before any work, as cascade-estimate does.
// RUN: cd %S && %exit1 cascade-opt config_unknown_names_pipeline.mlir --ethosu-pipeline='system-config=Nope' 2>&1 | filecheck %s --check-prefix=SYSTEM
// RUN: cd %S && %exit1 cascade-opt config_unknown_names_pipeline.mlir --ethosu-pipeline='memory-mode=Nope' 2>&1 | filecheck %s --check-prefix=MODE
// RUN: cd %S && %exit1 cascade-opt config_unknown_names_pipeline.mlir --ethosu-pipeline='accelerator=ethos-u99' 2>&1 | filecheck %s --check-prefix=ACCEL
// RUN: cd %S && %exit1 cascade-opt config_unknown_names_pipeline.mlir --ethosu-pipeline='striping=columns' 2>&1 | filecheck %s --check-prefix=STRIPING

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// SYSTEM-NOT:  Traceback
// SYSTEM:      {{^}}cascade-opt: error: ethosu-pipeline: unknown system config 'Nope'; expected one of: Ethos_U55_Deep_Embedded, Ethos_U55_High_End_Embedded, Ethos_U65_Client_Server, Ethos_U65_Embedded, Ethos_U65_High_End, Ethos_U65_Mid_End, Ethos_U85_SYS_DRAM_High, Ethos_U85_SYS_DRAM_Low, Ethos_U85_SYS_DRAM_Mid, Ethos_U85_SYS_Flash_High, Ethos_U85_SYS_Flash_Low{{$}}
// SYSTEM-NOT:  {{.}}

// MODE-NOT:  Traceback
// MODE:      {{^}}cascade-opt: error: ethosu-pipeline: unknown memory mode 'Nope'; expected one of: Dedicated_Sram, Dedicated_Sram_256KB, Dedicated_Sram_384KB, Dedicated_Sram_512KB, Shared_Sram, Sram_Only{{$}}
// MODE-NOT:  {{.}}

// ACCEL-NOT:  Traceback
// ACCEL:      {{^}}cascade-opt: error: ethosu-pipeline: unknown accelerator 'ethos-u99'; expected one of: ethos-u55-32, ethos-u55-64, ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512{{$}}
// ACCEL-NOT:  {{.}}

// STRIPING-NOT:  Traceback
// STRIPING:      {{^}}cascade-opt: error: ethosu-pipeline: striping must be one of none, h, hw, c, hc, hwc, got 'columns'{{$}}
// STRIPING-NOT:  {{.}}
