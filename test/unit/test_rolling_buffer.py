"""The rolling-buffer pass: explicit stripe loops whose rolling intermediates live in k-row
`cascade.rolling_buffer`s of the planner's depth, and nothing else changes (the planned view
of the result gives back the planner's steps, geometry and buffers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir.affine import AffineMap

from cascade.dialects import nn
from cascade.dialects.cascade import (
    BufferMode,
    ForStripesOp,
    GroupOp,
    RollingBufferOp,
    get_stripe,
    rolling_index_map,
)
from cascade.frontends.loader import load_module, make_context
from cascade.interpreter.nn import main_function
from cascade.passes.cascade_plan import (
    CascadePlanPass,
    planner_cost_model,
    scheduled_buffers,
    scheduled_geometry,
    scheduled_program,
)
from cascade.passes.rolling_buffer import RollingBufferPass, group_view

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "test" / "models"


def planned(path: Path, **options: object) -> ModuleOp:
    module = load_module(path)
    CascadePlanPass(accelerator="ethos-u55-128", **options).apply(make_context(), module)  # type: ignore[arg-type]
    return module


CASES = [
    (MODELS / "mbv1_025_96.tflite", {"sram_budget": 50000}),
    (MODELS / "mbv2_035_96.tflite", {"sram_budget": 60000}),
    (MODELS / "resnet8.tflite", {"sram_budget": 25000}),
    (ROOT / "test" / "passes" / "rolling_buffer" / "residual.mlir", {"objective": "min-sram"}),
]


@pytest.mark.parametrize(("path", "options"), CASES, ids=lambda c: c.name if isinstance(c, Path) else "")
def test_every_rolling_intermediate_gets_a_buffer_of_the_planner_depth(path, options):
    before = planned(path, **options)
    function = main_function(before)
    expected = {}
    for group in (o for o in function.body.block.ops if isinstance(o, GroupOp)):
        geometry = scheduled_geometry(function, group)
        members = [m for m in group.body.block.ops if isinstance(m, nn.NNOperation)]
        for index, member in enumerate(members):
            stripe = get_stripe(member)
            if stripe is not None and stripe.get_mode() == BufferMode.ROLLING:
                depth = geometry.tracks[geometry.config.outer_axis][geometry.first + index].depth
                expected[index + geometry.first] = (depth, geometry.config.outer_axis)
    after = before.clone()
    RollingBufferPass().apply(make_context(), after)
    after.verify()
    assert not any(isinstance(o, GroupOp) for o in after.walk())
    loops = [o for o in after.walk() if isinstance(o, ForStripesOp)]
    assert loops
    nn_ops = [o for o in main_function(after).walk() if isinstance(o, nn.NNOperation)]
    found = {}
    for index, op in enumerate(nn_ops):
        buffers = [u.operation for u in op.results[0].uses if isinstance(u.operation, RollingBufferOp)]
        if buffers:
            (buffer,) = buffers
            found[index] = (buffer.get_depth(), buffer.rolling_axis())
            assert buffer.get_index_map() == rolling_index_map(4, buffer.rolling_axis(), buffer.get_depth())
            # Every reader inside the loop reads the buffer, not the producer.
            assert [u.operation for u in op.results[0].uses] == [buffer]
    assert found == expected
    assert expected, "the case should have rolling intermediates"
    for loop in loops:
        # The stripe index is explicit, one block argument per striped axis, named after it.
        assert len(loop.stripe_index_args) == len(loop.get_stripe_order())
        assert {a.name_hint for a in loop.stripe_index_args} <= {"row", "col", "chan"}
        for _, stripe in loop.striped_ops():
            assert isinstance(stripe.offset.data, AffineMap)
            assert stripe.num_stripe_dims == len(loop.get_stripe_order())


@pytest.mark.parametrize(("path", "options"), CASES, ids=lambda c: c.name if isinstance(c, Path) else "")
def test_the_planned_view_gives_back_the_plan(path, options):
    """Steps, buffer list and geometry rebuilt from the scheduled IR equal the planner's."""
    before = planned(path, **options)
    after = before.clone()
    RollingBufferPass().apply(make_context(), after)
    view, origin = group_view(main_function(after))
    original = scheduled_program(main_function(before))
    again = scheduled_program(view)
    assert again.steps == original.steps
    assert again.program.ops == original.program.ops
    cost = planner_cost_model("ethos-u55-128", original.program)
    assert scheduled_buffers(view, cost) == scheduled_buffers(main_function(before), cost)
    # The origin map leads from the view's operators to the scheduled IR's.
    scheduled_ops = [o for o in main_function(after).walk() if isinstance(o, nn.NNOperation)]
    assert [origin[o] for o in again.nn_ops] == scheduled_ops
    # The view is a copy without rolling buffers or loops; the scheduled IR keeps them.
    assert not any(isinstance(o, RollingBufferOp | ForStripesOp) for o in view.walk())
    assert any(isinstance(o, RollingBufferOp) for o in after.walk())
    after.verify()


def test_pass_is_idempotent_and_leaves_unplanned_ir_alone():
    module = load_module(ROOT / "test" / "Inputs" / "example_nn.mlir")
    untouched = module.clone()
    RollingBufferPass().apply(make_context(), module)
    assert str(module) == str(untouched)
    plan = planned(ROOT / "test" / "passes" / "rolling_buffer" / "residual.mlir", objective="min-sram")
    RollingBufferPass().apply(make_context(), plan)
    once = str(plan)
    RollingBufferPass().apply(make_context(), plan)
    assert str(plan) == once


def test_recompute_intermediates_keep_their_stripe_buffer():
    """In the smallest plan of mbv1 (1x1 stripes recomputing their windows, then row stripes
    with rolling buffers) exactly the rolling intermediates get a rolling buffer; recompute
    ones keep their stripe map (the stripe-sized buffer) and are read directly."""
    module = planned(MODELS / "mbv1_025_96.tflite", objective="min-sram")
    RollingBufferPass().apply(make_context(), module)
    module.verify()
    modes = set()
    for loop in (o for o in module.walk() if isinstance(o, ForStripesOp)):
        for op, stripe in loop.striped_ops():
            if op.results[0] in loop.yield_op.values:
                continue
            mode = stripe.get_mode()
            modes.add(mode)
            buffered = any(isinstance(u.operation, RollingBufferOp) for u in op.results[0].uses)
            assert buffered == (mode == BufferMode.ROLLING)
    assert modes == {BufferMode.RECOMPUTE, BufferMode.ROLLING}
