"""The nn interpreter against TFLite's reference kernels on every test model.

Two views, both bit-exact:
- whole models on three seeds of random int8 inputs, every activation compared (the input and
  the output of every operator, matched by TFLite tensor name);
- every operator of every model alone, imported from a single-operator model and fed fresh
  full-range inputs. The random-weight models saturate many deep activations whatever the
  input (mbv2_035_96 has 10 single-valued tensors, mbv1_025_96 15), so this is where each
  operator is shown to agree on tensors that are not degenerate.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ethosu.vela.tflite.Model import Model
from xdsl.ir import OpResult

from cascade.dialects import nn
from cascade.frontends.tflite import import_tflite
from cascade.frontends.tflite_writer import extract_operator
from cascade.interpreter.litert import run_reference
from cascade.interpreter.nn import run_program
from cascade.tools.cascade_run import comparisons, random_inputs

MODELS = sorted((Path(__file__).parent.parent / "models").glob("*.tflite"))
LARGE_MODELS = sorted((Path(__file__).parent.parent.parent / "benchmarks" / "models").glob("*.tflite"))
SEEDS = (0, 1, 2)
MIN_DISTINCT = 4


def operator_count(path: Path) -> int:
    return Model.GetRootAs(path.read_bytes(), 0).Subgraphs(0).OperatorsLength()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("path", MODELS + LARGE_MODELS, ids=lambda p: p.stem)
def test_every_intermediate_is_bit_exact(path: Path, seed: int):
    data = path.read_bytes()
    module = import_tflite(data)
    inputs = random_inputs(module, seed)
    ours = run_program(module, inputs)
    pairs = comparisons(module, ours, run_reference(data, inputs))
    # The model input plus every operator's output, matched by TFLite tensor name.
    assert len(pairs) == operator_count(path) + len(inputs)
    for pair in pairs:
        assert pair.mismatch() is None, f"{pair.label}: {pair.mismatch()}"
    # The input and the first operators' outputs always vary; saturation sets in deeper.
    for pair in pairs[:3]:
        assert len(np.unique(pair.ours)) >= MIN_DISTINCT, f"{pair.label} is degenerate"


def varied_input(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Noise around a different level per channel, so reductions (MEAN) vary across channels too."""
    levels = rng.integers(-128, 128, size=shape[-1])
    noise = rng.normal(0, 40, size=shape)
    return np.clip(levels + noise, -128, 127).astype(np.int8)


def constant_by_construction(op: nn.NNOperation) -> bool:
    """A softmax whose logits cannot differ by a visible amount: 255 * scale * beta < 1/256.

    ds_cnn_kws feeds its softmax with scale 4.6e-8 and the MobileNets with 7.8e-9: every class
    gets the same probability for any input (ds_cnn_kws: 1/12, i.e. -107).
    """
    if not isinstance(op, nn.SoftmaxOp):
        return False
    return 255 * op.input_quant.scales[0] * op.beta.value.data < 1 / 256


@pytest.mark.parametrize("path", MODELS + LARGE_MODELS, ids=lambda p: p.stem)
def test_every_operator_alone_on_informative_inputs(path: Path):
    data = path.read_bytes()
    rng = np.random.default_rng(7)
    for index in range(operator_count(path)):
        single, _, _ = extract_operator(data, index)
        module = import_tflite(single)
        (op,) = [o for o in module.walk() if isinstance(o, nn.NNOperation)]
        inputs = [varied_input(rng, value.shape) for value in random_inputs(module, 0)]
        ours = run_program(module, inputs).outputs[0]
        theirs = run_reference(single, inputs).outputs[0]
        assert np.array_equal(ours, theirs), f"operator #{index} {op.name}"
        if constant_by_construction(op):
            assert len(np.unique(ours)) == 1
            continue
        assert len(np.unique(ours)) >= min(MIN_DISTINCT, ours.size), f"operator #{index} {op.name} is degenerate"


def test_the_large_models_are_there():
    assert {p.stem for p in LARGE_MODELS} == {"mbv1_100_224", "mbv2_100_224"}


def test_a_wrong_interpreter_is_caught():
    """The comparison fails when one operator's result is off by one somewhere."""
    path = next(p for p in MODELS if p.stem == "resnet8")
    data = path.read_bytes()
    module = import_tflite(data)
    inputs = random_inputs(module, 0)
    ours = run_program(module, inputs)
    victim = next(v for v in ours.values if isinstance(v, OpResult) and v.owner.name == "nn.add")
    broken = ours.values[victim].copy()
    broken.flat[7] = np.int8(broken.flat[7] ^ 1)
    ours.values[victim] = broken
    pairs = comparisons(module, ours, run_reference(data, inputs))
    assert sum(pair.mismatch() is not None for pair in pairs) == 1


def test_a_name_two_tensors_share_is_not_compared():
    """Two tensors named 'same' (TFLite allows it): LiteRT's tensor of that name is either, so
    neither is compared by name (it reported a false mismatch); the output still is, by position."""
    from cascade.frontends.tflite_writer import ModelBuilder, options

    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, 4, 4, 2], "int8", scale=0.05, zero_point=1)
    first = mb.add_tensor("same", [1, 4, 4, 2], "int8", scale=0.07, zero_point=-3)
    mb.add_operator("ADD", [x, x], [first], options("AddOptions"), version=2)
    second = mb.add_tensor("same", [1, 4, 4, 2], "int8", scale=0.09, zero_point=2)
    mb.add_operator("MUL", [first, x], [second], options("MulOptions"), version=2)
    data = mb.build([x], [second])
    module = import_tflite(data)
    inputs = random_inputs(module, 0)
    pairs = comparisons(module, run_program(module, inputs), run_reference(data, inputs))
    assert [pair.label for pair in pairs] == ["'x'", "output 0"]
    assert all(pair.mismatch() is None for pair in pairs)
    assert np.unique(pairs[-1].ours).size > 3
