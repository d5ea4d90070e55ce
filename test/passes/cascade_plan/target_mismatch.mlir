// cascade-plan resolves its accelerator, system config and memory mode before planning, and
// refuses a combination that makes no target: a tensor arena apart from the SRAM cache
// (Dedicated_Sram) on an Ethos-U55, which only Ethos-U65 has (the plan would spill to DRAM,
// and only lower-to-ethosu refuse it), or a memory mode whose arena the system config has no
// writable memory for.
// RUN: not cascade-opt %s -p 'cascade-plan{accelerator=ethos-u55-128 system-config=Ethos_U65_Client_Server memory-mode=Dedicated_Sram}' 2>&1 \
// RUN:   | filecheck %s --check-prefix=U55
// RUN: not cascade-opt %s -p 'cascade-plan{accelerator=ethos-u55-128 memory-mode=Dedicated_Sram_384KB}' 2>&1 \
// RUN:   | filecheck %s --check-prefix=U55-384
// RUN: not cascade-opt %models/resnet8.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128 system-config=Ethos_U65_Client_Server memory-mode=Dedicated_Sram}' \
// RUN:   -t ethosu-tflite -o %t.tflite 2>&1 | filecheck %s --check-prefix=U55
// RUN: not cascade-opt %s -p 'cascade-plan{accelerator=ethos-u65-256 system-config=Ethos_U65_Embedded memory-mode=Dedicated_Sram}' 2>&1 \
// RUN:   | filecheck %s --check-prefix=FLASH
// An Ethos-U55 with the memories of a U65 system config, its arena in SRAM, is a target:
// RUN: cascade-opt %s -p 'cascade-plan{accelerator=ethos-u55-128 system-config=Ethos_U65_Client_Server memory-mode=Shared_Sram}' \
// RUN:   | filecheck %s --check-prefix=SHARED

// U55-NOT:  internal error
// U55:      {{^}}cascade-opt: error: cascade-plan: memory mode 'Dedicated_Sram' keeps the tensor arena apart from the SRAM, which only Ethos-U65 supports: give 'ethos-u55-128' Shared_Sram or Sram_Only, or use an ethos-u65 accelerator{{$}}
// U55-NOT:  {{.}}

// U55-384:  {{^}}cascade-opt: error: cascade-plan: memory mode 'Dedicated_Sram_384KB' keeps the tensor arena apart from the SRAM, which only Ethos-U65 supports

// FLASH-NOT: internal error
// FLASH:     {{^}}cascade-opt: error: cascade-plan: 'ethos-u65-256' with system config 'Ethos_U65_Embedded': memory mode 'Dedicated_Sram': the arena cannot live in OffChipFlash{{$}}
// FLASH-NOT: {{.}}

// SHARED: cascade.accelerator = "ethos-u55-128", cascade.system_config = "Ethos_U65_Client_Server", cascade.memory_mode = "Shared_Sram"

func.func @main(%x: tensor<1x16x16x8xi8>) -> tensor<1x8x8x8xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x16x8xi8>) -> tensor<1x8x8x8xi8>
  func.return %0 : tensor<1x8x8x8xi8>
}
