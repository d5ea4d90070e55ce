// cascade-estimate prints the configuration, one row per operator and the totals, last
// `total_cycles: N`; --csv writes the same table. Vela's defaults per accelerator family.
// RUN: cascade-estimate %inputs/example_nn.mlir --accelerator ethos-u55-128 --csv %t.csv | filecheck %s
// RUN: filecheck %s --check-prefix=CSV < %t.csv
// RUN: cascade-estimate - --accelerator ethos-u55-128 < %inputs/example_nn.mlir | filecheck %s
// RUN: cascade-estimate %inputs/example_nn.mlir --accelerator ethos-u65-256 \
// RUN:   | filecheck %s --check-prefix=U65

// CHECK:      accelerator: ethos-u55-128
// CHECK-NEXT: system config: Ethos_U55_High_End_Embedded (500 MHz)
// CHECK-NEXT: memory mode: Shared_Sram
// CHECK-NEXT: memories: SRAM 8 B/cycle, latency 32/32, OffFlash 1 B/cycle, latency 64/0
// CHECK:      #  operator {{.*}} cycles  npu_cycles  macs  SRAM_bytes  OffFlash_bytes
// CHECK-NEXT: 0  conv2d {{.*}} 13824
// CHECK-NEXT: 1  depthwise_conv2d {{.*}} 4608
// CHECK-NEXT: 2  conv2d {{.*}} 8192
// CHECK-NEXT: 3  pool2d
// CHECK:      total_macs: 26624
// CHECK:      total_cycles: {{[1-9][0-9]*$}}

// CSV:      #,operator,target,cycles,npu_cycles,macs,SRAM_bytes,OffFlash_bytes,SRAM_cycles,OffFlash_cycles,weights,name
// CSV-NEXT: 0,conv2d,NPU,

// U65:      system config: Ethos_U65_Client_Server (1000 MHz)
// U65-NEXT: memory mode: Dedicated_Sram_384KB
// U65:      total_cycles: {{[1-9][0-9]*$}}

// Without --accelerator, Vela's default accelerator.
// RUN: cascade-estimate %inputs/example_nn.mlir | filecheck %s --check-prefix=DEFAULT
// DEFAULT: accelerator: ethos-u55-256
