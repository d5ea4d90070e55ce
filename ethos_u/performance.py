"""Cycle and traffic model of one Ethos-U hardware operation on one stripe.

An `NpuOp` is what the NPU executes in one command: a convolution, depthwise convolution,
vector product (fully connected), pooling, reduce-sum or elementwise operation over an OFM
box. This module prices it the way the hardware (and Vela's estimator) sees it:

* **Block config.** The OFM is produced block by block; a block must fit the shared buffer
  (SHRAM) together with the IFM it needs, by Vela's bank arithmetic (`valid_block_configs`,
  evaluated for every block of the search grid at once with numpy: Vela's per-block Python
  loop was over half the planning time of mbv1_025_96). Among the blocks that fit we pick
  the one that fetches the fewest IFM and weight bytes per output element, as Vela's
  scheduler does (`select_block_config`).
* **Compute.** Per block, the MAC array steps over micro-blocks and kernel positions
  (`mac_cycles_per_block`); the output unit (AO) spends a fixed number of cycles per element for
  rescaling and activation; the command stream must also issue the block's memory transfers.
  Blocks pipeline, so the op takes `blocks * max(mac, ao, issue)` plus one block of the other
  stages and the first IFM fetch / last OFM write (`npu_cycles`).
* **Memory.** IFM, OFM, weights and scales are moved in bursts; short bursts waste bandwidth
  (`burst_bytes`). Weights are fetched again for every OFM block position in H and W
  (`element_access`). Each memory is busy for `bytes / bandwidth` cycles (`access_cycles`).

The NPU and the DMA overlap, so an op takes the maximum of its compute cycles and the busiest
memory's access cycles (`OpPerformance.total_cycles`).

All shapes are (height, width, depth) tuples of the OFM/IFM region processed.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from functools import lru_cache
from operator import attrgetter

import numpy as np
from ethosu.vela.architecture_features import SHRAMElements

from cascade.ethos_u.arch import AcceleratorConfig, Memory

Shape = tuple[int, int, int]

SUBKERNEL_MAX = 8  # the NPU splits kernels larger than 8x8 into 8x8 sub-kernels
OFM_SPLIT_DEPTH = 16  # a block that does not cover the whole OFM depth must be a multiple of 16 deep


class NpuKind(Enum):
    """The hardware operation types of the Ethos-U55/U65 command stream."""

    CONV2D = "conv2d"
    DEPTHWISE = "depthwise"
    VECTOR_PRODUCT = "vector_product"  # fully connected
    POOLING = "pooling"
    REDUCE_SUM = "reduce_sum"
    ELEMENTWISE = "elementwise"

    @property
    def uses_macs(self) -> bool:
        return self is not NpuKind.ELEMENTWISE

    @property
    def subkernel_limit(self) -> int:
        return 1 if self in (NpuKind.VECTOR_PRODUCT, NpuKind.ELEMENTWISE) else SUBKERNEL_MAX


class Traversal(Enum):
    """How a convolution walks its kernel: all input channels of one kernel position first
    (depth-first), or four kernel positions of eight channels at a time (part-kernel-first)."""

    DEPTH_FIRST = "depth_first"
    PART_KERNEL = "part_kernel"
    DEPTHWISE = "depthwise"


class Layout(Enum):
    NHWC = "NHWC"
    NHCWB16 = "NHCWB16"  # bricks of 16 channels: what the NPU writes by default


class Activation(Enum):
    """The activation stage: none, a clamp (ReLU family), or a 256-entry table (sigmoid, tanh, LUT)."""

    NONE = "none"
    CLAMP = "clamp"
    LUT = "lut"


@dataclass(frozen=True)
class Kernel:
    height: int = 1
    width: int = 1
    stride_y: int = 1
    stride_x: int = 1
    dilation_y: int = 1
    dilation_x: int = 1

    @property
    def dilated(self) -> tuple[int, int]:
        """(height, width) spanned by the dilated kernel: 3x3 with dilation 2 spans 5x5."""
        return (self.height - 1) * self.dilation_y + 1, (self.width - 1) * self.dilation_x + 1

    @property
    def area(self) -> int:
        return self.height * self.width


@dataclass(frozen=True)
class NpuOp:
    """One NPU operation over an OFM region of shape `ofm`, reading `ifm` (and `ifm2`).

    `ifm` is the part of the input actually read for this OFM region (for a stripe, the input
    rows the stripe needs), full width and depth. `sub_kind` names the elementwise operation
    ("add", "sub", "mul", "min", "max", "shl", "shr", "clz", "lrelu", "abs") or the pooling
    ("max", "avg"). `weight_bytes` is the length of the encoded weight stream the NPU reads,
    `scale_bytes` that of the bias/scale records (10 bytes per output channel).
    """

    kind: NpuKind
    ifm: Shape
    ofm: Shape
    kernel: Kernel = Kernel()
    ifm2: Shape | None = None
    sub_kind: str = ""
    activation: Activation = Activation.NONE
    ifm_bits: int = 8
    ofm_bits: int = 8
    ifm_layout: Layout = Layout.NHCWB16
    ifm2_layout: Layout = Layout.NHCWB16
    ofm_layout: Layout = Layout.NHCWB16
    upscale: int = 1  # 2 for nearest-neighbour 2x upscaling of the IFM (resize, transpose conv)
    rescaled: bool = True
    weight_bytes: int = 0
    scale_bytes: int = 0

    def __hash__(self) -> int:
        # Kept once computed: an operation keys the price memos again for every stripe that
        # lowers to it, and hashing its fields calls the enums' Python-level hashes each time.
        known = self.__dict__.get("_hash")
        if known is None:
            known = hash(_npu_op_values(self))
            object.__setattr__(self, "_hash", known)
        return known

    def __getstate__(self) -> dict[str, object]:
        # The kept hash is this process's (string hashes are salted per process): not pickled.
        return {name: value for name, value in self.__dict__.items() if name != "_hash"}

    @property
    def has_weights(self) -> bool:
        return self.weight_bytes > 0

    @property
    def macs(self) -> int:
        """Multiply-accumulates, as Vela counts them: kernel area * OFM volume (* IFM depth for
        convolutions and vector products)."""
        if not self.kind.uses_macs:
            return 0
        count = self.kernel.area * _volume(self.ofm)
        if self.kind not in (NpuKind.DEPTHWISE, NpuKind.POOLING):
            count *= self.ifm[2]
        return count


_npu_op_values = attrgetter(*(f.name for f in fields(NpuOp)))
"""The field values of an `NpuOp` as a tuple, as the generated `__eq__` compares them."""


@dataclass(frozen=True)
class BlockConfig:
    """The OFM block the NPU produces at a time and the IFM block that feeds it."""

    ofm_block: Shape
    ifm_block: Shape
    traversal: Traversal
    accumulator_bits: int = 32


@dataclass(frozen=True)
class Placement:
    """Where each operand of an op lives: the memory the NPU reads or writes it from."""

    ifm: Memory
    ofm: Memory
    ifm2: Memory | None = None
    weights: Memory | None = None  # where the NPU reads the encoded weights (flash, or SRAM if buffered)
    scales: Memory | None = None


@dataclass(frozen=True)
class ComputeCycles:
    """NPU-side cycles: MAC stage, output stage, command issue, and the combined total."""

    mac: int
    ao: int
    issue: int
    total: int


@dataclass(frozen=True)
class Access:
    """Bytes moved for one operand: `bytes` as stored, `transfer` including burst overhead."""

    bytes: int
    transfer: int


@dataclass
class OpPerformance:
    """The priced op: compute cycles, traffic per memory and the resulting total."""

    compute: ComputeCycles
    block: BlockConfig
    macs: int
    # memory name -> {"ifm"|"ifm2"|"ofm"|"weights"|"scales": Access}
    traffic: dict[str, dict[str, Access]] = field(default_factory=dict)
    # memory name -> cycles that memory is busy
    access_cycles: dict[str, int] = field(default_factory=dict)

    @property
    def npu_cycles(self) -> int:
        return self.compute.total

    @property
    def total_cycles(self) -> int:
        """The NPU and every memory work in parallel: the slowest of them sets the pace."""
        return max(self.npu_cycles, *self.access_cycles.values()) if self.access_cycles else self.npu_cycles

    def bytes_by_memory(self) -> dict[str, int]:
        return {memory: sum(a.bytes for a in kinds.values()) for memory, kinds in self.traffic.items()}


def _volume(shape: Sequence[int]) -> int:
    volume = 1
    for extent in shape:
        volume *= extent
    return volume


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


def _min_shape(a: Shape, b: Shape) -> Shape:
    return (min(a[0], b[0]), min(a[1], b[1]), min(a[2], b[2]))


def _div_round_up(a: Shape, b: Shape) -> Shape:
    return (_ceil_div(a[0], b[0]), _ceil_div(a[1], b[1]), _ceil_div(a[2], b[2]))


# --------------------------------------------------------------------------- #
# Block configuration
# --------------------------------------------------------------------------- #


def choose_traversal(op: NpuOp) -> Traversal:
    """Part-kernel-first when it keeps more of the MAC array busy than depth-first.

    Depth-first consumes 32 input channels per step (int8), part-kernel-first 8 channels of 4
    kernel positions. A 3x3 conv on 16 channels: depth-first uses 16/32 = 50 %, part-kernel
    16/16 * 9/12 = 75 %, so part-kernel wins. Inputs of 8 channels or fewer always use it.
    """
    if op.kind is NpuKind.DEPTHWISE:
        return Traversal.DEPTHWISE
    if op.kind is not NpuKind.CONV2D:
        return Traversal.DEPTH_FIRST
    depth = op.ifm[2]
    if depth <= 8:
        return Traversal.PART_KERNEL
    elements = op.kernel.area
    depth_use = depth / _round_up(depth, 32 if op.ifm_bits == 8 else 16)
    part_use = depth / _round_up(depth, 8) * (elements / _round_up(elements, 4 if op.ifm_bits == 8 else 2))
    return Traversal.PART_KERNEL if part_use >= depth_use else Traversal.DEPTH_FIRST


def _required_input(size: int, stride: int, kernel: int, upscale: int, nearest: int) -> int:
    """Input extent needed for `size` outputs: (size - 1) * stride + kernel, before upscaling."""
    return -(-((size - 1) * stride + kernel + nearest) // upscale)


def ifm_block_for(op: NpuOp, ofm_block: Shape, accel: AcceleratorConfig, traversal: Traversal) -> Shape:
    """The IFM block that feeds `ofm_block`, rounded to the micro-block.

    The kernel is clipped to the 8x8 sub-kernel: an OFM block of 4 rows of a 3x3 stride-1 conv
    needs (4 - 1) * 1 + 3 = 6 input rows.
    """
    dil_h, dil_w = op.kernel.dilated
    nearest = 1 if op.upscale > 1 else 0
    height = _required_input(ofm_block[0], op.kernel.stride_y, min(dil_h, SUBKERNEL_MAX), op.upscale, nearest)
    width = _required_input(ofm_block[1], op.kernel.stride_x, min(dil_w, SUBKERNEL_MAX), op.upscale, nearest)
    height = _round_up(height, accel.ofm_ublock.height)
    width = _round_up(width, accel.ofm_ublock.width)
    if _is_equal_depth(op):
        depth = ofm_block[2]
    elif op.ifm_bits == 16:
        depth = _round_up(min(op.ifm[2], 16), 4)
    else:
        depth = _round_up(min(op.ifm[2], 16 if traversal is Traversal.PART_KERNEL else 32), accel.ifm_ublock.depth)
    return height, width, depth


def _is_equal_depth(op: NpuOp) -> bool:
    """Ops whose IFM block is as deep as the OFM block (no reduction over input channels)."""
    return op.kind in (NpuKind.ELEMENTWISE, NpuKind.DEPTHWISE, NpuKind.POOLING)


# Vela's SHRAM layout (`architecture_allocator`): two banks stay reserved for the output unit,
# and the two last banks of configs with more than 16 hold the LUT whether or not one is used.
_RESERVED_OUTPUT_BANKS = 2


Blocks = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Many blocks as three arrays: heights, widths, depths."""


def _searched_grid(op: NpuOp, accel: AcceleratorConfig, only_depths: Collection[int] | None = None) -> Blocks:
    """The blocks (h, w, d) Vela's scheduler considers for `op`, sorted by depth, height, width
    (with `only_depths`, those of these depths only).

    Heights and widths step by the micro-block up to the OFM (rounded up to the micro-block);
    an upscaled IFM needs blocks of at least 2x2, so it steps by 2. A depth short of the whole
    OFM must be a multiple of 16: for 24 channels on an 8-deep micro-block, 16 and 24.
    """
    ublock = accel.ofm_ublock
    step_h = ublock.height if op.upscale == 1 else max(ublock.height, 2)
    step_w = ublock.width if op.upscale == 1 else max(ublock.width, 2)
    max_h = _round_up(min(op.ofm[0], accel.ofm_block_max.height), ublock.height)
    max_w = _round_up(min(op.ofm[1], accel.ofm_block_max.width), ublock.width)
    max_c = min(accel.ofm_block_max.depth, op.ofm[2])
    steps = range(ublock.depth, max_c + ublock.depth, ublock.depth)
    depths = [c for c in steps if c >= max_c or c % OFM_SPLIT_DEPTH == 0]
    if only_depths is not None:
        depths = [c for c in depths if c in only_depths]
    grid = np.meshgrid(
        np.array(depths, dtype=np.int64),
        np.arange(step_h, max_h + 1, step_h, dtype=np.int64),
        np.arange(step_w, max_w + 1, step_w, dtype=np.int64),
        indexing="ij",
    )
    depth, height, width = (axis.ravel() for axis in grid)
    return height, width, depth


def _ifm_blocks(
    op: NpuOp, height: np.ndarray, width: np.ndarray, depth: np.ndarray, accel: AcceleratorConfig, traversal: Traversal
) -> Blocks:
    """`ifm_block_for` of many OFM blocks at once."""
    dil_h, dil_w = op.kernel.dilated
    nearest = 1 if op.upscale > 1 else 0
    ifm_h = _required_input(height, op.kernel.stride_y, min(dil_h, SUBKERNEL_MAX), op.upscale, nearest)  # type: ignore[arg-type]
    ifm_w = _required_input(width, op.kernel.stride_x, min(dil_w, SUBKERNEL_MAX), op.upscale, nearest)  # type: ignore[arg-type]
    ifm_d = depth if _is_equal_depth(op) else np.full_like(depth, ifm_block_for(op, (1, 1, 1), accel, traversal)[2])
    return _round_up(ifm_h, accel.ofm_ublock.height), _round_up(ifm_w, accel.ofm_ublock.width), ifm_d  # type: ignore[arg-type]


def _fits_shram(
    op: NpuOp,
    height: np.ndarray,
    width: np.ndarray,
    depth: np.ndarray,
    accel: AcceleratorConfig,
    traversal: Traversal,
    ifm_blocks: Blocks | None = None,
) -> np.ndarray:
    """Which blocks fit the SHRAM with the IFM they need (`_ifm_blocks`, if not given), by
    Vela's bank arithmetic.

    The IFM is double-buffered: a 6x10x32 int8 IFM block is 1,920 bytes, 2 banks, 4 with the
    second buffer, rounded up to the IFM granule. Convolutions also need accumulators (32 or
    40 bits per element, depth rounded to 8, double-buffered, rounded to the accumulator
    granule); they take banks from the top, below the LUT. Elementwise ops have no
    accumulators but a second IFM unless it is a scalar.
    """
    ifm_h, ifm_w, ifm_d = ifm_blocks or _ifm_blocks(op, height, width, depth, accel, traversal)
    elementwise = op.kind is NpuKind.ELEMENTWISE
    bits = op.ifm_bits
    ifm_kind = {8: SHRAMElements.IFM8, 16: SHRAMElements.IFM16, 32: SHRAMElements.IFM32}[bits]
    if elementwise and bits != 32:
        ifm_kind = SHRAMElements.IFM8_Elementwise if bits == 8 else SHRAMElements.IFM16_Elementwise
    bank = accel.shram_bank_bytes
    ifm_bytes = ifm_h * ifm_w * _round_up(ifm_d * bits // 8, 8)  # type: ignore[arg-type]
    ifm_banks = _round_up(_ceil_div(ifm_bytes, bank) * 2, accel.shram_granules[ifm_kind])
    lut_banks = max(2 if op.activation is Activation.LUT else 0, 2 if accel.shram_banks > 16 else 0)
    free_top = accel.shram_banks - lut_banks
    ifm_end = _RESERVED_OUTPUT_BANKS + ifm_banks
    if elementwise:
        scalar = op.ifm2 is not None and _volume(op.ifm2) == 1
        return ifm_end + (0 if scalar else ifm_banks) <= free_top
    accumulator_bits = _accumulator_bits(op)
    acc_kind = SHRAMElements.Acc40 if accumulator_bits == 40 else SHRAMElements.Acc32
    # A 1-row 1xN convolution on a 2-high micro-block accumulates one row only (Vela's
    # `fit_block_for_ofm`).
    one_row = op.ofm[0] == 1 and op.kernel.height == 1 and accel.ofm_ublock.height == 2
    acc_height = np.minimum(height, 1) if one_row else height
    acc_bytes = acc_height * width * _round_up(depth, 8) * accumulator_bits // 8  # type: ignore[arg-type]
    acc_banks = _round_up(_ceil_div(acc_bytes, bank) * 2, accel.shram_granules[acc_kind])  # type: ignore[arg-type]
    return ifm_end <= free_top - acc_banks


def _accumulator_bits(op: NpuOp) -> int:
    """40-bit accumulators for rescaled 16-bit inputs (except pooling), else 32."""
    return 40 if op.ifm_bits == 16 and op.kind is not NpuKind.POOLING and op.rescaled else 32


def valid_block_configs(op: NpuOp, accel: AcceleratorConfig, traversal: Traversal) -> tuple[Shape, ...]:
    """OFM blocks (h, w, d) that fit the SHRAM for `op`, sorted by depth, height and width.

    These are the blocks Vela's `npu_find_block_configs` accepts, plus the odd heights and
    widths it skips on configs whose micro-block is 1 high or wide (U55-32/64/128): Vela 5.2.0
    compares the register-level resampling enum with the API enum, never equal, so it steps
    by 2 as if the IFM were upscaled, and drops the 3x14x48 block its own scheduler uses for a
    14x14x384 1x1 conv on U55-128. The fit test is Vela's SHRAM bank arithmetic, done for all
    blocks at once; a unit test checks it against Vela's `try_block_config`.
    """
    height, width, depth = _searched_grid(op, accel)
    fits = _fits_shram(op, height, width, depth, accel, traversal)
    return tuple(zip(height[fits].tolist(), width[fits].tolist(), depth[fits].tolist(), strict=True))


def _block_search_key(op: NpuOp) -> NpuOp:
    """The parts of `op` the block choice depends on (weights and memories do not matter)."""
    return NpuOp(
        kind=op.kind,
        ifm=op.ifm,
        ofm=op.ofm,
        kernel=op.kernel,
        ifm2=op.ifm2,
        sub_kind=op.sub_kind,
        activation=op.activation if op.activation is Activation.LUT else Activation.NONE,
        ifm_bits=op.ifm_bits,
        ofm_bits=op.ofm_bits,
        upscale=op.upscale,
        rescaled=op.rescaled,
    )


def select_block_config(op: NpuOp, accel: AcceleratorConfig) -> BlockConfig:
    """Choose the block config that reads the fewest IFM and weight elements per OFM element.

    For each valid block, count what the whole op fetches: the IFM block once per OFM block
    (times the sub-kernel repeats, and once per OFM depth block for convolutions, which reduce
    over all input channels), and the weights once per OFM block position in H and W. Divide
    by the OFM volume. Elementwise ops have no reuse to gain, so they prefer the largest block.
    A block whose IFM buffers (double-buffered) hold the entire IFM costs half: nothing is
    fetched twice. Ties go to the smaller, earlier block, except that among blocks no larger
    than 4x4 the one covering more of the IFM wins. This follows Vela's heuristic, so the
    cycles we compute are those of the block Vela would program.
    """
    return _select_block_config(_block_search_key(op), accel)


@lru_cache(maxsize=4096)
def _select_block_config(op: NpuOp, accel: AcceleratorConfig) -> BlockConfig:
    traversal, (height, width, depth), (ifm_h, ifm_w, ifm_d) = _fitting_blocks(_candidate_key(op, accel), accel)
    if not height.size:
        raise ValueError(f"no block config fits the SHRAM for {op}")
    cost = _fetch_costs(op, (height, width, depth), (ifm_h, ifm_w, ifm_d))
    # Vela scans the blocks in order keeping the first cheapest; a later block of equal cost
    # replaces it only if it is at most 4x4 and covers at least as much of the IFM.
    ties = np.flatnonzero(cost == cost.min())
    best = int(ties[0])
    later = ties[1:]
    small = later[(height[later] <= 4) & (width[later] <= 4)]
    if small.size:
        ifm_shape = _larger_ifm(op)
        f32 = np.float32
        covered = np.minimum(ifm_h[small], ifm_shape[0]) * np.minimum(ifm_w[small], ifm_shape[1])
        coverage = f32(ifm_shape[0] * ifm_shape[1]) / np.maximum(covered, 1).astype(f32)
        best = int(small[int(np.flatnonzero(coverage == coverage.min())[-1])])
    ofm_block = (int(height[best]), int(width[best]), int(depth[best]))
    ifm_block = (int(ifm_h[best]), int(ifm_w[best]), int(ifm_d[best]))
    return BlockConfig(ofm_block, ifm_block, traversal, _accumulator_bits(op))


def _candidate_key(op: NpuOp, accel: AcceleratorConfig) -> NpuOp:
    """A `_block_search_key` as far as the blocks searched and their fit go: the OFM height and
    width only through the tallest and widest block searched (one row stays one row), the IFM
    and second IFM only through their depth and whether the second is a scalar. Stripes of one
    operator differ mostly in height, so many share their candidates: on U65-256 (2-high
    micro-blocks) a 5-row and a 6-row stripe both search blocks up to 6 high, and every stripe
    of 32 rows or more the same blocks as the whole operator."""
    tallest = _round_up(min(op.ofm[0], accel.ofm_block_max.height), accel.ofm_ublock.height)
    widest = _round_up(min(op.ofm[1], accel.ofm_block_max.width), accel.ofm_ublock.width)
    scalar = op.ifm2 is not None and _volume(op.ifm2) == 1
    return replace(
        op,
        ifm=(1, 1, op.ifm[2]),
        ofm=(1 if op.ofm[0] == 1 else tallest, widest, op.ofm[2]),
        ifm2=None if op.ifm2 is None else (1, 1, 1) if scalar else (1, 1, 2),
    )


@lru_cache(maxsize=512)
def _fitting_blocks(op: NpuOp, accel: AcceleratorConfig) -> tuple[Traversal, Blocks, Blocks]:
    """For a `_candidate_key`: the traversal, the searched blocks that fit the SHRAM (in search
    order) and their IFM blocks. Shared between calls, so read-only. Stripes of one operator
    come one after another, so a small memo serves them; each entry holds a grid of up to a few
    thousand blocks."""
    traversal = choose_traversal(op)
    height, width, depth = _searched_grid(op, accel, frozenset(_searched_depths(op.ofm[2], accel)))
    ifm_blocks = _ifm_blocks(op, height, width, depth, accel, traversal)
    fits = _fits_shram(op, height, width, depth, accel, traversal, ifm_blocks)
    blocks = tuple(axis[fits] for axis in (height, width, depth))
    ifm = tuple(axis[fits] for axis in ifm_blocks)
    for axis in (*blocks, *ifm):
        axis.flags.writeable = False
    return traversal, blocks, ifm  # type: ignore[return-value]


def _larger_ifm(op: NpuOp) -> Shape:
    """The IFM, or the second IFM of an elementwise op when it has more elements."""
    return op.ifm if op.ifm2 is None or _volume(op.ifm) >= _volume(op.ifm2) else op.ifm2


def _fetch_costs(op: NpuOp, ofm_blocks: Blocks, ifm_blocks: Blocks) -> np.ndarray:
    """IFM and weight elements fetched per OFM element, for each block (see `select_block_config`).

    Vela computes these costs in single precision; so do we, so that ties break the same way.
    """
    f32 = np.float32
    height, width, depth = ofm_blocks
    ifm_h, ifm_w, ifm_d = ifm_blocks
    ifm_shape = _larger_ifm(op)
    ofm_elements = f32(_volume(op.ofm))
    if op.kind is NpuKind.ELEMENTWISE:
        cost = ofm_elements / (height * width * depth).astype(f32)
    else:
        dil_h, dil_w = op.kernel.dilated
        ifm_repeats = _ceil_div(dil_w, SUBKERNEL_MAX) * _ceil_div(dil_h, SUBKERNEL_MAX)
        weight_fetch_wh = op.kernel.area if op.kind in (NpuKind.CONV2D, NpuKind.DEPTHWISE) else 0
        full_h, full_w, full_d = (_ceil_div(op.ofm[axis], block) for axis, block in enumerate(ofm_blocks))  # type: ignore[arg-type]
        ratio_h = f32(op.ofm[0]) / height.astype(f32)
        ratio_w = f32(op.ofm[1]) / width.astype(f32)
        weight_fetch = (weight_fetch_wh * ifm_shape[2] * full_h * full_w).astype(f32)
        if op.kind is not NpuKind.DEPTHWISE:
            weight_fetch = weight_fetch * (f32(op.ofm[2]) / depth.astype(f32)) * depth.astype(f32)
        ifm_fetch = (ifm_h * ifm_w * (ifm_shape[2] * ifm_repeats)).astype(f32) * ratio_w * ratio_h
        if not _is_equal_depth(op):
            ifm_fetch = ifm_fetch * full_d.astype(f32)
        cost = (ifm_fetch + weight_fetch) / ofm_elements
    whole_ifm_buffered = _volume(ifm_shape) < ifm_h * ifm_w * ifm_d * 2
    return np.where(whole_ifm_buffered, cost / f32(2), cost)


# --------------------------------------------------------------------------- #
# Compute cycles
# --------------------------------------------------------------------------- #


def _searched_depths(ofm_depth: int, accel: AcceleratorConfig) -> list[int]:
    """The block depths Vela's scheduler tries, in order.

    It starts at 16 (or the whole OFM depth if smaller), steps by the micro-block depth and
    rounds up to a multiple of 16 while the block is shallower than the OFM. With a 4-deep
    micro-block (U55-32) and 24 channels it tries only 16: 16 + 4 = 20 rounds up to 32 > 24.
    """
    step = accel.ofm_ublock.depth
    limit = _round_up(min(ofm_depth, accel.ofm_block_max.depth), step)
    depth = max(step, min(limit, OFM_SPLIT_DEPTH))
    if depth < ofm_depth:
        depth = _round_up(depth, OFM_SPLIT_DEPTH)
    depths = []
    while depth <= limit:
        depths.append(depth)
        depth += step
        if depth < ofm_depth:
            depth = _round_up(depth, OFM_SPLIT_DEPTH)
    return depths


def ofm_microblock(op: NpuOp, accel: AcceleratorConfig) -> Shape:
    """The OFM micro-block; 1x4 instead of 2x2 for 1-row convolutions on 256-MAC configs."""
    ublock = accel.ofm_ublock
    if (
        ublock.height == 2
        and op.kind in (NpuKind.CONV2D, NpuKind.VECTOR_PRODUCT)
        and op.ofm[0] == 1
        and op.ofm[1] % 2 == 0
        and op.kernel.height == 1
    ):
        return (1, 4, ublock.depth)
    return (ublock.height, ublock.width, ublock.depth)


def mac_cycles_per_block(op: NpuOp, block: BlockConfig, accel: AcceleratorConfig) -> int:
    """Cycles the MAC array spends on one OFM block.

    The array handles one micro-block (e.g. 1x2x8 on U55-128) per step; a block of 5x16x16 is
    5 * 8 * 2 = 80 micro-blocks. Each step takes at least 4 cycles per micro-block position.
    Worked case, 3x3 conv, part-kernel-first, 16 input channels, block 5x16x16 on U55-128:
    ceil(9 / 4) = 3 kernel steps, each max(32, 4 * 40) = 160 cycles per micro-block column of
    depth 2, times ceil(16 / 8) = 2 channel groups: 160 * 3 * 2 * 2 = 1920 cycles.
    """
    ofm_block = _min_shape(op.ofm, block.ofm_block)
    ifm_block = _min_shape(op.ifm, block.ifm_block)
    ublock = ofm_microblock(op, accel)
    ublocks = _div_round_up(ofm_block, ublock)
    ublocks_wh = ublocks[0] * ublocks[1]
    weight_cycles = 32 * ublock[2] // 8  # the weight decoder delivers 8 weights per cycle
    limit = op.kind.subkernel_limit
    acc40 = block.accumulator_bits == 40
    kernel_h, kernel_w = op.kernel.height, op.kernel.width
    is_conv = op.kind is NpuKind.CONV2D
    part_kernel = is_conv and block.traversal is Traversal.PART_KERNEL
    total = 0
    for x in range(0, kernel_w, limit):
        for y in range(0, kernel_h, limit):
            elements = min(kernel_h - y, limit) * min(kernel_w - x, limit)
            if op.kind is NpuKind.POOLING:
                steps = 1
                cycles = max(4, elements) * _volume(ublocks)
                if accel.name != "ethos-u55-32":
                    cycles *= op.ifm_bits // 2
            elif op.kind is NpuKind.DEPTHWISE:
                steps = _ceil_div(elements, 4)
                cycles = max(weight_cycles, 4 * ublocks_wh * (op.ifm_bits // 8)) * steps * ublocks[2]
            elif part_kernel:
                steps = _ceil_div(elements, 2 if op.ifm_bits == 16 else 4)
                cycles = max(weight_cycles, 4 * ublocks_wh) * steps * ublocks[2] * _ceil_div(ifm_block[2], 8)
            else:  # depth-first convolution, vector product, reduce-sum
                steps = elements
                cycles = max(weight_cycles, 4 * ublocks_wh) * steps * ublocks[2]
            # A block of a single micro-block column cannot hide the accumulator latency.
            delay_cycles = 0
            if accel.name == "ethos-u55-32":
                delay = 7 if acc40 else 3
                if ublocks_wh == 1:
                    if ublocks[2] == 1:
                        delay_cycles = delay * steps
                    elif steps > 1:
                        delay_cycles = delay * (steps - 1) * ublocks[2]
                if (ublocks[0] == 1 or ublocks[1] == 1) and ublocks[2] > 1 and acc40:
                    delay_cycles += delay * ublocks[2]
            else:
                delay = 3 if acc40 and accel.macs <= 128 else 2
                if ublocks_wh == 1:
                    if ublocks[2] == 1:
                        delay_cycles = delay * steps
                    elif steps > 1:
                        delay_cycles = delay * (steps - 1) * ublocks[2]
            if part_kernel:
                delay_cycles *= _ceil_div(ifm_block[2], 8)
            total += cycles + delay_cycles
    if op.kind in (NpuKind.CONV2D, NpuKind.VECTOR_PRODUCT, NpuKind.REDUCE_SUM):
        # Convolutions reduce over all input channels, one IFM block depth at a time.
        total *= _ceil_div(op.ifm[2], ifm_block[2])
    return total // accel.cores


def output_cycles_per_element(op: NpuOp, block: BlockConfig, accel: AcceleratorConfig) -> float:
    """Cycles per OFM element in the output stage: rescale/add rate or activation rate, the slower.

    E.g. on U55-128 a conv with ReLU: max(0.5 for a conv output, 0.5 for a clamp) = 0.5; an
    int8 add: 1.5 (it rescales both inputs); a table-lookup activation: 1.0.
    """
    if op.kind is NpuKind.ELEMENTWISE and op.ifm_bits == 32:
        index = 1 if op.ifm2 is not None else 0
    elif op.sub_kind == "mul" and op.kind is NpuKind.ELEMENTWISE and op.ofm_bits == 32:
        index = 2
    elif (op.sub_kind == "mul" and op.kind is NpuKind.ELEMENTWISE) or (
        op.kind is not NpuKind.ELEMENTWISE and block.accumulator_bits == 40
    ):
        index = 3
    elif op.kind is NpuKind.ELEMENTWISE and op.sub_kind in ("add", "sub"):
        index = 5
    elif op.kind is NpuKind.POOLING and op.sub_kind == "max":
        index = 6
    else:
        index = 7
    activation = {Activation.LUT: 0, Activation.CLAMP: 1, Activation.NONE: 2}[op.activation]
    return max(accel.output_cycles[index], accel.activation_cycles[activation])


def burst_bytes(
    memory: Memory, layout: Layout, bits: int, block: Shape, shape: Shape, elements: int, is_read: bool, cores: int = 1
) -> int:
    """Bytes a transfer of `elements` costs on `memory`, counting the waste of short bursts.

    The NPU fetches a block row by row; how many bytes are contiguous depends on the layout. An
    NHCWB16 read of a block 18 wide touches 16 channels * 18 columns = 288 contiguous bytes, more
    than a 32-byte SRAM burst, so there is no overhead. An NHWC read of a 3-channel IFM with a
    block 8 deep is 8 bytes per burst: on flash (128-byte bursts) each 8 bytes cost 128.
    """
    burst_bits = 8
    if layout is Layout.NHCWB16:
        z_stride = shape[1] * bits * 16 // 8
        if z_stride == block[2]:
            burst_bits = bits * block[1] * block[2]
        elif is_read:
            burst_bits = 16 * bits * block[1]
        else:
            burst_bits = 16 * bits * block[1] * cores
    else:
        x_stride = shape[2] * bits // 8
        if is_read:
            burst_bits = bits * block[1] * block[2] if x_stride == block[2] else bits * block[2]
        elif block[2] <= 16 and x_stride == block[2]:
            burst_bits = bits * block[1] * block[2]
        else:
            burst_bits = min(64 * 8, 16 * bits * cores, block[2] * bits)
    burst = min(memory.burst_length, burst_bits // 8)
    assert burst > 0, "burst length cannot be zero"
    transfer = elements * bits // 8
    return transfer * memory.burst_length // burst


def ifm_block_cycles(op: NpuOp, block: BlockConfig, placement: Placement) -> int:
    """Cycles to fetch the first IFM block (the slower of IFM and IFM2): latency + bytes / bandwidth."""
    cycles = 0
    inputs: list[tuple[Shape, Memory, Layout]] = [(op.ifm, placement.ifm, op.ifm_layout)]
    if op.ifm2 is not None:
        inputs.append((op.ifm2, placement.ifm2 or placement.ifm, op.ifm2_layout))
    for shape, memory, layout in inputs:
        elements = _volume(_min_shape(shape, block.ifm_block))
        transfer = burst_bytes(memory, layout, op.ifm_bits, block.ifm_block, shape, elements, True)
        cycles = max(cycles, memory.read_latency + int(transfer / memory.bandwidth))
    return cycles


def ofm_block_cycles(op: NpuOp, block: BlockConfig, placement: Placement, cores: int = 1) -> int:
    """Cycles to write one OFM block: latency + bytes / bandwidth."""
    elements = _volume(_min_shape(op.ofm, block.ofm_block))
    memory = placement.ofm
    transfer = burst_bytes(memory, op.ofm_layout, op.ofm_bits, block.ofm_block, op.ofm, elements, False, cores)
    return memory.write_latency + int(transfer / memory.bandwidth)


def npu_cycles(
    op: NpuOp, block: BlockConfig, accel: AcceleratorConfig, placement: Placement, first: bool = True, last: bool = True
) -> ComputeCycles:
    """NPU cycles for `op`: blocks pipelined through the MAC, output and command stages.

    `first` adds the fetch of the first IFM block (nothing to overlap it with) and the filling
    of the pipeline, `last` the output of the last block and the draining of the pipeline; a
    stripe inside a run of back-to-back stripes sets them False (Vela prices a cascaded
    operator as the whole operator with its stripe's block config: blocks pipeline across
    stripes, and the fill, drain, first fetch and last write are paid once).
    """
    if op.kind is NpuKind.ELEMENTWISE:
        return _elementwise_cycles(op, block, accel, placement)
    ofm_block = _min_shape(op.ofm, block.ofm_block)
    ublock = ofm_microblock(op, accel)
    ublocks_per_block = _volume(_div_round_up(ofm_block, ublock))
    # Partial edge blocks only cost the micro-blocks they contain: count blocks as a fraction.
    blocks = _volume(_div_round_up(op.ofm, ublock)) / ublocks_per_block
    ao_per_element = output_cycles_per_element(op, block, accel)
    ao_compute = math.ceil(ao_per_element * _volume(ofm_block))
    bias = 0.0
    if op.kind in (NpuKind.CONV2D, NpuKind.DEPTHWISE, NpuKind.VECTOR_PRODUCT) and op.scale_bytes and placement.scales:
        # 10 bytes of bias and scale per output channel, read with the memory's latency.
        bias = 10 * ofm_block[2] * placement.scales.read_latency / 256
    ao = max(float(ao_compute), bias)
    mac = float(mac_cycles_per_block(op, block, accel))
    ifm_cycles = ifm_block_cycles(op, block, placement)
    ofm_cycles = ofm_block_cycles(op, block, placement, accel.cores)
    # The command stream issues one block's transfers per block; the imbalance between the IFM
    # fetch and the OFM write is what it cannot hide. It runs on a quarter-rate clock.
    min_memory = abs(ofm_cycles - ifm_cycles) if blocks > 1 else 0
    issue = (min_memory + mac + ao) / 4
    mac_balanced = max(mac, issue)
    ao_balanced = max(ao, issue)
    if mac_balanced > ao_balanced:
        total = int(mac_balanced * blocks) + (ao_balanced if last else 0)
    else:
        total = ao_balanced * blocks + (mac_balanced if first else 0)
    if last:
        total += ofm_cycles
    if first:
        total += ifm_cycles
    mac_total = int(mac * blocks + ao)
    ao_total = int(ao_compute * blocks + mac)
    return ComputeCycles(mac=mac_total, ao=ao_total, issue=int(issue), total=int(total))


def _elementwise_cycles(op: NpuOp, block: BlockConfig, accel: AcceleratorConfig, placement: Placement) -> ComputeCycles:
    """Elementwise ops stream: the output stage or the command issue sets the rate per element.

    NHCWB16 outputs are written in whole bricks of 16 channels, so a 24x24x8 add costs as much as
    24x24x16: 9216 elements * 1.5 cycles = 13824 cycles on U55-128.
    """
    ofm = op.ofm if op.ofm_layout is Layout.NHWC else (op.ofm[0], op.ofm[1], _round_up(op.ofm[2], 16))
    elements = _volume(ofm)
    ao_per_element = output_cycles_per_element(op, block, accel)
    ao = math.ceil(ao_per_element * elements)
    memory = max(ifm_block_cycles(op, block, placement), ofm_block_cycles(op, block, placement, accel.cores))
    issue_per_element = (memory / _volume(block.ofm_block) + ao_per_element) / 4
    issue = math.ceil(issue_per_element * elements)
    return ComputeCycles(mac=0, ao=ao, issue=issue, total=max(issue, ao))


# --------------------------------------------------------------------------- #
# Memory traffic
# --------------------------------------------------------------------------- #


def weight_refetches(op: NpuOp, block: BlockConfig) -> int:
    """How often the weights stream through: once per OFM block position in H and W.

    The NPU keeps no weights between blocks; a 32x32 OFM in 4x32 blocks reads its weights 8 times.
    """
    ofm_block = _min_shape(op.ofm, block.ofm_block)
    blocks = _div_round_up(op.ofm, ofm_block)
    return blocks[0] * blocks[1]


def element_access(op: NpuOp, block: BlockConfig) -> dict[str, int]:
    """Elements read or written per operand (before burst overhead), for the whole op.

    Each OFM block reads its IFM block (with halo) again: a 3x3 conv re-reads the rows shared by
    neighbouring blocks. Depthwise and pooling blocks read only their own channels; convolutions
    read the full IFM depth for every OFM depth block.
    """
    ifm_round = 16 if op.ifm_layout is Layout.NHCWB16 else 1
    ofm_round = 16 if op.ofm_layout is Layout.NHCWB16 else 1
    access: dict[str, int] = {}
    ofm_block = _min_shape(op.ofm, block.ofm_block)
    blocks = _div_round_up(op.ofm, ofm_block)
    if op.kind.uses_macs:
        if op.kind in (NpuKind.DEPTHWISE, NpuKind.POOLING):
            blocks = (blocks[0], blocks[1], 1)
        limit = op.kind.subkernel_limit
        subkernels = _ceil_div(op.kernel.width, limit) * _ceil_div(op.kernel.height, limit)
        ifm_block = _min_shape(op.ifm, block.ifm_block)
        fetch = ifm_block[0] * ifm_block[1] * _round_up(op.ifm[2], ifm_round)
        access["ifm"] = fetch * subkernels * _volume(blocks)
    else:
        # Elementwise: each input element is read once, in whole bricks. A scalar operand is
        # fetched once if it is wider than 8 bits; an 8-bit scalar goes in the command itself.
        ofm_elements = op.ofm[0] * op.ofm[1] * _round_up(op.ofm[2], ifm_round)
        if _volume(op.ifm) == 1:
            if op.ifm_bits > 8:
                access["ifm"] = op.ifm[0] * op.ifm[1] * _round_up(op.ifm[2], ifm_round)
            elif op.ifm2 is not None:
                access["ifm2"] = ofm_elements
        else:
            access["ifm"] = ofm_elements
            if op.ifm2 is not None and _volume(op.ifm2) > 1:
                access["ifm2"] = ofm_elements
            elif op.ifm2 is not None and op.ifm_bits > 8:
                access["ifm2"] = op.ifm2[0] * op.ifm2[1] * _round_up(op.ifm2[2], ifm_round)
    access["ofm"] = op.ofm[0] * op.ofm[1] * _round_up(op.ofm[2], ofm_round)
    return access


def op_performance(
    op: NpuOp,
    accel: AcceleratorConfig,
    placement: Placement,
    block: BlockConfig | None = None,
    first: bool = True,
    last: bool = True,
) -> OpPerformance:
    """Price `op`: compute cycles, bytes per memory with burst overhead, and access cycles."""
    block = block or select_block_config(op, accel)
    compute = npu_cycles(op, block, accel, placement, first, last)
    access = element_access(op, block)
    traffic: dict[str, dict[str, Access]] = {}

    def add(memory: Memory, kind: str, stored: int, transfer: int) -> None:
        kinds = traffic.setdefault(memory.name, {})
        previous = kinds.get(kind, Access(0, 0))
        kinds[kind] = Access(previous.bytes + stored, previous.transfer + transfer)

    if "ifm" in access:
        count = access["ifm"]
        add(
            placement.ifm,
            "ifm",
            count * op.ifm_bits // 8,
            burst_bytes(placement.ifm, op.ifm_layout, op.ifm_bits, block.ifm_block, op.ifm, count, True),
        )
    if "ifm2" in access and op.ifm2 is not None:
        memory = placement.ifm2 or placement.ifm
        count = access["ifm2"]
        add(
            memory,
            "ifm2",
            count * op.ifm_bits // 8,
            burst_bytes(memory, op.ifm2_layout, op.ifm_bits, block.ifm_block, op.ifm2, count, True),
        )
    count = access["ofm"]
    add(
        placement.ofm,
        "ofm",
        count * op.ofm_bits // 8,
        burst_bytes(placement.ofm, op.ofm_layout, op.ofm_bits, block.ofm_block, op.ofm, count, False, accel.cores),
    )
    if op.has_weights and placement.weights is not None:
        refetch = weight_refetches(op, block)
        add(placement.weights, "weights", op.weight_bytes * refetch, op.weight_bytes * refetch)
        if op.scale_bytes:
            scales = placement.scales or placement.weights
            add(scales, "scales", op.scale_bytes * refetch, op.scale_bytes * refetch)
    memories = {
        m.name: m
        for m in (placement.ifm, placement.ifm2, placement.ofm, placement.weights, placement.scales)
        if m is not None
    }
    access_cycles = {
        name: int(sum(a.transfer for a in kinds.values()) / memories[name].bandwidth) for name, kinds in traffic.items()
    }
    return OpPerformance(compute, block, op.macs, traffic, access_cycles)


def transfer_cycles(source: Memory, destination: Memory, size: int) -> int:
    """A DMA copy of `size` bytes: the slower of reading the source and writing the destination.

    600 bytes of weights from U55 flash (1 B/cycle, 64 cycles latency) to SRAM: 600 + 64 = 664.
    """
    read = int(size / source.bandwidth) + source.read_latency
    write = int(size / destination.bandwidth) + destination.write_latency
    return max(read, write)
