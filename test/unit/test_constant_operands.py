"""Elementwise operators with a constant operand run on the NPU: a hard swish written out as
TFLite's converter writes Keras' `x * relu6(x + 3) / 6` (ADD and MUL of rank-0 constants), and
a per-channel offset (ADD of a [1, 1, 1, C] constant), stay in one command stream, cascaded
with the convolution before them, and the deployable .tflite computes what TFLite computes."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from cascade.dialects import ethosu, nn
from cascade.ethos_u.tflite_output import lowered_tflite
from cascade.frontends.tflite import TFLiteImportError, import_tflite
from cascade.frontends.tflite_writer import ModelBuilder, options
from cascade.passes.ethosu_pipeline import EthosUPipelinePass

SHAPE = [1, 16, 16, 8]


@functools.cache
def hard_swish_model() -> bytes:
    """x -> 1x1 conv (16 ch) = h -> ADD(h, 3) with RELU6 -> MUL(h, that) -> MUL(that, 1/6)
    -> ADD of a per-channel constant."""
    rng = np.random.default_rng(3)
    mb = ModelBuilder()
    x = mb.add_tensor("x", SHAPE, "int8", scale=0.05, zero_point=-2)
    weights = rng.integers(-127, 128, size=(16, 1, 1, 8)).astype(np.int8)
    w = mb.add_tensor("w", [16, 1, 1, 8], "int8", scale=0.01, zero_point=0, data=weights)
    b = mb.add_tensor("b", [16], "int32", scale=0.0005, zero_point=0, data=rng.integers(-900, 900, 16))
    h = mb.add_tensor("h", [1, 16, 16, 16], "int8", scale=0.04, zero_point=1)
    conv_options = options("Conv2DOptions", padding="SAME", stride_w=1, stride_h=1)
    mb.add_operator("CONV_2D", [x, w, b], [h], conv_options, version=3)
    three = mb.add_tensor("three", [], "int8", scale=0.025, zero_point=-128, data=np.array(-8))
    gate = mb.add_tensor("gate", [1, 16, 16, 16], "int8", scale=6 / 255, zero_point=-128)
    mb.add_operator("ADD", [h, three], [gate], options("AddOptions", fused_activation_function="RELU6"))
    product = mb.add_tensor("product", [1, 16, 16, 16], "int8", scale=0.12, zero_point=0)
    mb.add_operator("MUL", [h, gate], [product], options("MulOptions"))
    sixth = mb.add_tensor("sixth", [1], "int8", scale=1 / 600, zero_point=0, data=np.array([100]))
    swish = mb.add_tensor("swish", [1, 16, 16, 16], "int8", scale=0.02, zero_point=-5)
    mb.add_operator("MUL", [product, sixth], [swish], options("MulOptions"))
    offsets = rng.integers(-100, 100, size=(1, 1, 1, 16))
    offset = mb.add_tensor("offset", [1, 1, 1, 16], "int8", scale=0.01, zero_point=4, data=offsets)
    y = mb.add_tensor("y", [1, 16, 16, 16], "int8", scale=0.025, zero_point=0)
    mb.add_operator("ADD", [offset, swish], [y], options("AddOptions"))
    return mb.build([x], [y])


def _inputs(seed: int) -> list[np.ndarray]:
    return [np.random.default_rng(seed).integers(-128, 128, size=SHAPE, dtype=np.int8)]


def _pipeline(accelerator: str, budget: int | None = None) -> ModuleOp:
    module = import_tflite(hard_swish_model())
    EthosUPipelinePass(accelerator=accelerator, sram_budget=budget).apply(Context(), module)
    return module


def test_the_constants_are_operands_of_the_imported_program() -> None:
    module = import_tflite(hard_swish_model())
    ops = [op for op in module.walk() if isinstance(op, nn.BinaryOperation)]
    assert [op.name for op in ops] == ["nn.add", "nn.mul", "nn.mul", "nn.add"]
    assert [tuple(v.type.get_shape()) for op in ops for v in op.operands if v.name_hint in ("three", "sixth")] == [
        (),
        (1,),
    ]


@pytest.mark.parametrize("accelerator", ["ethos-u55-128", "ethos-u65-256"])
def test_the_block_runs_in_one_stream_and_as_tflite_runs_it(accelerator: str) -> None:
    litert = pytest.importorskip("cascade.interpreter.litert")
    pytest.importorskip("ai_edge_litert")
    # 8 KiB is less than the conv's input and output whole (2 KiB + 4 KiB) and any unstriped
    # elementwise operator's two 4 KiB operands and output: the block must be cascaded.
    module = _pipeline(accelerator, budget=8192)
    assert not [op for op in module.walk() if isinstance(op, nn.NNOperation)]
    (stream,) = [op for op in module.walk() if isinstance(op, ethosu.CommandStreamOp)]
    commands = [op for op in stream.walk() if isinstance(op, ethosu.ElementwiseOp)]
    scalars = {round(op.ifm2_scalar.value.data, 6) for op in commands if op.ifm2_scalar is not None}
    assert scalars == {3.0, round(100 / 600, 6)}  # (-8 + 128) * 0.025 and 100 / 600
    from_constants = [op for op in commands if op.ifm2 is not None and op.ifm2.region.data == 0]
    assert from_constants
    assert all(op.reversed_operands is not None for op in from_constants)
    deployable = lowered_tflite(module)
    for seed in (0, 1):
        ours = litert.run_ethosu_tflite(deployable, _inputs(seed)).outputs[0]
        assert len(np.unique(ours)) > 50
        np.testing.assert_array_equal(ours, litert.invoke(hard_swish_model(), _inputs(seed)).outputs[0])


def test_an_operator_of_two_constants_stays_on_the_cpu_saying_why() -> None:
    from xdsl.parser import Parser

    from cascade.tools.cascade_opt import CascadeOptMain

    text = """
    func.func @main(%x: tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8> {
      %a = arith.constant dense<3> : tensor<1x4x4x8xi8>
      %b = arith.constant dense<5> : tensor<1x1x1x8xi8>
      %c = nn.add %a, %b {input_quant = #nn.quant<0.1:0>, input2_quant = #nn.quant<0.1:0>,
        activation = #nn<activation none>, output_quant = #nn.quant<0.1:0>}
        : (tensor<1x4x4x8xi8>, tensor<1x1x1x8xi8>) -> tensor<1x4x4x8xi8>
      %y = nn.add %x, %c {input_quant = #nn.quant<0.1:0>, input2_quant = #nn.quant<0.1:0>,
        activation = #nn<activation none>, output_quant = #nn.quant<0.1:0>}
        : (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8>
      func.return %y : tensor<1x4x4x8xi8>
    }
    """
    module = Parser(CascadeOptMain(["-"]).ctx, text).parse_module()
    EthosUPipelinePass(accelerator="ethos-u55-128").apply(Context(), module)
    (cpu,) = [op for op in module.walk() if isinstance(op, nn.AddOp)]
    assert cpu.attributes["cascade.on_cpu"].data == "both operands are constants (fold them first)"  # type: ignore[attr-defined]


def test_a_scalar_activation_is_still_refused() -> None:
    mb = ModelBuilder()
    x = mb.add_tensor("x", [], "int8", scale=0.1, zero_point=0)
    c = mb.add_tensor("c", [], "int8", scale=0.1, zero_point=0, data=np.array(1))
    y = mb.add_tensor("y", [], "int8", scale=0.1, zero_point=0)
    mb.add_operator("ADD", [x, c], [y], options("AddOptions"))
    with pytest.raises(TFLiteImportError, match=r"'x' \(#0\) has no static shape: \[\]"):
        import_tflite(mb.build([x], [y]))


def test_a_scalar_constant_is_refused_where_no_elementwise_operator_reads_it() -> None:
    mb = ModelBuilder()
    c = mb.add_tensor("c", [], "int8", scale=0.1, zero_point=0, data=np.array(1))
    x = mb.add_tensor("x", [1, 4, 4, 2], "int8", scale=0.1, zero_point=0)
    y = mb.add_tensor("y", [1, 4, 4, 2], "int8", scale=0.1, zero_point=0)
    pool = options("Pool2DOptions", padding="VALID", stride_w=1, stride_h=1, filter_width=1, filter_height=1)
    mb.add_operator("AVERAGE_POOL_2D", [c], [y], pool)
    with pytest.raises(TFLiteImportError, match=r"AVERAGE_POOL_2D: input tensor 'c' \(#0\) has no static shape: \[\]"):
        import_tflite(mb.build([x], [y]))
