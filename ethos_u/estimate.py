"""Network-level estimate: every operator run alone (no cascading), as Vela schedules it.

This is what `cascade-estimate` prints and what the calibration compares with Vela's own
per-layer report. Each operator computes its whole output in one go; three decisions are
made the way Vela makes them for an uncascaded network:

* **Layouts.** Feature maps the NPU both writes and reads use the brick layout NHCWB16; graph
  inputs and outputs, and tensors read through a reshape that changes their width or depth
  (the softmax input), stay NHWC.
* **Placement.** In Shared_Sram and Sram_Only every feature map lives in the SRAM arena. In
  Dedicated_Sram the arena is DRAM and the SRAM (`arena_cache_size`) is a cache: feature maps
  that fit are moved into it, preferring the ones read and written most (`place_feature_maps`).
* **Weights.** An operator's weights are either streamed from flash/DRAM, once per OFM block
  position, or first copied into SRAM by DMA and read from there. The copy can run while the
  previous operator computes, in the cycles that operator leaves the flash/DRAM port idle (its
  "slack"); only the part that does not fit in that slack delays the operator. Weights may also
  be split in depth slices that alternate between two SRAM buffers, each copied while the one
  before computes. The fastest choice wins (`plan_weights`).

One deliberate difference from Vela: Vela lets a prefetch use the whole previous operator,
even when that operator itself streams its weights through the same flash port; we count only
the idle part of the port. Per layer this moves some cycles from one operator to its
neighbour; totals agree (benchmarks/calibrate_cost_model.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cascade.dialects.access import Region
from cascade.ethos_u.arch import ArchConfig, Memory, arch_config
from cascade.ethos_u.cost_model import ALIGNMENT, EthosUCostModel, MemoryMap
from cascade.ethos_u.lowering import UnsupportedOpError, hwc
from cascade.ethos_u.performance import Layout, select_block_config, transfer_cycles
from cascade.passes.planner.from_nn import ProgramInfo, program_from_module
from cascade.passes.planner.graph import OpInfo


@dataclass
class LayerEstimate:
    """One operator of the network: cycles, MACs and traffic per memory."""

    name: str
    kind: str
    cycles: int
    npu_cycles: int
    macs: int
    npu_ops: int
    bytes_by_memory: dict[str, int] = field(default_factory=dict)
    access_cycles: dict[str, int] = field(default_factory=dict)
    weights: str = "-"  # "-" (none), "streamed", "buffered" or "double-buffered"
    target: str = "NPU"


@dataclass
class NetworkEstimate:
    """The per-layer estimate of a whole network on one architecture."""

    arch: ArchConfig
    layers: list[LayerEstimate]

    @property
    def total_cycles(self) -> int:
        return sum(layer.cycles for layer in self.layers)

    @property
    def total_npu_cycles(self) -> int:
        return sum(layer.npu_cycles for layer in self.layers)

    @property
    def total_macs(self) -> int:
        return sum(layer.macs for layer in self.layers)

    def memory_names(self) -> list[str]:
        names = {name for layer in self.layers for name in layer.bytes_by_memory}
        return [m.name for m in self.arch.memories() if m.name in names] + sorted(
            names - {m.name for m in self.arch.memories()}
        )

    def total_bytes(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for layer in self.layers:
            for memory, count in layer.bytes_by_memory.items():
                totals[memory] = totals.get(memory, 0) + count
        return totals

    @property
    def inference_seconds(self) -> float:
        return self.total_cycles / self.arch.system.core_clock


# --------------------------------------------------------------------------- #
# Layouts and placement
# --------------------------------------------------------------------------- #


def choose_layouts(program: ProgramInfo) -> dict[str, Layout]:
    """NHWC for graph inputs/outputs and tensors reshaped to another width or depth, else NHCWB16."""
    layouts: dict[str, Layout] = {}
    for name in (*program.graph_inputs, *program.graph_outputs):
        layouts[name] = Layout.NHWC
    for op in program.ops:
        if op.kind == "softmax":
            # Vela reads the softmax input as a column (1xNx1) for its max pool: linear format.
            for tensor in op.inputs:
                layouts[tensor.name] = Layout.NHWC
        elif op.kind == "reshape":
            source, result = hwc(op.inputs[0].shape), hwc(op.output.shape)
            if source[1:] != result[1:]:
                layouts[op.inputs[0].name] = Layout.NHWC
                layouts[op.output.name] = Layout.NHWC
        elif op.kind == "concat" and op.attributes.get("axis") == len(op.output.shape) - 1:
            if any(t.shape[-1] % 16 for t in op.inputs):
                layouts[op.output.name] = Layout.NHWC
    return layouts


@dataclass(frozen=True)
class _LiveRange:
    tensor: str
    start: int
    end: int
    size: int
    access: int  # elements read and written: how much it pays to keep it in SRAM


def place_feature_maps(
    program: ProgramInfo,
    model: EthosUCostModel,
    reserved: Sequence[int],
    limit: int,
    component_limit: int = 16,
) -> set[str]:
    """Choose which feature maps live in the SRAM cache (Dedicated_Sram), the rest in DRAM.

    Every tensor an NPU operator writes, except graph outputs, may move to SRAM. Over the
    operators' time steps, a tensor occupies its buffer from its producer to its last consumer;
    `reserved[t]` is SRAM already taken at step t (weight buffers). Tensors that cannot fit even
    alone stay in DRAM; tensors that fit whatever the others do move to SRAM; for the rest, an
    exhaustive search over each group of overlapping tensors keeps the set with the most
    element accesses. Binary elementwise operators then need both inputs in the same memory.
    """
    outputs = set(program.graph_outputs)
    last_use: dict[str, int] = {}
    for index, op in enumerate(program.ops):
        for tensor in op.inputs:
            last_use[tensor.name] = index
    ranges: list[_LiveRange] = []
    for index, op in enumerate(program.ops):
        name = op.output.name
        if name in outputs or name not in last_use or op.kind == "reshape":
            continue
        size = model.buffer_bytes(op.output, op.output.shape)
        readers = sum(math.prod(op.output.shape) for user in program.ops if name in {t.name for t in user.inputs})
        ranges.append(_LiveRange(name, index, last_use[name], size, readers + math.prod(op.output.shape)))
    steps = len(program.ops)
    base = [reserved[t] if t < len(reserved) else 0 for t in range(steps)]
    peak = list(base)
    for live in ranges:
        for t in range(live.start, live.end + 1):
            peak[t] += live.size
    kept: set[str] = set()
    if max(peak, default=0) <= limit:
        kept = {live.tensor for live in ranges}
        return _sanitize(program, kept)

    competing: list[_LiveRange] = []
    for live in ranges:
        if _window(base, live) + live.size > limit:
            for t in range(live.start, live.end + 1):
                peak[t] -= live.size  # cannot fit: evicted
    for live in ranges:
        if _window(base, live) + live.size > limit:
            continue
        if _window(peak, live) <= limit:
            kept.add(live.tensor)
            for t in range(live.start, live.end + 1):
                base[t] += live.size
        else:
            competing.append(live)
    # Group overlapping live ranges and search each group exhaustively (bounded size).
    groups: list[list[_LiveRange]] = []
    for live in sorted(competing, key=lambda r: (r.start, r.end)):
        if groups and live.start <= max(r.end for r in groups[-1]) and len(groups[-1]) < component_limit:
            groups[-1].append(live)
        else:
            groups.append([live])
    for group in groups:
        choice = _best_subset(group, base, limit)
        for live, keep in zip(group, choice, strict=True):
            if keep:
                kept.add(live.tensor)
                for t in range(live.start, live.end + 1):
                    base[t] += live.size
    return _sanitize(program, kept)


def _window(usage: Sequence[int], live: _LiveRange) -> int:
    return max(usage[live.start : live.end + 1])


def _best_subset(group: Sequence[_LiveRange], base: Sequence[int], limit: int) -> list[bool]:
    """Which live ranges of `group` to keep in SRAM: the most accesses without exceeding `limit`."""
    best: tuple[int, list[bool]] = (-1, [False] * len(group))
    usage = list(base)
    chosen: list[bool] = []

    def search(index: int, score: int) -> None:
        nonlocal best
        if index == len(group):
            if score > best[0]:
                best = (score, list(chosen))
            return
        live = group[index]
        if _window(usage, live) + live.size <= limit:
            for t in range(live.start, live.end + 1):
                usage[t] += live.size
            chosen.append(True)
            search(index + 1, score + live.access)
            chosen.pop()
            for t in range(live.start, live.end + 1):
                usage[t] -= live.size
        chosen.append(False)
        search(index + 1, score)
        chosen.pop()

    search(0, 0)
    return best[1]


def _sanitize(program: ProgramInfo, kept: set[str]) -> set[str]:
    """A binary elementwise operator reads both inputs from one memory: evict the SRAM one."""
    kept = set(kept)
    for op in program.ops:
        if op.kind in ("add", "sub", "mul", "minimum", "maximum") and len(op.inputs) == 2:
            names = [t.name for t in op.inputs]
            in_sram = [name in kept for name in names]
            if in_sram[0] != in_sram[1]:
                kept.difference_update(names)
    return kept


# --------------------------------------------------------------------------- #
# Weights
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class WeightPlan:
    """How an operator gets its weights: streamed from flash/DRAM, or buffered in SRAM by DMA.

    `slices` > 1 is double buffering: the OFM depth is split in that many slices, each a
    separate NPU operation whose weights are copied while the previous slice computes.
    """

    mode: str = "-"  # "-" (no weights), "streamed", "buffered", "double-buffered"
    slices: int = 1
    buffer_bytes: int = 0


@dataclass
class _Priced:
    cycles: int
    npu_cycles: int
    macs: int
    npu_ops: int
    traffic: dict[str, int]
    access: dict[str, int]


def _add(totals: dict[str, int], more: dict[str, int]) -> None:
    for key, value in more.items():
        totals[key] = totals.get(key, 0) + value


def _slice_regions(op: OpInfo, slices: int, granule: int) -> list[Region]:
    """The output split in `slices` depth slices, each a multiple of the block depth."""
    shape = op.output.shape
    depth = shape[-1]
    step = min(depth, -(-depth // slices // granule) * granule if granule else depth)
    regions = []
    for start in range(0, depth, step):
        size = min(step, depth - start)
        regions.append(Region((*[0] * (len(shape) - 1), start), (*shape[:-1], size)))
    return regions


def price_layer(op: OpInfo, model: EthosUCostModel, memories: MemoryMap, plan: WeightPlan, slack: int) -> _Priced:
    """Cycles and traffic of `op` with its weights handled as `plan` says.

    Buffered weights follow a small timeline. Time 0 is when the previous operator ends; copies
    may start `slack` cycles earlier. With two SRAM buffers, slice i's copy waits for the copy
    before it and for slice i-2 to finish computing (which frees its buffer); slice i computes
    once it is copied and slice i-1 is done. E.g. 2 slices of 9.6k copy cycles after an
    operator with 12.3k cycles of slack: the first copy ends under that operator, the second
    starts 2.7k cycles before it ends, so the first slice (5.4k cycles) waits for nothing and
    the second waits 9.6k - 2.7k - 5.4k = 1.5k cycles.
    """
    arch = model.arch
    full = Region.full(op.output.shape)
    if plan.mode not in ("buffered", "double-buffered"):
        cost = model.region_cost(op, full, memories, False)
        return _Priced(
            cost.total_cycles, cost.npu_cycles, cost.macs, len(cost.ops), cost.bytes_by_memory(), cost.access_cycles()
        )
    size = model.weight_buffer_bytes(op)
    granule = _block_depth(op, model)
    regions = [full] if plan.slices <= 1 else _slice_regions(op, plan.slices, granule)
    depth = op.output.shape[-1]
    npu = macs = ops = 0
    traffic: dict[str, int] = {}
    access: dict[str, int] = {}
    # Time 0 is when the previous operator ends; its last `slack` cycles can carry our DMA.
    # Two SRAM slots: slice i's copy waits for the copy before it and for slice i-2 to finish
    # computing (its slot); slice i computes once copied and once slice i-1 is done.
    dma_done = -slack
    compute_done = [0, 0]  # the last two slices' completion times (0: the previous operator)
    extra = 0  # cycles a slice is limited by its own memory traffic rather than the NPU
    for index, region in enumerate(regions):
        part = _round_up(size * region.shape[-1] // depth, ALIGNMENT)
        dma = transfer_cycles(arch.const_memory, arch.staging_memory, part)
        slot_free = compute_done[0] if index >= 2 else -slack
        dma_done = max(dma_done, slot_free) + dma
        cost = model.region_cost(op, region, memories, True, full_op_blocks=len(regions) > 1)
        start = max(dma_done, compute_done[1])
        compute_done = [compute_done[1], start + cost.total_cycles]
        npu += cost.npu_cycles
        extra += cost.total_cycles - cost.npu_cycles
        macs += cost.macs
        ops += len(cost.ops)
        _add(traffic, cost.bytes_by_memory())
        _add(access, cost.access_cycles())
        # The copy reads the stream from flash/DRAM once and writes it into SRAM.
        _add(traffic, {arch.const_memory.name: part, arch.staging_memory.name: part})
        _add(access, {arch.const_memory.name: int(part / arch.const_memory.bandwidth)})
    cycles = compute_done[1]
    return _Priced(cycles, max(npu, cycles - extra), macs, ops, traffic, access)


def _block_depth(op: OpInfo, model: EthosUCostModel) -> int:
    steps = [step for step in model.lower(op) if step.uses_weights]
    if not steps:
        return 16
    return select_block_config(steps[0].npu, model.arch.accelerator).ofm_block[2]


SLICE_COUNTS = (2, 3, 4, 6, 8, 12, 16)


def plan_weights(
    op: OpInfo, model: EthosUCostModel, memories: MemoryMap, slack: int, available: int
) -> tuple[WeightPlan, _Priced]:
    """The fastest way to get `op`'s weights, choosing as Vela does, by estimated cycles.

    Streaming reads the whole stream from flash once per OFM block position: a 32x32 output in
    4x32 blocks reads it 8 times, at 1 byte/cycle on U55 flash. Buffering copies it once into
    SRAM (`available` bytes free) and reads it from there; in slices when it does not fit or when
    slices hide the copy better. Whichever is fastest wins.
    """
    size = model.weight_buffer_bytes(op)
    streamed = price_layer(op, model, memories, WeightPlan("streamed"), slack)
    if not size:
        return WeightPlan(), streamed
    best = (WeightPlan("streamed"), streamed)
    arch = model.arch
    if arch.const_memory is arch.staging_memory:
        return best
    if size <= available:
        single = price_layer(op, model, memories, WeightPlan("buffered", 1, size), slack)
        if single.cycles < best[1].cycles:
            best = (WeightPlan("buffered", 1, size), single)
    depth = op.output.shape[-1]
    granule = _block_depth(op, model)
    tried: set[int] = set()
    for count in SLICE_COUNTS:
        regions = _slice_regions(op, count, granule)
        if len(regions) < 2 or len(regions) in tried:
            continue
        tried.add(len(regions))
        buffer = 2 * _round_up(size * regions[0].shape[-1] // depth, ALIGNMENT)
        if buffer > available:
            continue
        plan = WeightPlan("double-buffered", len(regions), buffer)
        priced = price_layer(op, model, memories, plan, slack)
        if priced.cycles < best[1].cycles:
            best = (plan, priced)
    return best


def _round_up(value: int, quantum: int) -> int:
    return -(-value // quantum) * quantum


# --------------------------------------------------------------------------- #
# The estimate
# --------------------------------------------------------------------------- #


def _layer_name(op: OpInfo) -> str:
    location = op.attributes.get("location")
    return str(location) if location else op.name


def estimate_program(program: ProgramInfo, arch: ArchConfig, weight_buffering: bool = True) -> NetworkEstimate:
    """Estimate every operator of `program` run alone, in program order (see the module doc)."""
    layouts = choose_layouts(program)
    # Vela runs fully connected layers on the NPU, reading their encoded weights (ds_cnn_kws's
    # classifier: 1,040 bytes from flash, where its raw int8 weights and records are 896).
    model = EthosUCostModel(arch, layouts, fc_on_npu=True)
    sram = arch.staging_memory
    constants = arch.const_memory
    ops = program.ops

    def memory_map(in_sram: Iterable[str]) -> MemoryMap:
        return MemoryMap(arch.arena_memory, sram, constants, {name: sram for name in in_sram})

    # Pass 1: weights, decided with every intermediate in SRAM (Vela decides buffering first).
    outputs = set(program.graph_outputs)
    first_guess = memory_map(op.output.name for op in ops if op.output.name not in outputs)
    if not arch.spilling:
        first_guess = MemoryMap(arch.arena_memory, sram, constants)
    plans: list[WeightPlan] = []
    slack = 0
    for index, op in enumerate(ops):
        try:
            if weight_buffering:
                available = arch.staging_limit
                if arch.spilling:
                    available = max(0, arch.staging_limit - _fm_bytes_at(program, model, index))
                plan, priced = plan_weights(op, model, first_guess, slack, available)
            else:
                mode = "streamed" if model.weight_buffer_bytes(op) else "-"
                plan = WeightPlan(mode)
                priced = price_layer(op, model, first_guess, plan, slack)
        except UnsupportedOpError:
            plan, slack = WeightPlan(), 0
        else:
            slack = _slack(priced.cycles, priced.access, arch)
        plans.append(plan)

    # Pass 2: placement of feature maps in the SRAM cache (Dedicated_Sram only).
    memories = MemoryMap(arch.arena_memory, sram, constants)
    if arch.spilling:
        reserved = [plan.buffer_bytes for plan in plans]
        memories = memory_map(place_feature_maps(program, model, reserved, arch.staging_limit))

    # Pass 3: price each operator with its final placement.
    layers = []
    slack = 0
    for op, plan in zip(ops, plans, strict=True):
        layer = _layer(op, model, memories, plan, slack)
        slack = _slack(layer.cycles, layer.access_cycles, arch)
        layers.append(layer)
    return NetworkEstimate(arch, layers)


def _slack(cycles: int, access: dict[str, int], arch: ArchConfig) -> int:
    """Cycles during which an operator leaves the constant memory free for the next one's DMA.

    The weight copy for the next operator shares the flash/DRAM port with this operator's own
    reads of that memory: a 5512-cycle depthwise conv that streams 3840 cycles of weights from
    flash leaves 1672 cycles to prefetch in.
    """
    return max(cycles - access.get(arch.const_memory.name, 0), 0)


def _fm_bytes_at(program: ProgramInfo, model: EthosUCostModel, index: int) -> int:
    """SRAM an operator's own IFMs and OFM would take (the least the cache must hold for it)."""
    op = program.ops[index]
    tensors = {t.name: t for t in (*op.inputs, op.output)}
    return sum(model.buffer_bytes(t, t.shape) for t in tensors.values())


def _layer(op: OpInfo, model: EthosUCostModel, memories: MemoryMap, plan: WeightPlan, slack: int) -> LayerEstimate:
    name = _layer_name(op)
    try:
        priced = price_layer(op, model, memories, plan, slack)
    except UnsupportedOpError:
        return LayerEstimate(name, op.kind, 0, 0, 0, 0, target="CPU")
    return LayerEstimate(
        name=name,
        kind=op.kind,
        cycles=priced.cycles,
        npu_cycles=priced.npu_cycles,
        macs=op.macs,
        npu_ops=priced.npu_ops,
        bytes_by_memory=priced.traffic,
        access_cycles=priced.access,
        weights=plan.mode,
    )


def estimate_model(
    path: str | Path,
    accelerator: str = "ethos-u55-128",
    system_config: str | None = None,
    memory_mode: str | None = None,
    weight_buffering: bool = True,
) -> NetworkEstimate:
    """Load a .tflite or .mlir model and estimate it (raises LoadError / ArchConfigError)."""
    from cascade.frontends.loader import load_module

    arch = arch_config(accelerator, system_config, memory_mode)
    program = program_from_module(load_module(path))
    return estimate_program(program, arch, weight_buffering)


def memory_label(memory: Memory | str) -> str:
    """Vela's display names: SRAM, DRAM, OnFlash, OffFlash."""
    name = memory.name if isinstance(memory, Memory) else memory
    return {"Sram": "SRAM", "Dram": "DRAM", "OnChipFlash": "OnFlash", "OffChipFlash": "OffFlash"}.get(name, name)
