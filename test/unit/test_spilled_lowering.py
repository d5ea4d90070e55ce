"""Spilled feature maps downstream of the plan: a plan that keeps some full tensors in DRAM (the
tensor arena of Ethos-U65's Dedicated_Sram) is allocated, checked, executed stripe by stripe,
lowered, written as a .tflite and reported, bit-exact with the unlowered program.

The spilled plans are made by hand from real plans for ethos-u65-256: the graph inputs, the graph
outputs, what a CPU operator reads or writes and two intermediate full tensors are marked
`cascade.spilled` (as the planner marks them), and the plan's SRAM and DRAM peaks are recomputed
from the planner's own buffer lists (`scheduled_buffers`, `scheduled_spilled_buffers`)."""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from ethosu.vela.tflite.Model import Model
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, UnitAttr, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import DiagnosticException

from cascade.dialects import ethosu, nn
from cascade.dialects.cascade import (
    PLACEMENT_ATTR,
    ForStripesOp,
    GroupOp,
    MemoryRegion,
    PlacementAttr,
    RollingBufferOp,
    get_placement,
    set_arg_attrs,
    set_placement,
)
from cascade.ethos_u.report import compile_report, format_summary
from cascade.ethos_u.tflite_output import TFLiteOutputError, lowered_tflite
from cascade.frontends.loader import load_module
from cascade.interpreter.ethosu import feature_map_addresses
from cascade.interpreter.litert import run_ethosu_tflite
from cascade.interpreter.nn import input_types, main_function, run_program
from cascade.interpreter.scheduled import POISON, run_scheduled
from cascade.passes.allocate_memory import AllocateMemoryPass
from cascade.passes.cascade_plan import (
    PEAK_ATTR,
    PEAK_DRAM_ATTR,
    SPILLED_ATTR,
    CascadePlanPass,
    planner_cost_model,
    scheduled_buffers,
    scheduled_program,
    scheduled_spilled_buffers,
)
from cascade.passes.lower_to_ethosu import LowerToEthosUPass, run_lowered
from cascade.passes.memory_check import (
    ALLOCATED_DRAM_ATTR,
    ALLOCATED_PEAK_ATTR,
    arg_placement,
    check_memory,
    live_buffers,
)
from cascade.passes.planner.placement import place
from cascade.passes.rolling_buffer import RollingBufferPass, group_view

MODELS = Path(__file__).parents[1] / "models"
ACCELERATOR = "ethos-u65-256"
MODEL_NAMES = ["resnet8_nosoftmax", "ds_cnn_kws_nosoftmax"]
SCRATCH, SCRATCH_FAST = 1, 2  # base-pointer regions of the tensor arena and of the fast scratch


@functools.cache
def _original(model: str) -> ModuleOp:
    return load_module(str(MODELS / f"{model}.tflite"))


def _inputs(model: str, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=t.get_shape(), dtype=np.int8) for t in input_types(_original(model))]


def _plan(model: str, accelerator: str = ACCELERATOR) -> ModuleOp:
    """The plan ethosu-pipeline makes (row stripes): on U65 its graph inputs and outputs and
    the CPU's tensors are spilled already."""
    module = _original(model).clone()
    CascadePlanPass(accelerator=accelerator, striping="h").apply(Context(), module)
    return module


def _spill(module: ModuleOp, intermediates: int = 2) -> set[str]:
    """Mark, as the planner would, the graph inputs and outputs, the tensors of CPU operators
    (fully connected) and the first `intermediates` other step outputs read by a later step as
    spilled, and set the plan's peaks to those of the planner's buffer lists. Returns the names
    of the spilled tensors."""
    function = main_function(module)
    units = [op for op in function.body.block.ops if isinstance(op, GroupOp | nn.NNOperation)]
    ret = function.body.block.last_op
    cpu = {u for u in units if isinstance(u, nn.FullyConnectedOp)}
    pinned = set(cpu)
    for unit in units:
        readers = {use.operation for use in unit.results[0].uses}
        if ret in readers or readers & cpu:
            pinned.add(unit)
    # Cascade outputs first (then lone operators'): the spilled tensors a stripe loop reads or fills.
    crossing = sorted(
        (u for u in units if u not in pinned and u.results[0].uses), key=lambda u: not isinstance(u, GroupOp)
    )
    assert len(crossing) >= intermediates
    for unit in [*pinned, *crossing[:intermediates]]:
        unit.attributes[SPILLED_ATTR] = UnitAttr()
    set_arg_attrs(function, SPILLED_ATTR, {index: UnitAttr() for index in range(len(function.args))})
    cost = planner_cost_model(ACCELERATOR, scheduled_program(function).program)
    function.attributes[PEAK_ATTR] = IntegerAttr(place(scheduled_buffers(function, cost)).peak, i64)
    function.attributes[PEAK_DRAM_ATTR] = IntegerAttr(place(scheduled_spilled_buffers(function, cost)).peak, i64)
    return set(scheduled_program(function).spilled)


@functools.cache
def _planned(model: str) -> tuple[ModuleOp, frozenset[str]]:
    module = _plan(model)
    return module, frozenset(_spill(module))


def _allocated(model: str) -> ModuleOp:
    module = _planned(model)[0].clone()
    RollingBufferPass().apply(Context(), module)
    AllocateMemoryPass(accelerator=ACCELERATOR).apply(Context(), module)
    module.verify()
    return module


@functools.cache
def _lowered(model: str) -> ModuleOp:
    module = _allocated(model)
    LowerToEthosUPass(accelerator=ACCELERATOR).apply(Context(), module)
    module.verify()
    return module


def _int(function: FuncOp, name: str) -> int:
    attr = function.attributes[name]
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def _reference(model: str, seed: int) -> list[np.ndarray]:
    want = run_program(_original(model), _inputs(model, seed)).outputs
    assert all(np.unique(w).size > 2 for w in want), "a degenerate output proves little"
    return want


def _equal(got: list[np.ndarray], want: list[np.ndarray]) -> bool:
    pairs = zip(got, want, strict=True)
    return len(got) == len(want) and all(g.shape == w.shape and np.array_equal(g, w) for g, w in pairs)


# --------------------------------------------------------------------------- #
# Plan, rolling buffers, allocation
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_spilled_marks_survive_rolling_buffer(model: str) -> None:
    planned, spilled = _planned(model)
    assert len(spilled) >= 4
    module = planned.clone()
    RollingBufferPass().apply(Context(), module)
    function = main_function(module)
    loops = [op for op in function.body.block.ops if isinstance(op, ForStripesOp)]
    assert any(SPILLED_ATTR in loop.attributes for loop in loops)
    view, _ = group_view(function)
    assert scheduled_program(view).spilled == spilled


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_spilled_tensors_are_placed_in_dram_apart_from_sram(model: str) -> None:
    spilled = _planned(model)[1]
    module = _allocated(model)
    function = main_function(module)
    assert _int(function, ALLOCATED_PEAK_ATTR) == _int(function, PEAK_ATTR)
    assert _int(function, ALLOCATED_DRAM_ATTR) == _int(function, PEAK_DRAM_ATTR) > 0
    # Spilling takes the full tensors out of SRAM.
    unspilled = _plan(model)
    assert _int(function, PEAK_ATTR) <= _int(main_function(unspilled), PEAK_ATTR)
    assert check_memory(function) == []
    dram, problems = live_buffers(function, MemoryRegion.DRAM)
    sram, _ = live_buffers(function)
    assert problems == []
    # The checker's DRAM buffers, from the IR alone, are the planner's spilled buffers.
    view, _ = group_view(function)
    cost = planner_cost_model(ACCELERATOR, scheduled_program(view).program)
    planner = scheduled_spilled_buffers(view, cost)
    assert {b.name.partition(":")[2] for b in planner} == spilled
    assert Counter((b.size, b.first, b.last) for b in dram) == Counter(
        (b.size, b.first_step, b.last_step) for b in planner
    )
    assert {b.kind for b in dram} <= {"input", "tensor"}
    assert {b.kind for b in sram} >= {"rolling", "tensor"}
    assert all(b.end <= _int(function, ALLOCATED_DRAM_ATTR) for b in dram)
    # The two memories are separate address spaces: some SRAM and DRAM buffers live at the same
    # time share offsets without being an overlap.
    assert any(
        a.offset < b.end and b.offset < a.end and a.first <= b.last and b.first <= a.last for a in sram for b in dram
    )


def test_a_dram_peak_other_than_the_plans_is_an_error() -> None:
    module = _planned("resnet8_nosoftmax")[0].clone()
    function = main_function(module)
    planned = _int(function, PEAK_DRAM_ATTR)
    function.attributes[PEAK_DRAM_ATTR] = IntegerAttr(planned - 16, i64)
    with pytest.raises(
        DiagnosticException, match=f"allocated DRAM peak {planned} differs from the planned {planned - 16}"
    ):
        AllocateMemoryPass(accelerator=ACCELERATOR).apply(Context(), module)


def _dram_results(function: FuncOp) -> list[SSAValue]:
    return [b.value for b in live_buffers(function, MemoryRegion.DRAM)[0] if b.kind == "tensor" and b.value]


def test_the_checker_rejects_broken_dram_allocations() -> None:
    function = main_function(_allocated("resnet8_nosoftmax"))
    assert check_memory(function) == []
    dram = live_buffers(function, MemoryRegion.DRAM)[0]
    # Two DRAM buffers live at the same step, moved onto each other.
    a, b = next((a, b) for a in dram for b in dram if a is not b and a.first <= b.last and b.first <= a.last)
    broken = function.clone()
    owner = next(o for o in broken.walk() if get_placement(o) == PlacementAttr(MemoryRegion.DRAM, b.offset, b.size))
    set_placement(owner, PlacementAttr(MemoryRegion.DRAM, a.offset, b.size))
    assert any("(dram) overlap while both are live" in p for p in check_memory(broken))
    # A DRAM buffer past the allocated DRAM bytes.
    broken = function.clone()
    owner = next(o for o in broken.walk() if get_placement(o) == PlacementAttr(MemoryRegion.DRAM, b.offset, b.size))
    set_placement(owner, PlacementAttr(MemoryRegion.DRAM, _int(function, ALLOCATED_DRAM_ATTR), b.size))
    assert any("above the allocated DRAM bytes" in p for p in check_memory(broken))
    # DRAM placements without the DRAM size.
    broken = function.clone()
    del broken.attributes[ALLOCATED_DRAM_ATTR]
    assert any(f"no {ALLOCATED_DRAM_ATTR}" in p for p in check_memory(broken))
    # A rolling buffer (SRAM only) in DRAM.
    broken = function.clone()
    rolling = next(o for o in broken.walk() if isinstance(o, RollingBufferOp))
    assert rolling.placement is not None
    rolling.properties["placement"] = PlacementAttr(MemoryRegion.DRAM, 0, rolling.placement.get_size())
    assert any("a rolling buffer must be in SRAM, not dram" in p for p in check_memory(broken))
    # A spilled tensor in SRAM, and an unspilled one in DRAM.
    broken = function.clone()
    value = _dram_results(broken)[0]
    placement = get_placement(value.owner)  # type: ignore[arg-type]
    assert placement is not None
    set_placement(value.owner, PlacementAttr(MemoryRegion.SRAM, placement.get_offset(), placement.get_size()))  # type: ignore[arg-type]
    assert any(f"is marked {SPILLED_ATTR} but placed in sram" in p for p in check_memory(broken))
    value.owner.attributes.pop(SPILLED_ATTR)  # type: ignore[union-attr]
    set_placement(value.owner, placement)  # type: ignore[arg-type]
    assert any(f"is not marked {SPILLED_ATTR} but placed in dram" in p for p in check_memory(broken))


# --------------------------------------------------------------------------- #
# Execution: stripe by stripe, lowered, as a .tflite
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_spilled_plan_runs_bit_exact_stripe_by_stripe(model: str) -> None:
    module = _allocated(model)
    run = run_scheduled(module, _inputs(model))
    assert len(run.dram) == _int(main_function(module), ALLOCATED_DRAM_ATTR)
    assert _equal(run.outputs, _reference(model, 0))
    # Every DRAM buffer was poisoned when it died (SRAM buffers at the same offsets notwithstanding).
    assert set(run.dram) == {POISON}


def test_the_stripe_executor_keeps_dram_buffers_apart() -> None:
    # Overlapping two live DRAM tensors (unchecked) changes the output: the executor really
    # stores spilled tensors in its DRAM, at their offsets, and poisons them when they die.
    # Either a tensor produced while another lives on, or a stripe loop's output written over
    # the rows of its dying input it has read.
    module = _allocated("resnet8_nosoftmax")
    function = main_function(module)
    dram = live_buffers(function, MemoryRegion.DRAM)[0]
    a, b = next(
        (a, b)
        for a in dram
        for b in dram
        if a is not b
        and b.kind == "tensor"
        and b.size <= a.size
        and (a.first < b.first < a.last or (a.last == b.first and b.offset < a.offset < b.end))
    )
    # Onto the other tensor; an output written over consumed rows ending where its input ends,
    # so that the first stripes overwrite the input rows the last ones read.
    offset = a.offset if a.first < b.first < a.last else a.end - b.size
    set_placement(b.value.owner, PlacementAttr(MemoryRegion.DRAM, offset, b.size))  # type: ignore[arg-type]
    assert check_memory(function)
    assert not _equal(
        run_scheduled(module, _inputs("resnet8_nosoftmax"), check=False).outputs, _reference("resnet8_nosoftmax", 0)
    )


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_spilled_plan_lowers_and_runs_bit_exact(model: str) -> None:
    module = _lowered(model)
    for seed in (0, 1):
        assert _equal(run_lowered(module, _inputs(model, seed)), _reference(model, seed))


def _ranges(command: ethosu.EthosUCommand) -> list[tuple[int, int, int]]:
    """(region, first byte, end) of every feature map and address range of `command`."""
    if isinstance(command, ethosu.DmaOp):
        return [(a.region, a.address, a.address + a.length) for a in (command.src, command.dest)]
    ranges = [(a.region, a.address, a.address + a.length) for a in (*command.weight_ranges, *command.bias_ranges)]
    for fm in (command.ifm, getattr(command, "ifm2", None), command.ofm):
        if isinstance(fm, ethosu.FeatureMapAttr):
            addresses = feature_map_addresses(fm)
            ranges.append((fm.region.data, int(addresses.min()), int(addresses.max()) + fm.element_size))
    return ranges


def _shift_dram(module: ModuleOp, shift: int) -> None:
    """Move every DRAM placement `shift` bytes up (a valid allocation stays valid)."""
    function = main_function(module)

    def moved(attr: PlacementAttr) -> PlacementAttr:
        if attr.get_region() != MemoryRegion.DRAM:
            return attr
        return PlacementAttr(MemoryRegion.DRAM, attr.get_offset() + shift, attr.get_size())

    assert function.arg_attrs is not None
    function.arg_attrs = ArrayAttr(
        [
            DictionaryAttr({k: moved(v) if isinstance(v, PlacementAttr) else v for k, v in a.data.items()})
            for a in function.arg_attrs.data
        ]  # type: ignore[union-attr]
    )
    for op in function.walk():
        if (attr := get_placement(op)) is not None:
            set_placement(op, moved(attr))
    function.attributes[ALLOCATED_DRAM_ATTR] = IntegerAttr(_int(function, ALLOCATED_DRAM_ATTR) + shift, i64)
    assert check_memory(function) == []


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_spilled_tensors_are_region_1_and_everything_else_region_2(model: str) -> None:
    # With the DRAM placements moved above every SRAM byte, the address of each access says
    # which memory it means: every one in region 1 must be DRAM, every one in region 2 SRAM.
    module = _allocated(model)
    function = main_function(module)
    shift = 1 << 20
    sram_peak = _int(function, ALLOCATED_PEAK_ATTR)
    assert sram_peak < shift
    _shift_dram(module, shift)
    rolling = [(b.offset, b.end) for b in live_buffers(function)[0] if b.kind == "rolling"]
    assert rolling
    dram = [(b.offset, b.end) for b in live_buffers(function, MemoryRegion.DRAM)[0]]
    LowerToEthosUPass(accelerator=ACCELERATOR).apply(Context(), module)
    streams = [op for op in function.walk() if isinstance(op, ethosu.CommandStreamOp)]
    assert streams
    seen: Counter[int] = Counter()
    for stream in streams:
        for command in stream.commands:
            if isinstance(command, ethosu.DmaOp):
                assert command.dest.region == SCRATCH_FAST  # weights copied into SRAM
            for region, start, end in _ranges(command):
                seen[region] += 1
                if region == SCRATCH:
                    assert any(lo <= start and end <= hi for lo, hi in dram), (command.name, start, end)
                elif region == SCRATCH_FAST:
                    assert end <= sram_peak, (command.name, start, end)
                else:
                    assert region in (0, ethosu.SHRAM_REGION)
    assert seen[SCRATCH]
    assert seen[SCRATCH_FAST]
    # The graph input is read from its DRAM placement; rolling buffers are SRAM, region 2.
    commands = [c for s in streams for c in s.commands if not isinstance(c, ethosu.DmaOp)]
    placement = arg_placement(function, 0)
    assert placement is not None
    assert placement.get_region() == MemoryRegion.DRAM
    assert (commands[0].ifm.region.data, commands[0].ifm.tiles.addresses[0]) == (SCRATCH, placement.get_offset())
    assert any(
        region == SCRATCH_FAST and any(lo <= start and end <= hi for lo, hi in rolling)
        for c in commands
        for region, start, end in _ranges(c)
    )
    # And it still computes the same.
    assert _equal(run_lowered(module, _inputs(model)), _reference(model, 0))


def test_unspilled_programs_address_only_region_1() -> None:
    # U55's Shared_Sram has no DRAM arena: nothing spills, everything is in the arena, SRAM.
    accelerator = "ethos-u55-128"
    module = _plan("resnet8_nosoftmax", accelerator)
    ctx = Context()
    RollingBufferPass().apply(ctx, module)
    AllocateMemoryPass(accelerator=accelerator).apply(ctx, module)
    assert ALLOCATED_DRAM_ATTR not in main_function(module).attributes
    LowerToEthosUPass(accelerator=accelerator).apply(ctx, module)
    regions = {
        r for op in module.walk() if isinstance(op, ethosu.CommandStreamOp) for c in op.commands for r, *_ in _ranges(c)
    }
    assert regions <= {0, SCRATCH, ethosu.SHRAM_REGION}
    assert SCRATCH in regions
    assert not [op for op in module.walk() if (p := get_placement(op)) and p.get_region() != MemoryRegion.SRAM]
    (custom,) = _custom_ops(lowered_tflite(module))
    assert custom.inputs[2] == custom.inputs[3]  # one scratch tensor, passed twice


def test_lowering_refuses_dram_placements_without_their_size() -> None:
    module = _allocated("resnet8_nosoftmax")
    del main_function(module).attributes[ALLOCATED_DRAM_ATTR]
    with pytest.raises(DiagnosticException, match=f"placed in DRAM but the function has no {ALLOCATED_DRAM_ATTR}"):
        LowerToEthosUPass(accelerator=ACCELERATOR).apply(Context(), module)
    # The lowering's own check, behind the allocation check.
    with pytest.raises(DiagnosticException, match=f"DRAM placements but no {ALLOCATED_DRAM_ATTR}"):
        LowerToEthosUPass(accelerator=ACCELERATOR, check_allocation=False).apply(Context(), module)


# --------------------------------------------------------------------------- #
# The deployable .tflite
# --------------------------------------------------------------------------- #


class _Op:
    def __init__(self, inputs: list[int], outputs: list[int]) -> None:
        self.inputs, self.outputs = inputs, outputs


def _custom_ops(data: bytes) -> list[_Op]:
    model = Model.GetRootAsModel(data, 0)
    graph = model.Subgraphs(0)
    ops = [graph.Operators(i) for i in range(graph.OperatorsLength())]
    return [
        _Op([int(i) for i in op.InputsAsNumpy()], [int(i) for i in op.OutputsAsNumpy()])
        for op in ops
        if model.OperatorCodes(op.OpcodeIndex()).CustomCode() == b"ethos-u"
    ]


def _offsets_and_sizes(data: bytes) -> tuple[list[int], list[int], list[int], list[int]]:
    """Offline offsets and byte sizes of every tensor, the model's inputs and outputs."""
    model = Model.GetRootAsModel(data, 0)
    graph = model.Subgraphs(0)
    meta = next(
        model.Metadata(i)
        for i in range(model.MetadataLength())
        if model.Metadata(i).Name() == b"OfflineMemoryAllocation"
    )
    offsets = [int(w) for w in np.frombuffer(model.Buffers(meta.Buffer()).DataAsNumpy().tobytes(), "<i4")[3:]]
    sizes = [int(np.prod(graph.Tensors(i).ShapeAsNumpy())) for i in range(graph.TensorsLength())]
    return offsets, sizes, [int(i) for i in graph.InputsAsNumpy()], [int(i) for i in graph.OutputsAsNumpy()]


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_the_tflite_has_a_dram_scratch_and_a_separate_fast_scratch(model: str) -> None:
    module = _lowered(model)
    function = main_function(module)
    data = lowered_tflite(module)
    offsets, sizes, inputs, outputs = _offsets_and_sizes(data)
    (custom,) = _custom_ops(data)
    scratch, fast = custom.inputs[2], custom.inputs[3]
    dram, peak = _int(function, ALLOCATED_DRAM_ATTR), _int(function, ALLOCATED_PEAK_ATTR)
    assert scratch != fast
    assert (offsets[scratch], sizes[scratch], sizes[fast]) == (0, dram, peak)
    assert offsets[fast] >= dram  # its own bytes of the arena, after the DRAM scratch
    # What TFLite sees lies at its DRAM placement, inside the scratch.
    placement = arg_placement(function, 0)
    assert placement is not None
    assert offsets[inputs[0]] == placement.get_offset()
    loads = [get_placement(op) for op in function.walk() if PLACEMENT_ATTR in op.attributes]
    assert loads
    assert all(p is not None and p.get_region() == MemoryRegion.DRAM for p in loads)
    for index in [*inputs, *outputs, *custom.inputs[4:], *custom.outputs]:
        assert 0 <= offsets[index]
        assert offsets[index] + sizes[index] <= dram


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_the_tflite_runs_bit_exact_with_and_without_a_fast_memory(model: str) -> None:
    # TFLite Micro binds region 2 to the scratch_fast tensor; the ethos-u driver may point it at
    # its own fast memory instead. The file is right either way.
    data = lowered_tflite(_lowered(model))
    inputs, want = _inputs(model, 2), _reference(model, 2)
    for fast_memory in (False, True):
        assert _equal(run_ethosu_tflite(data, inputs, fast_memory=fast_memory).outputs, want)


def test_velas_u65_file_runs_with_the_drivers_fast_memory(tmp_path: Path) -> None:
    # Vela places scratch_fast at arena offset 0, over the scratch, for the ethos-u driver to
    # point region 2 at its fast memory: the executor's `fast_memory` is that substitution.
    import contextlib
    import io

    from ethosu.vela.vela import main as vela

    from cascade.interpreter.litert import run_reference

    model = "resnet8_nosoftmax"
    with contextlib.redirect_stdout(io.StringIO()):
        status = vela(
            ["--accelerator-config", ACCELERATOR, "--output-dir", str(tmp_path), str(MODELS / f"{model}.tflite")]
        )
    assert status == 0
    data = (tmp_path / f"{model}_vela.tflite").read_bytes()
    (custom,) = _custom_ops(data)
    assert custom.inputs[2] != custom.inputs[3]
    inputs = _inputs(model, 3)
    want = run_reference((MODELS / f"{model}.tflite").read_bytes(), inputs).outputs
    assert np.unique(want[0]).size > 2
    assert _equal(run_ethosu_tflite(data, inputs, fast_memory=True).outputs, want)
    assert not _equal(run_ethosu_tflite(data, inputs, fast_memory=False).outputs, want)


def test_a_graph_input_in_sram_is_refused_when_the_function_spills() -> None:
    module = _lowered("resnet8_nosoftmax").clone()
    function = main_function(module)
    placement = arg_placement(function, 0)
    assert placement is not None
    attrs = dict(function.arg_attrs.data[0].data)  # type: ignore[union-attr]
    attrs[PLACEMENT_ATTR] = PlacementAttr(MemoryRegion.SRAM, placement.get_offset(), placement.get_size())
    function.arg_attrs = ArrayAttr([DictionaryAttr(attrs), *function.arg_attrs.data[1:]])  # type: ignore[union-attr]
    with pytest.raises(TFLiteOutputError, match=r"argument #0 is placed in sram, not DRAM \(the function spills"):
        lowered_tflite(module)


# --------------------------------------------------------------------------- #
# The report
# --------------------------------------------------------------------------- #


def test_the_report_prices_spilled_tensors_in_dram_as_the_planner_does() -> None:
    from cascade.ethos_u.arch import arch_config
    from cascade.ethos_u.cost_model import EthosUCostModel
    from cascade.ethos_u.estimate import choose_layouts
    from cascade.passes.planner.program import ProgramGraph
    from cascade.passes.planner.search import Pricer
    from cascade.passes.planner.stripes import CascadeGeometry

    model = "resnet8_nosoftmax"
    module = _allocated(model)
    function = main_function(module)
    report = compile_report(module, accelerator=ACCELERATOR)
    unspilled = compile_report(_plan(model), accelerator=ACCELERATOR)
    assert report["peak_dram_bytes"] == _int(function, ALLOCATED_DRAM_ATTR) > 0
    assert report["peak_sram_bytes"] == _int(function, ALLOCATED_PEAK_ATTR)
    # The plan alone spills what TFLite and the CPU see; two intermediates more take more DRAM
    # and more traffic there. On U55 (Shared_Sram) nothing spills.
    assert 0 < unspilled["peak_dram_bytes"] <= report["peak_dram_bytes"]
    assert 0 < unspilled["spilled_bytes_accessed"] < report["spilled_bytes_accessed"]
    u55 = compile_report(_plan(model, "ethos-u55-128"), accelerator="ethos-u55-128")
    assert u55["peak_dram_bytes"] == u55["spilled_bytes_accessed"] == 0
    assert "Peak DRAM used" in format_summary(report)
    assert "Peak DRAM used" not in format_summary(u55)
    # Each operator as the planner prices it, with its spilled operands and output in DRAM.
    view, _ = group_view(function)
    scheduled = scheduled_program(view)
    graph = ProgramGraph.build(scheduled.program)
    pricer = Pricer(
        graph, EthosUCostModel(arch_config(ACCELERATOR), layouts=choose_layouts(scheduled.program)), exact=True
    )
    per_op = {entry["name"]: entry["cycles"] for entry in report["per_op"]}
    before = {entry["name"]: entry["cycles"] for entry in unspilled["per_op"]}
    slower = 0
    for step in scheduled.steps:
        for op in range(step.first, step.sink + 1):
            info = graph.ops[op]
            names = {o.tensor.name for o in graph.operands[op] if o.producer < step.first}
            spilled = frozenset((names | ({info.output.name} if op == step.sink else set())) & scheduled.spilled)
            w = step.weights_in_sram
            if step.first < step.sink:
                geometry = CascadeGeometry.build(graph, step.first, step.sink, step.config, step.recompute)
                boxes = geometry.price_boxes(op)
                expected = pricer.once(op, w, spilled) + sum(
                    n * pricer.box(op, box, w, pipelined=True, spilled=spilled) for box, n in boxes
                )
            elif step.weight_slice_depth:
                channels, depth = info.output.shape[-1], step.weight_slice_depth
                expected = pricer.once(op, True, spilled) + sum(
                    pricer.channel_slice(op, min(depth, channels - c), pipelined=True, spilled=spilled)
                    for c in range(0, channels, depth)
                )
            else:
                expected = pricer.whole(op, w, spilled=spilled)
            assert per_op[info.name] == round(expected), info.name
            slower += bool(spilled) and per_op[info.name] > before[info.name]
    assert slower >= 1
