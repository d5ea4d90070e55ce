"""`interpreter.prefix` (a program cut after an operator, returning what is live past the cut) and
`lower_to_ethosu.compare_lowered` (a lowered run against the nn interpreter, on the outputs and on
the tensors the CPU reads from the NPU)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith, func

from cascade.dialects import ethosu, nn
from cascade.frontends.loader import load_module, tensor_name
from cascade.interpreter.nn import main_function, run_program
from cascade.interpreter.prefix import informative_prefix, prefix_program
from cascade.passes.allocate_memory import AllocateMemoryPass
from cascade.passes.cascade_plan import CascadePlanPass
from cascade.passes.lower_to_ethosu import LowerToEthosUPass, compare_lowered
from cascade.passes.rolling_buffer import RollingBufferPass
from cascade.tools.cascade_run import random_inputs

MODELS = Path(__file__).parents[1] / "models"
ACCELERATOR = "ethos-u55-128"


def _operators(module) -> list[nn.NNOperation]:
    return [op for op in main_function(module).body.block.ops if isinstance(op, nn.NNOperation)]


def _by_name(run) -> dict[str, np.ndarray]:
    return {tensor_name(value): array for value, array in run.values.items()}


def test_a_cut_inside_a_residual_block_returns_the_block_input_too() -> None:
    """resnet8's first residual add reads the block's input: cut between, both are returned, and
    every returned tensor is the original program's tensor of that name."""
    module = load_module(MODELS / "resnet8.tflite")
    operators = _operators(module)
    add = next(i for i, op in enumerate(operators) if isinstance(op, nn.AddOp))
    (shortcut,) = [v.owner for v in operators[add].operands if v.owner is not operators[add - 1]]
    assert shortcut in operators[: add - 1]  # the block's input, computed before the block
    inputs = random_inputs(module, 0)
    want = _by_name(run_program(module, inputs))
    cut = prefix_program(module, add)  # up to the operator before the add
    returned = list(main_function(cut).body.block.last_op.operands)  # type: ignore[union-attr]
    names = [tensor_name(value) for value in returned]
    assert len(returned) >= 2
    assert tensor_name(shortcut.results[0]) in names
    assert tensor_name(operators[add - 1].results[0]) == names[-1]
    for name, got in zip(names, run_program(cut, inputs).outputs, strict=True):
        assert np.array_equal(got, want[name]), name
    # Nothing past the cut is left, and no constant only the cut operators read.
    assert len(_operators(cut)) == add
    assert all(op.result.uses for op in main_function(cut).body.block.ops if isinstance(op, arith.ConstantOp))


def test_the_whole_program_is_its_own_longest_prefix() -> None:
    module = load_module(MODELS / "resnet8_nosoftmax.tflite")
    cut = prefix_program(module, len(_operators(module)))
    inputs = random_inputs(module, 1)
    got, want = run_program(cut, inputs).outputs, run_program(module, inputs).outputs
    assert len(got) == len(want) == 1
    assert np.array_equal(got[0], want[0])


def test_a_cut_outside_the_program_is_refused() -> None:
    module = load_module(MODELS / "resnet8.tflite")
    with pytest.raises(ValueError, match="cannot keep 0"):
        prefix_program(module, 0)


@pytest.mark.parametrize("model", ["mbv1_025_96", "mbv2_035_96"])
def test_the_informative_prefix_is_the_longest_cut_whose_tensors_all_vary(model: str) -> None:
    module = load_module(MODELS / f"{model}.tflite")
    inputs = random_inputs(module, 0)
    cut = informative_prefix(module, inputs)
    kept = len(_operators(cut))
    assert all(np.unique(output).size >= 4 for output in run_program(cut, inputs).outputs)
    # One more operator brings back a tensor of fewer values (these models saturate).
    longer = prefix_program(module, kept + 1)
    assert any(np.unique(output).size < 4 for output in run_program(longer, inputs).outputs)


def _lowered(module, budget: int):
    module = module.clone()
    for stage in (
        CascadePlanPass(accelerator=ACCELERATOR, sram_budget=budget),
        RollingBufferPass(),
        AllocateMemoryPass(accelerator=ACCELERATOR),
        LowerToEthosUPass(accelerator=ACCELERATOR),
    ):
        stage.apply(Context(), module)
    return module


def test_a_wrong_tensor_read_from_the_npu_is_caught_where_the_output_is_not() -> None:
    """ds_cnn_kws's softmax answers -107 for every class on any input, so a lowered stream that
    leaves its pooled features unwritten still gives the right output; the features the CPU
    reads from the NPU are compared too, and differ."""
    original = load_module(MODELS / "ds_cnn_kws.tflite")
    module = _lowered(original, 100000)
    inputs = random_inputs(original, 0)
    good = compare_lowered(original, module, inputs)
    assert not good.mismatches
    assert [informative for _, _, informative in good.outputs] == [False]
    assert [informative for _, _, informative in good.read] == [True]
    (stream,) = [op for op in module.walk() if isinstance(op, ethosu.CommandStreamOp)]
    kernels = [c for c in stream.commands if not isinstance(c, ethosu.DmaOp)]
    kernels[-1].detach()  # the average pool writing the features
    bad = compare_lowered(original, module, inputs)
    assert [equal for _, equal, _ in bad.outputs] == [True]
    assert bad.mismatches == [label for label, _, _ in bad.read]
    assert bad.mismatches


def test_loads_carry_the_name_of_the_tensor_they_read() -> None:
    original = load_module(MODELS / "ds_cnn_kws.tflite")
    module = _lowered(original, 100000)
    function = main_function(module)
    loads = [op for op in function.body.block.ops if op.name == "builtin.unrealized_conversion_cast"]
    (fc,) = [op for op in _operators(original) if isinstance(op, nn.FullyConnectedOp)]
    assert [tensor_name(load.results[0]) for load in loads] == [tensor_name(fc.operands[0])]
    assert isinstance(function.body.block.last_op, func.ReturnOp)
