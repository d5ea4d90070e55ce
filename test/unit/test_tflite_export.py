"""`frontends.tflite_export`: every `nn` operator written as its TFLite builtin operator computes
what the `nn` interpreter computes, as TFLite's reference kernels run it (LiteRT).

The models are imported, every operator is left to the CPU as lower-to-ethosu leaves one, and
the program is written by `-t ethosu-tflite` (`lowered_tflite`); LiteRT runs the file, and so
does the Vela-format runner, and both must equal the `nn` interpreter on random int8 inputs.
Three small models built here hold every operator kind and the forms that need care (SAME and
VALID padding, dilation, a depth multiplier, per-channel weights, a transposed convolution,
both resize modes); the test models add real networks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.parser import Parser

from cascade.dialects import nn
from cascade.ethos_u.tflite_output import TFLiteOutputError, lowered_tflite
from cascade.frontends.loader import make_context
from cascade.frontends.tflite import import_tflite
from cascade.frontends.tflite_writer import ModelBuilder, options
from cascade.interpreter.litert import invoke, run_ethosu_tflite
from cascade.interpreter.nn import input_types, run_program
from cascade.passes.lower_to_ethosu import ON_CPU_ATTR

pytest.importorskip("ai_edge_litert")

MODELS = Path(__file__).parents[1] / "models"


def _weights(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-127, 128, size=shape).astype(np.int8)


def _bias(rng: np.random.Generator, count: int) -> np.ndarray:
    return rng.integers(-3000, 3000, size=count).astype(np.int32)


def windows_model() -> bytes:
    """conv 3x3/2 SAME relu6 (per-channel) -> depthwise 3x3 dilation 2 x2 -> transpose conv 3x3/2
    SAME -> average pool 3x3 SAME -> max pool 2x2/2 VALID."""
    rng = np.random.default_rng(10)
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, 9, 9, 3], "int8", scale=0.03, zero_point=-4)
    w = mb.add_tensor(
        "w",
        [4, 3, 3, 3],
        "int8",
        scale=[0.01, 0.02, 0.015, 0.01],
        zero_point=[0] * 4,
        quantized_dimension=0,
        data=_weights(rng, (4, 3, 3, 3)),
    )
    b = mb.add_tensor("b", [4], "int32", scale=[3e-4, 6e-4, 4.5e-4, 3e-4], zero_point=[0] * 4, data=_bias(rng, 4))
    conv = mb.add_tensor("conv", [1, 5, 5, 4], "int8", scale=6 / 255, zero_point=-128)
    mb.add_operator(
        "CONV_2D",
        [x, w, b],
        [conv],
        options("Conv2DOptions", padding="SAME", stride_w=2, stride_h=2, fused_activation_function="RELU6"),
        version=3,
    )
    dw = mb.add_tensor("dw/w", [1, 3, 3, 8], "int8", scale=0.02, zero_point=0, data=_weights(rng, (1, 3, 3, 8)))
    db = mb.add_tensor("dw/b", [8], "int32", scale=4.7e-4, zero_point=0, data=_bias(rng, 8))
    depthwise = mb.add_tensor("depthwise", [1, 5, 5, 8], "int8", scale=0.05, zero_point=3)
    mb.add_operator(
        "DEPTHWISE_CONV_2D",
        [conv, dw, db],
        [depthwise],
        options(
            "DepthwiseConv2DOptions",
            padding="SAME",
            stride_w=1,
            stride_h=1,
            depth_multiplier=2,
            dilation_w_factor=2,
            dilation_h_factor=2,
        ),
        version=3,
    )
    shape = mb.add_tensor("up/shape", [4], "int32", data=np.array([1, 10, 10, 4]))
    tw = mb.add_tensor("up/w", [4, 3, 3, 8], "int8", scale=0.01, zero_point=0, data=_weights(rng, (4, 3, 3, 8)))
    tb = mb.add_tensor("up/b", [4], "int32", scale=5e-4, zero_point=0, data=_bias(rng, 4))
    up = mb.add_tensor("up", [1, 10, 10, 4], "int8", scale=0.04, zero_point=-2)
    mb.add_operator(
        "TRANSPOSE_CONV",
        [shape, tw, depthwise, tb],
        [up],
        options("TransposeConvOptions", padding="SAME", stride_w=2, stride_h=2),
        version=3,
    )
    avg = mb.add_tensor("avg", [1, 10, 10, 4], "int8", scale=0.04, zero_point=-2)
    mb.add_operator(
        "AVERAGE_POOL_2D",
        [up],
        [avg],
        options("Pool2DOptions", padding="SAME", stride_w=1, stride_h=1, filter_width=3, filter_height=3),
        version=2,
    )
    pooled = mb.add_tensor("max", [1, 5, 5, 4], "int8", scale=0.04, zero_point=-2)
    mb.add_operator(
        "MAX_POOL_2D",
        [avg],
        [pooled],
        options("Pool2DOptions", padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2),
        version=2,
    )
    return mb.build([x], [pooled])


def elementwise_model() -> bytes:
    """Two inputs: add relu, sub, mul (broadcast), minimum, maximum, tanh, logistic, leaky relu,
    quantize, hard swish, relu6."""
    mb = ModelBuilder()
    a = mb.add_tensor("a", [1, 6, 6, 4], "int8", scale=0.05, zero_point=2)
    c = mb.add_tensor("c", [1, 1, 1, 4], "int8", scale=0.03, zero_point=-1)
    total = mb.add_tensor("sum", [1, 6, 6, 4], "int8", scale=0.06, zero_point=-128)
    mb.add_operator("ADD", [a, a], [total], options("AddOptions", fused_activation_function="RELU"), version=2)
    difference = mb.add_tensor("difference", [1, 6, 6, 4], "int8", scale=0.07, zero_point=5)
    mb.add_operator("SUB", [a, total], [difference], options("SubOptions"), version=2)
    product = mb.add_tensor("product", [1, 6, 6, 4], "int8", scale=0.02, zero_point=0)
    mb.add_operator("MUL", [difference, c], [product], options("MulOptions"), version=2)
    low = mb.add_tensor("minimum", [1, 6, 6, 4], "int8", scale=0.02, zero_point=0)
    mb.add_operator("MINIMUM", [product, product], [low], version=2)
    high = mb.add_tensor("maximum", [1, 6, 6, 4], "int8", scale=0.02, zero_point=0)
    mb.add_operator("MAXIMUM", [low, product], [high], version=2)
    tanh = mb.add_tensor("tanh", [1, 6, 6, 4], "int8", scale=1 / 128, zero_point=0)
    mb.add_operator("TANH", [high], [tanh], version=2)
    sigmoid = mb.add_tensor("sigmoid", [1, 6, 6, 4], "int8", scale=1 / 256, zero_point=-128)
    mb.add_operator("LOGISTIC", [difference], [sigmoid], version=2)
    leaky = mb.add_tensor("leaky", [1, 6, 6, 4], "int8", scale=0.01, zero_point=3)
    mb.add_operator("LEAKY_RELU", [tanh], [leaky], options("LeakyReluOptions", alpha=0.2), version=2)
    requantized = mb.add_tensor("requantized", [1, 6, 6, 4], "int8", scale=0.015, zero_point=-7)
    mb.add_operator("QUANTIZE", [leaky], [requantized], version=2)
    swished = mb.add_tensor("swished", [1, 6, 6, 4], "int8", scale=0.012, zero_point=4)
    mb.add_operator("HARD_SWISH", [requantized], [swished])
    clamped = mb.add_tensor("clamped", [1, 6, 6, 4], "int8", scale=0.01, zero_point=-9)
    mb.add_operator("RELU6", [swished], [clamped])
    return mb.build([a, c], [clamped, sigmoid])


def shapes_model() -> bytes:
    """pad -> concat with a second input -> resize nearest x2 -> resize bilinear x2 (half-pixel
    centers) -> mean over H and W -> reshape -> fully connected -> softmax."""
    rng = np.random.default_rng(12)
    mb = ModelBuilder()
    # TFLite's int8 CONCATENATION takes inputs quantized as its output.
    a = mb.add_tensor("a", [1, 3, 3, 2], "int8", scale=0.07, zero_point=0)
    c = mb.add_tensor("c", [1, 5, 5, 3], "int8", scale=0.07, zero_point=0)
    pads = mb.add_tensor("pad/amounts", [4, 2], "int32", data=np.array([[0, 0], [1, 1], [1, 1], [0, 0]]))
    padded = mb.add_tensor("padded", [1, 5, 5, 2], "int8", scale=0.07, zero_point=0)
    mb.add_operator("PAD", [a, pads], [padded], options("PadOptions"), version=2)
    cat = mb.add_tensor("concat", [1, 5, 5, 5], "int8", scale=0.07, zero_point=0)
    mb.add_operator("CONCATENATION", [padded, c], [cat], options("ConcatenationOptions", axis=3), version=2)
    size = mb.add_tensor("nearest/size", [2], "int32", data=np.array([10, 10]))
    nearest = mb.add_tensor("nearest", [1, 10, 10, 5], "int8", scale=0.07, zero_point=0)
    mb.add_operator(
        "RESIZE_NEAREST_NEIGHBOR", [cat, size], [nearest], options("ResizeNearestNeighborOptions"), version=2
    )
    size2 = mb.add_tensor("bilinear/size", [2], "int32", data=np.array([20, 20]))
    bilinear = mb.add_tensor("bilinear", [1, 20, 20, 5], "int8", scale=0.07, zero_point=0)
    mb.add_operator(
        "RESIZE_BILINEAR",
        [nearest, size2],
        [bilinear],
        options("ResizeBilinearOptions", half_pixel_centers=True),
        version=2,
    )
    axes = mb.add_tensor("mean/axes", [2], "int32", data=np.array([1, 2]))
    mean = mb.add_tensor("mean", [1, 1, 1, 5], "int8", scale=0.01, zero_point=-10)
    mb.add_operator("MEAN", [bilinear, axes], [mean], options("ReducerOptions", keep_dims=True), version=2)
    shape = mb.add_tensor("flat/shape", [2], "int32", data=np.array([1, 5]))
    flat = mb.add_tensor("flat", [1, 5], "int8", scale=0.01, zero_point=-10)
    mb.add_operator("RESHAPE", [mean, shape], [flat], options("ReshapeOptions", new_shape=[1, 5]))
    fw = mb.add_tensor("fc/w", [7, 5], "int8", scale=0.02, zero_point=0, data=_weights(rng, (7, 5)))
    fb = mb.add_tensor("fc/b", [7], "int32", scale=2e-4, zero_point=0, data=_bias(rng, 7))
    fc = mb.add_tensor("fc", [1, 7], "int8", scale=0.08, zero_point=4)
    mb.add_operator("FULLY_CONNECTED", [flat, fw, fb], [fc], options("FullyConnectedOptions"), version=4)
    probabilities = mb.add_tensor("softmax", [1, 7], "int8", scale=1 / 256, zero_point=-128)
    mb.add_operator("SOFTMAX", [fc], [probabilities], options("SoftmaxOptions", beta=1.0), version=2)
    return mb.build([a, c], [probabilities, nearest])


BUILT = {"windows": windows_model, "elementwise": elementwise_model, "shapes": shapes_model}


def _on_cpu(module: ModuleOp) -> ModuleOp:
    for op in module.walk():
        if isinstance(op, nn.NNOperation):
            op.attributes[ON_CPU_ATTR] = StringAttr("written by the test")
    return module


def _check_runs_as_tflite(module: ModuleOp, seed: int) -> None:
    kinds = sorted({op.name for op in module.walk() if isinstance(op, nn.NNOperation)})
    model = lowered_tflite(_on_cpu(module))
    rng = np.random.default_rng(seed)
    inputs = [rng.integers(-128, 128, size=t.get_shape(), dtype=np.int8) for t in input_types(module)]
    expected = run_program(module, inputs).outputs
    for runner, run in (("LiteRT", invoke), ("Vela-format runner", run_ethosu_tflite)):
        for ours, theirs in zip(expected, run(model, inputs).outputs, strict=True):
            assert len(np.unique(ours)) > 3, f"{kinds}: degenerate output {np.unique(ours)}"
            np.testing.assert_array_equal(theirs, ours, err_msg=f"{kinds}, run by {runner}")


@pytest.mark.parametrize("name", sorted(BUILT))
def test_every_operator_kind_runs_as_tflite_runs_it(name: str) -> None:
    module = import_tflite(BUILT[name]())
    _check_runs_as_tflite(module, seed=len(name))


def test_the_built_models_hold_every_operator_kind() -> None:
    from cascade.frontends.tflite_export import _WRITERS

    kinds = {type(op) for name in BUILT for op in import_tflite(BUILT[name]()).walk()}
    assert set(_WRITERS) <= kinds, set(_WRITERS) - kinds


@pytest.mark.parametrize("model", ["resnet8", "ds_cnn_kws_nosoftmax"])
def test_real_networks_run_as_tflite_runs_them(model: str) -> None:
    module = import_tflite((MODELS / f"{model}.tflite").read_bytes())
    _check_runs_as_tflite(module, seed=3)


PADDED_CONV = """
func.func @main(%x: tensor<1x6x6x4xi8>) -> tensor<1x7x7x4xi8> {
  %w = arith.constant dense<"0xWEIGHTS"> : tensor<4x2x2x4xi8>
  %b = arith.constant dense<[100, -200, 300, 7]> : tensor<4xi32>
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>,
    activation = #nn<activation none>, input_quant = #nn.quant<0.05:2>, weight_quant = #nn.quant<0.02:0>,
    output_quant = #nn.quant<0.03:-1>} : (tensor<1x6x6x4xi8>, tensor<4x2x2x4xi8>, tensor<4xi32>) -> tensor<1x7x7x4xi8>
  func.return %0 : tensor<1x7x7x4xi8>
}
"""


def test_a_convolution_padded_neither_same_nor_valid_reads_a_pad() -> None:
    """A 2x2 kernel padded by one on every side: TFLite's SAME pads (0, 1); the writer puts a PAD
    (with the input's zero point) before a VALID convolution."""
    weights = np.random.default_rng(5).integers(-127, 128, size=64).astype(np.int8).tobytes().hex().upper()
    module = Parser(make_context(), PADDED_CONV.replace("WEIGHTS", weights)).parse_module()
    _check_runs_as_tflite(module, seed=4)


def test_a_pooling_padded_neither_same_nor_valid_is_refused() -> None:
    text = """
func.func @main(%x: tensor<1x6x6x4xi8>) -> tensor<1x7x7x4xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>,
    dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>,
    input_quant = #nn.quant<0.05:2>, output_quant = #nn.quant<0.05:2>} : (tensor<1x6x6x4xi8>) -> tensor<1x7x7x4xi8>
  func.return %0 : tensor<1x7x7x4xi8>
}
"""
    module = _on_cpu(Parser(make_context(), text).parse_module())
    with pytest.raises(TFLiteOutputError, match=r"nn.pool2d .*TFLite pools only with SAME or VALID padding"):
        lowered_tflite(module)


SHARED = """
func.func @main(%x: tensor<1x16x16x4xi8>) -> (tensor<1x4x4x4xi8>, tensor<1x4x4x4xi8>, tensor<1x16x16x4xi8>) {
  %w = arith.constant dense<"0xWEIGHTS"> : tensor<4x3x3x4xi8>
  %b = arith.constant dense<[900, -700, 500, -300]> : tensor<4xi32>
  %c = arith.constant dense<[[[[3, -5, 7, -9]]]]> : tensor<1x1x1x4xi8>
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 4, 4>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>,
    activation = #nn<activation none>, input_quant = #nn.quant<0.05:2>, weight_quant = #nn.quant<0.0625:0>,
    output_quant = #nn.quant<0.5:-1>} : (tensor<1x16x16x4xi8>, tensor<4x3x3x4xi8>, tensor<4xi32>) -> tensor<1x4x4x4xi8>
  %1 = nn.conv2d %x, %w, %b {stride = array<i64: 4, 4>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>,
    activation = #nn<activation none>, input_quant = #nn.quant<0.05:2>, weight_quant = #nn.quant<0.125:0>,
    output_quant = #nn.quant<0.5:-1>} : (tensor<1x16x16x4xi8>, tensor<4x3x3x4xi8>, tensor<4xi32>) -> tensor<1x4x4x4xi8>
  %2 = nn.add %x, %c {activation = #nn<activation none>, input_quant = #nn.quant<0.05:2>,
    input2_quant = #nn.quant<0.75:3>, output_quant = #nn.quant<0.2:0>}
    : (tensor<1x16x16x4xi8>, tensor<1x1x1x4xi8>) -> tensor<1x16x16x4xi8>
  func.return %0, %1, %2 : tensor<1x4x4x4xi8>, tensor<1x4x4x4xi8>, tensor<1x16x16x4xi8>
}
"""


def test_a_constant_is_quantized_as_each_operator_reads_it() -> None:
    """Two convolutions read the same weights and bias with different weight scales, and an add
    reads a constant operand with its own quantization: each reader gets the tensor quantized as
    it reads it (the first reader's quantization served all, and the add's constant had none)."""
    weights = np.random.default_rng(6).integers(-127, 128, size=144).astype(np.int8).tobytes().hex().upper()
    module = Parser(make_context(), SHARED.replace("WEIGHTS", weights)).parse_module()
    _check_runs_as_tflite(module, seed=6)


def _refused(text: str, message: str) -> None:
    module = _on_cpu(Parser(make_context(), text).parse_module())
    with pytest.raises(TFLiteOutputError, match=message):
        lowered_tflite(module)


def test_a_concatenation_of_differently_quantized_inputs_is_refused() -> None:
    """TFLite's int8 CONCATENATION copies bytes; a QUANTIZE before it rounds otherwise than nn.concat."""
    _refused(
        """
func.func @main(%x: tensor<1x2x2x4xi8>, %y: tensor<1x2x2x4xi8>) -> tensor<1x2x2x8xi8> {
  %0 = nn.concat %x, %y {axis = 3 : i64, input_quants = [#nn.quant<0.5:0>, #nn.quant<0.3:1>],
    output_quant = #nn.quant<0.4:2>} : (tensor<1x2x2x4xi8>, tensor<1x2x2x4xi8>) -> tensor<1x2x2x8xi8>
  func.return %0 : tensor<1x2x2x8xi8>
}
""",
        r"nn.concat .*TFLite concatenates only inputs quantized as its output",
    )


def test_a_sigmoid_quantized_otherwise_than_tflite_allows_is_refused() -> None:
    _refused(
        """
func.func @main(%x: tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8> {
  %0 = nn.sigmoid %x {input_quant = #nn.quant<0.1:0>, output_quant = #nn.quant<0.005:-100>}
    : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8>
  func.return %0 : tensor<1x2x2x4xi8>
}
""",
        r"nn.sigmoid .*TFLite's int8 LOGISTIC needs the output quantization 1/256:-128",
    )
