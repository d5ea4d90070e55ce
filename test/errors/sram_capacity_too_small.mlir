// The memory mode's SRAM caps every plan: on U65 in Dedicated_Sram_256KB the arena cache is
// 262144 bytes. A 2x2/2 max pool of 1x256x256x8 int8 reads 524288 bytes and writes 131072: it
// runs alone (nothing to cascade with), so its working set is 655360 bytes, with or without a
// budget. Shared_Sram sets no arena cache size: the same pool plans. Unknown names given to
// cascade-plan are reported as ethosu-pipeline reports them.
// RUN: cd %S && %exit1 cascade-opt sram_capacity_too_small.mlir -p 'cascade-plan{accelerator=ethos-u65-256 memory-mode=Dedicated_Sram_256KB}' 2>&1 | filecheck %s --check-prefix=CAPACITY
// RUN: cd %S && %exit1 cascade-opt sram_capacity_too_small.mlir -p 'cascade-plan{accelerator=ethos-u65-256 memory-mode=Dedicated_Sram_256KB sram-budget=1000000}' 2>&1 | filecheck %s --check-prefix=CAPACITY
// RUN: cd %S && cascade-opt sram_capacity_too_small.mlir -p 'cascade-plan{accelerator=ethos-u65-256 memory-mode=Shared_Sram}' | filecheck %s --check-prefix=SHARED
// RUN: cd %S && %exit1 cascade-opt sram_capacity_too_small.mlir -p 'cascade-plan{memory-mode=Nope}' 2>&1 | filecheck %s --check-prefix=MODE
// RUN: cd %S && %exit1 cascade-opt sram_capacity_too_small.mlir -p 'cascade-plan{system-config=Nope}' 2>&1 | filecheck %s --check-prefix=SYSTEM

func.func @main(%x: tensor<1x256x256x8xi8>) -> tensor<1x128x128x8xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x256x256x8xi8>) -> tensor<1x128x128x8xi8>
  func.return %0 : tensor<1x128x128x8xi8>
}

// CAPACITY-NOT:  Traceback
// CAPACITY:      {{^}}cascade-opt: error: cascade-plan: @main: the SRAM of memory mode Dedicated_Sram_256KB (arena_cache_size) of 262144 bytes is too small: nn.pool2d at sram_capacity_too_small.mlir:13:3 needs at least 655360 bytes (its smallest working set){{$}}
// CAPACITY-NOT:  {{.}}

// SHARED: func.func @main
// SHARED-SAME: cascade.peak_sram_bytes = 655360

// MODE-NOT:  Traceback
// MODE:      {{^}}cascade-opt: error: cascade-plan: unknown memory mode 'Nope'; expected one of: Dedicated_Sram, Dedicated_Sram_256KB, Dedicated_Sram_384KB, Dedicated_Sram_512KB, Shared_Sram, Sram_Only{{$}}
// MODE-NOT:  {{.}}

// SYSTEM-NOT:  Traceback
// SYSTEM:      {{^}}cascade-opt: error: cascade-plan: unknown system config 'Nope'; expected one of: {{.*}}Ethos_U55_High_End_Embedded{{.*}}{{$}}
// SYSTEM-NOT:  {{.}}
