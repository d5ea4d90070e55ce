// Unknown accelerator, system config and memory mode names: one line listing the valid names.
// RUN: cd %S && %exit1 cascade-opt config_unknown_names.mlir --cascade-plan='accelerator=ethos-u99' 2>&1 | filecheck %s --check-prefix=PLAN
// RUN: cd %S && %exit1 cascade-opt config_unknown_names.mlir --allocate-memory='accelerator=ethos-u99' 2>&1 | filecheck %s --check-prefix=ALLOC
// RUN: cd %S && %exit1 cascade-estimate config_unknown_names.mlir --accelerator ethos-u99 2>&1 | filecheck %s --check-prefix=ACCEL
// RUN: cd %S && %exit1 cascade-estimate config_unknown_names.mlir --system-config Nope 2>&1 | filecheck %s --check-prefix=SYSTEM
// RUN: cd %S && %exit1 cascade-estimate config_unknown_names.mlir --memory-mode Nope 2>&1 | filecheck %s --check-prefix=MODE

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// PLAN-NOT:  Traceback
// PLAN:      {{^}}cascade-opt: error: cascade-plan: unknown accelerator 'ethos-u99'; expected one of: ethos-u55-32, ethos-u55-64, ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512{{$}}
// PLAN-NOT:  {{.}}

// The pass that needs the accelerator names itself, and says it once.
// ALLOC-NOT:  Traceback
// ALLOC:      {{^}}cascade-opt: error: allocate-memory: unknown accelerator 'ethos-u99'; expected one of: ethos-u55-32, ethos-u55-64, ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512{{$}}
// ALLOC-NOT:  {{.}}

// ACCEL-NOT:  Traceback
// ACCEL:      {{^}}cascade-estimate: error: unknown accelerator 'ethos-u99'; expected one of: ethos-u55-32, ethos-u55-64, ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512{{$}}
// ACCEL-NOT:  {{.}}

// SYSTEM-NOT:  Traceback
// SYSTEM:      {{^}}cascade-estimate: error: unknown system config 'Nope'; expected one of: Ethos_U55_Deep_Embedded, Ethos_U55_High_End_Embedded, Ethos_U65_Client_Server, Ethos_U65_Embedded, Ethos_U65_High_End, Ethos_U65_Mid_End, Ethos_U85_SYS_DRAM_High, Ethos_U85_SYS_DRAM_Low, Ethos_U85_SYS_DRAM_Mid, Ethos_U85_SYS_Flash_High, Ethos_U85_SYS_Flash_Low{{$}}
// SYSTEM-NOT:  {{.}}

// MODE-NOT:  Traceback
// MODE:      {{^}}cascade-estimate: error: unknown memory mode 'Nope'; expected one of: Dedicated_Sram, Dedicated_Sram_256KB, Dedicated_Sram_384KB, Dedicated_Sram_512KB, Shared_Sram, Sram_Only{{$}}
// MODE-NOT:  {{.}}
