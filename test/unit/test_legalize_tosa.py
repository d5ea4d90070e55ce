"""legalize-tosa: the arithmetic it relies on, and TFLite -> TOSA -> nn against TFLite and TOSA.

* TOSA's DOUBLE_ROUND rescale equals TFLite's MultiplyByQuantizedMultiplier (brute force).
* MEAN's multiplier inversion and the exact scale solver.
* The interpreter's kernels derive TFLite's integer multipliers from exact (f64) scales in
  double, which the recovered quantization needs (`test_kernels_keep_exact_scales`).
* Random single-operator models and a small network built with `tflite_writer`, and the two
  required models: converted by tosa-converter-for-tflite, legalized, run by the nn interpreter;
  every tensor TFLite names must be bit-exact with LiteRT's reference kernels, and the outputs of
  the `fully-connected=conv` form bit-exact with the TOSA reference model.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from cascade.dialects import nn
from cascade.frontends.tflite_writer import ModelBuilder, options
from cascade.frontends.tosa import (
    find_tool,
    import_tflite_via_tosa,
    make_tosa_context,
    tflite_to_tosa,
    tosa_tools_available,
)
from cascade.interpreter import kernels
from cascade.interpreter.quantization import activation_range, multiply_by_quantized_multiplier
from cascade.passes.legalize_tosa import LegalizeTosaPass, ScaleSolver, UnsupportedPattern, invert_mean_fold, mean_fold

MODELS = Path(__file__).parent.parent / "models"
MIN_DISTINCT = 4

# --------------------------------------------------------------------------- #
# The arithmetic
# --------------------------------------------------------------------------- #


def tosa_apply_scale_32(value: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """TOSA 1.0 `apply_scale_32` with double rounding (the spec's pseudocode, in int64)."""
    value = np.asarray(value, dtype=np.int64)
    rounding = np.int64(1) << (shift - 1)
    if shift > 31:
        rounding = np.where(value >= 0, rounding + (1 << 30), rounding - (1 << 30))
    return (value * multiplier + rounding) >> shift


@pytest.mark.parametrize("shift", [2, 13, 30, 31, 32, 33, 38, 45, 62])
def test_double_round_rescale_is_tflite_fixed_point(shift: int):
    rng = np.random.default_rng(shift)
    limit = min(1 << (shift - 1), 1 << 31)  # TOSA requires the value in [-2^(shift-1), 2^(shift-1))
    for multiplier in [1 << 30, (1 << 30) + 1, (1 << 31) - 1, *rng.integers(1 << 30, 1 << 31, 20)]:
        values = np.concatenate(
            [
                rng.integers(-limit, limit, 4000),
                np.arange(-2000, 2000),
                # Exact ties of the first and of the second rounding.
                (np.arange(-50, 50) * (1 << max(shift - 31, 0)) * 2 + 1) << 29 if shift > 31 else np.arange(4),
            ]
        )
        values = values[(values >= -limit) & (values < limit)]
        ours = multiply_by_quantized_multiplier(values, int(multiplier), 31 - shift)
        np.testing.assert_array_equal(ours, tosa_apply_scale_32(values, int(multiplier), shift))


@pytest.mark.parametrize("count", [1, 2, 25, 64, 125, 49 * 10, 1000])
def test_invert_mean_fold(count: int):
    rng = np.random.default_rng(count)
    for _ in range(300):
        real = float(np.float32(10 ** rng.uniform(-3, 3)) / np.float32(10 ** rng.uniform(-3, 3)))
        multiplier, shift = mean_fold(real, count)
        recovered = invert_mean_fold(multiplier, shift, count)
        assert recovered is not None
        assert mean_fold(float(recovered), count) == (multiplier, shift)


def test_scale_solver_ratios_and_contradictions():
    from xdsl.dialects.builtin import i8
    from xdsl.dialects.test import TestOp

    a, b, c = TestOp(result_types=[i8, i8, i8]).results
    solver = ScaleSolver()
    solver.relate(a, b, Fraction(3), a.owner)
    solver.relate(c, b, Fraction(1, 2), a.owner)
    root, ratio_a = solver.find(a)
    assert solver.find(b) == (root, 3 * ratio_a)
    assert solver.find(c)[1] == 6 * ratio_a
    solver.relate(a, c, Fraction(6), a.owner)  # consistent: s(c) = 6 s(a)
    with pytest.raises(UnsupportedPattern, match="contradict"):
        solver.relate(a, c, Fraction(5), a.owner)


# The requantizations a TOSA multiplier m * 2^-k stands for. Kernels must reproduce TFLite's
# integers from such an exact scale, so they must not round it to float32 first.
EXACT = [(1518500250, 38), (2147483647, 40), (1231347816, 32), (1073741825, 35)]


def _near_ties(real: float, count: int = 64) -> np.ndarray:
    """Accumulators whose product with `real` lies within 2**-18 of a rounding tie (where a
    multiplier rounded to float32 would round the other way)."""
    acc = np.arange(-(1 << 22), 1 << 22, dtype=np.int64)
    fraction = np.abs((acc * real) % 1.0 - 0.5)
    return acc[np.argsort(fraction, kind="stable")[:count]]


def _round_half_away(value: Fraction) -> int:
    magnitude = abs(value)
    rounded = magnitude.numerator // magnitude.denominator + (magnitude % 1 >= Fraction(1, 2))
    return rounded if value >= 0 else -rounded


@pytest.mark.parametrize(("multiplier", "shift"), EXACT)
def test_kernels_keep_exact_scales(multiplier: int, shift: int):
    """conv2d, depthwise_conv2d, fully_connected and quantize with an exact (non-float32) scale."""
    real = multiplier / 2.0**shift
    assert float(np.float32(real)) != real
    bias = _near_ties(real).astype(np.int32)
    channels = len(bias)
    expected = np.clip(multiply_by_quantized_multiplier(bias, multiplier, 31 - shift), -128, 127)
    common = dict(input_scale=1.0, input_zero_point=0, output_scale=1.0, output_zero_point=0)
    x = np.zeros((1, 1, 1, 1), np.int8)
    conv = kernels.conv2d(x, np.zeros((channels, 1, 1, 1), np.int8), bias, weight_scales=[real] * channels, **common)
    np.testing.assert_array_equal(conv.reshape(-1), expected, err_msg="conv2d rounds the weight scale")
    x_dw = np.zeros((1, 1, 1, channels), np.int8)
    depthwise = kernels.depthwise_conv2d(
        x_dw, np.zeros((1, 1, 1, channels), np.int8), bias, weight_scales=[real] * channels, **common
    )
    np.testing.assert_array_equal(depthwise.reshape(-1), expected, err_msg="depthwise_conv2d rounds the weight scale")
    # LiteRT's FULLY_CONNECTED rounds acc * real in double, half away from zero.
    fc = kernels.fully_connected(
        np.zeros((1, 1), np.int8), np.zeros((channels, 1), np.int8), bias, weight_scales=[real] * channels, **common
    )
    rounded = [_round_half_away(Fraction(int(a) * multiplier, 1 << shift)) for a in bias]
    np.testing.assert_array_equal(fc.reshape(-1), np.clip(rounded, -128, 127), err_msg="fully_connected rounds")
    # QUANTIZE int8 -> int8: in_s / out_s = real.
    values = np.arange(-128, 128, dtype=np.int8)
    quantized = kernels.quantize(values, input_scale=real, input_zero_point=0, output_scale=1.0, output_zero_point=0)
    np.testing.assert_array_equal(
        quantized, np.clip(multiply_by_quantized_multiplier(values, multiplier, 31 - shift), -128, 127)
    )


def test_kernels_keep_exact_add_and_mean_scales():
    # ADD whose input 2 multiplier is 1231347816 * 2^-32 and output 1513704102 * 2^-49 (resnet8).
    s1 = 1.0
    s2 = float(Fraction(1, 2) / Fraction(1231347816, 1 << 32))
    s_out = float(Fraction(s2) * 2 / (Fraction(1 << 20) * Fraction(1513704102, 1 << 49)))
    assert float(np.float32(s2)) != s2
    rng = np.random.default_rng(0)
    a, b = rng.integers(-128, 128, (2, 4096), dtype=np.int8)
    ours = kernels.add(
        a,
        b,
        input1_scale=s2,
        input1_zero_point=-54,
        input2_scale=s1,
        input2_zero_point=-128,
        output_scale=s_out,
        output_zero_point=-128,
    )
    shifted_a = tosa_apply_scale_32((a.astype(np.int64) + 54) << 20, 1073741824, 31)  # exactly 1/2
    shifted_b = tosa_apply_scale_32((b.astype(np.int64) + 128) << 20, 1231347816, 32)
    expected = np.clip(tosa_apply_scale_32(shifted_a + shifted_b, 1513704102, 49) - 128, -128, 127)
    np.testing.assert_array_equal(ours, expected, err_msg="add rounds its scales")
    # MEAN over 125 elements with TOSA multiplier 650070751 * 2^-35 (ds_cnn).
    real = invert_mean_fold(650070751, -4, 125)
    assert real is not None
    x = rng.integers(-128, 128, (1, 25, 5, 64), dtype=np.int8)
    mean = kernels.mean_hw(
        x, input_scale=1.0, input_zero_point=-128, output_scale=float(1 / real), output_zero_point=-128
    )
    total = x.astype(np.int64).sum(axis=(1, 2)) + 128 * 125
    expected = np.clip(tosa_apply_scale_32(total, 650070751, 35) - 128, -128, 127)
    np.testing.assert_array_equal(mean.reshape(1, -1), expected, err_msg="mean_hw rounds its scales")


# --------------------------------------------------------------------------- #
# Models through the converter
# --------------------------------------------------------------------------- #


def _tools_available() -> bool:
    if not tosa_tools_available():
        return False
    try:
        import ai_edge_litert  # noqa: F401
        import tosa_reference_model  # noqa: F401
    except ImportError:
        return False
    return True


TOOLS = _tools_available()
if not TOOLS and os.environ.get("CASCADE_REQUIRE_INTEROP") == "1":
    # As in test/lit.cfg: CI must not pass by skipping the interop tests.
    raise RuntimeError("CASCADE_REQUIRE_INTEROP=1 but the TOSA tools, LiteRT or tosa_reference_model are missing")
requires_tools = pytest.mark.skipif(
    not TOOLS, reason="needs tosa-converter-for-tflite, tosa-opt, ai-edge-litert and tosa_reference_model"
)


def legalize(tosa_text: str, fully_connected: str = "tflite"):
    ctx = make_tosa_context()
    module = Parser(ctx, tosa_text, "<tosa>").parse_module()
    module.verify()
    LegalizeTosaPass(fully_connected=fully_connected).apply(ctx, module)
    module.verify()
    return module


def tosa_reference(tosa_text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The TOSA reference model's outputs (tosa-opt serializes the converter's TOSA)."""
    import tosa_reference_model

    with tempfile.TemporaryDirectory() as scratch:
        flatbuffer = Path(scratch) / "model.tosa"
        subprocess.run(
            [find_tool("TOSA_OPT", "tosa-opt"), "-", "--tosa-serialize", f"--tosa-flatbuffer-filename={flatbuffer}"],
            input=tosa_text.encode(),
            capture_output=True,
            check=True,
        )
        outputs, status = tosa_reference_model.run(flatbuffer.read_bytes(), inputs)
    assert str(status).endswith("VALID") or status == 0, status
    return outputs


def check_model(model: bytes, seeds: tuple[int, ...], min_distinct: int = MIN_DISTINCT) -> list[str]:
    """Legalize `model` both ways and compare with LiteRT and the TOSA reference model; returns the nn ops."""
    from cascade.interpreter.litert import run_reference
    from cascade.interpreter.nn import run_program
    from cascade.tools.cascade_run import comparisons, random_inputs

    tosa_text = tflite_to_tosa(model)
    module = legalize(tosa_text)
    as_conv = legalize(tosa_text, "conv")
    assert not any(op.name.startswith("tosa.") for op in module.walk())
    for seed in seeds:
        inputs = random_inputs(module, seed)
        ours = run_program(module, inputs)
        pairs = comparisons(module, ours, run_reference(model, inputs))
        assert pairs
        mismatches = [f"{p.label}: {p.mismatch()}" for p in pairs if p.mismatch() is not None]
        assert not mismatches, f"seed {seed}: not bit-exact with TFLite: {mismatches}"
        for output in ours.outputs:
            assert len(np.unique(output)) >= min_distinct, f"seed {seed}: degenerate output {np.unique(output)}"
        golden = tosa_reference(tflite_to_tosa(model, debug_info=False), inputs)
        for index, (mine, theirs) in enumerate(zip(run_program(as_conv, inputs).outputs, golden, strict=True)):
            np.testing.assert_array_equal(mine, theirs.reshape(mine.shape), err_msg=f"seed {seed}: output {index}")
    return [op.name for op in module.walk() if op.name.startswith("nn.")]


def _scale(rng: np.random.Generator, low: float, high: float) -> float:
    return float(np.float32(np.exp(rng.uniform(np.log(low), np.log(high)))))


ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def _output_quant(rng: np.random.Generator, activation: str) -> tuple[float, int]:
    """An output scale and zero point for which the activation clamps inside the int8 range."""
    if activation == "RELU6":
        scale = _scale(rng, 6 / 200, 6 / 40)
        return scale, int(rng.integers(-128, 127 - round(6 / scale)))
    if activation == "RELU_N1_TO_1":
        scale = _scale(rng, 1 / 100, 1 / 20)
        steps = round(1 / scale)
        return scale, int(rng.integers(-128 + steps, 128 - steps))
    return _scale(rng, 0.01, 0.1), int(rng.integers(-128, 60))


def conv_model(seed: int, depthwise: bool) -> bytes:
    rng = np.random.default_rng(seed)
    activation = ACTIVATIONS[seed % 4]
    h, w, cin = int(rng.integers(5, 12)), int(rng.integers(5, 12)), int(rng.integers(1, 5))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    stride = int(rng.integers(1, 3))
    padding = ["SAME", "VALID"][seed % 2]
    mult = int(rng.integers(1, 3)) if depthwise else 1
    cout = cin * mult if depthwise else int(rng.integers(1, 6))
    out_s, out_zp = _output_quant(rng, activation)
    w_s = [_scale(rng, 0.001, 0.02) for _ in range(cout)]
    # An input scale for which the accumulator's spread (uniform x and w) is ~30 output steps.
    depth = 1 if depthwise else cin
    in_s = float(np.float32(30 * out_s / (74 * 73 * np.sqrt(kh * kw * depth) * float(np.mean(w_s)))))
    in_zp = int(rng.integers(-128, 100))
    weights = rng.integers(-127, 128, (1, kh, kw, cout) if depthwise else (cout, kh, kw, cin))
    bias = rng.integers(-3000, 3000, cout)
    out_h = -(-h // stride) if padding == "SAME" else (h - kh) // stride + 1
    out_w = -(-w // stride) if padding == "SAME" else (w - kw) // stride + 1
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, h, w, cin], "int8", scale=in_s, zero_point=in_zp)
    wt = mb.add_tensor(
        "w", weights.shape, "int8", scale=w_s, zero_point=0, quantized_dimension=3 if depthwise else 0, data=weights
    )
    bt = mb.add_tensor("b", [cout], "int32", scale=[in_s * s for s in w_s], zero_point=0, data=bias)
    y = mb.add_tensor("y", [1, out_h, out_w, cout], "int8", scale=out_s, zero_point=out_zp)
    fields = dict(padding=padding, stride_h=stride, stride_w=stride, fused_activation_function=activation)
    if depthwise:
        mb.add_operator(
            "DEPTHWISE_CONV_2D",
            [x, wt, bt],
            [y],
            options("DepthwiseConv2DOptions", depth_multiplier=mult, **fields),
            version=3,
        )
    else:
        mb.add_operator("CONV_2D", [x, wt, bt], [y], options("Conv2DOptions", **fields), version=3)
    return mb.build([x], [y])


def add_model(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    activation = ["NONE", "RELU", "RELU6"][seed % 3]
    shape = [1, int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 9))]
    out_s, out_zp = _output_quant(rng, activation)
    s1, s2 = (float(np.float32(out_s * rng.uniform(0.3, 1.5))) for _ in range(2))
    mb = ModelBuilder()
    a = mb.add_tensor("a", shape, "int8", scale=s1, zero_point=int(rng.integers(-128, 128)))
    b = mb.add_tensor("b", shape, "int8", scale=s2, zero_point=int(rng.integers(-128, 128)))
    y = mb.add_tensor("y", shape, "int8", scale=out_s, zero_point=out_zp)
    mb.add_operator("ADD", [a, b], [y], options("AddOptions", fused_activation_function=activation), version=2)
    return mb.build([a, b], [y])


def mean_fc_model(seed: int) -> bytes:
    """MEAN (keep_dims=false) then FULLY_CONNECTED, with or without bias: the models' heads."""
    rng = np.random.default_rng(seed)
    h, w, c, units = int(rng.integers(2, 8)), int(rng.integers(2, 8)), int(rng.integers(2, 9)), int(rng.integers(2, 7))
    in_s, in_zp = _scale(rng, 0.005, 0.1), int(rng.integers(-128, 0))
    mean_s = float(np.float32(in_s / rng.uniform(2, 8)))
    w_s = [_scale(rng, 0.002, 0.02) for _ in range(units)]
    out_s = float(np.float32(74 * 73 * np.sqrt(c) * mean_s * float(np.mean(w_s)) / 30))
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, h, w, c], "int8", scale=in_s, zero_point=in_zp)
    axes = mb.add_tensor("axes", [2], "int32", data=np.array([1, 2], np.int32))
    m = mb.add_tensor("mean", [1, c], "int8", scale=mean_s, zero_point=int(rng.integers(-20, 20)))
    mb.add_operator("MEAN", [x, axes], [m], options("ReducerOptions", keep_dims=False), version=2)
    wt = mb.add_tensor("w", [units, c], "int8", scale=w_s, zero_point=0, data=rng.integers(-127, 128, (units, c)))
    inputs = [m, wt]
    if seed % 2:
        inputs.append(
            mb.add_tensor("b", [units], "int32", scale=[mean_s * s for s in w_s], data=rng.integers(-500, 500, units))
        )
    y = mb.add_tensor("y", [1, units], "int8", scale=out_s, zero_point=int(rng.integers(-30, 30)))
    mb.add_operator(
        "FULLY_CONNECTED", inputs, [y], options("FullyConnectedOptions", fused_activation_function="NONE"), version=5
    )
    return mb.build([x], [y])


def pool_quantize_model(seed: int) -> bytes:
    """MAX_POOL_2D, RESHAPE, QUANTIZE int8 -> int8.

    Without a fused activation: tosa-converter-for-tflite 2026.2.0 drops MAX_POOL_2D's fused RELU
    (no clamp in its TOSA, so TOSA and TFLite differ); test/passes/legalize_tosa/layout.mlir covers
    a clamp after max_pool2d.
    """
    rng = np.random.default_rng(seed)
    h, w, c = int(rng.integers(4, 10)), int(rng.integers(4, 10)), int(rng.integers(1, 6))
    s, zp = _scale(rng, 0.01, 0.1), int(rng.integers(-100, 100))
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, h, w, c], "int8", scale=s, zero_point=zp)
    p = mb.add_tensor("p", [1, -(-h // 2), -(-w // 2), c], "int8", scale=s, zero_point=zp)
    mb.add_operator(
        "MAX_POOL_2D",
        [x],
        [p],
        options(
            "Pool2DOptions",
            padding="SAME",
            stride_h=2,
            stride_w=2,
            filter_height=2,
            filter_width=2,
            fused_activation_function="NONE",
        ),
    )
    flat = [1, -(-h // 2) * -(-w // 2) * c]
    shape = mb.add_tensor("shape", [2], "int32", data=np.array(flat, np.int32))
    r = mb.add_tensor("r", flat, "int8", scale=s, zero_point=zp)
    mb.add_operator("RESHAPE", [p, shape], [r], options("ReshapeOptions", new_shape=flat))
    y = mb.add_tensor(
        "y", flat, "int8", scale=float(np.float32(s * rng.uniform(0.3, 3))), zero_point=int(rng.integers(-50, 50))
    )
    mb.add_operator("QUANTIZE", [r], [y])
    return mb.build([x], [y])


@requires_tools
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("depthwise", [False, True], ids=["conv2d", "depthwise"])
def test_convolution_models(seed: int, depthwise: bool):
    ops = check_model(conv_model(seed, depthwise), seeds=(0, 1), min_distinct=2)
    assert ops == ["nn.depthwise_conv2d" if depthwise else "nn.conv2d"]


@requires_tools
@pytest.mark.parametrize("seed", range(6))
def test_add_models(seed: int):
    assert check_model(add_model(seed), seeds=(0, 1), min_distinct=2) == ["nn.add"]


@requires_tools
@pytest.mark.parametrize("seed", range(4))
def test_mean_fully_connected_models(seed: int):
    assert check_model(mean_fc_model(seed), seeds=(0, 1), min_distinct=2) == ["nn.mean", "nn.fully_connected"]


@requires_tools
@pytest.mark.parametrize("seed", range(4))
def test_pool_reshape_quantize_models(seed: int):
    ops = check_model(pool_quantize_model(seed), seeds=(0,), min_distinct=2)
    # The reshape moves below the rescale (nn_canonicalization.fold_reshapes).
    assert ops == ["nn.pool2d", "nn.rescale", "nn.reshape"]


REQUIRED = {
    "resnet8_nosoftmax": ["nn.conv2d"] * 3
    + ["nn.add"]
    + (["nn.conv2d"] * 3 + ["nn.add"]) * 2
    + ["nn.mean", "nn.fully_connected"],
    "ds_cnn_kws_nosoftmax": ["nn.conv2d"]
    + ["nn.depthwise_conv2d", "nn.conv2d"] * 4
    + ["nn.mean", "nn.fully_connected"],
}


@requires_tools
@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_required_models(name: str):
    """The issue's acceptance test: the TOSA-imported program computes what the TFLite file does."""
    ops = check_model((MODELS / f"{name}.tflite").read_bytes(), seeds=tuple(range(10)))
    assert ops == REQUIRED[name]


@requires_tools
def test_import_tflite_via_tosa():
    module = import_tflite_via_tosa((MODELS / "ds_cnn_kws_nosoftmax.tflite").read_bytes())
    assert [op.name for op in module.walk() if op.name.startswith("nn.")] == REQUIRED["ds_cnn_kws_nosoftmax"]


def test_recovered_scales_are_exact_doubles():
    """A TOSA multiplier's 31 significant bits survive as an `f64` scale."""
    quant = nn.QuantAttr(1518500250 * 2.0**-38, 0, exact=True)
    assert quant.scales[0] == 1518500250 * 2.0**-38
    assert activation_range("RELU", quant.scales[0], 0) == (0, 127)
