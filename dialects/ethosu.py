"""The `ethosu` dialect: Arm Ethos-U NPU commands, one op per Vela external-API operation.

An `ethosu.command_stream` names the accelerator and holds the commands in execution order:
`ethosu.conv2d`, `ethosu.depthwise_conv2d`, `ethosu.pooling`, `ethosu.elementwise` and
`ethosu.dma`. Each command mirrors one `ethosu.vela.api.Npu*Operation` field by field;
`to_vela()` and `from_vela()` convert in both directions. Bytes are produced only by Vela
(`npu_generate_register_command_stream(command_stream.to_vela(), ...)`).

Conventions of the custom syntax:
* shapes, strides and block configs are `[height, width, depth]` (strides `[y, x, c]`, in
  bytes); kernels are `[height, width]` with `stride [y, x]` and `dilation [y, x]`;
* padding is `<top, left, bottom, right>` (the order of Vela's `NpuPadding`);
* address ranges are `<region, address, length>`; region 0x103 (Vela's SHRAM pseudo-region,
  a LUT DMA destination) prints as `shram`;
* a feature map held in one tile (`height_0 == height_1 == height`, `width_0 == width`,
  other tile addresses 0) prints `at <address>`, any other tile box prints
  `tiles [height_0, height_1, width_0 | address_0, address_1, address_2, address_3]`.

In generic form the ops carry their fields as properties, and attributes print as
`#ethosu.<name><...>` or `#ethosu<name value>`; upstream MLIR parses this with
`--allow-unregistered-dialect`. No xDSL-only builtin attribute (e.g. `#builtin.int`) is printed.

The verifiers accept only commands Vela's generator encodes for the stream's accelerator: block
configs its own SHRAM check accepts, memory ranges within the address space, sizes within the
16-bit registers, and the quantization it reads to scale the OFM.

`ethosu.vela.api` is imported on first use (it imports numpy), so loading the dialect is cheap;
verifying a command imports Vela's generator.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache, wraps
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypedDict, TypeVar

from typing_extensions import Unpack
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    FloatData,
    IntAttr,
    IntegerAttr,
    NoneAttr,
    StringAttr,
    UnitAttr,
    f64,
    i8,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SpacedOpaqueSyntaxAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, NoTerminator
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

if TYPE_CHECKING:
    from ethosu.vela import api as vela_api

# --------------------------------------------------------------------------- #
# Hardware limits (Vela 5.2.0)
# --------------------------------------------------------------------------- #

NUM_REGIONS = 8
"""Feature maps, weights and biases live in one of 8 base-pointer regions (0-7)."""

SHRAM_REGION = 0x103
"""Vela's `BASE_PTR_INDEX_MEM2MEM`: internal SHRAM, the destination of LUT DMAs."""

MAX_CORES = 2
"""One weight and one bias range per core; Ethos-U65-512 is the only 2-core configuration."""

STRIDE_RANGE = (1, 3)
"""`tflite_supported_operators.stride_range = (1, 3)`; Vela rewrites larger TFLite strides
before they reach the NPU."""

DILATION_RANGE = (1, 2)
"""NPU_SET_KERNEL_STRIDE has one dilation bit per axis (`generate_kernel`), and
`npu_encode_weights` accepts dilation 1 or 2."""

CONV_MAX_DILATED_HEIGHT = 64
"""`dilated_height_range = (1, 64)` for convolution-like ops (tflite_supported_operators)."""

CONV_MAX_DILATED_AREA = 64 * 64
"""`dilated_product_range = (1, 64 * 64)`: dilated kernel width times height."""

POOL_MAX_KERNEL_HEIGHT = 256
"""`filter_height_range = (1, 256)` for pooling."""

POOL_MAX_KERNEL_AREA = 256 * 256
"""`filter_product_range = (1, 256 * 256)`: pooling kernel width times height."""

FM_DIMENSION_MAX = 1 << 16
"""Feature-map heights, widths and depths are programmed minus one in the 16-bit parameter of
`NPU_SET_{IFM,IFM2,OFM}_*_M1`; Vela masks larger values to 16 bits without a word."""

ACCELERATORS: Mapping[str, str] = {
    "ethos-u55-32": "Ethos_U55_32",
    "ethos-u55-64": "Ethos_U55_64",
    "ethos-u55-128": "Ethos_U55_128",
    "ethos-u55-256": "Ethos_U55_256",
    "ethos-u65-256": "Ethos_U65_256",
    "ethos-u65-512": "Ethos_U65_512",
}
"""Accelerator names accepted by `ethosu.command_stream`, mapped to `NpuAccelerator` names."""


def cores(accelerator: str) -> int:
    """NPU cores of an accelerator: 2 on Ethos-U65-512, else 1. A kernel command has one weight
    range and one bias range per core."""
    return 2 if ACCELERATORS.get(accelerator, "").endswith("U65_512") else 1


def core_channels(first: int, depth: int, core: int, ncores: int) -> slice:
    """The output channels of `[first, first + depth)` core `core` computes: every `ncores`-th,
    from `first + core` (Vela's `core_deinterleave`: a two-core U65-512 splits each weight
    slice into the even and the odd channels)."""
    return slice(first + core, first + depth, ncores)


def core_block_depth(block_depth: int, core: int, ncores: int) -> int:
    """The share of an OFM block's depth core `core` computes (16 of a 32-deep block)."""
    return (block_depth + ncores - 1 - core) // ncores


def _vela() -> ModuleType:
    """Imports `ethosu.vela.api` on first use."""
    from ethosu.vela import api

    return api


@lru_cache(maxsize=len(ACCELERATORS))
def _vela_arch(accelerator: str) -> Any:
    """Vela's default `ArchitectureFeatures` of `accelerator`: what its register-stream
    generator checks commands against (address space, SHRAM, block configs)."""
    # Built there with stdout silenced (Vela prints configuration warnings on first use).
    from cascade.ethos_u.arch import vela_default_arch

    return vela_default_arch(accelerator)


def _address_limit(accelerator: str, region: int) -> int:
    """The largest end offset Vela's `check_mem_limits` accepts in `region`: the AXI address
    space (2^32 bytes on Ethos-U55, 2^40 on Ethos-U65), or the SHRAM size for region 0x103."""
    arch = _vela_arch(accelerator)
    return arch.shram_size_bytes if region == SHRAM_REGION else arch.max_address_offset


def _check_range_end(what: str, region: int, end: int, accelerator: str) -> None:
    if end <= (limit := _address_limit(accelerator, region)):
        return
    if region == SHRAM_REGION:
        raise VerifyException(f"{what} ends at byte {end:#x} of SHRAM, past the {accelerator} SHRAM ({limit:#x} bytes)")
    raise VerifyException(
        f"{what} ends at byte {end:#x} of region {region}, past the {accelerator} address space ({limit:#x} bytes)"
    )


_AttrT = TypeVar("_AttrT", bound=Attribute)
_VelaT = TypeVar("_VelaT")


def _shared_vela(build: Callable[[_AttrT], _VelaT]) -> Callable[[_AttrT], _VelaT]:
    """Makes an attribute's Vela conversion build its object once and return that one object
    on every call: attributes are immutable and the lowering interns them, so a stream of
    2,500 commands holds only a few hundred distinct feature maps, tiles and shapes. The
    shared object is read-only by convention (Vela's command stream generator only reads)."""
    key = f"_{build.__name__}"

    @wraps(build)
    def convert(self: _AttrT) -> _VelaT:
        cached = self.__dict__.get(key)
        if cached is None:
            cached = build(self)
            self.__dict__[key] = cached  # a frozen dataclass: bypass its __setattr__
        return cached

    return convert


# --------------------------------------------------------------------------- #
# Enums: member names equal the `ethosu.vela.api` member names, values are the syntax.
# --------------------------------------------------------------------------- #


class DataType(StrEnum):
    """Feature-map element type (`NpuDataType`)."""

    UINT8 = "u8"
    INT8 = "i8"
    UINT16 = "u16"
    INT16 = "i16"
    INT32 = "i32"

    @property
    def size_in_bytes(self) -> int:
        return int(self.value[1:]) // 8


class Layout(StrEnum):
    """Feature-map memory layout (`NpuLayout`)."""

    NHWC = "nhwc"
    NHCWB16 = "nhcwb16"


class RoundingMode(StrEnum):
    """OFM rounding (`NpuRoundingMode`)."""

    TFL = "tfl"
    TRUNCATE = "truncate"
    NATURAL = "natural"


class BlockTraversal(StrEnum):
    """Weight traversal order, which must match the weight encoding (`NpuBlockTraversal`)."""

    DEPTH_FIRST = "depth_first"
    PART_KERNEL_FIRST = "part_kernel_first"


class ResamplingMode(StrEnum):
    """IFM upscaling (`NpuResamplingMode`)."""

    NONE = "none"
    NEAREST = "nearest"
    TRANSPOSE = "transpose"


class AccumulatorType(StrEnum):
    """Accumulator precision (`NpuAccumulatorType`, whose member names are capitalized)."""

    Default = "default"
    Int32 = "int32"
    Int40 = "int40"


class PoolingKind(StrEnum):
    """Pooling operation (`NpuPoolingOp`)."""

    MAX = "max"
    AVERAGE = "average"
    REDUCE_SUM = "reduce_sum"


class ElementwiseKind(StrEnum):
    """Elementwise operation (`NpuElementWiseOp`)."""

    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    ABS = "abs"
    MIN = "min"
    MAX = "max"
    LRELU = "lrelu"
    CLZ = "clz"
    SHR = "shr"
    SHL = "shl"

    @property
    def is_unary(self) -> bool:
        """abs, lrelu and clz read only the IFM (Vela's `UNARY_ELEMWISE_OPS`)."""
        return self in (ElementwiseKind.ABS, ElementwiseKind.LRELU, ElementwiseKind.CLZ)


class ActivationKind(StrEnum):
    """Fused activation function (`NpuActivationOp`)."""

    NONE_OR_RELU = "none_or_relu"
    TANH = "tanh"
    SIGMOID = "sigmoid"
    TABLE_LOOKUP = "table_lookup"


_EnumT = TypeVar("_EnumT", bound=StrEnum)


@lru_cache(maxsize=256, typed=True)
def _enum_to_vela(value: StrEnum, vela_enum_name: str) -> Enum:
    """The member of `ethosu.vela.api.<vela_enum_name>` named like `value` (memoised: every
    command converts four or five enums)."""
    return getattr(_vela(), vela_enum_name)[value.name]


def _enum_from_vela(enum_type: type[_EnumT], vela_member: Enum) -> _EnumT:
    """The member of `enum_type` named like the Vela enum member."""
    return enum_type[vela_member.name]


# Enum attributes print as `#ethosu<name value>` standalone and as `value` inside op syntax.


@irdl_attr_definition
class DataTypeAttr(EnumAttribute[DataType], SpacedOpaqueSyntaxAttribute):
    """Element type: u8, i8, u16, i16 or i32."""

    name = "ethosu.data_type"


@irdl_attr_definition
class LayoutAttr(EnumAttribute[Layout], SpacedOpaqueSyntaxAttribute):
    """Feature-map layout: nhwc or nhcwb16."""

    name = "ethosu.layout"


@irdl_attr_definition
class RoundingModeAttr(EnumAttribute[RoundingMode], SpacedOpaqueSyntaxAttribute):
    """Rounding mode: tfl, truncate or natural."""

    name = "ethosu.rounding"


@irdl_attr_definition
class BlockTraversalAttr(EnumAttribute[BlockTraversal], SpacedOpaqueSyntaxAttribute):
    """Block traversal: depth_first or part_kernel_first."""

    name = "ethosu.traversal"


@irdl_attr_definition
class ResamplingModeAttr(EnumAttribute[ResamplingMode], SpacedOpaqueSyntaxAttribute):
    """IFM upscale mode: none, nearest or transpose."""

    name = "ethosu.upscale"


@irdl_attr_definition
class AccumulatorTypeAttr(EnumAttribute[AccumulatorType], SpacedOpaqueSyntaxAttribute):
    """Accumulator type: default, int32 or int40."""

    name = "ethosu.accumulator"


@irdl_attr_definition
class PoolingKindAttr(EnumAttribute[PoolingKind], SpacedOpaqueSyntaxAttribute):
    """Pooling kind: max, average or reduce_sum."""

    name = "ethosu.pooling_kind"


@irdl_attr_definition
class ElementwiseKindAttr(EnumAttribute[ElementwiseKind], SpacedOpaqueSyntaxAttribute):
    """Elementwise kind: add, sub, mul, abs, min, max, lrelu, clz, shr or shl."""

    name = "ethosu.elementwise_kind"


@irdl_attr_definition
class ActivationKindAttr(EnumAttribute[ActivationKind], SpacedOpaqueSyntaxAttribute):
    """Activation kind: none_or_relu, tanh, sigmoid or table_lookup."""

    name = "ethosu.activation_kind"


# --------------------------------------------------------------------------- #
# Shared parsing and printing helpers
# --------------------------------------------------------------------------- #


def _format_real(value: float) -> str:
    """The shortest MLIR float literal that parses back to exactly `value`."""
    text = repr(float(value))
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}e{exponent}" if exponent else mantissa


def _format_address(value: int) -> str:
    return hex(value) if value else "0"


def _join(values: Iterable[object]) -> str:
    return ", ".join(str(v) for v in values)


def _parse_real(parser: AttrParser) -> float:
    """Parses an integer or float literal as a float."""
    return float(parser.parse_number(context_msg=" (a real number)"))


def _parse_int(parser: AttrParser) -> int:
    return parser.parse_integer(allow_boolean=False)


def _parse_ints(parser: AttrParser, count: int) -> tuple[int, ...]:
    """Parses exactly `count` comma-separated integers (no delimiters)."""
    values = [_parse_int(parser)]
    for _ in range(count - 1):
        parser.parse_punctuation(",")
        values.append(_parse_int(parser))
    return tuple(values)


def _parse_int_list(parser: AttrParser, count: int) -> tuple[int, ...]:
    """Parses `[i_0, ..., i_{count-1}]`."""
    with parser.in_square_brackets():
        return _parse_ints(parser, count)


def _parse_fields(
    parser: AttrParser, what: str, field_parsers: Mapping[str, Callable[[], object]]
) -> dict[str, object]:
    """Parses `, keyword value` items, in any order, until no comma follows.

    Unknown and repeated keywords are parse errors.
    """
    fields: dict[str, object] = {}
    while parser.parse_optional_punctuation(",") is not None:
        start = parser.pos
        keyword = parser.parse_keyword_in(field_parsers, f" in {what}")
        if keyword in fields:
            parser.raise_error(f"'{keyword}' appears twice in {what}", start, parser.pos)
        fields[keyword] = field_parsers[keyword]()
    return fields


def _optional_float(value: float | None) -> FloatData | NoneAttr:
    return NoneAttr() if value is None else FloatData(float(value))


def _float_or_none(attr: FloatData | NoneAttr) -> float | None:
    return None if isinstance(attr, NoneAttr) else attr.data


def _check_finite(value: float | None, what: str) -> None:
    if value is not None and not math.isfinite(value):
        raise VerifyException(f"{what} must be finite, got {value}")


# --------------------------------------------------------------------------- #
# Integer-tuple attributes: shape, padding, address range, kernel, tile box
# --------------------------------------------------------------------------- #


def _int_field(index: int, doc: str) -> property:
    """A read-only int property: element `index` of an `_IntTupleAttr`."""

    def get(self: _IntTupleAttr) -> int:
        return self.as_tuple()[index]

    return property(get, doc=doc)


@lru_cache(maxsize=8192)
def _i64_array(values: tuple[int, ...]) -> DenseArrayBase[I64]:
    """An immutable i64 array, shared between equal tuples: a lowering builds tens of thousands
    of shapes, tiles and kernels, mostly repeats, and each new array is verified anew."""
    return DenseArrayBase.from_list(i64, values)


@dataclass(frozen=True, init=False)
class _IntTupleAttr(ParametrizedAttribute):
    """Base of attributes that are a fixed-length tuple of integers, stored as one i64 array.

    Subclasses name the elements in `FIELDS` and expose them as int properties; the default
    syntax is `<v_0, ..., v_n>`.
    """

    FIELDS: ClassVar[tuple[str, ...]]

    # A dataclass field of this base, so that equality and hashing compare the values.
    values: DenseArrayBase[I64]

    def __init__(self, *values: int):
        super().__init__(_i64_array(tuple(int(v) for v in values)))

    @classmethod
    def interned(cls, *values: int) -> Self:
        """`cls` of `values` (in `FIELDS` order), one shared attribute per distinct value: the
        lowering builds tens of thousands of tiles, paddings and address ranges, mostly
        repeats, and building one costs a verification. Raises what `cls(...)` raises."""
        return _interned_int_tuple(cls, tuple(int(v) for v in values))  # type: ignore[return-value]

    def as_tuple(self) -> tuple[int, ...]:
        # Unpacking the i64 array costs a struct call; the lowering asks millions of times.
        cached = self.__dict__.get("_as_tuple")
        if cached is None:
            cached = self.values.get_values()
            self.__dict__["_as_tuple"] = cached  # a frozen dataclass: bypass its __setattr__
        return cached

    def verify(self) -> None:
        if len(self.values) != len(self.FIELDS):
            raise VerifyException(
                f"{self.name} needs {len(self.FIELDS)} values ({_join(self.FIELDS)}), got {len(self.values)}"
            )

    def _verify_non_negative(self, what: str) -> None:
        if min(self.as_tuple()) < 0:
            raise VerifyException(f"{what} must be non-negative, got {list(self.as_tuple())}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return cls(*_parse_ints(parser, len(cls.FIELDS))).parameters

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{_join(self.as_tuple())}>")


@lru_cache(maxsize=4096)
def _interned_int_tuple(cls: type[_IntTupleAttr], values: tuple[int, ...]) -> _IntTupleAttr:
    # `new` sets the one parameter and verifies, exactly as `_IntTupleAttr.__init__` does;
    # a value that does not verify raises every time (lru_cache keeps no exceptions).
    return cls.new((_i64_array(values),))


@irdl_attr_definition
class Shape3DAttr(_IntTupleAttr):
    """A `[height, width, depth]` triple (`NpuShape3D`): a feature-map shape, its byte strides
    `[y, x, c]`, or a block config. Syntax: `#ethosu.shape<8, 16, 8>`."""

    name = "ethosu.shape"
    FIELDS = ("height", "width", "depth")

    height = _int_field(0, "Height (rows), or the y stride in bytes.")
    width = _int_field(1, "Width (columns), or the x stride in bytes.")
    depth = _int_field(2, "Depth (channels), or the c stride in bytes.")

    def __init__(self, height: int, width: int, depth: int):
        super().__init__(height, width, depth)

    def verify(self) -> None:
        super().verify()
        self._verify_non_negative("shape")

    @_shared_vela
    def to_vela(self) -> vela_api.NpuShape3D:
        return _vela().NpuShape3D(self.height, self.width, self.depth)

    @classmethod
    def from_vela(cls, shape: vela_api.NpuShape3D) -> Shape3DAttr:
        return cls(shape.height, shape.width, shape.depth)


def _shape(value: Shape3DAttr | Sequence[int]) -> Shape3DAttr:
    return value if isinstance(value, Shape3DAttr) else _interned_shape(*(int(v) for v in value))


@lru_cache(maxsize=8192)
def _interned_shape(height: int, width: int, depth: int) -> Shape3DAttr:
    """One (immutable) attribute per shape: a lowered network repeats a few hundred shapes in
    tens of thousands of feature maps, and building an attribute is not cheap."""
    return Shape3DAttr(height, width, depth)


@irdl_attr_definition
class PaddingAttr(_IntTupleAttr):
    """Explicit IFM padding `<top, left, bottom, right>` (`NpuPadding`)."""

    name = "ethosu.padding"
    FIELDS = ("top", "left", "bottom", "right")

    top = _int_field(0, "Rows of padding above the IFM.")
    left = _int_field(1, "Columns of padding left of the IFM.")
    bottom = _int_field(2, "Rows of padding below the IFM.")
    right = _int_field(3, "Columns of padding right of the IFM.")

    def __init__(self, top: int, left: int, bottom: int, right: int):
        super().__init__(top, left, bottom, right)

    def verify(self) -> None:
        super().verify()
        self._verify_non_negative("padding")

    @_shared_vela
    def to_vela(self) -> vela_api.NpuPadding:
        return _vela().NpuPadding(self.top, self.left, self.bottom, self.right)

    @classmethod
    def from_vela(cls, padding: vela_api.NpuPadding) -> PaddingAttr:
        return cls(padding.top, padding.left, padding.bottom, padding.right)


@irdl_attr_definition
class AddressRangeAttr(_IntTupleAttr):
    """A byte range in a base-pointer region (`NpuAddressRange`).

    Syntax: `#ethosu.address_range<0, 0x40, 928>` (region, address, length); region 0x103
    (Vela's SHRAM pseudo-region) prints as `shram`.
    """

    name = "ethosu.address_range"
    FIELDS = ("region", "address", "length")

    region = _int_field(0, "Base-pointer index: 0-7, or 0x103 for SHRAM.")
    address = _int_field(1, "Byte offset from the region base.")
    length = _int_field(2, "Length in bytes.")

    def __init__(self, region: int, address: int, length: int):
        super().__init__(region, address, length)

    def verify(self) -> None:
        super().verify()
        if not (0 <= self.region < NUM_REGIONS or self.region == SHRAM_REGION):
            raise VerifyException(f"address range region must be 0-7 (or 0x103 for SHRAM), got {self.region}")
        if self.address < 0 or self.length < 0:
            raise VerifyException(
                f"address range address and length must be non-negative, got {self.address} and {self.length}"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shram = parser.parse_optional_keyword("shram") is not None
            region = SHRAM_REGION if shram else _parse_int(parser)
            parser.parse_punctuation(",")
            return cls(region, *_parse_ints(parser, 2)).parameters

    def print_parameters(self, printer: Printer) -> None:
        region = "shram" if self.region == SHRAM_REGION else str(self.region)
        printer.print_string(f"<{region}, {_format_address(self.address)}, {self.length}>")

    @_shared_vela
    def to_vela(self) -> vela_api.NpuAddressRange:
        return _vela().NpuAddressRange(self.region, self.address, self.length)

    @classmethod
    def from_vela(cls, address_range: vela_api.NpuAddressRange) -> AddressRangeAttr:
        return cls(address_range.region, address_range.address, address_range.length)


@irdl_attr_definition
class KernelAttr(_IntTupleAttr):
    """Kernel size, stride and dilation (`NpuKernel`).

    Syntax: `#ethosu.kernel<[3, 3], stride [2, 2], dilation [1, 1]>` (height, width; stride
    and dilation are `[y, x]` and omitted when 1). Size limits depend on the op.
    """

    name = "ethosu.kernel"
    FIELDS = ("height", "width", "stride_y", "stride_x", "dilation_y", "dilation_x")

    height = _int_field(0, "Kernel height.")
    width = _int_field(1, "Kernel width.")
    stride_y = _int_field(2, "Vertical stride.")
    stride_x = _int_field(3, "Horizontal stride.")
    dilation_y = _int_field(4, "Vertical dilation.")
    dilation_x = _int_field(5, "Horizontal dilation.")

    def __init__(
        self,
        height: int,
        width: int,
        stride_y: int = 1,
        stride_x: int = 1,
        dilation_y: int = 1,
        dilation_x: int = 1,
    ):
        super().__init__(height, width, stride_y, stride_x, dilation_y, dilation_x)

    @property
    def dilated_height(self) -> int:
        return (self.height - 1) * self.dilation_y + 1

    @property
    def dilated_width(self) -> int:
        return (self.width - 1) * self.dilation_x + 1

    def verify(self) -> None:
        super().verify()
        if self.height < 1 or self.width < 1:
            raise VerifyException(f"kernel size must be positive, got [{self.height}, {self.width}]")
        for what, (y, x), (low, high) in (
            ("stride", (self.stride_y, self.stride_x), STRIDE_RANGE),
            ("dilation", (self.dilation_y, self.dilation_x), DILATION_RANGE),
        ):
            if not (low <= y <= high and low <= x <= high):
                raise VerifyException(f"kernel {what} must be in [{low}, {high}], got [{y}, {x}]")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            size = _parse_int_list(parser, 2)
            fields = _parse_fields(
                parser,
                "kernel",
                {
                    "stride": lambda: _parse_int_list(parser, 2),
                    "dilation": lambda: _parse_int_list(parser, 2),
                },
            )
        stride, dilation = fields.get("stride", (1, 1)), fields.get("dilation", (1, 1))
        return cls(*size, *stride, *dilation).parameters  # type: ignore[misc]

    def print_parameters(self, printer: Printer) -> None:
        text = f"[{self.height}, {self.width}]"
        if (self.stride_y, self.stride_x) != (1, 1):
            text += f", stride [{self.stride_y}, {self.stride_x}]"
        if (self.dilation_y, self.dilation_x) != (1, 1):
            text += f", dilation [{self.dilation_y}, {self.dilation_x}]"
        printer.print_string(f"<{text}>")

    @_shared_vela
    def to_vela(self) -> vela_api.NpuKernel:
        return _vela().NpuKernel(
            self.width, self.height, self.stride_x, self.stride_y, self.dilation_x, self.dilation_y
        )

    @classmethod
    def from_vela(cls, kernel: vela_api.NpuKernel) -> KernelAttr:
        return cls(
            kernel.height,
            kernel.width,
            kernel.stride_y,
            kernel.stride_x,
            kernel.dilation_y,
            kernel.dilation_x,
        )


@irdl_attr_definition
class TileBoxAttr(_IntTupleAttr):
    """The 1-4 tiles of a feature map (`NpuTileBox`), the rolling-buffer wrap mechanism.

    Tile 0 is top-left. Tile 1 (top-right) starts at x = width_0 and is height_1 rows high,
    tile 3 (bottom-right) lies below it. Tile 2 (bottom-left) starts at y = height_0.
    Syntax: `#ethosu.tiles<height_0, height_1, width_0 | address_0, ..., address_3>`.
    `FeatureMapAttr` checks the box against its shape.
    """

    name = "ethosu.tiles"
    FIELDS = ("height_0", "height_1", "width_0", "address_0", "address_1", "address_2", "address_3")

    height_0 = _int_field(0, "Height of tile 0; tile 2 starts below it.")
    height_1 = _int_field(1, "Height of tile 1; tile 3 starts below it.")
    width_0 = _int_field(2, "Width of tiles 0 and 2.")

    def __init__(self, height_0: int, height_1: int, width_0: int, addresses: Sequence[int]):
        super().__init__(height_0, height_1, width_0, *addresses)

    @classmethod
    def single(cls, height: int, width: int, address: int) -> TileBoxAttr:
        """One tile covering a `height` x `width` feature map stored at `address`."""
        return cls(height, height, width, (address, 0, 0, 0))

    @property
    def addresses(self) -> tuple[int, int, int, int]:
        a0, a1, a2, a3 = self.as_tuple()[3:]
        return (a0, a1, a2, a3)

    def verify(self) -> None:
        super().verify()
        self._verify_non_negative("tile sizes and addresses")

    @classmethod
    def parse_body(cls, parser: AttrParser) -> TileBoxAttr:
        """Parses `height_0, height_1, width_0 | address_0, ..., address_3`."""
        sizes = _parse_ints(parser, 3)
        parser.parse_punctuation("|")
        return cls(*sizes, _parse_ints(parser, 4))  # type: ignore[misc]

    def body_text(self) -> str:
        sizes = _join(self.as_tuple()[:3])
        return f"{sizes} | {_join(_format_address(a) for a in self.addresses)}"

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return cls.parse_body(parser).parameters

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.body_text()}>")

    @_shared_vela
    def to_vela(self) -> vela_api.NpuTileBox:
        return _vela().NpuTileBox(self.height_0, self.height_1, self.width_0, list(self.addresses))

    @classmethod
    def from_vela(cls, tiles: vela_api.NpuTileBox) -> TileBoxAttr:
        return cls(tiles.height_0, tiles.height_1, tiles.width_0, tiles.addresses)


# --------------------------------------------------------------------------- #
# Quantization, activation, scalar
# --------------------------------------------------------------------------- #


@irdl_attr_definition
class QuantizationAttr(ParametrizedAttribute):
    """Optional scale and zero point (`NpuQuantization`).

    Syntax: `#ethosu.quant<0.5:-3>`, or `#ethosu.quant<none:-3>` without a scale.
    """

    name = "ethosu.quant"

    scale: FloatData | NoneAttr
    zero_point: IntAttr

    def __init__(self, scale: float | None, zero_point: int):
        super().__init__(_optional_float(scale), IntAttr(int(zero_point)))

    @property
    def scale_value(self) -> float | None:
        return _float_or_none(self.scale)

    def verify(self) -> None:
        _check_finite(self.scale_value, "quantization scale")

    @classmethod
    def parse_body(cls, parser: AttrParser) -> QuantizationAttr:
        """Parses `scale:zero_point`, where the scale may be `none`."""
        scale = None if parser.parse_optional_keyword("none") else _parse_real(parser)
        parser.parse_punctuation(":")
        return cls(scale, _parse_int(parser))

    def body_text(self) -> str:
        scale = "none" if self.scale_value is None else _format_real(self.scale_value)
        return f"{scale}:{self.zero_point.data}"

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return cls.parse_body(parser).parameters

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.body_text()}>")

    @_shared_vela
    def to_vela(self) -> vela_api.NpuQuantization:
        return _vela().NpuQuantization(self.scale_value, self.zero_point.data)

    @classmethod
    def from_vela(cls, quant: vela_api.NpuQuantization) -> QuantizationAttr:
        scale = None if quant.scale_f32 is None else float(quant.scale_f32)
        return cls(scale, int(quant.zero_point))


QuantizationLike = QuantizationAttr | tuple[float | None, int] | None
"""A QuantizationAttr, a `(scale, zero_point)` pair, or None for no quantization."""


def _quant_param(quant: QuantizationLike) -> QuantizationAttr | NoneAttr:
    if quant is None:
        return NoneAttr()
    return quant if isinstance(quant, QuantizationAttr) else QuantizationAttr(*quant)


def _quant_or_none(attr: QuantizationAttr | NoneAttr) -> QuantizationAttr | None:
    return None if isinstance(attr, NoneAttr) else attr


def _quant_from_vela(quant: vela_api.NpuQuantization | None) -> QuantizationAttr | None:
    return None if quant is None else QuantizationAttr.from_vela(quant)


@irdl_attr_definition
class ActivationAttr(ParametrizedAttribute):
    """Fused activation (`NpuActivation`): kind, optional clamp `min`/`max` in the real
    (dequantized OFM) domain, and the LUT index 0-7 of a table_lookup.

    Syntax: `#ethosu.activation<none_or_relu, min 0.0, max 6.0>`,
    `#ethosu.activation<table_lookup, index 2>`.
    """

    name = "ethosu.activation"

    kind: ActivationKindAttr
    lookup_table_index: IntAttr
    min: FloatData | NoneAttr
    max: FloatData | NoneAttr

    def __init__(
        self,
        kind: ActivationKind,
        min: float | None = None,
        max: float | None = None,
        lookup_table_index: int = 0,
    ):
        super().__init__(
            ActivationKindAttr(kind),
            IntAttr(int(lookup_table_index)),
            _optional_float(min),
            _optional_float(max),
        )

    @property
    def min_value(self) -> float | None:
        return _float_or_none(self.min)

    @property
    def max_value(self) -> float | None:
        return _float_or_none(self.max)

    def verify(self) -> None:
        low, high = self.min_value, self.max_value
        _check_finite(low, "activation min")
        _check_finite(high, "activation max")
        if low is not None and high is not None and low > high:
            raise VerifyException(f"activation min ({low}) must not exceed max ({high})")
        index = self.lookup_table_index.data
        if self.kind.data != ActivationKind.TABLE_LOOKUP and index != 0:
            raise VerifyException("lookup table index only applies to table_lookup")
        if not 0 <= index < 8:
            raise VerifyException(f"lookup table index must be 0-7, got {index}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            kind = parser.parse_str_enum(ActivationKind)
            fields = _parse_fields(
                parser,
                "activation",
                {
                    "index": lambda: _parse_int(parser),
                    "min": lambda: _parse_real(parser),
                    "max": lambda: _parse_real(parser),
                },
            )
        index = fields.get("index", 0)
        return cls(kind, fields.get("min"), fields.get("max"), index).parameters  # type: ignore[arg-type]

    def print_parameters(self, printer: Printer) -> None:
        parts = [self.kind.data.value]
        if self.kind.data == ActivationKind.TABLE_LOOKUP:
            parts.append(f"index {self.lookup_table_index.data}")
        if self.min_value is not None:
            parts.append(f"min {_format_real(self.min_value)}")
        if self.max_value is not None:
            parts.append(f"max {_format_real(self.max_value)}")
        printer.print_string(f"<{_join(parts)}>")

    @_shared_vela
    def to_vela(self) -> vela_api.NpuActivation:
        activation = _vela().NpuActivation(_enum_to_vela(self.kind.data, "NpuActivationOp"))
        activation.min = self.min_value
        activation.max = self.max_value
        activation.lookup_table_index = self.lookup_table_index.data
        return activation

    @classmethod
    def from_vela(cls, activation: vela_api.NpuActivation) -> ActivationAttr:
        """The LUT index is kept only for table_lookup (Vela ignores it otherwise)."""
        kind = _enum_from_vela(ActivationKind, activation.op_type)
        index = activation.lookup_table_index if kind == ActivationKind.TABLE_LOOKUP else 0
        low = None if activation.min is None else float(activation.min)
        high = None if activation.max is None else float(activation.max)
        return cls(kind, low, high, int(index))


@irdl_attr_definition
class ScalarAttr(ParametrizedAttribute):
    """The scalar second operand of a binary elementwise op: Vela's `ifm2_scalar` (a real
    value, quantized with the IFM2 quantization by Vela) with the IFM2 data type and
    quantization. Syntax: `#ethosu.scalar<2.5, i8, quant 0.5:-3>`."""

    name = "ethosu.scalar"

    value: FloatData
    data_type: DataTypeAttr
    quantization: QuantizationAttr | NoneAttr

    def __init__(self, value: float, data_type: DataType, quantization: QuantizationLike = None):
        super().__init__(FloatData(float(value)), DataTypeAttr(data_type), _quant_param(quantization))

    def verify(self) -> None:
        _check_finite(self.value.data, "scalar value")

    def verify_quantizable(self) -> None:
        """The value quantized as Vela's generator does (`quantise`) must fit the data type:
        it asserts so before programming `NPU_SET_IFM2_SCALAR`."""
        from ethosu.vela.register_command_stream_util import quantise

        fm = self.to_vela_feature_map()
        low, high = fm.data_type.min_value(), fm.data_type.max_value()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's division by a zero scale
            try:
                quantized = quantise(self.value.data, fm.quantization)
            except (OverflowError, ValueError):  # an infinite or NaN quotient
                quantized = None
        if quantized is None or not low <= quantized <= high:
            raise VerifyException(
                f"scalar {self.value.data} quantizes outside the {self.data_type.data.value} range [{low}, {high}]"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            value = _parse_real(parser)
            parser.parse_punctuation(",")
            data_type = parser.parse_str_enum(DataType)
            fields = _parse_fields(parser, "scalar", {"quant": lambda: QuantizationAttr.parse_body(parser)})
        return cls(value, data_type, fields.get("quant")).parameters  # type: ignore[arg-type]

    def print_parameters(self, printer: Printer) -> None:
        text = f"{_format_real(self.value.data)}, {self.data_type.data.value}"
        if (quant := _quant_or_none(self.quantization)) is not None:
            text += f", quant {quant.body_text()}"
        printer.print_string(f"<{text}>")

    @_shared_vela
    def to_vela_feature_map(self) -> vela_api.NpuFeatureMap:
        """The IFM2 that Vela expects beside `ifm2_scalar`. Vela reads only its data type and
        quantization; the rest stays at the `NpuFeatureMap()` defaults (NHWC, region 0)."""
        fm = _vela().NpuFeatureMap()
        fm.data_type = _enum_to_vela(self.data_type.data, "NpuDataType")
        quant = _quant_or_none(self.quantization)
        fm.quantization = None if quant is None else quant.to_vela()
        return fm

    @classmethod
    def from_vela(cls, value: float, ifm2: vela_api.NpuFeatureMap) -> ScalarAttr:
        quant = _quant_from_vela(getattr(ifm2, "quantization", None))
        return cls(float(value), _enum_from_vela(DataType, ifm2.data_type), quant)


# --------------------------------------------------------------------------- #
# Feature map
# --------------------------------------------------------------------------- #


@irdl_attr_definition
class FeatureMapAttr(ParametrizedAttribute):
    """An IFM, IFM2 or OFM (`NpuFeatureMap`): element type, region, the shape of this stripe,
    its tiles, optional byte strides, layout, optional quantization and debug name.

    Syntax: `#ethosu.fm<i8, region 1, shape [16, 16, 8], at 0x100, layout nhwc, quant 0.5:-3>`,
    with optional `strides [y, x, c]` and `name "..."`, and `tiles [...]` instead of `at`
    when the feature map is split into several tiles.
    """

    name = "ethosu.fm"

    data_type: DataTypeAttr
    region: IntAttr
    shape: Shape3DAttr
    tiles: TileBoxAttr
    strides: Shape3DAttr | NoneAttr
    layout: LayoutAttr
    quantization: QuantizationAttr | NoneAttr
    debug_name: StringAttr | NoneAttr

    def __init__(
        self,
        data_type: DataType,
        region: int,
        shape: Shape3DAttr | Sequence[int],
        tiles: TileBoxAttr | int,
        layout: Layout = Layout.NHWC,
        quantization: QuantizationLike = None,
        strides: Shape3DAttr | Sequence[int] | None = None,
        debug_name: str | None = None,
    ):
        """`tiles` may be a plain address: one tile covering the whole feature map."""
        shape = _shape(shape)
        if not isinstance(tiles, TileBoxAttr):
            tiles = TileBoxAttr.single(shape.height, shape.width, tiles)
        super().__init__(
            DataTypeAttr(data_type),
            IntAttr(int(region)),
            shape,
            tiles,
            NoneAttr() if strides is None else _shape(strides),
            LayoutAttr(layout),
            _quant_param(quantization),
            NoneAttr() if debug_name is None else StringAttr(debug_name),
        )

    @property
    def element_size(self) -> int:
        """Bytes per element."""
        return self.data_type.data.size_in_bytes

    @property
    def quantization_or_none(self) -> QuantizationAttr | None:
        return _quant_or_none(self.quantization)

    @property
    def strides_or_none(self) -> Shape3DAttr | None:
        return None if isinstance(self.strides, NoneAttr) else self.strides

    @property
    def debug_name_or_none(self) -> str | None:
        return None if isinstance(self.debug_name, NoneAttr) else self.debug_name.data

    @property
    def is_single_tile(self) -> bool:
        """Tile 0 covers the whole feature map and the other tile addresses are 0."""
        tiles, shape = self.tiles, self.shape
        sizes = (tiles.height_0, tiles.height_1, tiles.width_0)
        return sizes == (shape.height, shape.height, shape.width) and tiles.addresses[1:] == (
            0,
            0,
            0,
        )

    def verify(self) -> None:
        region = self.region.data
        if not 0 <= region < NUM_REGIONS:
            raise VerifyException(f"feature map region must be 0-7, got {region}")
        if min(self.shape.as_tuple()) < 1:
            raise VerifyException(f"feature map shape must be positive, got {list(self.shape.as_tuple())}")
        self._verify_tiles()
        self._verify_alignment()

    def _verify_tiles(self) -> None:
        """Tile sizes against the shape, following Vela's `get_address` tile selection."""
        tiles, height, width = self.tiles, self.shape.height, self.shape.width
        if not 1 <= tiles.height_0 <= height:
            raise VerifyException(f"tile height_0 ({tiles.height_0}) must be in [1, {height}]")
        if not 1 <= tiles.width_0 <= width:
            raise VerifyException(f"tile width_0 ({tiles.width_0}) must be in [1, {width}]")
        if tiles.height_1 > height:
            raise VerifyException(f"tile height_1 ({tiles.height_1}) must not exceed {height}")
        if tiles.width_0 < width and tiles.height_1 < 1:
            raise VerifyException("tile height_1 must be at least 1 when tile 1 is used")
        if tiles.width_0 == width and tiles.height_1 not in (0, tiles.height_0):
            raise VerifyException(f"tile height_1 ({tiles.height_1}) must be 0 or height_0 when tile 1 is unused")

    def _verify_alignment(self) -> None:
        """The alignment `check_addresses`/`check_strides` enforce in Vela's generator."""
        layout = self.layout.data
        required = 16 if layout == Layout.NHCWB16 else self.element_size
        for index, address in enumerate(self.tiles.addresses):
            if address % required:
                raise VerifyException(
                    f"{layout.value} tile address {index} ({_format_address(address)}) must be a multiple of {required}"
                )
        if (strides := self.strides_or_none) is None:
            return
        if layout == Layout.NHCWB16:
            checked = {"c": strides.depth, "y": strides.height}
        else:
            checked = {"y": strides.height, "x": strides.width}
        for axis, stride in checked.items():
            if stride % required:
                raise VerifyException(f"{layout.value} {axis} stride ({stride}) must be a multiple of {required}")

    @property
    def end_address(self) -> int:
        """One past the last byte any of its tiles covers: the end of the ranges Vela's
        `get_address_ranges` gives, which its generator checks against the region size."""
        cached = self.__dict__.get("_end_address")
        if cached is None:
            from ethosu.vela.register_command_stream_util import get_address_ranges

            ranges = [r for r in get_address_ranges(self.to_vela()) if r is not None]
            cached = max(r.address + r.length for r in ranges)
            self.__dict__["_end_address"] = cached  # a frozen dataclass: bypass its __setattr__
        return cached

    def verify_encodable(self, what: str, accelerator: str) -> None:
        """What the command's registers cannot hold on `accelerator`: tiles past the address
        space of the region, strides beyond it, dimensions wider than the 16-bit registers."""
        _check_range_end(what, self.region.data, self.end_address, accelerator)
        limit = _address_limit(accelerator, self.region.data)
        if (strides := self.strides_or_none) is not None and max(strides.as_tuple()) >= limit:
            raise VerifyException(f"{what} strides {list(strides.as_tuple())} exceed the {limit:#x}-byte address space")
        if max(self.shape.as_tuple()) > FM_DIMENSION_MAX:
            raise VerifyException(
                f"{what} shape {list(self.shape.as_tuple())} exceeds {FM_DIMENSION_MAX} in a dimension "
                "(the NPU's 16-bit size registers)"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            data_type = parser.parse_str_enum(DataType)
            fields = _parse_fields(
                parser,
                "feature map",
                {
                    "region": lambda: _parse_int(parser),
                    "shape": lambda: _parse_int_list(parser, 3),
                    "at": lambda: _parse_int(parser),
                    "tiles": lambda: cls._parse_tiles(parser),
                    "strides": lambda: _parse_int_list(parser, 3),
                    "layout": lambda: parser.parse_str_enum(Layout),
                    "quant": lambda: QuantizationAttr.parse_body(parser),
                    "name": lambda: parser.parse_str_literal(),
                },
            )
        if missing := [k for k in ("region", "shape", "layout") if k not in fields]:
            parser.raise_error(f"feature map requires {_join(repr(k) for k in missing)}")
        if ("at" in fields) == ("tiles" in fields):
            parser.raise_error("feature map requires exactly one of 'at' and 'tiles'")
        fm = cls(
            data_type,
            fields["region"],  # type: ignore[arg-type]
            fields["shape"],  # type: ignore[arg-type]
            fields.get("tiles", fields.get("at")),  # type: ignore[arg-type]
            fields["layout"],  # type: ignore[arg-type]
            fields.get("quant"),  # type: ignore[arg-type]
            fields.get("strides"),  # type: ignore[arg-type]
            fields.get("name"),  # type: ignore[arg-type]
        )
        return fm.parameters

    @staticmethod
    def _parse_tiles(parser: AttrParser) -> TileBoxAttr:
        with parser.in_square_brackets():
            return TileBoxAttr.parse_body(parser)

    def print_parameters(self, printer: Printer) -> None:
        tiles = self.tiles
        parts = [
            self.data_type.data.value,
            f"region {self.region.data}",
            f"shape [{_join(self.shape.as_tuple())}]",
            f"at {_format_address(tiles.addresses[0])}" if self.is_single_tile else f"tiles [{tiles.body_text()}]",
        ]
        if (strides := self.strides_or_none) is not None:
            parts.append(f"strides [{_join(strides.as_tuple())}]")
        parts.append(f"layout {self.layout.data.value}")
        if (quant := self.quantization_or_none) is not None:
            parts.append(f"quant {quant.body_text()}")
        printer.print_string(f"<{_join(parts)}")
        if (debug_name := self.debug_name_or_none) is not None:
            printer.print_string(", name ")
            printer.print_string_literal(debug_name)
        printer.print_string(">")

    @_shared_vela
    def to_vela(self) -> vela_api.NpuFeatureMap:
        fm = _vela().NpuFeatureMap()
        fm.data_type = _enum_to_vela(self.data_type.data, "NpuDataType")
        fm.region = self.region.data
        fm.shape = self.shape.to_vela()
        fm.tiles = self.tiles.to_vela()
        fm.quantization = None if (q := self.quantization_or_none) is None else q.to_vela()
        fm.layout = _enum_to_vela(self.layout.data, "NpuLayout")
        fm.strides = None if (s := self.strides_or_none) is None else s.to_vela()
        fm.name = self.debug_name_or_none
        return fm

    @classmethod
    def from_vela(cls, fm: vela_api.NpuFeatureMap) -> FeatureMapAttr:
        return cls(
            _enum_from_vela(DataType, fm.data_type),
            int(fm.region),
            Shape3DAttr.from_vela(fm.shape),
            TileBoxAttr.from_vela(fm.tiles),
            _enum_from_vela(Layout, fm.layout),
            # NpuFeatureMap() leaves `quantization` unset until assigned.
            _quant_from_vela(getattr(fm, "quantization", None)),
            None if fm.strides is None else Shape3DAttr.from_vela(fm.strides),
            fm.name,
        )


# --------------------------------------------------------------------------- #
# Operations
# --------------------------------------------------------------------------- #


FLASH_ATTR = "ethosu.flash"
"""Discardable attribute of an `ethosu.command_stream`: its region-0 image, `array<i8: ...>`."""


@irdl_op_definition
class CommandStreamOp(IRDLOperation):
    """The commands for one accelerator in execution order: the argument list of
    `npu_generate_register_command_stream(ops, NpuAccelerator.<accelerator>)`.

    `system_config` and `memory_mode` optionally name Vela's vela.ini sections.
    """

    name = "ethosu.command_stream"

    accelerator = prop_def(StringAttr)
    system_config = opt_prop_def(StringAttr)
    memory_mode = opt_prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(NoTerminator())

    def __init__(
        self,
        accelerator: str,
        commands: Iterable[Operation] | Region = (),
        system_config: str | None = None,
        memory_mode: str | None = None,
    ):
        """`commands` are the ops of the body, or the body region itself."""
        body = commands if isinstance(commands, Region) else Region(Block(commands))
        if not body.blocks:
            body.add_block(Block())
        super().__init__(
            regions=[body],
            properties={
                "accelerator": StringAttr(accelerator),
                "system_config": None if system_config is None else StringAttr(system_config),
                "memory_mode": None if memory_mode is None else StringAttr(memory_mode),
            },
        )

    def flash_image(self) -> bytes:
        """The bytes of region 0 the commands read (`ethosu.flash`: constants), b"" if unknown."""
        attr = self.attributes.get(FLASH_ATTR)
        if not isinstance(attr, DenseArrayBase):
            return b""
        return attr.data.data

    def set_flash_image(self, data: bytes) -> None:
        """Set `ethosu.flash` to `data`."""
        # Straight from bytes: `DenseArrayBase.from_list` normalises every element in Python,
        # seconds for the megabytes of weights of an ImageNet model.
        self.attributes[FLASH_ATTR] = DenseArrayBase(i8, BytesAttr(bytes(data)))

    @classmethod
    def parse(cls, parser: Parser) -> CommandStreamOp:
        """`"accelerator" (system_config "...")? (memory_mode "...")? attr-dict-with-keyword
        { commands }`. Hand-written so that an empty body still gets its block."""
        accelerator = parser.parse_str_literal()
        system_config = memory_mode = None
        if parser.parse_optional_keyword("system_config") is not None:
            system_config = parser.parse_str_literal()
        if parser.parse_optional_keyword("memory_mode") is not None:
            memory_mode = parser.parse_str_literal()
        attributes = parser.parse_optional_attr_dict_with_keyword()
        op = cls(accelerator, parser.parse_region(), system_config, memory_mode)
        if attributes is not None:
            op.attributes |= attributes.data
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.accelerator.data)
        for keyword, value in (
            ("system_config", self.system_config),
            ("memory_mode", self.memory_mode),
        ):
            if value is not None:
                printer.print_string(f" {keyword} ")
                printer.print_string_literal(value.data)
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)
        if self.body.block.ops:
            printer.print_string(" ")
            printer.print_region(self.body)
        else:
            printer.print_string(" {\n}")

    @property
    def commands(self) -> list[EthosUCommand]:
        return list(self.body.block.ops)  # type: ignore[arg-type]

    @property
    def vela_accelerator(self) -> vela_api.NpuAccelerator:
        return _vela().NpuAccelerator[ACCELERATORS[self.accelerator.data]]

    def verify_(self) -> None:
        if self.accelerator.data not in ACCELERATORS:
            raise VerifyException(
                f"unknown accelerator '{self.accelerator.data}', expected one of {_join(ACCELERATORS)}"
            )

    def to_vela(self) -> list[vela_api.NpuOperation]:
        """The commands as Vela operations, for `npu_generate_register_command_stream`."""
        return [op.to_vela() for op in self.commands]

    @classmethod
    def from_vela(
        cls,
        npu_ops: Iterable[vela_api.NpuOperation],
        accelerator: vela_api.NpuAccelerator | str,
    ) -> CommandStreamOp:
        """A command stream from Vela operations and an `NpuAccelerator` (or our name)."""
        if not isinstance(accelerator, str):
            by_vela_name = {vela_name: name for name, vela_name in ACCELERATORS.items()}
            accelerator = by_vela_name[accelerator.name]
        return cls(accelerator, [op_from_vela(npu_op) for npu_op in npu_ops])


def _has_scale(quant: QuantizationAttr | None) -> bool:
    return quant is not None and quant.scale_value is not None


_BLOCK_FITS: dict[tuple[object, ...], bool] = {}
MAX_BLOCK_FITS = 4096
"""Block-config verdicts remembered per process: a lowered network has a few hundred distinct
ones, each of Vela's checks costs 10-20 us and every command is verified."""


def _block_config_fits(op: _BlockOp, accelerator: str) -> bool:
    """Whether Vela's generator finds a SHRAM layout for the command's block config: its own
    `get_arch_block_config` (`try_block_config`, which the lowering's `npu_find_block_configs`
    asks too), memoised by what it reads."""
    key = (accelerator, op._block_fit_key())
    fits = _BLOCK_FITS.get(key)
    if fits is not None:
        return fits
    from ethosu.vela.register_command_stream_generator import get_arch_block_config

    npu_op = op.to_vela()
    # The generator passes Conv2D's traversal, depth-first for the others.
    traversal = getattr(npu_op, "block_traversal", None) or _vela().NpuBlockTraversal.DEPTH_FIRST
    try:
        # None under `python -O`, which strips the generator's assertion.
        fits = get_arch_block_config(npu_op, traversal, _vela_arch(accelerator)) is not None
    except AssertionError:
        fits = False
    if len(_BLOCK_FITS) >= MAX_BLOCK_FITS:
        _BLOCK_FITS.clear()
    _BLOCK_FITS[key] = fits
    return fits


class BlockOptions(TypedDict, total=False):
    """Optional fields of all block-op constructors; absent ones take Vela's defaults."""

    activation: ActivationAttr | None
    rounding_mode: RoundingMode
    fused_quantize: bool
    ifm_upscale: ResamplingMode
    accumulator_type: AccumulatorType
    debug_name: str | None


_ROUNDING_DEFAULT = RoundingModeAttr(RoundingMode.TFL)
_UPSCALE_DEFAULT = ResamplingModeAttr(ResamplingMode.NONE)
_ACCUMULATOR_DEFAULT = AccumulatorTypeAttr(AccumulatorType.Default)
_TRAVERSAL_DEFAULT = BlockTraversalAttr(BlockTraversal.DEPTH_FIRST)


def _unless_default(attr: Attribute, default: Attribute | None) -> Attribute | None:
    """Leaves default-valued optional properties out, so every op has one printed form."""
    return None if attr == default else attr


# Assembly format pieces: `<head> block <h, w, d> <op options> <common options>`.
_WEIGHTS_AND_BLOCK_FORMAT = "(`weights` $weights^)? (`biases` $biases^)? `block` $block_config"
_KERNEL_HEAD_FORMAT = f"`ifm` $ifm `ofm` $ofm `kernel` $kernel `padding` $padding {_WEIGHTS_AND_BLOCK_FORMAT}"
_OPTIONS_FORMAT = (
    "(`activation` $activation^)? (`rounding` $rounding_mode^)? (`upscale` $ifm_upscale^)? "
    "(`accumulator` $accumulator_type^)? (`fused_quantize` $fused_quantize^)? "
    "(`name` $debug_name^)? attr-dict"
)


class _BlockOp(IRDLOperation):
    """The fields of `NpuBlockOperation`, shared by the four ops that produce an OFM."""

    HAS_WEIGHTS: ClassVar[bool] = False

    ifm = prop_def(FeatureMapAttr)
    ofm = prop_def(FeatureMapAttr)
    weights = opt_prop_def(ArrayAttr[AddressRangeAttr])
    biases = opt_prop_def(ArrayAttr[AddressRangeAttr])
    block_config = prop_def(Shape3DAttr)
    activation = opt_prop_def(ActivationAttr)
    rounding_mode = opt_prop_def(RoundingModeAttr, default_value=_ROUNDING_DEFAULT)
    ifm_upscale = opt_prop_def(ResamplingModeAttr, default_value=_UPSCALE_DEFAULT)
    accumulator_type = opt_prop_def(AccumulatorTypeAttr, default_value=_ACCUMULATOR_DEFAULT)
    fused_quantize = opt_prop_def(UnitAttr)
    debug_name = opt_prop_def(StringAttr)

    traits = traits_def(HasParent(CommandStreamOp))

    @staticmethod
    def _common_properties(
        ifm: FeatureMapAttr,
        ofm: FeatureMapAttr,
        block_config: Shape3DAttr | Sequence[int],
        options: BlockOptions,
        weights: Sequence[AddressRangeAttr] = (),
        biases: Sequence[AddressRangeAttr] = (),
    ) -> dict[str, Attribute | None]:
        rounding = RoundingModeAttr(options.get("rounding_mode", RoundingMode.TFL))
        upscale = ResamplingModeAttr(options.get("ifm_upscale", ResamplingMode.NONE))
        accumulator = AccumulatorTypeAttr(options.get("accumulator_type", AccumulatorType.Default))
        debug_name = options.get("debug_name")
        return {
            "ifm": ifm,
            "ofm": ofm,
            "weights": ArrayAttr(weights) if weights else None,
            "biases": ArrayAttr(biases) if biases else None,
            "block_config": _shape(block_config),
            "activation": options.get("activation"),
            "rounding_mode": _unless_default(rounding, _ROUNDING_DEFAULT),
            "ifm_upscale": _unless_default(upscale, _UPSCALE_DEFAULT),
            "accumulator_type": _unless_default(accumulator, _ACCUMULATOR_DEFAULT),
            "fused_quantize": UnitAttr() if options.get("fused_quantize") else None,
            "debug_name": None if debug_name is None else StringAttr(debug_name),
        }

    def with_block(
        self,
        block_config: Shape3DAttr | Sequence[int],
        weights: Sequence[AddressRangeAttr] = (),
        biases: Sequence[AddressRangeAttr] = (),
    ) -> Self:
        """A copy with another block config and other weight and bias ranges: the op the
        constructor would build from the same arguments but these, its properties in the same
        order (the generic syntax prints them in that order). The lowering builds each
        stripe's command first without them, to search its block config."""
        changed: dict[str, Attribute | None] = {
            "weights": ArrayAttr(weights) if weights else None,
            "biases": ArrayAttr(biases) if biases else None,
        }
        properties: dict[str, Attribute] = {}
        for name, value in self.properties.items():
            if name in changed:
                continue
            if name == "block_config":
                # `_common_properties` order: ..., weights, biases, block_config, ...
                properties |= {k: v for k, v in changed.items() if v is not None}
                value = _shape(block_config)
            properties[name] = value
        return type(self).create(properties=properties, attributes=dict(self.attributes))

    @property
    def weight_ranges(self) -> tuple[AddressRangeAttr, ...]:
        return () if self.weights is None else self.weights.data

    @property
    def bias_ranges(self) -> tuple[AddressRangeAttr, ...]:
        return () if self.biases is None else self.biases.data

    def verify_(self) -> None:
        """The fields on their own, then what Vela's register-stream generator needs to encode
        the command for the stream's accelerator (it would otherwise fail inside)."""
        self._verify_fields()
        stream = self.parent_op()
        if isinstance(stream, CommandStreamOp) and (accelerator := stream.accelerator.data) in ACCELERATORS:
            self._verify_encodable(accelerator)

    def _verify_fields(self) -> None:
        """Checks of the fields, accelerator aside; subclasses extend it."""
        if min(self.block_config.as_tuple()) < 1:
            raise VerifyException(f"block config must be positive, got {list(self.block_config.as_tuple())}")
        if self.HAS_WEIGHTS:
            self._verify_weights()
        elif self.weights is not None or self.biases is not None:
            raise VerifyException(f"'{self.name}' must not have weights or biases")

    def _feature_maps(self) -> dict[str, FeatureMapAttr]:
        """The feature maps the command reads and writes, by name."""
        return {"ifm": self.ifm, "ofm": self.ofm}

    def _verify_encodable(self, accelerator: str) -> None:
        """In the order Vela's generator checks: memory ranges, then registers, then SHRAM."""
        for what, fm in self._feature_maps().items():
            fm.verify_encodable(what, accelerator)
        for what, ranges in (("weight", self.weight_ranges), ("bias", self.bias_ranges)):
            for r in ranges:
                _check_range_end(f"{what} range", r.region, r.address + r.length, accelerator)
        if not _block_config_fits(self, accelerator):
            raise VerifyException(self._block_config_misfit(accelerator))

    def _block_fit_key(self) -> tuple[object, ...]:
        """Everything of the command Vela's `get_arch_block_config` reads, beside the
        accelerator: whether its block config fits depends on these only."""
        activation = self.activation
        return (
            type(self),
            self.block_config.as_tuple(),
            self.ifm.shape.as_tuple(),
            self.ifm.data_type.data,
            self.ofm.shape.as_tuple(),
            self.ifm_upscale.data,
            None if activation is None else activation.kind.data,
            all(_has_scale(fm.quantization_or_none) for fm in self._feature_maps().values()),
        )

    def _block_config_misfit(self, accelerator: str) -> str:
        """Why the block config is refused, with one that fits as the lowering would pick it."""
        # Imported here: the lowering imports this module.
        from cascade.ethos_u.npu_lowering import block_configs, pick_block_config

        arch = _vela_arch(accelerator)
        block = self.block_config.as_tuple()
        ublock = [arch.ofm_ublock.height, arch.ofm_ublock.width, arch.ofm_ublock.depth]
        largest = [arch.ofm_block_max.height, arch.ofm_block_max.width, arch.ofm_block_max.depth]
        try:
            candidates = block_configs(self, accelerator)
        except AssertionError:  # `npu_find_block_configs` asserts that it found one
            candidates = []
        # It skips odd heights and widths on some accelerators: the micro-block itself may fit.
        candidates = candidates or [tuple(ublock)]
        fitting = [b for b in candidates if _block_config_fits(self.with_block(b), accelerator)]
        choice = list(pick_block_config(fitting, self.ofm.shape.as_tuple())) if fitting else None
        if any(b > m or b % u for b, m, u in zip(block, largest, ublock, strict=True)):
            message = (
                f"block config {list(block)} is not a block {accelerator} runs: "
                f"blocks are multiples of {ublock} up to {largest}"
            )
            return message if choice is None else f"{message}; for this operation {choice} does"
        message = (
            f"block config {list(block)} does not fit the shared buffer (SHRAM) of {accelerator} for this operation"
        )
        return message if choice is None else f"{message}; {choice} does"

    def _verify_weights(self) -> None:
        """One weight and one bias range per core, each in one region, in 16-byte units."""
        weights, biases = self.weight_ranges, self.bias_ranges
        for what, ranges in (("weight", weights), ("bias", biases)):
            if not 1 <= len(ranges) <= MAX_CORES:
                raise VerifyException(
                    f"'{self.name}' needs 1-{MAX_CORES} {what} ranges (one per core), got {len(ranges)}"
                )
            if len({r.region for r in ranges}) != 1:
                raise VerifyException(f"all {what} ranges must be in the same region")
            for r in ranges:
                if r.region == SHRAM_REGION:
                    raise VerifyException(f"{what} ranges cannot be in the SHRAM region")
                if r.address % 16 or r.length % 16:
                    raise VerifyException(
                        f"{what} range address ({_format_address(r.address)}) and length "
                        f"({r.length}) must be multiples of 16"
                    )
        if len(weights) != len(biases):
            raise VerifyException(f"weight and bias range counts differ ({len(weights)} and {len(biases)})")

    def _new_vela_op(self) -> vela_api.NpuBlockOperation:
        raise NotImplementedError

    def _fill_vela(self, npu_op: vela_api.NpuBlockOperation) -> None:
        """Sets the fields of a Vela block operation; subclasses extend it."""
        npu_op.ifm = self.ifm.to_vela()
        npu_op.ofm = self.ofm.to_vela()
        npu_op.weights = [r.to_vela() for r in self.weight_ranges]
        npu_op.biases = [r.to_vela() for r in self.bias_ranges]
        npu_op.block_config = self.block_config.to_vela()
        npu_op.activation = None if self.activation is None else self.activation.to_vela()
        npu_op.rounding_mode = _enum_to_vela(self.rounding_mode.data, "NpuRoundingMode")
        npu_op.fused_quantize = self.fused_quantize is not None
        npu_op.ifm_upscale = _enum_to_vela(self.ifm_upscale.data, "NpuResamplingMode")
        npu_op.accumulator_type = _enum_to_vela(self.accumulator_type.data, "NpuAccumulatorType")
        npu_op.name = None if self.debug_name is None else self.debug_name.data

    def to_vela(self) -> vela_api.NpuBlockOperation:
        """The equivalent `ethosu.vela.api` operation (a fresh object)."""
        npu_op = self._new_vela_op()
        self._fill_vela(npu_op)
        return npu_op

    @staticmethod
    def _options_from_vela(npu_op: vela_api.NpuBlockOperation) -> BlockOptions:
        activation = npu_op.activation
        return {
            "activation": None if activation is None else ActivationAttr.from_vela(activation),
            "rounding_mode": _enum_from_vela(RoundingMode, npu_op.rounding_mode),
            "fused_quantize": bool(npu_op.fused_quantize),
            "ifm_upscale": _enum_from_vela(ResamplingMode, npu_op.ifm_upscale),
            "accumulator_type": _enum_from_vela(AccumulatorType, npu_op.accumulator_type),
            "debug_name": npu_op.name,
        }


class _KernelOp(_BlockOp):
    """Block ops with a kernel and explicit padding: convolutions and pooling."""

    MAX_KERNEL_HEIGHT: ClassVar[int]
    MAX_KERNEL_AREA: ClassVar[int]

    kernel = prop_def(KernelAttr)
    padding = prop_def(PaddingAttr)

    def _verify_fields(self) -> None:
        super()._verify_fields()
        height, width = self.kernel.dilated_height, self.kernel.dilated_width
        if height > self.MAX_KERNEL_HEIGHT:
            raise VerifyException(f"'{self.name}' kernel height {height} (dilated) exceeds {self.MAX_KERNEL_HEIGHT}")
        if height * width > self.MAX_KERNEL_AREA:
            raise VerifyException(
                f"'{self.name}' kernel area {height * width} (dilated) exceeds {self.MAX_KERNEL_AREA}"
            )

    def _block_fit_key(self) -> tuple[object, ...]:
        return (*super()._block_fit_key(), self.kernel.as_tuple())

    def _fill_vela(self, npu_op: vela_api.NpuBlockOperation) -> None:
        super()._fill_vela(npu_op)
        npu_op.kernel = self.kernel.to_vela()
        npu_op.padding = self.padding.to_vela()

    @staticmethod
    def _kernel_from_vela(npu_op: vela_api.NpuBlockOperation) -> tuple[KernelAttr, PaddingAttr]:
        """Kernel and padding of a Vela operation; no padding becomes zero padding."""
        if npu_op.kernel is None:
            raise ValueError(f"Vela {type(npu_op).__name__} without a kernel")
        padding = npu_op.padding or _vela().NpuPadding(0, 0, 0, 0)
        return KernelAttr.from_vela(npu_op.kernel), PaddingAttr.from_vela(padding)


class _ConvOp(_KernelOp):
    """Conv2D and depthwise: weights, biases and a block traversal."""

    HAS_WEIGHTS: ClassVar[bool] = True
    MAX_KERNEL_HEIGHT: ClassVar[int] = CONV_MAX_DILATED_HEIGHT
    MAX_KERNEL_AREA: ClassVar[int] = CONV_MAX_DILATED_AREA
    DEFAULT_TRAVERSAL: ClassVar[BlockTraversalAttr | None] = None
    """The traversal left out of the properties (and the syntax), if it is optional."""

    def __init__(
        self,
        *,
        ifm: FeatureMapAttr,
        ofm: FeatureMapAttr,
        kernel: KernelAttr,
        padding: PaddingAttr,
        weights: Sequence[AddressRangeAttr],
        biases: Sequence[AddressRangeAttr],
        block_config: Shape3DAttr | Sequence[int],
        block_traversal: BlockTraversal = BlockTraversal.DEPTH_FIRST,
        **options: Unpack[BlockOptions],
    ):
        """`block_traversal` must be the one the weights were encoded with."""
        properties = self._common_properties(ifm, ofm, block_config, options, weights, biases)
        traversal = _unless_default(BlockTraversalAttr(block_traversal), self.DEFAULT_TRAVERSAL)
        properties |= {"kernel": kernel, "padding": padding, "block_traversal": traversal}
        super().__init__(properties=properties)

    @classmethod
    def from_vela(cls, npu_op: vela_api.NpuBlockOperation) -> _ConvOp:
        kernel, padding = cls._kernel_from_vela(npu_op)
        # NpuConvDepthWiseOperation has no block_traversal: Vela always uses depth_first.
        traversal = getattr(npu_op, "block_traversal", None)
        return cls(
            ifm=FeatureMapAttr.from_vela(npu_op.ifm),
            ofm=FeatureMapAttr.from_vela(npu_op.ofm),
            kernel=kernel,
            padding=padding,
            weights=[AddressRangeAttr.from_vela(r) for r in npu_op.weights],
            biases=[AddressRangeAttr.from_vela(r) for r in npu_op.biases],
            block_config=Shape3DAttr.from_vela(npu_op.block_config),
            block_traversal=BlockTraversal.DEPTH_FIRST
            if traversal is None
            else _enum_from_vela(BlockTraversal, traversal),
            **cls._options_from_vela(npu_op),
        )


@irdl_op_definition
class Conv2DOp(_ConvOp):
    """A 2-D convolution of one stripe, mirroring `NpuConv2DOperation` (NPU_OP_CONV)."""

    name = "ethosu.conv2d"

    block_traversal = prop_def(BlockTraversalAttr)

    assembly_format = f"{_KERNEL_HEAD_FORMAT} `traversal` $block_traversal {_OPTIONS_FORMAT}"

    def _new_vela_op(self) -> vela_api.NpuConv2DOperation:
        return _vela().NpuConv2DOperation()

    def _block_fit_key(self) -> tuple[object, ...]:
        return (*super()._block_fit_key(), self.block_traversal.data)

    def _fill_vela(self, npu_op: vela_api.NpuBlockOperation) -> None:
        super()._fill_vela(npu_op)
        npu_op.block_traversal = _enum_to_vela(self.block_traversal.data, "NpuBlockTraversal")


@irdl_op_definition
class DepthwiseConv2DOp(_ConvOp):
    """A depthwise convolution of one stripe, mirroring `NpuConvDepthWiseOperation`
    (NPU_OP_DEPTHWISE). IFM and OFM have the same depth and the traversal is depth_first."""

    name = "ethosu.depthwise_conv2d"
    DEFAULT_TRAVERSAL: ClassVar[BlockTraversalAttr | None] = _TRAVERSAL_DEFAULT

    block_traversal = opt_prop_def(BlockTraversalAttr, default_value=_TRAVERSAL_DEFAULT)

    assembly_format = f"{_KERNEL_HEAD_FORMAT} (`traversal` $block_traversal^)? {_OPTIONS_FORMAT}"

    def _verify_fields(self) -> None:
        super()._verify_fields()
        ifm_depth, ofm_depth = self.ifm.shape.depth, self.ofm.shape.depth
        if ifm_depth != ofm_depth:
            raise VerifyException(
                f"depthwise convolution needs equal IFM and OFM depth, got {ifm_depth} and {ofm_depth}"
            )
        if self.block_traversal.data != BlockTraversal.DEPTH_FIRST:
            raise VerifyException("depthwise convolution requires depth_first block traversal")

    def _new_vela_op(self) -> vela_api.NpuConvDepthWiseOperation:
        return _vela().NpuConvDepthWiseOperation()


@irdl_op_definition
class PoolingOp(_KernelOp):
    """Max, average or reduce-sum pooling of one stripe, mirroring `NpuPoolingOperation`
    (NPU_OP_POOL). `rescale` is Vela's optional output rescale for resize operations."""

    name = "ethosu.pooling"
    MAX_KERNEL_HEIGHT: ClassVar[int] = POOL_MAX_KERNEL_HEIGHT
    MAX_KERNEL_AREA: ClassVar[int] = POOL_MAX_KERNEL_AREA

    kind = prop_def(PoolingKindAttr)
    rescale = opt_prop_def(FloatAttr[Float64Type])

    assembly_format = f"$kind {_KERNEL_HEAD_FORMAT} (`rescale` $rescale^)? {_OPTIONS_FORMAT}"

    def __init__(
        self,
        kind: PoolingKind,
        *,
        ifm: FeatureMapAttr,
        ofm: FeatureMapAttr,
        kernel: KernelAttr,
        padding: PaddingAttr,
        block_config: Shape3DAttr | Sequence[int],
        rescale: float | None = None,
        **options: Unpack[BlockOptions],
    ):
        properties = self._common_properties(ifm, ofm, block_config, options)
        properties |= {
            "kind": PoolingKindAttr(kind),
            "kernel": kernel,
            "padding": padding,
            "rescale": None if rescale is None else FloatAttr(float(rescale), f64),
        }
        super().__init__(properties=properties)

    def _verify_fields(self) -> None:
        super()._verify_fields()
        self._verify_ofm_scaling()

    def _verify_ofm_scaling(self) -> None:
        """The quantization Vela's `generate_ofm_scaling_for_pooling` reads: it programs one
        OFM scale for an average or reduce-sum pooling without padding."""
        if self.kind.data == PoolingKind.MAX or max(self.padding.as_tuple()):
            return
        ifm, ofm = self.ifm.quantization_or_none, self.ofm.quantization_or_none
        what = f"unpadded {self.kind.data.value} pooling"
        activation = self.activation.kind.data if self.activation is not None else None
        if activation in (ActivationKind.SIGMOID, ActivationKind.TANH):
            if not _has_scale(ifm):
                raise VerifyException(f"{what} with {activation.value} needs an IFM quantization scale")
            return
        if self.fused_quantize is not None:
            if not (_has_scale(ifm) and _has_scale(ofm)):
                raise VerifyException(f"{what} with fused_quantize needs IFM and OFM quantization scales")
            return
        if self.rescale is None and (ifm is None or ofm is None):
            raise VerifyException(f"{what} needs IFM and OFM quantization, or a rescale, to scale its OFM")

    def _verify_encodable(self, accelerator: str) -> None:
        # Vela's `generate_pooling_op` refuses a brick-format IFM of int32, or on two cores.
        if self.kind.data == PoolingKind.REDUCE_SUM and self.ifm.layout.data != Layout.NHWC:
            if self.ifm.data_type.data == DataType.INT32:
                raise VerifyException("reduce_sum pooling of an i32 IFM needs it in nhwc layout")
            if cores(accelerator) > 1:
                raise VerifyException(f"reduce_sum pooling on {accelerator} needs an nhwc IFM")
        super()._verify_encodable(accelerator)

    def _block_fit_key(self) -> tuple[object, ...]:
        return (*super()._block_fit_key(), self.kind.data)

    def _new_vela_op(self) -> vela_api.NpuPoolingOperation:
        return _vela().NpuPoolingOperation(_enum_to_vela(self.kind.data, "NpuPoolingOp"))

    def _fill_vela(self, npu_op: vela_api.NpuBlockOperation) -> None:
        super()._fill_vela(npu_op)
        npu_op.rescale = None if self.rescale is None else self.rescale.value.data

    @classmethod
    def from_vela(cls, npu_op: vela_api.NpuPoolingOperation) -> PoolingOp:
        rescale = npu_op.rescale
        if rescale is not None and not isinstance(rescale, int | float):
            raise ValueError(f"unsupported pooling rescale {rescale!r} (Vela-internal scaling)")
        kernel, padding = cls._kernel_from_vela(npu_op)
        return cls(
            _enum_from_vela(PoolingKind, npu_op.sub_op_type),
            ifm=FeatureMapAttr.from_vela(npu_op.ifm),
            ofm=FeatureMapAttr.from_vela(npu_op.ofm),
            kernel=kernel,
            padding=padding,
            block_config=Shape3DAttr.from_vela(npu_op.block_config),
            rescale=rescale,
            **cls._options_from_vela(npu_op),
        )


@irdl_op_definition
class ElementwiseOp(_BlockOp):
    """An elementwise operation on one stripe, mirroring `NpuElementWiseOperation`
    (NPU_OP_ELEMENTWISE).

    Binary kinds read `ifm2` (a feature map) or a `scalar`; abs, lrelu and clz read only the
    IFM. `rescale` is an explicit `[scale, shift]` for add, sub and mul.
    """

    name = "ethosu.elementwise"

    kind = prop_def(ElementwiseKindAttr)
    ifm2 = opt_prop_def(FeatureMapAttr)
    ifm2_scalar = opt_prop_def(ScalarAttr)
    reversed_operands = opt_prop_def(UnitAttr)
    rescale = opt_prop_def(DenseArrayBase[I64])

    assembly_format = (
        "$kind `ifm` $ifm (`ifm2` $ifm2^)? (`scalar` $ifm2_scalar^)? `ofm` $ofm "
        f"{_WEIGHTS_AND_BLOCK_FORMAT} (`reversed_operands` $reversed_operands^)? "
        f"(`rescale` $rescale^)? {_OPTIONS_FORMAT}"
    )

    def __init__(
        self,
        kind: ElementwiseKind,
        *,
        ifm: FeatureMapAttr,
        ofm: FeatureMapAttr,
        block_config: Shape3DAttr | Sequence[int],
        ifm2: FeatureMapAttr | ScalarAttr | None = None,
        reversed_operands: bool = False,
        rescale: tuple[int, int] | None = None,
        **options: Unpack[BlockOptions],
    ):
        """`ifm2` is the second operand of a binary kind: a feature map or a scalar."""
        properties = self._common_properties(ifm, ofm, block_config, options)
        properties |= {
            "kind": ElementwiseKindAttr(kind),
            "ifm2": ifm2 if isinstance(ifm2, FeatureMapAttr) else None,
            "ifm2_scalar": ifm2 if isinstance(ifm2, ScalarAttr) else None,
            "reversed_operands": UnitAttr() if reversed_operands else None,
            "rescale": None if rescale is None else DenseArrayBase.from_list(i64, rescale),
        }
        super().__init__(properties=properties)

    def _verify_fields(self) -> None:
        super()._verify_fields()
        kind = self.kind.data
        operand_count = (self.ifm2 is not None) + (self.ifm2_scalar is not None)
        if kind.is_unary and operand_count:
            raise VerifyException(f"unary elementwise '{kind.value}' takes no ifm2 or scalar")
        if not kind.is_unary and operand_count != 1:
            raise VerifyException(f"binary elementwise '{kind.value}' needs exactly one of ifm2 and scalar")
        if kind.is_unary and self.reversed_operands is not None:
            raise VerifyException("reversed_operands needs a binary elementwise kind")
        self._verify_rescale()
        self._verify_generator_inputs()

    def _verify_rescale(self) -> None:
        if self.rescale is None:
            return
        kind = self.kind.data
        if kind not in (ElementwiseKind.ADD, ElementwiseKind.SUB, ElementwiseKind.MUL):
            raise VerifyException(f"rescale applies to add, sub and mul only, not '{kind.value}'")
        if len(self.rescale) != 2:
            raise VerifyException(f"rescale must be [scale, shift], got {len(self.rescale)} values")

    def _verify_generator_inputs(self) -> None:
        """What Vela's `generate_elementwise_op` reads: the OFM scale of lrelu and abs, an IFM2
        that broadcasts, a scalar that quantizes into its data type."""
        kind = self.kind.data
        if kind in (ElementwiseKind.LRELU, ElementwiseKind.ABS) and not _has_scale(self.ofm.quantization_or_none):
            raise VerifyException(f"elementwise '{kind.value}' needs an OFM quantization scale")
        if (ifm2 := self.ifm2) is not None:
            ifm_shape, ifm2_shape = self.ifm.shape.as_tuple(), ifm2.shape.as_tuple()
            if any(a != b and b != 1 for a, b in zip(ifm_shape, ifm2_shape, strict=True)):
                raise VerifyException(
                    f"ifm2 shape {list(ifm2_shape)} must equal the ifm shape {list(ifm_shape)} "
                    "or be 1 where it differs (broadcast)"
                )
        if (scalar := self.ifm2_scalar) is not None:
            scalar.verify_quantizable()

    def _feature_maps(self) -> dict[str, FeatureMapAttr]:
        maps = super()._feature_maps()
        return maps if self.ifm2 is None else {**maps, "ifm2": self.ifm2}

    def _block_fit_key(self) -> tuple[object, ...]:
        ifm2, scalar = self.ifm2, self.ifm2_scalar
        scalar_scaled = None if scalar is None else _has_scale(_quant_or_none(scalar.quantization))
        return (*super()._block_fit_key(), None if ifm2 is None else ifm2.shape.as_tuple(), scalar_scaled)

    def _new_vela_op(self) -> vela_api.NpuElementWiseOperation:
        return _vela().NpuElementWiseOperation(_enum_to_vela(self.kind.data, "NpuElementWiseOp"))

    def _fill_vela(self, npu_op: vela_api.NpuBlockOperation) -> None:
        super()._fill_vela(npu_op)
        if self.ifm2 is not None:
            npu_op.ifm2 = self.ifm2.to_vela()
        if (scalar := self.ifm2_scalar) is not None:
            npu_op.ifm2 = scalar.to_vela_feature_map()
            npu_op.ifm2_scalar = scalar.value.data
        npu_op.reversed_operands = self.reversed_operands is not None
        npu_op.rescale = None if self.rescale is None else tuple(self.rescale.get_values())

    @classmethod
    def from_vela(cls, npu_op: vela_api.NpuElementWiseOperation) -> ElementwiseOp:
        """The IFM2 of a unary kind is dropped; a scalar keeps only the IFM2 data type and
        quantization (all Vela reads besides the value)."""
        kind = _enum_from_vela(ElementwiseKind, npu_op.sub_op_type)
        ifm2: FeatureMapAttr | ScalarAttr | None = None
        if not kind.is_unary and npu_op.ifm2_scalar is not None:
            ifm2 = ScalarAttr.from_vela(npu_op.ifm2_scalar, npu_op.ifm2)
        elif not kind.is_unary:
            ifm2 = FeatureMapAttr.from_vela(npu_op.ifm2)
        rescale = npu_op.rescale
        return cls(
            kind,
            ifm=FeatureMapAttr.from_vela(npu_op.ifm),
            ofm=FeatureMapAttr.from_vela(npu_op.ofm),
            block_config=Shape3DAttr.from_vela(npu_op.block_config),
            ifm2=ifm2,
            reversed_operands=bool(npu_op.reversed_operands),
            rescale=None if rescale is None else (int(rescale[0]), int(rescale[1])),
            **cls._options_from_vela(npu_op),
        )


@irdl_op_definition
class DmaOp(IRDLOperation):
    """A DMA copy from `src` to `dest`, mirroring `NpuDmaOperation` (NPU_OP_DMA_START).

    Both ranges have the same length (Vela transfers `src.length` bytes). `channel` and
    `mode` (0 external, 1 internal) default to 0.
    """

    name = "ethosu.dma"

    src = prop_def(AddressRangeAttr)
    dest = prop_def(AddressRangeAttr)
    channel = opt_prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    mode = opt_prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    debug_name = opt_prop_def(StringAttr)

    traits = traits_def(HasParent(CommandStreamOp))

    assembly_format = "`src` $src `dest` $dest (`channel` $channel^)? (`mode` $mode^)? (`name` $debug_name^)? attr-dict"

    def __init__(
        self,
        src: AddressRangeAttr,
        dest: AddressRangeAttr,
        channel: int = 0,
        mode: int = 0,
        debug_name: str | None = None,
    ):
        super().__init__(
            properties={
                "src": src,
                "dest": dest,
                "channel": IntegerAttr(channel, i64) if channel else None,
                "mode": IntegerAttr(mode, i64) if mode else None,
                "debug_name": None if debug_name is None else StringAttr(debug_name),
            }
        )

    def verify_(self) -> None:
        if self.src.length != self.dest.length:
            raise VerifyException(
                f"dma source and destination lengths differ ({self.src.length} and {self.dest.length})"
            )
        if (mode := self.mode.value.data) not in (0, 1):
            raise VerifyException(f"dma mode must be 0 (external) or 1 (internal), got {mode}")
        if (channel := self.channel.value.data) < 0:
            raise VerifyException(f"dma channel must be non-negative, got {channel}")
        stream = self.parent_op()
        if not isinstance(stream, CommandStreamOp) or (accelerator := stream.accelerator.data) not in ACCELERATORS:
            return
        for what, r in (("dma source", self.src), ("dma destination", self.dest)):
            _check_range_end(what, r.region, r.address + r.length, accelerator)

    def to_vela(self) -> vela_api.NpuDmaOperation:
        """The equivalent `NpuDmaOperation` (a fresh object)."""
        npu_op = _vela().NpuDmaOperation(self.src.to_vela(), self.dest.to_vela())
        npu_op.channel = self.channel.value.data
        npu_op.mode = self.mode.value.data
        npu_op.name = None if self.debug_name is None else self.debug_name.data
        return npu_op

    @classmethod
    def from_vela(cls, npu_op: vela_api.NpuDmaOperation) -> DmaOp:
        return cls(
            AddressRangeAttr.from_vela(npu_op.src),
            AddressRangeAttr.from_vela(npu_op.dest),
            int(npu_op.channel),
            int(npu_op.mode),
            npu_op.name,
        )


EthosUCommand = Conv2DOp | DepthwiseConv2DOp | PoolingOp | ElementwiseOp | DmaOp
"""Any op that may appear in an `ethosu.command_stream`."""


def op_from_vela(npu_op: vela_api.NpuOperation) -> EthosUCommand:
    """Converts any Vela `NpuOperation` into the matching `ethosu` op."""
    api = _vela()
    op_classes: dict[type, type[EthosUCommand]] = {
        api.NpuConv2DOperation: Conv2DOp,
        api.NpuConvDepthWiseOperation: DepthwiseConv2DOp,
        api.NpuPoolingOperation: PoolingOp,
        api.NpuElementWiseOperation: ElementwiseOp,
        api.NpuDmaOperation: DmaOp,
    }
    if (op_class := op_classes.get(type(npu_op))) is None:
        raise ValueError(f"unsupported Vela operation {type(npu_op).__name__}")
    return op_class.from_vela(npu_op)  # type: ignore[arg-type]


EthosU = Dialect(
    "ethosu",
    [CommandStreamOp, Conv2DOp, DepthwiseConv2DOp, PoolingOp, ElementwiseOp, DmaOp],
    [
        DataTypeAttr,
        LayoutAttr,
        RoundingModeAttr,
        BlockTraversalAttr,
        ResamplingModeAttr,
        AccumulatorTypeAttr,
        PoolingKindAttr,
        ElementwiseKindAttr,
        ActivationKindAttr,
        Shape3DAttr,
        PaddingAttr,
        AddressRangeAttr,
        KernelAttr,
        TileBoxAttr,
        QuantizationAttr,
        ActivationAttr,
        ScalarAttr,
        FeatureMapAttr,
    ],
)
