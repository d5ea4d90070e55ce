"""The compile report: what a compiled module costs on the Ethos-U, as JSON and as a summary.

    cascade-opt model.tflite -p 'cascade-plan{accelerator=ethos-u55-128},rolling-buffer' --report r.json

`compile_report(module, ...)` needs a *planned* module: one that went through `cascade-plan`
(its functions carry `cascade.cycles`), with or without rolling buffers and allocation. Lowered
IR (`ethosu.command_stream`s) has lost its cascades, so it is reported together with the planned
module it came from (`planned=`), or with what the report reads of that module
(`planned_facts`), which the driver and `cascade.api` gather while the pipeline lowers
(`PlanKeeper`). The keys (a benchmark reads them; add, never rename):

* `accelerator`, `system_config`, `memory_mode`: the configuration priced. The accelerator is
  the one the command streams name, else the one given (the plan's), else Vela's default; the
  system config and memory mode are those recorded on the streams, else the given ones, else
  Vela's defaults for the accelerator.
* `peak_sram_bytes`: the allocated peak (`cascade.allocated_peak_bytes`) when allocated, else
  the plan's (`cascade.peak_sram_bytes`); `lower_bound_bytes` the plan's row-striping bound.
* `peak_dram_bytes`: the bytes of the tensors the plan spilled to the arena (DRAM in
  Dedicated_Sram): `cascade.allocated_dram_bytes` when allocated, else the plan's
  `cascade.peak_dram_bytes`; 0 when nothing is spilled.
* `total_cycles`: the plan's cycles (`cascade.cycles`, summed over functions): stripes
  pipelined, weight copies hidden behind the previous step where the plan prefetches them. An
  operator that lowering leaves on the CPU but the NPU could run (fully_connected without
  `fc-on-npu`, softmax) is priced there as NPU work, reading its weights from where they are
  (the plan gives a CPU operator no SRAM weight buffer).
* `per_op`: every operator in schedule order, priced by the Ethos-U performance model
  (`EthosUCostModel.region_cost`) on exactly the stripe boxes the plan computes (a lone
  operator: its whole output), feature maps in SRAM (the spilled ones, `cascade.spilled`, in
  the arena memory, as the planner prices them) and weights where the plan put them;
  stripes of a cascade are pipelined as the planner prices them (fill and drain paid once).
  `cascade` is the index of its cascade (multi-operator groups in order) or null; `on_cpu`
  is true for an operator the NPU does not run (its cycles are 0): one the cost model cannot
  lower, and after lowering every `nn` operator left between the streams.
  Per-op cycles leave out weight copies, so they need not add up to `total_cycles`.
* `npu_cycles`: the sum of the NPU operators' compute cycles (no memory stalls).
* `flash_bytes_read`: bytes read from the constant memory (flash; DRAM in Dedicated_Sram):
  weights streamed by the stripes plus one copy of every weight buffer kept in SRAM.
  `sram_bytes_accessed`: bytes read and written in SRAM, those copies' writes included.
  `spilled_bytes_accessed`: bytes of spilled feature maps read and written in the arena
  (counted there only, not in `flash_bytes_read` when the arena is the constant memory).
* `npu_ops`: NPU operations issued (every stripe of every operator, more where an operator
  decomposes); after lowering, the kernel commands of the streams. `cpu_ops`: operators the
  NPU cannot run (after lowering: the `nn` operators left between streams). After lowering,
  `cpu_operators` lists those with `op`, `name` (as in `per_op`: the TFLite tensor name, else
  the SSA name), `location` (`file:line:col` or null) and `reason` (lower-to-ethosu's
  `cascade.on_cpu`); the summary prints them under the count. The traffic keys count what the
  NPU reads and writes: a CPU operator's accesses are not in them.
* `command_streams`: `ethosu.command_stream`s in the output (0 before lowering).

Everything but `compile_seconds` is a function of the module, so the JSON of two runs differs
only there. `format_summary` renders the few lines the driver prints on stderr.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, NameLoc, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from cascade.dialects import ethosu, nn
from cascade.dialects.access import Region
from cascade.dialects.cascade import ForStripesOp, GroupOp
from cascade.ethos_u.arch import (
    DEFAULT_ACCELERATOR,
    DEFAULT_MEMORY_MODE,
    DEFAULT_SYSTEM_CONFIG,
    ArchConfig,
    arch_config,
)
from cascade.ethos_u.cost_model import EthosUCostModel, MemoryMap, RegionCost
from cascade.ethos_u.estimate import choose_layouts
from cascade.ethos_u.lowering import UnsupportedOpError
from cascade.parallel import Pending, ahead
from cascade.passes.planner.graph import OpInfo
from cascade.passes.planner.program import ProgramGraph
from cascade.passes.planner.stripes import CascadeGeometry

__all__ = [
    "PlanKeeper",
    "PlannedFacts",
    "ReportError",
    "compile_report",
    "expand_for_report",
    "format_summary",
    "is_lowered",
    "is_planned",
    "pipeline_accelerator",
    "planned_facts",
    "report_json",
]

TOOL = "cascade-opt"
CYCLES_ATTR = "cascade.cycles"
PEAK_ATTR = "cascade.peak_sram_bytes"
ALLOCATED_PEAK_ATTR = "cascade.allocated_peak_bytes"
LOWER_BOUND_ATTR = "cascade.lower_bound_bytes"
PEAK_DRAM_ATTR = "cascade.peak_dram_bytes"
ALLOCATED_DRAM_ATTR = "cascade.allocated_dram_bytes"
SPILLED_TRAFFIC = "spilled"
"""`OpCost.traffic` key of the spilled feature maps' bytes (kept apart from their memory's)."""


class ReportError(ValueError):
    """The module cannot be reported on (not planned); the message is one line."""


@dataclass
class OpCost:
    """One operator of the schedule, priced."""

    name: str
    op: str
    cascade: int | None
    cycles: int = 0
    npu_cycles: int = 0
    npu_ops: int = 0
    on_cpu: bool = False
    traffic: dict[str, int] = field(default_factory=dict)
    source: tuple[object, ...] = ()
    """`_source` of the operator: how lowered IR's CPU operators are found among the plan's."""

    def add_traffic(self, more: dict[str, int], times: int = 1) -> None:
        for memory, count in more.items():
            self.traffic[memory] = self.traffic.get(memory, 0) + count * times


# --------------------------------------------------------------------------- #
# What the module says
# --------------------------------------------------------------------------- #


def _functions(module: ModuleOp) -> list[FuncOp]:
    return [op for op in module.ops if isinstance(op, FuncOp) and op.body.blocks]


def _int_attr(op: Operation, name: str) -> int | None:
    attr = op.attributes.get(name)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def _streams(module: ModuleOp) -> list[ethosu.CommandStreamOp]:
    return [op for op in module.walk() if isinstance(op, ethosu.CommandStreamOp)]


def is_planned(module: ModuleOp) -> bool:
    """Every function with a body went through cascade-plan (and there is one)."""
    functions = _functions(module)
    return bool(functions) and all(_int_attr(f, CYCLES_ATTR) is not None for f in functions)


def is_lowered(module: ModuleOp) -> bool:
    return bool(_streams(module))


def _configuration(
    module: ModuleOp, accelerator: str | None, system_config: str | None, memory_mode: str | None
) -> tuple[str, str, str]:
    """(accelerator, system config, memory mode): the streams' first, else those a function was
    planned for (`cascade_plan.TARGET_ATTRS`), else the given, else Vela's defaults."""
    for stream in _streams(module):
        accelerator = stream.accelerator.data
        if stream.system_config is not None:
            system_config = stream.system_config.data
        if stream.memory_mode is not None:
            memory_mode = stream.memory_mode.data
        break
    else:
        from cascade.passes.cascade_plan import recorded_target

        for function in (f for f in module.ops if isinstance(f, FuncOp)):
            planned = recorded_target(function)
            if planned[0] is not None:
                given = (accelerator, system_config, memory_mode)
                accelerator, system_config, memory_mode = (p or g for p, g in zip(planned, given, strict=True))
                break
    accelerator = accelerator or DEFAULT_ACCELERATOR
    family = "u65" if accelerator.startswith("ethos-u65") else "u55"
    return accelerator, system_config or DEFAULT_SYSTEM_CONFIG[family], memory_mode or DEFAULT_MEMORY_MODE[family]


# --------------------------------------------------------------------------- #
# Pricing the schedule
# --------------------------------------------------------------------------- #


def _planned_form(function: FuncOp) -> FuncOp:
    """The function with its stripe loops back as `cascade.group`s (rolling-buffer's inverse)."""
    if not any(isinstance(op, ForStripesOp) for op in function.body.block.ops):
        return function
    from cascade.passes.rolling_buffer import group_view

    return group_view(function)[0]


def _price_boxes(
    model: EthosUCostModel,
    info: OpInfo,
    boxes: Sequence[tuple[Region, int]],
    weights_in_sram: bool,
    pipelined: bool,
    cost: OpCost,
    memories: MemoryMap,
) -> None:
    """Add the cycles, NPU operations and traffic of computing `boxes` (each `count` times),
    with the operands where `memories` puts them.

    Pipelined stripes (a cascade) pay the operator's fill and drain once, as the planner
    prices them (`EthosUCostModel.pipelined_stripe_cycles`).
    """
    if pipelined:
        whole = Region.full(info.output.shape)
        alone = model.region_cost(info, whole, memories, weights_in_sram)
        inside = model.region_cost(info, whole, memories, weights_in_sram, first=False, last=False)
        cost.cycles += max(alone.total_cycles - inside.total_cycles, 0)
        cost.npu_cycles += max(alone.npu_cycles - inside.npu_cycles, 0)
    for region, count in boxes:
        priced = model.region_cost(info, region, memories, weights_in_sram, first=not pipelined, last=not pipelined)
        cost.cycles += count * priced.total_cycles
        cost.npu_cycles += count * priced.npu_cycles
        cost.npu_ops += count * len(priced.ops)
        cost.add_traffic(_traffic(priced, memories), count)


def _traffic(priced: RegionCost, memories: MemoryMap) -> dict[str, int]:
    """Bytes per memory, the spilled feature maps' under `SPILLED_TRAFFIC` instead of their
    memory's (in Dedicated_Sram the arena and the constants share the DRAM)."""
    totals = priced.bytes_by_memory()
    for step, perf in priced.ops:
        for role in ("ifm", "ifm2", "ofm"):
            operand = getattr(step, role)
            if operand is None or operand.constant or operand.tensor not in memories.tensors:
                continue
            memory = memories.tensors[operand.tensor].name
            access = perf.traffic.get(memory, {}).get(role)
            if access is not None:
                totals[memory] -= access.bytes
                totals[SPILLED_TRAFFIC] = totals.get(SPILLED_TRAFFIC, 0) + access.bytes
    return totals


def _price_function(function: FuncOp, arch: ArchConfig, first_cascade: int) -> list[OpCost]:
    from cascade.passes.cascade_plan import planned_fc_on_npu, scheduled_program

    planned = _planned_form(function)
    scheduled = scheduled_program(planned)
    graph = ProgramGraph.build(scheduled.program)
    model = EthosUCostModel(arch, layouts=choose_layouts(scheduled.program), fc_on_npu=planned_fc_on_npu(planned))
    # Spilled tensors live in the arena (DRAM in Dedicated_Sram), everything else in SRAM.
    memories = model.memory_map(scheduled.spilled)
    units = [op for op in planned.body.block.ops if isinstance(op, GroupOp | nn.NNOperation)]
    costs: list[OpCost] = []
    cascade = first_cascade
    for unit, step in zip(units, scheduled.steps, strict=True):
        geometry = None
        index = None
        if isinstance(unit, GroupOp):
            geometry = CascadeGeometry.build(graph, step.first, step.sink, step.config, step.recompute)
            index, cascade = cascade, cascade + 1
        for position in range(step.first, step.sink + 1):
            info = graph.ops[position]
            nn_op = scheduled.nn_ops[position]
            cost = OpCost(info.name, nn_op.name, index, source=_source(nn_op))
            boxes = geometry.price_boxes(position) if geometry else _alone(info, step.weight_slice_depth)
            # Stripes of a cascade, or weight slices, run back to back: fill and drain once.
            pipelined = geometry is not None or len(boxes) > 1
            try:
                _price_boxes(model, info, boxes, step.weights_in_sram, pipelined, cost, memories)
            except UnsupportedOpError:
                costs.append(OpCost(cost.name, cost.op, index, on_cpu=True, source=cost.source))
                continue
            if step.weights_in_sram and info.weights:
                # One DMA copy of the encoded weights and scales into SRAM.
                copied = model.weight_buffer_bytes(info)
                cost.add_traffic({arch.const_memory.name: copied, arch.staging_memory.name: copied})
            costs.append(cost)
    return costs


def _alone(info: OpInfo, slice_depth: int) -> list[tuple[Region, int]]:
    """The boxes of an operator run alone: its whole output, or one box per output-channel
    slice when its weights are double-buffered in slices of `slice_depth` channels."""
    shape = info.output.shape
    if not slice_depth:
        return [(Region.full(shape), 1)]
    zeros = tuple(0 for _ in shape[:-1])
    return [
        (Region((*zeros, first), (*shape[:-1], min(slice_depth, shape[-1] - first))), 1)
        for first in range(0, shape[-1], slice_depth)
    ]


# --------------------------------------------------------------------------- #
# The report
# --------------------------------------------------------------------------- #


def _kernel_commands(module: ModuleOp) -> int:
    """The kernel commands in all streams of lowered IR."""
    return sum(1 for s in _streams(module) for c in s.commands if not isinstance(c, ethosu.DmaOp))


def _source(op: Operation) -> tuple[object, ...]:
    """What identifies `op` in the planned module and in the IR lowered from it, where its
    values are others: its name and location (TFLite tensor name, `file:line:col`, else the SSA
    name of its result), its result type and its properties (two operators a model names alike
    still differ there: a stride-1 and a stride-4 convolution both writing a tensor 't')."""
    from cascade.frontends.loader import format_location

    where = op.location.desc.data if isinstance(op.location, NameLoc) else format_location(op.location)
    # Attributes compare by value: printing them (a per-channel quantization prints a scale per
    # channel) took 30 ms of a 1.2 s compile of mbv2_035_96.
    properties = tuple(sorted(op.properties.items(), key=lambda item: item[0]))
    return op.name, where or op.results[0].name_hint or "", op.results[0].type, properties


def _cpu_operators(left: Sequence[nn.NNOperation], costs: Sequence[OpCost]) -> list[dict[str, str | None]]:
    """The nn operators `left` in lowered IR, each with why lower-to-ethosu left it to the CPU,
    named as `costs` (the plan's operators) name it."""
    from cascade.frontends.loader import format_location
    from cascade.passes.lower_to_ethosu import ON_CPU_ATTR

    planned = {cost.source: cost.name for cost in costs}
    operators: list[dict[str, str | None]] = []
    for op in left:
        reason = op.attributes.get(ON_CPU_ATTR)
        operators.append(
            {
                "op": op.name,
                "name": planned.get(_source(op), op.results[0].name_hint or ""),
                "location": format_location(op.location),
                "reason": reason.data if isinstance(reason, StringAttr) else "unknown",
            }
        )
    return operators


def _max_or_none(values: Iterable[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


_FUNCTION_ATTRS = (CYCLES_ATTR, PEAK_ATTR, ALLOCATED_PEAK_ATTR, LOWER_BOUND_ATTR, PEAK_DRAM_ATTR, ALLOCATED_DRAM_ATTR)


@dataclass(frozen=True)
class PlannedFacts:
    """What a report reads of the planned module (`planned_facts`). It pickles, so a forked
    child can gather it from the module as planned while the parent lowers that module."""

    configuration: tuple[str, str, str]
    """(accelerator, system config, memory mode) the operators were priced for."""
    costs: list[OpCost]
    """Every operator of every function, in schedule order, priced."""
    functions: dict[str, dict[str, int | None]]
    """Per function (in order), its integer `cascade.*` attributes (`_FUNCTION_ATTRS`)."""


def planned_facts(
    module: ModuleOp,
    accelerator: str | None = None,
    system_config: str | None = None,
    memory_mode: str | None = None,
) -> PlannedFacts:
    """The facts of a planned `module` that its report needs (`compile_report` explains the
    configuration arguments). Raises ReportError when `module` is not planned."""
    if not is_planned(module):
        raise ReportError(
            "the report needs planned IR (functions with cascade.cycles): run cascade-plan or ethosu-pipeline first"
        )
    configuration = _configuration(module, accelerator, system_config, memory_mode)
    arch = arch_config(*configuration)
    costs: list[OpCost] = []
    for function in _functions(module):
        costs += _price_function(function, arch, len({c.cascade for c in costs if c.cascade is not None}))
    functions = {f.sym_name.data: {name: _int_attr(f, name) for name in _FUNCTION_ATTRS} for f in _functions(module)}
    return PlannedFacts(configuration, costs, functions)


def compile_report(
    module: ModuleOp,
    *,
    input_name: str = "-",
    accelerator: str | None = None,
    system_config: str | None = None,
    memory_mode: str | None = None,
    planned: ModuleOp | PlannedFacts | None = None,
    compile_seconds: float = 0.0,
    version: str = "unknown",
) -> dict[str, Any]:
    """The report of `module` (see the module docstring for every key).

    `planned` is the module as it stood after planning (and allocation), or its
    `planned_facts`, for a `module` that was lowered since; `accelerator` etc. are what the
    pipeline used, for IR that does not record them. Raises ReportError when neither module
    is planned.
    """
    lowered = is_lowered(module)
    if is_planned(module) and not lowered:
        planned = module
    elif lowered and (planned is None or (isinstance(planned, ModuleOp) and not is_planned(planned))):
        raise ReportError(
            "the report needs the plan: lowered IR no longer holds its cascades; "
            "report from the pipeline that lowers it (e.g. --ethosu-pipeline ... --report FILE)"
        )
    given = (accelerator, system_config, memory_mode)
    facts = planned if isinstance(planned, PlannedFacts) else planned_facts(planned or module, *given)
    configuration = _configuration(module, *given)
    if configuration != facts.configuration:
        raise ReportError(
            f"the command streams are for {' '.join(configuration)}, "
            f"the plan was made for {' '.join(facts.configuration)}"
        )
    accelerator, system_config, memory_mode = configuration
    arch = arch_config(accelerator, system_config, memory_mode)
    costs = facts.costs
    cascades = len({c.cascade for c in costs if c.cascade is not None})
    cpu_operators = None
    if lowered:
        left = [op for function in _functions(module) for op in function.walk() if isinstance(op, nn.NNOperation)]
        cpu_operators = _cpu_operators(left, costs)
        sources = {_source(op) for op in left}
        costs = [OpCost(c.name, c.op, c.cascade, on_cpu=True) if c.source in sources else c for c in costs]
    npu_ops = sum(c.npu_ops for c in costs) if cpu_operators is None else _kernel_commands(module)
    cpu_ops = sum(1 for c in costs if c.on_cpu)
    final_functions = {f.sym_name.data: f for f in _functions(module)}
    functions = facts.functions.values()
    peaks = []
    dram_peaks = []
    for name, attrs in facts.functions.items():
        final = final_functions.get(name)
        now = attrs if final is None else {key: _int_attr(final, key) for key in _FUNCTION_ATTRS}
        peak = now[ALLOCATED_PEAK_ATTR] or attrs[ALLOCATED_PEAK_ATTR]
        peaks.append(attrs[PEAK_ATTR] if peak is None else peak)
        dram_peaks.append(now[ALLOCATED_DRAM_ATTR] or attrs[ALLOCATED_DRAM_ATTR] or attrs[PEAK_DRAM_ATTR])
    return {
        "tool": TOOL,
        "version": version,
        "input": input_name,
        "accelerator": accelerator,
        "system_config": system_config,
        "memory_mode": memory_mode,
        "core_clock_hz": int(arch.system.core_clock),
        "peak_sram_bytes": _max_or_none(peaks) or 0,
        "peak_dram_bytes": _max_or_none(dram_peaks) or 0,
        "lower_bound_bytes": _max_or_none(attrs[LOWER_BOUND_ATTR] for attrs in functions),
        "total_cycles": sum(attrs[CYCLES_ATTR] or 0 for attrs in functions),
        "npu_cycles": sum(c.npu_cycles for c in costs),
        "cpu_ops": cpu_ops,
        # Only lowering decides (and says why): a plan's report leaves it out.
        **({"cpu_operators": cpu_operators} if cpu_operators is not None else {}),
        "flash_bytes_read": sum(c.traffic.get(arch.const_memory.name, 0) for c in costs),
        "sram_bytes_accessed": sum(c.traffic.get(arch.staging_memory.name, 0) for c in costs),
        "spilled_bytes_accessed": sum(c.traffic.get(SPILLED_TRAFFIC, 0) for c in costs),
        "cascades": cascades,
        "npu_ops": npu_ops,
        "command_streams": len(_streams(module)),
        "per_op": [
            {"name": c.name, "op": c.op, "cycles": c.cycles, "cascade": c.cascade, "on_cpu": c.on_cpu} for c in costs
        ],
        "compile_seconds": round(compile_seconds, 3),
    }


def report_json(report: dict[str, Any]) -> str:
    """The report as written to `--report FILE`: sorted keys, indent 2, a final newline."""
    return json.dumps(report, sort_keys=True, indent=2) + "\n"


def format_summary(report: dict[str, Any]) -> str:
    """A few aligned lines, like Vela's network summary."""
    peak = report["peak_sram_bytes"]
    bound = report["lower_bound_bytes"]
    clock = report.get("core_clock_hz") or 0
    cycles = report["total_cycles"]
    time = f" ({cycles / clock * 1e3:.3f} ms at {clock / 1e6:g} MHz)" if clock else ""
    dram = report.get("peak_dram_bytes") or 0
    spilled = report.get("spilled_bytes_accessed") or 0
    rows = [
        ("Accelerator", report["accelerator"]),
        ("System configuration", report["system_config"]),
        ("Memory mode", report["memory_mode"]),
        ("Peak SRAM used", f"{peak / 1024:.2f} KiB ({peak} bytes)"),
        # Only plans that spill use DRAM for feature maps: the others' summary is unchanged.
        *([("Peak DRAM used", f"{dram / 1024:.2f} KiB ({dram} bytes)")] if dram else []),
        # Not a bound of every plan: 2-D stripes that recompute can keep less than a row.
        ("Row-striping bound", "-" if bound is None else f"{bound / 1024:.2f} KiB ({bound} bytes)"),
        ("Cascades", str(report["cascades"])),
        ("NPU operations", str(report["npu_ops"])),
        ("CPU operators", str(report["cpu_ops"])),
        ("Command streams", str(report["command_streams"])),
        ("Flash bytes read", str(report["flash_bytes_read"])),
        ("SRAM bytes accessed", str(report["sram_bytes_accessed"])),
        *([("Spilled bytes accessed", str(spilled))] if spilled else []),
        ("NPU cycles", str(report["npu_cycles"])),
        ("Total cycles", f"{cycles}{time}"),
        ("Compile time", f"{report['compile_seconds']:.2f} s"),
    ]
    width = max(len(label) for label, _ in rows)
    lines = [f"Network summary for {report['input']}"]
    for label, value in rows:
        lines.append(f"  {label.ljust(width)}  {value}")
        if label == "CPU operators":
            lines += [_cpu_operator_line(c) for c in report.get("cpu_operators", [])]
    return "\n".join(lines)


def _cpu_operator_line(operator: dict[str, Any]) -> str:
    where = f" at {operator['location']}" if operator.get("location") else ""
    return f"    {operator['op']} '{operator['name']}'{where}: {operator['reason']}"


# --------------------------------------------------------------------------- #
# Keeping the planned module while a pipeline lowers it
# --------------------------------------------------------------------------- #


def expand_for_report(passes: Sequence[ModulePass]) -> tuple[ModulePass, ...]:
    """`passes` with every ethosu-pipeline replaced by its stages (`EthosUPipelinePass.stages`),
    so that a `PlanKeeper` sees the module between allocation and lowering.

    Each replaced pass first checks its names (`EthosUPipelinePass.check_names`), with its messages.
    """
    from cascade.passes.ethosu_pipeline import EthosUPipelinePass

    expanded: list[ModulePass] = []
    for pass_ in passes:
        if not isinstance(pass_, EthosUPipelinePass):
            expanded.append(pass_)
            continue
        pass_.check_names()
        expanded += pass_.stages()
    return tuple(expanded)


def pipeline_accelerator(passes: Sequence[ModulePass]) -> str | None:
    """The accelerator the last pass that names one was given (the plan's, for a report)."""
    for pass_ in reversed(passes):
        accelerator = getattr(pass_, "accelerator", None)
        if isinstance(accelerator, str):
            return accelerator
    return None


Callback = Callable[[ModulePass | None, ModuleOp, ModulePass | None], None]


class PlanKeeper:
    """A pipeline callback that gathers the facts of the planned module a report needs
    (`planned_facts`) as lower-to-ethosu receives it, and calls the callback it wraps
    (xdsl-opt's: verify, print, time) at the boundaries of the pipeline as given, not between
    the stages `expand` put in place of one pass: a report does not change what runs between
    the passes. A module still planned at the end is reported as it is.

    The facts are gathered by a forked child while this process lowers (`parallel.ahead`): the
    child needs no copy of the module, and pricing every operator of the plan takes 25 ms of a
    0.9 s compile of mbv1_025_96 for U55-128, 37 ms of mbv2_035_96's, which the lowering (120
    and 170 ms) hides. Without a second core they are gathered there and then.
    """

    def __init__(self, inner: Callback | None = None, accelerator: str | None = None) -> None:
        self.inner = inner
        self.accelerator = accelerator
        """The accelerator the pipeline names, for IR that does not record one (as `compile_report`'s)."""
        self.planned: Pending[PlannedFacts] | None = None
        self._inside: set[int] = set()
        """Ids of the stages followed by another stage of the same expanded pass."""

    def expand(self, passes: Sequence[ModulePass]) -> tuple[ModulePass, ...]:
        """`expand_for_report(passes)`, remembering which boundaries fall inside a pass."""
        expanded: list[ModulePass] = []
        for pass_ in passes:
            stages = expand_for_report([pass_])
            self._inside.update(id(stage) for stage in stages[:-1])
            expanded += stages
        return tuple(expanded)

    def __call__(self, previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
        if self.inner is not None and id(previous) not in self._inside:
            self.inner(previous, module, following)
        from cascade.passes.lower_to_ethosu import LowerToEthosUPass

        lowering_next = following is not None and following.name == LowerToEthosUPass.name
        if lowering_next and is_planned(module) and not is_lowered(module):
            self.cancel()
            self.planned = ahead(partial(planned_facts, module, self.accelerator))

    def cancel(self) -> None:
        """Stop gathering (the compile failed): no child is left computing."""
        if self.planned is not None:
            self.planned.cancel()
            self.planned = None
