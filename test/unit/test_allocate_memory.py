"""allocate-memory and the independent memory checker: every buffer placed, the allocated peak
is the planner's prediction, the checker's lifetimes (recomputed from IR) agree with the
planner's buffer list, and the checker catches broken allocations."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.utils.exceptions import DiagnosticException

from cascade.dialects.cascade import MemoryRegion, PlacementAttr, RollingBufferOp, get_placement, set_placement
from cascade.frontends.loader import load_module, make_context
from cascade.interpreter.nn import main_function
from cascade.passes.allocate_memory import AllocateMemoryPass
from cascade.passes.cascade_plan import PEAK_ATTR, CascadePlanPass, planner_cost_model, scheduled_buffers
from cascade.passes.memory_check import (
    ALLOCATED_PEAK_ATTR,
    MAX_LIVE_ATTR,
    WEIGHTS_PLACEMENT_ATTR,
    check_memory,
    live_buffers,
)
from cascade.passes.planner.placement import max_live
from cascade.passes.rolling_buffer import RollingBufferPass, group_view

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "test" / "models"
ACCELERATOR = "ethos-u55-128"


def scheduled(path: Path, rolling: bool = True, **options: object) -> ModuleOp:
    module = load_module(path)
    ctx = make_context()
    CascadePlanPass(accelerator=ACCELERATOR, **options).apply(ctx, module)  # type: ignore[arg-type]
    if rolling:
        RollingBufferPass().apply(ctx, module)
    AllocateMemoryPass(accelerator=ACCELERATOR).apply(ctx, module)
    module.verify()
    return module


def attr(module: ModuleOp, name: str) -> int:
    value = main_function(module).attributes[name]
    assert isinstance(value, IntegerAttr)
    return value.value.data


CASES = [
    (name, options)
    for name in ("ds_cnn_kws.tflite", "resnet8.tflite", "mbv1_025_96.tflite", "mbv2_035_96.tflite")
    for options in ({"objective": "min-sram"}, {}, {"sram_budget": 60000})
]


@pytest.mark.parametrize(("name", "options"), CASES)
def test_allocated_peak_is_the_planned_peak_and_the_checker_agrees(name, options):
    module = scheduled(MODELS / name, **options)
    function = main_function(module)
    assert attr(module, ALLOCATED_PEAK_ATTR) == attr(module, PEAK_ATTR)
    assert attr(module, MAX_LIVE_ATTR) <= attr(module, ALLOCATED_PEAK_ATTR)
    assert check_memory(function) == []
    # The checker recomputes lifetimes from the IR alone; they are the planner's, buffer for buffer.
    view, _ = group_view(function)
    from cascade.passes.cascade_plan import scheduled_program

    cost = planner_cost_model(ACCELERATOR, scheduled_program(view).program)
    planner = scheduled_buffers(view, cost)
    found, problems = live_buffers(function)
    assert problems == []
    assert Counter((b.size, b.first, b.last) for b in found) == Counter(
        (b.size, b.first_step, b.last_step) for b in planner
    )
    assert max_live(planner) == attr(module, MAX_LIVE_ATTR)
    for buffer in found:
        assert buffer.offset % 16 == 0
        assert buffer.size % 16 == 0
        assert buffer.size >= buffer.needed


def test_weights_in_sram_and_prefetch_are_placed():
    module = scheduled(MODELS / "mbv1_025_96.tflite", sram_budget=60000)
    weights = [op for op in module.walk() if WEIGHTS_PLACEMENT_ATTR in op.attributes]
    assert weights
    found, _ = live_buffers(main_function(module))
    assert any(b.kind == "weights" for b in found)
    assert check_memory(main_function(module)) == []


def test_allocation_works_on_planned_ir_without_rolling_buffers():
    module = scheduled(
        ROOT / "test" / "passes" / "rolling_buffer" / "residual.mlir", rolling=False, objective="min-sram"
    )
    # 5888: derived in test/passes/cascade_plan/residual.mlir.
    assert attr(module, ALLOCATED_PEAK_ATTR) == attr(module, PEAK_ATTR) == 5888
    assert check_memory(main_function(module)) == []


def test_a_peak_different_from_the_plan_is_an_error():
    module = load_module(ROOT / "test" / "passes" / "rolling_buffer" / "residual.mlir")
    CascadePlanPass(accelerator=ACCELERATOR, objective="min-sram").apply(make_context(), module)
    main_function(module).attributes[PEAK_ATTR] = IntegerAttr(5887, i64)
    with pytest.raises(DiagnosticException, match="allocated peak 5888 differs from the planned 5887"):
        AllocateMemoryPass(accelerator=ACCELERATOR).apply(make_context(), module)


def test_unplanned_program_is_allocated_one_operator_at_a_time():
    module = load_module(MODELS / "resnet8.tflite")
    AllocateMemoryPass(accelerator=ACCELERATOR).apply(make_context(), module)
    assert check_memory(main_function(module)) == []
    assert attr(module, MAX_LIVE_ATTR) <= attr(module, ALLOCATED_PEAK_ATTR)


# --------------------------------------------------------------------------- #
# The checker catches what it must
# --------------------------------------------------------------------------- #


@pytest.fixture
def residual() -> ModuleOp:
    return scheduled(ROOT / "test" / "passes" / "rolling_buffer" / "residual.mlir", objective="min-sram")


def _rolling(module: ModuleOp) -> list[RollingBufferOp]:
    return [o for o in module.walk() if isinstance(o, RollingBufferOp)]


def test_checker_catches_overlap(residual):
    first, second = _rolling(residual)[:2]
    assert first.placement is not None
    assert second.placement is not None
    second.placement = PlacementAttr(MemoryRegion.SRAM, first.placement.get_offset() + 16, second.placement.get_size())
    assert any("overlap while both are live" in p for p in check_memory(main_function(residual)))


def test_checker_allows_reuse_across_steps():
    """Buffers of different steps may share bytes: the smallest resnet8 plan reuses offsets."""
    module = scheduled(MODELS / "resnet8.tflite", objective="min-sram")
    found, _ = live_buffers(main_function(module))
    offsets = Counter(b.offset for b in found if b.size)
    assert max(offsets.values()) > 1
    assert check_memory(main_function(module)) == []


def test_checker_catches_a_buffer_too_small(residual):
    buffer = _rolling(residual)[0]  # %t1's 3 rows of 256 bytes
    assert buffer.placement is not None
    # Verification would refuse it; the checker must too, independently.
    buffer.properties["placement"] = PlacementAttr(MemoryRegion.SRAM, buffer.placement.get_offset(), 256)
    assert any("cannot hold" in p for p in check_memory(main_function(residual)))


def test_checker_catches_a_missing_placement_and_a_buffer_above_the_peak(residual):
    function = main_function(residual)
    loop = next(o for o in function.body.block.ops if get_placement(o) is not None)
    placement = get_placement(loop)
    assert placement is not None
    set_placement(loop, PlacementAttr(MemoryRegion.SRAM, 5888, placement.get_size()))
    assert any("above the allocated peak" in p for p in check_memory(function))
    set_placement(loop, None)
    assert any("has no placement" in p for p in check_memory(function))


def test_checker_sees_lifetimes_across_steps():
    """A tensor read two steps later stays live in between: moving the output of a step in
    between onto it is an overlap."""
    module = scheduled(MODELS / "resnet8.tflite", objective="min-cycles")
    function = main_function(module)
    found, _ = live_buffers(function)
    long = next(b for b in found if b.last - b.first >= 2 and b.size)
    middle = next(b for b in found if b.kind == "tensor" and long.first < b.first < long.last and b.size)
    owner = middle.value.owner  # type: ignore[union-attr]
    set_placement(owner, PlacementAttr(MemoryRegion.SRAM, long.offset, middle.size))  # type: ignore[arg-type]
    assert any("overlap" in p for p in check_memory(function))
