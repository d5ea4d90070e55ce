// The memory mode decides where a plan's tensors may live. A 2x2/2 max pool of 1x256x256x8
// int8 reads 524288 bytes and writes 131072: it runs alone (nothing to cascade with), so
// keeping both in SRAM takes 655360 bytes. Shared_Sram sets no arena cache size: the pool plans
// so. On U65 in Dedicated_Sram_256KB the SRAM is a 262144-byte cache of a DRAM arena, which
// every plan's SRAM must fit, budget or not: both tensors stay in DRAM (0 bytes of SRAM, the
// 655360 in DRAM). Unknown names given to cascade-plan are reported as ethosu-pipeline reports
// them.
// RUN: cd %S && cascade-opt memory_mode.mlir -p 'cascade-plan{accelerator=ethos-u65-256 memory-mode=Dedicated_Sram_256KB}' 2>&1 | filecheck %s --check-prefix=CAPACITY
// RUN: cd %S && cascade-opt memory_mode.mlir -p 'cascade-plan{accelerator=ethos-u65-256 memory-mode=Dedicated_Sram_256KB sram-budget=1000000}' 2>&1 | filecheck %s --check-prefix=CAPACITY
// RUN: cd %S && cascade-opt memory_mode.mlir -p 'cascade-plan{accelerator=ethos-u65-256 memory-mode=Shared_Sram}' | filecheck %s --check-prefix=SHARED
// RUN: cd %S && %exit1 cascade-opt memory_mode.mlir -p 'cascade-plan{memory-mode=Nope}' 2>&1 | filecheck %s --check-prefix=MODE
// RUN: cd %S && %exit1 cascade-opt memory_mode.mlir -p 'cascade-plan{system-config=Nope}' 2>&1 | filecheck %s --check-prefix=SYSTEM

func.func @main(%x: tensor<1x256x256x8xi8>) -> tensor<1x128x128x8xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x256x256x8xi8>) -> tensor<1x128x128x8xi8>
  func.return %0 : tensor<1x128x128x8xi8>
}

// CAPACITY:      func.func @main(%x: tensor<1x256x256x8xi8> {cascade.spilled})
// CAPACITY-SAME: cascade.peak_dram_bytes = 655360 : i64, cascade.peak_sram_bytes = 0 : i64
// CAPACITY:      nn.pool2d %x {cascade.spilled

// SHARED: func.func @main
// SHARED-SAME: cascade.peak_sram_bytes = 655360

// MODE-NOT:  Traceback
// MODE:      {{^}}cascade-opt: error: cascade-plan: unknown memory mode 'Nope'; expected one of: Dedicated_Sram, Dedicated_Sram_256KB, Dedicated_Sram_384KB, Dedicated_Sram_512KB, Shared_Sram, Sram_Only{{$}}
// MODE-NOT:  {{.}}

// SYSTEM-NOT:  Traceback
// SYSTEM:      {{^}}cascade-opt: error: cascade-plan: unknown system config 'Nope'; expected one of: {{.*}}Ethos_U55_High_End_Embedded{{.*}}{{$}}
// SYSTEM-NOT:  {{.}}
