"""cascade-plan: group `nn` operators into cascades run stripe by stripe, under an SRAM budget.

    cascade-opt model.tflite --cascade-plan
    cascade-opt net.mlir -p 'cascade-plan{sram-budget=262144 accelerator=ethos-u55-128 report="plan.json"}'

The pass is the integration point between the IR and the generic planner
(`cascade.passes.planner`): it builds the planner's view of each function (`OpInfo`s, via
`planner.from_nn`), prices it with the Ethos-U cost model of `accelerator`, runs
`planner.plan.plan_program`, and rewrites the function:

* when the chosen plan runs the operators in another topological order than the function's
  (the planner also searches a memory-lean order, `planner.order`; `reorder=false` keeps the
  function's), the `nn` operators are moved into that order, after the function's other
  operators but its terminator (constants: they have no operands, so any place after them is
  valid). A function with another operator that takes operands, the terminator aside, keeps
  its order;
* every chosen cascade of two or more operators becomes a `cascade.group` at the place of its
  last operator (its sink): operands are the feature maps entering it, in order of first use
  (weight constants stay outside and are used directly), the result is the sink's output;
  properties `stripe_shape`, `stripe_order`, `num_stripes`, `weights` (sram/stream),
  `peak_sram_bytes` (highest placed byte while it runs) and `cycles`;
* every operator of a group carries `cascade.stripe` (see `stripe_attr`), intermediates with
  their buffer mode (`rolling` or `recompute`);
* operators planned alone stay bare; one with weights carries `cascade.weights` (sram/stream),
  and `cascade.weight_slice_depth = d` when its SRAM weights are double-buffered in slices of d
  output channels;
* a group or lone operator whose SRAM weights are copied while the previous step runs carries
  the unit attribute `cascade.prefetch`;
* on a target that spills (U65's Dedicated_Sram), a group or lone operator whose output lives
  in the DRAM arena carries the unit attribute `cascade.spilled`, and so does, as an argument
  attribute, a graph input kept there; the function then carries `cascade.peak_dram_bytes`
  (the placed peak of the spilled tensors);
* the function carries `cascade.peak_sram_bytes` (the placed peak of the whole plan),
  `cascade.cycles` and `cascade.lower_bound_bytes` (the row-striping lower bound), and what it
  was planned for: `cascade.accelerator`, and `cascade.system_config` and `cascade.memory_mode`
  when given (`TARGET_ATTRS`; allocate-memory, lower-to-ethosu and the report follow them).

The meaning of the `cascade.stripe` of an operator in a group: `shape` is its buffer (the sink:
its stripe; a rolling intermediate: `depth` entries along the outer striped axis and the full
extent elsewhere; a recompute intermediate: the largest box it computes, over all stripes), and
`offset` maps the stripe index to the first element of the region the operator holds at that
stripe (a rolling intermediate: the lowest of the `depth` rows kept; a recompute one: its
box). For every stripe away from the edges the offset is exact and the region
(`StripeAttr.region_of`) is the held region (a rolling intermediate) or contains it (a
recompute intermediate whose boxes differ in size near the edges keeps the largest shape). The
first and last stripe along an axis can differ (padding clips them, the first stripe of a
rolling consumer computes its whole window, the last sink stripe may be short). The exact
per-stripe boxes are those of `planner.stripes.CascadeGeometry`; `scheduled_geometry` rebuilds
it from planned IR.

`scheduled_buffers` rebuilds from planned IR the exact buffer list the planner placed
(`planner.memory`): allocate-memory places it with `planner.placement.place` and gets the
peak this pass predicted.
"""

import importlib.util
import json
import math
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, TensorType, UnitAttr, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from cascade.dialects import nn
from cascade.dialects.access import Region
from cascade.dialects.cascade import (
    SPILLED_ATTR,
    STRIPE_ATTR,
    BufferMode,
    ForStripesOp,
    GroupOp,
    RollingBufferOp,
    StripeAttr,
    StripedRegionOp,
    WeightsMode,
    WeightsModeAttr,
    YieldOp,
    get_arg_attr,
    get_stripe,
    set_arg_attrs,
    set_stripe,
)
from cascade.passes.planner.cost import CostModel
from cascade.passes.planner.from_nn import ProgramInfo, ValueNames, check_tensor_sizes, describe, op_info_from_nn
from cascade.passes.planner.graph import OpInfo, TensorInfo
from cascade.passes.planner.memory import Step, plan_buffers, proportional_slice_bytes, spilled_buffers
from cascade.passes.planner.placement import Buffer
from cascade.passes.planner.plan import PlanningError, PlanOptions, PlanResult, describe_op, plan_program
from cascade.passes.planner.program import CHANNELS, ProgramGraph, axes_of
from cascade.passes.planner.search import reporting_progress
from cascade.passes.planner.stripes import CascadeGeometry, StripeConfig

WEIGHTS_ATTR = "cascade.weights"
"""Discardable attribute of an operator planned alone: where its weights live (sram/stream)."""
PEAK_ATTR = "cascade.peak_sram_bytes"
CYCLES_ATTR = "cascade.cycles"
LOWER_BOUND_ATTR = "cascade.lower_bound_bytes"
SLICE_DEPTH_ATTR = "cascade.weight_slice_depth"
"""i64 attribute of an operator planned alone whose SRAM weights are double-buffered in slices of
that many output channels (two slices resident at a time)."""
PEAK_DRAM_ATTR = "cascade.peak_dram_bytes"
"""Bytes of the spill memory the plan's spilled tensors take, placed (absent: none spilled)."""
PREFETCH_ATTR = "cascade.prefetch"
"""Unit attribute of a group or lone operator whose SRAM weights are copied while the previous
step runs (their buffers live from the previous step on)."""
TARGET_ATTRS = ("cascade.accelerator", "cascade.system_config", "cascade.memory_mode")
"""What a planned function was planned for: the accelerator, and the system config and memory
mode when given (else Vela's defaults for the accelerator). Later passes follow them."""
FC_ON_NPU_ATTR = "cascade.fc_on_npu"
"""Unit attribute of a function planned with fully connected layers on the NPU (`fc-on-npu`):
allocate-memory sizes their weight buffers as planned, lower-to-ethosu lowers them."""


@dataclass(frozen=True)
class CascadePlanPass(ModulePass):
    """Choose cascades, stripes and buffer modes under an SRAM budget (see the module docstring).

    Options: `sram-budget` (bytes, a hard limit; none: no limit), `accelerator` (Vela
    accelerator name), `objective` (`min-sram` or `min-cycles`; default: the fastest plan under
    the budget, or without one the smallest peak within 5 % of the fastest cycles), `striping`
    (`none`; `h` rows, or the columns of an output one row high; `hw` rows and columns; `c`,
    `hc`, `hwc`: channels too, in cascades a convolution may open and channel-wise operators,
    down to a global mean, continue),
    `rolling-axes` (`hw`, or `h`: intermediates roll along rows only), `system-config` and
    `memory-mode` (Vela's names; by default Vela's for the accelerator), `report` (path of a
    JSON report), `reorder` (`true`: the plans of a memory-lean operator order compete too;
    `false`: the function's order), `fc-on-npu` (plan fully connected layers as NPU operators,
    with weight buffers to choose; by default they run on the CPU, which reads their weights
    where they are).

    Every plan fits the SRAM the memory mode provides (`arena_cache_size`: 384 KiB in U65's
    default Dedicated_Sram_384KB; unlimited in U55's Shared_Sram), budget or not.
    """

    name = "cascade-plan"

    sram_budget: int | None = None
    accelerator: str = "ethos-u55-256"
    objective: str | None = None
    striping: str = "hwc"
    rolling_axes: str = "hw"
    system_config: str | None = None
    memory_mode: str | None = None
    report: str | None = None
    reorder: bool = True
    fc_on_npu: bool = False

    def plan_options(self) -> PlanOptions:
        """What this pass asks the planner for (not yet validated)."""
        return PlanOptions(
            sram_budget=self.sram_budget,
            objective=self.objective,
            striping=self.striping,
            rolling_axes=self.rolling_axes,
            reorder=self.reorder,
            whole_front=self.report is not None,
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from cascade.ethos_u.arch import unknown_config_name

        problem = unknown_config_name(self.accelerator, self.system_config, self.memory_mode) or target_problem(
            self.accelerator, self.system_config, self.memory_mode
        )
        if problem is None and self.report == "":
            # Said before planning; writing '' would fail after it, as "Is a directory".
            problem = "report: the file name is empty"
        if problem is not None:
            raise DiagnosticException(f"{self.name}: {problem}")
        try:
            options = self.plan_options()
            options.validate()
        except PlanningError as error:
            raise DiagnosticException(f"{self.name}: {error}") from None
        reports: dict[str, dict[str, object]] = {}
        for function in _functions(op):
            if (evidence := _planned_already(function)) is not None:
                raise DiagnosticException(f"{self.name}: @{function.sym_name.data} is already planned ({evidence})")
            scheduled = scheduled_program(function)
            if not scheduled.steps:
                continue
            try:
                check_tensor_sizes(scheduled.program)
            except ValueError as error:
                raise DiagnosticException(f"{self.name}: @{function.sym_name.data}: {error}") from None
            cost = planner_cost_model(
                self.accelerator, scheduled.program, self.name, self.system_config, self.memory_mode, self.fc_on_npu
            )
            planned_options = replace(options, reorder=False) if not _reorderable(function) else options
            try:
                with _search_progress(function.sym_name.data):
                    result = plan_program(scheduled.program, cost, planned_options)
            except PlanningError as error:
                message = _with_sources(str(error), scheduled.program)
                raise DiagnosticException(f"{self.name}: @{function.sym_name.data}: {message}") from None
            emit_plan(function, scheduled.nn_ops, result)
            for name, value in zip(TARGET_ATTRS, (self.accelerator, self.system_config, self.memory_mode), strict=True):
                if value is not None:
                    function.attributes[name] = StringAttr(value)
            if self.fc_on_npu:
                function.attributes[FC_ON_NPU_ATTR] = UnitAttr()
            reports[function.sym_name.data] = result.report()
        if self.report is not None:
            _write_report(self.report, reports)


def target_problem(accelerator: str, system_config: str | None = None, memory_mode: str | None = None) -> str | None:
    """Why known target names (None: Vela's defaults) make no target, or None: the memory mode
    must find its memories in the system config, and a tensor arena apart from the SRAM cache
    (Vela's spilling, as in Dedicated_Sram) is for Ethos-U65 only. The cost model would plan
    for such an Ethos-U55, and only the lowering refuse it."""
    from cascade.ethos_u.arch import DEFAULT_MEMORY_MODE, ArchConfigError, arch_config
    from cascade.ethos_u.arch import accelerator as accelerator_config
    from cascade.ethos_u.arch import memory_mode as memory_mode_config

    try:
        accel = accelerator_config(accelerator)
        mode = memory_mode_config(memory_mode or DEFAULT_MEMORY_MODE["u65" if accel.is_u65 else "u55"])
        if not accel.is_u65 and mode.arena_mem_area != mode.cache_mem_area:
            return (
                f"memory mode '{mode.name}' keeps the tensor arena apart from the SRAM, which only Ethos-U65 "
                f"supports: give '{accelerator}' Shared_Sram or Sram_Only, or use an ethos-u65 accelerator"
            )
        arch_config(accelerator, system_config, memory_mode)
    except ArchConfigError as error:
        system = f"system config '{system_config}'" if system_config is not None else "the default system config"
        return f"'{accelerator}' with {system}: {error}"
    return None


def check_cascades(function: FuncOp, pass_name: str) -> None:
    """Raise a DiagnosticException naming the first top-level cascade of `function` (and the
    operator in it) that is not as cascade-plan writes it. The passes after cascade-plan read
    a cascade through the planner's view (`scheduled_program`), which sees its nn operators
    only and takes one without a `cascade.stripe` for a rolling intermediate."""
    for unit in (op for op in function.body.block.ops if isinstance(op, StripedRegionOp)):
        if (problem := _cascade_problem(unit, pass_name)) is not None:
            raise DiagnosticException(f"{pass_name}: @{function.sym_name.data}: {problem}")


def _cascade_problem(unit: StripedRegionOp, pass_name: str) -> str | None:
    planned = f"{pass_name} works on cascades of nn operators, as cascade-plan plans them"
    if not any(isinstance(op, nn.NNOperation) for op in unit.body.block.ops):
        return f"{_describe(unit)} has no nn operator: {planned}"
    # Constants and index arithmetic (a loop's addresses) are no tensors the planner places;
    # rolling buffers belong to the loops rolling-buffer makes, a group has none yet.
    known: tuple[type[Operation], ...] = (nn.NNOperation, ConstantOp)
    if isinstance(unit, ForStripesOp):
        known += (RollingBufferOp,)
    for op in unit.body.block.ops:
        where = f"{_describe(op)} in the {_describe(unit)}"
        if isinstance(op, nn.NNOperation) and get_stripe(op) is None:
            return f"{where} has no '{STRIPE_ATTR}': every operator of a cascade needs its stripe map"
        if not isinstance(op, known) and any(isinstance(result.type, TensorType) for result in op.results):
            return f"{where} is not an nn operator: {planned}"
    return None


def _describe(op: Operation) -> str:
    """`op` for a diagnostic: its name and, when parsed from MLIR text, `file:line:col`."""
    from cascade.frontends.loader import format_location

    location = format_location(op.location)
    return f"{op.name} at {location}" if location is not None else op.name


def _planned_already(function: FuncOp) -> str | None:
    """What shows that `function` went through cascade-plan (and perhaps the passes after it),
    or None: planning it again would plan the plan."""
    for name in function.attributes:
        if name.startswith("cascade."):
            return f"it carries {name}"
    for op in function.body.walk():
        if isinstance(op, GroupOp) or op.name in ("cascade.for_stripes", "ethosu.command_stream"):
            return f"it contains {op.name}"
    return None


@contextmanager
def _search_progress(function_name: str) -> Iterator[None]:
    """A tqdm bar on stderr over the search's operators, only when stderr is a terminal (and
    tqdm is installed): piped output, lit and FileCheck never see it."""
    try:
        interactive = sys.stderr.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if not interactive or importlib.util.find_spec("tqdm") is None:
        yield
        return
    from tqdm import tqdm

    class _Bar(tqdm):
        # No monitor thread: with one thread, the weight encoder may fork (`cascade.parallel`).
        monitor_interval = 0

    with _Bar(desc=f"cascade-plan @{function_name}", unit="op", leave=False, file=sys.stderr) as bar:

        def advance(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        with reporting_progress(advance):
            yield


def _with_sources(message: str, program: ProgramInfo) -> str:
    """`message` with each operator it names (`plan.describe_op`) given as `from_nn.describe`
    does: with its `file:line:col` when it was parsed from MLIR text."""
    graph = ProgramGraph.build(program)
    for index, info in enumerate(program.ops):
        named = describe_op(graph, index)
        if named in message and "source" in info.attributes:
            message = message.replace(named, describe(info))
    return message


def _functions(module: ModuleOp) -> list[FuncOp]:
    return [op for op in module.ops if isinstance(op, FuncOp) and op.body.blocks]


def _write_report(path: str, reports: dict[str, dict[str, object]]) -> None:
    if len(reports) == 1:
        document: dict[str, object] = next(iter(reports.values()))
    else:
        document = {"functions": reports}
    try:
        Path(path).write_text(json.dumps(document, indent=1) + "\n")
    except OSError as error:
        raise DiagnosticException(f"cascade-plan: cannot write report '{path}': {error.strerror}") from None


# --------------------------------------------------------------------------- #
# The cost model
# --------------------------------------------------------------------------- #


class _CpuTolerantCost:
    """Wraps a cost model: operators the NPU cannot run (lowering errors) cost 0 cycles.

    Such operators run on the CPU between NPU commands; their buffers still count.
    """

    def __init__(self, inner: CostModel, unsupported: type[Exception]) -> None:
        self.inner = inner
        self.unsupported = unsupported

    def stripe_cycles(self, op: OpInfo, output: Region, weights_in_sram: bool, **spilled: frozenset[str]) -> int:
        try:
            return self.inner.stripe_cycles(op, output, weights_in_sram, **spilled)
        except self.unsupported:
            return 0

    def pipelined_stripe_cycles(
        self, op: OpInfo, output: Region, weights_in_sram: bool, **spilled: frozenset[str]
    ) -> int:
        pipelined = getattr(self.inner, "pipelined_stripe_cycles", None)
        try:
            if pipelined is None:
                return self.inner.stripe_cycles(op, output, weights_in_sram, **spilled)
            return int(pipelined(op, output, weights_in_sram, **spilled))
        except self.unsupported:
            return 0

    def can_spill(self) -> bool:
        can_spill = getattr(self.inner, "can_spill", None)
        return bool(can_spill()) if callable(can_spill) else False

    def weight_buffer_bytes(self, op: OpInfo) -> int:
        try:
            return self.inner.weight_buffer_bytes(op)
        except self.unsupported:
            return 0

    def buffer_bytes(self, tensor: TensorInfo, region_shape: tuple[int, ...]) -> int:
        return self.inner.buffer_bytes(tensor, region_shape)

    def size_weights(self, ops: Sequence[OpInfo]) -> None:
        self._announce("size_weights", ops)

    def size_weight_slices(self, op: OpInfo, depths: Sequence[int]) -> None:
        self._announce("size_weight_slices", op, depths)

    def _announce(self, hook: str, *arguments: object) -> None:
        """The inner model's optional `hook`, if it has one: an operator it cannot run is left
        to the call that sizes it (`weight_buffer_bytes`, `weight_slice_bytes`)."""
        announce = getattr(self.inner, hook, None)
        if callable(announce):
            try:
                announce(*arguments)
            except self.unsupported:
                pass

    def weight_slice_bytes(self, op: OpInfo, depth: int) -> int:
        per_slice = getattr(self.inner, "weight_slice_bytes", None)
        try:
            if per_slice is None:
                return proportional_slice_bytes(self.inner.weight_buffer_bytes(op), depth, op.output.shape[-1])
            return int(per_slice(op, depth))
        except self.unsupported:
            return 0

    def sram_capacity(self) -> int | None:
        capacity = getattr(self.inner, "sram_capacity", None)
        return None if capacity is None else int(capacity())

    def sram_name(self) -> str:
        name = getattr(self.inner, "sram_name", None)
        return "the target's SRAM" if name is None else str(name())

    def can_cascade(self, op: OpInfo) -> bool:
        can_cascade = getattr(self.inner, "can_cascade", None)
        return True if can_cascade is None else bool(can_cascade(op))

    def runs_on_npu(self, op: OpInfo) -> bool:
        """Whether the target runs `op` itself: not if its model says so, nor if it cannot
        lower it (such an operator runs on the CPU)."""
        runs_on_npu = getattr(self.inner, "runs_on_npu", None)
        if callable(runs_on_npu) and not runs_on_npu(op):
            return False
        try:
            self.inner.stripe_cycles(op, Region.full(op.output.shape), False)
        except self.unsupported:
            return False
        return True

    def weight_transfer_cycles(self, op: OpInfo) -> int:
        transfer = getattr(self.inner, "weight_transfer_cycles", None)
        if transfer is None:
            return 0
        try:
            return int(transfer(op))
        except self.unsupported:
            return 0


def recorded_target(function: FuncOp) -> tuple[str | None, str | None, str | None]:
    """(accelerator, system config, memory mode) `function` records it was planned for
    (`TARGET_ATTRS`); None where it records none."""
    values = [function.attributes.get(name) for name in TARGET_ATTRS]
    accelerator, system_config, memory_mode = (v.data if isinstance(v, StringAttr) else None for v in values)
    return accelerator, system_config, memory_mode


def planned_target(function: FuncOp, accelerator: str | None, pass_name: str) -> tuple[str, str | None, str | None]:
    """(accelerator, system config, memory mode) for a pass after cascade-plan on `function`:
    those it was planned for (`TARGET_ATTRS`); `accelerator`, when given, must be the planned
    one. A function planned before the target was recorded takes `accelerator` or Vela's
    default."""
    from cascade.ethos_u.arch import DEFAULT_ACCELERATOR

    planned, system_config, memory_mode = recorded_target(function)
    if accelerator is not None and planned is not None and accelerator != planned:
        raise DiagnosticException(
            f"{pass_name}: @{function.sym_name.data} was planned for '{planned}', not '{accelerator}' "
            f"(plan it again with accelerator={accelerator}, or leave accelerator out)"
        )
    return planned or accelerator or DEFAULT_ACCELERATOR, system_config, memory_mode


def planner_cost_model(
    accelerator: str,
    program: ProgramInfo,
    pass_name: str = "cascade-plan",
    system_config: str | None = None,
    memory_mode: str | None = None,
    fc_on_npu: bool = False,
) -> CostModel:
    """The Ethos-U cost model of `accelerator` in `system_config` and `memory_mode` (None: Vela's
    defaults for the accelerator) for `program` (layouts chosen as Vela does), fully connected
    layers on the NPU if `fc_on_npu`; an unknown name is a diagnostic of `pass_name`."""
    from cascade.ethos_u.arch import ArchConfigError, arch_config
    from cascade.ethos_u.cost_model import EthosUCostModel
    from cascade.ethos_u.estimate import choose_layouts
    from cascade.ethos_u.lowering import UnsupportedOpError

    try:
        arch = arch_config(accelerator, system_config, memory_mode)
    except (ArchConfigError, KeyError, ValueError) as error:
        # An ArchConfigError already names the accelerator and lists the valid ones.
        reason = str(error) if isinstance(error, ArchConfigError) else f"unknown accelerator '{accelerator}': {error}"
        raise DiagnosticException(f"{pass_name}: {reason}") from None
    model = EthosUCostModel(arch, layouts=choose_layouts(program), fc_on_npu=fc_on_npu)
    return _CpuTolerantCost(model, UnsupportedOpError)


def planned_fc_on_npu(function: FuncOp) -> bool:
    """Whether `function` was planned with fully connected layers on the NPU (`FC_ON_NPU_ATTR`)."""
    return FC_ON_NPU_ATTR in function.attributes


# --------------------------------------------------------------------------- #
# IR -> planner
# --------------------------------------------------------------------------- #


@dataclass
class ScheduledProgram:
    """A function as the planner sees it, with the cascades already in its IR (if any)."""

    program: ProgramInfo
    nn_ops: list[nn.NNOperation]
    steps: list[Step]
    """One per top-level group or bare operator, in order; for unplanned IR, one per operator."""
    spilled: frozenset[str] = frozenset()
    """Names of the full tensors the plan keeps in the spill memory (`SPILLED_ATTR`)."""


def _top_level_units(function: FuncOp) -> Iterator[GroupOp | nn.NNOperation]:
    for op in function.body.block.ops:
        if isinstance(op, GroupOp | nn.NNOperation):
            yield op


def scheduled_program(function: FuncOp) -> ScheduledProgram:
    """The planner's view of `function`, planned or not.

    Each `cascade.group` is a step whose configuration comes from its properties and the buffer
    modes of its operators; each bare operator is a step of its own, its weights in SRAM when
    it carries `cascade.weights = #cascade.weights<sram>`. A result used by anything but an
    `nn` operator or a group (e.g. `func.return`) is a graph output.
    """
    names = ValueNames()
    for group in (o for o in function.body.block.ops if isinstance(o, GroupOp)):
        for arg, operand in zip(group.input_args, group.inputs, strict=True):
            names.aliases[arg] = operand
        for result, value in zip(group.results, group.yield_op.values, strict=True):
            names.aliases[result] = value
    graph_inputs = tuple(names(arg) for arg in function.args)
    spilled = {name for index, name in enumerate(graph_inputs) if get_arg_attr(function, index, SPILLED_ATTR)}
    ops: list[OpInfo] = []
    nn_ops: list[nn.NNOperation] = []
    steps: list[Step] = []
    for unit in _top_level_units(function):
        first = len(ops)
        members = (
            [o for o in unit.body.block.ops if isinstance(o, nn.NNOperation)] if isinstance(unit, GroupOp) else [unit]
        )
        for member in members:
            ops.append(op_info_from_nn(member, names))  # type: ignore[arg-type]
            nn_ops.append(member)
        steps.append(_step_of(unit, members, first))
        if SPILLED_ATTR in unit.attributes:
            spilled.add(ops[-1].output.name)
    outputs: list[str] = []
    for op in function.body.block.ops:
        if isinstance(op, GroupOp | nn.NNOperation):
            continue
        for operand in op.operands:
            source = names.resolve(operand)
            # A returned function argument is a graph output too: its buffer lives to the end.
            if isinstance(source.owner, nn.NNOperation) or source.owner is function.body.block:
                outputs.append(names(operand))
    program = ProgramInfo(tuple(ops), graph_inputs, tuple(dict.fromkeys(outputs)))
    return ScheduledProgram(program, nn_ops, steps, frozenset(spilled))


def _step_of(unit: GroupOp | nn.NNOperation, members: Sequence[nn.NNOperation], first: int) -> Step:
    sink = first + len(members) - 1
    prefetch = PREFETCH_ATTR in unit.attributes
    if not isinstance(unit, GroupOp):
        mode = unit.attributes.get(WEIGHTS_ATTR)
        in_sram = isinstance(mode, WeightsModeAttr) and mode.data == WeightsMode.SRAM
        depth = unit.attributes.get(SLICE_DEPTH_ATTR)
        slice_depth = depth.value.data if isinstance(depth, IntegerAttr) else 0
        return Step(first, sink, StripeConfig((), ()), frozenset(), in_sram, prefetch, slice_depth)
    config = StripeConfig.from_ir(unit.get_stripe_order(), unit.get_stripe_shape())
    recompute = frozenset(
        first + index
        for index, member in enumerate(members)
        if (stripe := get_stripe(member)) is not None and stripe.get_mode() == BufferMode.RECOMPUTE
    )
    return Step(first, sink, config, recompute, unit.get_weights_mode() == WeightsMode.SRAM, prefetch)


def scheduled_buffers(function: FuncOp, cost: CostModel) -> list[Buffer]:
    """The SRAM buffers of a planned function, exactly as cascade-plan placed them."""
    scheduled = scheduled_program(function)
    return plan_buffers(ProgramGraph.build(scheduled.program), scheduled.steps, cost, scheduled.spilled)


def scheduled_spilled_buffers(function: FuncOp, cost: CostModel) -> list[Buffer]:
    """The spill-memory (DRAM) buffers of a planned function, as cascade-plan placed them."""
    scheduled = scheduled_program(function)
    return spilled_buffers(ProgramGraph.build(scheduled.program), scheduled.steps, cost, scheduled.spilled)


def scheduled_geometry(function: FuncOp, group: GroupOp) -> CascadeGeometry:
    """The exact stripe geometry of `group` (a group of `function`)."""
    return _geometries(function, [group])[group]


def scheduled_geometries(function: FuncOp) -> dict[GroupOp, CascadeGeometry]:
    """The exact stripe geometry of every `cascade.group` of `function`, the program read once."""
    return _geometries(function, [o for o in function.body.block.ops if isinstance(o, GroupOp)])


def _geometries(function: FuncOp, groups: Sequence[GroupOp]) -> dict[GroupOp, CascadeGeometry]:
    scheduled = scheduled_program(function)
    graph = ProgramGraph.build(scheduled.program)
    first_of = {op: index for index, op in enumerate(scheduled.nn_ops)}
    step_of = {step.first: step for step in scheduled.steps}
    geometries = {}
    for group in groups:
        members = [o for o in group.body.block.ops if isinstance(o, nn.NNOperation)]
        if not members:
            raise ValueError(f"{_describe(group)} has no nn operator (see `check_cascades`)")
        step = step_of[first_of[members[0]]]
        check_striping(graph, step, scheduled.nn_ops)
        geometries[group] = CascadeGeometry.build(graph, step.first, step.sink, step.config, step.recompute)
    return geometries


def check_striping(graph: ProgramGraph, step: Step, nn_ops: Sequence[nn.NNOperation]) -> None:
    """Raise a DiagnosticException naming the operator of `step` (a cascade; `nn_ops`: the
    operators `graph` indexes) that cannot run in the stripes the cascade cuts (a hand-written
    group of a 1x1 convolution reading another in channel stripes, say)."""
    problem = graph.stripe_problem(step.first, step.sink, step.config.order, step.recompute)
    if problem is None:
        return
    op, reason = problem
    raise DiagnosticException(f"{_describe(nn_ops[op])} in a cascade of stripes {step.config.describe()}: {reason}")


# --------------------------------------------------------------------------- #
# Planner -> IR
# --------------------------------------------------------------------------- #


def _reorderable(function: FuncOp) -> bool:
    """Whether `emit_plan` may move the nn operators of `function` after all its other
    operators but the terminator: none of those takes operands (an nn result among them)."""
    block = function.body.block
    return all(not op.operands for op in block.ops if not isinstance(op, nn.NNOperation) and op is not block.last_op)


def emit_plan(function: FuncOp, nn_ops: Sequence[nn.NNOperation], result: PlanResult) -> None:
    """Rewrite `function` (whose nn operators are `nn_ops`, in order) as `result` planned it."""
    if result.graph.order is not None:
        nn_ops = _run_in_order(function, [nn_ops[position] for position in result.graph.order])
    for cascade in result.cascades:
        members = list(nn_ops[cascade.first : cascade.sink + 1])
        mode = WeightsMode.SRAM if cascade.weights_in_sram else WeightsMode.STREAM
        if len(members) == 1:
            unit: Operation = members[0]
            if result.graph.ops[cascade.first].weights:
                unit.attributes[WEIGHTS_ATTR] = WeightsModeAttr(mode)
            if cascade.weight_slice_depth:
                unit.attributes[SLICE_DEPTH_ATTR] = IntegerAttr(cascade.weight_slice_depth, i64)
        else:
            unit = _emit_group(members, result.geometry(cascade), mode, cascade.peak, cascade.cycles)
        if cascade.prefetch:
            unit.attributes[PREFETCH_ATTR] = UnitAttr()
        if result.graph.ops[cascade.sink].output.name in result.spilled:
            unit.attributes[SPILLED_ATTR] = UnitAttr()
    values = ValueNames()  # names the arguments as `scheduled_program` did
    spilled_args = {index: UnitAttr() for index, arg in enumerate(function.args) if values(arg) in result.spilled}
    if spilled_args:
        set_arg_attrs(function, SPILLED_ATTR, spilled_args)
    if result.spilled:
        function.attributes[PEAK_DRAM_ATTR] = IntegerAttr(result.dram_peak, i64)
    function.attributes[PEAK_ATTR] = IntegerAttr(result.peak, i64)
    function.attributes[CYCLES_ATTR] = IntegerAttr(result.cycles, i64)
    function.attributes[LOWER_BOUND_ATTR] = IntegerAttr(result.lower_bound, i64)


def _run_in_order(function: FuncOp, nn_ops: list[nn.NNOperation]) -> list[nn.NNOperation]:
    """Move `nn_ops` (a topological order of the function's nn operators) to run in that order,
    just before the terminator (`_reorderable`)."""
    if not _reorderable(function):
        raise ValueError(f"@{function.sym_name.data} has operators between its nn operators that take operands")
    block = function.body.block
    terminator = block.last_op
    assert terminator is not None
    for op in nn_ops:
        op.detach()
        block.insert_op_before(op, terminator)
    return nn_ops


def _emit_group(
    members: list[nn.NNOperation], geometry: CascadeGeometry, weights: WeightsMode, peak: int, cycles: int
) -> GroupOp:
    sink = members[-1]
    inside = {result for member in members for result in member.results}
    inputs: list[SSAValue] = []
    for member in members:
        for operand in member.operands:
            if operand in inside or operand in inputs or isinstance(operand.owner, ConstantOp):
                continue
            inputs.append(operand)
    config = geometry.config
    full = _shape(sink.results[0])
    group = GroupOp.build_group(
        inputs,
        [sink.results[0].type],
        stripe_shape=config.ir_stripe_shape(full),
        stripe_order=config.ir_order(len(full)),
        weights=weights,
        peak_sram_bytes=peak,
        cycles=cycles,
    )
    parent = sink.parent_block()
    assert parent is not None
    parent.insert_op_before(group, sink)
    sink.results[0].replace_all_uses_with(group.results[0])
    block = group.body.block
    for arg, value in zip(block.args, inputs, strict=True):
        arg.name_hint = value.name_hint
    mapping = dict(zip(inputs, block.args, strict=True))
    for offset, member in enumerate(members):
        member.detach()
        block.add_op(member)
        for index, operand in enumerate(member.operands):
            if operand in mapping:
                member.operands[index] = mapping[operand]
        set_stripe(member, stripe_attr(geometry, geometry.first + offset))
    block.add_op(YieldOp(sink.results[0]))
    return group


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def stripe_attr(geometry: CascadeGeometry, op: int) -> StripeAttr:
    """The `cascade.stripe` of operator `op` of a cascade (see the module docstring)."""
    shape = list(geometry.graph.output_shape(op))
    results: list[AffineExpr] = [AffineExpr.constant(0) for _ in shape]
    order = geometry.config.order
    outer = geometry.config.outer_axis
    rolling = geometry.is_rolling(op)
    for axis in axes_of(shape):
        track = geometry.tracks[axis][op]
        extent = shape[axis]
        # Stripes whose region touches neither end of the axis follow the steady state; the
        # map is fitted on them (clipping makes the others irregular).
        if op == geometry.sink:
            size = geometry.config.size_along(axis, extent)
            starts = [None if iv is None else iv[0] for iv in track.computed]
            clean = [iv is not None and iv[1] - iv[0] + 1 == size for iv in track.computed]
        elif rolling and axis == outer:
            size = track.depth
            starts = [high - track.depth + 1 for high in track.written]
            clean = [0 <= high - track.depth + 1 and high < extent - 1 for high in track.written]
        elif rolling:
            size = extent
            starts = [0 for _ in track.required]
            clean = [True for _ in track.required]
        else:
            size = track.max_required
            starts = [None if iv is None else iv[0] for iv in track.required]
            if axis == CHANNELS:
                # No padding clips channels: every stripe but a short last one is steady.
                clean = [iv is not None and iv[1] - iv[0] + 1 == size for iv in track.required]
            else:
                clean = [iv is not None and 0 < iv[0] and iv[1] < extent - 1 for iv in track.required]
        shape[axis] = max(size, 1)
        if axis in order:
            results[axis] = _fit_expr(starts, clean, order.index(axis))
        else:
            results[axis] = AffineExpr.constant(next((s for s in starts if s is not None), 0))
    mode = None if op == geometry.sink else BufferMode.ROLLING if rolling else BufferMode.RECOMPUTE
    return StripeAttr(shape, AffineMap(len(order), 0, tuple(results)), mode)


def _fit_expr(starts: Sequence[int | None], clean: Sequence[bool], dim: int) -> AffineExpr:
    """`floor((p * d + q) / r)` matching `starts[t]` on the clean stripes t (if at least two),
    else on the interior ones."""
    steady = [start if ok else None for start, ok in zip(starts, clean, strict=True)]
    if sum(v is not None for v in steady) >= 2:
        p, q, r = fit_floor_affine(steady, interior_only=False)
    else:
        p, q, r = fit_floor_affine(starts)
    expr = AffineExpr.dimension(dim) * p + q if p else AffineExpr.constant(q)
    return expr if r == 1 else expr // r


def fit_floor_affine(values: Sequence[int | None], interior_only: bool = True) -> tuple[int, int, int]:
    """Integers (p, q, r) with floor((p*t + q) / r) == values[t] on the given t (None: skip);
    with `interior_only`, on the interior t (1..T-2) only, unless there are fewer than 3.

    Denominators up to 64 are tried (upscaling by 2 gives r = 2). If nothing fits, the line
    through the first and last points.
    """
    points = [(t, v) for t, v in enumerate(values) if v is not None]
    interior = points
    if interior_only and len(values) >= 3:
        interior = [(t, v) for t, v in points if 0 < t < len(values) - 1]
    interior = interior or points
    if not interior:
        return 0, 0, 1
    if len(interior) == 1:
        return 0, interior[0][1], 1
    (t0, v0), (t1, v1) = interior[0], interior[-1]
    for r in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64):
        slope = r * (v1 - v0) / (t1 - t0)
        for p in sorted({math.floor(slope), math.ceil(slope)}):
            low = max(r * v - p * t for t, v in interior)
            high = min(r * v + r - 1 - p * t for t, v in interior)
            if low <= high:
                g = math.gcd(math.gcd(p, low), r)
                return p // g, low // g, r // g
    return round((v1 - v0) / (t1 - t0)), v0 - round((v1 - v0) / (t1 - t0)) * t0, 1


def plan_summary(result: PlanResult) -> list[str]:
    """Human-readable lines describing the chosen plan (for tools and debugging)."""
    lines = []
    for cascade in result.cascades:
        ops = ", ".join(describe_op(result.graph, op) for op in range(cascade.first, cascade.sink + 1))
        lines.append(
            f"[{cascade.first}..{cascade.sink}] {cascade.config.describe()} "
            f"weights={'sram' if cascade.weights_in_sram else 'stream'} memory={cascade.memory} "
            f"cycles={cascade.cycles}: {ops}"
        )
    return lines
