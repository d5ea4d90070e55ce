"""The per-operation NPU model on worked cases (ethos-u55-128, Ethos_U55_High_End_Embedded).

Every expected number is derived by hand in the comments from the model's rules:

* micro-block on U55-128 is 1x2x8 (H x W x C); SRAM moves 8 B/cycle with 32 cycles latency and
  32-byte bursts; flash 1 B/cycle, 64 cycles latency, 128-byte bursts;
* output stage per element: 0.5 for a convolution or depthwise, 0.25 max pool, 1.5 add; a
  ReLU clamp costs 0.5, no activation 0;
* the first IFM block and the last OFM block are fetched/written outside the block pipeline:
  latency + bytes / bandwidth each;
* blocks pipeline: total = blocks * (the slower of MAC and output stage, at least the command
  issue rate) + one block of the other stage + first IFM block + last OFM block.
"""

from __future__ import annotations

import pytest

from cascade.ethos_u.arch import arch_config
from cascade.ethos_u.performance import (
    Activation,
    BlockConfig,
    Kernel,
    Layout,
    NpuKind,
    NpuOp,
    Placement,
    Traversal,
    burst_bytes,
    choose_traversal,
    ifm_block_for,
    op_performance,
    select_block_config,
    transfer_cycles,
    valid_block_configs,
)

ARCH = arch_config("ethos-u55-128")
ACCEL = ARCH.accelerator
SRAM = ARCH.staging_memory
FLASH = ARCH.const_memory


def test_conv_1x1_streams_weights_once_per_block_row() -> None:
    # IFM 16x16x32 -> OFM 16x16x64, ReLU, 2048 bytes of encoded weights and 64 * 10 = 640 bytes
    # of scales in flash, feature maps in SRAM, OFM block 4x16x32.
    op = NpuOp(
        NpuKind.CONV2D,
        (16, 16, 32),
        (16, 16, 64),
        Kernel(1, 1),
        activation=Activation.CLAMP,
        weight_bytes=2048,
        scale_bytes=640,
    )
    # 32 input channels: depth-first uses 32/32 = 100 % of the MACs, part-kernel 32/32 * 1/4.
    assert choose_traversal(op) is Traversal.DEPTH_FIRST
    # IFM block: (4 - 1) * 1 + 1 = 4 rows, 16 columns, 32 channels (one depth-first pass).
    assert ifm_block_for(op, (4, 16, 32), ACCEL, Traversal.DEPTH_FIRST) == (4, 16, 32)
    block = BlockConfig((4, 16, 32), (4, 16, 32), Traversal.DEPTH_FIRST)
    perf = op_performance(op, ACCEL, Placement(SRAM, SRAM, weights=FLASH, scales=FLASH), block=block)
    # MAC: 4x8x4 micro-blocks; one kernel step of max(32, 4 * 32) = 128 cycles per depth slice:
    # 128 * 4 = 512 per block. Blocks: (16 * 8 * 8 micro-blocks) / (4 * 8 * 4) = 8.
    # Output: 0.5 * 4 * 16 * 32 = 1024 per block (bias latency 10 * 32 * 64 / 256 = 80 is less).
    # First IFM block 2048 B: 32 + 2048 / 8 = 288; last OFM block 2048 B: 32 + 256 = 288.
    # Issue: (|288 - 288| + 512 + 1024) / 4 = 384. Output-bound: 1024 * 8 + 512 + 288 + 288.
    assert perf.compute.total == 9280
    assert perf.compute.issue == 384
    # Traffic: each of the 4 x 1 x 2 blocks reads a 4x16x32 IFM block: 8 * 2048 = 16384 B; the
    # OFM is 16 * 16 * 64 = 16384 B; SRAM busy 32768 / 8 = 4096 cycles.
    assert perf.traffic["Sram"]["ifm"].bytes == 16384
    assert perf.traffic["Sram"]["ofm"].bytes == 16384
    assert perf.access_cycles["Sram"] == 4096
    # Weights stream again for each of the 4 block positions in H and W: 4 * (2048 + 640) =
    # 10752 bytes of flash at 1 B/cycle: the op is flash-bound.
    assert perf.traffic["OffChipFlash"]["weights"].bytes == 8192
    assert perf.traffic["OffChipFlash"]["scales"].bytes == 2560
    assert perf.access_cycles["OffChipFlash"] == 10752
    assert perf.total_cycles == 10752
    assert perf.macs == 16 * 16 * 64 * 32


def test_conv_3x3_stride_2_part_kernel() -> None:
    # IFM 16x16x16 -> OFM 8x8x32, 3x3 stride 2, no activation, weights buffered in SRAM
    # (4608 B encoded, 320 B scales), OFM block 4x8x32.
    op = NpuOp(NpuKind.CONV2D, (16, 16, 16), (8, 8, 32), Kernel(3, 3, 2, 2), weight_bytes=4608, scale_bytes=320)
    # Depth-first would use 16/32 = 50 % of the MACs, part-kernel 16/16 * 9/12 = 75 %.
    assert choose_traversal(op) is Traversal.PART_KERNEL
    # IFM block: (4 - 1) * 2 + 3 = 9 rows, (8 - 1) * 2 + 3 = 17 -> 18 columns (micro-block
    # width 2), 16 channels.
    assert ifm_block_for(op, (4, 8, 32), ACCEL, Traversal.PART_KERNEL) == (9, 18, 16)
    block = BlockConfig((4, 8, 32), (9, 18, 16), Traversal.PART_KERNEL)
    perf = op_performance(op, ACCEL, Placement(SRAM, SRAM, weights=SRAM, scales=SRAM), block=block)
    # MAC: 4x4x4 micro-blocks; ceil(9 / 4) = 3 part-kernel steps of max(32, 4 * 16) = 64 cycles,
    # per micro-block depth 4 and per 8 input channels (16 / 8 = 2): 64 * 3 * 4 * 2 = 1536.
    # Blocks: (8 * 4 * 4) / (4 * 4 * 4) = 2. Output: 0.5 * 1024 = 512 per block.
    # First IFM block 9 x 16 (clipped to the IFM) x 16 = 2304 B: 32 + 288 = 320; last OFM block
    # 1024 B: 32 + 128 = 160. Issue: (|160 - 320| + 1536 + 512) / 4 = 552.
    # MAC-bound: 1536 * 2 + max(512, 552) + 160 + 320 = 4104.
    assert perf.compute.total == 4104
    # Traffic: 2 blocks read 2304 B of IFM each; the OFM is 2048 B; the weights (4608 + 320 B)
    # are read from SRAM once per block row: 2 * 4928 = 9856 B. SRAM: 16512 B -> 2064 cycles.
    assert perf.traffic["Sram"]["ifm"].bytes == 4608
    assert perf.traffic["Sram"]["weights"].bytes + perf.traffic["Sram"]["scales"].bytes == 9856
    assert perf.access_cycles["Sram"] == 2064
    assert perf.total_cycles == 4104


def test_depthwise_3x3() -> None:
    # IFM 8x8x16 -> OFM 8x8x16, 3x3 stride 1 pad 1, weights (160 B) and scales (160 B) in flash.
    op = NpuOp(NpuKind.DEPTHWISE, (8, 8, 16), (8, 8, 16), Kernel(3, 3), weight_bytes=160, scale_bytes=160)
    assert choose_traversal(op) is Traversal.DEPTHWISE
    # IFM block: 7 + 3 = 10 rows and columns; depthwise reads only the block's own 16 channels.
    assert ifm_block_for(op, (8, 8, 16), ACCEL, Traversal.DEPTHWISE) == (10, 10, 16)
    block = BlockConfig((8, 8, 16), (10, 10, 16), Traversal.DEPTHWISE)
    perf = op_performance(op, ACCEL, Placement(SRAM, SRAM, weights=FLASH, scales=FLASH), block=block)
    # MAC: 8x4x2 micro-blocks; ceil(9 / 4) = 3 steps of max(32, 4 * 32) = 128 per micro-block
    # depth: 128 * 3 * 2 = 768. One block. Output 0.5 * 1024 = 512.
    # First IFM block (clipped to 8x8x16 = 1024 B): 32 + 128 = 160; last OFM block 160.
    # One block, so no issue imbalance: issue = (768 + 512) / 4 = 320. 768 + 512 + 160 + 160.
    assert perf.compute.total == 1600
    # Weights and scales stream once (one block position): 320 B of flash, 320 cycles.
    assert perf.access_cycles["OffChipFlash"] == 320
    assert perf.total_cycles == 1600
    assert perf.macs == 8 * 8 * 16 * 9


def test_max_pool_2x2() -> None:
    # IFM 8x8x16 -> OFM 4x4x16, max pool 2x2 stride 2, block 4x4x16 (IFM block 8x8x16).
    op = NpuOp(NpuKind.POOLING, (8, 8, 16), (4, 4, 16), Kernel(2, 2, 2, 2), sub_kind="max")
    block = BlockConfig((4, 4, 16), (8, 8, 16), Traversal.DEPTH_FIRST)
    perf = op_performance(op, ACCEL, Placement(SRAM, SRAM), block=block)
    # MAC: pooling takes max(4, 2 * 2) = 4 cycles per micro-block, 4 * 2 * 2 = 16 micro-blocks,
    # times 8 bits / 2 = 4: 256. Output: 0.25 * 256 = 64; issue (256 + 64) / 4 = 80 is slower.
    # First IFM block 1024 B: 32 + 128 = 160; last OFM block 256 B: 32 + 32 = 64.
    # MAC-bound: 256 + max(64, 80) + 64 + 160 = 560.
    assert perf.compute.total == 560
    assert perf.traffic["Sram"]["ifm"].bytes == 1024
    assert perf.traffic["Sram"]["ofm"].bytes == 256
    assert perf.total_cycles == 560


def test_add_with_broadcast() -> None:
    # 8x8x16 + 1x1x16 (broadcast over H and W) -> 8x8x16, all in SRAM.
    op = NpuOp(NpuKind.ELEMENTWISE, (8, 8, 16), (8, 8, 16), ifm2=(1, 1, 16), sub_kind="add")
    # The whole OFM is one block: each IFM buffer is 1 KiB = 1 bank, doubled and rounded to the
    # granule of 4 banks; 2 reserved + 4 + 4 = 10 of the 22 usable banks.
    block = select_block_config(op, ACCEL)
    assert block.ofm_block == (8, 8, 16)
    perf = op_performance(op, ACCEL, Placement(SRAM, SRAM, ifm2=SRAM), block=block)
    # Output stage: 1.5 cycles per element (both inputs rescaled): 1024 * 1.5 = 1536.
    # Command issue: the IFM block takes 32 + 1024 / 8 = 160 cycles (the 16-byte IFM2 block only
    # 34), the OFM block 160: (160 / 1024 + 1.5) / 4 * 1024 = 424 < 1536.
    assert perf.compute.total == 1536
    assert perf.compute.issue == 424
    # The broadcast IFM2 is read once per output element, as IFM: 3 * 1024 B of SRAM.
    assert perf.traffic["Sram"]["ifm2"].bytes == 1024
    assert perf.access_cycles["Sram"] == 384
    assert perf.total_cycles == 1536


def test_block_choice_matches_vela() -> None:
    # resnet8's 3x3 convolution 32x32x16 -> 32x32x16: Vela 5.2.0 programs a 5x16x16 block (its
    # debug database, `vela --enable-debug-db`, lists ofm_block 5x16x16, PartKernel).
    op = NpuOp(NpuKind.CONV2D, (32, 32, 16), (32, 32, 16), Kernel(3, 3))
    block = select_block_config(op, ACCEL)
    assert block.ofm_block == (5, 16, 16)
    assert block.traversal is Traversal.PART_KERNEL


def test_one_row_blocks_are_candidates() -> None:
    # A 1x1 OFM: the only sensible block is one micro-block, 1x2x8. Vela's npu_find_block_configs
    # starts its search at height 2, so this block comes from the same SHRAM check done directly.
    op = NpuOp(NpuKind.POOLING, (1, 10, 1), (1, 1, 1), Kernel(1, 10), sub_kind="max")
    assert valid_block_configs(op, ACCEL, Traversal.DEPTH_FIRST) == ((1, 2, 8),)
    assert select_block_config(op, ACCEL).ofm_block == (1, 2, 8)


def test_burst_overhead_of_a_3_channel_nhwc_read() -> None:
    # A 3-channel NHWC IFM read with an 8-deep block: 8 contiguous bytes per burst. On flash
    # (128-byte bursts) 702 elements cost 702 * 128 / 8 = 11232 bytes of bus time.
    cost = burst_bytes(FLASH, Layout.NHWC, 8, (13, 18, 8), (224, 224, 3), 702, is_read=True)
    assert cost == 11232
    # On SRAM (32-byte bursts): 702 * 32 / 8 = 2808.
    assert burst_bytes(SRAM, Layout.NHWC, 8, (13, 18, 8), (224, 224, 3), 702, is_read=True) == 2808


def test_dma_transfer() -> None:
    # 600 bytes from flash: 600 / 1 + 64 latency = 664 cycles (the SRAM write, 75 + 32, is faster).
    assert transfer_cycles(FLASH, SRAM, 600) == 664


@pytest.mark.parametrize("name", ["ethos-u55-32", "ethos-u55-64", "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"])
def test_every_accelerator_prices_a_conv(name: str) -> None:
    arch = arch_config(name)
    op = NpuOp(NpuKind.CONV2D, (16, 16, 16), (16, 16, 16), Kernel(3, 3), weight_bytes=2304, scale_bytes=160)
    perf = op_performance(
        op,
        arch.accelerator,
        Placement(arch.staging_memory, arch.staging_memory, weights=arch.staging_memory, scales=arch.staging_memory),
    )
    # The MAC array does 16 * 16 * 16 * 144 = 589824 MACs at most `total_macs` per cycle.
    assert perf.compute.total >= 589824 // arch.accelerator.total_macs
