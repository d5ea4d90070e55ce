"""Integer quantization primitives, bit-exact with TFLite's reference kernels.

These mirror ``tensorflow/lite/kernels/internal/quantization_util.cc`` (``QuantizeMultiplier``
and friends), ``tensorflow/lite/kernels/internal/common.h`` (``MultiplyByQuantizedMultiplier``)
and gemmlowp's ``fixedpoint.h`` (``SaturatingRoundingDoublingHighMul``,
``RoundingDivideByPOT``).  All array functions are vectorised over numpy arrays and compute in
int64, returning int64 arrays whose values lie in the int32 range (unless documented otherwise).

TFLite can be built with two variants of ``MultiplyByQuantizedMultiplier``: the default
"double rounding" one (a rounding doubling high multiply followed by a rounding right shift) and
``TFLITE_SINGLE_ROUNDING`` (one 64-bit multiply, add, shift).  The LiteRT pip wheels use the
default (checked by ``test_litert_uses_double_rounding``); the ``single_rounding`` flags here
exist so the difference can be demonstrated.

Scales are float32 in a TFLite flatbuffer.  Functions that derive multipliers from scales first
round every scale to float32 and then reproduce TFLite's exact float/double expression.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "activation_range",
    "f32",
    "multiply_by_quantized_multiplier",
    "multiply_by_quantized_multiplier_greater_than_one",
    "multiply_by_quantized_multiplier_smaller_than_one_exp",
    "quantize_multiplier",
    "quantize_multiplier_array",
    "quantize_multiplier_greater_than_one",
    "quantize_multiplier_smaller_than_one_exp",
    "round_half_away_from_zero",
    "round_half_away_from_zero_array",
    "rounding_divide_by_pot",
    "saturate",
    "saturating_rounding_doubling_high_mul",
    "wrap_int32",
]

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1

ArrayLike = Any


def f32(x: float | np.floating) -> np.float32:
    """Round a scale to float32, as it is stored in (and read from) a TFLite flatbuffer."""
    return np.float32(x)


def round_half_away_from_zero(x: float) -> float:
    """``std::round`` / ``TfLiteRound`` for one double: nearest integer, ties away from zero."""
    a = abs(float(x))
    f = math.floor(a)
    r = f + 1.0 if a - f >= 0.5 else f
    return math.copysign(r, x)


def round_half_away_from_zero_array(x: ArrayLike) -> np.ndarray:
    """Vectorised ``std::round`` / ``roundf`` (keeps the float dtype of ``x``).

    ``trunc(x)`` plus one step away from zero when the discarded fraction is >= 0.5; the
    fraction ``x - trunc(x)`` is exact in binary floating point, so no double rounding occurs
    (unlike ``floor(x + 0.5)``).
    """
    x = np.asarray(x)
    t = np.trunc(x)
    away = np.abs(x - t) >= 0.5
    return np.where(away, t + np.sign(x), t).astype(x.dtype)


def quantize_multiplier(real: float, *, single_rounding: bool = False) -> tuple[int, int]:
    """TFLite ``QuantizeMultiplier``: ``real ~= multiplier * 2**(shift - 31)``.

    ``frexp`` gives ``real = q * 2**shift`` with ``q`` in [0.5, 1); ``q * 2**31`` is rounded half
    away from zero; if that rounds up to ``2**31`` the multiplier is halved and the shift
    incremented.  Shifts below -31 flush the multiplier to zero (returning ``(0, 0)``).  With
    ``single_rounding`` (``TFLITE_SINGLE_ROUNDING`` builds) shifts above 30 saturate to
    ``(2**31 - 1, 30)``.  Returns ``(multiplier, shift)`` with a positive shift meaning a left
    shift.
    """
    real = float(real)
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = int(round_half_away_from_zero(q * float(1 << 31)))
    assert abs(q_fixed) <= (1 << 31)
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    assert q_fixed <= INT32_MAX
    if shift < -31:
        shift = 0
        q_fixed = 0
    if single_rounding and shift > 30:
        shift = 30
        q_fixed = (1 << 31) - 1
    return q_fixed, shift


def quantize_multiplier_smaller_than_one_exp(real: float) -> tuple[int, int]:
    """TFLite ``QuantizeMultiplierSmallerThanOneExp``: requires 0 < real < 1, shift <= 0."""
    if not 0.0 < real < 1.0:
        raise ValueError(f"multiplier {real!r} is not in (0, 1)")
    multiplier, shift = quantize_multiplier(real)
    assert shift <= 0
    return multiplier, shift


def quantize_multiplier_greater_than_one(real: float) -> tuple[int, int]:
    """TFLite ``QuantizeMultiplierGreaterThanOne``: requires real > 1, shift >= 0."""
    if not real > 1.0:
        raise ValueError(f"multiplier {real!r} is not > 1")
    multiplier, shift = quantize_multiplier(real)
    assert shift >= 0
    return multiplier, shift


def quantize_multiplier_array(reals: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """:func:`quantize_multiplier` element-wise (per-channel); returns int64 arrays."""
    flat = np.asarray(reals, dtype=np.float64).ravel()
    pairs = [quantize_multiplier(float(r)) for r in flat]
    shape = np.shape(reals)
    mult = np.array([p[0] for p in pairs], dtype=np.int64).reshape(shape)
    shift = np.array([p[1] for p in pairs], dtype=np.int64).reshape(shape)
    return mult, shift


def wrap_int32(x: ArrayLike) -> np.ndarray:
    """Two's-complement wrap of int64 values to int32 (what C++ int32 overflow does in practice)."""
    return np.asarray(x, dtype=np.int64).astype(np.int32).astype(np.int64)


def saturate(x: ArrayLike, dtype: Any = np.int8) -> np.ndarray:
    """Clamp to the range of ``dtype`` and cast (TFLite's min/max then static_cast)."""
    info = np.iinfo(dtype)
    return np.clip(np.asarray(x), info.min, info.max).astype(dtype)


def saturating_rounding_doubling_high_mul(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` for int32 (ARM VQRDMULH).

    ``(a*b + nudge) / 2**31`` with C truncating division, ``nudge = 2**30`` when ``a*b >= 0``
    and ``1 - 2**30`` otherwise (so ties round toward +infinity); ``INT32_MIN * INT32_MIN``
    saturates to ``INT32_MAX``.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    t = a * b
    # nudge: 2**30 for t >= 0, 1 - 2**30 for t < 0  (t >> 63 is 0 or -1)
    t += (t >> 63) & np.int64(1 - (1 << 31))
    t += np.int64(1 << 30)
    # C division by 2**31 truncates toward zero: bias negative values by 2**31 - 1.
    t += (t >> 63) & np.int64((1 << 31) - 1)
    t >>= 31
    if np.any(b == INT32_MIN):
        t = np.where((a == INT32_MIN) & (b == INT32_MIN), np.int64(INT32_MAX), t)
    return t


def rounding_divide_by_pot(x: ArrayLike, exponent: ArrayLike) -> np.ndarray:
    """gemmlowp ``RoundingDivideByPOT``: ``x / 2**exponent`` rounded to nearest, ties away from
    zero (an arithmetic right shift plus a remainder/threshold correction).  ``exponent`` in
    [0, 31] may be an array broadcast against ``x``.

    Computed as ``(x + 2**(e-1) - [x < 0 and e > 0]) >> e`` in int64, which is the same
    rounding without the int32 remainder arithmetic.
    """
    x = np.asarray(x, dtype=np.int64)
    e = np.asarray(exponent, dtype=np.int64)
    if e.ndim == 0:
        ei = int(e)
        if ei == 0:
            return x.copy()
        t = x + np.int64(1 << (ei - 1))
        t += x >> 63
        t >>= ei
        return t
    t = x + ((np.int64(1) << e) >> 1)
    t += (x >> 63) & -(e > 0).astype(np.int64)
    return t >> e


def multiply_by_quantized_multiplier(
    x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike, *, single_rounding: bool = False
) -> np.ndarray:
    """TFLite ``MultiplyByQuantizedMultiplier(int32 x, int32 multiplier, int shift)``.

    Default (double rounding)::

        left = max(shift, 0); right = max(-shift, 0)
        RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x * 2**left, multiplier), right)

    where ``x * 2**left`` is an int32 product (wrapped here).  ``single_rounding`` gives the
    ``TFLITE_SINGLE_ROUNDING`` variant ``(x * multiplier + 2**(30 - shift)) >> (31 - shift)``.
    ``multiplier``/``shift`` broadcast against ``x`` (e.g. per-channel on the last axis).
    """
    x = np.asarray(x, dtype=np.int64)
    m = np.asarray(multiplier, dtype=np.int64)
    s = np.asarray(shift, dtype=np.int64)
    if single_rounding:
        total = 31 - s
        return (x * m + (np.int64(1) << (total - 1))) >> total
    left = np.maximum(s, 0)
    right = np.maximum(-s, 0)
    shifted = wrap_int32(x << left)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, m), right)


def multiply_by_quantized_multiplier_smaller_than_one_exp(
    x: ArrayLike, multiplier: ArrayLike, left_shift: ArrayLike
) -> np.ndarray:
    """TFLite ``MultiplyByQuantizedMultiplierSmallerThanOneExp`` (default build):
    ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, multiplier), -left_shift)``."""
    return rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(x, multiplier), -np.asarray(left_shift)
    )


def multiply_by_quantized_multiplier_greater_than_one(
    x: ArrayLike, multiplier: ArrayLike, left_shift: ArrayLike
) -> np.ndarray:
    """TFLite ``MultiplyByQuantizedMultiplierGreaterThanOne`` (default build):
    ``SaturatingRoundingDoublingHighMul(x * 2**left_shift, multiplier)`` (int32 product)."""
    x = np.asarray(x, dtype=np.int64)
    return saturating_rounding_doubling_high_mul(
        wrap_int32(x << np.asarray(left_shift, dtype=np.int64)), multiplier
    )


_ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}


def activation_range(
    activation: str | int | None, scale: float, zero_point: int, dtype: Any = np.int8
) -> tuple[int, int]:
    """TFLite ``CalculateActivationRangeQuantized`` for a fused activation.

    Bounds are quantised as ``zero_point + (int)TfLiteRound(f / scale)`` with the division in
    float32, then intersected with the range of ``dtype``.  ``activation`` is one of NONE, RELU,
    RELU6, RELU_N1_TO_1 (name or ``ActivationFunctionType`` value).
    """
    info = np.iinfo(dtype)
    qmin, qmax = int(info.min), int(info.max)
    act = _ACTIVATIONS[activation] if isinstance(activation, str) else int(activation or 0)
    s = f32(scale)

    def quantize(v: float) -> int:
        return int(zero_point) + int(round_half_away_from_zero(float(np.float32(v) / s)))

    if act == 1:
        return max(qmin, quantize(0.0)), qmax
    if act == 3:
        return max(qmin, quantize(0.0)), min(qmax, quantize(6.0))
    if act == 2:
        return max(qmin, quantize(-1.0)), min(qmax, quantize(1.0))
    if act == 0:
        return qmin, qmax
    raise ValueError(f"unsupported fused activation {activation!r}")
