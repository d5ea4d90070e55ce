"""Integer (int8) TFLite operator kernels in numpy, bit-exact with TFLite's reference kernels.

Every kernel is a pure function of numpy arrays and plain Python parameters, laid out NHWC with
a batch dimension.  Quantisation parameters are passed as the IR stores them: float32 values for
TFLite models, or exact doubles recovered from the integer multipliers of a TOSA model.  Where
TFLite evaluates a multiplier in double, a scale is used as given (for a TFLite model that equals
the float32 value TFLite reads); where TFLite evaluates in float32, it is rounded to float32 first.
Each kernel derives its fixed-point multipliers exactly like the TFLite
``Prepare`` function of the corresponding op (including which expressions are evaluated in float
and which in double), and then reproduces the integer arithmetic of the reference kernel
(``tensorflow/lite/kernels/internal/reference/...``) as selected by LiteRT's
``BuiltinRefOpResolver``.  Accumulations are done in int64 (or in float64 where every partial sum
is an exactly representable integer) so results match int32 C++ arithmetic.

Padding is always explicit: ``padding=(top, left, bottom, right)``.  Use :func:`same_padding` /
:func:`explicit_padding` to turn TFLite's SAME/VALID into that form.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from cascade.interpreter.quantization import (
    INT32_MAX,
    activation_range,
    f32,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_greater_than_one,
    multiply_by_quantized_multiplier_smaller_than_one_exp,
    quantize_multiplier,
    quantize_multiplier_array,
    quantize_multiplier_greater_than_one,
    quantize_multiplier_smaller_than_one_exp,
    round_half_away_from_zero_array,
    rounding_divide_by_pot,
    saturate,
    saturating_rounding_doubling_high_mul,
    wrap_int32,
)

__all__ = [
    "add",
    "avg_pool2d",
    "concatenation",
    "conv2d",
    "conv_output_size",
    "depthwise_conv2d",
    "explicit_padding",
    "fully_connected",
    "hard_swish",
    "leaky_relu",
    "max_pool2d",
    "maximum",
    "mean_hw",
    "minimum",
    "mul",
    "pad",
    "quantize",
    "relu",
    "reshape",
    "resize_bilinear",
    "resize_nearest_neighbor",
    "same_padding",
    "sigmoid",
    "softmax",
    "softmax_lut",
    "softmax_reference_supported",
    "sub",
    "tanh",
    "transpose_conv",
    "transpose_conv_padding",
]

Padding4 = tuple[int, int, int, int]
Pair = tuple[int, int]


# ---------------------------------------------------------------------------------------------
# Padding helpers (tensorflow/lite/kernels/padding.h)
# ---------------------------------------------------------------------------------------------


def conv_output_size(padding: str, in_size: int, k: int, stride: int, dilation: int = 1) -> int:
    """TFLite ``ComputeOutSize`` for SAME / VALID."""
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        return (in_size + stride - 1) // stride
    if padding == "VALID":
        return (in_size + stride - eff) // stride
    raise ValueError(f"unknown padding {padding!r}")


def same_padding(in_size: int, k: int, stride: int, dilation: int = 1,
                 padding: str = "SAME") -> Pair:
    """TFLite ``ComputePaddingWithOffset``: (before, after) padding along one axis.

    ``before = total // 2`` and ``after = total - before`` (the odd pixel goes after), where
    ``total = max(0, (out - 1) * stride + eff_k - in)``.
    """
    out = conv_output_size(padding, in_size, k, stride, dilation)
    eff = (k - 1) * dilation + 1
    total = max(0, (out - 1) * stride + eff - in_size)
    return total // 2, total - total // 2


def explicit_padding(padding: str, in_hw: Pair, k_hw: Pair, stride: Pair,
                     dilation: Pair = (1, 1)) -> Padding4:
    """SAME/VALID -> ``(top, left, bottom, right)`` for conv, depthwise conv and pooling."""
    top, bottom = same_padding(in_hw[0], k_hw[0], stride[0], dilation[0], padding)
    left, right = same_padding(in_hw[1], k_hw[1], stride[1], dilation[1], padding)
    return top, left, bottom, right


def transpose_conv_padding(padding: str, out_hw: Pair, k_hw: Pair, stride: Pair) -> Pair:
    """TRANSPOSE_CONV padding (top, left): TFLite computes it as for a forward convolution whose
    *input* is the transpose conv's output (only the leading pads are used)."""
    top, _ = same_padding(out_hw[0], k_hw[0], stride[0], 1, padding)
    left, _ = same_padding(out_hw[1], k_hw[1], stride[1], 1, padding)
    return top, left


def _pad_hw(x: np.ndarray, padding: Padding4, value: int) -> np.ndarray:
    top, left, bottom, right = padding
    if top == left == bottom == right == 0:
        return x
    return np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=value)


def _requantize(acc: np.ndarray, mult: Any, shift: Any, out_zp: int, act: Pair,
                dtype: Any = np.int8) -> np.ndarray:
    out = multiply_by_quantized_multiplier(wrap_int32(acc), mult, shift) + int(out_zp)
    return np.clip(out, act[0], act[1]).astype(dtype)


def _per_channel_multipliers(input_scale: float, weight_scales: Any, output_scale: float,
                             n: int) -> tuple[np.ndarray, np.ndarray]:
    """``PopulateConvolutionQuantizationParams``: per channel
    ``double(in_s) * double(w_s[c]) / double(out_s)``; a single scale is broadcast."""
    ws = np.atleast_1d(np.asarray(weight_scales, dtype=np.float64))
    if ws.size == 1:
        ws = np.repeat(ws, n)
    if ws.size != n:
        raise ValueError(f"expected {n} weight scales, got {ws.size}")
    reals = [float(input_scale) * float(w) / float(output_scale) for w in ws]
    return quantize_multiplier_array(reals)


# ---------------------------------------------------------------------------------------------
# Convolutions
# ---------------------------------------------------------------------------------------------



def _convolution_output(
    acc: np.ndarray,
    bias: np.ndarray | None,
    input_scale: float,
    weight_scales: float | Sequence[float],
    output_scale: float,
    output_zero_point: int,
    activation: str,
) -> np.ndarray:
    """The tail every convolution shares: int32 accumulators (NHWC) plus bias, requantised per
    output channel, offset by the output zero point and clamped to the fused activation."""
    if bias is not None:
        acc = acc + np.asarray(bias, dtype=np.int64)
    mult, shift = _per_channel_multipliers(input_scale, weight_scales, output_scale, acc.shape[-1])
    act = activation_range(activation, output_scale, output_zero_point)
    return _requantize(acc, mult, shift, output_zero_point, act)

def conv2d(
    x: np.ndarray,
    weights: np.ndarray,
    bias: np.ndarray | None,
    *,
    input_scale: float,
    input_zero_point: int,
    weight_scales: float | Sequence[float],
    output_scale: float,
    output_zero_point: int,
    stride: Pair = (1, 1),
    dilation: Pair = (1, 1),
    padding: Padding4 = (0, 0, 0, 0),
    activation: str = "NONE",
) -> np.ndarray:
    """CONV_2D int8, mirroring ``reference_integer_ops::ConvPerChannel``.

    ``x``: (N, H, W, Cin) int8; ``weights``: (Cout, KH, KW, Cin) int8 (OHWI, zero point 0);
    ``bias``: (Cout,) int32 or None.  ``acc = sum((x - in_zp) * w) + bias`` in int32, then
    ``MultiplyByQuantizedMultiplier`` with the per-channel multiplier, ``+ out_zp`` and clamping
    to the fused-activation range.  Out-of-image taps are skipped (== padding with ``in_zp``).
    """
    x = np.asarray(x)
    w = np.asarray(weights)
    n, h, wd, cin = x.shape
    cout, kh, kw, wcin = w.shape
    if wcin != cin:
        raise ValueError(f"input depth {cin} != filter depth {wcin}")
    sh, sw = stride
    dh, dw = dilation
    top, left, bottom, right = padding
    oh = (h + top + bottom - ((kh - 1) * dh + 1)) // sh + 1
    ow = (wd + left + right - ((kw - 1) * dw + 1)) // sw + 1
    xp = _pad_hw(x.astype(np.float64) - float(input_zero_point), padding, 0)
    wf = w.astype(np.float64)
    # Every partial sum is an integer of magnitude < 2**53, so float64 GEMM is exact.
    acc = np.zeros((n * oh * ow, cout), dtype=np.float64)
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dh, kx * dw
            patch = xp[:, y0 : y0 + (oh - 1) * sh + 1 : sh, x0 : x0 + (ow - 1) * sw + 1 : sw, :]
            acc += patch.reshape(-1, cin) @ wf[:, ky, kx, :].T
    acc_i = acc.astype(np.int64).reshape(n, oh, ow, cout)
    return _convolution_output(acc_i, bias, input_scale, weight_scales, output_scale, output_zero_point, activation)


def depthwise_conv2d(
    x: np.ndarray,
    weights: np.ndarray,
    bias: np.ndarray | None,
    *,
    input_scale: float,
    input_zero_point: int,
    weight_scales: float | Sequence[float],
    output_scale: float,
    output_zero_point: int,
    stride: Pair = (1, 1),
    dilation: Pair = (1, 1),
    padding: Padding4 = (0, 0, 0, 0),
    depth_multiplier: int | None = None,
    activation: str = "NONE",
) -> np.ndarray:
    """DEPTHWISE_CONV_2D int8, mirroring ``reference_integer_ops::DepthwiseConvPerChannel``.

    ``weights``: (1, KH, KW, Cin * M); output channel ``c * M + m`` reads input channel ``c``.
    Requantisation is per output channel as in :func:`conv2d`.
    """
    x = np.asarray(x)
    w = np.asarray(weights)
    n, h, wd, cin = x.shape
    _, kh, kw, cout = w.shape
    m = depth_multiplier if depth_multiplier is not None else cout // cin
    if cin * m != cout:
        raise ValueError(f"output depth {cout} != {cin} * depth multiplier {m}")
    sh, sw = stride
    dh, dw = dilation
    top, left, bottom, right = padding
    oh = (h + top + bottom - ((kh - 1) * dh + 1)) // sh + 1
    ow = (wd + left + right - ((kw - 1) * dw + 1)) // sw + 1
    xp = _pad_hw(x.astype(np.int64) - int(input_zero_point), padding, 0)
    wi = w.astype(np.int64).reshape(kh, kw, cin, m)
    acc = np.zeros((n, oh, ow, cin, m), dtype=np.int64)
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dh, kx * dw
            patch = xp[:, y0 : y0 + (oh - 1) * sh + 1 : sh, x0 : x0 + (ow - 1) * sw + 1 : sw, :]
            acc += patch[..., None] * wi[ky, kx]
    acc = acc.reshape(n, oh, ow, cout)
    return _convolution_output(acc, bias, input_scale, weight_scales, output_scale, output_zero_point, activation)


def transpose_conv(
    x: np.ndarray,
    weights: np.ndarray,
    bias: np.ndarray | None,
    *,
    output_shape: Sequence[int],
    input_scale: float,
    input_zero_point: int,
    weight_scales: float | Sequence[float],
    output_scale: float,
    output_zero_point: int,
    stride: Pair = (1, 1),
    padding: Pair = (0, 0),
    activation: str = "NONE",
) -> np.ndarray:
    """TRANSPOSE_CONV int8, mirroring ``reference_integer_ops::TransposeConv``.

    ``weights``: (Cout, KH, KW, Cin); ``output_shape``: (N, OH, OW, Cout); ``padding``: the
    (top, left) offsets (see :func:`transpose_conv_padding`).  Every input pixel scatters
    ``(x - in_zp) * w`` to ``out[iy * s - pad + ky, ix * s - pad + kx]`` (int32 scratch,
    out-of-range taps dropped), then bias, per-channel requantisation and clamping.
    """
    x = np.asarray(x)
    w = np.asarray(weights)
    n, h, wd, cin = x.shape
    cout, kh, kw, wcin = w.shape
    if wcin != cin:
        raise ValueError(f"input depth {cin} != filter depth {wcin}")
    on, oh, ow, oc = (int(v) for v in output_shape)
    if on != n or oc != cout:
        raise ValueError(f"bad output shape {tuple(output_shape)}")
    sh, sw = stride
    pt, pl = padding
    full_h = max((h - 1) * sh + kh, oh + pt)
    full_w = max((wd - 1) * sw + kw, ow + pl)
    full = np.zeros((n, full_h, full_w, cout), dtype=np.float64)
    xf = x.astype(np.float64).reshape(-1, cin) - float(input_zero_point)
    wf = w.astype(np.float64)
    for ky in range(kh):
        for kx in range(kw):
            contrib = (xf @ wf[:, ky, kx, :].T).reshape(n, h, wd, cout)
            full[:, ky : ky + (h - 1) * sh + 1 : sh, kx : kx + (wd - 1) * sw + 1 : sw, :] += contrib
    acc = full[:, pt : pt + oh, pl : pl + ow, :].astype(np.int64)
    return _convolution_output(acc, bias, input_scale, weight_scales, output_scale, output_zero_point, activation)


def fully_connected(
    x: np.ndarray,
    weights: np.ndarray,
    bias: np.ndarray | None,
    *,
    input_scale: float,
    input_zero_point: int,
    weight_scales: float | Sequence[float],
    output_scale: float,
    output_zero_point: int,
    weight_zero_point: int = 0,
    activation: str = "NONE",
) -> np.ndarray:
    """FULLY_CONNECTED int8 (``keep_num_dims=False``): output (batch, units).

    ``weights``: (units, depth); the input is flattened to (size // depth, depth).  LiteRT's
    reference int8 kernels (``reference_integer_ops::FullyConnected`` and
    ``FullyConnectedPerChannel`` in their float-scale overloads) do *not* use the fixed-point
    multiplier: ``acc = sum((w - w_zp) * (x - in_zp)) + bias`` (int32) is scaled as
    ``(int32)round(double(acc) * (double(in_s) * double(w_s[c]) / double(out_s)))`` (C ``round``,
    ties away from zero), then ``+ out_zp`` and clamped.  Per-channel weights ignore the weight
    zero point (symmetric by spec).
    """
    w = np.asarray(weights)
    units, depth = w.shape
    ws = np.atleast_1d(np.asarray(weight_scales, dtype=np.float64))
    per_channel = ws.size > 1
    if per_channel and ws.size != units:
        raise ValueError(f"expected {units} weight scales, got {ws.size}")
    w_zp = 0 if per_channel else int(weight_zero_point)
    xf = np.asarray(x).reshape(-1, depth).astype(np.float64) - float(input_zero_point)
    wf = w.astype(np.float64) - float(w_zp)
    acc = wrap_int32((xf @ wf.T).astype(np.int64))
    if bias is not None:
        acc = wrap_int32(acc + np.asarray(bias, dtype=np.int64))
    eff = float(input_scale) * ws / float(output_scale)
    rounded = round_half_away_from_zero_array(acc.astype(np.float64) * eff)
    # static_cast<int32_t> of an out-of-range double yields INT32_MIN on x86.
    in_range = (rounded >= -(2.0**31)) & (rounded < 2.0**31)
    scaled = np.where(in_range, rounded, -(2.0**31)).astype(np.int64)
    act = activation_range(activation, output_scale, output_zero_point)
    out = wrap_int32(scaled + int(output_zero_point))
    return np.clip(out, act[0], act[1]).astype(np.int8)


# ---------------------------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------------------------


def _pool_windows(x: np.ndarray, filter_hw: Pair, stride: Pair, padding: Padding4):
    n, h, w, c = x.shape
    kh, kw = filter_hw
    sh, sw = stride
    top, left, bottom, right = padding
    oh = (h + top + bottom - kh) // sh + 1
    ow = (w + left + right - kw) // sw + 1
    for ky in range(kh):
        for kx in range(kw):
            # Input rows/cols read by output oy: oy*sh - top + ky.
            ys = np.arange(oh) * sh - top + ky
            xs = np.arange(ow) * sw - left + kx
            vy = (ys >= 0) & (ys < h)
            vx = (xs >= 0) & (xs < w)
            vals = x[:, np.clip(ys, 0, h - 1)][:, :, np.clip(xs, 0, w - 1)]
            valid = vy[:, None] & vx[None, :]
            yield vals, valid, (n, oh, ow, c)


def max_pool2d(
    x: np.ndarray,
    filter_size: Pair,
    stride: Pair,
    *,
    padding: Padding4 = (0, 0, 0, 0),
    activation: str = "NONE",
    output_scale: float = 1.0,
    output_zero_point: int = 0,
) -> np.ndarray:
    """MAX_POOL_2D int8, mirroring ``reference_integer_ops::MaxPool``: max over the in-image
    taps of each window, then clamp to the activation range (input/output quant are equal)."""
    x = np.asarray(x)
    out = None
    for vals, valid, _shape in _pool_windows(x, filter_size, stride, padding):
        v = np.where(valid[None, :, :, None], vals.astype(np.int32), -(1 << 30))
        out = v if out is None else np.maximum(out, v)
    act = activation_range(activation, output_scale, output_zero_point)
    return np.clip(out, act[0], act[1]).astype(np.int8)


def avg_pool2d(
    x: np.ndarray,
    filter_size: Pair,
    stride: Pair,
    *,
    padding: Padding4 = (0, 0, 0, 0),
    activation: str = "NONE",
    output_scale: float = 1.0,
    output_zero_point: int = 0,
) -> np.ndarray:
    """AVERAGE_POOL_2D int8, mirroring ``reference_integer_ops::AveragePool``.

    Sums the in-image taps (padding is excluded from the count ``c``), then rounds half away
    from zero with C integer division: ``acc > 0 ? (acc + c/2) / c : (acc - c/2) / c``, and
    clamps to the activation range.  No requantisation (input/output quant are equal).
    """
    x = np.asarray(x)
    acc = None
    count = None
    for vals, valid, _shape in _pool_windows(x, filter_size, stride, padding):
        v = np.where(valid[None, :, :, None], vals.astype(np.int64), 0)
        acc = v if acc is None else acc + v
        cnt = valid.astype(np.int64)
        count = cnt if count is None else count + cnt
    if np.any(count == 0):
        raise ValueError("AVERAGE_POOL_2D window without any in-image tap (TFLite fails)")
    c = count[None, :, :, None]
    half = c // 2
    num = np.where(acc > 0, acc + half, acc - half)
    q = np.abs(num) // c * np.sign(num)  # C division truncates toward zero
    act = activation_range(activation, output_scale, output_zero_point)
    return np.clip(q, act[0], act[1]).astype(np.int8)


# ---------------------------------------------------------------------------------------------
# Element-wise binary ops
# ---------------------------------------------------------------------------------------------


def _add_sub_params(s1: float, s2: float, so: float) -> tuple[tuple[int, int], ...]:
    """Shared ADD/SUB ``Prepare`` (int8): left_shift 20, inputs rescaled to 2*max(s1, s2)."""
    s1, s2, so = float(s1), float(s2), float(so)
    twice_max = 2.0 * float(max(s1, s2))
    real1 = float(s1) / twice_max
    real2 = float(s2) / twice_max
    real_out = twice_max / (float(1 << 20) * float(so))
    return (
        quantize_multiplier_smaller_than_one_exp(real1),
        quantize_multiplier_smaller_than_one_exp(real2),
        (real_out,),
    )


def add(
    x1: np.ndarray,
    x2: np.ndarray,
    *,
    input1_scale: float,
    input1_zero_point: int,
    input2_scale: float,
    input2_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    activation: str = "NONE",
) -> np.ndarray:
    """ADD int8 with numpy broadcasting, mirroring ``reference_integer_ops::Add`` /
    ``BroadcastAdd6DSlow``.

    Each input: ``((x - zp) << 20)`` scaled by ``MultiplyByQuantizedMultiplierSmallerThanOneExp``
    with ``s_i / (2 * max(s1, s2))``; the int32 sum is scaled by
    ``2 * max(s1, s2) / (2**20 * s_out)`` (must be < 1), ``+ out_zp``, clamped.
    """
    (m1, sh1), (m2, sh2), (real_out,) = _add_sub_params(input1_scale, input2_scale, output_scale)
    mo, sho = quantize_multiplier_smaller_than_one_exp(real_out)
    a = (np.asarray(x1, dtype=np.int64) - input1_zero_point) << 20
    b = (np.asarray(x2, dtype=np.int64) - input2_zero_point) << 20
    sa = multiply_by_quantized_multiplier_smaller_than_one_exp(a, m1, sh1)
    sb = multiply_by_quantized_multiplier_smaller_than_one_exp(b, m2, sh2)
    raw = multiply_by_quantized_multiplier_smaller_than_one_exp(wrap_int32(sa + sb), mo, sho)
    act = activation_range(activation, output_scale, output_zero_point)
    return np.clip(raw + output_zero_point, act[0], act[1]).astype(np.int8)


def sub(
    x1: np.ndarray,
    x2: np.ndarray,
    *,
    input1_scale: float,
    input1_zero_point: int,
    input2_scale: float,
    input2_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    activation: str = "NONE",
) -> np.ndarray:
    """SUB int8 with broadcasting, mirroring ``reference_ops::Sub`` / ``BroadcastQuantSubSlow``:
    the ADD algorithm with the scaled second input subtracted.  (An output multiplier > 1, which
    TFLite then feeds to a right shift by a negative amount, is rejected.)"""
    (m1, sh1), (m2, sh2), (real_out,) = _add_sub_params(input1_scale, input2_scale, output_scale)
    if real_out > 1.0:
        raise ValueError("SUB output multiplier > 1 is not supported")
    mo, sho = quantize_multiplier_smaller_than_one_exp(real_out)
    a = (np.asarray(x1, dtype=np.int64) - input1_zero_point) << 20
    b = (np.asarray(x2, dtype=np.int64) - input2_zero_point) << 20
    sa = multiply_by_quantized_multiplier_smaller_than_one_exp(a, m1, sh1)
    sb = multiply_by_quantized_multiplier_smaller_than_one_exp(b, m2, sh2)
    raw = multiply_by_quantized_multiplier_smaller_than_one_exp(wrap_int32(sa - sb), mo, sho)
    act = activation_range(activation, output_scale, output_zero_point)
    return np.clip(raw + output_zero_point, act[0], act[1]).astype(np.int8)


def mul(
    x1: np.ndarray,
    x2: np.ndarray,
    *,
    input1_scale: float,
    input1_zero_point: int,
    input2_scale: float,
    input2_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    activation: str = "NONE",
) -> np.ndarray:
    """MUL int8 with broadcasting, mirroring ``reference_integer_ops::Mul``.

    Multiplier ``double(float(float(s1 * s2) / s_out))`` (evaluated in float32, as in mul.cc);
    ``MultiplyByQuantizedMultiplier((x1 - zp1) * (x2 - zp2)) + out_zp``, clamped.
    """
    real = float(np.float32(np.float32(f32(input1_scale) * f32(input2_scale))
                            / f32(output_scale)))
    m, s = quantize_multiplier(real)
    prod = (np.asarray(x1, dtype=np.int64) - input1_zero_point) * (
        np.asarray(x2, dtype=np.int64) - input2_zero_point)
    act = activation_range(activation, output_scale, output_zero_point)
    return _requantize(prod, m, s, output_zero_point, act)


def minimum(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """MINIMUM int8: element-wise min of the raw values with broadcasting (no requantisation;
    TFLite's ``reference_ops::MaximumMinimumBroadcastSlow`` ignores quantisation)."""
    return np.minimum(np.asarray(x1), np.asarray(x2))


def maximum(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """MAXIMUM int8: element-wise max of the raw values with broadcasting."""
    return np.maximum(np.asarray(x1), np.asarray(x2))


# ---------------------------------------------------------------------------------------------
# Reductions, shape ops
# ---------------------------------------------------------------------------------------------


def mean_hw(
    x: np.ndarray,
    *,
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    keep_dims: bool = True,
) -> np.ndarray:
    """MEAN int8 over axes [1, 2] (N, H, W, C) -> (N, 1, 1, C) or (N, C).

    Mirrors ``reference_ops::QuantizedMeanOrSum`` (what LiteRT's reference MEAN kernel runs for
    int8): ``sum`` in int32; multiplier from ``double(in_s) / double(out_s)``, then folded with
    ``1/num``: ``shift = min(floor(log2(num)), 32, 31 + out_shift)``,
    ``mult' = (int64(mult) << shift) / num`` (C division), ``shift' = out_shift - shift``;
    ``out = MultiplyByQuantizedMultiplier(sum - in_zp * num, mult', shift') + out_zp``, clamped.
    """
    x = np.asarray(x)
    n, h, w, c = x.shape
    num = h * w
    total = x.astype(np.int64).sum(axis=(1, 2))
    real = float(input_scale) / float(output_scale)
    mult, out_shift = quantize_multiplier(real)
    shift = min(num.bit_length() - 1, 32, 31 + out_shift)
    mult2 = (mult << shift) // num  # both non-negative: floor == C truncation
    shift2 = out_shift - shift
    shifted = wrap_int32(total - input_zero_point * num)
    out = multiply_by_quantized_multiplier(shifted, mult2, shift2) + output_zero_point
    out = saturate(out, np.int8)
    return out.reshape(n, 1, 1, c) if keep_dims else out


def pad(x: np.ndarray, paddings: Sequence[Sequence[int]], *, output_zero_point: int) -> np.ndarray:
    """PAD int8: constant padding with the output zero point (``reference_ops::Pad``).

    ``paddings``: one (before, after) pair per dimension."""
    return np.pad(np.asarray(x), [tuple(p) for p in paddings],
                  constant_values=np.int8(output_zero_point))


def reshape(x: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """RESHAPE: a copy with a new shape (one -1 allowed); values are untouched."""
    return np.asarray(x).reshape(tuple(shape)).copy()


def concatenation(
    xs: Sequence[np.ndarray],
    *,
    axis: int,
    input_scales: Sequence[float] | None = None,
    input_zero_points: Sequence[int] | None = None,
    output_scale: float | None = None,
    output_zero_point: int | None = None,
    activation: str = "NONE",
) -> np.ndarray:
    """CONCATENATION.  Inputs whose quantisation equals the output's are copied verbatim
    (``reference_ops::Concatenation``; TFLite's int8 kernel requires that for every input).

    Other inputs are requantised like TFLite's uint8 ``ConcatenationWithScaling``:
    ``scale = float(in_s * float(1/out_s))``, ``bias = float(-in_zp * scale)``,
    ``q = (int)roundf(x * scale + bias) + out_zp``, clamped to the dtype range.  The dtype of the
    first input is kept (int8 or uint8).  ``activation`` must be NONE (a fused activation is not
    supported by TFLite's quantised concatenation either).
    """
    if activation not in (None, "NONE", 0):
        raise ValueError("fused activation on CONCATENATION is not supported")
    arrays = [np.asarray(a) for a in xs]
    dtype = arrays[0].dtype
    if input_scales is None or output_scale is None:
        return np.concatenate(arrays, axis=axis)
    out_s = f32(output_scale)
    inv = np.float32(np.float32(1.0) / out_s)
    parts = []
    for a, s, zp in zip(arrays, input_scales, input_zero_points, strict=True):
        if int(zp) == int(output_zero_point) and f32(s) == out_s:
            parts.append(a)
            continue
        scale = np.float32(f32(s) * inv)
        bias = np.float32(np.float32(-int(zp)) * scale)
        val = (a.astype(np.float32) * scale) + bias  # float32 arithmetic, no FMA
        q = round_half_away_from_zero_array(val).astype(np.int64)
        parts.append(saturate(q + int(output_zero_point), dtype))
    return np.concatenate(parts, axis=axis)


# ---------------------------------------------------------------------------------------------
# Resizing
# ---------------------------------------------------------------------------------------------


def resize_nearest_neighbor(
    x: np.ndarray, size: Pair, *, align_corners: bool = False, half_pixel_centers: bool = False
) -> np.ndarray:
    """RESIZE_NEAREST_NEIGHBOR, mirroring ``reference_ops::ResizeNearestNeighbor``.

    Scale ``float(in) / out`` (``(in - 1) / (out - 1)`` with align_corners and out > 1); source
    index ``floor((i + offset) * scale)`` (``round`` with align_corners), ``offset = 0.5`` with
    half_pixel_centers, clamped to ``[0, in - 1]`` -- all in float32.
    """
    x = np.asarray(x)
    _, h, w, _ = x.shape
    oh, ow = size

    def indices(in_size: int, out_size: int) -> np.ndarray:
        scale = np.float32(in_size) / np.float32(out_size)
        if align_corners and out_size > 1:
            scale = np.float32(in_size - 1) / np.float32(out_size - 1)
        offset = np.float32(0.5 if half_pixel_centers else 0.0)
        pos = (np.arange(out_size).astype(np.float32) + offset) * scale
        if align_corners:
            idx = round_half_away_from_zero_array(pos).astype(np.int64)
        else:
            idx = np.floor(pos).astype(np.int64)
        idx = np.minimum(idx, in_size - 1)
        if half_pixel_centers:
            idx = np.maximum(idx, 0)
        return idx

    return x[:, indices(h, oh)][:, :, indices(w, ow)].copy()


def resize_bilinear(
    x: np.ndarray, size: Pair, *, align_corners: bool = False, half_pixel_centers: bool = False
) -> np.ndarray:
    """RESIZE_BILINEAR int8, mirroring ``reference_ops::ResizeBilinearInteger``.

    10-bit fixed-point source coordinates: ``scale_10 = ((in << 10) + out/2) / out`` (with
    align_corners ``((in-1) << 10 + (out-1)/2) / (out-1)``); ``v = i * scale_10`` (with
    half_pixel_centers ``+ scale_10/2 - 512``); ``lo = max(v / 1024, 0)``,
    ``hi = min((v + 1023) / 1024, in - 1)`` (C division); the four taps are weighted by the
    10-bit fractions in int64 and the 20-bit result is rounded half away from zero
    (``(acc +- 2**19) / 2**20``).
    """
    x = np.asarray(x)
    _, h, w, _ = x.shape
    oh, ow = size

    def cdiv(a: np.ndarray, b: int) -> np.ndarray:
        return np.where(a >= 0, a // b, -((-a) // b))

    def coords(in_size: int, out_size: int):
        scale10 = ((1 << 10) * in_size + out_size // 2) // out_size
        if align_corners and out_size > 1:
            scale10 = ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
        i = np.arange(out_size, dtype=np.int64)
        v = i * scale10 + (scale10 // 2 - (1 << 9) if half_pixel_centers else 0)
        lo = np.maximum(cdiv(v, 1 << 10), 0)
        hi = np.minimum(cdiv(v + (1 << 10) - 1, 1 << 10), in_size - 1)
        frac = v - (lo << 10)
        return lo, hi, frac

    y0, y1, fy = coords(h, oh)
    x0, x1, fx = coords(w, ow)
    xi = x.astype(np.int64)
    one = 1 << 10
    wy0 = (one - fy)[None, :, None, None]
    wy1 = fy[None, :, None, None]
    wx0 = (one - fx)[None, None, :, None]
    wx1 = fx[None, None, :, None]
    top_l = xi[:, y0][:, :, x0]
    bot_l = xi[:, y1][:, :, x0]
    top_r = xi[:, y0][:, :, x1]
    bot_r = xi[:, y1][:, :, x1]
    acc = top_l * wy0 * wx0 + bot_l * wy1 * wx0 + top_r * wy0 * wx1 + bot_r * wy1 * wx1
    rnd = np.where(acc > 0, 1 << 19, -(1 << 19))
    out = cdiv(acc + rnd, 1 << 20)
    return out.astype(x.dtype)


# ---------------------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------------------


def _lut_int8(transform, input_scale: float, input_zp: int, output_scale: float,
              output_zp: int) -> np.ndarray:
    """TFLite ``LUTPopulate<int8_t>`` (float32 arithmetic throughout)."""
    vals = np.arange(-128, 128, dtype=np.int32)
    inv = np.float32(np.float32(1.0) / f32(output_scale))
    deq = f32(input_scale) * (vals - int(input_zp)).astype(np.float32)
    transformed = transform(deq).astype(np.float32)
    rescaled = round_half_away_from_zero_array((transformed * inv).astype(np.float32))
    quantized = (rescaled + np.float32(output_zp)).astype(np.int64)
    return np.clip(quantized, -128, 127).astype(np.int8)


@functools.cache
def _libm_float_fn(name: str):
    """The C library's single-precision ``name`` (``tanhf``/``expf``) via ctypes, or None.

    TFLite's LUTs call ``std::tanh(float)`` / ``std::exp(float)``, i.e. the platform libm's
    ``tanhf``/``expf`` (LiteRT links libm dynamically).  glibc's ``tanhf`` is not correctly
    rounded, so calling the same function is the only way to be bit-exact everywhere.
    """
    try:
        path = ctypes.util.find_library("m")
        lib = ctypes.CDLL(path) if path else ctypes.CDLL(None)
        fn = getattr(lib, name)
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_float
    fn.argtypes = [ctypes.c_float]
    return fn


def _float_fn(name: str, fallback, v: np.ndarray) -> np.ndarray:
    fn = _libm_float_fn(name)
    if fn is None:  # correctly rounded float64 evaluation, rounded to float32
        return fallback(v.astype(np.float64)).astype(np.float32)
    flat = np.asarray(v, dtype=np.float32).ravel()
    return np.array([fn(float(t)) for t in flat], dtype=np.float32).reshape(np.shape(v))


def _tanh_f32(v: np.ndarray) -> np.ndarray:
    return _float_fn("tanhf", np.tanh, v)


def _sigmoid_f32(v: np.ndarray) -> np.ndarray:
    e = _float_fn("expf", np.exp, (-v).astype(np.float32))
    return (np.float32(1.0) / (np.float32(1.0) + e)).astype(np.float32)


def tanh(x: np.ndarray, *, input_scale: float, input_zero_point: int, output_scale: float,
         output_zero_point: int) -> np.ndarray:
    """TANH int8 via TFLite's 256-entry LUT (``LUTPopulate`` with ``std::tanh`` in float), which
    is what LiteRT's reference (and generic optimised) TANH kernels use for int8.  The table
    entries call the platform libm ``tanhf`` exactly like TFLite does."""
    lut = _lut_int8(_tanh_f32, input_scale, input_zero_point, output_scale, output_zero_point)
    return lut[np.asarray(x, dtype=np.int64) + 128]


def sigmoid(x: np.ndarray, *, input_scale: float, input_zero_point: int,
            output_scale: float = 1.0 / 256, output_zero_point: int = -128) -> np.ndarray:
    """LOGISTIC int8 via TFLite's LUT of ``1.0f / (1.0f + expf(-x))`` with libm ``expf``
    (TFLite requires output scale 1/256)."""
    lut = _lut_int8(_sigmoid_f32, input_scale, input_zero_point, output_scale,
                    output_zero_point)
    return lut[np.asarray(x, dtype=np.int64) + 128]


def leaky_relu(x: np.ndarray, *, alpha: float, input_scale: float, input_zero_point: int,
               output_scale: float, output_zero_point: int) -> np.ndarray:
    """LEAKY_RELU int8, mirroring ``reference_ops::QuantizeLeakyRelu``.

    Multipliers ``double(float(in_s * alpha / out_s))`` and ``double(float(in_s / out_s))``
    (float32 expressions, as in activations.cc); ``x - in_zp >= 0`` uses the identity one.
    """
    s_in, s_out, a = f32(input_scale), f32(output_scale), np.float32(alpha)
    m_alpha, s_alpha = quantize_multiplier(float(np.float32(np.float32(s_in * a) / s_out)))
    m_id, s_id = quantize_multiplier(float(np.float32(s_in / s_out)))
    v = np.asarray(x, dtype=np.int64) - input_zero_point
    pos = multiply_by_quantized_multiplier(v, m_id, s_id)
    neg = multiply_by_quantized_multiplier(v, m_alpha, s_alpha)
    return saturate(np.where(v >= 0, pos, neg) + output_zero_point, np.int8)


def relu(x: np.ndarray, *, activation: str, input_scale: float, input_zero_point: int,
         output_scale: float, output_zero_point: int) -> np.ndarray:
    """RELU, RELU6, RELU_N1_TO_1 int8 (`activation` names which): the input requantized with the
    multiplier of `float(in_s / out_s)` (a float32 division, as TFLite's prepare does), then
    clamped to the activation's range on the output scale."""
    m, s = quantize_multiplier(float(np.float32(f32(input_scale) / f32(output_scale))))
    v = multiply_by_quantized_multiplier(np.asarray(x, dtype=np.int64) - input_zero_point, m, s)
    low, high = activation_range(activation, output_scale, output_zero_point)
    return np.clip(v + output_zero_point, low, high).astype(np.int8)


INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1


def _int16_multiplier(real: np.float32) -> tuple[int, int]:
    """TFLite's 16-bit multiplier of `real`: `QuantizeMultiplier`'s 32-bit one rounded to its
    top 16 bits (saturating), and its shift."""
    multiplier, shift = quantize_multiplier(float(real))
    if multiplier >= INT32_MAX - (1 << 15):
        return INT16_MAX, shift
    return (multiplier + (1 << 15)) >> 16, shift


def _rounding_high_mul16(a: np.ndarray, b: int) -> np.ndarray:
    """gemmlowp's int16 `SaturatingRoundingDoublingHighMul`: (a*b + nudge) / 2^15, truncated,
    the nudge 2^14 for a non-negative product and 1 - 2^14 otherwise."""
    product = a * np.int64(b)
    nudged = product + np.where(product >= 0, 1 << 14, 1 - (1 << 14))
    quotient = np.where(nudged >= 0, nudged >> 15, -((-nudged) >> 15))
    return np.where((a == INT16_MIN) & (b == INT16_MIN), INT16_MAX, quotient)


def _high_mul16(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The same without the nudge (hard swish's last product): a*b / 2^15, truncated."""
    product = a * b
    quotient = np.where(product >= 0, product >> 15, -((-product) >> 15))
    return np.where((a == INT16_MIN) & (b == INT16_MIN), INT16_MAX, quotient)


def hard_swish(x: np.ndarray, *, input_scale: float, input_zero_point: int, output_scale: float,
               output_zero_point: int) -> np.ndarray:
    """HARD_SWISH int8, x * relu6(x + 3) / 6 in TFLite's int16 fixed point.

    The input, less its zero point, is taken to a 128 times finer scale (`hires`, exact in
    int16). Two 16-bit multipliers come from float32 ratios of that scale: to the output scale,
    and to 3 / 2^15, the scale on which int16 spans [-3, 3] (`reluish`). The reluish value,
    saturated to int16, maps [-3, 3] onto [0, 1) in Q15 by `(r + 2^15) >> 1`: relu6(x + 3) / 6.
    The product of the two, truncated, is shifted down to the output scale and clamped.
    """
    hires_scale = np.float32(np.float32(1.0 / 128.0) * f32(input_scale))
    out_multiplier, out_shift = _int16_multiplier(np.float32(hires_scale / f32(output_scale)))
    relu_multiplier, relu_shift = _int16_multiplier(np.float32(hires_scale / np.float32(3.0 / 32768.0)))
    if out_shift > 0:
        raise ValueError(f"hard_swish: output multiplier exponent {out_shift} must not be positive (TFLite's check)")
    hires = (np.asarray(x, dtype=np.int64) - input_zero_point) * 128
    scaled = _rounding_high_mul16(hires, out_multiplier)
    reluish = hires
    if relu_shift > 0:  # a left shift before the multiply, a doubling after, each saturating
        reluish = np.clip(reluish << (relu_shift - 1), INT16_MIN, INT16_MAX)
    reluish = _rounding_high_mul16(reluish, relu_multiplier)
    if relu_shift > 0:
        reluish = np.clip(reluish << 1, INT16_MIN, INT16_MAX)
    elif relu_shift < 0:
        reluish = rounding_divide_by_pot(reluish, -relu_shift)
    gate = (reluish + (1 << 15)) >> 1
    product = _high_mul16(gate, scaled)
    return saturate(rounding_divide_by_pot(product, -out_shift) + output_zero_point, np.int8)


def quantize(x: np.ndarray, *, input_scale: float, input_zero_point: int, output_scale: float,
             output_zero_point: int) -> np.ndarray:
    """QUANTIZE int8 -> int8 (a requantisation), mirroring ``reference_ops::Requantize``:
    multiplier ``double(in_s) / double(out_s)``,
    ``MultiplyByQuantizedMultiplier(x - in_zp) + out_zp``, clamped."""
    real = float(input_scale) / float(output_scale)
    m, s = quantize_multiplier(real)
    v = np.asarray(x, dtype=np.int64) - input_zero_point
    return saturate(multiply_by_quantized_multiplier(v, m, s) + output_zero_point, np.int8)


# ---------------------------------------------------------------------------------------------
# Softmax (gemmlowp fixed point)
# ---------------------------------------------------------------------------------------------


def _sat_left_shift(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp ``SaturatingRoundingMultiplyByPOT<exponent>`` for exponent > 0 (int32)."""
    threshold = (1 << (31 - exponent)) - 1
    res = wrap_int32(x << exponent)
    res = np.where(x > threshold, np.int64(INT32_MAX), res)
    return np.where(x < -threshold, np.int64(-(1 << 31)), res)


def _exp_on_interval_between_negative_one_quarter_and_0_excl(a: np.ndarray) -> np.ndarray:
    srdhm = saturating_rounding_doubling_high_mul
    constant_term = 1895147668  # exp(-1/8) in Q0.31
    constant_1_over_3 = 715827883
    x = wrap_int32(a + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    poly = rounding_divide_by_pot(
        wrap_int32(srdhm(wrap_int32(x4_over_4 + x3), constant_1_over_3) + x2), 1)
    return wrap_int32(constant_term + srdhm(constant_term, wrap_int32(x + poly)))


def _exp_on_negative_values(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp ``exp_on_negative_values`` for a Q(integer_bits) input; returns Q0.31."""
    frac_bits = 31 - integer_bits
    one_quarter = 1 << (frac_bits - 2)
    mask = one_quarter - 1
    a_mod_q_minus_q = (a & mask) - one_quarter
    result = _exp_on_interval_between_negative_one_quarter_and_0_excl(
        _sat_left_shift(a_mod_q_minus_q, integer_bits))
    remainder = wrap_int32(a_mod_q_minus_q - a)
    barrel = [(-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
              (2, 39332535), (3, 720401), (4, 242)]
    for exponent, multiplier in barrel:
        if integer_bits > exponent:
            bit = 1 << (frac_bits + exponent)
            result = np.where((remainder & bit) != 0,
                              saturating_rounding_doubling_high_mul(result, multiplier), result)
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, np.int64(INT32_MAX), result)


def _one_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    """gemmlowp ``one_over_one_plus_x_for_x_in_0_1`` (Newton-Raphson, Q0.31 in and out)."""
    srdhm = saturating_rounding_doubling_high_mul
    s = a + INT32_MAX  # RoundingHalfSum(a, One)
    half_denominator = np.where(s >= 0, (s + 1) // 2, -((-(s - 1)) // 2))
    x = wrap_int32(1515870810 + srdhm(half_denominator, -1010580540))  # Q2.29
    one_f2 = 1 << 29
    for _ in range(3):
        half_denominator_times_x = srdhm(half_denominator, x)
        one_minus = wrap_int32(one_f2 - half_denominator_times_x)
        x = wrap_int32(x + _sat_left_shift(srdhm(x, one_minus), 2))
    return _sat_left_shift(x, 1)


def softmax_reference_supported(input_scale: float, beta: float = 1.0) -> bool:
    """Whether TFLite's reference int8 SOFTMAX can prepare: ``beta * in_s * 2**26`` must exceed
    1 (``QuantizeMultiplierGreaterThanOne`` aborts otherwise, i.e. for input scales below about
    1.5e-8).  The reference kernel also aborts at run time when a row's sum of exponentials
    reaches 512 (e.g. > 512 near-equal logits)."""
    return float(np.float32(beta)) * float(f32(input_scale)) * float(1 << 26) > 1.0


def softmax(x: np.ndarray, *, input_scale: float, beta: float = 1.0) -> np.ndarray:
    """SOFTMAX int8 -> int8 (output scale 1/256, zero point -128) along the last axis,
    mirroring the gemmlowp fixed-point ``reference_ops::Softmax`` that LiteRT's reference kernel
    runs for int8.

    ``PreprocessSoftmaxScaling``: ``min(beta * in_s * 2**26, 2**31 - 1)`` ->
    ``QuantizeMultiplierGreaterThanOne``; ``diff_min = -floor(31 * 2**26 / 2**left_shift)``.
    Per row: ``d = x - max``; taps with ``d >= diff_min`` contribute
    ``exp_on_negative_values(Q5.26(MultiplyByQuantizedMultiplierGreaterThanOne(d)))``, summed
    in Q12.19; the reciprocal comes from ``GetReciprocal``; each output is
    ``RoundingDivideByPOT(recip * exp, num_bits_over_unit + 23) - 128``, clamped; taps below
    ``diff_min`` output -128.  Raises ValueError where TFLite aborts (see
    :func:`softmax_reference_supported`); :func:`softmax_lut` is the default kernel's algorithm.
    """
    x = np.asarray(x)
    if not softmax_reference_supported(input_scale, beta):
        raise ValueError(f"int8 softmax: beta * input_scale * 2**26 <= 1 (input scale "
                         f"{float(f32(input_scale))!r}); TFLite's reference kernel aborts here")
    real = min(float(np.float32(beta)) * float(f32(input_scale)) * float(1 << 26),
               float((1 << 31) - 1))
    mult, left_shift = quantize_multiplier_greater_than_one(real)
    max_input_rescaled = 1.0 * ((1 << 5) - 1) * (1 << 26) / (1 << left_shift)
    diff_min = -math.floor(max_input_rescaled)

    xi = x.astype(np.int64)
    diff = xi - xi.max(axis=-1, keepdims=True)
    valid = diff >= diff_min
    rescaled = multiply_by_quantized_multiplier_greater_than_one(
        np.where(valid, diff, 0), mult, left_shift)
    exps = _exp_on_negative_values(rescaled, 5)  # Q0.31
    exps_acc = rounding_divide_by_pot(exps, 12)  # Rescale<12>: Q0.31 -> Q12.19
    sum_of_exps = wrap_int32(np.where(valid, exps_acc, 0).sum(axis=-1, keepdims=True))

    # GetReciprocal(sum, 12): sum > 0 because the row maximum contributes exp(0).
    su = sum_of_exps.astype(np.uint64)
    headroom_plus_one = np.zeros_like(sum_of_exps)
    for bit in range(31, -1, -1):
        still = (su < (np.uint64(1) << np.uint64(bit)))
        headroom_plus_one = headroom_plus_one + still.astype(np.int64)
    num_bits_over_unit = 12 - headroom_plus_one
    shifted = ((su << headroom_plus_one.astype(np.uint64)) & np.uint64(0xFFFFFFFF)).astype(
        np.int64) - (1 << 31)
    shifted_scale = _one_over_one_plus_x_for_x_in_0_1(wrap_int32(shifted))

    exponent = num_bits_over_unit + 31 - 8
    if np.any(exponent > 31):
        # TFLITE_CHECK(0 <= exponent && exponent <= 31) aborts TFLite: the sum of exponentials
        # reached 512 (e.g. more than 512 near-equal logits).
        raise ValueError("int8 softmax: sum of exponentials >= 512 is not supported by TFLite")
    unsat = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted_scale, exps),
                                   exponent)
    out = np.clip(unsat - 128, -128, 127)
    return np.where(valid, out, -128).astype(np.int8)


def softmax_lut(x: np.ndarray, *, input_scale: float, beta: float = 1.0,
                output_scale: float = 1.0 / 256, output_zero_point: int = -128) -> np.ndarray:
    """SOFTMAX int8 as TFLite's *optimised* kernel computes it on x86 (``BUILTIN`` resolver):
    ``PopulateSoftmaxLookupTable`` + ``optimized_ops::Softmax``.

    ``table[255 - v] = expf(-in_s * beta * v)`` (float32); per row, the float32 sum of
    ``table[255 - max + x]`` is accumulated sequentially, ``inv = 1.0f / (sum * out_s)`` and each
    output is ``(int)round(table[...] * inv) + out_zp``, clamped.  Provided because the reference
    kernel (:func:`softmax`) cannot prepare when ``beta * in_s * 2**26 <= 1`` (input scales below
    ~1.5e-8, as in some post-training-quantised classifiers), where LiteRT's reference resolver
    aborts while the default resolver runs this algorithm.
    """
    x = np.asarray(x)
    scale = np.float32(-f32(input_scale) * np.float32(beta))
    vals = np.arange(256, dtype=np.float32)
    table = np.empty(256, dtype=np.float32)
    table[255 - np.arange(256)] = _float_fn("expf", np.exp, (scale * vals).astype(np.float32))
    xi = x.astype(np.int64)
    idx = 255 - xi.max(axis=-1, keepdims=True) + xi
    e = table[idx]
    total = np.cumsum(e, axis=-1, dtype=np.float32)[..., -1:]  # sequential float32 sum
    inv = np.float32(1.0) / (total * f32(output_scale))
    prob = (e * inv).astype(np.float32)
    q = round_half_away_from_zero_array(prob).astype(np.int64) + int(output_zero_point)
    return np.clip(q, -128, 127).astype(np.int8)
