"""Elementwise outputs written in place over a dying input: the planner's accounting, the
allocator's shared placement, the independent checker's rule, and bit-exact execution (the
stripe executor and the lowered command streams) of plans that use it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Operation

from cascade.dialects import nn
from cascade.dialects.cascade import MemoryRegion, PlacementAttr, StripedRegionOp, get_placement, set_placement
from cascade.frontends.loader import load_module, make_context
from cascade.interpreter.nn import main_function, run_program
from cascade.interpreter.scheduled import compare_with_nn, run_scheduled
from cascade.passes.allocate_memory import AllocateMemoryPass
from cascade.passes.cascade_plan import CascadePlanPass
from cascade.passes.lower_to_ethosu import LowerToEthosUPass, run_lowered
from cascade.passes.memory_check import LiveBuffer, check_memory, live_buffers, top_level_units
from cascade.passes.planner.memory import Step, plan_buffers
from cascade.passes.planner.placement import Buffer, place, step_totals
from cascade.passes.planner.program import ProgramGraph
from cascade.passes.planner.stripes import UNSTRIPED, StripeConfig
from cascade.passes.planner.testing import AnalyticalCost, ToyProgram
from cascade.passes.rolling_buffer import RollingBufferPass

ROOT = Path(__file__).resolve().parents[2]
RESNET8 = ROOT / "test" / "models" / "resnet8.tflite"
ACCELERATOR = "ethos-u55-128"
VELA_SIZE_PEAK = 35840
"""Vela 5.2.0 `--optimise Size` peak SRAM of resnet8 on ethos-u55-128 (35.0 KiB), the budget
at which in-place adds matter: without them the add of the first residual block alone needs
its two 16 KiB inputs and a 16 KiB output."""


def _residual() -> ToyProgram:
    program = ToyProgram((1, 8, 6, 4))
    y = program.conv(program.x, 1, channels=8)
    t = program.conv(y, 1, channels=16)
    t = program.conv(t, 1, channels=8)
    program.add(y, t)
    return program


def test_a_lone_add_takes_over_the_storage_of_its_first_dying_input():
    # x 8*6*4 = 192 bytes; y 8*6*8 = 384; t1 768; t2 384; out 384. Run operator by operator,
    # the add (step 3) reads y and t2, both dying there: out shares y's bytes, so step 3 holds
    # y + t2 = 768 bytes, where a separate output would make it 1152.
    graph = ProgramGraph.build(_residual())
    steps = [Step(op, op, UNSTRIPED, frozenset(), False) for op in range(graph.size)]
    buffers = plan_buffers(graph, steps, AnalyticalCost())
    by_name = {b.name: b for b in buffers}
    out = next(b for b in buffers if b.alias_of is not None)
    assert by_name[out.alias_of].size == out.size == 384
    assert by_name[out.alias_of].last_step == out.first_step == 3
    assert step_totals(buffers)[3] == 384 + 384
    placement = place(buffers)
    assert placement.offsets[out.name] == placement.offsets[out.alias_of]


def test_an_alias_chain_is_one_storage_live_over_all_its_members():
    buffers = [
        Buffer("a", 32, 0, 1),
        Buffer("b", 32, 1, 2, alias_of="a"),
        Buffer("c", 32, 2, 4, alias_of="b"),
        Buffer("d", 64, 3, 3),
        Buffer("e", 16, 0, 0),
    ]
    placement = place(buffers)
    assert placement.offsets["a"] == placement.offsets["b"] == placement.offsets["c"]
    # Steps 0..4 hold a's storage (32); d (64) meets it at step 3, e (16) at step 0.
    assert step_totals(buffers) == {0: 48, 1: 32, 2: 32, 3: 96, 4: 32}
    assert placement.peak == 96
    with pytest.raises(ValueError, match="not in the list"):
        place([Buffer("b", 16, 1, 2, alias_of="a")])


def _allocated(budget: int, model: Path = RESNET8) -> tuple[ModuleOp, ModuleOp]:
    original = load_module(model)
    module = original.clone()
    ctx = make_context()
    CascadePlanPass(accelerator=ACCELERATOR, sram_budget=budget).apply(ctx, module)
    RollingBufferPass().apply(ctx, module)
    AllocateMemoryPass(accelerator=ACCELERATOR).apply(ctx, module)
    module.verify()
    return original, module


def _shared_pairs(module: ModuleOp) -> list[tuple[object, object]]:
    """(source, output) pairs of full-tensor buffers placed at the same offset."""
    buffers = [b for b in live_buffers(main_function(module))[0] if b.kind == "tensor"]
    return [(a, b) for a in buffers for b in buffers if a is not b and a.offset == b.offset and a.last == b.first]


@pytest.fixture(scope="module")
def resnet8_at_vela_size() -> tuple[ModuleOp, ModuleOp]:
    return _allocated(VELA_SIZE_PEAK)


def test_resnet8_at_vela_size_budget_writes_adds_in_place_and_runs_bit_exact(resnet8_at_vela_size):
    original, module = resnet8_at_vela_size
    pairs = _shared_pairs(module)
    assert pairs, "no output was written in place"
    for _, output in pairs:
        unit = output.value.owner
        writer = unit.yield_op.values[0].owner if isinstance(unit, StripedRegionOp) else unit
        assert isinstance(writer, nn.AddOp)
    assert check_memory(main_function(module)) == []
    for seed in range(3):
        inputs = [np.random.default_rng(seed).integers(-128, 128, size=(1, 32, 32, 3), dtype=np.int8)]
        reference = run_program(original, inputs)
        compared, mismatches = compare_with_nn(original, run_scheduled(module, inputs), reference)
        assert compared > 0
        assert not mismatches, mismatches
        # The dying input is poisoned only where the in-place output does not hold it.
        assert len(np.unique(reference.outputs[0])) > 1


def test_lowered_in_place_adds_run_bit_exact_on_the_functional_model(resnet8_at_vela_size):
    original, module = resnet8_at_vela_size
    lowered = module.clone()
    LowerToEthosUPass(accelerator=ACCELERATOR).apply(make_context(), lowered)
    inputs = [np.random.default_rng(7).integers(-128, 128, size=(1, 32, 32, 3), dtype=np.int8)]
    want = run_program(original, inputs).outputs
    got = run_lowered(lowered, inputs)
    assert len(np.unique(want[0])) > 1
    assert all(np.array_equal(w, g) for w, g in zip(want, got, strict=True))


def test_the_checker_accepts_only_an_exact_in_place_elementwise_write(resnet8_at_vela_size):
    _, module = resnet8_at_vela_size
    _, output = _shared_pairs(module)[0]
    shifted = module.clone()
    # The same pair, the output moved up by 16 bytes: a partial overlap is an error.
    index = list(live_buffers(main_function(module))[0]).index(output)
    moved = live_buffers(main_function(shifted))[0][index]
    unit = moved.value.owner
    set_placement(unit, PlacementAttr(MemoryRegion.SRAM, output.offset + 16, output.size))
    assert any("overlap" in p for p in check_memory(main_function(shifted)))

    # A convolution writing over its own dying full input is not elementwise: an error.
    conv_case = module.clone()
    function = main_function(conv_case)
    placed = {b.value: b for b in live_buffers(function)[0] if b.kind == "tensor"}
    for unit in top_level_units(function):
        if not isinstance(unit, nn.Conv2DOp) or unit.input not in placed:
            continue
        dying = placed[unit.input]
        if dying.last != placed[unit.results[0]].first or dying.size < placed[unit.results[0]].size:
            continue
        set_placement(unit, PlacementAttr(MemoryRegion.SRAM, dying.offset, get_placement(unit).get_size()))
        break
    else:
        pytest.fail("no convolution with a dying full input in resnet8's plan")
    assert any("overlap" in p for p in check_memory(function))


# --------------------------------------------------------------------------- #
# A cascade writing its output rows over input rows it has read
# --------------------------------------------------------------------------- #


def _depthwise_block(stride: int = 1) -> ToyProgram:
    program = ToyProgram((1, 8, 6, 4))
    y = program.conv(program.x, 1, channels=8)
    t = program.dw(y, 3, s=stride, pad=1)
    program.conv(t, 1, channels=8)
    return program


@pytest.mark.parametrize(("rows", "lead_rows"), [(1, 2), (2, 3), (4, 5)])
def test_a_cascade_writes_its_output_from_the_rows_it_no_longer_reads(rows, lead_rows):
    # y (1x8x6x8, rows of 6*8 = 48 bytes, 384 in all) alone, then [depthwise 3x3 pad 1, 1x1
    # conv] in stripes of `rows` rows writing the output (the same 48-byte rows) over y. Stripe
    # t writes output rows up to (t+1)*rows - 1 while the depthwise reads y from row t*rows - 1
    # on: the output starts (t+1)*rows - (t*rows - 1) = rows + 1 rows below y.
    graph = ProgramGraph.build(_depthwise_block())
    steps = [
        Step(0, 0, UNSTRIPED, frozenset(), False),
        Step(1, 2, StripeConfig((1,), (rows,)), frozenset(), False),
    ]
    buffers = plan_buffers(graph, steps, AnalyticalCost())
    out = next(b for b in buffers if b.alias_of is not None)
    assert (out.name, out.alias_of, out.lead) == ("tensor:t2", "tensor:t0", lead_rows * 48)
    # Step 1: y and the output cover 384 + lead bytes; the depthwise's rolling buffer holds
    # the `rows` rows the 1x1 conv reads (48 bytes each).
    assert step_totals(buffers)[1] == 384 + lead_rows * 48 + rows * 48
    placement = place(buffers)
    assert placement.offsets[out.name] == placement.offsets["tensor:t0"] - lead_rows * 48


def test_no_cascade_output_over_rows_of_another_size():
    # A stride-2 depthwise halves the rows and the columns: output rows of 3*8 = 24 bytes
    # cannot land row for row on y's 48-byte rows.
    graph = ProgramGraph.build(_depthwise_block(stride=2))
    steps = [Step(0, 0, UNSTRIPED, frozenset(), False), Step(1, 2, StripeConfig((1,), (1,)), frozenset(), False)]
    assert not any(b.alias_of for b in plan_buffers(graph, steps, AnalyticalCost()))


DS_CNN = ROOT / "test" / "models" / "ds_cnn_kws_nosoftmax.tflite"
DS_CNN_BUDGET = 14400
"""Below the 16000 bytes that two full 25x5x64 feature maps of ds_cnn_kws take, the least any
plan needed before cascades could write their output over the rows they had read."""


@pytest.fixture(scope="module")
def ds_cnn_over_consumed_rows() -> tuple[ModuleOp, ModuleOp]:
    return _allocated(DS_CNN_BUDGET, DS_CNN)


def _over_consumed_rows(module: ModuleOp) -> list[tuple[LiveBuffer, LiveBuffer]]:
    """(source, output) full-tensor pairs where the output starts below the source and the
    two share bytes at the step where the source dies."""
    buffers = [b for b in live_buffers(main_function(module))[0] if b.kind == "tensor"]
    return [
        (a, b) for a in buffers for b in buffers if a is not b and b.offset < a.offset < b.end and a.last == b.first
    ]


def test_ds_cnn_under_two_feature_maps_runs_bit_exact(ds_cnn_over_consumed_rows):
    original, module = ds_cnn_over_consumed_rows
    function = main_function(module)
    assert function.attributes["cascade.allocated_peak_bytes"].value.data <= DS_CNN_BUDGET  # type: ignore[union-attr]
    pairs = _over_consumed_rows(module)
    assert pairs, "no cascade wrote its output over rows it had read"
    assert all(isinstance(output.value.owner, StripedRegionOp) for _, output in pairs)  # type: ignore[union-attr]
    assert check_memory(function) == []
    for seed in range(2):
        inputs = [np.random.default_rng(seed).integers(-128, 128, size=(1, 49, 10, 1), dtype=np.int8)]
        reference = run_program(original, inputs)
        assert len(np.unique(reference.outputs[0])) > 1
        compared, mismatches = compare_with_nn(original, run_scheduled(module, inputs), reference)
        assert compared > 0
        assert not mismatches, mismatches
    lowered = module.clone()
    LowerToEthosUPass(accelerator=ACCELERATOR).apply(make_context(), lowered)
    inputs = [np.random.default_rng(5).integers(-128, 128, size=(1, 49, 10, 1), dtype=np.int8)]
    want = run_program(original, inputs).outputs
    got = run_lowered(lowered, inputs)
    assert all(np.array_equal(w, g) for w, g in zip(want, got, strict=True))


def test_the_checker_wants_the_output_a_whole_row_below_what_is_still_read(ds_cnn_over_consumed_rows):
    _, module = ds_cnn_over_consumed_rows
    source, output = _over_consumed_rows(module)[0]
    index = list(live_buffers(main_function(module))[0]).index(output)
    # One 5x64 row (320 bytes) higher, the output's last rows of a stripe would land on a row
    # the next stripe's depthwise still reads (or the one the NPU may still be reading).
    shifted = module.clone()
    moved = live_buffers(main_function(shifted))[0][index]
    set_placement(moved.value.owner, PlacementAttr(MemoryRegion.SRAM, output.offset + 320, output.size))  # type: ignore[union-attr, arg-type]
    assert any("overlap" in p for p in check_memory(main_function(shifted)))
    # And the source must die where the output starts: reading it later is an overlap.
    assert source.last == output.first  # type: ignore[attr-defined]


def _first_pair_of_a_copy(module: ModuleOp) -> tuple[ModuleOp, func.FuncOp, LiveBuffer, LiveBuffer, Operation]:
    """A copy of `module`, its function, its first (source, output) pair written over
    consumed rows, and the stripe loop writing that output."""
    changed = module.clone()
    source, output = _over_consumed_rows(changed)[0]
    loop = output.value.owner  # type: ignore[union-attr]
    assert isinstance(loop, Operation)
    return changed, main_function(changed), source, output, loop  # type: ignore[return-value]


def test_the_checker_reads_every_loop_argument_bound_to_the_source(ds_cnn_over_consumed_rows):
    # The output moved onto its source is refused; passing the source to the loop a second
    # time, unread, must not hide the readers of the first argument.
    changed, function, source, output, loop = _first_pair_of_a_copy(ds_cnn_over_consumed_rows[1])
    set_placement(loop, PlacementAttr(MemoryRegion.SRAM, source.offset, output.size))  # type: ignore[arg-type, union-attr]
    assert any("overlap" in p for p in check_memory(function))
    loop.operands = [*loop.operands, source.value]  # type: ignore[union-attr]
    loop.body.block.insert_arg(source.value.type, len(loop.body.block.args))  # type: ignore[union-attr]
    changed.verify()
    assert any("overlap" in p for p in check_memory(function))


def test_the_checker_keeps_a_returned_tensor_whole(ds_cnn_over_consumed_rows):
    # Cut after the first loop that writes over its source, and return the source too: the
    # source then lives to the end, and the loop may not write over it.
    changed, function, source, output, loop = _first_pair_of_a_copy(ds_cnn_over_consumed_rows[1])
    block = function.body.block
    old_return = block.last_op
    assert old_return is not None
    new_return = func.ReturnOp(output.value, source.value)  # type: ignore[arg-type]
    block.insert_op_before(new_return, old_return)
    old_return.detach()
    old_return.erase()
    later = []
    op = loop.next_op  # type: ignore[union-attr]
    while op is not new_return:
        later.append(op)
        op = op.next_op  # type: ignore[union-attr]
    for op in reversed(later):
        op.detach()
        op.erase(safe_erase=False)
    function.function_type = FunctionType.from_lists(
        function.function_type.inputs.data,
        [output.value.type, source.value.type],  # type: ignore[union-attr]
    )
    changed.verify()
    assert any("overlap" in p for p in check_memory(function))
