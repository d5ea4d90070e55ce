"""Activations TFLite writes as operators of their own, end to end: HARD_SWISH (MobileNetV3's)
and the unfused RELU, RELU6 and RELU_N1_TO_1, imported as `nn.hard_swish` and `nn.relu`, run by
the interpreter, cascaded and lowered to the NPU as table lookups, and left to the CPU as
TFLite's own operators where the NPU cannot take them; every result compared with LiteRT's."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from xdsl.context import Context

from cascade.dialects import nn
from cascade.dialects.cascade import GroupOp
from cascade.ethos_u.tflite_output import lowered_tflite
from cascade.frontends.tflite import import_tflite
from cascade.frontends.tflite_writer import ModelBuilder, options
from cascade.interpreter.nn import run_program
from cascade.passes.cascade_plan import CascadePlanPass
from cascade.passes.ethosu_pipeline import EthosUPipelinePass
from cascade.passes.lower_to_ethosu import ON_CPU_ATTR

ACCELERATOR = "ethos-u55-128"
SHAPE = [1, 16, 16, 8]


@functools.cache
def bneck_model() -> bytes:
    """x -> 3x3 conv (16 ch) -> HARD_SWISH -> 3x3 depthwise -> HARD_SWISH -> 1x1 conv (8 ch), as
    a MobileNetV3 block writes it (TFLite fuses no hard swish into a convolution), then a RELU6
    of its own."""
    rng = np.random.default_rng(3)
    mb = ModelBuilder()
    x = mb.add_tensor("x", SHAPE, "int8", scale=0.05, zero_point=-4)
    value, channels, scale = x, SHAPE[3], 0.05
    for index, (kind, out_c, taps) in enumerate([("conv", 16, 3), ("dw", 16, 3), ("conv", 8, 1)]):
        shape = [out_c, taps, taps, channels] if kind == "conv" else [1, taps, taps, channels]
        w = mb.add_tensor(
            f"w{index}", shape, "int8", scale=0.01, zero_point=0, data=rng.integers(-127, 128, size=shape)
        )
        b = mb.add_tensor(
            f"b{index}", [out_c], "int32", scale=scale * 0.01, zero_point=0, data=rng.integers(-900, 900, out_c)
        )
        conv_scale = 0.08
        conv = mb.add_tensor(f"conv{index}", [1, 16, 16, out_c], "int8", scale=conv_scale, zero_point=5)
        if kind == "conv":
            mb.add_operator(
                "CONV_2D",
                [value, w, b],
                [conv],
                options("Conv2DOptions", padding="SAME", stride_w=1, stride_h=1),
                version=3,
            )
        else:
            dw_options = options("DepthwiseConv2DOptions", padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1)
            mb.add_operator("DEPTHWISE_CONV_2D", [value, w, b], [conv], dw_options, version=3)
        value, channels, scale = conv, out_c, conv_scale
        if index < 2:
            value, scale = _hard_swish(mb, f"hswish{index}", value, [1, 16, 16, out_c], 0.06), 0.06
    clamped = mb.add_tensor("relu6", [1, 16, 16, 8], "int8", scale=0.03, zero_point=-128)
    mb.add_operator("RELU6", [value], [clamped])
    return mb.build([x], [clamped])


def _hard_swish(mb: ModelBuilder, name: str, value: int, shape: list[int], out_scale: float) -> int:
    out = mb.add_tensor(name, shape, "int8", scale=out_scale, zero_point=-20)
    mb.add_operator("HARD_SWISH", [value], [out])
    return out


def _inputs(seed: int, shape: list[int]) -> list[np.ndarray]:
    return [np.random.default_rng(seed).integers(-128, 128, size=shape, dtype=np.int8)]


def _assert_as_litert(model: bytes, ours: list[np.ndarray], seed: int, shape: list[int]) -> None:
    litert = pytest.importorskip("cascade.interpreter.litert")
    theirs = litert.invoke(model, _inputs(seed, shape)).outputs[0]
    assert len(np.unique(ours[0])) > 10
    np.testing.assert_array_equal(ours[0], theirs)


def test_the_importer_reads_hard_swish_and_the_program_computes_what_tflite_computes() -> None:
    pytest.importorskip("ai_edge_litert")
    module = import_tflite(bneck_model())
    assert [op.name for op in module.walk() if isinstance(op, nn.NNOperation)] == [
        "nn.conv2d",
        "nn.hard_swish",
        "nn.depthwise_conv2d",
        "nn.hard_swish",
        "nn.conv2d",
        "nn.relu",
    ]
    for seed in (0, 1):
        _assert_as_litert(bneck_model(), run_program(module, _inputs(seed, SHAPE)).outputs, seed, SHAPE)


def test_the_activations_cascade_on_the_npu_and_run_as_tflite_runs_them() -> None:
    litert = pytest.importorskip("cascade.interpreter.litert")
    pytest.importorskip("ai_edge_litert")
    # Unstriped, the depthwise holds its input and output (16 x 16 x 16 bytes each, 8192); at
    # 6500 bytes the whole block is one cascade, the table lookups in it.
    planned = import_tflite(bneck_model())
    CascadePlanPass(accelerator=ACCELERATOR, sram_budget=6500).apply(Context(), planned)
    (group,) = [op for op in planned.walk() if isinstance(op, GroupOp)]
    assert {type(op) for op in group.body.walk()} >= {nn.HardSwishOp, nn.ReluOp}
    module = import_tflite(bneck_model())
    EthosUPipelinePass(accelerator=ACCELERATOR, sram_budget=6500).apply(Context(), module)
    assert not [op for op in module.walk() if isinstance(op, nn.NNOperation)], "nothing is left to the CPU"
    deployable = lowered_tflite(module)
    for seed in (0, 1):
        ours = litert.run_ethosu_tflite(deployable, _inputs(seed, SHAPE)).outputs
        _assert_as_litert(bneck_model(), ours, seed, SHAPE)


@pytest.mark.parametrize("opcode", ["HARD_SWISH", "RELU", "RELU_N1_TO_1"])
def test_an_activation_the_npu_cannot_run_is_tflite_s_own_in_the_output(opcode: str) -> None:
    litert = pytest.importorskip("cascade.interpreter.litert")
    pytest.importorskip("ai_edge_litert")
    shape = [1, 24, 8]  # rank 3: the NPU lowering takes NHWC and [rows, columns] only
    mb = ModelBuilder()
    x = mb.add_tensor("x", shape, "int8", scale=0.04, zero_point=7)
    y = mb.add_tensor("y", shape, "int8", scale=0.03, zero_point=-20)
    mb.add_operator(opcode, [x], [y])
    model = mb.build([x], [y])
    module = import_tflite(model)
    EthosUPipelinePass(accelerator=ACCELERATOR).apply(Context(), module)
    (left,) = [op for op in module.walk() if isinstance(op, nn.NNOperation)]
    assert isinstance(left, nn.HardSwishOp if opcode == "HARD_SWISH" else nn.ReluOp)
    assert ON_CPU_ATTR in left.attributes
    deployable = lowered_tflite(module)
    for seed in (0, 1):
        _assert_as_litert(model, litert.run_ethosu_tflite(deployable, _inputs(seed, shape)).outputs, seed, shape)
