"""Bit-exactness of cascade.interpreter.kernels against LiteRT's reference kernels.

Every property test builds a single-op int8 TFLite model with ``tflite_writer``, runs it with
LiteRT's ``BUILTIN_REF`` resolver and compares with our numpy kernel element for element.  Each
example must also be non-degenerate (several distinct output values); parameter ranges are
chosen so that almost all examples are, and the rest are discarded with ``assume``.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cascade.frontends.tflite_writer import ModelBuilder, options
from cascade.interpreter import kernels as K
from cascade.interpreter import quantization as Q
from cascade.interpreter.litert import DEFAULT
from cascade.interpreter.litert import invoke as run_reference

# Deterministic by default; CASCADE_KERNEL_EXAMPLES / CASCADE_KERNEL_RANDOM=1 allow a long,
# randomised soak run (e.g. CASCADE_KERNEL_EXAMPLES=2000 CASCADE_KERNEL_RANDOM=1).
SETTINGS = settings(
    max_examples=int(os.environ.get("CASCADE_KERNEL_EXAMPLES", "100")),
    deadline=None,
    derandomize=os.environ.get("CASCADE_KERNEL_RANDOM", "0") != "1",
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def log_uniform(draw, lo: float, hi: float) -> float:
    """A float32 value log-uniformly distributed in [lo, hi]; one draw in four is snapped to a
    power of two, so that effective multipliers are dyadic and rounding ties actually occur
    (they discriminate between TFLite's rounding variants)."""
    e = draw(st.floats(math.log(lo), math.log(hi), allow_nan=False, allow_infinity=False))
    if draw(st.integers(0, 3)) == 0:
        return pow2(math.exp(e))
    return float(np.float32(math.exp(e)))


def pow2(x: float) -> float:
    return float(2.0 ** round(math.log2(x)))


def rng_for(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def rand_int8(rng: np.random.Generator, shape, lo: int = -128, hi: int = 127) -> np.ndarray:
    return rng.integers(lo, hi + 1, size=shape, dtype=np.int64).astype(np.int8)


def output_scale_for(draw, activation: str) -> float:
    """An output scale for which the fused activation range spans many quantisation levels."""
    if activation == "RELU6":
        return log_uniform(draw, 6.0 / 240, 6.0 / 24)
    if activation == "RELU_N1_TO_1":
        return log_uniform(draw, 2.0 / 240, 2.0 / 24)
    return log_uniform(draw, 1e-3, 0.5)


def check(ours: np.ndarray, ref: np.ndarray, *, min_distinct: int = 3) -> None:
    """Bit-exact comparison, then discard degenerate examples."""
    assert ours.dtype == ref.dtype, (ours.dtype, ref.dtype)
    assert ours.shape == ref.shape, (ours.shape, ref.shape)
    if not np.array_equal(ours, ref):
        diff = np.argwhere(ours != ref)
        first = tuple(diff[0])
        raise AssertionError(
            f"{len(diff)}/{ours.size} mismatches; first at {first}: ours={ours[first]} ref={ref[first]}"
        )
    assume(len(np.unique(ref)) >= min(min_distinct, ref.size))


def qparams(draw, *, zp: bool = True):
    scale = log_uniform(draw, 1e-3, 0.5)
    zero_point = draw(st.integers(-128, 127)) if zp else 0
    return scale, zero_point


def conv_weight_scales(draw, n: int, per_channel: bool, base: float) -> list[float]:
    """Weight scales around ``base``; all powers of two in one draw out of four."""
    dyadic = draw(st.integers(0, 3)) == 0
    if dyadic:
        base = pow2(base)
    if not per_channel:
        return [float(np.float32(base))]
    if dyadic:
        jitter = draw(st.lists(st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0]), min_size=n, max_size=n))
    else:
        jitter = draw(st.lists(st.floats(0.25, 4.0), min_size=n, max_size=n))
    return [float(np.float32(base * j)) for j in jitter]


def bias_data(rng, n: int, in_scale: float, w_scales: list[float], acc_std: float):
    """Random int32 biases (about one accumulator standard deviation) and their scales."""
    b = rng.normal(0.0, acc_std, size=n).round().astype(np.int64)
    scales = w_scales if len(w_scales) == n else w_scales * n
    bias_scales = [float(np.float32(in_scale * s)) for s in scales]
    return np.clip(b, -(1 << 24), 1 << 24).astype(np.int32), bias_scales


# ---------------------------------------------------------------------------------------------
# worked examples for the integer primitives (values derived by hand)
# ---------------------------------------------------------------------------------------------


def test_quantize_multiplier_worked_examples():
    # 0.5 = 0.5 * 2**0 -> q = 0.5 * 2**31 = 2**30, shift 0
    assert Q.quantize_multiplier(0.5) == (1 << 30, 0)
    # 1.0 = 0.5 * 2**1
    assert Q.quantize_multiplier(1.0) == (1 << 30, 1)
    # 0.75 = 0.75 * 2**0 -> 0.75 * 2**31 = 1610612736
    assert Q.quantize_multiplier(0.75) == (1610612736, 0)
    # 0.1 = 0.8 * 2**-3 -> 0.8 * 2**31 = 1717986918.4 -> 1717986918
    assert Q.quantize_multiplier(0.1) == (1717986918, -3)
    # 3.0 = 0.75 * 2**2
    assert Q.quantize_multiplier(3.0) == (1610612736, 2)
    # -0.5 keeps the sign in the multiplier
    assert Q.quantize_multiplier(-0.5) == (-(1 << 30), 0)
    assert Q.quantize_multiplier(0.0) == (0, 0)
    # 1 - 2**-33: q * 2**31 = 2**31 - 0.25 rounds to 2**31 -> halved, shift + 1
    assert Q.quantize_multiplier(1.0 - 2.0**-33) == (1 << 30, 1)
    # q*2**31 exactly half-way (x.5) rounds away from zero: 0.5 + 2**-32 -> 2**30 + 0.5
    assert Q.quantize_multiplier(0.5 + 2.0**-32) == ((1 << 30) + 1, 0)
    # 2**-40 = 0.5 * 2**-39: shift < -31 flushes to zero
    assert Q.quantize_multiplier(2.0**-40) == (0, 0)
    # 2**-32 = 0.5 * 2**-31 is still representable
    assert Q.quantize_multiplier(2.0**-32) == (1 << 30, -31)
    # single-rounding builds saturate shifts above 30
    assert Q.quantize_multiplier(2.0**40, single_rounding=True) == ((1 << 31) - 1, 30)
    assert Q.quantize_multiplier(2.0**40) == (1 << 30, 41)


def test_multiply_by_quantized_multiplier_worked_examples():
    mbqm = Q.multiply_by_quantized_multiplier
    half = 1 << 30  # 0.5 in Q0.31
    # 100 * 0.5 = 50 exactly
    assert mbqm(100, half, 0) == 50
    # 5 * 0.5 = 2.5: the doubling high mul rounds ties up -> 3
    assert mbqm(5, half, 0) == 3
    # -5 * 0.5 = -2.5: nudge 1 - 2**30 then truncation -> -2 (ties toward +inf)
    assert mbqm(-5, half, 0) == -2
    # 7 * 0.5 * 2**-1 = 1.75: high mul gives 4 (3.5 -> 4), /2 -> 2
    assert mbqm(7, half, -1) == 2
    # double rounding: 3 * 0.5 * 2**-2 = 0.375; high mul 1.5 -> 2, then 2/4 = 0.5 -> 1
    assert mbqm(3, half, -2) == 1
    # ... while single rounding gives round(0.375) = 0
    assert mbqm(3, half, -2, single_rounding=True) == 0
    # RoundingDivideByPOT rounds half away from zero: -6 * 0.5 = -3 -> -3/2 = -1.5 -> -2
    assert mbqm(-6, half, -1) == -2
    # left shift: 3 * 0.75 * 2**2 = 9
    assert mbqm(3, 1610612736, 2) == 9
    # SRDHM saturation corner: INT32_MIN * INT32_MIN
    assert Q.saturating_rounding_doubling_high_mul(-(1 << 31), -(1 << 31)) == Q.INT32_MAX
    # vectorised, per-channel broadcast on the last axis
    out = mbqm(np.array([[10, 10], [-10, -10]]), np.array([half, 1610612736]), np.array([0, 1]))
    assert out.tolist() == [[5, 15], [-5, -15]]


def test_rounding_divide_by_pot_worked_examples():
    rdbp = Q.rounding_divide_by_pot
    assert rdbp(5, 1) == 3  # 2.5 -> 3
    assert rdbp(-5, 1) == -3  # -2.5 -> -3 (away from zero)
    assert rdbp(6, 2) == 2  # 1.5 -> 2
    assert rdbp(-6, 2) == -2  # -1.5 -> -2
    assert rdbp(5, 2) == 1  # 1.25 -> 1
    assert rdbp(-5, 2) == -1
    assert rdbp(7, 0) == 7


def test_activation_range_worked_examples():
    # RELU6 with scale 6/255, zp -128: 0 -> -128, 6 -> -128 + 255 = 127
    assert Q.activation_range("RELU6", 6.0 / 255, -128) == (-128, 127)
    # RELU with scale 0.1, zp 10: 0 -> 10
    assert Q.activation_range("RELU", 0.1, 10) == (10, 127)
    # RELU_N1_TO_1 with scale 0.05, zp 0: -1 -> -20, 1 -> 20
    assert Q.activation_range("RELU_N1_TO_1", 0.05, 0) == (-20, 20)
    # RELU6 with scale 0.02, zp -100: 6/0.02 = 300 -> 200 clipped to 127
    assert Q.activation_range("RELU6", 0.02, -100) == (-100, 127)
    assert Q.activation_range("NONE", 0.02, -100) == (-128, 127)


def _quantize_model(in_s, in_zp, out_s, out_zp, shape):
    mb = ModelBuilder()
    x = mb.add_tensor("x", shape, "int8", scale=in_s, zero_point=in_zp)
    y = mb.add_tensor("y", shape, "int8", scale=out_s, zero_point=out_zp)
    mb.add_operator("QUANTIZE", [x], [y])
    return mb.build([x], [y])


def test_litert_uses_double_rounding():
    """LiteRT's wheel is built without TFLITE_SINGLE_ROUNDING.

    QUANTIZE with in/out scale ratio 1/8 has multiplier (2**30, -2); input 3 -> 0.375 exactly,
    which double rounding turns into 1 and single rounding into 0 (see the worked example).
    """
    x = np.array([3, -3, 1, 2, 5, -5, 11, 12], dtype=np.int8).reshape(1, 8)
    ref = run_reference(_quantize_model(0.125, 0, 1.0, 0, [1, 8]), [x]).outputs[0]
    # Double rounding, by hand (SRDHM = x/2 with ties toward +inf, then /4 ties away from 0):
    #   3 -> 1.5 -> 2 -> 0.5 -> 1      -3 -> -1.5 -> -1 -> -0.25 -> 0
    #   1 -> 0.5 -> 1 -> 0.25 -> 0      2 -> 1 -> 0.25 -> 0
    #   5 -> 2.5 -> 3 -> 0.75 -> 1     -5 -> -2.5 -> -2 -> -0.5 -> -1
    #  11 -> 5.5 -> 6 -> 1.5 -> 2      12 -> 6 -> 1.5 -> 2
    # Single rounding, floor((x * 2**30 + 2**32) / 2**33) = floor(x/8 + 1/2):
    #   [0, 0, 0, 0, 1, -1, 1, 2]  (differs at x = 3 and x = 11)
    assert ref.tolist() == [[1, 0, 0, 0, 1, -1, 2, 2]]
    ours = K.quantize(x, input_scale=0.125, input_zero_point=0, output_scale=1.0, output_zero_point=0)
    np.testing.assert_array_equal(ours, ref)


# ---------------------------------------------------------------------------------------------
# convolutions
# ---------------------------------------------------------------------------------------------


@st.composite
def conv_case(draw, depthwise: bool = False):
    n = draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.sampled_from([1, 1, 2, 3])), draw(st.sampled_from([1, 1, 2, 3]))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    eff_h, eff_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    lo_h = eff_h if padding == "VALID" else 1
    lo_w = eff_w if padding == "VALID" else 1
    h = draw(st.integers(lo_h, lo_h + 10))
    w = draw(st.integers(lo_w, lo_w + 10))
    cin = draw(st.integers(1, 8))
    mult = draw(st.integers(1, 3)) if depthwise else 1
    cout = cin * mult if depthwise else draw(st.integers(1, 8))
    activation = draw(st.sampled_from(ACTIVATIONS))
    per_channel = draw(st.booleans())
    # LiteRT's int8 CONV_2D requires a bias tensor (conv.cc: has_bias); depthwise does not.
    with_bias = draw(st.integers(0, 3)) > 0 if depthwise else True
    in_s, in_zp = qparams(draw)
    out_s = output_scale_for(draw, activation)
    out_zp = draw(st.integers(-100, 100))
    target = draw(st.floats(4.0, 60.0))
    taps = kh * kw * (1 if depthwise else cin)
    acc_std = math.sqrt(taps) * 74.0 * 74.0
    base_ws = target * out_s / (acc_std * in_s)
    w_scales = conv_weight_scales(draw, cout, per_channel, base_ws)
    seed = draw(st.integers(0, 2**32 - 1))
    return dict(
        n=n,
        h=h,
        w=w,
        cin=cin,
        cout=cout,
        mult=mult,
        kh=kh,
        kw=kw,
        stride=(sh, sw),
        dilation=(dh, dw),
        padding=padding,
        activation=activation,
        in_s=in_s,
        in_zp=in_zp,
        out_s=out_s,
        out_zp=out_zp,
        w_scales=w_scales,
        with_bias=with_bias,
        acc_std=acc_std,
        seed=seed,
    )


@given(conv_case())
@SETTINGS
def test_conv2d(c):
    rng = rng_for(c["seed"])
    x = rand_int8(rng, (c["n"], c["h"], c["w"], c["cin"]))
    wts = rand_int8(rng, (c["cout"], c["kh"], c["kw"], c["cin"]), -127, 127)
    bias, bias_scales = bias_data(rng, c["cout"], c["in_s"], c["w_scales"], c["acc_std"])
    oh = K.conv_output_size(c["padding"], c["h"], c["kh"], c["stride"][0], c["dilation"][0])
    ow = K.conv_output_size(c["padding"], c["w"], c["kw"], c["stride"][1], c["dilation"][1])

    mb = ModelBuilder()
    ti = mb.add_tensor("x", x.shape, "int8", scale=c["in_s"], zero_point=c["in_zp"])
    tw = mb.add_tensor("w", wts.shape, "int8", scale=c["w_scales"], zero_point=0, data=wts)
    inputs = [ti, tw]
    if c["with_bias"]:
        inputs.append(mb.add_tensor("b", bias.shape, "int32", scale=bias_scales, zero_point=0, data=bias))
    to = mb.add_tensor("y", (c["n"], oh, ow, c["cout"]), "int8", scale=c["out_s"], zero_point=c["out_zp"])
    mb.add_operator(
        "CONV_2D",
        inputs,
        [to],
        options(
            "Conv2DOptions",
            padding=c["padding"],
            stride_h=c["stride"][0],
            stride_w=c["stride"][1],
            dilation_h_factor=c["dilation"][0],
            dilation_w_factor=c["dilation"][1],
            fused_activation_function=c["activation"],
        ),
        version=3,
    )
    ref = run_reference(mb.build([ti], [to]), [x]).outputs[0]

    pad = K.explicit_padding(c["padding"], (c["h"], c["w"]), (c["kh"], c["kw"]), c["stride"], c["dilation"])
    ours = K.conv2d(
        x,
        wts,
        bias if c["with_bias"] else None,
        input_scale=c["in_s"],
        input_zero_point=c["in_zp"],
        weight_scales=c["w_scales"],
        output_scale=c["out_s"],
        output_zero_point=c["out_zp"],
        stride=c["stride"],
        dilation=c["dilation"],
        padding=pad,
        activation=c["activation"],
    )
    check(ours, ref)


@given(conv_case(depthwise=True))
@SETTINGS
def test_depthwise_conv2d(c):
    rng = rng_for(c["seed"])
    x = rand_int8(rng, (c["n"], c["h"], c["w"], c["cin"]))
    wts = rand_int8(rng, (1, c["kh"], c["kw"], c["cout"]), -127, 127)
    bias, bias_scales = bias_data(rng, c["cout"], c["in_s"], c["w_scales"], c["acc_std"])
    oh = K.conv_output_size(c["padding"], c["h"], c["kh"], c["stride"][0], c["dilation"][0])
    ow = K.conv_output_size(c["padding"], c["w"], c["kw"], c["stride"][1], c["dilation"][1])

    mb = ModelBuilder()
    ti = mb.add_tensor("x", x.shape, "int8", scale=c["in_s"], zero_point=c["in_zp"])
    tw = mb.add_tensor("w", wts.shape, "int8", scale=c["w_scales"], zero_point=0, quantized_dimension=3, data=wts)
    inputs = [ti, tw]
    if c["with_bias"]:
        inputs.append(mb.add_tensor("b", bias.shape, "int32", scale=bias_scales, zero_point=0, data=bias))
    to = mb.add_tensor("y", (c["n"], oh, ow, c["cout"]), "int8", scale=c["out_s"], zero_point=c["out_zp"])
    mb.add_operator(
        "DEPTHWISE_CONV_2D",
        inputs,
        [to],
        options(
            "DepthwiseConv2DOptions",
            padding=c["padding"],
            stride_h=c["stride"][0],
            stride_w=c["stride"][1],
            depth_multiplier=c["mult"],
            dilation_h_factor=c["dilation"][0],
            dilation_w_factor=c["dilation"][1],
            fused_activation_function=c["activation"],
        ),
        version=3,
    )
    ref = run_reference(mb.build([ti], [to]), [x]).outputs[0]

    pad = K.explicit_padding(c["padding"], (c["h"], c["w"]), (c["kh"], c["kw"]), c["stride"], c["dilation"])
    ours = K.depthwise_conv2d(
        x,
        wts,
        bias if c["with_bias"] else None,
        input_scale=c["in_s"],
        input_zero_point=c["in_zp"],
        weight_scales=c["w_scales"],
        output_scale=c["out_s"],
        output_zero_point=c["out_zp"],
        stride=c["stride"],
        dilation=c["dilation"],
        padding=pad,
        depth_multiplier=c["mult"],
        activation=c["activation"],
    )
    check(ours, ref)


@st.composite
def tconv_case(draw):
    n = draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    h, w = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    cin, cout = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    if padding == "SAME":
        oh, ow = h * sh, w * sw
    else:
        oh, ow = (h - 1) * sh + kh, (w - 1) * sw + kw
    activation = draw(st.sampled_from(ACTIVATIONS))
    per_channel = draw(st.booleans())
    with_bias = draw(st.booleans())
    in_s, in_zp = qparams(draw)
    out_s = output_scale_for(draw, activation)
    out_zp = draw(st.integers(-100, 100))
    target = draw(st.floats(4.0, 60.0))
    taps = max(1, (kh // sh) * (kw // sw)) * cin
    acc_std = math.sqrt(taps) * 74.0 * 74.0
    w_scales = conv_weight_scales(draw, cout, per_channel, target * out_s / (acc_std * in_s))
    seed = draw(st.integers(0, 2**32 - 1))
    return dict(
        n=n,
        h=h,
        w=w,
        oh=oh,
        ow=ow,
        cin=cin,
        cout=cout,
        kh=kh,
        kw=kw,
        stride=(sh, sw),
        padding=padding,
        activation=activation,
        in_s=in_s,
        in_zp=in_zp,
        out_s=out_s,
        out_zp=out_zp,
        w_scales=w_scales,
        with_bias=with_bias,
        acc_std=acc_std,
        seed=seed,
    )


@given(tconv_case())
@SETTINGS
def test_transpose_conv(c):
    rng = rng_for(c["seed"])
    x = rand_int8(rng, (c["n"], c["h"], c["w"], c["cin"]))
    wts = rand_int8(rng, (c["cout"], c["kh"], c["kw"], c["cin"]), -127, 127)
    bias, bias_scales = bias_data(rng, c["cout"], c["in_s"], c["w_scales"], c["acc_std"])
    out_shape = np.array([c["n"], c["oh"], c["ow"], c["cout"]], dtype=np.int32)

    mb = ModelBuilder()
    ts = mb.add_tensor("shape", [4], "int32", data=out_shape)
    tw = mb.add_tensor("w", wts.shape, "int8", scale=c["w_scales"], zero_point=0, data=wts)
    ti = mb.add_tensor("x", x.shape, "int8", scale=c["in_s"], zero_point=c["in_zp"])
    inputs = [ts, tw, ti]
    if c["with_bias"]:
        inputs.append(mb.add_tensor("b", bias.shape, "int32", scale=bias_scales, zero_point=0, data=bias))
    to = mb.add_tensor("y", tuple(out_shape), "int8", scale=c["out_s"], zero_point=c["out_zp"])
    mb.add_operator(
        "TRANSPOSE_CONV",
        inputs,
        [to],
        options(
            "TransposeConvOptions",
            padding=c["padding"],
            stride_h=c["stride"][0],
            stride_w=c["stride"][1],
            fused_activation_function=c["activation"],
        ),
        version=4,
    )
    ref = run_reference(mb.build([ti], [to]), [x]).outputs[0]

    pad = K.transpose_conv_padding(c["padding"], (c["oh"], c["ow"]), (c["kh"], c["kw"]), c["stride"])
    ours = K.transpose_conv(
        x,
        wts,
        bias if c["with_bias"] else None,
        output_shape=out_shape,
        input_scale=c["in_s"],
        input_zero_point=c["in_zp"],
        weight_scales=c["w_scales"],
        output_scale=c["out_s"],
        output_zero_point=c["out_zp"],
        stride=c["stride"],
        padding=pad,
        activation=c["activation"],
    )
    check(ours, ref)


@st.composite
def fc_case(draw):
    batch_shape = draw(st.sampled_from([(1,), (3,), (1, 2, 2), (2, 3)]))
    depth = draw(st.integers(1, 64))
    units = draw(st.integers(1, 16))
    activation = draw(st.sampled_from(ACTIVATIONS))
    per_channel = draw(st.booleans())
    with_bias = draw(st.integers(0, 3)) > 0
    in_s, in_zp = qparams(draw)
    out_s = output_scale_for(draw, activation)
    out_zp = draw(st.integers(-100, 100))
    target = draw(st.floats(4.0, 60.0))
    acc_std = math.sqrt(depth) * 74.0 * 74.0
    w_scales = conv_weight_scales(draw, units, per_channel, target * out_s / (acc_std * in_s))
    # per-tensor weights may carry a zero point (applied by TFLite); per-channel ones may not
    w_zp = 0 if per_channel else draw(st.sampled_from([0, 0, 3, -7]))
    seed = draw(st.integers(0, 2**32 - 1))
    return dict(
        batch_shape=batch_shape,
        depth=depth,
        units=units,
        activation=activation,
        in_s=in_s,
        in_zp=in_zp,
        out_s=out_s,
        out_zp=out_zp,
        w_scales=w_scales,
        w_zp=w_zp,
        with_bias=with_bias,
        acc_std=acc_std,
        seed=seed,
    )


@given(fc_case())
@SETTINGS
def test_fully_connected(c):
    rng = rng_for(c["seed"])
    x = rand_int8(rng, (*c["batch_shape"], c["depth"]))
    wts = rand_int8(rng, (c["units"], c["depth"]), -127, 127)
    bias, bias_scales = bias_data(rng, c["units"], c["in_s"], c["w_scales"], c["acc_std"])
    batch = x.size // c["depth"]

    mb = ModelBuilder()
    ti = mb.add_tensor("x", x.shape, "int8", scale=c["in_s"], zero_point=c["in_zp"])
    tw = mb.add_tensor("w", wts.shape, "int8", scale=c["w_scales"], zero_point=c["w_zp"], data=wts)
    inputs = [ti, tw]
    if c["with_bias"]:
        inputs.append(mb.add_tensor("b", bias.shape, "int32", scale=bias_scales, zero_point=0, data=bias))
    to = mb.add_tensor("y", (batch, c["units"]), "int8", scale=c["out_s"], zero_point=c["out_zp"])
    mb.add_operator(
        "FULLY_CONNECTED",
        inputs,
        [to],
        options("FullyConnectedOptions", fused_activation_function=c["activation"], keep_num_dims=False),
        version=5,
    )
    ref = run_reference(mb.build([ti], [to]), [x]).outputs[0]
    ours = K.fully_connected(
        x,
        wts,
        bias if c["with_bias"] else None,
        input_scale=c["in_s"],
        input_zero_point=c["in_zp"],
        weight_scales=c["w_scales"],
        output_scale=c["out_s"],
        output_zero_point=c["out_zp"],
        weight_zero_point=c["w_zp"],
        activation=c["activation"],
    )
    check(ours, ref)


def test_fully_connected_rounds_in_double():
    """LiteRT's reference int8 FULLY_CONNECTED scales with round(double(acc) * eff) rather than
    the fixed-point multiplier used by CONV_2D.  With eff = 0.5 * 0.5 / 1 = 0.25 and acc = x:
    x = 1 -> 0.25 -> 0 (the double-rounding multiplier would give 1), x = 2 -> 0.5 -> 1,
    x = -2 -> -1, x = 10 -> 2.5 -> 3, x = -10 -> -3."""
    x = np.arange(-10, 11, dtype=np.int8).reshape(21, 1)
    expected = [-3, -2, -2, -2, -2, -1, -1, -1, -1, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3]
    for w_scales in ([0.5], [0.5, 0.5]):
        units = len(w_scales)
        w = np.ones((units, 1), dtype=np.int8)
        mb = ModelBuilder()
        ti = mb.add_tensor("x", x.shape, "int8", scale=0.5, zero_point=0)
        tw = mb.add_tensor("w", w.shape, "int8", scale=w_scales, zero_point=0, data=w)
        to = mb.add_tensor("y", (21, units), "int8", scale=1.0, zero_point=0)
        mb.add_operator(
            "FULLY_CONNECTED", [ti, tw], [to], options("FullyConnectedOptions", keep_num_dims=False), version=5
        )
        ref = run_reference(mb.build([ti], [to]), [x]).outputs[0]
        assert ref[:, 0].tolist() == expected
        ours = K.fully_connected(
            x,
            w,
            None,
            input_scale=0.5,
            input_zero_point=0,
            weight_scales=w_scales,
            output_scale=1.0,
            output_zero_point=0,
        )
        np.testing.assert_array_equal(ours, ref)


def test_conv_family_uses_fixed_point_multiplier():
    """CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV do use the double-rounding fixed-point
    multiplier: with eff = 0.25, x = 1 -> SRDHM 0.5 -> 1 -> RoundingDivideByPOT(1, 1) = 1."""
    x = np.arange(-10, 11, dtype=np.int8).reshape(1, 1, 21, 1)
    double_rounded = Q.multiply_by_quantized_multiplier(x.ravel(), 1 << 30, -1).tolist()
    assert double_rounded[11] == 1  # x = 1
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"):
        mb = ModelBuilder()
        ti = mb.add_tensor("x", x.shape, "int8", scale=0.5, zero_point=0)
        tw = mb.add_tensor("w", [1, 1, 1, 1], "int8", scale=[0.5], zero_point=0, data=np.ones((1, 1, 1, 1), np.int8))
        tb = mb.add_tensor("b", [1], "int32", scale=[0.25], zero_point=0, data=np.zeros(1, np.int32))
        to = mb.add_tensor("y", x.shape, "int8", scale=1.0, zero_point=0)
        if op == "CONV_2D":
            mb.add_operator(
                op, [ti, tw, tb], [to], options("Conv2DOptions", padding="VALID", stride_w=1, stride_h=1), version=3
            )
        elif op == "DEPTHWISE_CONV_2D":
            mb.add_operator(
                op,
                [ti, tw, tb],
                [to],
                options("DepthwiseConv2DOptions", padding="VALID", stride_w=1, stride_h=1, depth_multiplier=1),
                version=3,
            )
        else:
            ts = mb.add_tensor("s", [4], "int32", data=np.array(x.shape, np.int32))
            mb.add_operator(
                op,
                [ts, tw, ti, tb],
                [to],
                options("TransposeConvOptions", padding="VALID", stride_w=1, stride_h=1),
                version=4,
            )
        ref = run_reference(mb.build([ti], [to]), [x]).outputs[0]
        assert ref.ravel().tolist() == double_rounded, op


# ---------------------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------------------


@st.composite
def pool_case(draw):
    n = draw(st.integers(1, 2))
    fh, fw = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    lo_h = fh if padding == "VALID" else 1
    lo_w = fw if padding == "VALID" else 1
    h, w = draw(st.integers(lo_h, lo_h + 9)), draw(st.integers(lo_w, lo_w + 9))
    c = draw(st.integers(1, 6))
    activation = draw(st.sampled_from(ACTIVATIONS))
    s = output_scale_for(draw, activation)
    zp = draw(st.integers(-60, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    return dict(
        n=n,
        h=h,
        w=w,
        c=c,
        filter=(fh, fw),
        stride=(sh, sw),
        padding=padding,
        activation=activation,
        s=s,
        zp=zp,
        seed=seed,
    )


def _run_pool(op: str, c, x):
    oh = K.conv_output_size(c["padding"], c["h"], c["filter"][0], c["stride"][0])
    ow = K.conv_output_size(c["padding"], c["w"], c["filter"][1], c["stride"][1])
    mb = ModelBuilder()
    ti = mb.add_tensor("x", x.shape, "int8", scale=c["s"], zero_point=c["zp"])
    to = mb.add_tensor("y", (c["n"], oh, ow, c["c"]), "int8", scale=c["s"], zero_point=c["zp"])
    mb.add_operator(
        op,
        [ti],
        [to],
        options(
            "Pool2DOptions",
            padding=c["padding"],
            stride_h=c["stride"][0],
            stride_w=c["stride"][1],
            filter_height=c["filter"][0],
            filter_width=c["filter"][1],
            fused_activation_function=c["activation"],
        ),
        version=2,
    )
    return run_reference(mb.build([ti], [to]), [x]).outputs[0]


@given(pool_case())
@SETTINGS
def test_max_pool2d(c):
    x = rand_int8(rng_for(c["seed"]), (c["n"], c["h"], c["w"], c["c"]))
    ref = _run_pool("MAX_POOL_2D", c, x)
    pad = K.explicit_padding(c["padding"], (c["h"], c["w"]), c["filter"], c["stride"])
    ours = K.max_pool2d(
        x,
        filter_size=c["filter"],
        stride=c["stride"],
        padding=pad,
        activation=c["activation"],
        output_scale=c["s"],
        output_zero_point=c["zp"],
    )
    check(ours, ref)


@given(pool_case())
@SETTINGS
def test_avg_pool2d(c):
    x = rand_int8(rng_for(c["seed"]), (c["n"], c["h"], c["w"], c["c"]))
    ref = _run_pool("AVERAGE_POOL_2D", c, x)
    pad = K.explicit_padding(c["padding"], (c["h"], c["w"]), c["filter"], c["stride"])
    ours = K.avg_pool2d(
        x,
        filter_size=c["filter"],
        stride=c["stride"],
        padding=pad,
        activation=c["activation"],
        output_scale=c["s"],
        output_zero_point=c["zp"],
    )
    check(ours, ref)


# ---------------------------------------------------------------------------------------------
# element-wise binary ops
# ---------------------------------------------------------------------------------------------


@st.composite
def broadcast_shapes(draw):
    rank = draw(st.integers(1, 4))
    full = [draw(st.integers(1, 6)) for _ in range(rank)]
    mode = draw(st.sampled_from(["same", "same", "bcast1", "bcast2", "both"]))

    def squash(shape):
        out = [d if draw(st.booleans()) else 1 for d in shape]
        drop = draw(st.integers(0, len(out) - 1))
        return out[drop:]

    if mode == "same":
        return full, list(full)
    if mode == "bcast1":
        return squash(full), list(full)
    if mode == "bcast2":
        return list(full), squash(full)
    return squash(full), squash(full)


@st.composite
def binary_case(draw, op: str):
    s1, s2 = draw(broadcast_shapes())
    activation = draw(st.sampled_from(ACTIVATIONS))
    in1_s, in1_zp = qparams(draw)
    in2_s, in2_zp = qparams(draw)
    if op == "MUL":
        spread = in1_s * in2_s * 74.0 * 74.0
    else:
        spread = (in1_s + in2_s) * 74.0
    if activation in ("RELU6", "RELU_N1_TO_1"):
        # Rescale the inputs so the real result spans a few times the activation range.
        out_s = output_scale_for(draw, activation)
        wanted = draw(st.floats(0.3, 3.0)) * (6.0 if activation == "RELU6" else 1.0)
        f = wanted / spread
        g = math.sqrt(f) if op == "MUL" else f
        in1_s, in2_s = float(np.float32(in1_s * g)), float(np.float32(in2_s * g))
    else:
        out_s = float(np.float32(spread / draw(st.floats(8.0, 80.0))))
    out_zp = draw(st.integers(-100, 100))
    seed = draw(st.integers(0, 2**32 - 1))
    return dict(
        s1=s1, s2=s2, activation=activation, in1=(in1_s, in1_zp), in2=(in2_s, in2_zp), out=(out_s, out_zp), seed=seed
    )


def _run_binary(op: str, c, x1, x2, opts):
    out_shape = np.broadcast_shapes(x1.shape, x2.shape)
    mb = ModelBuilder()
    t1 = mb.add_tensor("a", x1.shape, "int8", scale=c["in1"][0], zero_point=c["in1"][1])
    t2 = mb.add_tensor("b", x2.shape, "int8", scale=c["in2"][0], zero_point=c["in2"][1])
    to = mb.add_tensor("y", out_shape, "int8", scale=c["out"][0], zero_point=c["out"][1])
    mb.add_operator(op, [t1, t2], [to], opts, version=2)
    return run_reference(mb.build([t1, t2], [to]), [x1, x2]).outputs[0]


def _binary_kwargs(c):
    return dict(
        input1_scale=c["in1"][0],
        input1_zero_point=c["in1"][1],
        input2_scale=c["in2"][0],
        input2_zero_point=c["in2"][1],
        output_scale=c["out"][0],
        output_zero_point=c["out"][1],
        activation=c["activation"],
    )


@pytest.mark.parametrize(
    ("op", "fn", "table"),
    [
        ("ADD", K.add, "AddOptions"),
        ("SUB", K.sub, "SubOptions"),
        ("MUL", K.mul, "MulOptions"),
    ],
)
@given(data=st.data())
@SETTINGS
def test_binary_arithmetic(op, fn, table, data):
    c = data.draw(binary_case(op))
    rng = rng_for(c["seed"])
    x1, x2 = rand_int8(rng, c["s1"]), rand_int8(rng, c["s2"])
    ref = _run_binary(op, c, x1, x2, options(table, fused_activation_function=c["activation"]))
    ours = fn(x1, x2, **_binary_kwargs(c))
    check(ours, ref)


@pytest.mark.parametrize(("op", "fn"), [("MINIMUM", K.minimum), ("MAXIMUM", K.maximum)])
@given(
    shapes=broadcast_shapes(), q=st.tuples(st.floats(1e-3, 0.5), st.integers(-128, 127)), seed=st.integers(0, 2**32 - 1)
)
@SETTINGS
def test_minimum_maximum(op, fn, shapes, q, seed):
    rng = rng_for(seed)
    x1, x2 = rand_int8(rng, shapes[0]), rand_int8(rng, shapes[1])
    c = dict(in1=q, in2=q, out=q)
    ref = _run_binary(op, c, x1, x2, None)
    check(fn(x1, x2), ref)


# ---------------------------------------------------------------------------------------------
# reductions / shape ops
# ---------------------------------------------------------------------------------------------


@given(
    n=st.integers(1, 2),
    h=st.integers(1, 12),
    w=st.integers(1, 12),
    ch=st.integers(2, 8),
    keep_dims=st.booleans(),
    same_q=st.integers(0, 3),
    data=st.data(),
    seed=st.integers(0, 2**32 - 1),
)
@SETTINGS
def test_mean_hw(n, h, w, ch, keep_dims, same_q, data, seed):
    in_s, in_zp = qparams(data.draw)
    if same_q == 0:
        out_s, out_zp = in_s, in_zp
    else:
        out_s = float(np.float32(in_s * log_uniform(data.draw, 0.1, 4.0)))
        out_zp = data.draw(st.integers(-100, 100))
    rng = rng_for(seed)
    centers = rng.integers(-100, 100, size=ch)
    x = np.clip(centers + rng.integers(-40, 41, size=(n, h, w, ch)), -128, 127).astype(np.int8)
    out_shape = (n, 1, 1, ch) if keep_dims else (n, ch)
    mb = ModelBuilder()
    ti = mb.add_tensor("x", x.shape, "int8", scale=in_s, zero_point=in_zp)
    ta = mb.add_tensor("axis", [2], "int32", data=np.array([1, 2], dtype=np.int32))
    to = mb.add_tensor("y", out_shape, "int8", scale=out_s, zero_point=out_zp)
    mb.add_operator("MEAN", [ti, ta], [to], options("ReducerOptions", keep_dims=keep_dims), version=2)
    ref = run_reference(mb.build([ti], [to]), [x]).outputs[0]
    ours = K.mean_hw(
        x, input_scale=in_s, input_zero_point=in_zp, output_scale=out_s, output_zero_point=out_zp, keep_dims=keep_dims
    )
    check(ours, ref, min_distinct=2)


@given(
    shape=st.sampled_from([(1, 10), (3, 7), (2, 1, 1, 16), (1, 2, 3, 5), (1, 300)]),
    data=st.data(),
    seed=st.integers(0, 2**32 - 1),
)
@SETTINGS
def test_softmax(shape, data, seed):
    in_s = log_uniform(data.draw, 0.005, 0.5)
    in_zp = data.draw(st.integers(-128, 127))
    beta = data.draw(st.sampled_from([1.0, 1.0, 0.5, 2.0, 0.3]))
    rng = rng_for(seed)
    # logits spread so that a handful of classes dominate
    spread = data.draw(st.floats(2.0, 16.0)) / (in_s * beta)
    x = np.clip(in_zp + rng.normal(0, spread / 3, size=shape).round(), -128, 127).astype(np.int8)
    mb = ModelBuilder()
    ti = mb.add_tensor("x", shape, "int8", scale=in_s, zero_point=in_zp)
    to = mb.add_tensor("y", shape, "int8", scale=1.0 / 256, zero_point=-128)
    mb.add_operator("SOFTMAX", [ti], [to], options("SoftmaxOptions", beta=beta), version=2)
    ref = run_reference(mb.build([ti], [to]), [x]).outputs[0]
    ours = K.softmax(x, input_scale=in_s, beta=beta)
    check(ours, ref, min_distinct=2)


@given(
    shape=st.sampled_from([(1, 10), (3, 7), (2, 1, 1, 16), (1, 1000), (1, 2), (4, 333)]),
    data=st.data(),
    seed=st.integers(0, 2**32 - 1),
)
@SETTINGS
def test_softmax_lut_default_kernel(shape, data, seed):
    """``softmax_lut`` mirrors the default (optimised, x86) int8 kernel; compared against the
    BUILTIN resolver without the XNNPACK delegate.  Scales go down to 1e-9, which the reference
    kernel cannot prepare."""
    # One example in eight uses a scale the reference kernel cannot prepare; those outputs are
    # (correctly) uniform, so they are checked for exactness but then discarded as degenerate.
    tiny = data.draw(st.integers(0, 7)) == 0
    in_s = log_uniform(data.draw, 1e-9, 1e-7) if tiny else log_uniform(data.draw, 0.02, 0.5)
    in_zp = data.draw(st.integers(-128, 127))
    beta = data.draw(st.sampled_from([1.0, 1.0, 0.5, 2.0]))
    # logits with a real standard deviation of 1-5 (at most 40 quantisation steps)
    std_q = min(data.draw(st.floats(1.0, 5.0)) / (in_s * beta), 40.0)
    center = min(max(in_zp, -40), 40)
    x = np.clip(center + rng_for(seed).normal(0, std_q, size=shape).round(), -128, 127)
    x = x.astype(np.int8)
    mb = ModelBuilder()
    ti = mb.add_tensor("x", shape, "int8", scale=in_s, zero_point=in_zp)
    to = mb.add_tensor("y", shape, "int8", scale=1.0 / 256, zero_point=-128)
    mb.add_operator("SOFTMAX", [ti], [to], options("SoftmaxOptions", beta=beta), version=2)
    ref = run_reference(mb.build([ti], [to]), [x], DEFAULT).outputs[0]
    check(K.softmax_lut(x, input_scale=in_s, beta=beta), ref, min_distinct=2)


@given(
    shape=st.tuples(st.integers(1, 2), st.integers(1, 6), st.integers(1, 6), st.integers(1, 4)),
    pads=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=4, max_size=4),
    q=st.tuples(st.floats(1e-3, 0.5), st.integers(-128, 127)),
    seed=st.integers(0, 2**32 - 1),
)
@SETTINGS
def test_pad(shape, pads, q, seed):
    x = rand_int8(rng_for(seed), shape)
    paddings = np.array(pads, dtype=np.int32)
    out_shape = tuple(d + a + b for d, (a, b) in zip(shape, pads, strict=True))
    mb = ModelBuilder()
    ti = mb.add_tensor("x", shape, "int8", scale=q[0], zero_point=q[1])
    tp = mb.add_tensor("paddings", [4, 2], "int32", data=paddings)
    to = mb.add_tensor("y", out_shape, "int8", scale=q[0], zero_point=q[1])
    mb.add_operator("PAD", [ti, tp], [to], options("PadOptions"), version=2)
    ref = run_reference(mb.build([ti], [to]), [x]).outputs[0]
    check(K.pad(x, pads, output_zero_point=q[1]), ref)


@given(
    shape=st.sampled_from(
        [((1, 4, 4, 3), (1, 48)), ((2, 6), (3, 4)), ((1, 1, 1, 10), (10,)), ((1, 2, 3, 4), (1, 6, 4))]
    ),
    seed=st.integers(0, 2**32 - 1),
)
@SETTINGS
def test_reshape(shape, seed):
    in_shape, new_shape = shape
    x = rand_int8(rng_for(seed), in_shape)
    mb = ModelBuilder()
    ti = mb.add_tensor("x", in_shape, "int8", scale=0.1, zero_point=3)
    ts = mb.add_tensor("shape", [len(new_shape)], "int32", data=np.array(new_shape, dtype=np.int32))
    to = mb.add_tensor("y", new_shape, "int8", scale=0.1, zero_point=3)
    mb.add_operator("RESHAPE", [ti, ts], [to], options("ReshapeOptions", new_shape=new_shape))
    ref = run_reference(mb.build([ti], [to]), [x]).outputs[0]
    check(K.reshape(x, new_shape), ref)


@given(n_inputs=st.integers(1, 3), axis=st.integers(-4, 3), data=st.data(), seed=st.integers(0, 2**32 - 1))
@SETTINGS
def test_concatenation_int8(n_inputs, axis, data, seed):
    """int8 CONCATENATION: TFLite requires every input to share the output quantisation."""
    rng = rng_for(seed)
    base = [data.draw(st.integers(1, 4)) for _ in range(4)]
    ax = axis % 4
    shapes = []
    for _ in range(n_inputs):
        s = list(base)
        s[ax] = data.draw(st.integers(1, 4))
        shapes.append(tuple(s))
    xs = [rand_int8(rng, s) for s in shapes]
    s, zp = qparams(data.draw)
    out_shape = list(base)
    out_shape[ax] = sum(sh[ax] for sh in shapes)
    mb = ModelBuilder()
    tis = [mb.add_tensor(f"x{i}", sh, "int8", scale=s, zero_point=zp) for i, sh in enumerate(shapes)]
    to = mb.add_tensor("y", out_shape, "int8", scale=s, zero_point=zp)
    mb.add_operator("CONCATENATION", tis, [to], options("ConcatenationOptions", axis=axis), version=2)
    ref = run_reference(mb.build(tis, [to]), xs).outputs[0]
    ours = K.concatenation(
        xs,
        axis=axis,
        input_scales=[s] * n_inputs,
        input_zero_points=[zp] * n_inputs,
        output_scale=s,
        output_zero_point=zp,
    )
    check(ours, ref)


@given(n_inputs=st.integers(2, 3), axis=st.integers(0, 3), data=st.data(), seed=st.integers(0, 2**32 - 1))
@SETTINGS
def test_concatenation_requantize_uint8(n_inputs, axis, data, seed):
    """Requantising concatenation (differing scales) only exists for uint8 in TFLite
    (``ConcatenationWithScaling``); our kernel applies the same float algorithm to int8."""
    rng = rng_for(seed)
    base = [data.draw(st.integers(1, 4)) for _ in range(4)]
    shapes = []
    for _ in range(n_inputs):
        s = list(base)
        s[axis] = data.draw(st.integers(1, 4))
        shapes.append(tuple(s))
    xs = [rng.integers(0, 256, size=sh).astype(np.uint8) for sh in shapes]
    qs = [(log_uniform(data.draw, 1e-3, 0.5), data.draw(st.integers(0, 255))) for _ in range(n_inputs)]
    out_s = float(np.float32(max(q[0] for q in qs) * data.draw(st.floats(0.5, 2.0))))
    out_zp = data.draw(st.integers(0, 255))
    out_shape = list(base)
    out_shape[axis] = sum(sh[axis] for sh in shapes)
    mb = ModelBuilder()
    tis = [
        mb.add_tensor(f"x{i}", sh, "uint8", scale=q[0], zero_point=q[1])
        for i, (sh, q) in enumerate(zip(shapes, qs, strict=True))
    ]
    to = mb.add_tensor("y", out_shape, "uint8", scale=out_s, zero_point=out_zp)
    mb.add_operator("CONCATENATION", tis, [to], options("ConcatenationOptions", axis=axis))
    ref = run_reference(mb.build(tis, [to]), xs).outputs[0]
    ours = K.concatenation(
        xs,
        axis=axis,
        input_scales=[q[0] for q in qs],
        input_zero_points=[q[1] for q in qs],
        output_scale=out_s,
        output_zero_point=out_zp,
    )
    check(ours, ref)


def test_concatenation_int8_rejects_mixed_quantization():
    """LiteRT refuses int8 CONCATENATION whose inputs differ from the output quantisation."""
    mb = ModelBuilder()
    a = mb.add_tensor("a", [1, 2, 2, 1], "int8", scale=0.1, zero_point=0)
    b = mb.add_tensor("b", [1, 2, 2, 1], "int8", scale=0.2, zero_point=0)
    y = mb.add_tensor("y", [1, 2, 2, 2], "int8", scale=0.1, zero_point=0)
    mb.add_operator("CONCATENATION", [a, b], [y], options("ConcatenationOptions", axis=3))
    x = np.zeros((1, 2, 2, 1), dtype=np.int8)
    with pytest.raises(RuntimeError):
        run_reference(mb.build([a, b], [y]), [x, x])


# ---------------------------------------------------------------------------------------------
# resizing
# ---------------------------------------------------------------------------------------------


@st.composite
def resize_case(draw):
    n = draw(st.integers(1, 2))
    h, w = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    oh, ow = draw(st.integers(1, 17)), draw(st.integers(1, 17))
    c = draw(st.integers(1, 3))
    mode = draw(st.sampled_from(["none", "align_corners", "half_pixel_centers"]))
    seed = draw(st.integers(0, 2**32 - 1))
    return dict(n=n, h=h, w=w, oh=oh, ow=ow, c=c, mode=mode, seed=seed)


def _run_resize(op: str, table: str, c, x):
    mb = ModelBuilder()
    ti = mb.add_tensor("x", x.shape, "int8", scale=0.05, zero_point=-7)
    ts = mb.add_tensor("size", [2], "int32", data=np.array([c["oh"], c["ow"]], dtype=np.int32))
    to = mb.add_tensor("y", (c["n"], c["oh"], c["ow"], c["c"]), "int8", scale=0.05, zero_point=-7)
    mb.add_operator(
        op,
        [ti, ts],
        [to],
        options(
            table, align_corners=c["mode"] == "align_corners", half_pixel_centers=c["mode"] == "half_pixel_centers"
        ),
        version=3,
    )
    return run_reference(mb.build([ti], [to]), [x]).outputs[0]


@given(resize_case())
@SETTINGS
def test_resize_nearest_neighbor(c):
    x = rand_int8(rng_for(c["seed"]), (c["n"], c["h"], c["w"], c["c"]))
    assume(x.size >= 4)
    ref = _run_resize("RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighborOptions", c, x)
    ours = K.resize_nearest_neighbor(
        x,
        (c["oh"], c["ow"]),
        align_corners=c["mode"] == "align_corners",
        half_pixel_centers=c["mode"] == "half_pixel_centers",
    )
    check(ours, ref)


@given(resize_case())
@SETTINGS
def test_resize_bilinear(c):
    x = rand_int8(rng_for(c["seed"]), (c["n"], c["h"], c["w"], c["c"]))
    assume(x.size >= 4)
    ref = _run_resize("RESIZE_BILINEAR", "ResizeBilinearOptions", c, x)
    ours = K.resize_bilinear(
        x,
        (c["oh"], c["ow"]),
        align_corners=c["mode"] == "align_corners",
        half_pixel_centers=c["mode"] == "half_pixel_centers",
    )
    check(ours, ref)


# ---------------------------------------------------------------------------------------------
# unary activations and requantisation (all 256 input values in one tensor)
# ---------------------------------------------------------------------------------------------

ALL_INT8 = np.arange(-128, 128, dtype=np.int16).astype(np.int8).reshape(1, 16, 16, 1)


def _run_unary(op: str, in_q, out_q, opts=None, version: int = 2):
    mb = ModelBuilder()
    ti = mb.add_tensor("x", ALL_INT8.shape, "int8", scale=in_q[0], zero_point=in_q[1])
    to = mb.add_tensor("y", ALL_INT8.shape, "int8", scale=out_q[0], zero_point=out_q[1])
    mb.add_operator(op, [ti], [to], opts, version=version)
    return run_reference(mb.build([ti], [to]), [ALL_INT8]).outputs[0]


@given(data=st.data())
@SETTINGS
def test_tanh(data):
    in_s = log_uniform(data.draw, 0.004, 0.2)
    in_zp = data.draw(st.integers(-128, 127))
    out_q = data.draw(st.sampled_from([(1.0 / 128, 0), None]))
    if out_q is None:
        out_q = (log_uniform(data.draw, 1.0 / 200, 1.0 / 60), data.draw(st.integers(-30, 30)))
    ref = _run_unary("TANH", (in_s, in_zp), out_q)
    ours = K.tanh(ALL_INT8, input_scale=in_s, input_zero_point=in_zp, output_scale=out_q[0], output_zero_point=out_q[1])
    check(ours, ref)


@given(data=st.data())
@SETTINGS
def test_sigmoid(data):
    in_s = log_uniform(data.draw, 0.004, 0.3)
    in_zp = data.draw(st.integers(-128, 127))
    ref = _run_unary("LOGISTIC", (in_s, in_zp), (1.0 / 256, -128))
    ours = K.sigmoid(ALL_INT8, input_scale=in_s, input_zero_point=in_zp)
    check(ours, ref)


@given(data=st.data())
@SETTINGS
def test_leaky_relu(data):
    in_s, in_zp = qparams(data.draw)
    out_s = float(np.float32(in_s * log_uniform(data.draw, 0.3, 3.0)))
    out_zp = data.draw(st.integers(-100, 100))
    alpha = data.draw(st.sampled_from([0.1, 0.2, 0.01, 0.3]) | st.floats(0.0, 1.0))
    ref = _run_unary("LEAKY_RELU", (in_s, in_zp), (out_s, out_zp), options("LeakyReluOptions", alpha=alpha))
    ours = K.leaky_relu(
        ALL_INT8, alpha=alpha, input_scale=in_s, input_zero_point=in_zp, output_scale=out_s, output_zero_point=out_zp
    )
    check(ours, ref)


@given(data=st.data())
@SETTINGS
def test_hard_swish(data):
    # Input scales from 1e-3 to 0.5 take the reluish multiplier (85.3 x input scale) both below
    # and above 1, the two branches of the fixed point; the output multiplier stays below 1.
    in_s, in_zp = qparams(data.draw)
    out_s = float(np.float32(in_s * log_uniform(data.draw, 1.0 / 64, 4.0)))
    out_zp = data.draw(st.integers(-128, 127))
    ref = _run_unary("HARD_SWISH", (in_s, in_zp), (out_s, out_zp), version=1)
    quant = {"input_scale": in_s, "input_zero_point": in_zp, "output_scale": out_s, "output_zero_point": out_zp}
    check(K.hard_swish(ALL_INT8, **quant), ref)


@given(data=st.data())
@SETTINGS
def test_relu(data):
    in_s, in_zp = qparams(data.draw)
    out_s = in_s if data.draw(st.booleans()) else float(np.float32(in_s * log_uniform(data.draw, 0.2, 5.0)))
    out_zp = data.draw(st.integers(-128, 127))
    opcode = data.draw(st.sampled_from(["RELU", "RELU6", "RELU_N1_TO_1"]))
    ref = _run_unary(opcode, (in_s, in_zp), (out_s, out_zp), version=1)
    quant = {"input_scale": in_s, "input_zero_point": in_zp, "output_scale": out_s, "output_zero_point": out_zp}
    check(K.relu(ALL_INT8, activation=opcode, **quant), ref, min_distinct=2)


@pytest.mark.parametrize("ratio", [1.0, 1.5, 100.0])
def test_hard_swish_refuses_what_tflite_refuses(ratio):
    """An output multiplier (input scale / 128 / output scale) of 1 or more: TFLite fails to
    prepare the operator, the kernel raises and nn.hard_swish does not verify."""
    in_s = 0.5
    out_s = float(np.float32(in_s / 128 / ratio))
    with pytest.raises(RuntimeError, match="output_multiplier_exponent"):
        _run_unary("HARD_SWISH", (in_s, 0), (out_s, 0), version=1)
    with pytest.raises(ValueError, match="must not be positive"):
        K.hard_swish(ALL_INT8, input_scale=in_s, input_zero_point=0, output_scale=out_s, output_zero_point=0)


@given(data=st.data())
@SETTINGS
def test_quantize_requantize(data):
    in_s, in_zp = qparams(data.draw)
    out_s = float(np.float32(in_s * log_uniform(data.draw, 0.2, 5.0)))
    out_zp = data.draw(st.integers(-128, 127))
    ref = _run_unary("QUANTIZE", (in_s, in_zp), (out_s, out_zp))
    ours = K.quantize(ALL_INT8, input_scale=in_s, input_zero_point=in_zp, output_scale=out_s, output_zero_point=out_zp)
    check(ours, ref)


# ---------------------------------------------------------------------------------------------
# Discriminating cases.  Where TFLite's Prepare could plausibly evaluate a multiplier in float or
# in double (or round/fuse differently), random tests almost never hit an input whose output
# depends on it.  The parameters below were found by searching for scales where the plausible
# alternative and our kernel disagree on some input; LiteRT then decides.  Each test asserts
# that the alternative really disagrees (so the case stays discriminating) and that LiteRT
# agrees with our kernel.
# ---------------------------------------------------------------------------------------------

GRID1 = np.repeat(np.arange(-128, 128), 256).astype(np.int8).reshape(1, 256, 256, 1)
GRID2 = np.tile(np.arange(-128, 128), 256).astype(np.int8).reshape(1, 256, 256, 1)


def _mbqm_out(acc, real, zp):
    m, s = Q.quantize_multiplier(real)
    return Q.saturate(Q.multiply_by_quantized_multiplier(acc, m, s) + zp)


def test_discriminating_quantize_uses_double_ratio():
    si, zi, so, zo = 0.08367465436458588, -32, 0.12944145500659943, -83
    ours = K.quantize(ALL_INT8, input_scale=si, input_zero_point=zi, output_scale=so, output_zero_point=zo)
    alt = _mbqm_out(ALL_INT8.astype(np.int64) - zi, float(np.float32(np.float32(si) / np.float32(so))), zo)
    assert not np.array_equal(ours, alt)
    np.testing.assert_array_equal(ours, _run_unary("QUANTIZE", (si, zi), (so, zo)))


@pytest.mark.parametrize(
    ("case", "double_terms"),
    [
        ((0.059184107929468155, -83, 0.025292353704571724, 27, 0.45180583), ("alpha", "identity")),
        ((0.04165027290582657, 112, 0.03688506782054901, 29, 0.8219382762908936), ("alpha",)),
    ],
)
def test_discriminating_leaky_relu_uses_float_multipliers(case, double_terms):
    si, zi, so, zo, alpha = case
    ours = K.leaky_relu(
        ALL_INT8, alpha=alpha, input_scale=si, input_zero_point=zi, output_scale=so, output_zero_point=zo
    )
    v = ALL_INT8.astype(np.int64) - zi
    f = np.float32
    s_in, s_out, a = f(si), f(so), f(alpha)
    r_id = float(s_in) / float(s_out) if "identity" in double_terms else float(f(s_in / s_out))
    r_alpha = float(s_in) * float(a) / float(s_out) if "alpha" in double_terms else float(f(f(s_in * a) / s_out))
    alt = np.where(v >= 0, _mbqm_out(v, r_id, zo), _mbqm_out(v, r_alpha, zo))
    assert not np.array_equal(ours, alt)
    ref = _run_unary("LEAKY_RELU", (si, zi), (so, zo), options("LeakyReluOptions", alpha=alpha))
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize(
    ("activation", "scale", "zp", "expected", "double_alt"),
    [
        # 6 / 0.8000000119 is 7.4999999 in double but rounds to 7.5f in float32 -> 8
        ("RELU6", 0.800000011920929, -128, (-128, -120), (-128, -121)),
        ("RELU_N1_TO_1", 0.1818181872367859, 0, (-6, 6), (-5, 5)),
    ],
)
def test_discriminating_activation_range_in_float(activation, scale, zp, expected, double_alt):
    assert Q.activation_range(activation, scale, zp) == expected
    lo, hi = (0.0, 6.0) if activation == "RELU6" else (-1.0, 1.0)
    s = float(np.float32(scale))
    alt = (
        max(-128, zp + int(Q.round_half_away_from_zero(lo / s))),
        min(127, zp + int(Q.round_half_away_from_zero(hi / s))),
    )
    assert alt == double_alt != expected
    c = dict(n=1, h=16, w=16, c=1, filter=(1, 1), stride=(1, 1), padding="VALID", activation=activation, s=scale, zp=zp)
    ref = _run_pool("MAX_POOL_2D", c, ALL_INT8)
    assert (int(ref.min()), int(ref.max())) == expected


def test_discriminating_mul_uses_float_multiplier():
    s1, z1, s2, z2, so, zo = (0.10590696334838867, 102, 0.008472445420920849, -16, 0.17281588912010193, 0)
    c = dict(in1=(s1, z1), in2=(s2, z2), out=(so, zo), activation="NONE")
    ours = K.mul(GRID1, GRID2, **_binary_kwargs(c))
    prod = (GRID1.astype(np.int64) - z1) * (GRID2.astype(np.int64) - z2)
    alt = _mbqm_out(prod, float(np.float32(s1)) * float(np.float32(s2)) / float(np.float32(so)), zo)
    assert not np.array_equal(ours, alt)
    np.testing.assert_array_equal(ours, _run_binary("MUL", c, GRID1, GRID2, options("MulOptions")))


@pytest.mark.parametrize(
    ("op", "case", "float_ratios"),
    [
        ("ADD", (0.13309988379478455, 9, 0.42443960905075073, -34, 0.3071416914463043, -115), (0, 1, 2)),
        ("SUB", (0.04674503207206726, -47, 0.06499914079904556, 30, 0.06736481189727783, -15), (0, 1, 2)),
        ("ADD", (0.0018506504129618406, -14, 0.006994390394538641, 109, 0.010204162448644638, 52), (0,)),
        ("ADD", (0.02795693464577198, 48, 0.010330262593925, 99, 0.02838938869535923, -11), (1,)),
        ("ADD", (0.0414506196975708, 23, 0.010368792340159416, -46, 0.04322298988699913, -108), (2,)),
    ],
)
def test_discriminating_add_sub_double_multipliers(op, case, float_ratios):
    """ADD/SUB ratios s1/(2 max), s2/(2 max), 2 max/(2**20 s_out) are evaluated in double;
    the alternative evaluates the listed ones in float32."""
    s1, z1, s2, z2, so, zo = case
    c = dict(in1=(s1, z1), in2=(s2, z2), out=(so, zo), activation="NONE")
    ours = (K.add if op == "ADD" else K.sub)(GRID1, GRID2, **_binary_kwargs(c))
    f = np.float32
    tm = 2.0 * float(max(f(s1), f(s2)))
    ftm = f(2) * max(f(s1), f(s2))
    ratios = [float(f(s1)) / tm, float(f(s2)) / tm, tm / (float(1 << 20) * float(f(so)))]
    float_ratios_values = [f(f(s1) / ftm), f(f(s2) / ftm), f(ftm / (f(1 << 20) * f(so)))]
    for i in float_ratios:
        ratios[i] = float(float_ratios_values[i])
    (m1, h1), (m2, h2), (mo, ho) = (Q.quantize_multiplier(r) for r in ratios)
    a = Q.multiply_by_quantized_multiplier((GRID1.astype(np.int64) - z1) << 20, m1, h1)
    b = Q.multiply_by_quantized_multiplier((GRID2.astype(np.int64) - z2) << 20, m2, h2)
    alt = Q.saturate(Q.multiply_by_quantized_multiplier(a + b if op == "ADD" else a - b, mo, ho) + zo)
    assert not np.array_equal(ours, alt)
    np.testing.assert_array_equal(ours, _run_binary(op, c, GRID1, GRID2, options(f"{op.title()}Options")))


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"])
@pytest.mark.parametrize(
    ("case", "alt_mode"),
    [
        ((0.10535338521003723, -111, 0.07440073043107986, 1.754820704460144, 44), "float_product"),
        ((0.0028908324893563986, -113, 0.0013924551894888282, 0.0009272198658436537, -43), "all_float"),
    ],
)
def test_discriminating_conv_double_product(op, case, alt_mode):
    """Per-channel multipliers are double(in_s) * double(w_s) / double(out_s)."""
    si, zi, ws, so, zo = case
    wvals = np.arange(1, 128, dtype=np.int8)
    acc = (ALL_INT8.astype(np.int64) - zi) * wvals.astype(np.int64)
    ours_1x1 = K.conv2d(
        ALL_INT8,
        wvals.reshape(127, 1, 1, 1),
        np.zeros(127, np.int32),
        input_scale=si,
        input_zero_point=zi,
        weight_scales=ws,
        output_scale=so,
        output_zero_point=zo,
    )
    f = np.float32
    if alt_mode == "float_product":
        alt_real = float(f(f(si) * f(ws))) / float(f(so))
    else:
        alt_real = float(f(f(f(si) * f(ws)) / f(so)))
    alt = _mbqm_out(acc, alt_real, zo)
    assert not np.array_equal(ours_1x1, alt)
    mb = ModelBuilder()
    ti = mb.add_tensor("x", ALL_INT8.shape, "int8", scale=si, zero_point=zi)
    tb = mb.add_tensor("b", [127], "int32", scale=[si * ws], zero_point=0, data=np.zeros(127, np.int32))
    to = mb.add_tensor("y", (1, 16, 16, 127), "int8", scale=so, zero_point=zo)
    if op == "DEPTHWISE_CONV_2D":
        tw = mb.add_tensor(
            "w",
            [1, 1, 1, 127],
            "int8",
            scale=[ws],
            zero_point=0,
            quantized_dimension=3,
            data=wvals.reshape(1, 1, 1, 127),
        )
        mb.add_operator(
            op,
            [ti, tw, tb],
            [to],
            options("DepthwiseConv2DOptions", padding="VALID", stride_w=1, stride_h=1, depth_multiplier=127),
            version=3,
        )
        ours = K.depthwise_conv2d(
            ALL_INT8,
            wvals.reshape(1, 1, 1, 127),
            None,
            input_scale=si,
            input_zero_point=zi,
            weight_scales=ws,
            output_scale=so,
            output_zero_point=zo,
        )
    else:
        tw = mb.add_tensor("w", [127, 1, 1, 1], "int8", scale=[ws], zero_point=0, data=wvals.reshape(127, 1, 1, 1))
        if op == "CONV_2D":
            mb.add_operator(
                op, [ti, tw, tb], [to], options("Conv2DOptions", padding="VALID", stride_w=1, stride_h=1), version=3
            )
            ours = ours_1x1
        else:
            ts = mb.add_tensor("s", [4], "int32", data=np.array([1, 16, 16, 127], np.int32))
            mb.add_operator(
                op,
                [ts, tw, ti, tb],
                [to],
                options("TransposeConvOptions", padding="VALID", stride_w=1, stride_h=1),
                version=4,
            )
            ours = K.transpose_conv(
                ALL_INT8,
                wvals.reshape(127, 1, 1, 1),
                None,
                output_shape=(1, 16, 16, 127),
                input_scale=si,
                input_zero_point=zi,
                weight_scales=ws,
                output_scale=so,
                output_zero_point=zo,
            )
    np.testing.assert_array_equal(ours, run_reference(mb.build([ti], [to]), [ALL_INT8]).outputs[0])


def test_discriminating_fully_connected_double_product():
    si, zi, ws, so, zo = (0.0445752814412117, 88, 0.0011309616966173053, 0.004158924799412489, 8)
    x = ALL_INT8.reshape(256, 1)
    wvals = np.arange(1, 128, dtype=np.int8).reshape(127, 1)
    ours = K.fully_connected(
        x, wvals, None, input_scale=si, input_zero_point=zi, weight_scales=ws, output_scale=so, output_zero_point=zo
    )
    acc = (x.astype(np.int64) - zi) @ wvals.T.astype(np.int64)
    eff = float(np.float32(np.float32(si) * np.float32(ws))) / float(np.float32(so))
    alt = Q.saturate(Q.round_half_away_from_zero_array(acc * eff).astype(np.int64) + zo)
    assert not np.array_equal(ours, alt)
    for w_scales in ([ws], [ws] * 127):
        mb = ModelBuilder()
        ti = mb.add_tensor("x", x.shape, "int8", scale=si, zero_point=zi)
        tw = mb.add_tensor("w", wvals.shape, "int8", scale=w_scales, zero_point=0, data=wvals)
        to = mb.add_tensor("y", (256, 127), "int8", scale=so, zero_point=zo)
        mb.add_operator("FULLY_CONNECTED", [ti, tw], [to], options("FullyConnectedOptions"), version=5)
        np.testing.assert_array_equal(ours, run_reference(mb.build([ti], [to]), [x]).outputs[0])


def test_discriminating_softmax_double_product():
    s, beta = 0.050969723612070084, 0.9447341561317444
    rows = np.array([[127, 127 - d, 127 - d // 2, 127 - d // 3] for d in range(256)])
    rows = np.concatenate([rows, np.random.default_rng(2).integers(-128, 128, (768, 4))])
    rows = rows.astype(np.int8)
    ours = K.softmax(rows, input_scale=s, beta=beta)
    real_float = float(np.float32(np.float32(beta) * np.float32(s))) * float(1 << 26)
    real_double = float(np.float32(beta)) * float(np.float32(s)) * float(1 << 26)
    assert Q.quantize_multiplier(real_float) != Q.quantize_multiplier(real_double)
    mb = ModelBuilder()
    ti = mb.add_tensor("x", rows.shape, "int8", scale=s, zero_point=0)
    to = mb.add_tensor("y", rows.shape, "int8", scale=1.0 / 256, zero_point=-128)
    mb.add_operator("SOFTMAX", [ti], [to], options("SoftmaxOptions", beta=beta), version=2)
    np.testing.assert_array_equal(ours, run_reference(mb.build([ti], [to]), [rows]).outputs[0])


def test_discriminating_mean_double_ratio():
    si, zi, so, zo = 0.002917317906394601, -69, 0.001146433292888105, -4
    x = np.random.default_rng(0).integers(-128, 128, (1, 5, 5, 4096)).astype(np.int8)
    ours = K.mean_hw(x, input_scale=si, input_zero_point=zi, output_scale=so, output_zero_point=zo)
    real_float = float(np.float32(np.float32(si) / np.float32(so)))
    real_double = float(np.float32(si)) / float(np.float32(so))
    assert Q.quantize_multiplier(real_float) != Q.quantize_multiplier(real_double)
    mb = ModelBuilder()
    ti = mb.add_tensor("x", x.shape, "int8", scale=si, zero_point=zi)
    ta = mb.add_tensor("axis", [2], "int32", data=np.array([1, 2], np.int32))
    to = mb.add_tensor("y", (1, 1, 1, 4096), "int8", scale=so, zero_point=zo)
    mb.add_operator("MEAN", [ti, ta], [to], options("ReducerOptions", keep_dims=True), version=2)
    np.testing.assert_array_equal(ours, run_reference(mb.build([ti], [to]), [x]).outputs[0])


@pytest.mark.parametrize(
    ("in_size", "out_size", "mode"), [(2, 82, "none"), (2, 83, "align_corners"), (2, 41, "half_pixel_centers")]
)
def test_discriminating_resize_nearest_float32_coordinates(in_size, out_size, mode):
    ac, hp = mode == "align_corners", mode == "half_pixel_centers"
    x = np.arange(in_size, dtype=np.int8).reshape(1, in_size, 1, 1)
    ours = K.resize_nearest_neighbor(x, (out_size, 1), align_corners=ac, half_pixel_centers=hp)
    # alternative: the same formula in double precision
    scale = (in_size - 1) / (out_size - 1) if ac else in_size / out_size
    pos = (np.arange(out_size) + (0.5 if hp else 0.0)) * scale
    idx = Q.round_half_away_from_zero_array(pos) if ac else np.floor(pos)
    idx = np.clip(idx.astype(np.int64), 0, in_size - 1)
    assert not np.array_equal(ours[0, :, 0, 0], x[0, idx, 0, 0])
    c = dict(n=1, oh=out_size, ow=1, c=1, mode=mode)
    np.testing.assert_array_equal(ours, _run_resize("RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighborOptions", c, x))


def test_discriminating_concatenation_scaling_without_fma():
    si, zi, so, zo = 0.01564859226346016, 76, 0.009947167709469795, 55
    x = np.arange(256).astype(np.uint8).reshape(1, 16, 16, 1)
    ours = K.concatenation(
        [x, x], axis=3, input_scales=[si, so], input_zero_points=[zi, zo], output_scale=so, output_zero_point=zo
    )
    f = np.float32
    scale = f(f(si) * f(f(1) / f(so)))
    bias = f(f(-zi) * scale)
    fused = (x.astype(np.float64) * np.float64(scale) + np.float64(bias)).astype(np.float32)
    alt = Q.saturate(Q.round_half_away_from_zero_array(fused).astype(np.int64) + zo, np.uint8)
    assert not np.array_equal(ours[..., :1], alt)
    mb = ModelBuilder()
    a = mb.add_tensor("a", x.shape, "uint8", scale=si, zero_point=zi)
    b = mb.add_tensor("b", x.shape, "uint8", scale=so, zero_point=zo)
    y = mb.add_tensor("y", (1, 16, 16, 2), "uint8", scale=so, zero_point=zo)
    mb.add_operator("CONCATENATION", [a, b], [y], options("ConcatenationOptions", axis=3))
    np.testing.assert_array_equal(ours, run_reference(mb.build([a, b], [y]), [x, x]).outputs[0])


def test_discriminating_softmax_lut_sequential_float_sum():
    """The default kernel sums the exponentials sequentially in float32; with numpy's pairwise
    summation this example (found by search, 8 rows x 1000 classes) gives different bytes."""
    rng = np.random.default_rng(0)
    for _ in range(90):  # replay the search's random stream up to the discriminating draw
        s = float(np.float32(math.exp(rng.uniform(math.log(0.002), math.log(0.05)))))
        x = rng.integers(-128, 128, size=(8, 1000)).astype(np.int8)
    assert s == pytest.approx(0.009249480441212654)
    ours = K.softmax_lut(x, input_scale=s)
    # alternative: the same table entries, but numpy's pairwise float32 summation
    xi = x.astype(np.int64)
    e = K._float_fn("expf", np.exp, (np.float32(-np.float32(s)) * (xi.max(-1, keepdims=True) - xi)).astype(np.float32))
    inv = np.float32(1) / (e.sum(-1, keepdims=True, dtype=np.float32) * np.float32(1 / 256))
    alt = np.clip(Q.round_half_away_from_zero_array((e * inv).astype(np.float32)) - 128, -128, 127).astype(np.int8)
    assert not np.array_equal(ours, alt)
    mb = ModelBuilder()
    ti = mb.add_tensor("x", x.shape, "int8", scale=s, zero_point=0)
    to = mb.add_tensor("y", x.shape, "int8", scale=1.0 / 256, zero_point=-128)
    mb.add_operator("SOFTMAX", [ti], [to], options("SoftmaxOptions", beta=1.0), version=2)
    ref = run_reference(mb.build([ti], [to]), [x], DEFAULT)
    np.testing.assert_array_equal(ours, ref.outputs[0])


@pytest.mark.parametrize(
    ("in_s", "in_zp"), [(0.004936120938509703, 69), (0.004299383610486984, -21), (0.005547606851905584, -58)]
)
def test_discriminating_tanh_uses_libm_tanhf(in_s, in_zp):
    """With glibc 2.36 these tables differ from a correctly rounded tanh in one entry: TFLite
    calls ``tanhf`` and so must we (on a libm with a correctly rounded tanhf they coincide)."""
    ours = K.tanh(ALL_INT8, input_scale=in_s, input_zero_point=in_zp, output_scale=1.0 / 128, output_zero_point=0)
    np.testing.assert_array_equal(ours, _run_unary("TANH", (in_s, in_zp), (1.0 / 128, 0)))
