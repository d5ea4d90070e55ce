"""A 1-D network as TFLite writes one (each 1-D convolution a 2-D one between EXPAND_DIMS and
SQUEEZE): the importer folds the reshape pairs between convolutions, also across the residual
ADDs between them (as legalize-tosa does on the TOSA path), the pipeline's default striping
cuts the one-row outputs into stripes of columns rolling along the width, and the deployable
.tflite computes what TFLite computes on the original model."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from cascade.dialects import nn
from cascade.dialects.cascade import RollingBufferOp
from cascade.ethos_u.tflite_output import lowered_tflite
from cascade.frontends.tflite import TFLiteImportError, import_tflite
from cascade.frontends.tflite_writer import ModelBuilder, options
from cascade.interpreter.nn import main_function, run_program
from cascade.passes.cascade_plan import CascadePlanPass
from cascade.passes.ethosu_pipeline import EthosUPipelinePass
from cascade.passes.memory_check import ALLOCATED_PEAK_ATTR
from cascade.passes.rolling_buffer import RollingBufferPass

ACCELERATOR = "ethos-u55-128"
STEPS, CHANNELS = 64, 8


@functools.cache
def conv1d_model() -> bytes:
    """x [1, 64, 8] -> conv 3 taps (64 ch) -> depthwise 3 taps -> conv 1 tap (8 ch), each in
    EXPAND_DIMS (axis 1) / SQUEEZE (dim 1) as TFLite writes a Keras Conv1D."""
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, STEPS, CHANNELS], "int8", scale=0.05, zero_point=3)
    layers = [("conv", 64, 3), ("dw", 64, 3), ("conv", CHANNELS, 1)]
    value, channels, scale = x, CHANNELS, 0.05
    for index, (kind, out_c, taps) in enumerate(layers):
        out_scale = 0.1 + 0.05 * index
        value = _conv1d(mb, rng, f"l{index}", value, (kind, channels, out_c, taps), (scale, out_scale))
        channels, scale = out_c, out_scale
    return mb.build([x], [value])


@functools.cache
def residual_conv1d_model() -> bytes:
    """x [1, 64, 8] -> three residual blocks, each two 3-tap convolutions (8 ch) and an ADD of
    the block's input: TFLite adds the [1, 64, 8] squeezes of the convolutions' outputs."""
    rng = np.random.default_rng(8)
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, STEPS, CHANNELS], "int8", scale=0.05, zero_point=3)
    value, scale = x, 0.05
    for block in range(3):
        inner = _conv1d(mb, rng, f"b{block}a", value, ("conv", CHANNELS, CHANNELS, 3), (scale, 0.1))
        outer = _conv1d(mb, rng, f"b{block}b", inner, ("conv", CHANNELS, CHANNELS, 3), (0.1, 0.12))
        total = mb.add_tensor(f"b{block}/add", [1, STEPS, CHANNELS], "int8", scale=0.15, zero_point=3)
        mb.add_operator("ADD", [outer, value], [total], options("AddOptions"))
        value, scale = total, 0.15
    return mb.build([x], [value])


def _conv1d(
    mb: ModelBuilder,
    rng: np.random.Generator,
    name: str,
    value: int,
    layer: tuple[str, int, int, int],
    scales: tuple[float, float],
) -> int:
    """EXPAND_DIMS, a convolution or depthwise `layer` (kind, in and out channels, taps),
    SQUEEZE: the squeezed output."""
    kind, channels, out_c, taps = layer
    scale, out_scale = scales
    axis = mb.add_tensor(f"{name}/axis", [], "int32", data=np.array(1, dtype=np.int32))
    wide = mb.add_tensor(f"{name}/expanded", [1, 1, STEPS, channels], "int8", scale=scale, zero_point=3)
    mb.add_operator("EXPAND_DIMS", [value, axis], [wide], options("ExpandDimsOptions"))
    shape = [out_c, 1, taps, channels] if kind == "conv" else [1, 1, taps, channels]
    weights = rng.integers(-127, 128, size=shape).astype(np.int8)
    w = mb.add_tensor(f"{name}/w", shape, "int8", scale=0.02, zero_point=0, data=weights)
    bias = rng.integers(-500, 500, size=out_c).astype(np.int32)
    b = mb.add_tensor(f"{name}/b", [out_c], "int32", scale=scale * 0.02, zero_point=0, data=bias)
    conv = mb.add_tensor(f"{name}/conv", [1, 1, STEPS, out_c], "int8", scale=out_scale, zero_point=3)
    if kind == "conv":
        conv_options = options("Conv2DOptions", padding="SAME", stride_w=1, stride_h=1)
        mb.add_operator("CONV_2D", [wide, w, b], [conv], conv_options, version=3)
    else:
        dw_options = options("DepthwiseConv2DOptions", padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1)
        mb.add_operator("DEPTHWISE_CONV_2D", [wide, w, b], [conv], dw_options, version=3)
    squeezed = mb.add_tensor(f"{name}/out", [1, STEPS, out_c], "int8", scale=out_scale, zero_point=3)
    mb.add_operator("SQUEEZE", [conv], [squeezed], options("SqueezeOptions", squeeze_dims=[1]))
    return squeezed


def _inputs(seed: int) -> list[np.ndarray]:
    return [np.random.default_rng(seed).integers(-128, 128, size=(1, STEPS, CHANNELS), dtype=np.int8)]


def _assert_runs_as_tflite(litert: Any, model: bytes, lowered: ModuleOp) -> None:
    """The deployable .tflite of `lowered` computes on LiteRT what `model` computes."""
    deployable = lowered_tflite(lowered)
    _assert_same_as_tflite(litert, model, lambda inputs: litert.run_ethosu_tflite(deployable, inputs).outputs[0])


def _assert_interpreted_as_tflite(litert: Any, model: bytes, module: ModuleOp) -> None:
    """The nn interpreter computes on `module` what LiteRT computes on `model`."""
    _assert_same_as_tflite(litert, model, lambda inputs: run_program(module, inputs).outputs[0])


def _assert_same_as_tflite(litert: Any, model: bytes, run: Callable[[list[np.ndarray]], np.ndarray]) -> None:
    """`run` gives, for two random inputs, the not degenerate output LiteRT gives on `model`."""
    for seed in (0, 1):
        ours = run(_inputs(seed))
        assert len(np.unique(ours)) > 10
        np.testing.assert_array_equal(ours, litert.invoke(model, _inputs(seed)).outputs[0])


def test_the_importer_folds_the_reshapes_between_convolutions() -> None:
    module = import_tflite(conv1d_model())
    ops = [op for op in module.walk() if isinstance(op, nn.NNOperation)]
    # The first EXPAND_DIMS and the last SQUEEZE stay; the four between fold away.
    assert [op.name for op in ops] == ["nn.reshape", "nn.conv2d", "nn.depthwise_conv2d", "nn.conv2d", "nn.reshape"]
    assert ops[2].operands[0] is ops[1].results[0]
    assert ops[3].operands[0] is ops[2].results[0]


def test_the_folded_program_computes_what_tflite_computes() -> None:
    litert = pytest.importorskip("cascade.interpreter.litert")
    pytest.importorskip("ai_edge_litert")
    _assert_interpreted_as_tflite(litert, conv1d_model(), import_tflite(conv1d_model()))


def test_the_pipeline_cascades_along_the_columns_and_runs_as_tflite_runs_it() -> None:
    litert = pytest.importorskip("cascade.interpreter.litert")
    pytest.importorskip("ai_edge_litert")
    planned = import_tflite(conv1d_model())
    CascadePlanPass(accelerator=ACCELERATOR, striping="h", objective="min-sram").apply(Context(), planned)
    RollingBufferPass().apply(Context(), planned)
    assert {op.rolling_axis() for op in planned.walk() if isinstance(op, RollingBufferOp)} == {2}

    # Unstriped, the depthwise holds its input and output: 64 x 64 bytes each. In stripes of
    # columns the cascade holds x and the output (64 x 16 bytes each, channels bricked in 16s)
    # and a few columns of the intermediates.
    module = import_tflite(conv1d_model())
    EthosUPipelinePass(accelerator=ACCELERATOR, sram_budget=3000).apply(Context(), module)
    assert main_function(module).attributes[ALLOCATED_PEAK_ATTR].value.data <= 3000  # type: ignore[attr-defined]
    _assert_runs_as_tflite(litert, conv1d_model(), module)


def test_the_residual_adds_run_on_the_convolutions_outputs() -> None:
    module = import_tflite(residual_conv1d_model())
    ops = [op for op in module.walk() if isinstance(op, nn.NNOperation)]
    # Only the model's own input and output stay reshapes; each ADD adds [1, 1, 64, 8] tensors.
    assert [op.name for op in ops].count("nn.reshape") == 2
    assert ops[0].name == ops[-1].name == "nn.reshape"
    adds = [op for op in ops if isinstance(op, nn.AddOp)]
    assert len(adds) == 3
    assert all(op.output.type.get_shape() == (1, 1, STEPS, CHANNELS) for op in adds)
    # The first block adds its input through the reshape that feeds its first convolution.
    assert adds[0].input2 is ops[0].output


def test_the_residual_network_runs_on_the_npu_as_tflite_runs_it() -> None:
    litert = pytest.importorskip("cascade.interpreter.litert")
    pytest.importorskip("ai_edge_litert")
    module = import_tflite(residual_conv1d_model())
    EthosUPipelinePass(accelerator=ACCELERATOR).apply(Context(), module)
    # One command stream: what is left to the CPU is the reshapes of the model's input and output.
    left = [op.name for op in module.walk() if isinstance(op, nn.NNOperation)]
    assert left == ["nn.reshape", "nn.reshape"]
    _assert_runs_as_tflite(litert, residual_conv1d_model(), module)


def test_the_tosa_path_folds_the_same_reshapes() -> None:
    from cascade.frontends.tosa import import_tflite_via_tosa, tosa_tools_available

    if not tosa_tools_available():
        if os.environ.get("CASCADE_REQUIRE_INTEROP") == "1":
            pytest.fail("CASCADE_REQUIRE_INTEROP=1 but tosa-converter-for-tflite or tosa-opt is missing")
        pytest.skip("needs tosa-converter-for-tflite and tosa-opt")
    litert = pytest.importorskip("cascade.interpreter.litert")
    pytest.importorskip("ai_edge_litert")
    module = import_tflite_via_tosa(residual_conv1d_model())
    names = [op.name for op in module.walk() if isinstance(op, nn.NNOperation)]
    assert names == ["nn.reshape", *(["nn.conv2d", "nn.conv2d", "nn.add"] * 3), "nn.reshape"]
    _assert_interpreted_as_tflite(litert, residual_conv1d_model(), module)


def test_a_squeeze_of_a_dimension_that_is_not_one_is_refused() -> None:
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, 2, 4], "int8", scale=0.1, zero_point=0)
    y = mb.add_tensor("y", [1, 8], "int8", scale=0.1, zero_point=0)
    mb.add_operator("SQUEEZE", [x], [y], options("SqueezeOptions", squeeze_dims=[1]))
    with pytest.raises(TFLiteImportError, match=r"squeeze_dims \[1\] name a dimension of \[1, 2, 4\] that is not 1"):
        import_tflite(mb.build([x], [y]))


def test_an_expand_dims_declared_with_another_shape_is_refused() -> None:
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, 4, 2], "int8", scale=0.1, zero_point=0)
    axis = mb.add_tensor("axis", [], "int32", data=np.array(2, dtype=np.int32))
    y = mb.add_tensor("y", [1, 1, 4, 2], "int8", scale=0.1, zero_point=0)
    mb.add_operator("EXPAND_DIMS", [x, axis], [y], options("ExpandDimsOptions"))
    with pytest.raises(TFLiteImportError, match=r"axis 2 gives \[1, 4, 1, 2\], but the output tensor is declared"):
        import_tflite(mb.build([x], [y]))
