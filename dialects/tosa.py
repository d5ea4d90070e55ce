"""The `tosa` dialect as `tosa-converter-for-tflite` emits it: xDSL's ops plus the ones it lacks.

xDSL 0.75's `tosa` has 21 operations and no conv2d, depthwise_conv2d, reshape, slice, pad,
transpose, const_shape or `!tosa.shape`. This module defines those, replaces xDSL's versions of
the operations an int8 TFLite model uses (const, rescale, clamp, reduce_sum, max_pool2d) by ones
that verify their shapes, and builds `TOSA`: one `Dialect("tosa", ...)` meant to be registered
*instead of* xDSL's, because a context holds one dialect per name.

Operations follow TOSA 1.0 as MLIR spells it (the LLVM of tosa-tools 2026.8): zero points are
`tensor<1xi8>` operands, shapes are `!tosa.shape<N>` values made by `tosa.const_shape`, and
window paddings are `[top, bottom, left, right]`. Each operation parses and prints both the
generic form (`tosa-opt --mlir-print-op-generic`, which every MLIR build agrees on) and the
attr-dict custom form `tosa-opt` prints (`tosa.conv2d %x, %w, ... {pad = ...} : (...) -> ...`);
other MLIR builds (IREE) spell some custom forms differently, so prefer the generic form.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import tosa as xdsl_tosa
from xdsl.dialects.builtin import (
    I32,
    I64,
    AnyAttr,
    AnyFloatConstr,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    SignlessIntegerConstraint,
    TensorType,
)
from xdsl.dialects.tosa import NanMode, NanModeAttr, RoundingMode, RoundingModeAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrConstraint,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

# --------------------------------------------------------------------------- #
# The shape type
# --------------------------------------------------------------------------- #


@irdl_attr_definition
class ShapeType(ParametrizedAttribute, TypeAttribute):
    """`!tosa.shape<N>`: a list of N indices, such as a reshape's target shape."""

    name = "tosa.shape"

    rank: IntAttr

    def __init__(self, rank: int):
        super().__init__(IntAttr(rank))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer(allow_boolean=False, allow_negative=False)),)

    def print_parameters(self, printer: Printer) -> None:
        # A bare integer: `IntAttr` would otherwise print as `#builtin.int<N>`, unknown upstream.
        with printer.in_angle_brackets():
            printer.print_string(str(self.rank.data))


# --------------------------------------------------------------------------- #
# Verification helpers
# --------------------------------------------------------------------------- #


def _shape(value: SSAValue, what: str) -> tuple[int, ...]:
    """The static shape of a ranked tensor operand or result."""
    ty = value.type
    if not isinstance(ty, TensorType):
        raise VerifyException(f"{what} must be a ranked tensor, got {ty}")
    shape = ty.get_shape()
    if any(d < 0 for d in shape):
        raise VerifyException(f"{what} must have a static shape, got {ty}")
    return shape


def _element(value: SSAValue) -> Attribute:
    ty = value.type
    assert isinstance(ty, TensorType)
    return ty.element_type


def _ints(attr: DenseArrayBase, what: str, count: int, minimum: int) -> tuple[int, ...]:
    values = tuple(int(v) for v in attr.get_values())
    if len(values) != count:
        raise VerifyException(f"{what} must have {count} entries, got {len(values)}")
    if any(v < minimum for v in values):
        raise VerifyException(f"{what} entries must be >= {minimum}, got {list(values)}")
    return values


def _zero_point(value: SSAValue, element: Attribute, what: str) -> None:
    """TOSA 1.0 zero points are one-element tensors of the element type they apply to."""
    if _shape(value, what) not in ((1,), ()):
        raise VerifyException(f"{what} must be a one-element tensor, got {value.type}")
    if _element(value) != element:
        raise VerifyException(f"{what} element type must be {element}, got {_element(value)}")


def shape_values(value: SSAValue) -> tuple[int, ...] | None:
    """The indices of a `!tosa.shape` value made by `tosa.const_shape`, else None."""
    owner = value.owner
    if isinstance(owner, ConstShapeOp):
        return owner.shape()
    return None


def _shape_operand(value: SSAValue, what: str, rank: int) -> tuple[int, ...] | None:
    ty = value.type
    if not isinstance(ty, ShapeType):
        raise VerifyException(f"{what} must be a !tosa.shape, got {ty}")
    if ty.rank.data != rank:
        raise VerifyException(f"{what} must be a !tosa.shape<{rank}>, got {ty}")
    return shape_values(value)


def _window_extent(size: int, kernel: int, stride: int, dilation: int, before: int, after: int) -> int | None:
    """TOSA's output extent of a sliding window, or None when the stride does not divide exactly.

    E.g. 32 rows, 3x3, stride 2, pads 0+1: (32 - 1 + 1 - 2) / 2 + 1 = 16.
    """
    numerator = size - 1 + before + after - (kernel - 1) * dilation
    if numerator < 0 or numerator % stride:
        return None
    return numerator // stride + 1


def _check_window(
    in_shape: Sequence[int],
    out_shape: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    pad: Sequence[int],
) -> None:
    """Output height and width of a window op; `pad` is TOSA's [top, bottom, left, right]."""
    for axis, name in ((0, "height"), (1, "width")):
        expected = _window_extent(
            in_shape[1 + axis], kernel[axis], stride[axis], dilation[axis], pad[2 * axis], pad[2 * axis + 1]
        )
        if expected is None:
            raise VerifyException(
                f"input {name} {in_shape[1 + axis]} with padding {pad[2 * axis]}+{pad[2 * axis + 1]}, "
                f"kernel {kernel[axis]}, dilation {dilation[axis]} is not covered exactly by stride {stride[axis]}"
            )
        if out_shape[1 + axis] != expected:
            raise VerifyException(f"output {name} must be {expected}, got {out_shape[1 + axis]}")


_I8 = IntegerType(8)
_I16 = IntegerType(16)
_I32 = IntegerType(32)


def _accumulator(input_element: Attribute) -> Attribute | None:
    """The accumulator (and result) element type TOSA requires for integer inputs, or None for floats."""
    if input_element == _I8:
        return _I32
    if input_element == _I16:
        return IntegerType(48)
    return None


# --------------------------------------------------------------------------- #
# Constants
# --------------------------------------------------------------------------- #


@irdl_op_definition
class ConstOp(IRDLOperation):
    """A constant tensor. See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosaconst-mlirtosaconstop)."""

    name = "tosa.const"

    values = prop_def(DenseIntOrFPElementsAttr)
    output = result_def(TensorType)

    traits = traits_def(Pure())

    def __init__(self, values: DenseIntOrFPElementsAttr):
        super().__init__(properties={"values": values}, result_types=(values.get_type(),))

    def verify_(self) -> None:
        if self.values.get_type() != self.output.type:
            raise VerifyException(f"values of type {self.values.get_type()} do not match the result {self.output.type}")


@irdl_op_definition
class ConstShapeOp(IRDLOperation):
    """A constant `!tosa.shape<N>`. See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosaconst_shape-mlirtosaconstshapeop)."""

    name = "tosa.const_shape"

    values = prop_def(DenseIntOrFPElementsAttr)
    output = result_def(ShapeType)

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` `(` `)` `->` type($output)"

    def __init__(self, values: Sequence[int]):
        attr = DenseIntOrFPElementsAttr.from_list(TensorType(IndexType(), (len(values),)), list(values))
        super().__init__(properties={"values": attr}, result_types=(ShapeType(len(values)),))

    def shape(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.values.get_values())

    def verify_(self) -> None:
        ty = self.values.get_type()
        if not isinstance(ty.get_element_type(), IndexType) or len(ty.get_shape()) != 1:
            raise VerifyException(f"values must be a 1-D tensor of index, got {ty}")
        assert isinstance(self.output.type, ShapeType)
        if ty.get_shape()[0] != self.output.type.rank.data:
            raise VerifyException(f"{ty.get_shape()[0]} values do not make a {self.output.type}")


# --------------------------------------------------------------------------- #
# Quantization and activation
# --------------------------------------------------------------------------- #


@irdl_op_definition
class RescaleOp(IRDLOperation):
    """Requantization: `out = apply_scale(in - input_zp, multiplier, shift) + output_zp`, saturated.

    With `per_channel`, multiplier and shift have one entry per channel (the last axis).
    See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosarescale-mlirtosarescaleop).
    """

    name = "tosa.rescale"

    input = operand_def(TensorType)
    multiplier = operand_def(TensorType)
    shift = operand_def(TensorType)
    input_zp = operand_def(TensorType)
    output_zp = operand_def(TensorType)
    output = result_def(TensorType)

    scale32 = prop_def(BoolAttr)
    rounding_mode = prop_def(RoundingModeAttr)
    per_channel = prop_def(BoolAttr)
    input_unsigned = prop_def(BoolAttr)
    output_unsigned = prop_def(BoolAttr)

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        in_shape = _shape(self.input, "input")
        if _shape(self.output, "output") != in_shape:
            raise VerifyException(f"output shape {_shape(self.output, 'output')} must equal input shape {in_shape}")
        channels = in_shape[-1] if self.per_channel.value.data and in_shape else 1
        multiplier_type = _I32 if self.scale32.value.data else _I16
        for value, element, what in ((self.multiplier, multiplier_type, "multiplier"), (self.shift, _I8, "shift")):
            if _shape(value, what) != (channels,):
                raise VerifyException(f"{what} must have shape ({channels},), got {_shape(value, what)}")
            if _element(value) != element:
                raise VerifyException(f"{what} element type must be {element}, got {_element(value)}")
        _zero_point(self.input_zp, _element(self.input), "input_zp")
        _zero_point(self.output_zp, _element(self.output), "output_zp")

    def print(self, printer: Printer) -> None:
        # The attr-dict form of tosa-opt, whose rounding mode is a bare keyword (`DOUBLE_ROUND`).
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_ssa_value)
        printer.print_string(" {")
        entries = sorted(self.properties.items())

        def print_entry(entry: tuple[str, Attribute]) -> None:
            key, value = entry
            printer.print_string(f"{key} = ")
            if isinstance(value, RoundingModeAttr):
                printer.print_string(value.data)
            else:
                printer.print_attribute(value)

        printer.print_list(entries, print_entry)
        printer.print_string("} : ")
        with printer.in_parens():
            printer.print_list(self.operand_types, printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_attribute(self.output.type)

    @classmethod
    def parse(cls, parser: Parser) -> RescaleOp:
        position = parser.pos
        operands = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        properties: dict[str, Attribute] = {}

        def parse_entry() -> None:
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            if key == "rounding_mode" and (word := parser.parse_optional_identifier()) is not None:
                if word not in set(RoundingMode):
                    parser.raise_error(f"unknown rounding mode {word}")
                properties[key] = RoundingModeAttr(RoundingMode(word))
            else:
                properties[key] = parser.parse_attribute()

        parser.parse_comma_separated_list(parser.Delimiter.BRACES, parse_entry)
        parser.parse_punctuation(":")
        operand_types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        return cls.create(
            operands=parser.resolve_operands(operands, operand_types, position),
            result_types=[result_type],
            properties=properties,
        )


@irdl_op_definition
class ClampOp(IRDLOperation):
    """`min(max(x, min_val), max_val)`. See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosaclamp-mlirtosaclampop)."""

    name = "tosa.clamp"

    T: ClassVar[VarConstraint] = VarConstraint("T", AnyAttr())
    VALUE: ClassVar[AttrConstraint] = IntegerAttr.constr(type=SignlessIntegerConstraint & T) | FloatAttr.constr(
        type=AnyFloatConstr & T
    )

    input = operand_def(TensorType.constr(T))
    output = result_def(TensorType.constr(T))
    min_val = prop_def(VALUE)
    max_val = prop_def(VALUE)
    nan_mode = opt_prop_def(NanModeAttr, default_value=NanModeAttr(NanMode.PROPAGATE))

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        if _shape(self.output, "output") != _shape(self.input, "input"):
            raise VerifyException("clamp output shape must equal its input shape")
        low, high = self.min_val.value.data, self.max_val.value.data
        if low > high:
            raise VerifyException(f"min_val {low} must not exceed max_val {high}")


# --------------------------------------------------------------------------- #
# Convolutions and pooling
# --------------------------------------------------------------------------- #


class _ConvolutionOperation(IRDLOperation):
    """Shared operands and properties of conv2d and depthwise_conv2d."""

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    input_zp = operand_def(TensorType)
    weight_zp = operand_def(TensorType)
    output = result_def(TensorType)

    pad = prop_def(DenseArrayBase[I64])
    stride = prop_def(DenseArrayBase[I64])
    dilation = prop_def(DenseArrayBase[I64])
    acc_type = prop_def(TypeAttribute)
    local_bound = opt_prop_def(BoolAttr)

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def paddings(self) -> tuple[int, int, int, int]:
        """TOSA's order: (top, bottom, left, right)."""
        return _ints(self.pad, "pad", 4, 0)  # type: ignore[return-value]

    def strides(self) -> tuple[int, int]:
        return _ints(self.stride, "stride", 2, 1)  # type: ignore[return-value]

    def dilations(self) -> tuple[int, int]:
        return _ints(self.dilation, "dilation", 2, 1)  # type: ignore[return-value]

    def verify_types(self, out_channels: int) -> None:
        """Element types, zero points and bias; shared by both convolutions."""
        in_element, weight_element = _element(self.input), _element(self.weight)
        accumulator = _accumulator(in_element)
        if accumulator is not None:
            if self.acc_type != accumulator or _element(self.output) != accumulator:
                raise VerifyException(
                    f"{in_element} input needs acc_type {accumulator} and a {accumulator} result, "
                    f"got {self.acc_type} and {_element(self.output)}"
                )
            if weight_element != _I8:
                raise VerifyException(f"{in_element} input needs i8 weights, got {weight_element}")
        _zero_point(self.input_zp, in_element, "input_zp")
        _zero_point(self.weight_zp, weight_element, "weight_zp")
        if _shape(self.bias, "bias") not in ((out_channels,), (1,)):
            raise VerifyException(f"bias must have shape ({out_channels},) or (1,), got {_shape(self.bias, 'bias')}")


@irdl_op_definition
class Conv2DOp(_ConvolutionOperation):
    """2-D convolution, NHWC input and [O, KH, KW, I] weights.

    See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosaconv2d-mlirtosaconv2dop).
    """

    name = "tosa.conv2d"

    def verify_(self) -> None:
        in_shape, weight_shape, out_shape = (
            _shape(self.input, "input"),
            _shape(self.weight, "weight"),
            _shape(self.output, "output"),
        )
        if len(in_shape) != 4 or len(weight_shape) != 4 or len(out_shape) != 4:
            raise VerifyException("input, weight and output must be 4-D (NHWC, OHWI, NHWC)")
        if weight_shape[3] != in_shape[3]:
            raise VerifyException(f"weight input channels {weight_shape[3]} must equal input channels {in_shape[3]}")
        if (out_shape[0], out_shape[3]) != (in_shape[0], weight_shape[0]):
            expected = (in_shape[0], weight_shape[0])
            raise VerifyException(f"output batch and channels must be {expected}, got {(out_shape[0], out_shape[3])}")
        _check_window(in_shape, out_shape, weight_shape[1:3], self.strides(), self.dilations(), self.paddings())
        self.verify_types(out_shape[3])


@irdl_op_definition
class DepthwiseConv2DOp(_ConvolutionOperation):
    """Depthwise 2-D convolution, weights [KH, KW, C, M]: output channel c*M + m reads input channel c.

    See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosadepthwise_conv2d-mlirtosadepthwiseconv2dop).
    """

    name = "tosa.depthwise_conv2d"

    def verify_(self) -> None:
        in_shape, weight_shape, out_shape = (
            _shape(self.input, "input"),
            _shape(self.weight, "weight"),
            _shape(self.output, "output"),
        )
        if len(in_shape) != 4 or len(weight_shape) != 4 or len(out_shape) != 4:
            raise VerifyException("input, weight and output must be 4-D (NHWC, HWCM, NHWC)")
        if weight_shape[2] != in_shape[3]:
            raise VerifyException(f"weight channels {weight_shape[2]} must equal input channels {in_shape[3]}")
        channels = weight_shape[2] * weight_shape[3]
        if (out_shape[0], out_shape[3]) != (in_shape[0], channels):
            raise VerifyException(
                f"output batch and channels must be {(in_shape[0], channels)}, got {(out_shape[0], out_shape[3])}"
            )
        _check_window(in_shape, out_shape, weight_shape[0:2], self.strides(), self.dilations(), self.paddings())
        self.verify_types(channels)


@irdl_op_definition
class MaxPool2DOp(IRDLOperation):
    """2-D max pooling over NHWC. See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosamax_pool2d-mlirtosamaxpool2dop)."""

    name = "tosa.max_pool2d"

    T: ClassVar[VarConstraint] = VarConstraint("T", AnyAttr())
    input = operand_def(TensorType.constr(T))
    output = result_def(TensorType.constr(T))
    kernel = prop_def(DenseArrayBase[I64])
    stride = prop_def(DenseArrayBase[I64])
    pad = prop_def(DenseArrayBase[I64])
    nan_mode = opt_prop_def(NanModeAttr, default_value=NanModeAttr(NanMode.PROPAGATE))

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def paddings(self) -> tuple[int, int, int, int]:
        """TOSA's order: (top, bottom, left, right)."""
        return _ints(self.pad, "pad", 4, 0)  # type: ignore[return-value]

    def verify_(self) -> None:
        in_shape, out_shape = _shape(self.input, "input"), _shape(self.output, "output")
        if len(in_shape) != 4 or len(out_shape) != 4:
            raise VerifyException("input and output must be 4-D NHWC")
        if (out_shape[0], out_shape[3]) != (in_shape[0], in_shape[3]):
            raise VerifyException(f"pooling keeps batch and channels: input {in_shape}, output {out_shape}")
        kernel = _ints(self.kernel, "kernel", 2, 1)
        _check_window(in_shape, out_shape, kernel, _ints(self.stride, "stride", 2, 1), (1, 1), self.paddings())


# --------------------------------------------------------------------------- #
# Reductions and data layout
# --------------------------------------------------------------------------- #


@irdl_op_definition
class ReduceSumOp(IRDLOperation):
    """Sum along `axis`, which is kept with extent 1.

    See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosareduce_sum-mlirtosareducesumop).
    """

    name = "tosa.reduce_sum"

    input = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I32])
    output = result_def(TensorType)

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        in_shape = _shape(self.input, "input")
        axis = self.axis.value.data
        if not 0 <= axis < len(in_shape):
            raise VerifyException(f"axis {axis} out of range for rank {len(in_shape)}")
        expected = tuple(1 if i == axis else d for i, d in enumerate(in_shape))
        if _shape(self.output, "output") != expected:
            raise VerifyException(f"output shape must be {expected}, got {_shape(self.output, 'output')}")
        if _element(self.output) != _element(self.input):
            raise VerifyException("reduce_sum keeps the element type")


def _volume(shape: Sequence[int]) -> int:
    volume = 1
    for extent in shape:
        volume *= extent
    return volume


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """Reshape keeping the element order. See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosareshape-mlirtosareshapeop)."""

    name = "tosa.reshape"

    input1 = operand_def(TensorType)
    shape = operand_def(ShapeType)
    output = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        in_shape, out_shape = _shape(self.input1, "input1"), _shape(self.output, "output")
        if _volume(in_shape) != _volume(out_shape):
            raise VerifyException(f"reshape must keep the element count: {in_shape} to {out_shape}")
        target = _shape_operand(self.shape, "shape", len(out_shape))
        if target is not None and target != out_shape:
            raise VerifyException(f"shape operand {list(target)} differs from the output shape {out_shape}")
        if _element(self.output) != _element(self.input1):
            raise VerifyException("reshape keeps the element type")


@irdl_op_definition
class SliceOp(IRDLOperation):
    """The box [start, start + size) of a tensor. See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosaslice-mlirtosasliceop)."""

    name = "tosa.slice"

    input1 = operand_def(TensorType)
    start = operand_def(ShapeType)
    size = operand_def(ShapeType)
    output = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        in_shape, out_shape = _shape(self.input1, "input1"), _shape(self.output, "output")
        if len(out_shape) != len(in_shape):
            raise VerifyException(f"slice keeps the rank: input {in_shape}, output {out_shape}")
        start = _shape_operand(self.start, "start", len(in_shape))
        size = _shape_operand(self.size, "size", len(in_shape))
        if size is not None and size != out_shape:
            raise VerifyException(f"size {list(size)} differs from the output shape {out_shape}")
        if start is not None and any(b < 0 or b + s > d for b, s, d in zip(start, out_shape, in_shape, strict=True)):
            raise VerifyException(f"slice at {list(start)} of size {list(out_shape)} exceeds the input {in_shape}")
        if _element(self.output) != _element(self.input1):
            raise VerifyException("slice keeps the element type")


@irdl_op_definition
class PadOp(IRDLOperation):
    """Constant padding; `padding` is (before, after) per axis. See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosapad-mlirtosapadop)."""

    name = "tosa.pad"

    input1 = operand_def(TensorType)
    padding = operand_def(ShapeType)
    pad_const = operand_def(TensorType)
    output = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        in_shape, out_shape = _shape(self.input1, "input1"), _shape(self.output, "output")
        if len(out_shape) != len(in_shape):
            raise VerifyException(f"pad keeps the rank: input {in_shape}, output {out_shape}")
        padding = _shape_operand(self.padding, "padding", 2 * len(in_shape))
        if padding is not None:
            expected = tuple(d + padding[2 * i] + padding[2 * i + 1] for i, d in enumerate(in_shape))
            if out_shape != expected:
                raise VerifyException(f"output shape must be {expected}, got {out_shape}")
        _zero_point(self.pad_const, _element(self.input1), "pad_const")


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """Permutation of the axes: output axis i is input axis perms[i].

    See external [documentation](https://mlir.llvm.org/docs/Dialects/TOSA/#tosatranspose-mlirtosatransposeop).
    """

    name = "tosa.transpose"

    input1 = operand_def(TensorType)
    perms = prop_def(DenseArrayBase[I32])
    output = result_def(TensorType)

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        in_shape, out_shape = _shape(self.input1, "input1"), _shape(self.output, "output")
        perms = tuple(int(p) for p in self.perms.get_values())
        if sorted(perms) != list(range(len(in_shape))):
            raise VerifyException(f"perms {list(perms)} is not a permutation of {len(in_shape)} axes")
        expected = tuple(in_shape[p] for p in perms)
        if out_shape != expected:
            raise VerifyException(f"output shape must be {expected}, got {out_shape}")


# --------------------------------------------------------------------------- #
# The dialect
# --------------------------------------------------------------------------- #

_OWN_OPERATIONS: tuple[type[IRDLOperation], ...] = (
    ConstOp,
    ConstShapeOp,
    RescaleOp,
    ClampOp,
    Conv2DOp,
    DepthwiseConv2DOp,
    MaxPool2DOp,
    ReduceSumOp,
    ReshapeOp,
    SliceOp,
    PadOp,
    TransposeOp,
)
_REPLACED = {op.name for op in _OWN_OPERATIONS}

TOSA = Dialect(
    "tosa",
    [*(op for op in xdsl_tosa.TOSA.operations if op.name not in _REPLACED), *_OWN_OPERATIONS],
    [*xdsl_tosa.TOSA.attributes, ShapeType],
)
"""xDSL's `tosa` with the operations above added or replaced; register it under the name "tosa"."""
