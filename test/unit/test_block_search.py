"""The vectorised SHRAM block search against Vela's own allocator, on random operations.

`performance.valid_block_configs` decides, for all blocks at once, which OFM blocks fit the
SHRAM. The oracle here asks Vela's `try_block_config` about each block of the same grid, one by
one, on the operation itself. The grid (micro-block steps up to the OFM; steps of 2 for an
upscaled IFM; depths short of the OFM in multiples of 16) is the one Vela's scheduler and API
search. Random shapes, kernels, strides, dilations, bit widths, activations and every
accelerator are drawn from a fixed seed.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from ethosu.vela.architecture_allocator import try_block_config
from ethosu.vela.architecture_features import Block
from ethosu.vela.ethos_u55_regs.ethos_u55_regs import resampling_mode
from ethosu.vela.operation import Kernel as VelaKernel
from ethosu.vela.operation import NpuBlockType

from cascade.ethos_u import performance
from cascade.ethos_u.arch import ACCELERATOR_NAMES, AcceleratorConfig, accelerator, vela_default_arch
from cascade.ethos_u.performance import (
    Activation,
    Kernel,
    NpuKind,
    NpuOp,
    Shape,
    Traversal,
    choose_traversal,
    select_block_config,
    valid_block_configs,
)

_BLOCK_TYPES = {
    NpuKind.CONV2D: NpuBlockType.ConvolutionMxN,
    NpuKind.VECTOR_PRODUCT: NpuBlockType.ConvolutionMxN,
    NpuKind.DEPTHWISE: NpuBlockType.ConvolutionDepthWise,
    NpuKind.POOLING: NpuBlockType.Pooling,
    NpuKind.REDUCE_SUM: NpuBlockType.ReduceSum,
    NpuKind.ELEMENTWISE: NpuBlockType.ElementWise,
}


def _random_op(rng: random.Random) -> NpuOp:
    kind = rng.choice(list(NpuKind))
    height, width = rng.randint(1, 70), rng.randint(1, 70)
    in_depth = rng.choice([1, 3, 8, 16, 24, 32, 48, 64, 96, 144, 256, 384, 1024])
    out_depth = rng.choice([1, 8, 12, 16, 24, 32, 64, 96, 256, 1000])
    kernel = Kernel(
        *rng.choice([(1, 1), (3, 3), (5, 5), (1, 7), (7, 1), (10, 4), (9, 9), (2, 2)]),
        *rng.choice([(1, 1), (2, 2), (1, 2), (3, 3)]),
        *rng.choice([(1, 1), (1, 1), (2, 2), (1, 2)]),
    )
    upscale = rng.choice([1, 1, 1, 1, 1, 2])
    ifm2: Shape | None = None
    sub_kind = ""
    if kind is NpuKind.ELEMENTWISE:
        kernel, out_depth, sub_kind = Kernel(), in_depth, rng.choice(["add", "mul", "max"])
        ifm2 = rng.choice([None, (1, 1, 1), (height, width, in_depth), (1, 1, in_depth)])
    elif kind in (NpuKind.DEPTHWISE, NpuKind.POOLING):
        out_depth = in_depth
    elif kind is NpuKind.VECTOR_PRODUCT:
        kernel, height, width, upscale = Kernel(), 1, 1, 1
    elif kind is NpuKind.REDUCE_SUM:
        kernel, out_depth = Kernel(), 1
    span_h, span_w = kernel.dilated
    ifm = ((height - 1) * kernel.stride_y + span_h, (width - 1) * kernel.stride_x + span_w, in_depth)
    if upscale == 2:
        ifm = (-(-ifm[0] // 2), -(-ifm[1] // 2), in_depth)
    return NpuOp(
        kind,
        ifm,
        (height, width, out_depth),
        kernel,
        ifm2=ifm2,
        sub_kind=sub_kind,
        activation=rng.choice(list(Activation)),
        ifm_bits=rng.choice([8, 8, 8, 16]),
        upscale=upscale,
        rescaled=rng.random() < 0.8,
    )


def _fits_by_vela(op: NpuOp, accel: AcceleratorConfig, traversal: Traversal) -> tuple[Shape, ...]:
    """Every block of the searched grid that Vela's `try_block_config` accepts for `op`."""
    arch = vela_default_arch(accel.name)
    scalar = op.ifm2 == (1, 1, 1)
    ifm2 = Block(op.ifm2[1], op.ifm2[0], op.ifm2[2]) if op.ifm2 is not None and not scalar else None
    k = op.kernel
    kernel = VelaKernel(k.width, k.height, k.stride_x, k.stride_y, k.dilation_x, k.dilation_y)
    micro = accel.ofm_ublock
    step_h, step_w = (micro.height, micro.width) if op.upscale == 1 else (max(micro.height, 2), max(micro.width, 2))
    max_h = -(-min(op.ofm[0], accel.ofm_block_max.height) // micro.height) * micro.height
    max_w = -(-min(op.ofm[1], accel.ofm_block_max.width) // micro.width) * micro.width
    max_c = min(accel.ofm_block_max.depth, op.ofm[2])
    found = []
    for depth in range(micro.depth, max_c + micro.depth, micro.depth):
        if depth < max_c and depth % 16:
            continue
        for height in range(step_h, max_h + 1, step_h):
            for width in range(step_w, max_w + 1, step_w):
                config = try_block_config(
                    Block(width, height, depth),
                    arch,
                    _BLOCK_TYPES[op.kind],
                    Block(op.ofm[1], op.ofm[0], op.ofm[2]),
                    Block(op.ifm[1], op.ifm[0], op.ifm[2]),
                    ifm2,
                    scalar,
                    op.ifm_bits,
                    traversal is Traversal.PART_KERNEL,
                    kernel,
                    2 if op.activation is Activation.LUT else 0,
                    op.rescaled,
                    resampling_mode.NEAREST if op.upscale > 1 else resampling_mode.NONE,
                )
                if config:
                    found.append((height, width, depth))
    return tuple(found)


@pytest.mark.parametrize("seed", range(4))
def test_the_shram_fit_is_velas_on_random_operations(seed: int) -> None:
    rng = random.Random(seed)
    compared = fitting = 0
    for _ in range(60):
        op = _random_op(rng)
        accel = accelerator(rng.choice(ACCELERATOR_NAMES))
        traversal = choose_traversal(op)
        expected = _fits_by_vela(op, accel, traversal)
        assert valid_block_configs(op, accel, traversal) == expected, (accel.name, op)
        compared += 1
        fitting += bool(expected)
        if expected and op.ofm[2] > 1:
            # The chosen block is one that fits.
            assert select_block_config(op, accel).ofm_block in expected
    # The draw is not degenerate: most operations have blocks that fit, and some have none.
    assert compared == 60
    assert fitting >= 40


def test_a_scalar_second_input_leaves_room_for_taller_blocks() -> None:
    # U55-64 has 16 SHRAM banks of 1 KiB, 2 reserved for the output, none for a LUT. An int8
    # elementwise IFM block of r x 4 x 64 is 256 r bytes, double-buffered.
    # Scalar IFM2: one IFM. 28 rows: 7,168 B = 7 banks, 14 doubled; 2 + 14 = 16 fits. 29 rows
    # need 8 banks, 16 doubled: 18 > 16.
    # Full IFM2: two IFMs. 12 rows: 3,072 B = 3 banks, 6 doubled; 2 + 6 + 6 = 14 fits. 13 rows
    # need 4 banks: 2 + 8 + 8 = 18 > 16.
    accel = accelerator("ethos-u55-64")
    scalar = NpuOp(NpuKind.ELEMENTWISE, (49, 4, 144), (49, 4, 144), ifm2=(1, 1, 1), sub_kind="mul")
    full = NpuOp(NpuKind.ELEMENTWISE, (49, 4, 144), (49, 4, 144), ifm2=(49, 4, 144), sub_kind="mul")
    traversal = choose_traversal(scalar)

    def tallest(op: NpuOp) -> int:
        return max(b[0] for b in valid_block_configs(op, accel, traversal) if b[1:] == (4, 64))

    assert tallest(scalar) == 28
    assert tallest(full) == 12


def _stripes(whole: NpuOp) -> list[NpuOp]:
    """`whole` cut to stripes of a few heights, and of a few widths (its inputs cut in
    proportion)."""
    stripes = []
    for axis in (0, 1):
        extent = whole.ofm[axis]
        for size in sorted({1, 2, 3, 5, 8, 33, 70, extent} & set(range(1, extent + 1))):
            ifm_size = max(1, whole.ifm[axis] * size // extent)
            ifm2 = whole.ifm2 if whole.ifm2 in (None, (1, 1, 1)) else _cut(whole.ifm2, axis, ifm_size)  # type: ignore[arg-type]
            ifm, ofm = _cut(whole.ifm, axis, ifm_size), _cut(whole.ofm, axis, size)
            stripes.append(replace(whole, ifm=ifm, ofm=ofm, ifm2=ifm2))
    return stripes


def _cut(shape: Shape, axis: int, size: int) -> Shape:
    return (size, shape[1], shape[2]) if axis == 0 else (shape[0], size, shape[2])


def _check_shared_candidates(op: NpuOp, accel: AcceleratorConfig) -> None:
    traversal = performance.choose_traversal(op)
    grid = performance._searched_grid(op, accel, frozenset(performance._searched_depths(op.ofm[2], accel)))
    ifm_blocks = performance._ifm_blocks(op, *grid, accel, traversal)
    fits = performance._fits_shram(op, *grid, accel, traversal, ifm_blocks)
    got_traversal, got_blocks, got_ifm_blocks = performance._fitting_blocks(
        performance._candidate_key(op, accel), accel
    )
    assert got_traversal is traversal, (accel.name, op)
    for expected, got in zip((*grid, *ifm_blocks), (*got_blocks, *got_ifm_blocks), strict=True):
        assert expected[fits].tolist() == got.tolist(), (accel.name, op)


@pytest.mark.parametrize("seed", range(3))
def test_operations_sharing_candidates_search_the_same_blocks(seed: int) -> None:
    """The block search reads its candidates (the blocks that fit the SHRAM and their IFM
    blocks) from a memo shared by operations that differ in height or width; they must be
    those the operation itself gives. Row and column stripes of random operations check it."""
    rng = random.Random(100 + seed)
    shared = 0
    for _ in range(40):
        accel = accelerator(rng.choice(ACCELERATOR_NAMES))
        stripes = _stripes(_random_op(rng))
        for op in stripes:
            _check_shared_candidates(op, accel)
        shared += len({performance._candidate_key(op, accel) for op in stripes}) < len(stripes)
    # Some stripes do share (the memo is used).
    assert shared > 0


def test_a_scalar_second_input_is_kept_apart_in_the_shared_candidates() -> None:
    # The operations of the scalar test above: a scalar second input fits taller blocks, so
    # it must not share candidates with a full one.
    accel = accelerator("ethos-u55-64")
    for ifm2 in ((1, 1, 1), (49, 4, 144)):
        for op in _stripes(NpuOp(NpuKind.ELEMENTWISE, (49, 4, 144), (49, 4, 144), ifm2=ifm2, sub_kind="mul")):
            _check_shared_candidates(op, accel)
