"""The cascade-plan pass on IR: programs compute the same, buffers rebuilt from IR place to the
predicted peak, stripe maps describe the regions, errors are one clear line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from cascade.dialects import nn
from cascade.dialects.cascade import GroupOp, get_stripe
from cascade.frontends.loader import load_module, make_context
from cascade.interpreter.cascade import CascadeFunctions
from cascade.interpreter.nn import NNFunctions, input_types, main_function
from cascade.interpreter.scheduled import twin_operators
from cascade.passes.cascade_plan import (
    PEAK_ATTR,
    CascadePlanPass,
    fit_floor_affine,
    planner_cost_model,
    scheduled_buffers,
    scheduled_geometry,
    scheduled_program,
)
from cascade.passes.planner.from_nn import program_from_module
from cascade.passes.planner.placement import place
from cascade.passes.planner.program import CHANNELS, ProgramGraph

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "test" / "models"
LIT = ROOT / "test" / "passes" / "cascade_plan"
INPUTS = ROOT / "test" / "Inputs"


def run(module: ModuleOp, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], dict[object, np.ndarray]]:
    """Outputs of @main and the result of every nn operator."""
    values: dict[object, np.ndarray] = {}

    class Recorder(Interpreter.Listener):
        def did_interpret_op(self, op: Operation, results) -> None:
            if isinstance(op, nn.NNOperation):
                values[op.results[0]] = np.asarray(results[0])

    interpreter = Interpreter(module, listeners=(Recorder(),))
    for functions in (FuncFunctions(), NNFunctions(), CascadeFunctions()):
        interpreter.register_implementations(functions)
    outputs = interpreter.call_op(main_function(module), tuple(inputs))
    return [np.asarray(o) for o in outputs], values


def plan(module: ModuleOp, **options) -> ModuleOp:
    planned = module.clone()
    CascadePlanPass(accelerator="ethos-u55-128", **options).apply(make_context(), planned)
    planned.verify()
    return planned


def random_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=t.get_shape(), dtype=np.int8) for t in input_types(module)]


CASES = [
    ("resnet8_nosoftmax.tflite", None),
    ("resnet8_nosoftmax.tflite", "min-sram"),
    ("mbv1_025_96.tflite", "min-sram"),
]


@pytest.mark.parametrize(("model", "objective"), CASES)
def test_planned_program_computes_the_same(model, objective):
    module = load_module(MODELS / model)
    planned = plan(module, objective=objective)
    assert any(isinstance(op, GroupOp) for op in planned.walk()), "the plan should contain a cascade"
    inputs = random_inputs(module)
    before, before_values = run(module, inputs)
    after, after_values = run(planned, inputs)
    for a, b in zip(before, after, strict=True):
        assert np.array_equal(a, b)
    # Operators are matched by what they compute: the plan may have reordered them.
    twins = twin_operators(main_function(planned), main_function(module))
    assert len(twins) == len(before_values) == len(after_values)
    for op, twin in twins:
        assert np.array_equal(after_values[op.results[0]], before_values[twin.results[0]])
    # Non-degenerate: most intermediates take many values.
    assert sum(len(np.unique(v)) > 8 for v in before_values.values()) >= len(before_values) // 2


@pytest.mark.parametrize(("model", "objective"), CASES)
def test_buffers_rebuilt_from_ir_place_to_the_predicted_peak(model, objective):
    planned = plan(load_module(MODELS / model), objective=objective)
    function = main_function(planned)
    predicted = function.attributes[PEAK_ATTR]
    assert isinstance(predicted, IntegerAttr)
    scheduled = scheduled_program(function)
    cost = planner_cost_model("ethos-u55-128", scheduled.program)
    buffers = scheduled_buffers(function, cost)
    placement = place(buffers)
    assert placement.peak == predicted.value.data
    for index, unit in enumerate(op for op in function.body.block.ops if isinstance(op, GroupOp | nn.NNOperation)):
        if isinstance(unit, GroupOp):
            live = [b for b in buffers if b.first_step <= index <= b.last_step]
            assert unit.get_peak_sram_bytes() == max(placement.offsets[b.name] + b.size for b in live)


def _source(model: str) -> ModuleOp:
    """A test model, or a program of test/Inputs (a `.mlir` name)."""
    return load_module(INPUTS / model if model.endswith(".mlir") else MODELS / model)


@pytest.mark.parametrize(
    ("model", "objective"),
    [("resnet8_nosoftmax.tflite", "min-sram"), ("mbv1_025_96.tflite", None), ("head_40.mlir", "min-sram")],
)
def test_stripe_maps_describe_the_stripes_away_from_the_edges(model, objective):
    """Rows and columns: every stripe no edge of the tensor clips. Channels, which no padding
    clips: every stripe, the short last one included."""
    planned = plan(_source(model), objective=objective)
    function = main_function(planned)
    groups = [op for op in function.body.block.ops if isinstance(op, GroupOp)]
    assert groups
    if model == "head_40.mlir":
        assert [(g.get_stripe_order(), g.get_stripe_shape()) for g in groups] == [((1,), (1, 16))]
    checked = 0
    for group in groups:
        geometry = scheduled_geometry(function, group)
        clipped_axes = [axis for axis in geometry.config.order if axis != CHANNELS]
        members = [op for op in group.body.block.ops if isinstance(op, nn.NNOperation)]
        for offset, member in enumerate(members):
            op = geometry.first + offset
            stripe = get_stripe(member)
            assert stripe is not None
            assert stripe.get_shape() == geometry.buffer_shape(op) or op == geometry.sink
            shape = geometry.graph.output_shape(op)
            for index in group.stripe_indices():
                held = geometry.held_box(op, index)
                if held is None or any(
                    held.offset[a] == 0 or held.offset[a] + held.shape[a] == shape[a] for a in clipped_axes
                ):
                    continue  # clipped by an edge of the tensor
                start, size = stripe.region_of(index, shape)
                assert start == held.offset, (member.name, index)
                assert all(s >= h for s, h in zip(size, held.shape, strict=True)), (member.name, index)
                if geometry.is_rolling(op) or op == geometry.sink:
                    assert size == held.shape, (member.name, index)
                checked += 1
    assert checked > 0


def test_a_scalar_operand_neither_stops_planning_nor_channel_stripes():
    """A rank-0 operand (an add of a scalar argument) reads the same value for every channel."""
    module = load_module(INPUTS / "scalar_add.mlir")
    for striping in ("none", "h", "hwc"):
        planned = plan(module, striping=striping)
        assert sum(isinstance(op, nn.AddOp) for op in planned.walk()) == 1
    (info,) = program_from_module(module).ops
    assert ProgramGraph.build(program_from_module(module)).channel_stripable == (True,)
    assert len(info.inputs) == 2


def test_lit_example_computes_the_same():
    module = load_module(LIT / "residual.mlir")
    planned = plan(module, objective="min-sram")
    inputs = random_inputs(module, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(run(module, inputs)[0], run(planned, inputs)[0], strict=True))


def test_fit_floor_affine():
    assert fit_floor_affine([0, 2, 4, 6]) == (2, 0, 1)
    assert fit_floor_affine([0, 1, 3, 4, 6]) == (3, 0, 2)  # floor(3t / 2), an upscale by 2
    assert fit_floor_affine([0, 0, 1, 2, 2]) == (1, -1, 1)  # first and last stripe clipped


def test_errors_are_diagnostics():
    module = load_module(LIT / "residual.mlir")
    with pytest.raises(DiagnosticException, match="objective must be one of min-sram, min-cycles"):
        plan(module, objective="fastest")
    with pytest.raises(DiagnosticException, match="unknown accelerator 'ethos-u99'"):
        CascadePlanPass(accelerator="ethos-u99").apply(make_context(), module.clone())
    planned = plan(module, objective="min-sram")
    with pytest.raises(DiagnosticException, match="already planned"):
        CascadePlanPass(accelerator="ethos-u55-128").apply(make_context(), planned)


def test_function_without_nn_operators_is_left_alone():
    module = load_module(ROOT / "test" / "tools" / "pass_flags.mlir")
    planned = plan(module)
    function = next(op for op in planned.walk() if isinstance(op, FuncOp))
    assert PEAK_ATTR not in function.attributes


def _cheapest_compute(edges, size: int, bound: float) -> float:
    """The fewest compute cycles of a path over `edges` whose every step fits `bound` bytes: each
    step priced as its stripes alone, weight copies free (a lower bound of any plan's cycles)."""
    fewest: list[float] = [0] + [float("inf")] * size
    for end in range(1, size + 1):
        for edge in (e for e in edges if e.sink + 1 == end):
            steps = [fewest[edge.first] + p.compute for p in edge.points if p.memory <= bound]
            fewest[end] = min([fewest[end], *steps])
    return fewest[size]


def test_ds_cnn_kws_cannot_meet_the_cycle_goal_in_vela_sizes_16000_bytes():
    """README's Results: on U55-128 under Vela Size's 16,000 bytes, no plan over the candidate
    cascades comes within 1.05 x Vela default's cycles, even with every weight copy free
    (stripes priced exactly, weights read from flash where a point streams them); with room,
    the same candidates compute faster than Vela default's plan. The README gives the figure."""
    import json

    from cascade.passes.planner.plan import CachedCost, cascadable_graph
    from cascade.passes.planner.search import Candidates, SearchOptions

    baseline = json.loads((ROOT / "benchmarks" / "models" / "vela_baseline_u55_128.json").read_text())
    runs = {e["config"]: e for e in baseline if (e["model"], e["acc"]) == ("ds_cnn_kws", "ethos-u55-128")}
    vela, vela_size = runs["perf"], runs["size"]
    budget = round(vela_size["sram_kib"] * 1024)
    program = scheduled_program(main_function(load_module(MODELS / "ds_cnn_kws.tflite"))).program
    model = planner_cost_model("ethos-u55-128", program)
    graph = cascadable_graph(program, model)
    edges = Candidates(graph, CachedCost(model), SearchOptions("hw", 24, 23, True, "hw"), frozenset()).edges()
    within_budget = _cheapest_compute(edges, graph.size, budget)
    assert budget == 16_000
    assert within_budget > 1.05 * vela["cycles_total"]
    assert f"takes {within_budget:,} cycles even with every weight copy free" in " ".join(
        (ROOT / "README.md").read_text().split()
    )
    assert _cheapest_compute(edges, graph.size, float("inf")) < vela["cycles_total"]
