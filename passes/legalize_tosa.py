"""legalize-tosa: int8 TOSA, as `tosa-converter-for-tflite` emits it, back into `nn` operators.

The converter lowers each TFLite operator into a small group of TOSA operations on plain i8/i32
tensors, with the quantization spelled out as integer `tosa.rescale` multipliers and shifts:

    CONV_2D, DEPTHWISE_CONV_2D   conv (i8 -> i32, zero points as operands) -> rescale -> [clamp]
    FULLY_CONNECTED              conv2d 1x1 on reshape(weights [O, K]) -> rescale -> [clamp] -> reshape
    ADD                          rescale(x1 << 20) [-> rescale] , rescale(x2 << 20) [-> rescale]
                                 -> add -> rescale -> [clamp]
    MEAN over H, W               rescale(x - zp) -> reduce_sum -> reduce_sum -> rescale
    MAX_POOL_2D, RESHAPE, QUANTIZE (int8 -> int8)   max_pool2d [-> clamp], reshape, rescale

This pass matches those groups and rebuilds the single `nn` operator. The clamp after a rescale
becomes the fused activation, a slice that only trims rows a strided convolution never reads is
folded into it, and constant weights become `arith.constant`s in TFLite's layouts.

Quantization
------------
`nn` carries real scales and derives the integer multipliers from them the way TFLite does
(conv: `double(in_s) * double(w_s[c]) / double(out_s)` through `QuantizeMultiplier`). TOSA
carries only the integers, so the pass *chooses* scales whose derivation gives back exactly
TOSA's integers:

* A TOSA multiplier `m` with shift `k` is the real `m * 2**-k`, which TFLite's `QuantizeMultiplier`
  turns back into `(m, 31 - k)` when `m` is normalized to [2**30, 2**31) (as the converter's
  multipliers are). Such a real has a 31-bit mantissa: a double holds it, a float32 does not, so
  recovered scales are exact doubles (`QuantAttr(..., exact=True)`, printed with `f64`).
* Convolution weights absorb everything: `w_s[c] = m_c * 2**-k_c * out_s / in_s`, for any
  activation scales. ADD, MEAN and QUANTIZE tie the scales of their operands together: ADD
  fixes `s1 / s2` and `s_out / max(s1, s2)`, MEAN and QUANTIZE fix `s_in / s_out`; max pooling,
  reshapes and folded slices keep the scale. These ratios are solved exactly (rationals, a
  weighted union-find over the int8 tensors); each connected set of tensors has one free scale,
  chosen so that its first tensor has scale 1.0, or pinned by a RELU6 clamp.
* Rounding cannot change the recovered integers. A scale is the double nearest to an exact
  rational, and the interpreter's derivation adds at most two more roundings, so the real it
  computes is within ~4 * 2**-53 (relative) of `m * 2**-k`. `QuantizeMultiplier` rounds
  `real / 2**e * 2**31` to the nearest integer; that value is `m` plus at most
  2**31 * 4 * 2**-53 < 2**-20 in absolute terms, nowhere near the 0.5 rounding boundary. (When
  `m` is 2**30 and the computed real falls just below the power of two, frexp's exponent drops
  by one, the product rounds up to 2**31, and QuantizeMultiplier renormalizes it to the same
  pair.) After solving, every recovered operator is re-derived with TFLite's formulas and
  compared with TOSA's integers anyway (`check`), so a violated assumption fails the pass
  instead of computing something else.

Equivalence of the arithmetic
-----------------------------
TOSA's DOUBLE_ROUND rescale, `(v * m + 2**(k-1) + (k > 31 ? sign(v) * 2**30 : 0)) >> k`, equals
TFLite's `MultiplyByQuantizedMultiplier(v, m, 31 - k)`: with `p = v * m`, gemmlowp's
SaturatingRoundingDoublingHighMul is `floor((p + 2**30) / 2**31)` for every sign of `p`, and its
rounding right shift by `k - 31` (ties away from zero) composes with it into exactly TOSA's
expression; for `k <= 31`, TOSA's own range requirement on `v` keeps TFLite's left shift free of
int32 overflow. ADD's `x << 20` followed by a multiplier of exactly 1/2 is the converter's single
rescale by `2**19`, which TFLite computes exactly too. So the `nn` program computes bit for bit
what the TOSA program computes, with one documented exception:

FULLY_CONNECTED. LiteRT's reference int8 FULLY_CONNECTED does not use the fixed-point
multiplier: it rounds `acc * real` in double. The converter lowers it to a 1x1 convolution with
the fixed-point rescale, whose two roundings disagree with TFLite's single one by 1 for a few
percent of inputs (4 of 100 random inputs of resnet8). By default (`fully-connected=tflite`) the
pattern becomes `nn.fully_connected`, TFLite's operator, computing what the TFLite file computes;
its `real` is TOSA's `m * 2**-k`, which differs from TFLite's own double by less than 2**-31
relative, so the results can differ only when `acc * real` lies within ~2**-23 of a rounding
tie. With `fully-connected=conv` it becomes `nn.conv2d` plus `nn.reshape`, computing exactly
what the TOSA program (and the TOSA reference model) computes.

Anything else fails the pass with `<location>: unsupported TOSA pattern: <why>`.
"""

from __future__ import annotations

import abc
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar, Generic, TypeVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects import tosa as xdsl_tosa
from xdsl.dialects.builtin import (
    BoolAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IntegerType,
    ModuleOp,
    NameLoc,
    NoneAttr,
    TensorType,
    UnknownLoc,
    UnregisteredOp,
    i64,
)
from xdsl.dialects.tosa import RoundingMode
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.utils.exceptions import PassFailedException

from cascade.dialects import nn, tosa
from cascade.interpreter.quantization import activation_range, quantize_multiplier
from cascade.passes.nn_canonicalization import fold_reshapes

_I8 = IntegerType(8)
_I32 = IntegerType(32)
_INT8_RANGE = (-128, 127)
ADD_LEFT_SHIFT = 20
"""TFLite's int8 ADD shifts both inputs left by 20 bits before rescaling them."""


class UnsupportedPattern(Exception):
    """A TOSA operation that cannot be legalized, and why; reported at the operation's location."""

    def __init__(self, op: Operation, reason: str):
        super().__init__(reason)
        self.op = op
        self.reason = reason


def _op_name(op: Operation) -> str:
    """The name as written in the input, also for an unregistered operation."""
    return op.op_name.data if isinstance(op, UnregisteredOp) else op.name


def describe_location(op: Operation) -> str:
    """`file:line:col` of the operation in the input, or the TFLite tensor name it carries."""
    location = op.location
    if isinstance(location, FileLineColLoc):
        return f"{location.filename.data}:{location.line.data}:{location.column.data}"
    if isinstance(location, NameLoc):
        return f'loc("{location.desc.data}")'
    return f"'{_op_name(op)}'"


# --------------------------------------------------------------------------- #
# Reading the IR
# --------------------------------------------------------------------------- #


def _shape(value: SSAValue) -> tuple[int, ...]:
    ty = value.type
    assert isinstance(ty, TensorType)
    return ty.get_shape()


def _element(value: SSAValue) -> Attribute | None:
    ty = value.type
    return ty.element_type if isinstance(ty, TensorType) else None


def _users(value: SSAValue) -> list[Operation]:
    return [use.operation for use in value.uses]


def _only_user(value: SSAValue) -> Operation | None:
    users = _users(value)
    return users[0] if len(users) == 1 else None


def _dense_array(attr: DenseIntOrFPElementsAttr) -> np.ndarray | None:
    """The contents of an integer dense attribute (little-endian bytes, splats expanded)."""
    element = attr.get_element_type()
    if not isinstance(element, IntegerType) or element.width.data not in (8, 16, 32, 64):
        return None
    dtype = np.dtype(f"<i{element.width.data // 8}")
    shape = attr.get_shape()
    flat = np.frombuffer(attr.data.data, dtype=dtype).astype(dtype.newbyteorder("="))
    if flat.size == 1 and math.prod(shape) != 1:
        return np.full(shape, flat[0], dtype=flat.dtype)
    return flat.reshape(shape)


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The value of a compile-time constant: `tosa.const`, possibly reshaped or transposed."""
    owner = value.owner
    if isinstance(owner, tosa.ConstOp):
        return _dense_array(owner.values)
    if isinstance(owner, tosa.ReshapeOp) and (source := constant_array(owner.input1)) is not None:
        return source.reshape(_shape(owner.output))
    if isinstance(owner, tosa.TransposeOp) and (source := constant_array(owner.input1)) is not None:
        return np.transpose(source, tuple(int(p) for p in owner.perms.get_values()))
    return None


def _scalar(value: SSAValue, op: Operation, what: str) -> int:
    """A one-element constant such as a zero point."""
    data = constant_array(value)
    if data is None or data.size != 1:
        raise UnsupportedPattern(op, f"{what} must be a one-element constant")
    return int(data.reshape(-1)[0])


def _vector(value: SSAValue, op: Operation, what: str) -> tuple[int, ...]:
    data = constant_array(value)
    if data is None:
        raise UnsupportedPattern(op, f"{what} must be a constant")
    return tuple(int(v) for v in data.reshape(-1))


def _is_tensor_of(value: SSAValue, element: IntegerType) -> bool:
    return _element(value) == element


# --------------------------------------------------------------------------- #
# TOSA rescale parameters, and what TFLite derives from scales
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Requant:
    """The integer parameters of one `tosa.rescale`."""

    op: tosa.RescaleOp
    multipliers: tuple[int, ...]
    shifts: tuple[int, ...]
    input_zp: int
    output_zp: int

    def real(self, channel: int = 0) -> Fraction:
        """The exact real multiplier `m * 2**-k` of one channel."""
        return Fraction(self.multipliers[channel], 1 << self.shifts[channel])

    def tflite_pair(self, channel: int = 0) -> tuple[int, int]:
        """TFLite's `(multiplier, shift)` that computes what this channel computes."""
        multiplier = self.multipliers[channel]
        return (0, 0) if multiplier == 0 else (multiplier, 31 - self.shifts[channel])

    @property
    def channels(self) -> int:
        return len(self.multipliers)


def read_requant(op: tosa.RescaleOp, normalized: bool = True) -> Requant:
    """A rescale's parameters, checked to be ones TFLite's fixed-point arithmetic reproduces.

    `normalized`: the multipliers must be what `QuantizeMultiplier` returns, in [2**30, 2**31) or
    0; TFLite's MEAN divides its multiplier by the element count afterwards, so not there.
    """
    if not op.scale32.value.data:
        raise UnsupportedPattern(op, "16-bit rescale multipliers (scale32 = false) have no TFLite equivalent")
    if op.input_unsigned.value.data or op.output_unsigned.value.data:
        raise UnsupportedPattern(op, "unsigned rescale inputs or outputs are not supported")
    multipliers = _vector(op.multiplier, op, "rescale multiplier")
    shifts = _vector(op.shift, op, "rescale shift")
    for multiplier, shift in zip(multipliers, shifts, strict=True):
        if not 0 <= multiplier < (1 << 31) or (normalized and 0 < multiplier < (1 << 30)):
            raise UnsupportedPattern(
                op, f"rescale multiplier {multiplier} is not normalized to [2^30, 2^31) as TFLite's multipliers are"
            )
        if not 2 <= shift <= 62:
            raise UnsupportedPattern(op, f"rescale shift {shift} is outside TOSA's range [2, 62]")
    # Only shifts above 31 round twice; below that every rounding mode computes the same thing.
    mode = op.rounding_mode.data
    if mode != RoundingMode.DOUBLE_ROUND and any(s > 31 for s in shifts):
        raise UnsupportedPattern(op, f"rounding mode {mode} differs from TFLite's double rounding")
    return Requant(
        op,
        multipliers,
        shifts,
        _scalar(op.input_zp, op, "rescale input zero point"),
        _scalar(op.output_zp, op, "rescale output zero point"),
    )


def _power_of_two_exponent(value: Fraction) -> int | None:
    """e when value == 2**e exactly, else None."""
    if value <= 0 or value.numerator & (value.numerator - 1) or value.denominator & (value.denominator - 1):
        return None
    return value.numerator.bit_length() - value.denominator.bit_length()


def mean_fold(real: float, count: int) -> tuple[int, int]:
    """TFLite's int8 MEAN multiplier: `QuantizeMultiplier(in_s / out_s)` folded with 1/count.

    Mirrors `reference_ops::QuantizedMeanOrSum` (and `kernels.mean_hw`): shift =
    min(floor(log2(count)), 32, 31 + out_shift); multiplier' = (multiplier << shift) / count.
    """
    multiplier, out_shift = quantize_multiplier(real)
    shift = min(count.bit_length() - 1, 32, 31 + out_shift)
    return (multiplier << shift) // count, out_shift - shift


def invert_mean_fold(multiplier: int, shift: int, count: int) -> Fraction | None:
    """A real `in_s / out_s` whose `mean_fold` is TFLite's `(multiplier, shift)`, or None.

    E.g. count 125 (a 25x5 mean) and (650070751, -4): the fold shift is 6, so out_shift = 2 and
    the unfolded multiplier q must satisfy floor(q * 64 / 125) == 650070751, i.e. q in
    [1269669436, 1269669437]; the real is 1269669436 * 2**(2 - 31).
    """
    for fold in range(33):
        out_shift = shift + fold
        if fold != min(count.bit_length() - 1, 32, 31 + out_shift):
            continue
        low = max(-(-multiplier * count // (1 << fold)), 1 << 30)
        high = min(((multiplier + 1) * count - 1) >> fold, (1 << 31) - 1)
        if low <= high:
            return Fraction(low) * Fraction(2) ** (out_shift - 31)
    return None


def tflite_add_multipliers(s1: float, s2: float, s_out: float) -> tuple[tuple[int, int], ...]:
    """TFLite's int8 ADD `Prepare` (and `kernels.add`): the three multipliers, in double."""
    twice_max = 2.0 * max(s1, s2)
    return (
        quantize_multiplier(s1 / twice_max),
        quantize_multiplier(s2 / twice_max),
        quantize_multiplier(twice_max / (float(1 << ADD_LEFT_SHIFT) * s_out)),
    )


# --------------------------------------------------------------------------- #
# Fused activations
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class ActivationChoice:
    """The fused activation a clamp of the int8 output stands for."""

    activation: nn.Activation
    bounds: tuple[int, int]
    zero_point: int
    pin_scale: float | None = None
    """A scale making TFLite's activation range equal `bounds`, when that depends on the scale."""


def choose_activation(op: Operation, bounds: tuple[int, int], zero_point: int) -> ActivationChoice:
    """NONE for the whole int8 range, RELU for [zp, 127]; RELU6 and RELU_N1_TO_1 need a scale."""
    low, high = bounds
    if bounds == _INT8_RANGE:
        return ActivationChoice(nn.Activation.NONE, bounds, zero_point)
    if low == zero_point and high == 127:
        return ActivationChoice(nn.Activation.RELU, bounds, zero_point)
    candidates: list[tuple[nn.Activation, float]] = []
    if low == max(-128, zero_point) and high > zero_point:
        candidates.append((nn.Activation.RELU6, 6.0 / (high - zero_point)))
    if low < zero_point < high:
        steps = high - zero_point if high < 127 else zero_point - low
        candidates.append((nn.Activation.RELU_N1_TO_1, 1.0 / steps))
    for activation, estimate in candidates:
        if (scale := _scale_for_range(activation, estimate, bounds, zero_point)) is not None:
            return ActivationChoice(activation, bounds, zero_point, scale)
    raise UnsupportedPattern(
        op, f"clamp to [{low}, {high}] with output zero point {zero_point} is not a TFLite fused activation"
    )


def _scale_for_range(
    activation: nn.Activation, estimate: float, bounds: tuple[int, int], zero_point: int
) -> float | None:
    """A float32 scale within a few ulps of `estimate` for which TFLite computes exactly `bounds`.

    TFLite quantizes the bound 6.0 as `zp + round(6.0f / scale)` in float32, so the float32
    nearest to 6 / (high - zp) gives `high` unless the division lands on a rounding tie.
    """
    nearest = np.float32(estimate)
    below, above = [nearest], [nearest]
    for _ in range(4):
        below.append(np.nextafter(below[-1], np.float32(0)))
        above.append(np.nextafter(above[-1], np.float32(np.inf)))
    for scale in (nearest, *(x for pair in zip(below[1:], above[1:], strict=True) for x in pair)):
        if activation_range(activation.name, float(scale), zero_point) == bounds:
            return float(scale)
    return None


# --------------------------------------------------------------------------- #
# Scales: a weighted union-find over the int8 tensors
# --------------------------------------------------------------------------- #


class ScaleSolver:
    """Scales known up to one factor per connected set: `s(v) = ratio(v) * s(root(v))`, exactly."""

    def __init__(self) -> None:
        self.parent: dict[SSAValue, SSAValue] = {}
        self.to_parent: dict[SSAValue, Fraction] = {}

    def add(self, value: SSAValue) -> None:
        if value not in self.parent:
            self.parent[value] = value
            self.to_parent[value] = Fraction(1)

    def find(self, value: SSAValue) -> tuple[SSAValue, Fraction]:
        """The root of `value` and `s(value) / s(root)`."""
        self.add(value)
        ratio = Fraction(1)
        node = value
        while self.parent[node] is not node:
            ratio *= self.to_parent[node]
            node = self.parent[node]
        # Path compression keeps the chains short on deep residual networks.
        self.parent[value], self.to_parent[value] = node, ratio
        return node, ratio

    def relate(self, a: SSAValue, b: SSAValue, ratio: Fraction, op: Operation) -> None:
        """Require `s(b) = ratio * s(a)`."""
        root_a, ratio_a = self.find(a)
        root_b, ratio_b = self.find(b)
        if root_a is root_b:
            if ratio_b != ratio * ratio_a:
                raise UnsupportedPattern(
                    op, "the scale ratios of its operands contradict those of other operators on the same tensors"
                )
            return
        # s(b) = ratio_b * s(root_b) and s(b) = ratio * ratio_a * s(root_a).
        self.parent[root_b] = root_a
        self.to_parent[root_b] = ratio * ratio_a / ratio_b


# --------------------------------------------------------------------------- #
# Groups: the TOSA operations standing for one nn operator
# --------------------------------------------------------------------------- #


@dataclass
class Tail:
    """The rescale to int8 ending an accumulation, and the clamp after it if there is one."""

    requant: Requant
    clamp: tosa.ClampOp | None

    @property
    def final_op(self) -> Operation:
        return self.clamp if self.clamp is not None else self.requant.op

    @property
    def result(self) -> SSAValue:
        return self.final_op.results[0]

    @property
    def ops(self) -> list[Operation]:
        return [self.requant.op] if self.clamp is None else [self.requant.op, self.clamp]

    @property
    def bounds(self) -> tuple[int, int]:
        if self.clamp is None:
            return _INT8_RANGE
        return int(self.clamp.min_val.value.data), int(self.clamp.max_val.value.data)


def match_tail(value: SSAValue, op: Operation, per_channel_count: int | None = None, normalized: bool = True) -> Tail:
    """The `tosa.rescale` (i32 -> i8) that must be the only user of an i32 accumulator."""
    rescale = _only_user(value)
    if not isinstance(rescale, tosa.RescaleOp) or not _is_tensor_of(rescale.output, _I8):
        raise UnsupportedPattern(op, "its i32 result must be rescaled to i8 by exactly one tosa.rescale")
    requant = read_requant(rescale, normalized)
    if requant.input_zp != 0:
        raise UnsupportedPattern(rescale, "a rescale of an i32 accumulator must have input zero point 0")
    if requant.channels != 1 and requant.channels != per_channel_count:
        raise UnsupportedPattern(rescale, "a per-channel rescale is supported only after a convolution")
    clamp = _only_user(rescale.output)
    return Tail(requant, clamp if isinstance(clamp, tosa.ClampOp) else None)


@dataclass
class Group:
    """TOSA operations that become one nn operator, replacing the result of `final_op`."""

    final_op: Operation
    ops: list[Operation]
    """Every operation the group consumes (final_op included); the others are erased."""

    DESCRIPTION: ClassVar[str] = "operator"

    def relations(self) -> Iterable[tuple[SSAValue, SSAValue, Fraction]]:
        """Scale ratios it imposes: (a, b, r) means s(b) = r * s(a)."""
        return ()

    def zero_points(self) -> Iterable[tuple[SSAValue, int]]:
        """Zero points it fixes, per tensor."""
        return ()

    def aliases(self) -> Iterable[tuple[SSAValue, SSAValue]]:
        """(result, input) pairs that share one quantization."""
        return ()

    def activation(self, plan: LegalizationPlan) -> tuple[SSAValue, ActivationChoice] | None:
        """The tensor its fused activation applies to, and the activation (zero points are known)."""
        return None

    def check(self, plan: LegalizationPlan) -> None:
        """Raise if TFLite's derivation from the chosen scales does not give TOSA's integers."""


@dataclass
class _WeightedGroup(Group):
    """A convolution-like group: input, constant weights and bias, a rescale tail, a fused activation."""

    conv: tosa.Conv2DOp | tosa.DepthwiseConv2DOp = field(kw_only=True)
    input_op: Operation = field(kw_only=True)
    """The operation whose operand 0 is the nn input (the conv, a folded slice or an absorbed reshape)."""
    input_value: SSAValue = field(kw_only=True)
    input_zp: int = field(kw_only=True)
    weights: np.ndarray = field(kw_only=True)
    """In nn's layout: OHWI, 1HW(C*M) or [O, K]."""
    bias: np.ndarray | None = field(kw_only=True)
    tail: Tail = field(kw_only=True)
    choice: ActivationChoice = field(kw_only=True)

    def zero_points(self) -> Iterable[tuple[SSAValue, int]]:
        return ((self.input_value, self.input_zp), (self.tail.result, self.tail.requant.output_zp))

    def activation(self, plan: LegalizationPlan) -> tuple[SSAValue, ActivationChoice] | None:
        return self.tail.result, self.choice

    def weight_scales(self, plan: LegalizationPlan) -> list[float]:
        """w_s[c] = m_c * 2**-k_c * out_s / in_s, each rounded once to a double."""
        ratio = Fraction(plan.scale(self.tail.result)) / Fraction(plan.scale(self.input_value))
        requant = self.tail.requant
        return [float(_channel_real(requant, c) * ratio) for c in range(requant.channels)]

    def check(self, plan: LegalizationPlan) -> None:
        # The interpreter's derivation (PopulateConvolutionQuantizationParams), left to right in double.
        in_scale, out_scale = plan.scale(self.input_value), plan.scale(self.tail.result)
        for channel, weight_scale in enumerate(self.weight_scales(plan)):
            derived = quantize_multiplier(in_scale * weight_scale / out_scale)
            _check_pair(self.tail.requant.op, derived, self.tail.requant.tflite_pair(channel), f"channel {channel}")
        _check_activation(self.final_op, self.choice, out_scale)


def _channel_real(requant: Requant, channel: int) -> Fraction:
    """The real of one channel; TFLite flushes reals below 2**-32 to a zero multiplier, as 2**-40 does."""
    return requant.real(channel) if requant.multipliers[channel] else Fraction(1, 1 << 40)


@dataclass
class ConvolutionGroup(_WeightedGroup):
    """conv2d / depthwise_conv2d -> rescale -> [clamp]; possibly reading through a folded slice."""

    padding: tuple[int, int, int, int] = field(kw_only=True)
    """nn's order: (top, left, bottom, right)."""

    DESCRIPTION: ClassVar[str] = "convolution"


@dataclass
class FullyConnectedGroup(_WeightedGroup):
    """[reshape] -> conv2d 1x1 on reshape(const [O, K]) -> rescale -> [clamp] -> reshape to [N, O]."""

    DESCRIPTION: ClassVar[str] = "fully connected"

    def aliases(self) -> Iterable[tuple[SSAValue, SSAValue]]:
        # The trailing reshape only renames the rescaled tensor.
        return ((self.final_op.results[0], self.tail.result),)


@dataclass
class AddInput:
    """One operand of an ADD: `x << 20` by a first rescale, then an optional rescale by `real`."""

    first: tosa.RescaleOp
    second: tosa.RescaleOp | None
    value: SSAValue
    zero_point: int
    real: Fraction
    """TFLite's `s_i / (2 * max(s1, s2))`."""

    @property
    def ops(self) -> list[Operation]:
        return [self.first] if self.second is None else [self.first, self.second]

    def expected_pair(self) -> tuple[int, int]:
        if self.second is not None:
            return read_requant(self.second).tflite_pair()
        return quantize_multiplier(float(self.real))  # an exact power of two


def match_add_input(value: SSAValue, add: Operation) -> AddInput:
    """`rescale(x: i8 -> i32)` by 2**20 then `rescale(i32 -> i32)`, or one rescale by a power of two <= 2**19."""
    chain: list[tosa.RescaleOp] = []
    node = value
    while isinstance(owner := node.owner, tosa.RescaleOp) and len(chain) < 2:
        chain.insert(0, owner)
        if _is_tensor_of(owner.input, _I8):
            break
        node = owner.input
    if not chain or not _is_tensor_of(chain[0].input, _I8):
        raise UnsupportedPattern(add, "each operand must be an i8 tensor rescaled to i32 by one or two tosa.rescale")
    for rescale in chain:
        if _only_user(rescale.output) is None:
            raise UnsupportedPattern(rescale, "a rescale feeding tosa.add must have no other user")
    first = read_requant(chain[0])
    if first.channels != 1 or first.output_zp != 0:
        raise UnsupportedPattern(chain[0], "an ADD input rescale must be per-tensor with output zero point 0")
    exponent = _power_of_two_exponent(first.real())
    if len(chain) == 2:
        second = read_requant(chain[1])
        if exponent != ADD_LEFT_SHIFT or second.channels != 1 or second.input_zp or second.output_zp:
            raise UnsupportedPattern(
                chain[1], "an ADD input must be shifted left by exactly 20 bits before its per-tensor rescale"
            )
        real = second.real()
    else:
        if exponent is None or not 0 <= exponent < ADD_LEFT_SHIFT:
            raise UnsupportedPattern(
                chain[0], "an ADD input rescaled once must be multiplied by a power of two below 2^20"
            )
        real = Fraction(2) ** (exponent - ADD_LEFT_SHIFT)
    if not 0 < real <= Fraction(1, 2):
        raise UnsupportedPattern(chain[-1], f"ADD input multiplier {float(real)} is not in (0, 1/2]")
    return AddInput(chain[0], chain[1] if len(chain) == 2 else None, chain[0].input, first.input_zp, real)


@dataclass
class AddGroup(Group):
    """(rescale [-> rescale]) x 2 -> add -> rescale -> [clamp]: TFLite ADD."""

    add: xdsl_tosa.AddOp = field(kw_only=True)
    inputs: tuple[AddInput, AddInput] = field(kw_only=True)
    tail: Tail = field(kw_only=True)
    choice: ActivationChoice = field(kw_only=True)

    DESCRIPTION: ClassVar[str] = "add"

    def relations(self) -> Iterable[tuple[SSAValue, SSAValue, Fraction]]:
        first, second = self.inputs
        larger = first if first.real == Fraction(1, 2) else second
        output_real = self.tail.requant.real()
        # s_i = real_i * 2 * s_max, and real_out = 2 * s_max / (2**20 * s_out).
        return (
            (first.value, second.value, second.real / first.real),
            (larger.value, self.tail.result, 2 / (Fraction(1 << ADD_LEFT_SHIFT) * output_real)),
        )

    def zero_points(self) -> Iterable[tuple[SSAValue, int]]:
        return (
            *((i.value, i.zero_point) for i in self.inputs),
            (self.tail.result, self.tail.requant.output_zp),
        )

    def activation(self, plan: LegalizationPlan) -> tuple[SSAValue, ActivationChoice] | None:
        return self.tail.result, self.choice

    def check(self, plan: LegalizationPlan) -> None:
        first, second = self.inputs
        out_scale = plan.scale(self.tail.result)
        derived = tflite_add_multipliers(plan.scale(first.value), plan.scale(second.value), out_scale)
        _check_pair(first.ops[-1], derived[0], first.expected_pair(), "input 1")
        _check_pair(second.ops[-1], derived[1], second.expected_pair(), "input 2")
        _check_pair(self.tail.requant.op, derived[2], self.tail.requant.tflite_pair(), "output")
        _check_activation(self.final_op, self.choice, out_scale)


@dataclass
class MeanGroup(Group):
    """rescale(x - zp) -> reduce_sum per axis -> rescale: TFLite MEAN (average over the axes)."""

    first: tosa.RescaleOp = field(kw_only=True)
    input_value: SSAValue = field(kw_only=True)
    input_zp: int = field(kw_only=True)
    axes: tuple[int, ...] = field(kw_only=True)
    count: int = field(kw_only=True)
    real: Fraction = field(kw_only=True)
    """in_s / out_s."""
    tail: Tail = field(kw_only=True)
    keep_dims: bool = True

    DESCRIPTION: ClassVar[str] = "mean"

    def relations(self) -> Iterable[tuple[SSAValue, SSAValue, Fraction]]:
        return ((self.input_value, self.tail.result, 1 / self.real),)

    def zero_points(self) -> Iterable[tuple[SSAValue, int]]:
        return ((self.input_value, self.input_zp), (self.tail.result, self.tail.requant.output_zp))

    def check(self, plan: LegalizationPlan) -> None:
        derived = mean_fold(plan.scale(self.input_value) / plan.scale(self.tail.result), self.count)
        _check_pair(self.tail.requant.op, derived, self.tail.requant.tflite_pair(), "mean")


@dataclass
class PoolGroup(Group):
    """max_pool2d on int8 -> [clamp]: TFLite MAX_POOL_2D; input and output share the quantization."""

    pool: tosa.MaxPool2DOp = field(kw_only=True)
    clamp: tosa.ClampOp | None = field(kw_only=True)
    input_value: SSAValue = field(kw_only=True)

    DESCRIPTION: ClassVar[str] = "max pooling"

    def aliases(self) -> Iterable[tuple[SSAValue, SSAValue]]:
        return ((self.final_op.results[0], self.input_value),)

    def choice(self, plan: LegalizationPlan) -> ActivationChoice:
        """The clamp's activation; which one depends on the zero point the producer chose."""
        if self.clamp is None:
            return ActivationChoice(nn.Activation.NONE, _INT8_RANGE, 0)
        bounds = (int(self.clamp.min_val.value.data), int(self.clamp.max_val.value.data))
        return choose_activation(self.clamp, bounds, plan.zero_point_of(self.input_value))

    def activation(self, plan: LegalizationPlan) -> tuple[SSAValue, ActivationChoice] | None:
        return self.input_value, self.choice(plan)

    def check(self, plan: LegalizationPlan) -> None:
        _check_activation(self.final_op, self.choice(plan), plan.scale(self.input_value))


@dataclass
class ReshapeGroup(Group):
    """reshape of an int8 activation: TFLite RESHAPE."""

    reshape: tosa.ReshapeOp = field(kw_only=True)
    input_value: SSAValue = field(kw_only=True)

    DESCRIPTION: ClassVar[str] = "reshape"

    def aliases(self) -> Iterable[tuple[SSAValue, SSAValue]]:
        return ((self.reshape.output, self.input_value),)


@dataclass
class RescaleGroup(Group):
    """rescale i8 -> i8: TFLite QUANTIZE (requantization), `s_in / s_out = m * 2**-k`."""

    requant: Requant = field(kw_only=True)
    input_value: SSAValue = field(kw_only=True)

    DESCRIPTION: ClassVar[str] = "rescale"

    def relations(self) -> Iterable[tuple[SSAValue, SSAValue, Fraction]]:
        return ((self.input_value, self.requant.op.output, 1 / self.requant.real()),)

    def zero_points(self) -> Iterable[tuple[SSAValue, int]]:
        return ((self.input_value, self.requant.input_zp), (self.requant.op.output, self.requant.output_zp))

    def check(self, plan: LegalizationPlan) -> None:
        op = self.requant.op
        derived = quantize_multiplier(plan.scale(self.input_value) / plan.scale(op.output))
        _check_pair(op, derived, self.requant.tflite_pair(), "rescale")


@dataclass
class IdentityGroup(Group):
    """A clamp to the whole int8 range: it changes nothing and disappears."""

    clamp: tosa.ClampOp = field(kw_only=True)

    DESCRIPTION: ClassVar[str] = "identity"

    def aliases(self) -> Iterable[tuple[SSAValue, SSAValue]]:
        return ((self.clamp.output, self.clamp.input),)


def _check_pair(op: Operation, derived: tuple[int, int], expected: tuple[int, int], what: str) -> None:
    if derived != expected:
        raise PassFailedException(
            f"{describe_location(op)}: internal error: the recovered scales give TFLite's {what} multiplier "
            f"{derived}, not TOSA's {expected}"
        )


def _check_activation(op: Operation, choice: ActivationChoice, scale: float) -> None:
    derived = activation_range(choice.activation.name, scale, choice.zero_point)
    if derived != choice.bounds:
        raise UnsupportedPattern(
            op,
            f"clamp to {list(choice.bounds)} needs a different output scale than the operators sharing it "
            f"({choice.activation.value} gives {list(derived)})",
        )


# --------------------------------------------------------------------------- #
# Matching
# --------------------------------------------------------------------------- #


def _window_padding_after_slice(
    op: Operation, full: int, kept: int, out: int, span: int, stride: int, before: int, after: int
) -> int:
    """The padding after the data when a window reads the unsliced axis (`full`) instead of its first `kept`.

    Folding is exact when the last window ends inside the kept part: it never reads a sliced-off
    element nor the padding after it. E.g. 32 rows sliced to 31, 1x1, stride 2: the last of 16
    outputs reads row 30.
    """
    if kept == full:
        return after
    last_read = (out - 1) * stride + span - 1 - before
    if last_read >= kept or (full + before - span) // stride + 1 != out:
        raise UnsupportedPattern(
            op, "a tosa.slice is supported only when the strided window after it never reads past it"
        )
    return 0


def _fold_slice(
    conv: tosa.Conv2DOp | tosa.DepthwiseConv2DOp, kernel: tuple[int, int]
) -> tuple[Operation, SSAValue, tuple[int, int, int, int]]:
    """(input op, input tensor, nn padding): reads through a trailing-edge slice when that is exact."""
    top, bottom, left, right = conv.paddings()
    value = conv.input
    slice_op = value.owner
    if not isinstance(slice_op, tosa.SliceOp):
        return conv, value, (top, left, bottom, right)
    start = tosa.shape_values(slice_op.start)
    full, kept, out = _shape(slice_op.input1), _shape(slice_op.output), _shape(conv.output)
    if start is None or any(start) or (kept[0], kept[3]) != (full[0], full[3]):
        raise UnsupportedPattern(slice_op, "only a slice that keeps the first rows and columns can be folded")
    (sh, sw), (dh, dw) = conv.strides(), conv.dilations()
    span_h, span_w = (kernel[0] - 1) * dh + 1, (kernel[1] - 1) * dw + 1
    bottom = _window_padding_after_slice(slice_op, full[1], kept[1], out[1], span_h, sh, top, bottom)
    right = _window_padding_after_slice(slice_op, full[2], kept[2], out[2], span_w, sw, left, right)
    return slice_op, slice_op.input1, (top, left, bottom, right)


def _conv_common(conv: tosa.Conv2DOp | tosa.DepthwiseConv2DOp, channels: int) -> tuple[int, np.ndarray, Tail]:
    """Input zero point, bias (expanded to one per channel) and tail, checked."""
    if not _is_tensor_of(conv.input, _I8):
        raise UnsupportedPattern(conv, f"only int8 convolutions are supported, got {conv.input.type}")
    if _scalar(conv.weight_zp, conv, "weight zero point") != 0:
        raise UnsupportedPattern(conv, "TFLite int8 weights are symmetric: the weight zero point must be 0")
    bias = constant_array(conv.bias)
    if bias is None:
        raise UnsupportedPattern(conv, "the bias must be a constant")
    bias = np.broadcast_to(bias.astype(np.int32).reshape(-1), (channels,)).copy()
    tail = match_tail(conv.output, conv, channels)
    return _scalar(conv.input_zp, conv, "input zero point"), bias, tail


def match_convolution(
    conv: tosa.Conv2DOp | tosa.DepthwiseConv2DOp, fully_connected: bool
) -> ConvolutionGroup | FullyConnectedGroup:
    """The group a TOSA convolution starts; a 1x1 conv2d on reshaped 2-D weights may be FULLY_CONNECTED."""
    out_channels = _shape(conv.output)[3]
    input_zp, bias, tail = _conv_common(conv, out_channels)
    choice = choose_activation(tail.final_op, tail.bounds, tail.requant.output_zp)
    if fully_connected and isinstance(conv, tosa.Conv2DOp):
        # A zero bias is how the converter spells FULLY_CONNECTED without one.
        fc_bias = bias if bias.any() else None
        if (group := _match_fully_connected(conv, tail, input_zp, fc_bias, choice)) is not None:
            return group
    weights = constant_array(conv.weight)
    if weights is None:
        raise UnsupportedPattern(conv, "the weights must be a constant")
    if isinstance(conv, tosa.DepthwiseConv2DOp):
        kh, kw, c, m = weights.shape
        kernel = (kh, kw)
        weights = weights.reshape(1, kh, kw, c * m)  # HWCM == 1HW(C*M) in memory
    else:
        kernel = weights.shape[1], weights.shape[2]
    input_op, input_value, padding = _fold_slice(conv, kernel)
    return ConvolutionGroup(
        tail.final_op,
        [conv, *tail.ops],
        conv=conv,
        input_op=input_op,
        input_value=input_value,
        input_zp=input_zp,
        weights=weights,
        bias=bias,
        padding=padding,
        tail=tail,
        choice=choice,
    )


def _match_fully_connected(
    conv: tosa.Conv2DOp, tail: Tail, input_zp: int, bias: np.ndarray | None, choice: ActivationChoice
) -> FullyConnectedGroup | None:
    """The converter's FULLY_CONNECTED: weights reshaped from [O, K], a 1x1 window, a 2-D result."""
    weight_reshape = conv.weight.owner
    if not isinstance(weight_reshape, tosa.ReshapeOp):
        return None
    weights = constant_array(weight_reshape.input1)
    in_shape = _shape(conv.input)
    if weights is None or weights.ndim != 2 or in_shape[1:3] != (1, 1) or any(conv.paddings()):
        return None
    output_reshape = _only_user(tail.result)
    if not isinstance(output_reshape, tosa.ReshapeOp) or _shape(output_reshape.output) != (in_shape[0], len(weights)):
        return None
    input_op: Operation = conv
    ops: list[Operation] = [conv, *tail.ops, output_reshape]
    input_reshape = conv.input.owner
    if isinstance(input_reshape, tosa.ReshapeOp) and _only_user(conv.input) is conv:
        input_op = input_reshape
        ops.insert(0, input_reshape)
    return FullyConnectedGroup(
        output_reshape,
        ops,
        conv=conv,
        input_op=input_op,
        input_value=input_op.operands[0],
        input_zp=input_zp,
        weights=weights,
        bias=bias,
        tail=tail,
        choice=choice,
    )


def match_add(add: xdsl_tosa.AddOp) -> AddGroup:
    if not _is_tensor_of(add.output, _I32):
        raise UnsupportedPattern(add, "only the int8 ADD pattern (i32 operands rescaled from i8) is supported")
    inputs = (match_add_input(add.input1, add), match_add_input(add.input2, add))
    if max(i.real for i in inputs) != Fraction(1, 2):
        raise UnsupportedPattern(add, "TFLite rescales the ADD operand with the larger scale by exactly 1/2")
    tail = match_tail(add.output, add)
    if tail.requant.real() >= 1:
        raise UnsupportedPattern(tail.requant.op, "TFLite's ADD output multiplier must be below 1")
    choice = choose_activation(tail.final_op, tail.bounds, tail.requant.output_zp)
    ops = [*inputs[0].ops, *inputs[1].ops, add, *tail.ops]
    return AddGroup(tail.final_op, ops, add=add, inputs=inputs, tail=tail, choice=choice)


def match_mean(first_sum: tosa.ReduceSumOp) -> MeanGroup:
    """`rescale(x - zp)` by exactly 1, reduce_sum over each axis, rescale to i8."""
    first = first_sum.input.owner
    if not isinstance(first, tosa.RescaleOp) or not _is_tensor_of(first.input, _I8):
        raise UnsupportedPattern(
            first_sum, "only the int8 MEAN pattern (a sum of an i8 tensor rescaled by 1) is supported"
        )
    requant = read_requant(first)
    if requant.channels != 1 or requant.real() != 1 or requant.output_zp != 0 or _only_user(first.output) is None:
        raise UnsupportedPattern(first, "a MEAN input must be rescaled by exactly 1 to zero point 0, for one sum only")
    sums = [first_sum]
    while isinstance(following := _only_user(sums[-1].output), tosa.ReduceSumOp):
        sums.append(following)
    axes = [s.axis.value.data for s in sums]
    if len(set(axes)) != len(axes):
        raise UnsupportedPattern(sums[-1], "a MEAN sums each axis once")
    tail = match_tail(sums[-1].output, sums[-1], normalized=False)
    if tail.bounds != _INT8_RANGE:
        raise UnsupportedPattern(tail.final_op, "TFLite's MEAN has no fused activation")
    in_shape = _shape(first.input)
    count = math.prod(in_shape[a] for a in axes)
    multiplier, shift = tail.requant.tflite_pair()
    real = invert_mean_fold(multiplier, shift, count)
    if real is None:
        raise UnsupportedPattern(
            tail.requant.op, f"no TFLite MEAN of {count} elements has multiplier ({multiplier}, {shift})"
        )
    return MeanGroup(
        tail.final_op,
        [first, *sums, *tail.ops],
        first=first,
        input_value=first.input,
        input_zp=requant.input_zp,
        axes=tuple(sorted(axes)),
        count=count,
        real=real,
        tail=tail,
    )


def match_pool(pool: tosa.MaxPool2DOp) -> PoolGroup:
    if not _is_tensor_of(pool.input, _I8):
        raise UnsupportedPattern(pool, "only int8 max pooling is supported")
    clamp = _only_user(pool.output)
    clamp = clamp if isinstance(clamp, tosa.ClampOp) else None
    final = clamp if clamp is not None else pool
    return PoolGroup(final, [pool] if clamp is None else [pool, clamp], pool=pool, clamp=clamp, input_value=pool.input)


def match_rescale(op: tosa.RescaleOp) -> RescaleGroup:
    if not (_is_tensor_of(op.input, _I8) and _is_tensor_of(op.output, _I8)):
        raise UnsupportedPattern(op, "a tosa.rescale that is not part of a convolution, ADD or MEAN must be i8 -> i8")
    requant = read_requant(op)
    if requant.channels != 1:
        raise UnsupportedPattern(op, "a per-channel i8 -> i8 rescale has no TFLite equivalent")
    return RescaleGroup(op, [op], requant=requant, input_value=op.input)


def match_clamp(op: tosa.ClampOp) -> IdentityGroup:
    bounds = (int(op.min_val.value.data), int(op.max_val.value.data))
    if not _is_tensor_of(op.input, _I8) or bounds != _INT8_RANGE:
        raise UnsupportedPattern(
            op, "a clamp must follow the rescale of a convolution, ADD or max pooling it belongs to"
        )
    return IdentityGroup(op, [op], clamp=op)


def match_reshape(op: tosa.ReshapeOp) -> ReshapeGroup | None:
    """An int8 activation reshape; None for a reshape of a constant (folded where it is used)."""
    if constant_array(op.input1) is not None:
        return None
    if not _is_tensor_of(op.input1, _I8):
        raise UnsupportedPattern(op, f"only int8 reshapes are supported, got {op.input1.type}")
    return ReshapeGroup(op, [op], reshape=op, input_value=op.input1)


# --------------------------------------------------------------------------- #
# The plan: every group of a function, and the solved quantization
# --------------------------------------------------------------------------- #

_ANCHORS = (tosa.Conv2DOp, tosa.DepthwiseConv2DOp, xdsl_tosa.AddOp, tosa.ReduceSumOp)
_NO_EQUIVALENT = {
    # Rounding half away from zero on either side of the zero point: a window of 0 and 1 with
    # zero point 1 averages 0.5, TFLite rounds it to 1, TOSA rounds -0.5 to -1 and adds 1 back.
    "tosa.avg_pool2d": "it averages x - zero point, TFLite's AVERAGE_POOL_2D (nn.pool2d avg) the raw int8 "
    "values, and a mean ending in .5 rounds to different sides (no nn equivalent)",
}

_FOLDED = (tosa.ConstOp, tosa.ConstShapeOp, tosa.SliceOp)
GroupT = TypeVar("GroupT", bound=Group)


class LegalizationPlan:
    """Matches every TOSA operation of a block to a group and chooses all scales and zero points."""

    def __init__(self, block: Block, fully_connected: bool):
        self.groups: dict[Operation, Group] = {}
        self.claimed: dict[Operation, Group] = {}
        self.alias: dict[SSAValue, SSAValue] = {}
        self.order: dict[SSAValue, int] = {}
        self.zero_point: dict[SSAValue, int] = {}
        self.scales: dict[SSAValue, float] = {}
        self._number(block)
        # Anchors first: they claim the rescales and reshapes around them, which a walk in
        # program order meets before the operation that explains them.
        for op in block.ops:
            if isinstance(op, _ANCHORS) and op not in self.claimed:
                self._add(self._match_anchor(op, fully_connected))
        for op in block.ops:
            if op not in self.claimed and (group := self._match_rest(op)) is not None:
                self._add(group)
        self._check_slices(block)
        self._decide_mean_shapes()
        self._solve()
        for group in self.groups.values():
            group.check(self)

    # ------------------------------------------------------------------ matching
    def _number(self, block: Block) -> None:
        for arg in block.args:
            self.order[arg] = len(self.order)
        for op in block.ops:
            for result in op.results:
                self.order[result] = len(self.order)

    @staticmethod
    def _match_anchor(op: Operation, fully_connected: bool) -> Group:
        if isinstance(op, tosa.Conv2DOp | tosa.DepthwiseConv2DOp):
            return match_convolution(op, fully_connected)
        if isinstance(op, xdsl_tosa.AddOp):
            return match_add(op)
        assert isinstance(op, tosa.ReduceSumOp)
        return match_mean(op)

    @staticmethod
    def _match_rest(op: Operation) -> Group | None:
        if isinstance(op, tosa.RescaleOp):
            return match_rescale(op)
        if isinstance(op, tosa.ClampOp):
            return match_clamp(op)
        if isinstance(op, tosa.MaxPool2DOp):
            return match_pool(op)
        if isinstance(op, tosa.ReshapeOp):
            return match_reshape(op)
        if isinstance(op, tosa.TransposeOp) and constant_array(op.output) is not None:
            return None
        if isinstance(op, UnregisteredOp) and op.op_name.data.startswith("tosa."):
            raise UnsupportedPattern(op, "the operation is not registered: is cascade's tosa dialect loaded?")
        if isinstance(op, _FOLDED) or not op.name.startswith("tosa."):
            return None
        raise UnsupportedPattern(op, _NO_EQUIVALENT.get(op.name, "it has no nn equivalent"))

    def _add(self, group: Group) -> None:
        for op in group.ops:
            if op in self.claimed:
                raise UnsupportedPattern(
                    op, f"it belongs to two patterns ({self.claimed[op].DESCRIPTION} and {group.DESCRIPTION})"
                )
            self.claimed[op] = group
        self.groups[group.final_op] = group
        for result, source in group.aliases():
            self.alias[result] = source

    def _check_slices(self, block: Block) -> None:
        """A slice survives only as the input of convolutions that read through it."""
        for op in block.ops:
            if not isinstance(op, tosa.SliceOp):
                continue
            for user in _users(op.output):
                group = self.claimed.get(user)
                if not isinstance(group, ConvolutionGroup) or group.input_op is not op:
                    raise UnsupportedPattern(op, "a tosa.slice is supported only as the input of a strided convolution")

    def _decide_mean_shapes(self) -> None:
        """Drop the reduced axes of a MEAN read only by FULLY_CONNECTED, which flattens its input anyway.

        TFLite's MEAN(keep_dims=false) -> FULLY_CONNECTED is what the converter lowers into a sum
        with kept axes feeding the 1x1 convolution directly, so this gives TFLite's shapes back.
        """
        for group in self.groups.values():
            if not isinstance(group, MeanGroup):
                continue
            users = _users(group.tail.result)
            read_by_fc = [
                isinstance(fc := self.claimed.get(user), FullyConnectedGroup) and fc.input_value is group.tail.result
                for user in users
            ]
            group.keep_dims = not (read_by_fc and all(read_by_fc))

    # ------------------------------------------------------------------ solving
    def canonical(self, value: SSAValue) -> SSAValue:
        while value in self.alias:
            value = self.alias[value]
        return value

    def _solve(self) -> None:
        solver = ScaleSolver()
        tensors: set[SSAValue] = set()
        for group in self.groups.values():
            for value, zero_point in group.zero_points():
                self._set_zero_point(group, value, zero_point)
                tensors.add(self.canonical(value))
            for a, b, ratio in group.relations():
                solver.relate(self.canonical(a), self.canonical(b), ratio, group.final_op)
            tensors.update(self.canonical(v) for v, _ in group.aliases())
        bases = self._bases(solver, tensors)
        for value in tensors:
            root, ratio = solver.find(value)
            self.scales[value] = float(bases[root] * ratio)

    def _set_zero_point(self, group: Group, value: SSAValue, zero_point: int) -> None:
        value = self.canonical(value)
        known = self.zero_point.setdefault(value, zero_point)
        if known != zero_point:
            raise UnsupportedPattern(
                group.final_op, f"it reads a tensor with zero point {zero_point} that is produced with {known}"
            )

    def _bases(self, solver: ScaleSolver, tensors: set[SSAValue]) -> dict[SSAValue, Fraction]:
        """The scale of each root: pinned by a RELU6-like clamp, else making the first tensor 1.0."""
        bases: dict[SSAValue, Fraction] = {}
        for group in self.groups.values():
            if (pinned := group.activation(self)) is None or pinned[1].pin_scale is None:
                continue
            root, ratio = solver.find(self.canonical(pinned[0]))
            # A second pin in the same set is checked by that group's `check`.
            bases.setdefault(root, Fraction(pinned[1].pin_scale) / ratio)
        for value in sorted(tensors, key=lambda v: self.order.get(v, len(self.order))):
            root, ratio = solver.find(value)
            bases.setdefault(root, 1 / ratio)
        return bases

    # ------------------------------------------------------------------ results
    def scale(self, value: SSAValue) -> float:
        return self.scales[self.canonical(value)]

    def quant(self, value: SSAValue) -> nn.QuantAttr:
        """The per-tensor quantization chosen for an int8 tensor."""
        canonical = self.canonical(value)
        scale = self.scales[canonical]
        return nn.QuantAttr(scale, self.zero_point_of(canonical), exact=_needs_double(scale))

    def zero_point_of(self, value: SSAValue) -> int:
        """The zero point of an int8 tensor; 0 when nothing fixes it (a pooled function argument)."""
        return self.zero_point.get(self.canonical(value), 0)


def _needs_double(scale: float) -> bool:
    return float(np.float32(scale)) != scale


# --------------------------------------------------------------------------- #
# Rewriting
# --------------------------------------------------------------------------- #


def _i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def _constant(data: np.ndarray, source: SSAValue, role: str) -> arith.ConstantOp:
    """An `arith.constant` holding `data` (little-endian bytes), located where TOSA defined `source`."""
    element = IntegerType(data.dtype.itemsize * 8)
    ty = TensorType(element, data.shape)
    contents = np.ascontiguousarray(data.astype(data.dtype.newbyteorder("<")))
    constant = arith.ConstantOp(DenseIntOrFPElementsAttr(ty, BytesAttr(contents.tobytes())))
    constant.location = source.owner.location if isinstance(source.owner, Operation) else UnknownLoc()
    constant.result.name_hint = role
    return constant


def _result_type(shape: Sequence[int]) -> TensorType:
    return TensorType(_I8, tuple(shape))


def _weight_quant(scales: Sequence[float], axis: int) -> nn.QuantAttr:
    exact = any(_needs_double(s) for s in scales)
    if len(scales) == 1:
        return nn.QuantAttr(scales[0], 0, exact=exact)
    return nn.QuantAttr(list(scales), [0] * len(scales), axis, exact=exact)


def _sanitize(name: str) -> str | None:
    """A readable SSA name from a TFLite tensor name: 'model/conv_1/Relu;...' -> 'conv_1_Relu'."""
    head = name.split(";")[0]
    parts = [p for p in head.split("/") if p][-2:]
    text = re.sub(r"[^A-Za-z0-9_$.-]", "_", "_".join(parts))
    text = re.sub(r"_\d+$", "", text)  # xDSL treats a trailing _N as a uniquing suffix
    if not text:
        return None
    return f"t_{text}" if text[0].isdigit() else text


class _GroupPattern(RewritePattern, Generic[GroupT]):
    """Rewrites the groups of one kind, at their final operation, with the plan's quantization."""

    GROUP: ClassVar[type[Group]]

    def __init__(self, plans: dict[Block, LegalizationPlan]):
        self.plans = plans

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (block := op.parent_block()) is None or (plan := self.plans.get(block)) is None:
            return
        group = plan.groups.get(op)
        if not isinstance(group, self.GROUP):
            return
        new_ops = self.build(group, plan)  # type: ignore[arg-type]
        new_op = new_ops[-1]
        new_op.location = op.location
        name = _sanitize(op.location.desc.data) if isinstance(op.location, NameLoc) else None
        for other in new_ops:
            # Constants are named after the operator that reads them: %conv2d_14_weights.
            if name and isinstance(other, arith.ConstantOp):
                other.result.name_hint = f"{name}_{other.result.name_hint}"
        if name and new_op.results:
            new_op.results[0].name_hint = name
        rewriter.replace(op, new_ops)
        for dead in reversed(group.ops):
            if dead is not op and dead.parent is not None and all(not r.uses for r in dead.results):
                rewriter.erase(dead)

    @abc.abstractmethod
    def build(self, group: GroupT, plan: LegalizationPlan) -> list[Operation]:
        """The nn operations (constants first) replacing the group; the last one gives the result."""


class LegalizeConvolution(_GroupPattern[ConvolutionGroup]):
    """conv2d / depthwise_conv2d -> rescale -> [clamp]  =>  nn.conv2d / nn.depthwise_conv2d."""

    GROUP = ConvolutionGroup

    def build(self, group: ConvolutionGroup, plan: LegalizationPlan) -> list[Operation]:
        depthwise = isinstance(group.conv, tosa.DepthwiseConv2DOp)
        op_type = nn.DepthwiseConv2DOp if depthwise else nn.Conv2DOp
        assert group.bias is not None
        weights = _constant(group.weights, group.conv.weight, "weights")
        bias = _constant(group.bias, group.conv.bias, "bias")
        new = op_type.create(
            operands=[group.input_op.operands[0], weights.result, bias.result],
            result_types=[_result_type(_shape(group.tail.result))],
            properties={
                "stride": _i64_array(group.conv.strides()),
                "dilation": _i64_array(group.conv.dilations()),
                "padding": _i64_array(group.padding),
                "activation": nn.ActivationAttr(group.choice.activation),
                "input_quant": plan.quant(group.input_value),
                "weight_quant": _weight_quant(group.weight_scales(plan), 3 if depthwise else 0),
                "output_quant": plan.quant(group.tail.result),
            },
        )
        return [weights, bias, new]


class LegalizeFullyConnected(_GroupPattern[FullyConnectedGroup]):
    """[reshape] -> conv2d 1x1 on reshaped [O, K] weights -> rescale -> [clamp] -> reshape  =>  nn.fully_connected."""

    GROUP = FullyConnectedGroup

    def build(self, group: FullyConnectedGroup, plan: LegalizationPlan) -> list[Operation]:
        weights = _constant(group.weights, group.conv.weight, "weights")
        constants: list[Operation] = [weights]
        operands = [group.input_op.operands[0], weights.result]
        if group.bias is not None:
            bias = _constant(group.bias, group.conv.bias, "bias")
            constants.append(bias)
            operands.append(bias.result)
        new = nn.FullyConnectedOp.create(
            operands=operands,
            result_types=[_result_type(_shape(group.final_op.results[0]))],
            properties={
                "input_quant": plan.quant(group.input_value),
                "weight_quant": _weight_quant(group.weight_scales(plan), 0),
                "output_quant": plan.quant(group.tail.result),
                "activation": nn.ActivationAttr(group.choice.activation),
            },
        )
        return [*constants, new]


class LegalizeAdd(_GroupPattern[AddGroup]):
    """(rescale [-> rescale]) x 2 -> add -> rescale -> [clamp]  =>  nn.add."""

    GROUP = AddGroup

    def build(self, group: AddGroup, plan: LegalizationPlan) -> list[Operation]:
        first, second = group.inputs
        new = nn.AddOp.create(
            operands=[first.first.input, second.first.input],
            result_types=[_result_type(_shape(group.tail.result))],
            properties={
                "input_quant": plan.quant(first.value),
                "input2_quant": plan.quant(second.value),
                "output_quant": plan.quant(group.tail.result),
                "activation": nn.ActivationAttr(group.choice.activation),
            },
        )
        return [new]


class LegalizeMean(_GroupPattern[MeanGroup]):
    """rescale -> reduce_sum... -> rescale  =>  nn.mean."""

    GROUP = MeanGroup

    def build(self, group: MeanGroup, plan: LegalizationPlan) -> list[Operation]:
        shape = _shape(group.tail.result)
        if not group.keep_dims:
            shape = tuple(d for i, d in enumerate(shape) if i not in group.axes)
        new = nn.MeanOp.create(
            operands=[group.first.input],
            result_types=[_result_type(shape)],
            properties={
                "input_quant": plan.quant(group.input_value),
                "output_quant": plan.quant(group.tail.result),
                "axes": _i64_array(group.axes),
                "keep_dims": BoolAttr.from_bool(group.keep_dims),
            },
        )
        return [new]


class LegalizeMaxPool(_GroupPattern[PoolGroup]):
    """max_pool2d -> [clamp]  =>  nn.pool2d max."""

    GROUP = PoolGroup

    def build(self, group: PoolGroup, plan: LegalizationPlan) -> list[Operation]:
        pool = group.pool
        top, bottom, left, right = pool.paddings()
        quant = plan.quant(group.input_value)
        activation = group.choice(plan).activation
        new = nn.Pool2DOp.create(
            operands=[pool.input],
            result_types=[_result_type(_shape(pool.output))],
            properties={
                "kind": nn.PoolKindAttr(nn.PoolKind.MAX),
                "kernel": pool.kernel,
                "stride": pool.stride,
                "dilation": _i64_array((1, 1)),
                "padding": _i64_array((top, left, bottom, right)),
                "activation": nn.ActivationAttr(activation),
                "input_quant": quant,
                "output_quant": quant,
            },
        )
        return [new]


class LegalizeReshape(_GroupPattern[ReshapeGroup]):
    """reshape of an int8 activation  =>  nn.reshape."""

    GROUP = ReshapeGroup

    def build(self, group: ReshapeGroup, plan: LegalizationPlan) -> list[Operation]:
        quant = plan.quant(group.input_value)
        new = nn.ReshapeOp.create(
            operands=[group.reshape.input1],
            result_types=[_result_type(_shape(group.reshape.output))],
            properties={"input_quant": quant, "output_quant": quant},
        )
        return [new]


class LegalizeRescale(_GroupPattern[RescaleGroup]):
    """rescale i8 -> i8  =>  nn.rescale."""

    GROUP = RescaleGroup

    def build(self, group: RescaleGroup, plan: LegalizationPlan) -> list[Operation]:
        op = group.requant.op
        new = nn.RescaleOp.create(
            operands=[op.input],
            result_types=[_result_type(_shape(op.output))],
            properties={"input_quant": plan.quant(group.input_value), "output_quant": plan.quant(op.output)},
        )
        return [new]


class FoldIdentityClamp(RewritePattern):
    """A clamp to the whole int8 range is the identity."""

    def __init__(self, plans: dict[Block, LegalizationPlan]):
        self.plans = plans

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (block := op.parent_block()) is None or (plan := self.plans.get(block)) is None:
            return
        if isinstance(group := plan.groups.get(op), IdentityGroup):
            rewriter.replace(op, [], [group.clamp.input])


# --------------------------------------------------------------------------- #
# The pass
# --------------------------------------------------------------------------- #

_FULLY_CONNECTED_MODES = ("tflite", "conv")


@dataclass(frozen=True)
class LegalizeTosaPass(ModulePass):
    """Rewrite int8 TOSA (as tosa-converter-for-tflite emits it) into nn operators.

    `fully-connected=tflite` (default) recovers FULLY_CONNECTED as `nn.fully_connected`, which
    rounds like TFLite; `fully-connected=conv` keeps the converter's 1x1 convolution, which
    rounds like TOSA (see the module docstring). The nn program then has its reshapes folded as
    the TFLite importer folds them (`nn_canonicalization.fold_reshapes`).
    """

    name = "legalize-tosa"

    fully_connected: str = "tflite"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.fully_connected not in _FULLY_CONNECTED_MODES:
            raise PassFailedException(
                f"legalize-tosa: fully-connected must be one of {', '.join(_FULLY_CONNECTED_MODES)}, "
                f"got '{self.fully_connected}'"
            )
        try:
            plans = {
                f.body.block: LegalizationPlan(f.body.block, self.fully_connected == "tflite")
                for f in op.walk()
                if isinstance(f, func.FuncOp) and f.body.blocks
            }
            _reject_stray_tosa(op, plans)
        except UnsupportedPattern as error:
            raise PassFailedException(
                f"{describe_location(error.op)}: unsupported TOSA pattern: '{_op_name(error.op)}': {error.reason}"
            ) from None
        patterns: list[RewritePattern] = [
            LegalizeConvolution(plans),
            LegalizeFullyConnected(plans),
            LegalizeAdd(plans),
            LegalizeMean(plans),
            LegalizeMaxPool(plans),
            LegalizeReshape(plans),
            LegalizeRescale(plans),
            FoldIdentityClamp(plans),
        ]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns), apply_recursively=False).rewrite_module(op)
        _erase_dead_tosa(op)
        fold_reshapes(op)
        _keep_last_tensor_names(op)


def _reject_stray_tosa(module: ModuleOp, plans: dict[Block, LegalizationPlan]) -> None:
    """TOSA outside a function body (or in a nested region) is not something the plans cover."""
    for op in module.walk():
        if op.name.startswith("tosa.") and op.parent_block() not in plans:
            raise UnsupportedPattern(op, "TOSA operations are legalized only directly inside a func.func body")


def _erase_dead_tosa(module: ModuleOp) -> None:
    """Constants, shapes and folded slices the nn operators no longer read.

    Walking backwards visits every user before its operands, so one pass frees whole chains
    (a constant, its reshape, the const_shape of that reshape).
    """
    for op in reversed(list(module.walk())):
        if op.name.startswith("tosa.") and all(not r.uses for r in op.results):
            op.detach()
            op.erase()
    for op in module.walk():
        if op.name.startswith("tosa."):
            raise PassFailedException(
                f"{describe_location(op)}: unsupported TOSA pattern: '{op.name}' is still used after legalization"
            )


def _keep_last_tensor_names(module: ModuleOp) -> None:
    """A TFLite tensor name labels one value: the last one computed from it.

    The converter gives every TOSA operation of a lowered TFLite operator that operator's tensor
    name; with `fully-connected=conv` the 1x1 convolution and the reshape after it both carry the
    FULLY_CONNECTED output's name, and only the reshape has its shape. Earlier holders keep the
    name's file location, without the name, so tools comparing tensors by name see one.
    """
    holders: dict[str, Operation] = {}
    for op in module.walk():
        if op.name.startswith("nn.") and isinstance(op.location, NameLoc):
            name = op.location.desc.data
            if (previous := holders.get(name)) is not None:
                assert isinstance(previous.location, NameLoc)
                inner = previous.location.location
                previous.location = UnknownLoc() if isinstance(inner, NoneAttr) else inner
            holders[name] = op
