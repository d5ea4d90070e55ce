"""The `nn` dialect: quantized int8 tensor operators, as TFLite defines them.

Every activation is a `tensor<...xi8>` in NHWC order; biases are `tensor<...xi32>`.
Quantization is carried by the operators, not the types: each operator names the
`#nn.quant` of every quantized operand and of its result, and the verifier checks
that a consumer agrees with the producer of each operand it reads.

Each operator also derives its access relation (`HasAccessRelation`): for an
output box, the box of each operand it reads. The cascading planner uses only
that, so nothing here knows about any accelerator.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from fractions import Fraction
from math import lcm
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    AffineMapAttr,
    ArrayAttr,
    BoolAttr,
    BytesAttr,
    DenseArrayBase,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    f64,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from cascade.dialects.access import (
    AccessRelation,
    Rational,
    Region,
    broadcast_relation,
    follows_axis,
    identity_relation,
    reads_whole_axis,
    relation_from_rows,
    window_row,
)

if TYPE_CHECKING:
    from xdsl.pattern_rewriter import RewritePattern

MAX_TENSOR_BYTES = 2**32
"""The largest tensor a 32-bit address space holds (4 GiB).

Not a verifier rule (the dialect knows no machine), but the limit every tool applies before it
allocates or places a tensor: 32-bit targets (Ethos-U55's AXI ports, TFLite Micro's arena
offsets) cannot address more, and a model that declares a larger tensor is corrupt or meant for
another machine. The TFLite importer, the interpreter and cascade-estimate reject such tensors.
"""


MAX_RESCALE_MULTIPLIER = 2.0**30
"""Real rescale multipliers must be below this (see `NNOperation.rescale_multipliers`)."""


def tensor_bytes(ty: TensorType) -> int:
    """Bytes of a statically shaped tensor, elements rounded up to whole bytes (i1 takes one)."""
    element = ty.element_type
    width = element.width.data if isinstance(element, IntegerType) else getattr(element, "bitwidth", 8)
    volume = 1
    for extent in ty.get_shape():
        volume *= max(extent, 0)
    return volume * max(1, -(-width // 8))


# --------------------------------------------------------------------------- #
# Attributes
# --------------------------------------------------------------------------- #


@irdl_attr_definition
class QuantAttr(ParametrizedAttribute):
    """Affine int8 quantization: real = scale * (q - zero_point).

    Per-tensor: `#nn.quant<0.0235:-128>`. Per-channel along `axis`:
    `#nn.quant<axis 0: [0.01:0, 0.02:0]>`.

    Scales are float32 values, as in TFLite: a decimal scale is rounded to float32. A
    scale that must be kept exactly as a double (one recovered from an integer multiplier,
    such as TOSA's 1518500250 * 2^-38) is written with the suffix `f64`:
    `#nn.quant<0.005524271728063468 f64:0>`. They are stored as f64 either way.
    """

    name = "nn.quant"

    scale: DenseArrayBase[Float64Type]
    zero_point: DenseArrayBase[IntegerType]
    axis: IntegerAttr

    def __init__(
        self,
        scale: Sequence[float] | float,
        zero_point: Sequence[int] | int,
        axis: int = -1,
        exact: bool = False,
    ):
        scales = [scale] if isinstance(scale, int | float) else list(scale)
        if not exact:
            scales = _all_as_float32(scales)
        zero_points = [zero_point] if isinstance(zero_point, int) else list(zero_point)
        super().__init__(
            DenseArrayBase.from_list(f64, scales),
            _packed_i64_array(zero_points),
            IntegerAttr(axis, i64),
        )

    @property
    def scales(self) -> tuple[float, ...]:
        return self._unpacked("_scales", self.scale)

    @property
    def zero_points(self) -> tuple[int, ...]:
        return self._unpacked("_zero_points", self.zero_point)

    def _unpacked(self, key: str, array: DenseArrayBase) -> tuple:
        # Unpacking costs a struct call, and the lowering asks for every feature map and clamp
        # of every stripe; the attribute is immutable, so keep the tuple.
        cached = self.__dict__.get(key)
        if cached is None:
            cached = array.get_values()
            self.__dict__[key] = cached  # a frozen dataclass: bypass its __setattr__
        return cached

    @property
    def channel_axis(self) -> int:
        return self.axis.value.data

    @property
    def is_per_channel(self) -> bool:
        return self.channel_axis >= 0

    def verify(self) -> None:
        if len(self.scale) == 0:
            raise VerifyException("quantization needs at least one scale")
        if len(self.scale) != len(self.zero_point):
            raise VerifyException(f"quantization has {len(self.scale)} scales but {len(self.zero_point)} zero points")
        if not _all_positive_and_finite(self.scales):
            raise VerifyException("quantization scales must be positive and finite")
        if self.channel_axis < -1:
            raise VerifyException(f"quantization axis must be >= -1, got {self.channel_axis}")
        if not self.is_per_channel and len(self.scale) != 1:
            raise VerifyException("per-tensor quantization must have exactly one scale")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            axis = -1
            if parser.parse_optional_keyword("axis") is not None:
                axis = parser.parse_integer(allow_boolean=False, allow_negative=False)
                parser.parse_punctuation(":")
                pairs = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: _parse_scale_zero_point(parser)
                )
            else:
                pairs = [_parse_scale_zero_point(parser)]
        return (
            DenseArrayBase.from_list(f64, [s for s, _ in pairs]),
            DenseArrayBase.from_list(i64, [z for _, z in pairs]),
            IntegerAttr(axis, i64),
        )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            if not self.is_per_channel:
                _print_scale_zero_point(printer, self.scales[0], self.zero_points[0])
                return
            printer.print_string(f"axis {self.channel_axis}: ")
            with printer.in_square_brackets():
                printer.print_list(
                    zip(self.scales, self.zero_points, strict=True),
                    lambda pair: _print_scale_zero_point(printer, *pair),
                )


def _as_float32(value: float) -> float:
    return float(np.float32(value))


def _all_as_float32(values: list[float]) -> list[float]:
    """`[_as_float32(v) for v in values]`, in one numpy cast when all are doubles (the
    same double-to-float32 rounding): a per-channel quantization has hundreds of scales."""
    if len(values) > 1 and all(isinstance(v, float) for v in values):
        return np.asarray(values, dtype=np.float64).astype(np.float32).astype(np.float64).tolist()
    return [_as_float32(v) for v in values]


def _all_positive_and_finite(values: tuple[float, ...]) -> bool:
    """`all(v > 0 and math.isfinite(v) for v in values)`, in numpy for per-channel scales."""
    if len(values) > 16:
        array = np.asarray(values, dtype=np.float64)
        return bool(np.all((array > 0) & np.isfinite(array)))
    return all(v > 0 and math.isfinite(v) for v in values)


_I64_RANGE = (-(2**63), 2**63)


def _packed_i64_array(values: list[int]) -> DenseArrayBase:
    """`DenseArrayBase.from_list(i64, values)`, packed in one call when all values are already
    signed 64-bit (which `from_list` would normalise to themselves, one by one)."""
    if values and all(type(v) is int for v in values) and _I64_RANGE[0] <= min(values) and max(values) < _I64_RANGE[1]:
        return DenseArrayBase(i64, BytesAttr(i64.pack(values)))
    return DenseArrayBase.from_list(i64, values)


def _parse_scale_zero_point(parser: AttrParser) -> tuple[float, int]:
    scale = parser.parse_number()
    if isinstance(scale, int):
        parser.raise_error("expected a floating-point scale, such as 0.5")
    if parser.parse_optional_keyword("f64") is None:
        scale = _as_float32(scale)
    parser.parse_punctuation(":")
    return scale, parser.parse_integer(allow_boolean=False)


def _print_scale_zero_point(printer: Printer, scale: float, zero_point: int) -> None:
    if _as_float32(scale) == scale:
        # The shortest decimal that reads back as the same float32: 0.023529412, not 2.352941e-02.
        text = np.format_float_positional(np.float32(scale), unique=True, trim="0")
    else:
        text = f"{np.format_float_positional(scale, unique=True, trim='0')} f64"
    printer.print_string(f"{text}:{zero_point}")


class Activation(StrEnum):
    """Fused activations: a clamp of the quantized output, as TFLite defines them."""

    NONE = "none"
    RELU = "relu"
    RELU6 = "relu6"
    RELU_N1_TO_1 = "relu_n1_to_1"


@irdl_attr_definition
class ActivationAttr(EnumAttribute[Activation], SpacedOpaqueSyntaxAttribute):
    """`#nn<activation relu6>`"""

    name = "nn.activation"


class PoolKind(StrEnum):
    MAX = "max"
    AVG = "avg"


@irdl_attr_definition
class PoolKindAttr(EnumAttribute[PoolKind], SpacedOpaqueSyntaxAttribute):
    """`#nn<pool_kind max>`"""

    name = "nn.pool_kind"


class ResizeMode(StrEnum):
    NEAREST = "nearest"
    BILINEAR = "bilinear"


@irdl_attr_definition
class ResizeModeAttr(EnumAttribute[ResizeMode], SpacedOpaqueSyntaxAttribute):
    """`#nn<resize_mode bilinear>`"""

    name = "nn.resize_mode"


# --------------------------------------------------------------------------- #
# Helpers shared by the verifiers
# --------------------------------------------------------------------------- #

_I8 = IntegerType(8)
_I32 = IntegerType(32)


def _tensor(value: SSAValue, what: str, element: IntegerType = _I8) -> TensorType:
    ty = value.type
    if not isinstance(ty, TensorType):
        raise VerifyException(f"{what} must be a ranked tensor, got {ty}")
    if ty.element_type != element:
        raise VerifyException(f"{what} must have element type {element}, got {ty.element_type}")
    if any(d < 0 for d in ty.get_shape()):
        raise VerifyException(f"{what} must have a static shape, got {ty}")
    return ty


def _shape(value: SSAValue) -> tuple[int, ...]:
    ty = value.type
    assert isinstance(ty, TensorType)
    return ty.get_shape()


def _ints(attr: DenseArrayBase, what: str, count: int, minimum: int) -> tuple[int, ...]:
    values = attr.get_values()
    if len(values) != count:
        raise VerifyException(f"{what} must have {count} entries, got {len(values)}")
    if any(v < minimum for v in values):
        raise VerifyException(f"{what} entries must be >= {minimum}, got {list(values)}")
    return tuple(int(v) for v in values)


def _i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def _per_tensor(quant: QuantAttr, what: str) -> None:
    if quant.is_per_channel:
        raise VerifyException(f"{what} must be per-tensor quantized")


def _int8_zero_point(quant: QuantAttr, what: str) -> None:
    if any(not -128 <= z <= 127 for z in quant.zero_points):
        raise VerifyException(f"{what} zero point must be in [-128, 127], got {list(quant.zero_points)}")


def _window_output_size(size: int, kernel: int, stride: int, dilation: int, pad: int) -> int:
    """Output extent of a sliding window; e.g. 7 rows, 3x3, stride 2, pads 1+1: (9-3)//2+1 = 4."""
    span = (kernel - 1) * dilation + 1
    return (size + pad - span) // stride + 1


def _check_window(
    in_shape: Sequence[int],
    out_shape: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
) -> None:
    pads = (padding[0] + padding[2], padding[1] + padding[3])
    for axis, name in ((0, "height"), (1, "width")):
        expected = _window_output_size(in_shape[1 + axis], kernel[axis], stride[axis], dilation[axis], pads[axis])
        if expected < 1:
            raise VerifyException(
                f"kernel {kernel[axis]} (dilation {dilation[axis]}) does not fit the input {name} "
                f"{in_shape[1 + axis]} with padding {pads[axis]}"
            )
        if out_shape[1 + axis] != expected:
            raise VerifyException(
                f"output {name} must be {expected} for input {name} {in_shape[1 + axis]}, kernel "
                f"{kernel[axis]}, stride {stride[axis]}, dilation {dilation[axis]}, padding {pads[axis]}; "
                f"got {out_shape[1 + axis]}"
            )


def _symmetric_weights(quant: QuantAttr) -> None:
    """int8 weights are symmetric in TFLite (zero point 0), and the kernels and the NPU weight
    encoding rely on it: another zero point would be honoured by one and not the other."""
    if any(z != 0 for z in quant.zero_points):
        raise VerifyException(
            f"weight zero points must be 0 (int8 weights are symmetric), got {list(quant.zero_points)}"
        )


def _finite(attr: FloatAttr, what: str) -> None:
    """A float parameter must be a number: inf or nan would make the kernel's arithmetic garbage."""
    if not math.isfinite(attr.value.data):
        raise VerifyException(f"{what} must be finite, got {attr.value.data}")


def _same_quant(op: Operation, *quants: QuantAttr) -> None:
    """TFLite computes some int8 operators on raw values, so every tensor must share one quantization."""
    if any(q != quants[0] for q in quants[1:]):
        raise VerifyException(f"{op.name} needs the same quantization on its inputs and output")


def _check_producer_quant(operand: SSAValue, quant: QuantAttr, what: str) -> None:
    """A consumer must read an operand with the quantization its producer wrote."""
    producer = operand.owner
    if not isinstance(producer, NNOperation):
        return
    written = producer.result_quant()
    if written is not None and written != quant:
        raise VerifyException(
            f"{what} quantization {quant} differs from {written} written by its producer {producer.name}"
        )


def _nhwc(value: SSAValue, what: str) -> tuple[int, ...]:
    shape = _tensor(value, what).get_shape()
    if len(shape) != 4:
        raise VerifyException(f"{what} must be a 4-D NHWC tensor, got rank {len(shape)}")
    return shape


def to_affine_maps(relation: AccessRelation) -> tuple[AffineMap, AffineMap]:
    """The relation as two affine maps, from an output point to the first and last input point.

    A fractional entry p/q becomes a floor division: `(d1 * p + r) floordiv q`.
    """

    def expr(row: Sequence[Rational], offset: Rational) -> AffineExpr:
        denominator = 1
        for value in (*row, offset):
            denominator = lcm(denominator, Fraction(value).denominator)
        total: AffineExpr = AffineExpr.constant(int(Fraction(offset) * denominator))
        for axis, value in enumerate(row):
            if value:
                total = AffineExpr.dimension(axis) * int(Fraction(value) * denominator) + total
        return total if denominator == 1 else total // denominator

    rank = relation.output_rank

    def build(offsets: Sequence[Rational]) -> AffineMap:
        return AffineMap(rank, 0, tuple(expr(r, o) for r, o in zip(relation.matrix, offsets, strict=True)))

    return build(relation.first_offset), build(relation.last_offset)


# --------------------------------------------------------------------------- #
# Operation base classes
# --------------------------------------------------------------------------- #


class HasAccessRelation(abc.ABC):
    """The interface the planner uses: which region of each operand an output region reads."""

    @abc.abstractmethod
    def access_relations(self) -> tuple[AccessRelation, ...]:
        """One relation per operand, in operand order."""

    def input_regions(self, output: Region) -> tuple[Region, ...]:
        """The clipped region of every operand read to produce `output`."""
        assert isinstance(self, Operation)
        return tuple(
            relation.input_region(output, _shape(operand))
            for relation, operand in zip(self.access_relations(), self.operands, strict=True)
        )

    def access_maps(self) -> tuple[tuple[AffineMapAttr, AffineMapAttr], ...]:
        """The relations as `affine_map` attribute pairs (first point, last point)."""
        return tuple(
            tuple(AffineMapAttr(m) for m in to_affine_maps(r))  # type: ignore[misc]
            for r in self.access_relations()
        )


class NNOperation(IRDLOperation, HasAccessRelation, abc.ABC):
    """Common verification: quantization agrees with the producers of the operands."""

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    def quantized_operands(self) -> Sequence[tuple[SSAValue, QuantAttr, str]]:
        """(operand, its quantization, its name) for each quantized activation operand."""
        return ()

    def result_quant(self) -> QuantAttr | None:
        return None

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        """(what, value) of every real multiplier TFLite turns into a 32-bit fixed-point rescale.

        TFLite's `QuantizeMultiplier` represents m as q * 2^shift and shifts an int32 left by
        `shift`: from 2^30 on that shift overflows (undefined behaviour in C++), so no result,
        TFLite's or ours, would mean anything.
        """
        return ()

    def verify_(self) -> None:
        # Each quantization on its own first: a zero point of 300 must be reported as such, not
        # as a mismatch with another quantization found by the shape and operator checks.
        operands = self.quantized_operands()
        for _, quant, what in operands:
            _int8_zero_point(quant, what)
        if (out := self.result_quant()) is not None:
            _per_tensor(out, "output")
            _int8_zero_point(out, "output")
        self.verify_shapes()
        for what, value in self.rescale_multipliers():
            if not (math.isfinite(value) and value < MAX_RESCALE_MULTIPLIER):
                raise VerifyException(
                    f"rescale multiplier {value:.6g} ({what}) is too large for TFLite's 32-bit fixed-point "
                    "arithmetic (it must be below 2^30)"
                )
        for operand, quant, what in operands:
            _check_producer_quant(operand, quant, what)

    @abc.abstractmethod
    def verify_shapes(self) -> None:
        """Raise VerifyException if operand and result shapes are inconsistent."""


class UnaryOperation(NNOperation, abc.ABC):
    """One int8 input, one int8 output, each with its own quantization."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    input_quant = prop_def(QuantAttr)
    output_quant = prop_def(QuantAttr)

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def quantized_operands(self) -> Sequence[tuple[SSAValue, QuantAttr, str]]:
        _per_tensor(self.input_quant, "input")
        return ((self.input, self.input_quant, "input"),)

    def result_quant(self) -> QuantAttr | None:
        return self.output_quant


class ElementwiseHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from cascade.passes.nn_canonicalization import RaiseConstantOperandRank, SinkReshapeBelowElementwise

        return (SinkReshapeBelowElementwise(), RaiseConstantOperandRank())


class ElementwiseUnaryOperation(UnaryOperation, abc.ABC):
    """Applies a function to each element: output shape == input shape."""

    traits = traits_def(Pure(), ElementwiseHasCanonicalizationPatterns())

    def verify_shapes(self) -> None:
        in_ty = _tensor(self.input, "input")
        out_ty = _tensor(self.output, "output")
        if in_ty.get_shape() != out_ty.get_shape():
            raise VerifyException(f"output shape {out_ty.get_shape()} must equal input shape {in_ty.get_shape()}")

    def access_relations(self) -> tuple[AccessRelation, ...]:
        return (identity_relation(len(_shape(self.output))),)


# --------------------------------------------------------------------------- #
# Convolutions
# --------------------------------------------------------------------------- #


class WindowOperation(NNOperation, abc.ABC):
    """A sliding window over H and W: stride, dilation and explicit padding."""

    stride = prop_def(DenseArrayBase[I64])
    dilation = prop_def(DenseArrayBase[I64])
    padding = prop_def(DenseArrayBase[I64])  # top, left, bottom, right
    activation = prop_def(ActivationAttr)

    def strides(self) -> tuple[int, int]:
        return _ints(self.stride, "stride", 2, 1)  # type: ignore[return-value]

    def dilations(self) -> tuple[int, int]:
        return _ints(self.dilation, "dilation", 2, 1)  # type: ignore[return-value]

    def paddings(self) -> tuple[int, int, int, int]:
        """Explicit padding as (top, left, bottom, right)."""
        return _ints(self.padding, "padding", 4, 0)  # type: ignore[return-value]

    @abc.abstractmethod
    def kernel_size(self) -> tuple[int, int]:
        """(height, width) of the window."""

    def spatial_rows(self, rank: int = 4) -> list[tuple[tuple[Rational, ...], Rational, Rational]]:
        """Access rows for N, H, W of an NHWC input read through the window."""
        (kh, kw), (sh, sw), (dh, dw) = self.kernel_size(), self.strides(), self.dilations()
        top, left, _, _ = self.paddings()
        return [
            follows_axis(rank, 0),
            window_row(rank, 1, sh, kh, dh, top),
            window_row(rank, 2, sw, kw, dw, left),
        ]

    def verify_window(self, in_shape: Sequence[int], out_shape: Sequence[int]) -> None:
        _check_window(in_shape, out_shape, self.kernel_size(), self.strides(), self.dilations(), self.paddings())


class ConvolutionOperation(WindowOperation, abc.ABC):
    """Input, weights and int32 bias; weights may be quantized per output channel."""

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    output = result_def(TensorType)
    input_quant = prop_def(QuantAttr)
    weight_quant = prop_def(QuantAttr)
    output_quant = prop_def(QuantAttr)

    assembly_format = "$input `,` $weight `,` $bias attr-dict `:` functional-type(operands, results)"

    WEIGHT_CHANNEL_AXIS: ClassVar[int]

    def kernel_size(self) -> tuple[int, int]:
        shape = _shape(self.weight)
        return shape[1], shape[2]

    def quantized_operands(self) -> Sequence[tuple[SSAValue, QuantAttr, str]]:
        _per_tensor(self.input_quant, "input")
        return ((self.input, self.input_quant, "input"),)

    def result_quant(self) -> QuantAttr | None:
        return self.output_quant

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        largest = self.input_quant.scales[0] * max(self.weight_quant.scales) / self.output_quant.scales[0]
        return (("input scale x weight scale / output scale", largest),)

    def verify_weights(self, out_channels: int) -> None:
        bias_shape = _tensor(self.bias, "bias", _I32).get_shape()
        if bias_shape != (out_channels,):
            raise VerifyException(f"bias must have shape ({out_channels},), got {bias_shape}")
        quant = self.weight_quant
        _symmetric_weights(quant)
        if not quant.is_per_channel:
            return
        if quant.channel_axis != self.WEIGHT_CHANNEL_AXIS:
            raise VerifyException(
                f"per-channel weight quantization must be along axis {self.WEIGHT_CHANNEL_AXIS}, "
                f"got {quant.channel_axis}"
            )
        if len(quant.scales) != out_channels:
            raise VerifyException(
                f"per-channel weight quantization has {len(quant.scales)} scales for {out_channels} output channels"
            )


@irdl_op_definition
class Conv2DOp(ConvolutionOperation):
    """2-D convolution, TFLite CONV_2D: weights OHWI, output channels = O."""

    name = "nn.conv2d"
    WEIGHT_CHANNEL_AXIS: ClassVar[int] = 0

    def verify_shapes(self) -> None:
        in_shape = _nhwc(self.input, "input")
        out_shape = _nhwc(self.output, "output")
        weight_shape = _tensor(self.weight, "weight").get_shape()
        if len(weight_shape) != 4:
            raise VerifyException(f"weight must be 4-D OHWI, got rank {len(weight_shape)}")
        if weight_shape[3] != in_shape[3]:
            raise VerifyException(f"weight input channels {weight_shape[3]} must equal input channels {in_shape[3]}")
        if weight_shape[0] != out_shape[3]:
            raise VerifyException(f"weight output channels {weight_shape[0]} must equal output channels {out_shape[3]}")
        if in_shape[0] != out_shape[0]:
            raise VerifyException(f"batch of output {out_shape[0]} must equal batch of input {in_shape[0]}")
        self.verify_window(in_shape, out_shape)
        self.verify_weights(out_shape[3])

    def access_relations(self) -> tuple[AccessRelation, ...]:
        in_channels = _shape(self.input)[3]
        kh, kw = self.kernel_size()
        return (
            relation_from_rows([*self.spatial_rows(), reads_whole_axis(4, in_channels)]),
            relation_from_rows(
                [follows_axis(4, 3), reads_whole_axis(4, kh), reads_whole_axis(4, kw), reads_whole_axis(4, in_channels)]
            ),
            relation_from_rows([follows_axis(4, 3)]),
        )


@irdl_op_definition
class DepthwiseConv2DOp(ConvolutionOperation):
    """Depthwise 2-D convolution, TFLite DEPTHWISE_CONV_2D: weights 1HW(C*M).

    Output channel c reads input channel c // M, where M = output / input channels.
    """

    name = "nn.depthwise_conv2d"
    WEIGHT_CHANNEL_AXIS: ClassVar[int] = 3

    def depth_multiplier(self) -> int:
        return _shape(self.output)[3] // _shape(self.input)[3]

    def verify_shapes(self) -> None:
        in_shape = _nhwc(self.input, "input")
        out_shape = _nhwc(self.output, "output")
        weight_shape = _tensor(self.weight, "weight").get_shape()
        if len(weight_shape) != 4 or weight_shape[0] != 1:
            raise VerifyException(f"depthwise weight must have shape 1xHxWxC, got {weight_shape}")
        if out_shape[3] % in_shape[3]:
            raise VerifyException(f"output channels {out_shape[3]} must be a multiple of input channels {in_shape[3]}")
        if weight_shape[3] != out_shape[3]:
            raise VerifyException(f"weight channels {weight_shape[3]} must equal output channels {out_shape[3]}")
        if in_shape[0] != out_shape[0]:
            raise VerifyException(f"batch of output {out_shape[0]} must equal batch of input {in_shape[0]}")
        self.verify_window(in_shape, out_shape)
        self.verify_weights(out_shape[3])

    def access_relations(self) -> tuple[AccessRelation, ...]:
        multiplier = self.depth_multiplier()
        kh, kw = self.kernel_size()
        return (
            relation_from_rows([*self.spatial_rows(), follows_axis(4, 3, Fraction(1, multiplier))]),
            relation_from_rows(
                [reads_whole_axis(4, 1), reads_whole_axis(4, kh), reads_whole_axis(4, kw), follows_axis(4, 3)]
            ),
            relation_from_rows([follows_axis(4, 3)]),
        )


@irdl_op_definition
class TransposeConv2DOp(ConvolutionOperation):
    """Transposed 2-D convolution, TFLite TRANSPOSE_CONV: weights OHWI.

    Input pixel x scatters to outputs x*s - pad + k for k < K, so output y gathers
    inputs ceil((y + pad - K + 1) / s) .. floor((y + pad) / s).
    """

    name = "nn.transpose_conv2d"
    WEIGHT_CHANNEL_AXIS: ClassVar[int] = 0

    def verify_shapes(self) -> None:
        in_shape = _nhwc(self.input, "input")
        out_shape = _nhwc(self.output, "output")
        weight_shape = _tensor(self.weight, "weight").get_shape()
        if len(weight_shape) != 4:
            raise VerifyException(f"weight must be 4-D OHWI, got rank {len(weight_shape)}")
        if weight_shape[3] != in_shape[3] or weight_shape[0] != out_shape[3]:
            raise VerifyException(
                f"weight shape {weight_shape} does not match input channels {in_shape[3]} "
                f"and output channels {out_shape[3]}"
            )
        if self.dilations() != (1, 1):
            raise VerifyException("transposed convolution supports only dilation 1")
        top, left, bottom, right = self.paddings()
        for axis, name, pads in ((1, "height", top + bottom), (2, "width", left + right)):
            expected = (in_shape[axis] - 1) * self.strides()[axis - 1] + weight_shape[axis] - pads
            if out_shape[axis] != expected:
                raise VerifyException(f"output {name} must be {expected}, got {out_shape[axis]}")
        self.verify_weights(out_shape[3])

    def access_relations(self) -> tuple[AccessRelation, ...]:
        (kh, kw), (sh, sw) = self.kernel_size(), self.strides()
        top, left, _, _ = self.paddings()
        in_channels = _shape(self.input)[3]

        def gather_row(
            axis: int, stride: int, kernel: int, pad: int
        ) -> tuple[tuple[Rational, ...], Rational, Rational]:
            # ceil((y + pad - K + 1) / s) == floor((y + pad - K + s) / s)
            return follows_axis(
                4, axis, Fraction(1, stride), Fraction(pad - kernel + stride, stride), Fraction(pad, stride)
            )

        return (
            relation_from_rows(
                [
                    follows_axis(4, 0),
                    gather_row(1, sh, kh, top),
                    gather_row(2, sw, kw, left),
                    reads_whole_axis(4, in_channels),
                ]
            ),
            relation_from_rows(
                [follows_axis(4, 3), reads_whole_axis(4, kh), reads_whole_axis(4, kw), reads_whole_axis(4, in_channels)]
            ),
            relation_from_rows([follows_axis(4, 3)]),
        )


@irdl_op_definition
class Pool2DOp(WindowOperation):
    """Max or average pooling, TFLite MAX_POOL_2D / AVERAGE_POOL_2D."""

    name = "nn.pool2d"

    input = operand_def(TensorType)
    output = result_def(TensorType)
    kind = prop_def(PoolKindAttr)
    kernel = prop_def(DenseArrayBase[I64])
    input_quant = prop_def(QuantAttr)
    output_quant = prop_def(QuantAttr)

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def kernel_size(self) -> tuple[int, int]:
        return _ints(self.kernel, "kernel", 2, 1)  # type: ignore[return-value]

    def quantized_operands(self) -> Sequence[tuple[SSAValue, QuantAttr, str]]:
        _per_tensor(self.input_quant, "input")
        return ((self.input, self.input_quant, "input"),)

    def result_quant(self) -> QuantAttr | None:
        return self.output_quant

    def verify_shapes(self) -> None:
        in_shape = _nhwc(self.input, "input")
        out_shape = _nhwc(self.output, "output")
        if in_shape[0] != out_shape[0] or in_shape[3] != out_shape[3]:
            raise VerifyException(f"pooling keeps batch and channels: input {in_shape}, output {out_shape}")
        if self.dilations() != (1, 1):
            raise VerifyException("pooling supports only dilation 1")
        self.verify_window(in_shape, out_shape)
        _same_quant(self, self.input_quant, self.output_quant)

    def access_relations(self) -> tuple[AccessRelation, ...]:
        return (relation_from_rows([*self.spatial_rows(), follows_axis(4, 3)]),)


# --------------------------------------------------------------------------- #
# Elementwise
# --------------------------------------------------------------------------- #


class BinaryOperation(NNOperation, abc.ABC):
    """Two int8 inputs, numpy broadcasting, one int8 output, a fused activation."""

    traits = traits_def(Pure(), ElementwiseHasCanonicalizationPatterns())

    input = operand_def(TensorType)
    input2 = operand_def(TensorType)
    output = result_def(TensorType)
    input_quant = prop_def(QuantAttr)
    input2_quant = prop_def(QuantAttr)
    output_quant = prop_def(QuantAttr)
    activation = prop_def(ActivationAttr)

    assembly_format = "$input `,` $input2 attr-dict `:` functional-type(operands, results)"

    def quantized_operands(self) -> Sequence[tuple[SSAValue, QuantAttr, str]]:
        _per_tensor(self.input_quant, "input")
        _per_tensor(self.input2_quant, "input2")
        return ((self.input, self.input_quant, "input"), (self.input2, self.input2_quant, "input2"))

    def result_quant(self) -> QuantAttr | None:
        return self.output_quant

    def verify_shapes(self) -> None:
        shapes = [_tensor(self.input, "input").get_shape(), _tensor(self.input2, "input2").get_shape()]
        out_shape = _tensor(self.output, "output").get_shape()
        rank = max(len(s) for s in shapes)
        padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
        expected = tuple(max(a, b) if 1 in (a, b) else a if a == b else -1 for a, b in zip(*padded, strict=True))
        if -1 in expected:
            raise VerifyException(f"input shapes {shapes[0]} and {shapes[1]} do not broadcast")
        if out_shape != expected:
            raise VerifyException(f"output shape must be {expected}, the broadcast of the inputs, got {out_shape}")

    def access_relations(self) -> tuple[AccessRelation, ...]:
        out_shape = _shape(self.output)
        return tuple(broadcast_relation(_shape(v), out_shape) for v in (self.input, self.input2))


def _add_output_multiplier(op: BinaryOperation) -> tuple[tuple[str, float], ...]:
    # TFLite ADD/SUB: inputs are scaled to 2 * max(input scales) with 20 bits of headroom.
    twice_max = 2 * max(op.input_quant.scales[0], op.input2_quant.scales[0])
    return (("2 x max input scale / (2^20 x output scale)", twice_max / (2**20 * op.output_quant.scales[0])),)


@irdl_op_definition
class AddOp(BinaryOperation):
    """Elementwise addition, TFLite ADD."""

    name = "nn.add"

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        return _add_output_multiplier(self)


@irdl_op_definition
class SubOp(BinaryOperation):
    """Elementwise subtraction, TFLite SUB."""

    name = "nn.sub"

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        return _add_output_multiplier(self)


@irdl_op_definition
class MulOp(BinaryOperation):
    """Elementwise multiplication, TFLite MUL."""

    name = "nn.mul"

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        scales = self.input_quant.scales[0] * self.input2_quant.scales[0] / self.output_quant.scales[0]
        return (("input scale x input2 scale / output scale", scales),)


class SelectionOperation(BinaryOperation, abc.ABC):
    """Min and max pick one of the raw inputs: one quantization, no activation."""

    def verify_shapes(self) -> None:
        super().verify_shapes()
        _same_quant(self, self.input_quant, self.input2_quant, self.output_quant)
        if self.activation.data != Activation.NONE:
            raise VerifyException(f"{self.name} has no fused activation")


@irdl_op_definition
class MinimumOp(SelectionOperation):
    """Elementwise minimum, TFLite MINIMUM."""

    name = "nn.minimum"


@irdl_op_definition
class MaximumOp(SelectionOperation):
    """Elementwise maximum, TFLite MAXIMUM."""

    name = "nn.maximum"


@irdl_op_definition
class TanhOp(ElementwiseUnaryOperation):
    """Hyperbolic tangent, TFLite TANH (a 256-entry table for int8)."""

    name = "nn.tanh"

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        # The int8 table holds round(tanh(x) / output scale), an int32 in TFLite.
        return (("1 / output scale", 1 / self.output_quant.scales[0]),)


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOperation):
    """Logistic sigmoid, TFLite LOGISTIC (a 256-entry table for int8)."""

    name = "nn.sigmoid"

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        # The int8 table holds round(sigmoid(x) / output scale), an int32 in TFLite.
        return (("1 / output scale", 1 / self.output_quant.scales[0]),)


@irdl_op_definition
class LeakyReluOp(ElementwiseUnaryOperation):
    """Leaky ReLU, TFLite LEAKY_RELU: x for x >= 0, alpha * x otherwise."""

    name = "nn.leaky_relu"
    alpha = prop_def(FloatAttr[Float32Type])

    def verify_shapes(self) -> None:
        super().verify_shapes()
        _finite(self.alpha, "alpha")

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        identity = self.input_quant.scales[0] / self.output_quant.scales[0]
        return (
            ("input scale / output scale", identity),
            ("alpha x input scale / output scale", abs(self.alpha.value.data) * identity),
        )


@irdl_op_definition
class ReluOp(ElementwiseUnaryOperation):
    """TFLite RELU, RELU6 and RELU_N1_TO_1 as operators of their own (not fused): the input
    requantized to the output's quantization, then clamped as `activation` clamps."""

    name = "nn.relu"
    activation = prop_def(ActivationAttr)

    def verify_shapes(self) -> None:
        super().verify_shapes()
        if self.activation.data == Activation.NONE:
            raise VerifyException("nn.relu needs an activation other than none")

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        return (("input scale / output scale", self.input_quant.scales[0] / self.output_quant.scales[0]),)


@irdl_op_definition
class HardSwishOp(ElementwiseUnaryOperation):
    """Hard swish, TFLite HARD_SWISH: x * relu6(x + 3) / 6, in int16 fixed point."""

    name = "nn.hard_swish"

    def verify_shapes(self) -> None:
        super().verify_shapes()
        # TFLite refuses an output multiplier (input scale / 128 / output scale, in float32)
        # of 1 or more: its fixed point shifts only right to the output scale.
        hires = np.float32(np.float32(1.0 / 128.0) * np.float32(self.input_quant.scales[0]))
        if not np.float32(hires / np.float32(self.output_quant.scales[0])) < 1:
            raise VerifyException(
                "hard_swish needs an output scale above input scale / 128 (TFLite's output multiplier is below 1)"
            )


@irdl_op_definition
class RescaleOp(ElementwiseUnaryOperation):
    """Requantization from `input_quant` to `output_quant`, TFLite QUANTIZE int8 -> int8."""

    name = "nn.rescale"

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        return (("input scale / output scale", self.input_quant.scales[0] / self.output_quant.scales[0]),)


# --------------------------------------------------------------------------- #
# Whole-tensor and layout operators
# --------------------------------------------------------------------------- #


@irdl_op_definition
class FullyConnectedOp(NNOperation):
    """Fully connected layer, TFLite FULLY_CONNECTED: input flattened to [N, K], weights [O, K]."""

    name = "nn.fully_connected"

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    input_quant = prop_def(QuantAttr)
    weight_quant = prop_def(QuantAttr)
    output_quant = prop_def(QuantAttr)
    activation = prop_def(ActivationAttr)

    assembly_format = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"

    def quantized_operands(self) -> Sequence[tuple[SSAValue, QuantAttr, str]]:
        _per_tensor(self.input_quant, "input")
        return ((self.input, self.input_quant, "input"),)

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        largest = self.input_quant.scales[0] * max(self.weight_quant.scales) / self.output_quant.scales[0]
        return (("input scale x weight scale / output scale", largest),)

    def result_quant(self) -> QuantAttr | None:
        return self.output_quant

    def verify_shapes(self) -> None:
        in_shape = _tensor(self.input, "input").get_shape()
        weight_shape = _tensor(self.weight, "weight").get_shape()
        out_shape = _tensor(self.output, "output").get_shape()
        if len(weight_shape) != 2:
            raise VerifyException(f"weight must be 2-D [O, K], got {weight_shape}")
        units, depth = weight_shape
        volume = _volume(in_shape)
        if volume % depth:
            raise VerifyException(f"input of {volume} elements does not flatten to rows of {depth}")
        if out_shape != (volume // depth, units):
            raise VerifyException(f"output shape must be {(volume // depth, units)}, got {out_shape}")
        if self.bias is not None and _tensor(self.bias, "bias", _I32).get_shape() != (units,):
            raise VerifyException(f"bias must have shape ({units},)")
        quant = self.weight_quant
        _symmetric_weights(quant)
        if quant.is_per_channel and (quant.channel_axis != 0 or len(quant.scales) != units):
            raise VerifyException(f"per-channel weight quantization must have {units} scales along axis 0")

    def access_relations(self) -> tuple[AccessRelation, ...]:
        in_shape = _shape(self.input)
        weight_shape = _shape(self.weight)
        whole_input = relation_from_rows([reads_whole_axis(2, size) for size in in_shape])
        weight = relation_from_rows([follows_axis(2, 1), reads_whole_axis(2, weight_shape[1])])
        relations = [whole_input, weight]
        if self.bias is not None:
            relations.append(relation_from_rows([follows_axis(2, 1)]))
        return tuple(relations)


def _volume(shape: Sequence[int]) -> int:
    volume = 1
    for extent in shape:
        volume *= extent
    return volume


@irdl_op_definition
class MeanOp(UnaryOperation):
    """Mean over `axes`, TFLite MEAN; `keep_dims` keeps the reduced axes with size 1."""

    name = "nn.mean"

    axes = prop_def(DenseArrayBase[I64])
    keep_dims = prop_def(BoolAttr)

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        return (("input scale / output scale", self.input_quant.scales[0] / self.output_quant.scales[0]),)

    def reduced_axes(self) -> tuple[int, ...]:
        rank = len(_shape(self.input))
        return tuple(sorted({a % rank for a in self.axes.get_values()}))

    def verify_shapes(self) -> None:
        in_shape = _tensor(self.input, "input").get_shape()
        out_shape = _tensor(self.output, "output").get_shape()
        axes = self.axes.get_values()
        if not axes or any(not -len(in_shape) <= a < len(in_shape) for a in axes):
            raise VerifyException(f"mean axes {list(axes)} out of range for rank {len(in_shape)}")
        reduced = self.reduced_axes()
        if self.keep_dims.value.data:
            expected = tuple(1 if i in reduced else d for i, d in enumerate(in_shape))
        else:
            expected = tuple(d for i, d in enumerate(in_shape) if i not in reduced)
        if out_shape != expected:
            raise VerifyException(f"output shape must be {expected}, got {out_shape}")

    def access_relations(self) -> tuple[AccessRelation, ...]:
        in_shape = _shape(self.input)
        out_rank = len(_shape(self.output))
        reduced = self.reduced_axes()
        keep = self.keep_dims.value.data
        rows = []
        out_axis = 0
        for axis, size in enumerate(in_shape):
            if axis in reduced:
                rows.append(reads_whole_axis(out_rank, size))
                out_axis += 1 if keep else 0
                continue
            rows.append(follows_axis(out_rank, out_axis))
            out_axis += 1
        return (relation_from_rows(rows),)


@irdl_op_definition
class SoftmaxOp(UnaryOperation):
    """Softmax over the last axis, TFLite SOFTMAX with `beta`."""

    name = "nn.softmax"

    beta = prop_def(FloatAttr[Float32Type])

    def verify_shapes(self) -> None:
        in_ty = _tensor(self.input, "input")
        out_ty = _tensor(self.output, "output")
        if in_ty.get_shape() != out_ty.get_shape():
            raise VerifyException("softmax output shape must equal its input shape")
        _finite(self.beta, "beta")

    def access_relations(self) -> tuple[AccessRelation, ...]:
        shape = _shape(self.input)
        rank = len(shape)
        rows = [follows_axis(rank, axis) for axis in range(rank - 1)]
        return (relation_from_rows([*rows, reads_whole_axis(rank, shape[-1])]),)


@irdl_op_definition
class PadOp(UnaryOperation):
    """Constant padding with the zero point, TFLite PAD; `padding` is (before, after) per axis."""

    name = "nn.pad"

    padding = prop_def(DenseArrayBase[I64])

    def pads(self) -> tuple[tuple[int, int], ...]:
        values = _ints(self.padding, "padding", 2 * len(_shape(self.input)), 0)
        return tuple((values[2 * i], values[2 * i + 1]) for i in range(len(values) // 2))

    def verify_shapes(self) -> None:
        in_shape = _tensor(self.input, "input").get_shape()
        out_shape = _tensor(self.output, "output").get_shape()
        expected = tuple(d + b + a for d, (b, a) in zip(in_shape, self.pads(), strict=True))
        if out_shape != expected:
            raise VerifyException(f"output shape must be {expected}, got {out_shape}")
        if self.input_quant != self.output_quant:
            raise VerifyException("pad must keep the quantization of its input")

    def access_relations(self) -> tuple[AccessRelation, ...]:
        rank = len(_shape(self.input))
        return (relation_from_rows([follows_axis(rank, a, 1, -b) for a, (b, _) in enumerate(self.pads())]),)


class ReshapeHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from cascade.passes.nn_canonicalization import FoldReshapeOfReshape, RemoveIdentityReshape

        return (FoldReshapeOfReshape(), RemoveIdentityReshape())


@irdl_op_definition
class ReshapeOp(UnaryOperation):
    """Reshape keeping the element order, TFLite RESHAPE, EXPAND_DIMS and SQUEEZE; reads the
    whole input."""

    name = "nn.reshape"
    traits = traits_def(Pure(), ReshapeHasCanonicalizationPatterns())

    def verify_shapes(self) -> None:
        in_shape = _tensor(self.input, "input").get_shape()
        out_shape = _tensor(self.output, "output").get_shape()
        if _volume(in_shape) != _volume(out_shape):
            raise VerifyException(f"reshape must keep the element count: {in_shape} to {out_shape}")
        if self.input_quant != self.output_quant:
            raise VerifyException("reshape must keep the quantization of its input")

    def access_relations(self) -> tuple[AccessRelation, ...]:
        out_rank = len(_shape(self.output))
        return (relation_from_rows([reads_whole_axis(out_rank, s) for s in _shape(self.input)]),)


@irdl_op_definition
class ResizeOp(UnaryOperation):
    """Integer-factor upscaling, TFLite RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR.

    With factor f, nearest reads row floor((y + 0.5*hp) / f); bilinear reads the two
    rows around (y + 0.5*hp) / f - 0.5*hp, where hp = 1 with half-pixel centers.
    """

    name = "nn.resize"

    mode = prop_def(ResizeModeAttr)
    align_corners = prop_def(BoolAttr)
    half_pixel_centers = prop_def(BoolAttr)

    def factors(self) -> tuple[int, int]:
        in_shape, out_shape = _shape(self.input), _shape(self.output)
        return out_shape[1] // in_shape[1], out_shape[2] // in_shape[2]

    def verify_shapes(self) -> None:
        in_shape = _nhwc(self.input, "input")
        out_shape = _nhwc(self.output, "output")
        if in_shape[0] != out_shape[0] or in_shape[3] != out_shape[3]:
            raise VerifyException(f"resize keeps batch and channels: input {in_shape}, output {out_shape}")
        for axis, name in ((1, "height"), (2, "width")):
            if out_shape[axis] % in_shape[axis]:
                raise VerifyException(
                    f"output {name} {out_shape[axis]} must be an integer multiple of input {name} {in_shape[axis]}"
                )
        if self.align_corners.value.data:
            raise VerifyException("resize with align_corners is not supported")
        _same_quant(self, self.input_quant, self.output_quant)

    def access_relations(self) -> tuple[AccessRelation, ...]:
        half_pixel = self.half_pixel_centers.value.data
        rows = [follows_axis(4, 0)]
        for axis, factor in zip((1, 2), self.factors(), strict=True):
            scale = Fraction(1, factor)
            if self.mode.data == ResizeMode.NEAREST:
                first = Fraction(1, 2 * factor) if half_pixel else Fraction(0)
                rows.append(follows_axis(4, axis, scale, first))
            else:
                first = Fraction(1, 2 * factor) - Fraction(1, 2) if half_pixel else Fraction(0)
                rows.append(follows_axis(4, axis, scale, first, first + 1))
        rows.append(follows_axis(4, 3))
        return (relation_from_rows(rows),)


@irdl_op_definition
class ConcatOp(NNOperation):
    """Concatenation along `axis`, TFLite CONCATENATION; inputs are requantized to the output."""

    name = "nn.concat"

    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    input_quants = prop_def(ArrayAttr[QuantAttr])
    output_quant = prop_def(QuantAttr)

    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def concat_axis(self) -> int:
        return self.axis.value.data % len(_shape(self.output))

    def quantized_operands(self) -> Sequence[tuple[SSAValue, QuantAttr, str]]:
        if len(self.input_quants) != len(self.inputs):
            raise VerifyException(
                f"concat has {len(self.inputs)} inputs but {len(self.input_quants)} input quantizations"
            )
        return tuple(
            (v, q, f"input {i}") for i, (v, q) in enumerate(zip(self.inputs, self.input_quants.data, strict=True))
        )

    def rescale_multipliers(self) -> Sequence[tuple[str, float]]:
        out = self.output_quant.scales[0]
        return tuple(
            (f"input {i} scale / output scale", q.scales[0] / out) for i, q in enumerate(self.input_quants.data)
        )

    def result_quant(self) -> QuantAttr | None:
        return self.output_quant

    def verify_shapes(self) -> None:
        if not self.inputs:
            raise VerifyException("concat needs at least one input")
        out_shape = _tensor(self.output, "output").get_shape()
        if not -len(out_shape) <= self.axis.value.data < len(out_shape):
            raise VerifyException(f"concat axis {self.axis.value.data} out of range for rank {len(out_shape)}")
        axis = self.concat_axis()
        total = 0
        for index, value in enumerate(self.inputs):
            shape = _tensor(value, f"input {index}").get_shape()
            others = [d for i, d in enumerate(shape) if i != axis]
            if len(shape) != len(out_shape) or others != [d for i, d in enumerate(out_shape) if i != axis]:
                raise VerifyException(f"input {index} shape {shape} does not match output {out_shape} off axis {axis}")
            total += shape[axis]
        if total != out_shape[axis]:
            raise VerifyException(f"output extent {out_shape[axis]} along axis {axis} must be {total}")

    def access_relations(self) -> tuple[AccessRelation, ...]:
        rank = len(_shape(self.output))
        axis = self.concat_axis()
        relations = []
        start = 0
        for value in self.inputs:
            rows = [follows_axis(rank, a, 1, -start if a == axis else 0) for a in range(rank)]
            relations.append(relation_from_rows(rows))
            start += _shape(value)[axis]
        return tuple(relations)


NN = Dialect(
    "nn",
    [
        Conv2DOp,
        DepthwiseConv2DOp,
        TransposeConv2DOp,
        Pool2DOp,
        AddOp,
        SubOp,
        MulOp,
        MinimumOp,
        MaximumOp,
        FullyConnectedOp,
        MeanOp,
        SoftmaxOp,
        PadOp,
        ReshapeOp,
        ResizeOp,
        ConcatOp,
        TanhOp,
        SigmoidOp,
        LeakyReluOp,
        HardSwishOp,
        ReluOp,
        RescaleOp,
    ],
    [QuantAttr, ActivationAttr, PoolKindAttr, ResizeModeAttr],
)
