"""Memory accounting of a plan: the list of SRAM buffers and their lifetimes.

This is the contract between the planner (cascade-plan) and the allocator (allocate-memory):
both build the buffer list with `plan_buffers` and place it with `placement.place`, so the
peak the planner predicts is the peak the allocator produces.

Steps
-----
A plan runs its cascades one after another; cascade k (in program order) is **step k**. A
cascade of one operator is a step too. In IR, every top-level `cascade.group` and every
operator left outside a group is one step, in the order they appear.

Buffers
-------
Every size is rounded up to 16 bytes (`placement.align`); `cost.buffer_bytes` gives the bytes
of a feature-map region in the target's layout and `cost.weight_buffer_bytes` those of an
operator's weights.

* `input:<tensor>` for every graph input read by an operator: `buffer_bytes(t, t.shape)`,
  live from step 0 to the step of its last reader (the last step if it is also returned).
* `tensor:<tensor>` for the output of every cascade's sink: `buffer_bytes(t, t.shape)`, live
  from its step to the step of its last reader (the last step if it is a graph output, its own
  step if nobody reads it). It may instead be written **in place** over a full input tensor
  that dies at this step (`in_place_output`); its buffer is then an alias of that input's
  buffer (`Buffer.alias_of`), either at the same offset (an elementwise sink,
  `in_place_source`: no extra bytes) or, for a cascade striped on rows first, `lead` bytes
  below it (`consumed_rows_lead`: each stripe's output rows land on input rows no later
  stripe reads).
* `step<k>:rolling:<tensor>` for every rolling intermediate of step k:
  `buffer_bytes(t, shape)` with `shape` = the tensor's shape with `depth` on the outer striped
  axis (`CascadeGeometry.buffer_shape`), live at step k only.
* `step<k>:recompute:<tensor>` for every recompute intermediate of step k: `buffer_bytes(t,
  shape)` with `shape` = the largest required interval along each axis stripes cut (rows and
  columns, or channels; full batch), live at step k only.
* `step<k>:weights:<operator>` for every operator of step k that has weights, when the
  cascade keeps its weights in SRAM: `weight_buffer_bytes(op)`, live at step k only, or at
  steps k-1 and k when the weights are prefetched (copied while step k-1 runs; `Step.prefetch`,
  the IR's `cascade.prefetch`). An operator run alone may instead double-buffer its weights in
  slices of d output channels (`Step.weight_slice_depth`, the IR's
  `cascade.weight_slice_depth`): `2 * align(ceil(weight_buffer_bytes(op) * d / C))`.
  Streamed weights take no SRAM.

Spilling
--------
A target with a second, larger and slower memory (`CostModel.can_spill`: Ethos-U's DRAM arena
in Dedicated_Sram) may keep full tensors there instead: the `input:`/`tensor:` buffers of the
tensors a plan spills go to `spilled_buffers`, placed on their own, and take no SRAM. An
in-place output aliases its source only when both live in the same memory.

The memory of step k (`step_memory`) is the sum of the buffers live at step k; the largest
is the max-live lower bound of the placement. For a cascade `[first, sink]` it depends only
on `first` and `sink`, plus its own intermediates and weights (and the next step's prefetched
weights, which the planner adds only where they do not raise the peak): the full tensors live are the
graph inputs and cascade outputs produced before `first` that are read at or after `first`
(or returned), and the sink's output.

Pure Python: no IR types, no target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cascade.passes.planner.cost import CostModel
from cascade.passes.planner.graph import OpInfo, TensorInfo
from cascade.passes.planner.placement import Buffer, align, step_totals
from cascade.passes.planner.program import SPATIAL_AXES, ProgramGraph
from cascade.passes.planner.stripes import CascadeGeometry, StripeConfig


@dataclass(frozen=True)
class Step:
    """One cascade of a plan, as the memory accounting needs it."""

    first: int
    sink: int
    config: StripeConfig
    recompute: frozenset[int]
    weights_in_sram: bool
    prefetch: bool = False
    """The weights are copied into SRAM while the previous step runs (their buffers live from
    the previous step on)."""
    weight_slice_depth: int = 0
    """For a single operator with weights in SRAM: 0 keeps all its weights at once; d > 0
    double-buffers them in slices of d output channels (two slices resident, the next copied
    while the current one computes), as Vela does for large weights."""


def full_bytes(cost: CostModel, tensor: TensorInfo) -> int:
    """Bytes of a tensor stored in full."""
    return align(cost.buffer_bytes(tensor, tensor.shape))


def weight_bytes(cost: CostModel, graph: ProgramGraph, op: int) -> int:
    """Bytes of an operator's weight buffer (0 without weights)."""
    return align(cost.weight_buffer_bytes(graph.ops[op])) if graph.ops[op].weights else 0


SLICE_GRANULE = 16
"""Output channels of a weight slice are a multiple of this (the NPU's OFM depth granule)."""


def slice_depth(channels: int, slices: int) -> int:
    """Output channels per weight slice for about `slices` slices: ceil(C / n) rounded up to 16,
    at most C. 512 channels in 8 slices: 64; 96 channels in 4 slices: 32 (so 3 slices)."""
    depth = -(-channels // max(slices, 1))
    return min(-(-depth // SLICE_GRANULE) * SLICE_GRANULE, channels)


def sliced_weight_bytes(cost: CostModel, graph: ProgramGraph, op: int, depth: int, estimate: bool = False) -> int:
    """Bytes of a double buffer of weight slices `depth` output channels deep: two halves, each
    as large as the largest slice (`CostModel.weight_slice_bytes`; without it, or to
    `estimate` cheaply, in proportion to the whole weights)."""
    per_slice = getattr(cost, "weight_slice_bytes", None)
    if per_slice is not None and not estimate:
        return 2 * align(per_slice(graph.ops[op], depth))
    whole = cost.weight_buffer_bytes(graph.ops[op])
    return 2 * align(proportional_slice_bytes(whole, depth, graph.output_shape(op)[-1]))


def proportional_slice_bytes(whole: int, depth: int, channels: int) -> int:
    """A slice's share of `whole` weight bytes, rounded up: 1000 bytes of 64 channels in slices
    of 16 give 250."""
    return -(-whole * depth // channels)


def step_geometry(graph: ProgramGraph, step: Step) -> CascadeGeometry | None:
    """The stripe geometry of a cascade of several operators (None for one operator)."""
    if step.first == step.sink:
        return None
    return CascadeGeometry.build(graph, step.first, step.sink, step.config, step.recompute)


def intermediate_buffers(cost: CostModel, graph: ProgramGraph, cascade: Step, step: int) -> list[Buffer]:
    """The buffers live only during `step`: intermediates and (if kept in SRAM) weights."""
    buffers = []
    geometry = step_geometry(graph, cascade)
    if geometry is not None:
        for op in range(geometry.first, geometry.sink):
            tensor = graph.ops[op].output
            mode = "rolling" if geometry.is_rolling(op) else "recompute"
            size = align(cost.buffer_bytes(tensor, geometry.buffer_shape(op)))
            buffers.append(Buffer(f"step{step}:{mode}:{tensor.name}", size, step, step, mode))
    if cascade.weights_in_sram:
        start = step - 1 if cascade.prefetch and step > 0 else step
        for op in range(cascade.first, cascade.sink + 1):
            size = weight_bytes(cost, graph, op)
            if size and cascade.weight_slice_depth:
                size = sliced_weight_bytes(cost, graph, op, cascade.weight_slice_depth)
            if size:
                buffers.append(Buffer(f"step{step}:weights:{graph.ops[op].name}", size, start, step, "weights"))
    return buffers


IN_PLACE_KINDS = frozenset({"add", "sub", "mul", "minimum", "maximum"})
"""Operators whose output element (n, h, w, c) depends on the same element of each input only,
so writing the output over an input of the same shape never destroys an element still to be
read (the NPU's elementwise commands, which Vela also runs in place)."""


def in_place_source(graph: ProgramGraph, cost: CostModel, first: int, sink: int) -> int:
    """The operator whose full output tensor the sink of cascade `[first, sink]` may overwrite
    with its own output, or -1.

    The sink must be elementwise (`IN_PLACE_KINDS`) and the tensor one of its operands with
    the output's shape, element size and stored bytes (the layout the cost model gives a graph
    output may differ from an intermediate's), produced before the cascade (so it is stored in full,
    not a rolling or recompute buffer), read for the last time by the sink, not returned, and
    read by no other operator of the cascade: such a reader could still need rows the sink
    has already overwritten in an earlier stripe. The first operand that qualifies wins.
    """
    op = graph.ops[sink]
    for operand in graph.operands[sink]:
        source = operand.producer
        if source < 0 or source >= first or graph.last_use[source] != sink:
            continue
        if not may_overwrite(cost, op, operand.tensor):
            continue
        if any(reader != sink for reader, _ in graph.consumers[source] if reader >= first):
            continue
        return source
    return -1


ROWS = SPATIAL_AXES[0]
"""The axis a cascade writing in place over consumed rows must stripe first."""


@dataclass(frozen=True)
class InPlace:
    """A cascade's output written over a full input tensor that dies at its step."""

    source: int
    """The operator whose output tensor is overwritten."""
    lead: int
    """Bytes the output starts below that tensor (0: at the same offset)."""

    def saving(self, source_bytes: int, output_bytes: int) -> int:
        """Bytes saved at the step against two separate buffers: the pair covers
        max(lead + source, output) instead of source + output."""
        return source_bytes + output_bytes - max(self.lead + source_bytes, output_bytes)


def in_place_output(
    graph: ProgramGraph, cost: CostModel, first: int, sink: int, geometry: CascadeGeometry | None = None
) -> InPlace | None:
    """How the sink of cascade `[first, sink]` may write its output over a full input tensor,
    or None: in place at the same offset (`in_place_source`), else, given the cascade's
    `geometry` (which may be that of a longer cascade ending at `sink` with the same stripes),
    the input tensor whose `consumed_rows_lead` saves most (the earliest on ties)."""
    source = in_place_source(graph, cost, first, sink)
    if source >= 0:
        return InPlace(source, 0)
    if geometry is None or first == sink or geometry.config.outer_axis != ROWS:
        return None
    output_bytes = full_bytes(cost, graph.ops[sink].output)
    best: InPlace | None = None
    best_saving = 0
    for candidate in _consumed_sources(graph, cost, first, sink):
        lead = consumed_rows_lead(graph, cost, first, sink, geometry, candidate)
        if lead is None:
            continue
        found = InPlace(candidate, lead)
        saving = found.saving(full_bytes(cost, graph.ops[candidate].output), output_bytes)
        if saving > best_saving:
            best, best_saving = found, saving
    return best


def _consumed_sources(graph: ProgramGraph, cost: CostModel, first: int, sink: int) -> list[int]:
    """The operators whose output cascade `[first, sink]` reads in full and kills: produced
    before it, read for the last time in it, not returned, stored row after row with as many
    bytes per row as the sink's output.

    Both must take as many bytes per row in the target's layout as dense: whatever layout
    the code generator finally gives each (a tensor a CPU operator writes may be dense where
    the cost model assumed a padded one), every row then starts where the lead assumes."""
    output = graph.ops[sink].output
    output_row = _row_bytes(cost, output)
    if output_row is None or output_row != _dense_row_bytes(output):
        return []
    sources = []
    for op in range(first, sink + 1):
        for operand in graph.operands[op]:
            source = operand.producer
            if source < 0 or source >= first or graph.last_use[source] > sink or source in sources:
                continue
            tensor = graph.ops[source].output
            if _row_bytes(cost, tensor) == _dense_row_bytes(tensor) == output_row:
                sources.append(source)
    return sources


def _row_bytes(cost: CostModel, tensor: TensorInfo) -> int | None:
    """Bytes of one row of `tensor` stored in full, when its rows lie back to back (the
    full tensor is exactly that many bytes per row); else None."""
    if len(tensor.shape) != 4:
        return None
    row = cost.buffer_bytes(tensor, (tensor.shape[0], 1, *tensor.shape[2:]))
    if tensor.shape[0] != 1 or cost.buffer_bytes(tensor, tensor.shape) != row * tensor.shape[ROWS]:
        return None
    return row


def _dense_row_bytes(tensor: TensorInfo) -> int:
    return tensor.bytes // tensor.shape[ROWS]


def consumed_rows_lead(
    graph: ProgramGraph, cost: CostModel, first: int, sink: int, geometry: CascadeGeometry, source: int
) -> int | None:
    """Bytes the output of cascade `[first, sink]`, striped on rows first, must start below
    the full tensor of `source` for every stripe to write its output rows only over rows of
    that tensor that are read no more; None if some reader cannot say which rows it reads.

    Stripe t writes output rows up to b(t) and must leave alone the input rows from L(t) on,
    where L(t) is the lowest row read at stripe t or later, or by the sink at stripe t-1 (the
    NPU may start a command before the one before it finishes, and Vela orders only a read
    after an overlapping write): lead = max over t of (b(t) + 1 - L(t)) rows, at least 0.
    A 3x3 depthwise (padding 1) then a 1x1 convolution in stripes of one row: stripe t
    writes row t and the depthwise reads from row t-1 on, so the lead is 2 rows.
    """
    row = _row_bytes(cost, graph.ops[source].output)
    rows = _lead_rows(graph, first, sink, geometry, source)
    return None if rows is None or row is None else rows * row


def _lead_rows(graph: ProgramGraph, first: int, sink: int, geometry: CascadeGeometry, source: int) -> int | None:
    """`consumed_rows_lead` in rows (memoised on the graph: it depends on nothing else)."""
    recompute = geometry.recompute & frozenset(range(first, sink))
    key = ("lead_rows", first, sink, geometry.config, recompute, source)
    if key in graph.memo:
        return graph.memo[key]  # type: ignore[return-value]
    tracks = geometry.tracks[ROWS]
    count = len(tracks[sink].computed)
    extent = graph.ops[source].output.shape[ROWS]
    lowest = [extent] * count  # per stripe, the lowest row of `source` read
    sink_lowest = [extent] * count
    lead_rows: int | None = 0
    for reader, position in graph.consumers[source]:
        if not first <= reader <= sink:
            continue
        axis_map = graph.operands[reader][position].axis_maps[ROWS]
        if axis_map is None:
            lead_rows = None
            break
        for t, interval in enumerate(tracks[reader].computed):
            if interval is None:
                continue
            low = max(axis_map.apply(*interval)[0], 0)
            lowest[t] = min(lowest[t], low)
            if reader == sink:
                sink_lowest[t] = min(sink_lowest[t], low)
    if lead_rows is not None:
        later = extent
        for t in range(count - 1, -1, -1):
            later = min(later, lowest[t])
            limit = min(later, sink_lowest[t - 1]) if t else later
            written = tracks[sink].computed[t]
            assert written is not None, "the sink computes at every stripe"
            lead_rows = max(lead_rows, written[1] + 1 - limit)
    graph.memo[key] = lead_rows
    return lead_rows


def may_overwrite(cost: CostModel, op: OpInfo, operand: TensorInfo) -> bool:
    """Whether `op` may write its output over the full tensor `operand` it reads, should that
    be the operand's last read: an elementwise operator (`IN_PLACE_KINDS`) and an operand with
    the output's shape, element size and stored bytes."""
    return (
        op.kind in IN_PLACE_KINDS
        and operand.shape == op.output.shape
        and operand.element_bytes == op.output.element_bytes
        and full_bytes(cost, operand) == full_bytes(cost, op.output)
    )


def plan_buffers(
    graph: ProgramGraph, steps: Sequence[Step], cost: CostModel, spilled: frozenset[str] = frozenset()
) -> list[Buffer]:
    """Every SRAM buffer of a plan with its lifetime in steps (see the module docstring); the
    full tensors named in `spilled` live in the spill memory instead (`spilled_buffers`)."""
    return _buffers(graph, steps, cost, spilled)[0]


def spilled_buffers(
    graph: ProgramGraph, steps: Sequence[Step], cost: CostModel, spilled: frozenset[str]
) -> list[Buffer]:
    """The buffers of the full tensors in `spilled`, placed in the spill memory (DRAM), named
    and timed as in SRAM."""
    return _buffers(graph, steps, cost, spilled)[1]


def _buffers(
    graph: ProgramGraph, steps: Sequence[Step], cost: CostModel, spilled: frozenset[str]
) -> tuple[list[Buffer], list[Buffer]]:
    step_of = [-1] * graph.size
    for index, step in enumerate(steps):
        if not 0 <= step.first <= step.sink < graph.size:
            raise ValueError(f"step {index} covers operators {step.first}..{step.sink} of {graph.size}")
        for op in range(step.first, step.sink + 1):
            step_of[op] = index
    if -1 in step_of:
        raise ValueError(f"the steps do not cover operator {step_of.index(-1)}")
    last_step = len(steps) - 1

    def until(last_use: int, own: int) -> int:
        if last_use >= graph.size:
            return last_step
        return max(step_of[last_use], own)

    sram: list[Buffer] = []
    dram: list[Buffer] = []
    for tensor, last_use in zip(graph.external_inputs, graph.external_last_use, strict=True):
        buffer = Buffer(f"input:{tensor.name}", full_bytes(cost, tensor), 0, until(last_use, 0), "input")
        (dram if tensor.name in spilled else sram).append(buffer)
    for index, step in enumerate(steps):
        tensor = graph.ops[step.sink].output
        last = until(graph.last_use[step.sink], index)
        in_place = in_place_output(graph, cost, step.first, step.sink, step_geometry(graph, step))
        memory = dram if tensor.name in spilled else sram
        if in_place is not None and (graph.ops[in_place.source].output.name in spilled) == (tensor.name in spilled):
            size = full_bytes(cost, tensor)
            alias = f"tensor:{graph.ops[in_place.source].output.name}"
            memory.append(
                Buffer(f"tensor:{tensor.name}", size, index, last, "tensor", alias_of=alias, lead=in_place.lead)
            )
        else:
            memory.append(Buffer(f"tensor:{tensor.name}", full_bytes(cost, tensor), index, last))
        sram.extend(intermediate_buffers(cost, graph, step, index))
    return sram, dram


def full_tensors_of(graph: ProgramGraph, op: int, first: int, sink: int) -> frozenset[str]:
    """The full tensors operator `op` of cascade [first, sink] reads or writes: its operands
    produced before the cascade (or graph inputs) and, for the sink, its output."""
    names = {operand.tensor.name for operand in graph.operands[op] if operand.producer < first}
    if op == sink:
        names.add(graph.ops[op].output.name)
    return frozenset(names)


def step_memory(buffers: Sequence[Buffer], step: int) -> int:
    """Total bytes of the buffers live at `step` (storage shared by aliases counted once)."""
    return step_totals(buffers).get(step, 0)
