"""An independent check of an allocated program: no two simultaneously live buffers overlap.

This deliberately shares no code with the allocator (`planner.memory`, `planner.placement`):
it reads the placements written into the IR and recomputes every buffer's lifetime from the
IR alone, so an allocator bug cannot hide behind the same bug in its own bookkeeping. (Where
a stripe loop writes over rows it has read, it rebuilds the loop's stripes from the IR with
the planner's stripe algebra, `planner.stripes`, and derives the rows itself.)

Steps are the top-level units of the function in order: every `cascade.for_stripes`,
`cascade.group` and bare `nn` operator is one step. A buffer is live

* for a function argument with a `cascade.placement` argument attribute: from step 0 to the
  step of its last reader (the last step if it is returned);
* for the result of a top-level unit (placement on the unit): from its own step to the step of
  its last reader (the last step if returned);
* for a `cascade.rolling_buffer` or an operator inside a stripe loop (a recompute buffer):
  during the step of the loop only;
* for the SRAM weights of an operator (`cascade.weights_placement`): during its step, and the
  step before when its unit carries `cascade.prefetch`.

Two buffers may share bytes at one step in two cases, both an output written over a full input
tensor that dies at the output's step (the input's last step is the output's first, and the
function does not return it):

* an elementwise operator writing in place (`_writes_in_place`): both at the same offset and
  size, the input read in that step only by the operator writing the output, an `nn`
  elementwise operator (add, sub, mul, minimum, maximum) whose output element depends on the
  same input element alone;
* a stripe loop striped on rows first writing its output rows over input rows it has read
  (`_StripeRows.writes_over_consumed_rows`): the output starts below the input, both take the
  same bytes per row, dense and placed alike, and at every stripe the bytes written end at or
  below the first input row read at that stripe or later, or by the writing operator at the
  stripe before (recomputed here from the loop's stripes and each reader's access relation).

Besides overlaps it checks that offsets are 16-byte aligned, that every buffer holds the
bytes of the data stored in it (dense NHWC: the tensor, the k rows of a rolling buffer, the
stripe shape of a recompute buffer), that no placed byte lies above
`cascade.allocated_peak_bytes`, and that every value the stripe executor must store has a
placement.

Spill memory. Full tensors the plan spills (`cascade.spilled` on the unit producing them, or
on a function argument) are placed in DRAM (`#cascade.placement<dram, ...>`), a second address
space checked on its own by the same rules, against `cascade.allocated_dram_bytes`. A DRAM
buffer never overlaps an SRAM one (different memories); a tensor marked spilled must be in
DRAM and an unmarked one in SRAM; rolling, recompute and weight buffers must be in SRAM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from cascade.dialects import nn
from cascade.dialects.cascade import (
    PLACEMENT_ATTR,
    SPILLED_ATTR,
    MemoryRegion,
    PlacementAttr,
    RollingBufferOp,
    StripedRegionOp,
    element_bytes,
    get_arg_attr,
    get_placement,
    get_stripe,
)
from cascade.passes.cascade_plan import scheduled_program
from cascade.passes.planner.from_nn import input_position
from cascade.passes.planner.program import ProgramGraph
from cascade.passes.planner.stripes import CascadeGeometry
from cascade.passes.rolling_buffer import group_view

if TYPE_CHECKING:
    from cascade.passes.planner.memory import Step

WEIGHTS_PLACEMENT_ATTR = "cascade.weights_placement"
"""Discardable attribute of an `nn` operator whose weights are copied into SRAM: where."""
ALLOCATED_PEAK_ATTR = "cascade.allocated_peak_bytes"
ALLOCATED_DRAM_ATTR = "cascade.allocated_dram_bytes"
"""Function attribute: bytes of the DRAM (spill memory) placements, when there are any."""
MAX_LIVE_ATTR = "cascade.max_live_bytes"
PREFETCH_ATTR = "cascade.prefetch"
SRAM_ONLY_KINDS = frozenset({"rolling", "recompute", "weights"})
"""Buffers that always live in SRAM: only full tensors may be spilled to DRAM."""


@dataclass(frozen=True)
class LiveBuffer:
    """One placed buffer with the steps it is live in (inclusive)."""

    what: str
    kind: str
    """`input`, `tensor`, `rolling`, `recompute` or `weights`."""
    offset: int
    size: int
    first: int
    last: int
    needed: int
    """Bytes of the data stored in it (dense NHWC)."""
    value: SSAValue | None
    """The value stored (None for weights)."""
    op: Operation | None = None
    """For weights: the operator whose weights these are."""
    region: MemoryRegion = MemoryRegion.SRAM
    """The memory it is placed in."""

    @property
    def end(self) -> int:
        return self.offset + self.size


def top_level_units(function: FuncOp) -> list[Operation]:
    """The steps of `function`: stripe loops, groups and bare nn operators, in order."""
    return [op for op in function.body.block.ops if isinstance(op, StripedRegionOp | nn.NNOperation)]


def _tensor_bytes(value: SSAValue) -> int:
    assert isinstance(value.type, TensorType)
    return math.prod(value.type.get_shape()) * element_bytes(value.type)


def arg_placement(function: FuncOp, index: int) -> PlacementAttr | None:
    """The `cascade.placement` argument attribute of argument `index`, None if absent."""
    placement = get_arg_attr(function, index, PLACEMENT_ATTR)
    return placement if isinstance(placement, PlacementAttr) else None


def live_buffers(
    function: FuncOp, region: MemoryRegion | None = MemoryRegion.SRAM
) -> tuple[list[LiveBuffer], list[str]]:
    """Every buffer of `function` placed in `region` (None: in any memory) with its lifetime,
    and problems found on the way (values that need a buffer but have none, full tensors
    placed in another memory than their `cascade.spilled` mark says)."""
    units = top_level_units(function)
    step_of_unit = {unit: index for index, unit in enumerate(units)}
    last_step = len(units) - 1
    problems: list[str] = []

    def step_of(op: Operation) -> int:
        """The step during which `op` runs (a terminator after all units: the last step)."""
        while op.parent_op() is not function:
            parent = op.parent_op()
            assert parent is not None
            op = parent
        if op in step_of_unit:
            return step_of_unit[op]
        # A non-unit op (return, constant): its position relative to the units.
        before = [u for u in units if u.is_before_in_block(op)]
        return step_of_unit[before[-1]] if before else 0

    def last_use(value: SSAValue, own: int) -> int:
        last = own
        for use in value.uses:
            if use.operation.name == "func.return":
                return last_step
            last = max(last, step_of(use.operation))
        return last

    buffers: list[LiveBuffer] = []

    def add(
        what: str,
        kind: str,
        placement: PlacementAttr,
        first: int,
        last: int,
        needed: int,
        value: SSAValue | None,
        op: Operation | None = None,
    ) -> None:
        memory = placement.get_region()
        if region is not None and memory != region:
            return
        buffers.append(
            LiveBuffer(what, kind, placement.get_offset(), placement.get_size(), first, last, needed, value, op, memory)
        )

    def check_spilled(what: str, placement: PlacementAttr, spilled: bool) -> None:
        expected = MemoryRegion.DRAM if spilled else MemoryRegion.SRAM
        if placement.get_region() != expected:
            marked = "marked" if spilled else "not marked"
            problems.append(f"{what} is {marked} {SPILLED_ATTR} but placed in {placement.get_region().value}")

    for index, arg in enumerate(function.args):
        placement = arg_placement(function, index)
        if placement is not None:
            check_spilled(f"argument {index}", placement, get_arg_attr(function, index, SPILLED_ATTR) is not None)
            add(f"argument {index}", "input", placement, 0, last_use(arg, 0), _tensor_bytes(arg), arg)
    for step, unit in enumerate(units):
        placement = get_placement(unit)
        result = unit.results[0] if unit.results else None
        if placement is not None and result is not None:
            check_spilled(f"result of {unit.name} #{step}", placement, SPILLED_ATTR in unit.attributes)
            add(
                f"result of {unit.name} #{step}",
                "tensor",
                placement,
                step,
                last_use(result, step),
                _tensor_bytes(result),
                result,
            )
        elif result is not None:
            problems.append(f"result of {unit.name} (step {step}) has no placement")
        prefetch = PREFETCH_ATTR in unit.attributes
        members = list(unit.body.block.ops) if isinstance(unit, StripedRegionOp) else [unit]
        yielded = set(unit.yield_op.values) if isinstance(unit, StripedRegionOp) else set()
        for member in members:
            weights = member.attributes.get(WEIGHTS_PLACEMENT_ATTR)
            if isinstance(weights, PlacementAttr):
                first = step - 1 if prefetch and step > 0 else step
                add(f"weights of {member.name} (step {step})", "weights", weights, first, step, 0, None, member)
            if member is unit or not isinstance(member, nn.NNOperation | RollingBufferOp):
                continue
            value = member.results[0]
            if isinstance(member, RollingBufferOp):
                placement = get_placement(member)
                if placement is None:
                    problems.append(f"rolling buffer of step {step} has no placement")
                    continue
                add(f"rolling buffer (step {step})", "rolling", placement, step, step, member.storage_bytes(), value)
                continue
            if value in yielded or any(isinstance(u.operation, RollingBufferOp) for u in value.uses):
                continue
            placement = get_placement(member)
            stripe = get_stripe(member)
            if placement is None or stripe is None:
                problems.append(f"intermediate {member.name} of step {step} has no placement or stripe")
                continue
            assert isinstance(value.type, TensorType)
            needed = math.prod(stripe.get_shape()) * element_bytes(value.type)
            add(f"recompute buffer of {member.name} (step {step})", "recompute", placement, step, step, needed, value)
    return buffers, problems


ELEMENTWISE_OPS = (nn.AddOp, nn.SubOp, nn.MulOp, nn.MinimumOp, nn.MaximumOp)


def _shares_in_place(a: LiveBuffer, b: LiveBuffer) -> bool:
    """Whether one of `a`, `b` is written in place over the other (see the module docstring)."""
    return _writes_in_place(a, b) or _writes_in_place(b, a)


def _writes_in_place(source: LiveBuffer, output: LiveBuffer) -> bool:
    if source.kind != "tensor" or output.kind != "tensor" or source.value is None or output.value is None:
        return False
    if _returned(source.value):
        return False
    if (source.offset, source.size) != (output.offset, output.size) or source.last != output.first:
        return False
    if source.value.type != output.value.type:
        return False
    unit = output.value.owner
    if not isinstance(unit, Operation):
        return False
    if isinstance(unit, StripedRegionOp):
        # Inside a stripe loop the writer must be the input's only reader: another reader
        # could need rows the writer overwrote in an earlier stripe.
        writer = unit.yield_op.values[0].owner
        read_as = [arg for arg, operand in zip(unit.input_args, unit.inputs, strict=True) if operand is source.value]
        readers = {use.operation for arg in read_as for use in arg.uses}
    else:
        writer = unit
        readers = {use.operation for use in source.value.uses if use.operation is unit}
    return isinstance(writer, ELEMENTWISE_OPS) and readers == {writer}


class _StripeRows:
    """The rows stripe loops of one function write and read, from their IR (see
    `writes_over_consumed_rows`); the function's planner view is built once, when first
    needed."""

    def __init__(self, function: FuncOp) -> None:
        self.function = function
        self._view: tuple[ProgramGraph, dict[Operation, int], list[Step]] | None = None

    def writes_over_consumed_rows(self, source: LiveBuffer, output: LiveBuffer) -> bool:
        """Whether `output` is a stripe loop's result written over rows of `source` that no
        stripe reads any more when they are overwritten (see the module docstring)."""
        if source.kind != "tensor" or output.kind != "tensor" or source.value is None or output.value is None:
            return False
        if source.last != output.first or source.offset < output.offset or source.region != output.region:
            return False
        unit = output.value.owner
        if not isinstance(unit, StripedRegionOp) or source.value not in unit.inputs or _returned(source.value):
            return False
        if unit.get_stripe_order()[:1] != (1,):
            return False
        heights = [_rows_of(source.value), _rows_of(output.value)]
        if heights[0] is None or heights[1] is None:
            return False
        # Every row the same bytes, dense and placed: a row starts at the same place whatever
        # layout the code generator gives each tensor.
        row = _tensor_bytes(source.value) // heights[0]
        sized = ((_tensor_bytes(output.value), heights[1]), (source.size, heights[0]), (output.size, heights[1]))
        if any(size != row * height for size, height in sized):
            return False
        schedule = self._row_schedule(unit, source.value, heights[0])
        if schedule is None:
            return False
        lead = source.offset - output.offset
        return all(written_end * row <= lead + free_from * row for written_end, free_from in schedule)

    def _row_schedule(self, unit: StripedRegionOp, source: SSAValue, extent: int) -> list[tuple[int, int]] | None:
        """Per stripe of `unit` (striped on rows first), the output row its writer has written
        up to (exclusive) and the lowest row of `source` (`extent` rows) read at that stripe
        or later, or by the writer at the stripe before; None when a reader's rows are
        unknown."""
        if self._view is None:
            view, origin = group_view(self.function)
            scheduled = scheduled_program(view)
            index = {origin[op]: i for i, op in enumerate(scheduled.nn_ops)}
            self._view = (ProgramGraph.build(scheduled.program), index, list(scheduled.steps))
        graph, index, steps = self._view
        members = [op for op in unit.body.block.ops if isinstance(op, nn.NNOperation)]
        step = next(s for s in steps if s.first == index[members[0]])
        # The planner's stripe algebra, on the loop's stripes as the IR gives them.
        geometry = CascadeGeometry.build(graph, step.first, step.sink, step.config, step.recompute)
        read_as = [arg for arg, operand in zip(unit.input_args, unit.inputs, strict=True) if operand is source]
        stripes = list(geometry.stripe_indices())
        lowest: dict[tuple[int, ...], int] = {}
        writer_lowest: dict[tuple[int, ...], int] = {}
        for use in (use for arg in read_as for use in arg.uses):
            if use.operation.parent_block() is None:
                continue  # a detached copy of an operator, part of no program
            reader = index.get(use.operation)
            if reader is None:
                return None
            position = input_position(graph.ops[reader], use.index)
            axis_map = None if position is None else graph.operands[reader][position].axis_maps.get(1)
            if axis_map is None:
                return None
            for stripe in stripes:
                box = geometry.computed_box(reader, stripe)
                if box is None:
                    continue
                low = max(axis_map.apply(box.offset[1], box.offset[1] + box.shape[1] - 1)[0], 0)
                lowest[stripe] = min(lowest.get(stripe, extent), low)
                if reader == geometry.sink:
                    writer_lowest[stripe] = min(writer_lowest.get(stripe, extent), low)
        schedule = []
        later = extent
        for position in range(len(stripes) - 1, -1, -1):
            later = min(later, lowest.get(stripes[position], extent))
            free_from = later
            if position:
                free_from = min(free_from, writer_lowest.get(stripes[position - 1], extent))
            box = geometry.computed_box(geometry.sink, stripes[position])
            assert box is not None
            schedule.append((box.offset[1] + box.shape[1], free_from))
        return schedule


def _returned(value: SSAValue) -> bool:
    """Whether the function returns `value` (its bytes must then survive to the end, even when
    the last step is the one that would write over them)."""
    return any(use.operation.name == "func.return" for use in value.uses)


def _rows_of(value: SSAValue) -> int | None:
    """The rows of a 4-D tensor of batch 1, else None."""
    assert isinstance(value.type, TensorType)
    shape = value.type.get_shape()
    return shape[1] if len(shape) == 4 and shape[0] == 1 and shape[1] > 0 else None


def check_memory(function: FuncOp) -> list[str]:
    """Problems of the allocation of `function` (empty: none). See the module docstring."""
    buffers, problems = live_buffers(function, None)
    rows = _StripeRows(function)
    for buffer in buffers:
        if buffer.region != MemoryRegion.SRAM and buffer.kind in SRAM_ONLY_KINDS:
            problems.append(f"{buffer.what}: a {buffer.kind} buffer must be in SRAM, not {buffer.region.value}")
    limits = {
        MemoryRegion.SRAM: (ALLOCATED_PEAK_ATTR, "the allocated peak"),
        MemoryRegion.DRAM: (ALLOCATED_DRAM_ATTR, "the allocated DRAM bytes"),
    }
    for region, (attr_name, limit_name) in limits.items():
        placed = [b for b in buffers if b.region == region]
        limit_attr = function.attributes.get(attr_name)
        limit = limit_attr.value.data if isinstance(limit_attr, IntegerAttr) else None
        if region == MemoryRegion.DRAM and placed and limit is None:
            problems.append(f"{len(placed)} buffers are placed in DRAM but the function has no {attr_name}")
        problems += _check_region(placed, limit, limit_name, rows)
    return problems


def _check_region(buffers: list[LiveBuffer], limit: int | None, limit_name: str, rows: _StripeRows) -> list[str]:
    """Problems of the buffers placed in one memory: alignment, size, bound, overlaps."""
    problems = []
    for buffer in buffers:
        if buffer.offset % 16:
            problems.append(f"{buffer.what}: offset {buffer.offset} is not 16-byte aligned")
        if buffer.size < buffer.needed:
            problems.append(f"{buffer.what}: {buffer.size} bytes cannot hold its {buffer.needed} bytes")
        if limit is not None and buffer.end > limit:
            problems.append(f"{buffer.what}: ends at {buffer.end}, above {limit_name} {limit}")
    ordered = sorted(buffers, key=lambda b: b.offset)
    for i, a in enumerate(ordered):
        where = "" if a.region == MemoryRegion.SRAM else f" ({a.region.value})"
        for b in ordered[i + 1 :]:
            if b.offset >= a.end:
                break
            if not (b.size and a.size and a.first <= b.last and b.first <= a.last) or _shares_in_place(a, b):
                continue
            if rows.writes_over_consumed_rows(a, b) or rows.writes_over_consumed_rows(b, a):
                continue
            problems.append(
                f"{a.what} [{a.offset}, {a.end}) and {b.what} [{b.offset}, {b.end}){where} overlap while both "
                f"are live (steps {max(a.first, b.first)}..{min(a.last, b.last)})"
            )
    return problems
