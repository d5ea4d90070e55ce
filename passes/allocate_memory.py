"""allocate-memory: give every buffer of a planned program an offset, in SRAM or in DRAM.

    cascade-opt net.mlir --cascade-plan --rolling-buffer --allocate-memory
    cascade-opt net.mlir -p 'cascade-plan{accelerator=ethos-u55-128},rolling-buffer,
                             allocate-memory{accelerator=ethos-u55-128}'

The buffer list is the planner's contract (`planner.memory`): the pass rebuilds it from the IR
(`cascade_plan.scheduled_buffers` on the planned form, `rolling_buffer.group_view`) and places
it with `planner.placement.place` at its default effort, exactly as cascade-plan did when it
predicted the peak, so the allocated peak *is* the predicted one (the pass fails if they differ,
which happens only when `accelerator` is not the one the plan was made for). Sizes are the
cost model's (feature maps in NHCWB16 bricks where Vela would use them, channels rounded to
16), every offset and size a multiple of 16 bytes; lifetimes are steps of the stripe schedule.

The full tensors the plan spills (`cascade.spilled`: `cascade_plan.scheduled_spilled_buffers`)
live in DRAM, the tensor arena of Ethos-U's Dedicated_Sram: their buffers are placed on their
own, with the same `place`, at `#cascade.placement<dram, offset, size>`; the DRAM peak must be
the plan's `cascade.peak_dram_bytes`. Everything else is in SRAM.

Placements written (`#cascade.placement<sram, offset, size>`, or `dram` for spilled tensors):

* graph inputs: the function argument attribute `cascade.placement`;
* a cascade's output (the full tensor a stripe loop fills) or a lone operator's output: the
  discardable `cascade.placement` of the `cascade.for_stripes` / `cascade.group` / operator;
* a rolling intermediate: the `placement` of its `cascade.rolling_buffer` (or, on IR not yet
  through rolling-buffer, the producer's `cascade.placement`);
* a recompute intermediate: its producer's `cascade.placement`;
* SRAM weights: the operator's `cascade.weights_placement`.

Cascades must be as cascade-plan and rolling-buffer write them (`cascade_plan.check_cascades`).

The function gets `cascade.allocated_peak_bytes` (highest placed SRAM byte),
`cascade.max_live_bytes` (the largest total of SRAM buffers live at one step: the lower bound
of any placement) and, when it spills, `cascade.allocated_dram_bytes` (highest placed DRAM
byte). `passes.memory_check` verifies the result independently, before the pass returns: an
allocation it refuses is an `AllocationError` (a bug of this pass, reported by the
driver as an internal error of `allocate-memory`), never IR that would compute wrong values.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from cascade.dialects.cascade import (
    PLACEMENT_ATTR,
    MemoryRegion,
    PlacementAttr,
    RollingBufferOp,
    StripedRegionOp,
    set_arg_attrs,
    set_placement,
)
from cascade.passes.memory_check import (
    ALLOCATED_DRAM_ATTR,
    ALLOCATED_PEAK_ATTR,
    MAX_LIVE_ATTR,
    WEIGHTS_PLACEMENT_ATTR,
    check_memory,
)
from cascade.passes.planner.from_nn import check_tensor_sizes
from cascade.passes.planner.placement import Buffer, Placement, max_live, place
from cascade.passes.planner.program import ProgramGraph
from cascade.passes.rolling_buffer import group_view


class AllocationError(Exception):
    """The allocation fails the independent check (`memory_check`): an internal error."""


@dataclass(frozen=True)
class AllocateMemoryPass(ModulePass):
    """Assign each buffer an offset and size in SRAM, or in DRAM when spilled (see the module docstring).

    Options: `accelerator` (Vela accelerator name; default: the one cascade-plan used, which
    it must be if given). The system config and memory mode are the plan's too.
    """

    name = "allocate-memory"

    accelerator: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from cascade.passes.cascade_plan import planned_target

        for function in [f for f in op.ops if isinstance(f, FuncOp) and f.body.blocks]:
            allocate_function(function, *planned_target(function, self.accelerator, self.name))


def allocate_function(
    function: FuncOp, accelerator: str, system_config: str | None = None, memory_mode: str | None = None
) -> tuple[int, int]:
    """Place the buffers of `function` and annotate it; returns (SRAM peak, max-live bound)."""
    from cascade.passes.cascade_plan import (
        PEAK_ATTR,
        PEAK_DRAM_ATTR,
        check_cascades,
        check_striping,
        planned_fc_on_npu,
        planner_cost_model,
        scheduled_program,
    )
    from cascade.passes.planner.memory import plan_buffers, spilled_buffers

    check_cascades(function, "allocate-memory")
    view, origin = group_view(function)
    scheduled = scheduled_program(view)
    if not scheduled.steps:
        return 0, 0
    try:
        check_tensor_sizes(scheduled.program)
    except ValueError as error:
        raise DiagnosticException(f"allocate-memory: @{function.sym_name.data}: {error}") from None
    fc_on_npu = planned_fc_on_npu(function)
    cost = planner_cost_model(accelerator, scheduled.program, "allocate-memory", system_config, memory_mode, fc_on_npu)
    if scheduled.spilled and not getattr(cost, "can_spill", lambda: False)():
        raise DiagnosticException(
            f"allocate-memory: @{function.sym_name.data}: the plan keeps tensors in DRAM, which '{accelerator}' in "
            "its default memory mode has not (was the plan made for another accelerator?)"
        )
    graph = ProgramGraph.build(scheduled.program)
    originals = [origin[o] for o in scheduled.nn_ops]
    for step in scheduled.steps:
        check_striping(graph, step, originals)
    buffers = plan_buffers(graph, scheduled.steps, cost, scheduled.spilled)
    placement = place(buffers)
    bound = max_live(buffers)
    dram_buffers = spilled_buffers(graph, scheduled.steps, cost, scheduled.spilled) if scheduled.spilled else []
    dram = place(dram_buffers) if dram_buffers else None
    for attr_name, what, peak in (
        (PEAK_ATTR, "peak", placement.peak),
        (PEAK_DRAM_ATTR, "DRAM peak", dram.peak if dram is not None else 0),
    ):
        planned = function.attributes.get(attr_name)
        if isinstance(planned, IntegerAttr) and planned.value.data != peak:
            raise DiagnosticException(
                f"allocate-memory: @{function.sym_name.data}: allocated {what} {peak} differs from the "
                f"planned {planned.value.data} (was the plan made for another accelerator than '{accelerator}'?)"
            )

    op_of_tensor = {info.output.name: originals[i] for i, info in enumerate(scheduled.program.ops)}
    op_of_name = {info.name: originals[i] for i, info in enumerate(scheduled.program.ops)}
    arg_of_input = {name: index for index, name in enumerate(scheduled.program.graph_inputs)}
    arg_placements: dict[int, PlacementAttr] = {}
    placed: list[tuple[Buffer, MemoryRegion, Placement]] = [(b, MemoryRegion.SRAM, placement) for b in buffers]
    if dram is not None:
        placed += [(b, MemoryRegion.DRAM, dram) for b in dram_buffers]
    for buffer, memory, where in placed:
        attr = PlacementAttr(memory, where.offsets[buffer.name], buffer.size)
        kind, _, name = buffer.name.partition(":")
        if kind == "input":
            arg_placements[arg_of_input[name]] = attr
            continue
        if kind == "tensor":
            producer = op_of_tensor[name]
            parent = producer.parent_op()
            set_placement(parent if isinstance(parent, StripedRegionOp) else producer, attr)
            continue
        mode, _, name = name.partition(":")
        if mode == "weights":
            op_of_name[name].attributes[WEIGHTS_PLACEMENT_ATTR] = attr
            continue
        producer = op_of_tensor[name]
        set_placement(_rolling_buffer_of(producer) or producer, attr)
    if arg_placements:
        set_arg_attrs(function, PLACEMENT_ATTR, arg_placements)
    function.attributes[ALLOCATED_PEAK_ATTR] = IntegerAttr(placement.peak, i64)
    function.attributes[MAX_LIVE_ATTR] = IntegerAttr(bound, i64)
    if dram is not None:
        function.attributes[ALLOCATED_DRAM_ATTR] = IntegerAttr(dram.peak, i64)
    if problems := check_memory(function):
        raise AllocationError(f"@{function.sym_name.data}: the allocation fails its check: {'; '.join(problems[:3])}")
    return placement.peak, bound


def _rolling_buffer_of(producer: Operation) -> RollingBufferOp | None:
    for use in producer.results[0].uses:
        if isinstance(use.operation, RollingBufferOp):
            return use.operation
    return None
