"""The `cascade` dialect: operator cascades executed stripe by stripe.

This dialect is the contract between the cascade planner, the rolling-buffer pass, the memory
allocator and the lowering. It is target independent: nothing here knows about Ethos-U.

Vocabulary
----------
* A **cascade** (`cascade.group`) is a chain or DAG of operators executed together, stripe by
  stripe. Its operands are the tensors flowing into it (stored in full somewhere), its results
  the tensors leaving it (also stored in full). Everything produced inside and not yielded is
  an **intermediate**: it only ever exists one stripe (or a rolling window) at a time.
* The **output tiling** of a cascade is given by three integer arrays on the op, all about the
  *first result* (the cascade's primary output):

  - `stripe_shape`: the stripe shape, one entry per axis (NHWC for feature maps);
  - `stripe_order`: the striped axes, outer axis first (`array<i64: 1, 2>` = rows, then
    columns). The outer striped axis is the **rolling axis**;
  - `num_stripes`: the number of stripes along each striped axis, in `stripe_order` order;
    always `ceil(extent / stripe)`.

  The **stripe index** is a tuple `(i0, i1, ...)`, one entry per striped axis in
  `stripe_order` order; stripes execute in lexicographic order of that tuple (the last entry
  varies fastest). Output stripe `(i0, i1, ...)` covers, on axis `stripe_order[j]`,
  `[ij * stripe_shape[axis], (ij + 1) * stripe_shape[axis])` clipped to the tensor, and the
  full extent on every other axis.
* A **stripe map** (`#cascade.stripe<...>`) tells which region of a value is live in one
  stripe: an `affine_map` from the stripe index (one dim per striped axis, in `stripe_order`
  order, no symbols) to the region's first element (one result per tensor axis), and the
  nominal region `shape`. The region of stripe `s` is `[offset(s), offset(s) + shape)`
  intersected with `[0, extent)` on every axis (`StripeAttr.region_of`): offsets may be
  negative (padding), and the nominal shape may exceed the extent; it is *not* clipped.
  Stripe maps live in the discardable attribute `cascade.stripe` (`STRIPE_ATTR`) of every
  single-result op in the body of a group; `get_stripe`/`set_stripe` read and write it.
* The **buffer mode** of an intermediate (the `mode` of its stripe map) is `rolling` (the
  overlap between consecutive stripes along the rolling axis is kept in a rolling buffer and
  only the new rows are computed) or `recompute` (each stripe recomputes its whole region,
  overlap included, in a stripe-sized buffer). Values yielded by the group are stored in full,
  so their stripe map has no mode.
* A **rolling buffer** (`cascade.rolling_buffer`) stands for a full logical tensor but stores
  only `depth` (k) rows of it along the rolling axis; logical element `(n, h, w, c)` lives at
  `(n, h mod k, w, c)`, as its `index_map` says.
* A **placement** (`#cascade.placement<region, offset, size>`) is where a buffer lives: a
  memory region (`sram`, `flash`, `dram`), a byte offset in it and a byte size. It is a
  property of `cascade.rolling_buffer` and, on any other single-result op, the discardable
  attribute `cascade.placement` (`PLACEMENT_ATTR`; `get_placement`/`set_placement`).
* `cascade.for_stripes` is the explicit form of a group after the rolling-buffer pass: the
  same tiling, but the stripe indices are block arguments of the body (the loop is explicit),
  every compute op carries its stripe map as a function of them, and every rolling
  intermediate is stored in an explicit `cascade.rolling_buffer`.

Everything prints as valid MLIR: the generic form (`--print-op-generic`) parses in upstream
MLIR with `--allow-unregistered-dialect`. No xDSL-only builtin attribute (`#builtin.int`) is
ever printed: integers are `IntegerAttr`/`DenseArrayBase` or custom-printed parameters.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    NoneAttr,
    TensorType,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
)
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, RecursiveMemoryEffect, ReturnLike
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

STRIPE_ATTR = "cascade.stripe"
"""Discardable attribute holding the `StripeAttr` of a single-result op inside a cascade."""

PLACEMENT_ATTR = "cascade.placement"
"""Discardable attribute holding the `PlacementAttr` of a single-result op's buffer."""

SPILLED_ATTR = "cascade.spilled"
"""Unit attribute of a planned unit (group or lone operator) whose output tensor lives in the
spill memory (DRAM) instead of SRAM; as an argument attribute, the same for a graph input."""

SRAM_ALIGNMENT = 16
"""Byte alignment of every buffer placed in SRAM (Ethos-U feature-map base addresses)."""


# --------------------------------------------------------------------------- #
# Small helpers
# --------------------------------------------------------------------------- #


def _i64_array(values: Sequence[int]) -> DenseArrayBase[I64]:
    return DenseArrayBase.from_list(i64, values)


def _i64(value: int) -> IntegerAttr[I64]:
    return IntegerAttr(value, i64)


def _static_tensor_type(attr: Attribute) -> TensorType | None:
    """`attr` if it is a ranked tensor type with a static shape, else None."""
    if not isinstance(attr, TensorType):
        return None
    if any(dim < 0 for dim in attr.get_shape()):
        return None
    return attr


def element_bytes(tensor_type: TensorType) -> int:
    """Bytes per element of `tensor_type` (bit width rounded up to whole bytes)."""
    element_type = tensor_type.get_element_type()
    bitwidth = getattr(element_type, "bitwidth", None)
    if not isinstance(bitwidth, int):
        raise ValueError(f"cannot size elements of type {element_type}")
    return -(-bitwidth // 8)


def _plural(count: int, singular: str, plural: str | None = None) -> str:
    """`1 result`, `2 results`: a count with the right noun form, for messages."""
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


def _print_int_list(printer: Printer, values: Sequence[int]) -> None:
    with printer.in_square_brackets():
        printer.print_list(values, printer.print_int)


def _parse_int_list(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))


# --------------------------------------------------------------------------- #
# Enumerations
# --------------------------------------------------------------------------- #


class BufferMode(StrEnum):
    """How an intermediate of a cascade is buffered between stripes."""

    ROLLING = "rolling"
    """Keep the overlap of consecutive stripes (along the rolling axis) in a rolling buffer."""
    RECOMPUTE = "recompute"
    """Recompute the whole region of every stripe, overlap included."""


class MemoryRegion(StrEnum):
    """The memory a buffer is placed in."""

    SRAM = "sram"
    FLASH = "flash"
    DRAM = "dram"


class WeightsMode(StrEnum):
    """Where the weights of a cascade live while it runs."""

    SRAM = "sram"
    """Weights are copied to SRAM once and kept for all stripes."""
    STREAM = "stream"
    """Weights are re-streamed from their home memory for every stripe."""


@irdl_attr_definition
class BufferModeAttr(EnumAttribute[BufferMode]):
    """Buffer mode of an intermediate: `#cascade.buffer_mode<rolling>`."""

    name = "cascade.buffer_mode"

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.data.value)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> BufferMode:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(BufferMode)


@irdl_attr_definition
class MemoryRegionAttr(EnumAttribute[MemoryRegion]):
    """Memory region of a placement: `#cascade.memory_region<sram>`."""

    name = "cascade.memory_region"

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.data.value)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> MemoryRegion:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(MemoryRegion)


@irdl_attr_definition
class WeightsModeAttr(EnumAttribute[WeightsMode]):
    """Weights mode of a cascade: `#cascade.weights<stream>`."""

    name = "cascade.weights"

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.data.value)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> WeightsMode:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(WeightsMode)


# --------------------------------------------------------------------------- #
# StripeAttr
# --------------------------------------------------------------------------- #


@irdl_attr_definition
class StripeAttr(ParametrizedAttribute):
    """The region of a value that is live in one stripe of a cascade.

    Syntax::

        #cascade.stripe<shape = [1, 6, 16, 8],
                        offset = affine_map<(d0) -> (0, d0 * 4 - 1, 0, 0)>, mode = rolling>

    * `shape`: the nominal region shape, one entry per tensor axis, each >= 1; not clipped
      to the tensor (a padded input region may be larger than the tensor);
    * `offset`: affine map from the stripe index (one dim per striped axis of the enclosing
      cascade, outer first; no symbols) to the first element of the region (one result per
      tensor axis; may be negative, e.g. for padding);
    * `mode` (optional): the buffer mode of an intermediate; absent for values that are stored
      in full (the ones the cascade yields).

    Stripe `s` covers `[offset(s), offset(s) + shape)` intersected with `[0, extent)`
    (`region_of`).
    """

    name = "cascade.stripe"

    shape: DenseArrayBase[I64]
    offset: AffineMapAttr
    mode: BufferModeAttr | NoneAttr

    def __init__(
        self,
        shape: Sequence[int],
        offset: AffineMap | AffineMapAttr,
        mode: BufferMode | BufferModeAttr | None = None,
    ):
        if isinstance(offset, AffineMap):
            offset = AffineMapAttr(offset)
        if isinstance(mode, BufferMode):
            mode = BufferModeAttr(mode)
        super().__init__(_i64_array(shape), offset, NoneAttr() if mode is None else mode)

    def verify(self) -> None:
        shape = self.get_shape()
        offset = self.get_offset_map()
        if any(size < 1 for size in shape):
            raise VerifyException(f"stripe shape entries must be >= 1, got {list(shape)}")
        if offset.num_symbols != 0:
            raise VerifyException(f"stripe offset map must not have symbols, got {offset.num_symbols}")
        if len(offset.results) != len(shape):
            raise VerifyException(
                f"stripe offset map has {len(offset.results)} results but the stripe shape has rank {len(shape)}"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            parser.parse_keyword("shape")
            parser.parse_punctuation("=")
            shape = _parse_int_list(parser)
            parser.parse_punctuation(",")
            parser.parse_keyword("offset")
            parser.parse_punctuation("=")
            pos = parser.pos
            offset = parser.parse_attribute()
            if not isinstance(offset, AffineMapAttr):
                parser.raise_error("expected an affine_map<...> stripe offset", pos, parser.pos)
            mode: BufferModeAttr | NoneAttr = NoneAttr()
            if parser.parse_optional_punctuation(",") is not None:
                parser.parse_keyword("mode")
                parser.parse_punctuation("=")
                mode = BufferModeAttr(parser.parse_str_enum(BufferMode))
        return (_i64_array(shape), offset, mode)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("shape = ")
            _print_int_list(printer, self.get_shape())
            printer.print_string(", offset = ")
            printer.print_attribute(self.offset)
            if (mode := self.get_mode()) is not None:
                printer.print_string(f", mode = {mode.value}")

    def get_shape(self) -> tuple[int, ...]:
        """The nominal region shape."""
        return self.shape.get_values()

    def get_offset_map(self) -> AffineMap:
        """The map from stripe index to the region's first element."""
        return self.offset.data

    def get_mode(self) -> BufferMode | None:
        """The buffer mode, None for values stored in full."""
        return self.mode.data if isinstance(self.mode, BufferModeAttr) else None

    @property
    def rank(self) -> int:
        """Rank of the tensor the stripe belongs to."""
        return len(self.shape)

    @property
    def num_stripe_dims(self) -> int:
        """Number of stripe-index dims (= striped axes of the enclosing cascade)."""
        return self.get_offset_map().num_dims

    def offset_of(self, stripe_index: Sequence[int]) -> tuple[int, ...]:
        """First element of the (unclipped) region of stripe `stripe_index`."""
        return self.get_offset_map().eval(stripe_index, [])

    def region_of(
        self, stripe_index: Sequence[int], full_shape: Sequence[int]
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(start, size) of the region of stripe `stripe_index`, clipped to `full_shape`.

        A size can be 0 when the nominal region lies entirely in the padding.
        """
        starts: list[int] = []
        sizes: list[int] = []
        for offset, size, extent in zip(self.offset_of(stripe_index), self.get_shape(), full_shape, strict=True):
            start = min(max(offset, 0), extent)
            end = max(min(offset + size, extent), start)
            starts.append(start)
            sizes.append(end - start)
        return tuple(starts), tuple(sizes)

    def with_mode(self, mode: BufferMode | None) -> StripeAttr:
        """The same stripe map with another buffer mode."""
        return StripeAttr(self.get_shape(), self.offset, mode)


# --------------------------------------------------------------------------- #
# PlacementAttr
# --------------------------------------------------------------------------- #


@irdl_attr_definition
class PlacementAttr(ParametrizedAttribute):
    """Where a buffer lives: `#cascade.placement<sram, 1024, 2048>`.

    Parameters: the memory region (`sram`, `flash` or `dram`), the byte offset of the buffer in
    that region and its size in bytes. Offsets and sizes are non-negative; SRAM offsets are
    multiples of `SRAM_ALIGNMENT` (16 bytes). The buffer occupies `[offset, offset + size)`.
    """

    name = "cascade.placement"

    region: MemoryRegionAttr
    offset: IntegerAttr[I64]
    size: IntegerAttr[I64]

    def __init__(self, region: MemoryRegion | MemoryRegionAttr, offset: int, size: int):
        if isinstance(region, MemoryRegion):
            region = MemoryRegionAttr(region)
        super().__init__(region, _i64(offset), _i64(size))

    def verify(self) -> None:
        offset, size = self.get_offset(), self.get_size()
        if offset < 0:
            raise VerifyException(f"placement offset must be non-negative, got {offset}")
        if size < 0:
            raise VerifyException(f"placement size must be non-negative, got {size}")
        if self.get_region() == MemoryRegion.SRAM and offset % SRAM_ALIGNMENT:
            raise VerifyException(f"SRAM placement offset {offset} is not a multiple of {SRAM_ALIGNMENT}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            region = MemoryRegionAttr(parser.parse_str_enum(MemoryRegion))
            parser.parse_punctuation(",")
            offset = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(",")
            size = parser.parse_integer(allow_boolean=False)
        return (region, _i64(offset), _i64(size))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.get_region().value}, {self.get_offset()}, {self.get_size()}")

    def get_region(self) -> MemoryRegion:
        """The memory region."""
        return self.region.data

    def get_offset(self) -> int:
        """Byte offset in the region."""
        return self.offset.value.data

    def get_size(self) -> int:
        """Size in bytes."""
        return self.size.value.data

    def get_end(self) -> int:
        """First byte after the buffer."""
        return self.get_offset() + self.get_size()

    def overlaps(self, other: PlacementAttr) -> bool:
        """Whether the two buffers share a byte of the same region."""
        if self.get_region() != other.get_region():
            return False
        return self.get_offset() < other.get_end() and other.get_offset() < self.get_end()


# --------------------------------------------------------------------------- #
# Discardable-attribute accessors
# --------------------------------------------------------------------------- #


def get_stripe(op: Operation) -> StripeAttr | None:
    """The stripe map of `op`'s result (`cascade.stripe`), None if absent."""
    attr = op.attributes.get(STRIPE_ATTR)
    return attr if isinstance(attr, StripeAttr) else None


def get_value_stripe(value: SSAValue) -> StripeAttr | None:
    """The stripe map of a value inside a cascade, None if it has none.

    The result of a `cascade.rolling_buffer` has the stripe map of its source; block arguments
    (the cascade's inputs, stored in full) have none.
    """
    owner = value.owner
    if isinstance(owner, RollingBufferOp):
        return get_value_stripe(owner.source)
    return get_stripe(owner) if isinstance(owner, Operation) else None


def set_stripe(op: Operation, stripe: StripeAttr | None) -> None:
    """Set (or remove, with None) the stripe map of `op`'s result."""
    if stripe is None:
        op.attributes.pop(STRIPE_ATTR, None)
        return
    op.attributes[STRIPE_ATTR] = stripe


def get_placement(op: Operation) -> PlacementAttr | None:
    """The placement of `op`'s result buffer, None if absent.

    For `cascade.rolling_buffer` this is its `placement` property, for any other op the
    discardable attribute `cascade.placement`.
    """
    if isinstance(op, RollingBufferOp):
        return op.placement
    attr = op.attributes.get(PLACEMENT_ATTR)
    return attr if isinstance(attr, PlacementAttr) else None


def set_placement(op: Operation, placement: PlacementAttr | None) -> None:
    """Set (or remove, with None) the placement of `op`'s result buffer."""
    if isinstance(op, RollingBufferOp):
        op.placement = placement
        return
    if placement is None:
        op.attributes.pop(PLACEMENT_ATTR, None)
        return
    op.attributes[PLACEMENT_ATTR] = placement


def get_arg_attr(function: FuncOp, index: int, name: str) -> Attribute | None:
    """Argument attribute `name` of argument `index` of `function`, None if absent."""
    if function.arg_attrs is None:
        return None
    attrs = function.arg_attrs.data[index]
    return attrs.data.get(name) if isinstance(attrs, DictionaryAttr) else None


def set_arg_attrs(function: FuncOp, name: str, values: Mapping[int, Attribute]) -> None:
    """Set argument attribute `name` to `values[i]` on each argument i of `values`."""
    existing = function.arg_attrs.data if function.arg_attrs is not None else [DictionaryAttr({})] * len(function.args)
    updated = []
    for index, attrs in enumerate(existing):
        assert isinstance(attrs, DictionaryAttr)
        entries = dict(attrs.data)
        if index in values:
            entries[name] = values[index]
        updated.append(DictionaryAttr(entries))
    function.arg_attrs = ArrayAttr(updated)


# --------------------------------------------------------------------------- #
# Striped region ops: cascade.group and cascade.for_stripes
# --------------------------------------------------------------------------- #


def tiling_offset_map(stripe_shape: Sequence[int], stripe_order: Sequence[int]) -> AffineMap:
    """Offset map of a non-overlapping tiling: `d_j * stripe_shape[stripe_order[j]]` on the
    striped axes, 0 elsewhere.

    E.g. shape [1, 4, 8, 8], order [1, 2] gives `(d0, d1) -> (0, d0 * 4, d1 * 8, 0)`.
    """
    results: list[AffineExpr] = [AffineExpr.constant(0) for _ in stripe_shape]
    for dim, axis in enumerate(stripe_order):
        results[axis] = AffineExpr.dimension(dim) * stripe_shape[axis]
    return AffineMap(len(stripe_order), 0, tuple(results))


def count_stripes(
    full_shape: Sequence[int], stripe_shape: Sequence[int], stripe_order: Sequence[int]
) -> tuple[int, ...]:
    """`ceil(extent / stripe)` for every striped axis, in `stripe_order` order."""
    return tuple(-(-full_shape[axis] // stripe_shape[axis]) for axis in stripe_order)


class StripedRegionOp(IRDLOperation):
    """Fields, helpers and verification shared by `cascade.group` and `cascade.for_stripes`.

    Not registered itself. See the module docstring for the tiling semantics.
    """

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")

    stripe_shape = prop_def(DenseArrayBase[I64])
    stripe_order = prop_def(DenseArrayBase[I64])
    num_stripes = prop_def(DenseArrayBase[I64])
    weights = opt_prop_def(WeightsModeAttr)
    peak_sram_bytes = opt_prop_def(IntegerAttr[I64])
    cycles = opt_prop_def(IntegerAttr[I64])

    traits = traits_def(RecursiveMemoryEffect())

    def __init__(
        self,
        inputs: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute],
        body: Region | Block,
        *,
        stripe_shape: Sequence[int],
        stripe_order: Sequence[int],
        num_stripes: Sequence[int],
        weights: WeightsMode | None = None,
        peak_sram_bytes: int | None = None,
        cycles: int | None = None,
    ):
        properties: dict[str, Attribute] = {
            "stripe_shape": _i64_array(stripe_shape),
            "stripe_order": _i64_array(stripe_order),
            "num_stripes": _i64_array(num_stripes),
        }
        if weights is not None:
            properties["weights"] = WeightsModeAttr(weights)
        if peak_sram_bytes is not None:
            properties["peak_sram_bytes"] = _i64(peak_sram_bytes)
        if cycles is not None:
            properties["cycles"] = _i64(cycles)
        if isinstance(body, Block):
            body = Region(body)
        super().__init__(
            operands=[inputs],
            result_types=[result_types],
            regions=[body],
            properties=properties,
        )

    # ----------------------------------------------------------------- accessors

    @property
    def body_block(self) -> Block:
        """The single block of the body."""
        return self.body.block

    @property
    def yield_op(self) -> YieldOp:
        """The terminator of the body."""
        last = self.body.block.last_op
        if not isinstance(last, YieldOp):
            raise ValueError(f"{self.name} body is not terminated by cascade.yield")
        return last

    @property
    def input_args(self) -> tuple[SSAValue, ...]:
        """The body block arguments that stand for the operands."""
        args = self.body.block.args
        return tuple(args[len(args) - len(self.inputs) :])

    @property
    def output_type(self) -> TensorType:
        """Type of the primary output (result 0), the one the tiling describes."""
        output_type = self.outputs[0].type
        if not isinstance(output_type, TensorType):
            raise ValueError(f"{self.name} result 0 is not a tensor: {output_type}")
        return output_type

    def get_stripe_shape(self) -> tuple[int, ...]:
        """Output stripe shape, one entry per axis of result 0."""
        return self.stripe_shape.get_values()

    def get_stripe_order(self) -> tuple[int, ...]:
        """Striped axes, outer first."""
        return self.stripe_order.get_values()

    def get_num_stripes(self) -> tuple[int, ...]:
        """Stripes per striped axis, in `stripe_order` order."""
        return self.num_stripes.get_values()

    def get_weights_mode(self) -> WeightsMode | None:
        """Weights mode, None if not decided."""
        return None if self.weights is None else self.weights.data

    def get_peak_sram_bytes(self) -> int | None:
        """Predicted peak SRAM usage in bytes, None if unknown."""
        return None if self.peak_sram_bytes is None else self.peak_sram_bytes.value.data

    def get_cycles(self) -> int | None:
        """Predicted cycles, None if unknown."""
        return None if self.cycles is None else self.cycles.value.data

    def rolling_axis(self) -> int | None:
        """The outer striped axis (the one rolling buffers roll along), None if unstriped."""
        order = self.get_stripe_order()
        return order[0] if order else None

    def total_stripes(self) -> int:
        """Number of stripes executed."""
        return math.prod(self.get_num_stripes())

    def stripe_indices(self) -> Iterator[tuple[int, ...]]:
        """All stripe indices in execution order (lexicographic, outer axis first)."""
        return itertools.product(*(range(count) for count in self.get_num_stripes()))

    def output_offset_map(self) -> AffineMap:
        """Offset map of the output tiling (see `tiling_offset_map`)."""
        return tiling_offset_map(self.get_stripe_shape(), self.get_stripe_order())

    def output_stripe(self) -> StripeAttr:
        """Stripe map of result 0 (no buffer mode: outputs are stored in full)."""
        return StripeAttr(self.get_stripe_shape(), self.output_offset_map())

    def striped_ops(self) -> Iterator[tuple[Operation, StripeAttr]]:
        """The body ops that carry a stripe map, with it, in program order."""
        for op in self.body.block.ops:
            if (stripe := get_stripe(op)) is not None:
                yield op, stripe

    # ----------------------------------------------------------------- verification

    def _num_index_args(self) -> int:
        """Number of leading stripe-index block arguments (0 for a group)."""
        return 0

    def verify_(self) -> None:
        self._verify_block_args()
        self._verify_yield()
        self._verify_tiling()
        self._verify_estimates()
        self._verify_body_annotations()

    def _verify_block_args(self) -> None:
        args = self.body.block.args
        num_index = self._num_index_args()
        if len(args) != num_index + len(self.inputs):
            raise VerifyException(
                f"body has {_plural(len(args), 'argument')} but expected "
                f"{num_index + len(self.inputs)} ({_plural(num_index, 'stripe index', 'stripe indices')} "
                f"and {_plural(len(self.inputs), 'input')})"
            )
        for position, arg in enumerate(args[:num_index]):
            if not isinstance(arg.type, IndexType):
                raise VerifyException(
                    f"body argument {position} is a stripe index and must have type index, got {arg.type}"
                )
        for position, (arg, operand) in enumerate(zip(args[num_index:], self.inputs, strict=True)):
            if arg.type != operand.type:
                raise VerifyException(
                    f"body argument {num_index + position} has type {arg.type} but operand "
                    f"{position} has type {operand.type}"
                )

    def _verify_yield(self) -> None:
        last = self.body.block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("body must be terminated by cascade.yield")
        if len(last.values) != len(self.outputs):
            raise VerifyException(
                f"cascade.yield returns {_plural(len(last.values), 'value')} but the op has "
                f"{_plural(len(self.outputs), 'result')}"
            )
        for position, (value, result) in enumerate(zip(last.values, self.outputs, strict=True)):
            if value.type != result.type:
                raise VerifyException(
                    f"cascade.yield operand {position} has type {value.type} but result "
                    f"{position} has type {result.type}"
                )

    def _verify_tiling(self) -> None:
        if not self.outputs:
            raise VerifyException(f"{self.name} must have at least one result")
        output_type = _static_tensor_type(self.outputs[0].type)
        if output_type is None:
            raise VerifyException(f"result 0 must be a statically shaped tensor, got {self.outputs[0].type}")
        full_shape = output_type.get_shape()
        stripe_shape = self.get_stripe_shape()
        order = self.get_stripe_order()
        counts = self.get_num_stripes()
        if len(stripe_shape) != len(full_shape):
            raise VerifyException(
                f"stripe_shape has {len(stripe_shape)} entries but result 0 ({output_type}) has rank {len(full_shape)}"
            )
        for axis, (size, extent) in enumerate(zip(stripe_shape, full_shape, strict=True)):
            if not 1 <= size <= extent:
                raise VerifyException(
                    f"stripe_shape[{axis}] = {size} must be in [1, {extent}] (the extent of result 0)"
                )
        for axis in order:
            if not 0 <= axis < len(full_shape):
                raise VerifyException(f"stripe_order axis {axis} is out of range for rank {len(full_shape)}")
        if len(set(order)) != len(order):
            raise VerifyException(f"stripe_order has a repeated axis: {list(order)}")
        for axis, (size, extent) in enumerate(zip(stripe_shape, full_shape, strict=True)):
            if axis not in order and size != extent:
                raise VerifyException(
                    f"axis {axis} is not in stripe_order, so its stripe size must be the "
                    f"full extent {extent}, got {size}"
                )
        if len(counts) != len(order):
            raise VerifyException(f"num_stripes has {len(counts)} entries but stripe_order has {len(order)}")
        expected = count_stripes(full_shape, stripe_shape, order)
        for axis, count, want in zip(order, counts, expected, strict=True):
            if count != want:
                raise VerifyException(
                    f"num_stripes for axis {axis} is {count} but ceil({full_shape[axis]} / "
                    f"{stripe_shape[axis]}) = {want}"
                )

    def _verify_estimates(self) -> None:
        for name, value in (
            ("peak_sram_bytes", self.get_peak_sram_bytes()),
            ("cycles", self.get_cycles()),
        ):
            if value is not None and value < 0:
                raise VerifyException(f"{name} must be non-negative, got {value}")

    def _verify_body_annotations(self) -> None:
        yielded = set(self.yield_op.values)
        num_dims = len(self.get_stripe_order())
        for position, op in enumerate(self.body.block.ops):
            where = f"body op #{position} ({op.name})"
            if PLACEMENT_ATTR in op.attributes and not isinstance(op.attributes[PLACEMENT_ATTR], PlacementAttr):
                raise VerifyException(f"'{PLACEMENT_ATTR}' of {where} must be a #cascade.placement attribute")
            if STRIPE_ATTR in op.attributes:
                _verify_stripe_annotation(op, where, num_dims, yielded)


def _verify_stripe_annotation(op: Operation, where: str, num_dims: int, yielded: set[SSAValue]) -> None:
    stripe = op.attributes[STRIPE_ATTR]
    if not isinstance(stripe, StripeAttr):
        raise VerifyException(f"'{STRIPE_ATTR}' of {where} must be a #cascade.stripe attribute")
    if len(op.results) != 1:
        raise VerifyException(f"'{STRIPE_ATTR}' needs a single-result op, {where} has {len(op.results)} results")
    result = op.results[0]
    result_type = _static_tensor_type(result.type)
    if result_type is None:
        raise VerifyException(f"'{STRIPE_ATTR}' of {where} needs a statically shaped tensor result, got {result.type}")
    if stripe.rank != result_type.get_num_dims():
        raise VerifyException(
            f"stripe shape of {where} has rank {stripe.rank} but its result {result_type} has "
            f"rank {result_type.get_num_dims()}"
        )
    if stripe.num_stripe_dims != num_dims:
        raise VerifyException(
            f"stripe offset map of {where} has {_plural(stripe.num_stripe_dims, 'dim')} but the cascade "
            f"has {_plural(num_dims, 'striped axis', 'striped axes')}"
        )
    mode = stripe.get_mode()
    if result in yielded and mode is not None:
        raise VerifyException(
            f"result of {where} leaves the cascade and is stored in full: its stripe must "
            f"have no buffer mode, got {mode.value}"
        )
    if result not in yielded and mode is None:
        raise VerifyException(f"intermediate {where} needs a buffer mode (rolling or recompute) in its stripe")


# ---- custom syntax shared by group and for_stripes --------------------------------------


def _print_striped_header(printer: Printer, op: StripedRegionOp) -> None:
    """Prints ` ins(%a = %x : t, ...) -> t stripe_shape [...] ... attributes {...} `."""
    printer.print_string(" ins(")
    printer.print_list(
        zip(op.input_args, op.inputs, strict=False),
        lambda pair: _print_input_binding(printer, pair[0], pair[1]),
    )
    printer.print_string(") -> ")
    if len(op.outputs) == 1:
        printer.print_attribute(op.outputs[0].type)
    else:
        with printer.in_parens():
            printer.print_list(op.result_types, printer.print_attribute)
    printer.print_string(" stripe_shape ")
    _print_int_list(printer, op.get_stripe_shape())
    printer.print_string(" stripe_order ")
    _print_int_list(printer, op.get_stripe_order())
    printer.print_string(" num_stripes ")
    _print_int_list(printer, op.get_num_stripes())
    if (weights := op.get_weights_mode()) is not None:
        printer.print_string(f" weights {weights.value}")
    if (peak := op.get_peak_sram_bytes()) is not None:
        printer.print_string(f" peak_sram_bytes {peak}")
    if (cycles := op.get_cycles()) is not None:
        printer.print_string(f" cycles {cycles}")
    printer.print_op_attributes(op.attributes, print_keyword=True)
    printer.print_string(" ")
    printer.print_region(op.body, print_entry_block_args=False)


def _print_input_binding(printer: Printer, arg: SSAValue, operand: SSAValue) -> None:
    printer.print_ssa_value(arg)
    printer.print_string(" = ")
    printer.print_ssa_value(operand)
    printer.print_string(" : ")
    printer.print_attribute(operand.type)


def _parse_striped_op(
    cls: type[StripedRegionOp], parser: Parser, index_args: Sequence[Parser.Argument]
) -> StripedRegionOp:
    """Parses everything after the stripe indices (see `_print_striped_header`)."""
    parser.parse_keyword("ins")
    bindings = parser.parse_comma_separated_list(parser.Delimiter.PAREN, lambda: _parse_input_binding(parser))
    input_args = [arg for arg, _ in bindings]
    inputs = [operand for _, operand in bindings]
    parser.parse_punctuation("->")
    if parser.parse_optional_punctuation("(") is not None:
        result_types: list[Attribute] = []
        if parser.parse_optional_punctuation(")") is None:
            result_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            parser.parse_punctuation(")")
    else:
        result_types = [parser.parse_type()]
    parser.parse_keyword("stripe_shape")
    stripe_shape = _parse_int_list(parser)
    parser.parse_keyword("stripe_order")
    stripe_order = _parse_int_list(parser)
    parser.parse_keyword("num_stripes")
    num_stripes = _parse_int_list(parser)
    weights = None
    if parser.parse_optional_keyword("weights") is not None:
        weights = parser.parse_str_enum(WeightsMode)
    peak = None
    if parser.parse_optional_keyword("peak_sram_bytes") is not None:
        peak = parser.parse_integer(allow_boolean=False)
    cycles = None
    if parser.parse_optional_keyword("cycles") is not None:
        cycles = parser.parse_integer(allow_boolean=False)
    attributes = parser.parse_optional_attr_dict_with_keyword()
    body = parser.parse_region((*index_args, *input_args))
    op = cls(
        inputs,
        result_types,
        body,
        stripe_shape=stripe_shape,
        stripe_order=stripe_order,
        num_stripes=num_stripes,
        weights=weights,
        peak_sram_bytes=peak,
        cycles=cycles,
    )
    if attributes is not None:
        op.attributes |= attributes.data
    return op


def _parse_input_binding(parser: Parser) -> tuple[Parser.Argument, SSAValue]:
    unresolved_arg = parser.parse_argument(expect_type=False)
    parser.parse_punctuation("=")
    unresolved_operand: UnresolvedOperand = parser.parse_unresolved_operand()
    parser.parse_punctuation(":")
    operand_type = parser.parse_type()
    operand = parser.resolve_operand(unresolved_operand, operand_type)
    return unresolved_arg.resolve(operand_type), operand


@irdl_op_definition
class GroupOp(StripedRegionOp):
    """A cascade: a region of operators executed stripe by stripe.

    Operands are the tensors flowing into the cascade, results the tensors leaving it; the
    body's block arguments stand for the operands (same types) and its `cascade.yield` returns
    the results. The tiling (`stripe_shape`, `stripe_order`, `num_stripes`) describes result 0;
    see the module docstring. Every single-result op of the body may carry its stripe map in
    `cascade.stripe` (one stripe-index dim per striped axis), with a buffer mode for
    intermediates and none for yielded values. Values defined above the group (e.g. weight
    constants) may be used directly in the body; feature maps come in as operands.

    Optional planner annotations: `weights` (`sram`: weights copied to SRAM once; `stream`:
    re-read for every stripe), `peak_sram_bytes` and `cycles` (predicted, i64).

    Syntax::

        %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
                 stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4]
                 weights sram peak_sram_bytes 4096 cycles 1200 {
          ...
          cascade.yield %v : tensor<1x16x16x8xi8>
        }
    """

    name = "cascade.group"

    @classmethod
    def build_group(
        cls,
        inputs: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute],
        *,
        stripe_shape: Sequence[int],
        stripe_order: Sequence[int],
        weights: WeightsMode | None = None,
        peak_sram_bytes: int | None = None,
        cycles: int | None = None,
    ) -> GroupOp:
        """A group with an empty body whose block arguments mirror `inputs`.

        `num_stripes` is derived from result 0's shape. The caller fills the body and adds
        the `cascade.yield`.
        """
        full_shape = _tensor_shape(result_types[0])
        block = Block(arg_types=[SSAValue.get(value).type for value in inputs])
        return cls(
            inputs,
            result_types,
            block,
            stripe_shape=stripe_shape,
            stripe_order=stripe_order,
            num_stripes=count_stripes(full_shape, stripe_shape, stripe_order),
            weights=weights,
            peak_sram_bytes=peak_sram_bytes,
            cycles=cycles,
        )

    def print(self, printer: Printer) -> None:
        _print_striped_header(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> GroupOp:
        op = _parse_striped_op(cls, parser, ())
        assert isinstance(op, GroupOp)
        return op


@irdl_op_definition
class ForStripesOp(StripedRegionOp):
    """The explicit stripe loop of a cascade (the form after the rolling-buffer pass).

    Same operands, results, tiling and annotations as `cascade.group`, but the body block
    starts with one `index` argument per striped axis (the stripe index, outer axis first),
    followed by the arguments standing for the operands. The body executes once per stripe
    index, in lexicographic order (`stripe_indices()`), i.e. like nested loops
    `for i0 in range(num_stripes[0]): for i1 in range(num_stripes[1]): ...`.

    In one iteration every compute op computes only the region given by its `cascade.stripe`
    map evaluated at the current stripe index (clipped to the tensor), reading its operands
    from wherever they are stored. Storage persists across iterations: rolling intermediates
    are stored in the `cascade.rolling_buffer` that wraps them (its k rows hold the window
    needed by the consumers), recompute intermediates in a stripe-sized buffer, and yielded
    values in full tensors that the stripes fill. The stripe-index arguments let ops compute
    addresses (e.g. `affine.apply`) from the stripe index.

    Syntax::

        %r = cascade.for_stripes (%i) ins(%a = %x : tensor<1x16x16x8xi8>)
                 -> tensor<1x16x16x8xi8> stripe_shape [1, 4, 16, 8] stripe_order [1]
                 num_stripes [4] {
          ...
          cascade.yield %v : tensor<1x16x16x8xi8>
        }
    """

    name = "cascade.for_stripes"

    @classmethod
    def build_loop(
        cls,
        inputs: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute],
        *,
        stripe_shape: Sequence[int],
        stripe_order: Sequence[int],
        weights: WeightsMode | None = None,
        peak_sram_bytes: int | None = None,
        cycles: int | None = None,
    ) -> ForStripesOp:
        """A loop with an empty body: one index argument per striped axis, then arguments
        mirroring `inputs`. `num_stripes` is derived from result 0's shape."""
        full_shape = _tensor_shape(result_types[0])
        block = Block(
            arg_types=[
                *(IndexType() for _ in stripe_order),
                *(SSAValue.get(value).type for value in inputs),
            ]
        )
        return cls(
            inputs,
            result_types,
            block,
            stripe_shape=stripe_shape,
            stripe_order=stripe_order,
            num_stripes=count_stripes(full_shape, stripe_shape, stripe_order),
            weights=weights,
            peak_sram_bytes=peak_sram_bytes,
            cycles=cycles,
        )

    @property
    def stripe_index_args(self) -> tuple[SSAValue, ...]:
        """The stripe-index block arguments, outer striped axis first."""
        return tuple(self.body.block.args[: self._num_index_args()])

    def _num_index_args(self) -> int:
        return len(self.stripe_order)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        with printer.in_parens():
            printer.print_list(self.stripe_index_args, printer.print_ssa_value)
        _print_striped_header(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> ForStripesOp:
        unresolved = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False)
        )
        index_args = [arg.resolve(IndexType()) for arg in unresolved]
        op = _parse_striped_op(cls, parser, index_args)
        assert isinstance(op, ForStripesOp)
        return op


def _tensor_shape(attr: Attribute) -> tuple[int, ...]:
    if not isinstance(attr, TensorType):
        raise ValueError(f"expected a tensor type, got {attr}")
    return attr.get_shape()


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of `cascade.group` and `cascade.for_stripes`: the values leaving the
    cascade, one per result, with the result types.

    Syntax: `cascade.yield %a, %b : tensor<...>, tensor<...>`
    """

    name = "cascade.yield"

    values = var_operand_def()

    assembly_format = "attr-dict ($values^ `:` type($values))?"

    traits = lazy_traits_def(lambda: (IsTerminator(), ReturnLike(), HasParent(GroupOp, ForStripesOp)))

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[values])


# --------------------------------------------------------------------------- #
# cascade.rolling_buffer
# --------------------------------------------------------------------------- #


def rolling_index_map(rank: int, axis: int, depth: int) -> AffineMap:
    """`(d0, ..., d{rank-1}) -> (d0, ..., d{axis} mod depth, ...)`: identity except the
    rolling axis, which wraps modulo `depth`.

    For depth 1 the rolling result is the constant 0, which is how MLIR canonicalises
    `d mod 1`.
    """
    results: list[AffineExpr] = [AffineDimExpr(dim) for dim in range(rank)]
    results[axis] = (
        AffineConstantExpr(0)
        if depth == 1
        else AffineBinaryOpExpr(AffineBinaryOpKind.Mod, AffineDimExpr(axis), AffineConstantExpr(depth))
    )
    return AffineMap(rank, 0, tuple(results))


def _rolling_modulus(expr: AffineExpr, position: int) -> int | None:
    """The modulus if `expr` is `d{position} mod <constant>` (or the constant 0, MLIR's
    canonical `d mod 1`), else None."""
    if expr == AffineConstantExpr(0):
        return 1
    if not isinstance(expr, AffineBinaryOpExpr) or expr.kind != AffineBinaryOpKind.Mod:
        return None
    if expr.lhs != AffineDimExpr(position) or not isinstance(expr.rhs, AffineConstantExpr):
        return None
    return expr.rhs.value


@irdl_op_definition
class RollingBufferOp(IRDLOperation):
    """Stores an intermediate of a cascade in a rolling buffer of `depth` (k) rows.

    The result stands for the same logical tensor as `source` (same type), so consumers use it
    unchanged; only the storage is folded: the buffer holds k entries along the rolling axis
    and the full extent along every other axis (`storage_shape()`). `index_map` maps a logical
    coordinate to its storage coordinate: identity except `d{axis} mod k` on the rolling axis,
    e.g. `(d0, d1, d2, d3) -> (d0, d1 mod 3, d2, d3)` for rows of an NHWC tensor. Inside a
    cascade the rolling axis is the outer striped axis. The producer writes each stripe's new
    rows at their wrapped positions; consumers read a window of at most k rows.

    `placement` (optional) is where the buffer lives once allocated; its size is at least
    `storage_bytes()`.

    Syntax::

        %b = cascade.rolling_buffer %a depth 3
                 index_map affine_map<(d0, d1, d2, d3) -> (d0, d1 mod 3, d2, d3)>
                 placement #cascade.placement<sram, 0, 384> : tensor<1x16x16x8xi8>
    """

    name = "cascade.rolling_buffer"

    T: ClassVar = VarConstraint("T", base(TensorType))

    source = operand_def(T)
    result = result_def(T)

    depth = prop_def(IntegerAttr[I64])
    index_map = prop_def(AffineMapAttr)
    placement = opt_prop_def(PlacementAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$source `depth` $depth `index_map` $index_map (`placement` qualified($placement)^)? "
        "attr-dict `:` type($source)"
    )

    def __init__(
        self,
        source: SSAValue | Operation,
        depth: int,
        axis: int,
        placement: PlacementAttr | None = None,
    ):
        source_type = SSAValue.get(source).type
        rank = len(_tensor_shape(source_type))
        properties: dict[str, Attribute] = {
            "depth": _i64(depth),
            "index_map": AffineMapAttr(rolling_index_map(rank, axis, depth)),
        }
        if placement is not None:
            properties["placement"] = placement
        super().__init__(operands=[source], result_types=[source_type], properties=properties)

    # ----------------------------------------------------------------- accessors

    def get_depth(self) -> int:
        """k: the number of entries kept along the rolling axis."""
        return self.depth.value.data

    def get_index_map(self) -> AffineMap:
        """Logical coordinate -> storage coordinate."""
        return self.index_map.data

    @property
    def logical_type(self) -> TensorType:
        """The full tensor type the buffer stands for."""
        logical_type = self.result.type
        if not isinstance(logical_type, TensorType):
            raise ValueError(f"rolling buffer of a non-tensor: {logical_type}")
        return logical_type

    def rolling_axis(self) -> int:
        """The axis wrapped modulo k (derived from `index_map`)."""
        for position, expr in enumerate(self.get_index_map().results):
            if _rolling_modulus(expr, position) is not None:
                return position
        raise ValueError(f"index_map {self.get_index_map()} has no rolling axis")

    def storage_shape(self) -> tuple[int, ...]:
        """Shape of the storage: the logical shape with k entries on the rolling axis."""
        shape = list(self.logical_type.get_shape())
        shape[self.rolling_axis()] = self.get_depth()
        return tuple(shape)

    def storage_bytes(self) -> int:
        """Bytes of storage the buffer needs."""
        return math.prod(self.storage_shape()) * element_bytes(self.logical_type)

    def storage_index(self, logical_index: Sequence[int]) -> tuple[int, ...]:
        """Storage coordinate of a logical element (`index_map` evaluated)."""
        return self.get_index_map().eval(logical_index, [])

    # ----------------------------------------------------------------- verification

    def verify_(self) -> None:
        logical_type = _static_tensor_type(self.source.type)
        if logical_type is None:
            raise VerifyException(f"rolling buffer needs a statically shaped tensor, got {self.source.type}")
        shape = logical_type.get_shape()
        depth = self.get_depth()
        index_map = self.get_index_map()
        if depth < 1:
            raise VerifyException(f"depth must be >= 1, got {depth}")
        if index_map.num_dims != len(shape) or index_map.num_symbols != 0 or len(index_map.results) != len(shape):
            raise VerifyException(
                f"index_map must have {len(shape)} dims, no symbols and {len(shape)} results "
                f"(the rank of {logical_type}), got {index_map}"
            )
        axis = self._verify_index_map_form(index_map, depth)
        if depth > shape[axis]:
            raise VerifyException(f"depth {depth} exceeds the extent {shape[axis]} of rolling axis {axis}")
        self._verify_against_cascade(axis)
        if self.placement is not None and self.placement.get_size() < self.storage_bytes():
            raise VerifyException(
                f"placement size {self.placement.get_size()} is smaller than the "
                f"{self.storage_bytes()} bytes of the buffer"
            )

    @staticmethod
    def _verify_index_map_form(index_map: AffineMap, depth: int) -> int:
        """Checks that the map is identity except one `d{axis} mod depth`; returns axis."""
        rolled: list[int] = []
        for position, expr in enumerate(index_map.results):
            if expr == AffineDimExpr(position):
                continue
            modulus = _rolling_modulus(expr, position)
            if modulus is None:
                raise VerifyException(
                    f"index_map result {position} must be d{position} or d{position} mod {depth}, got {expr}"
                )
            if modulus != depth:
                raise VerifyException(f"index_map wraps axis {position} modulo {modulus} but depth is {depth}")
            rolled.append(position)
        if not rolled:
            raise VerifyException(f"index_map must wrap exactly one axis modulo {depth}, got {index_map}")
        if len(rolled) > 1:
            raise VerifyException(f"index_map must wrap exactly one axis, got axes {rolled} in {index_map}")
        return rolled[0]

    def _verify_against_cascade(self, axis: int) -> None:
        parent = self.parent_op()
        if isinstance(parent, StripedRegionOp):
            outer = parent.rolling_axis()
            if outer is not None and outer != axis:
                raise VerifyException(
                    f"rolling axis {axis} is not the outer striped axis {outer} of the enclosing {parent.name}"
                )
        producer = self.source.owner
        if isinstance(producer, Operation) and (stripe := get_stripe(producer)) is not None:
            if stripe.get_mode() == BufferMode.RECOMPUTE:
                raise VerifyException(
                    f"source is marked recompute by its producer ({producer.name}); only "
                    "rolling intermediates are stored in rolling buffers"
                )


Cascade = Dialect(
    "cascade",
    [GroupOp, ForStripesOp, YieldOp, RollingBufferOp],
    [StripeAttr, PlacementAttr, BufferModeAttr, MemoryRegionAttr, WeightsModeAttr],
)
"""The `cascade` dialect."""
