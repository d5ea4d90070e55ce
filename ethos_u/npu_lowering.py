"""Per-operation lowering of `nn` operators to `ethosu` commands, one output stripe at a time.

The scheduled IR (stripes, rolling buffers, SRAM offsets) decides *where* every tensor lives
and *which* box of the output each command produces; this module turns one `nn` operator, the
placement of each of its feature maps and one output stripe into the `ethosu` op(s) that compute
that stripe:

* the input box and the per-stripe padding come from the operator's access relation
  (`op.access_relations()`), so the lowering agrees with the planner by construction;
* feature maps get the tile box and strides of their placement (full-tensor strides, so a
  stripe is a window into the tensor; a Y-rolling buffer wraps through tile 2, see
  `rolling_tiles`);
* the block config is one of `npu_find_block_configs`, and the weights are encoded with
  `npu_encode_weights` for exactly that block depth and traversal;
* the per-channel bias/scale records are packed as Vela's `npu_encode_bias` packs them (all
  channels at once, in numpy) from TFLite's exact requantization (`quantize_multiplier`, the
  one the `nn` interpreter uses);
* fused activations become the clamp Vela emits, expressed so that Vela quantizes it back to
  exactly TFLite's `CalculateActivationRangeQuantized` bounds.

Supported (`SUPPORTED_OPS`): conv2d, depthwise_conv2d (depth multiplier 1), pool2d max/avg,
add/sub/mul/minimum/maximum (IFM2 broadcast along H, W or C), fully_connected, rescale,
tanh/sigmoid/leaky_relu/hard_swish/relu (8-bit LUT), mean over H and W (one depthwise
convolution with TFLite's folded multiplier), pad of H and W (a copy plus border fills) and 2x
nearest resize (IFM upscaling). Everything else raises `NpuLoweringError` (softmax stays on the
CPU). On the two-core Ethos-U65-512 each weight slice is split as Vela splits it: core k gets
every second output channel from k, its own bias records and its own weight stream encoded at
half the block depth (`ethosu.cores`).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Operation, SSAValue

from cascade.dialects import ethosu, nn
from cascade.dialects.access import AccessRelation, Region
from cascade.interpreter.quantization import (
    activation_range,
    quantize_multiplier,
    round_half_away_from_zero_array,
)
from cascade.parallel import split_map
from cascade.passes.planner.graph import OpInfo

__all__ = [
    "SUPPORTED_OPS",
    "Box",
    "ConstantBlob",
    "LoweredStripe",
    "NpuLoweringError",
    "Placement",
    "bias_records",
    "choose_traversal",
    "lower_op",
    "rolling_tiles",
]

SUPPORTED_OPS: tuple[type[Operation], ...] = (
    nn.Conv2DOp,
    nn.DepthwiseConv2DOp,
    nn.Pool2DOp,
    nn.AddOp,
    nn.SubOp,
    nn.MulOp,
    nn.MinimumOp,
    nn.MaximumOp,
    nn.FullyConnectedOp,
    nn.RescaleOp,
    nn.TanhOp,
    nn.SigmoidOp,
    nn.LeakyReluOp,
    nn.HardSwishOp,
    nn.ReluOp,
    nn.MeanOp,
    nn.PadOp,
    nn.ResizeOp,
)

LUT_OPS: tuple[type[Operation], ...] = (nn.TanhOp, nn.SigmoidOp, nn.LeakyReluOp, nn.HardSwishOp, nn.ReluOp)
"""Unary int8 ops lowered to a table lookup: the table is the reference kernel evaluated on
all 256 inputs, so the NPU result is the reference result by construction."""

ALIGNMENT = 16
"""Weight, bias and DMA ranges must start and end on 16 bytes (Vela's `check_length`)."""


class NpuLoweringError(ValueError):
    """The operator (or this stripe of it) has no lowering to NPU commands."""


def _round_up(value: int, quantum: int) -> int:
    return -(-value // quantum) * quantum


def _pad16(data: bytes | bytearray) -> bytes:
    return bytes(data) + bytes(_round_up(len(data), ALIGNMENT) - len(data))


# --------------------------------------------------------------------------- #
# Geometry: boxes, placements, tiles
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Box:
    """A box of an `[height, width, depth]` feature map: rows, columns and channels."""

    y: int
    x: int
    c: int
    height: int
    width: int
    depth: int

    @staticmethod
    def full(shape: Sequence[int]) -> Box:
        height, width, depth = shape
        return Box(0, 0, 0, height, width, depth)

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.height, self.width, self.depth)

    def to_region(self, rank: int) -> Region:
        """The box as a region of a rank-4 NHWC tensor (batch 1) or a rank-2 `[N, K]` one."""
        if rank == 4:
            return Region((0, self.y, self.x, self.c), (1, self.height, self.width, self.depth))
        if rank == 2:
            return Region((self.y, self.c), (self.height, self.depth))
        raise NpuLoweringError(f"no [height, width, depth] view of a rank-{rank} tensor")

    @staticmethod
    def from_region(region: Region) -> Box:
        if region.rank == 4:
            if region.offset[0] != 0 or region.shape[0] != 1:
                raise NpuLoweringError("the NPU lowering handles batch 1 only")
            return Box(*region.offset[1:], *region.shape[1:])
        if region.rank == 2:  # [N, K] is viewed as N rows of one K-channel column
            return Box(region.offset[0], 0, region.offset[1], region.shape[0], 1, region.shape[1])
        raise NpuLoweringError(f"no [height, width, depth] view of a rank-{region.rank} region")


def hwc_shape(shape: Sequence[int]) -> tuple[int, int, int]:
    """The `[height, width, depth]` view of an NHWC (batch 1) or `[N, K]` tensor shape."""
    if len(shape) == 4:
        if shape[0] != 1:
            raise NpuLoweringError("the NPU lowering handles batch 1 only")
        return (shape[1], shape[2], shape[3])
    if len(shape) == 2:
        return (shape[0], 1, shape[1])
    raise NpuLoweringError(f"no [height, width, depth] view of shape {list(shape)}")


@dataclass(frozen=True)
class Placement:
    """Where a feature map lives: region, base address, layout and the stored shape.

    `shape` is the full tensor `[height, width, depth]`. With `rolling_rows = k` the tensor is
    held in a Y-rolling buffer of k rows (`(y, x, c) -> (y mod k, x, c)`) at `address`; the
    buffer is `k` rows of the tensor's width and depth. With `rolling_columns = k`, an X-rolling
    buffer (`(y, x, c) -> (y, x mod k, c)`): every row of the tensor, each `k` columns wide.
    """

    region: int
    address: int
    shape: tuple[int, int, int]
    layout: ethosu.Layout = ethosu.Layout.NHWC
    rolling_rows: int | None = None
    data_type: ethosu.DataType = ethosu.DataType.INT8
    rolling_columns: int | None = None

    def __post_init__(self) -> None:
        if self.rolling_rows is not None and self.rolling_columns is not None:
            raise NpuLoweringError("a buffer rolls along rows or along columns, not both")

    @property
    def element_size(self) -> int:
        return self.data_type.size_in_bytes

    @property
    def strides(self) -> tuple[int, int, int]:
        """Byte strides `[y, x, c]` of the stored tensor (Vela's `get_strides` defaults): a row
        of an X-rolling buffer is its `k` columns."""
        _, width, depth = self.shape
        width = width if self.rolling_columns is None else self.rolling_columns
        e = self.element_size
        if self.layout == ethosu.Layout.NHWC:
            return (width * depth * e, depth * e, e)
        return (width * _round_up(depth, 16) * e, 16 * e, 16 * width * e)

    @property
    def stored_rows(self) -> int:
        return self.shape[0] if self.rolling_rows is None else self.rolling_rows

    @property
    def size(self) -> int:
        """Bytes the placement occupies."""
        return self.stored_rows * self.strides[0]

    def column_offset(self, x: int, c: int) -> int:
        """Byte offset of column x, channel c within a row (NHCWB16 needs c % 16 == 0)."""
        _, stride_x, stride_c = self.strides
        if self.layout == ethosu.Layout.NHWC:
            return x * stride_x + c * self.element_size
        if c % 16:
            raise NpuLoweringError(f"an NHCWB16 box must start on a 16-channel brick, not channel {c}")
        return x * stride_x + (c // 16) * stride_c

    def tiles(self, box: Box) -> ethosu.TileBoxAttr:
        """The tile box of `box`: one tile, or two when the box wraps a rolling buffer."""
        return ethosu.TileBoxAttr.interned(*self._tile_values(box))

    def _tile_values(self, box: Box) -> tuple[int, ...]:
        """`tiles(box)` as the plain `TileBoxAttr.FIELDS` values."""
        if self.rolling_columns is not None:
            return self._column_tile_values(box)
        column = self.column_offset(box.x, box.c)
        if self.rolling_rows is None:
            address = self.address + box.y * self.strides[0] + column
            return (box.height, box.height, box.width, address, 0, 0, 0)  # TileBoxAttr.single
        return _rolling_tile_values(
            self.address, self.rolling_rows, box.y, box.height, self.strides[0], box.width, column
        )

    def _column_tile_values(self, box: Box) -> tuple[int, ...]:
        """The tiles of `box` in an X-rolling buffer of k columns: tile 0 holds the columns
        before the wrap (`width_0` of them, from buffer column `box.x mod k`); if the box wraps,
        tile 1 (to its right, as tall) holds the rest from buffer column 0. E.g. k = 3 and box
        columns 4..6: tile 0 is buffer columns 1..2, tile 1 buffer column 0."""
        columns = self.rolling_columns
        assert columns is not None
        if not 0 < box.width <= columns:
            raise NpuLoweringError(f"a box of {box.width} columns does not fit a {columns}-column rolling buffer")
        start = box.x % columns
        width_0 = min(box.width, columns - start)
        row = self.address + box.y * self.strides[0]
        right = row + self.column_offset(0, box.c) if box.width > width_0 else 0
        return (box.height, box.height, width_0, row + self.column_offset(start, box.c), right, 0, 0)

    def feature_map(self, box: Box, quant: nn.QuantAttr | tuple[float | None, int] | None) -> ethosu.FeatureMapAttr:
        """The feature-map attribute of `box` (tensor coordinates) of this placement, shared
        between equal values: the stripes of a cascade revisit the same rolling-buffer rows and
        the same full tensors, and each new attribute is verified anew (~0.1 ms). On
        mbv2_100_224 (U55-128), 971 distinct feature maps serve 2,452."""
        if quant is None or isinstance(quant, tuple):
            quantization = quant
        else:
            quantization = (quant.scales[0], quant.zero_points[0])
        # 0.0 and -0.0 are equal memo keys but print differently (lowered scales are positive).
        zero_scale = quantization is not None and quantization[0] == 0
        build = _new_feature_map_attr if zero_scale else _shared_feature_map_attr
        tiles = self._tile_values(box)
        return build(self.data_type, self.region, box.shape, tiles, self.layout, quantization, self.strides)


def _new_feature_map_attr(
    data_type: ethosu.DataType,
    region: int,
    shape: tuple[int, int, int],
    tiles: tuple[int, ...],
    layout: ethosu.Layout,
    quantization: tuple[float | None, int] | None,
    strides: tuple[int, int, int],
) -> ethosu.FeatureMapAttr:
    """`FeatureMapAttr` of plain values (`tiles`: the `TileBoxAttr.FIELDS` values)."""
    return ethosu.FeatureMapAttr(
        data_type,
        region,
        shape,
        ethosu.TileBoxAttr.interned(*tiles),
        layout,
        quantization,
        strides=strides,
    )


_shared_feature_map_attr = lru_cache(maxsize=4096)(_new_feature_map_attr)


def rolling_tiles(
    base: int,
    rows: int,
    first_row: int,
    height: int,
    row_stride: int,
    width: int,
    column_offset: int = 0,
) -> ethosu.TileBoxAttr:
    """Tiles for rows `[first_row, first_row + height)` of a tensor kept in a Y-rolling buffer
    of `rows` rows at `base` (Vela's `Tensor.addresses_for_rolling_buffer`).

    Tile 0 holds the rows before the wrap (`height_0` of them, starting at buffer row
    `first_row mod rows`); if the box wraps, tile 2 holds the rest from the buffer start (an
    X-rolling buffer wraps through tile 1: `Placement._column_tile_values`). `column_offset` is
    the byte offset of the box's first column and channel within a row.
    """
    return ethosu.TileBoxAttr.interned(
        *_rolling_tile_values(base, rows, first_row, height, row_stride, width, column_offset)
    )


def _rolling_tile_values(
    base: int, rows: int, first_row: int, height: int, row_stride: int, width: int, column_offset: int
) -> tuple[int, int, int, int, int, int, int]:
    """`rolling_tiles` as the plain `TileBoxAttr.FIELDS` values."""
    if not 0 < height <= rows:
        raise NpuLoweringError(f"a box of {height} rows does not fit a {rows}-row rolling buffer")
    start = first_row % rows
    height_0 = min(height, rows - start)
    bottom = base + column_offset if height > height_0 else 0
    return (height_0, height_0, width, base + start * row_stride + column_offset, 0, bottom, 0)


# --------------------------------------------------------------------------- #
# Constants: weights and bias/scale records
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class ConstantBlob:
    """Encoded constant data (16-byte padded) and the range the commands read it from."""

    name: str
    data: bytes
    range: ethosu.AddressRangeAttr


def constant_value(value: SSAValue, constants: Mapping[SSAValue, np.ndarray] | None = None) -> np.ndarray:
    """The array of a constant operand: from `constants`, or its defining `arith.constant`."""
    if constants is not None and value in constants:
        return np.asarray(constants[value])
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        from cascade.interpreter.constants import constant_array

        return constant_array(owner.value)
    raise NpuLoweringError(f"operand {value.name_hint or value} is not a known constant")


def bias_records(
    bias: np.ndarray,
    input_scale: float,
    weight_scales: Sequence[float],
    output_scale: float,
) -> bytes:
    """The `npu_encode_bias` records of every output channel, padded to 16 bytes.

    Scale and shift reproduce TFLite's requantization exactly: `quantize_multiplier` of
    `double(in_s) * double(w_s[c]) / double(out_s)` (`PopulateConvolutionQuantizationParams`),
    and the NPU shift is `31 - shift` (the record's scale is a Q31 multiplier).
    Memoised on the values: a cascade emits the same records again at every stripe.
    """
    biases = np.asarray(bias, dtype=np.int64)
    if len(weight_scales) == len(biases):
        scales = np.asarray(weight_scales, dtype=np.float64)
    else:
        scales = np.array([float(weight_scales[channel]) for channel in range(len(biases))], dtype=np.float64)
    return _bias_records(biases.tobytes(), float(input_scale), scales.tobytes(), float(output_scale))


@lru_cache(maxsize=256)
def _bias_records(bias: bytes, input_scale: float, weight_scales: bytes, output_scale: float) -> bytes:
    biases = np.frombuffer(bias, dtype=np.int64)
    scales = np.frombuffer(weight_scales, dtype=np.float64)
    packed = _packed_bias_records(biases, input_scale, scales, output_scale)
    if packed is None:
        return _bias_records_per_channel(biases, input_scale, scales, output_scale)
    return _pad16(packed)


def _bias_records_per_channel(
    biases: np.ndarray, input_scale: float, weight_scales: np.ndarray, output_scale: float
) -> bytes:
    """The records one channel at a time through Vela's `npu_encode_bias`: the reference
    `_packed_bias_records` reproduces, and the path that raises on values it cannot pack."""
    from ethosu.vela.api import npu_encode_bias

    records = bytearray()
    for b, weight_scale in zip(biases, weight_scales.tolist(), strict=True):
        multiplier, shift = _npu_scale(input_scale * weight_scale / output_scale)
        records += npu_encode_bias(np.int64(b), multiplier, shift)
    return _pad16(records)


_BIAS_LIMIT = 1 << 39
"""Biases are signed 40-bit: [-2**39, 2**39)."""

_BIAS_RECORD = np.dtype([("bias", "<i8"), ("scale", "<u4"), ("shift", "u1")])
"""Little-endian fields from which a record's 10 bytes are cut: bias bytes 0-4, scale 5-8, shift 9."""


def _packed_bias_records(
    biases: np.ndarray, input_scale: float, weight_scales: np.ndarray, output_scale: float
) -> bytes | None:
    """`_bias_records_per_channel` (unpadded) for all channels at once, byte for byte, or None
    if a channel needs the per-channel path: a bias beyond 40 bits, a negative or non-finite
    scale, or a shift outside the 6-bit field (Vela asserts, `_npu_scale` raises).

    Each record is Vela's `encode_bias` layout, 80 bits little-endian: bias (40-bit two's
    complement, the low 5 bytes of the int64), scale (u32), shift (6 bits, top 2 bits 0).
    E.g. bias -1, scale 0x40000000, shift 38: `ff ff ff ff ff 00 00 00 40 26`.
    """
    with np.errstate(all="ignore"):
        # The same two IEEE double operations, in the same order, as the scalar path.
        reals = input_scale * weight_scales / output_scale
    if not (np.all(np.isfinite(reals)) and np.all(reals >= 0.0)):
        return None
    if np.any(biases < -_BIAS_LIMIT) or np.any(biases >= _BIAS_LIMIT):
        return None
    multipliers, npu_shifts = _npu_scales(reals)
    if np.any((npu_shifts < 0) | (npu_shifts >= 64)):
        return None
    fields = np.empty(len(biases), dtype=_BIAS_RECORD)
    fields["bias"] = biases
    fields["scale"] = multipliers
    fields["shift"] = npu_shifts
    # Each 13-byte field row: bias int64 (bytes 0-7), scale (8-11), shift (12); keep 0-4, 8-12.
    rows = fields.view(np.uint8).reshape(len(biases), _BIAS_RECORD.itemsize)
    return np.concatenate((rows[:, 0:5], rows[:, 8:13]), axis=1).tobytes()


def _npu_scales(reals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_npu_scale` of finite, non-negative reals, element-wise: int64 (scale, NPU shift);
    the shift of a zero scale is 0, others may lie outside 0-63 (the caller checks).

    `frexp` gives `q` in [0.5, 1), and `q * 2**31` is exact (a 53-bit mantissa scaled by a
    power of two), so rounding it half away from zero matches the scalar `quantize_multiplier`:
    e.g. 0.3 is `0.6 * 2**-1` and `0.6 * 2**31` is 1288490188.8, giving scale 1288490189 and
    NPU shift `31 - (-1) = 32`.
    """
    fractions, exponents = np.frexp(reals)
    fixed = round_half_away_from_zero_array(fractions * float(1 << 31)).astype(np.int64)
    # q rounded up to 2**31: halve it and shift one more (TFLite's `q_fixed == 1 << 31`).
    carry = fixed == (1 << 31)
    fixed = np.where(carry, fixed // 2, fixed)
    shifts = exponents.astype(np.int64) + carry
    # Shifts below -31 flush to a zero multiplier; zero multipliers get NPU shift 0.
    fixed = np.where(shifts < -31, 0, fixed)
    npu_shifts = np.where(fixed == 0, 0, 31 - shifts)
    return fixed, npu_shifts


def _npu_scale(real: float) -> tuple[int, int]:
    """TFLite's `QuantizeMultiplier(real)` as the NPU's (Q31 scale, right shift) pair.

    A multiplier TFLite flushes to zero (shift < -31) becomes scale 0, which the NPU scales to
    0 as well; the 6-bit shift field cannot hold shifts beyond 63.
    """
    multiplier, shift = quantize_multiplier(real)
    npu_shift = 31 - shift
    if multiplier == 0:
        return 0, 0
    if not 0 <= npu_shift < 64:
        raise NpuLoweringError(f"requantization scale {real!r} needs a shift of {npu_shift}, outside 0-63")
    return multiplier, npu_shift


def _mean_records(op: nn.MeanOp, depth: int) -> bytes:
    """Bias records of a mean: bias 0 and TFLite's multiplier with 1/num folded in
    (`reference_ops::QuantizedMeanOrSum`: `mult' = (mult << s) / num`, `shift' = shift - s`),
    so the depthwise sum of `x - zp` scaled once is exactly TFLite's mean."""
    from ethosu.vela.api import npu_encode_bias

    _, height, width, _ = _shape(op.input)
    count = height * width
    multiplier, shift = quantize_multiplier(op.input_quant.scales[0] / op.output_quant.scales[0])
    fold = min(count.bit_length() - 1, 32, 31 + shift)
    folded, folded_shift = (multiplier << fold) // count, shift - fold
    npu_shift = 31 - folded_shift
    if not 0 <= npu_shift < 64:
        raise NpuLoweringError(f"mean scale needs a shift of {npu_shift}, outside 0-63")
    record = npu_encode_bias(np.int64(0), int(folded), int(npu_shift))
    return _pad16(bytes(record) * depth)


def choose_traversal(weights_ohwi: np.ndarray, is_depthwise: bool) -> ethosu.BlockTraversal:
    """Vela's weight-traversal heuristic (`encode_weight_and_scale_tensor`, int8 IFM):
    part-kernel-first if the IFM depth is at most 8 or its DPU utilisation is no worse."""
    if is_depthwise:
        return ethosu.BlockTraversal.DEPTH_FIRST
    _, kh, kw, depth = weights_ohwi.shape
    area = kh * kw
    depth_utilisation = depth / _round_up(depth, 32)
    part_kernel_utilisation = (depth / _round_up(depth, 8)) * (area / _round_up(area, 4))
    if part_kernel_utilisation >= depth_utilisation or depth <= 8:
        return ethosu.BlockTraversal.PART_KERNEL_FIRST
    return ethosu.BlockTraversal.DEPTH_FIRST


def encode_weights(
    accelerator: str,
    weights_ohwi: np.ndarray,
    dilation: tuple[int, int],
    block_depth: int,
    is_depthwise: bool,
    traversal: ethosu.BlockTraversal,
) -> bytes:
    """The MLW stream of OHWI weights (zero point already subtracted), padded to 16 bytes.

    Memoised on the values: the cost model sizes every operator's weights with the encoding the
    lowering then emits, and Vela's encoder is a large share of a compile.
    """
    key = _encoding_key((accelerator, weights_ohwi, dilation, block_depth, is_depthwise, traversal))
    stream = _STREAMS.get(key)
    if stream is None:
        stream = _encode(*key)
    _remember(key, stream)
    return stream


EncodingRequest = tuple[str, np.ndarray, tuple[int, int], int, bool, ethosu.BlockTraversal]
"""The arguments of `encode_weights`, in order."""


def encode_weights_ahead(requests: Sequence[EncodingRequest], min_share: int | None = None) -> None:
    """Encode now, sharing the work with a second process (`split_map`, from `min_share` bytes
    of int16 weights), the streams of `requests` that `encode_weights` has not memoised, so
    that it then finds them. A request the encoder rejects is left for `encode_weights` to
    raise on."""
    keys = [key for key in dict.fromkeys(_encoding_key(request) for request in requests) if key not in _STREAMS]
    streams = split_map(_encoded_or_none, keys, [len(key[2]) for key in keys], min_share)
    for key, stream in zip(keys, streams, strict=True):
        if stream is not None:
            _remember(key, stream)


_EncodingKey = tuple[str, tuple[int, ...], bytes, tuple[int, int], int, bool, ethosu.BlockTraversal]
"""An `EncodingRequest` as the memo keys it: the weights as their shape and int16 bytes."""

STREAM_MEMO_SIZE = 2048
"""Streams `encode_weights` keeps, the least recently used dropped first."""

_STREAMS: OrderedDict[_EncodingKey, bytes] = OrderedDict()


def _remember(key: _EncodingKey, stream: bytes) -> None:
    _STREAMS[key] = stream
    _STREAMS.move_to_end(key)
    if len(_STREAMS) > STREAM_MEMO_SIZE:
        _STREAMS.popitem(last=False)


def _encoding_key(request: EncodingRequest) -> _EncodingKey:
    """The one key of a request, for the memo and for `encode_weights_ahead` alike."""
    accelerator, weights_ohwi, dilation, block_depth, is_depthwise, traversal = request
    values = np.ascontiguousarray(weights_ohwi, dtype=np.int16)
    shape = tuple(int(extent) for extent in values.shape)
    return (
        accelerator,
        shape,
        values.tobytes(),
        (int(dilation[0]), int(dilation[1])),
        int(block_depth),
        bool(is_depthwise),
        traversal,
    )


def _encoded_or_none(key: _EncodingKey) -> bytes | None:
    """`_encode`, None where the encoder rejects the weights (`encode_weights` raises later)."""
    try:
        return _encode(*key)
    except (AssertionError, ValueError):
        return None


def _encode(
    accelerator: str,
    shape: tuple[int, ...],
    values: bytes,
    dilation: tuple[int, int],
    block_depth: int,
    is_depthwise: bool,
    traversal: ethosu.BlockTraversal,
) -> bytes:
    from ethosu.vela import api

    encoded = api.npu_encode_weights(
        api.NpuAccelerator[ethosu.ACCELERATORS[accelerator]],
        np.frombuffer(values, dtype=np.int16).reshape(shape),
        (dilation[1], dilation[0]),
        8,
        block_depth,
        is_depthwise,
        api.NpuBlockTraversal[traversal.name],
    )
    return _pad16(encoded)


# --------------------------------------------------------------------------- #
# Block configs
# --------------------------------------------------------------------------- #


def block_configs(npu_op: ethosu.EthosUCommand, accelerator: str) -> list[tuple[int, int, int]]:
    """`npu_find_block_configs` for a command (its weights are not needed), memoised by what
    it reads of the command (`_block_search_inputs`)."""
    vela_op = npu_op.to_vela()
    key = (_block_search_inputs(vela_op), accelerator)
    found = _BLOCK_CONFIGS.get(key)
    if found is None:
        if len(_BLOCK_CONFIGS) >= MAX_BLOCK_SEARCHES:
            _BLOCK_CONFIGS.clear()
        found = _BLOCK_CONFIGS[key] = _find_block_configs(vela_op, accelerator)
    return list(found)


_BLOCK_CONFIGS: dict[tuple[object, ...], tuple[tuple[int, int, int], ...]] = {}
MAX_BLOCK_SEARCHES = 4096
"""Block searches remembered per process (a compile asks for a handful of distinct ones)."""


def _block_search_inputs(vela_op: Any) -> tuple[object, ...]:
    """Everything Vela 5.2.0's `npu_find_block_configs` reads of an operation: its kind and
    traversal, the IFM, IFM2 and OFM shapes, upscaling, IFM element type, kernel (size, stride
    and dilation: not the padding), whether it looks a table up, whether every feature map is
    quantized and whether IFM2 is a scalar. The stripes of an operator share most of them: on
    mbv1_100_224 for U55-128 the lowering asked 114 times for 5 answers, 2.8 ms each."""
    kernel = vela_op.kernel
    activation = getattr(vela_op, "activation", None)
    maps = [vela_op.ifm, getattr(vela_op, "ifm2", None), vela_op.ofm]
    return (
        type(vela_op),
        getattr(vela_op, "block_traversal", None),
        getattr(vela_op, "sub_op_type", None),
        tuple(None if fm is None else tuple(fm.shape) for fm in maps),
        vela_op.ifm_upscale,
        vela_op.ifm.data_type,
        None
        if kernel is None
        else (kernel.width, kernel.height, kernel.stride_x, kernel.stride_y, kernel.dilation_x, kernel.dilation_y),
        None if activation is None else activation.op_type,
        all(fm is None or fm.quantization is not None for fm in maps),
        getattr(vela_op, "ifm2_scalar", None) is not None,
    )


def _find_block_configs(vela_op: Any, accelerator: str) -> tuple[tuple[int, int, int], ...]:
    """Vela's `npu_find_block_configs`, the weights left out."""
    from ethosu.vela import api

    from cascade.ethos_u.arch import vela_default_arch

    vela_default_arch(accelerator)
    vela_op.weights, vela_op.biases = [], []
    found = api.npu_find_block_configs(vela_op, api.NpuAccelerator[ethosu.ACCELERATORS[accelerator]])
    return tuple((b.height, b.width, b.depth) for b in found)


def cost_model_block(
    op: Operation, stripe: Box, accelerator: str, command: ethosu.EthosUCommand
) -> tuple[int, int, int] | None:
    """The OFM block the cost model prices `command` (one command computing `stripe` of `op`)
    with (`performance.select_block_config`, Vela's own heuristic), so that the stream runs
    the blocks its estimated cycles assume. The cost model's view of an operator may be several
    NPU operations (a mean is a depthwise sum then a multiply): the one of the command's kind
    and OFM shape. None when there is no such view."""
    from cascade.ethos_u.arch import accelerator as accelerator_config
    from cascade.ethos_u.lowering import UnsupportedOpError
    from cascade.ethos_u.lowering import lower as costing_view
    from cascade.ethos_u.performance import NpuKind, select_block_config

    kinds = {
        ethosu.Conv2DOp: (NpuKind.CONV2D, NpuKind.VECTOR_PRODUCT),
        ethosu.DepthwiseConv2DOp: (NpuKind.DEPTHWISE,),
        ethosu.PoolingOp: (NpuKind.POOLING, NpuKind.REDUCE_SUM),
        ethosu.ElementwiseOp: (NpuKind.ELEMENTWISE,),
    }.get(type(command), ())
    if not isinstance(op, nn.NNOperation) or not kinds:
        return None
    ofm = command.ofm.shape
    try:
        info = _costing_info(op)
        views = costing_view(info, stripe.to_region(len(info.output.shape)))
    except (UnsupportedOpError, ValueError):
        return None
    matching = [v.npu for v in views if v.npu.kind in kinds and tuple(v.npu.ofm) == (ofm.height, ofm.width, ofm.depth)]
    if len(matching) != 1:
        return None
    return select_block_config(matching[0], accelerator_config(accelerator)).ofm_block


_COSTING_INFOS: weakref.WeakKeyDictionary[Operation, OpInfo] = weakref.WeakKeyDictionary()
"""`_costing_info` by operator, for as long as the operator lives or until
`forget_costing_views`."""

_ACCESS_RELATIONS: weakref.WeakKeyDictionary[Operation, tuple[tuple, tuple[AccessRelation, ...]]] = (
    weakref.WeakKeyDictionary()
)
"""`_access_relations` by operator, with what they were derived from (`_relation_inputs`),
for as long as the operator lives or until `forget_costing_views`."""


def forget_costing_views() -> None:
    """Drop the memoised per-operator views, the cost model's and the access relations
    (lower-to-ethosu does once it is done)."""
    _COSTING_INFOS.clear()
    _ACCESS_RELATIONS.clear()


def _access_relations(op: nn.NNOperation) -> tuple[AccessRelation, ...]:
    """`op.access_relations()`, built once per operator (a cascade lowers it at every stripe),
    and again if its operand or result types or its properties or attributes changed."""
    inputs = _relation_inputs(op)
    known = _ACCESS_RELATIONS.get(op)
    if known is not None and known[0] == inputs:
        return known[1]
    relations = op.access_relations()
    _ACCESS_RELATIONS[op] = (inputs, relations)
    return relations


def _relation_inputs(op: Operation) -> tuple:
    """Everything an operator's access relations derive from."""
    return (
        tuple(operand.type for operand in op.operands),
        tuple(result.type for result in op.results),
        tuple(op.properties.items()),
        tuple(op.attributes.items()),
    )


def _costing_info(op: nn.NNOperation) -> OpInfo:
    """The cost model's view of `op`, built once per operator: a cascade asks at every stripe."""
    from cascade.passes.planner.from_nn import op_info_from_nn

    info = _COSTING_INFOS.get(op)
    if info is None:
        info = _COSTING_INFOS[op] = op_info_from_nn(op)
    return info


def operator_refusal(op: nn.NNOperation) -> str | None:
    """Why `op`'s own parameters (batch, stride, broadcast, ...) keep it off the NPU, None if
    they do not: the words the planner's cost model refuses it with (`lowering.refusal`)."""
    from cascade.ethos_u.lowering import refusal

    return refusal(_costing_info(op))


class _LazyCandidates(Sequence[tuple[int, int, int]]):
    """`block_configs(command, accelerator)`, computed on first use."""

    def __init__(self, command: ethosu.EthosUCommand, accelerator: str) -> None:
        self.command = command
        self.accelerator = accelerator
        self._blocks: list[tuple[int, int, int]] | None = None

    def _get(self) -> list[tuple[int, int, int]]:
        if self._blocks is None:
            self._blocks = block_configs(self.command, self.accelerator)
        return self._blocks

    def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
        return self._get()[index]

    def __len__(self) -> int:
        return len(self._get())


def pick_block_config(
    candidates: Sequence[tuple[int, int, int]],
    ofm_shape: Sequence[int],
    depth: int | None = None,
    preferred: tuple[int, int, int] | None = None,
) -> tuple[int, int, int]:
    """`preferred` (the cost model's block, `cost_model_block`) when it has the right depth;
    else the candidate covering most of the OFM stripe with the fewest wasted elements
    (maximise the OFM volume one block covers, then prefer the smaller block). `depth`
    restricts to one block depth (the weights' encoding depth).

    The cost model's block may be missing from `candidates`: Vela 5.2.0's
    `npu_find_block_configs` skips odd heights and widths on U55-32/64/128 (see
    `performance.valid_block_configs`), which its own scheduler uses and which the cost model
    searches too, with the same SHRAM arithmetic."""
    if preferred is not None and (depth is None or preferred[2] == depth):
        return (preferred[0], preferred[1], preferred[2])
    pool = [b for b in candidates if depth is None or b[2] == depth]
    if not pool:
        raise NpuLoweringError(f"no valid block config of depth {depth} among {list(candidates)}")
    height, width, channels = ofm_shape

    def key(block: tuple[int, int, int]) -> tuple[int, int]:
        covered = min(block[0], height) * min(block[1], width) * min(block[2], channels)
        return (covered, -block[0] * block[1] * block[2])

    return max(pool, key=key)


# --------------------------------------------------------------------------- #
# Lowering
# --------------------------------------------------------------------------- #


@dataclass
class LoweredStripe:
    """The commands of one output stripe."""

    output: Box
    commands: list[ethosu.EthosUCommand]


@dataclass
class LoweredOp:
    """The commands of every stripe of one operator and the constants they read."""

    stripes: list[LoweredStripe]
    constants: list[ConstantBlob] = field(default_factory=list)

    @property
    def commands(self) -> list[ethosu.EthosUCommand]:
        return [command for stripe in self.stripes for command in stripe.commands]

    @property
    def constant_data(self) -> bytes:
        """All constants back to back, as placed from the first blob's address (the blobs
        are contiguous and 16-byte padded, so this is the image to put in flash or SRAM)."""
        return b"".join(blob.data for blob in self.constants)

    @property
    def constant_size(self) -> int:
        """Bytes of `constant_data`; the layout does not depend on `constant_address`, so a
        first lowering at address 0 sizes the space an allocator must reserve."""
        return sum(len(blob.data) for blob in self.constants)


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _activation(
    op: Operation, quant: nn.QuantAttr, programmed_zero_point: int | None = None
) -> ethosu.ActivationAttr | None:
    """The fused activation as Vela's clamp, or None for no clamp.

    The clamp is given in the real domain as `(q - zp) * scale` of TFLite's quantized bounds,
    where zp is the zero point programmed on the OFM (`programmed_zero_point`, default the
    tensor's); Vela quantizes it back with `zp + round(value / scale)`, which returns q.
    """
    attr = getattr(op, "activation", None)
    name = "NONE" if attr is None else attr.data.upper()
    scale, tensor_zero_point = quant.scales[0], quant.zero_points[0]
    zero_point = tensor_zero_point if programmed_zero_point is None else programmed_zero_point
    return _clamp(name, scale, tensor_zero_point, zero_point)


@lru_cache(maxsize=1024)
def _clamp(name: str, scale: float, tensor_zero_point: int, zero_point: int) -> ethosu.ActivationAttr | None:
    """`_activation` of plain values, memoised: every stripe of an operator has the same."""
    low, high = activation_range(name, scale, tensor_zero_point)
    if (low, high) == (-128, 127):
        return None
    real_low = None if low == -128 else (low - zero_point) * scale
    real_high = None if high == 127 else (high - zero_point) * scale
    return ethosu.ActivationAttr(ethosu.ActivationKind.NONE_OR_RELU, real_low, real_high)


def _window_input(
    op: nn.WindowOperation | nn.NNOperation, output: Box, index: int = 0
) -> tuple[Box, ethosu.PaddingAttr]:
    """The clipped input box of an output box and the padding the NPU adds around it.

    The padding is what the access relation reads outside the tensor: stripes inside the
    tensor get none on that side (Vela's `create_padding`).
    """
    operand = op.operands[index]
    shape = _shape(operand)
    rank = len(_shape(op.results[0]))
    relation = _access_relations(op)[index]
    out_region = output.to_region(rank)
    unclipped = Box.from_region(relation.unclipped_input_region(out_region))
    clipped = Box.from_region(relation.input_region(out_region, shape))
    if clipped.height < 1 or clipped.width < 1:
        # The NPU derives the IFM extent from the OFM box, so a box reading only padding
        # cannot be expressed; the stripe must be merged with a neighbour.
        raise NpuLoweringError(f"output stripe {output} reads only padding")
    top = clipped.y - unclipped.y
    left = clipped.x - unclipped.x
    bottom = (unclipped.y + unclipped.height) - (clipped.y + clipped.height)
    right = (unclipped.x + unclipped.width) - (clipped.x + clipped.width)
    return clipped, ethosu.PaddingAttr.interned(top, left, bottom, right)


def _kernel(op: nn.WindowOperation) -> ethosu.KernelAttr:
    (kh, kw), (sh, sw), (dh, dw) = op.kernel_size(), op.strides(), op.dilations()
    return ethosu.KernelAttr.interned(kh, kw, sh, sw, dh, dw)


@dataclass
class _Plan:
    """What every stripe of one op shares: the constants and how they are encoded."""

    accelerator: str
    block_depth: int | None = None
    traversal: ethosu.BlockTraversal = ethosu.BlockTraversal.DEPTH_FIRST
    weights: np.ndarray | None = None  # OHWI, zero point subtracted
    bias: np.ndarray | None = None  # int64 per output channel
    lut: bytes | None = None  # 256 int8 entries, indexed by the input value + 128
    lut_index: int = 0
    constant_operand: int | None = None
    """Which operand of a binary op is a constant (0 or 1), None if neither."""
    constant: np.ndarray | None = None  # its int8 values
    constant_placement: Placement | None = None
    """Where a constant of several values is read from (None: one value, a scalar)."""


def lower_op(
    op: Operation,
    placements: Sequence[Placement],
    stripes: Sequence[Box] | None = None,
    *,
    accelerator: str = "ethos-u55-128",
    constant_region: int = 0,
    constant_address: int = 0,
    constants: Mapping[SSAValue, np.ndarray] | None = None,
    lut_index: int = 0,
) -> LoweredOp:
    """Lowers `op` for the given output stripes (default: the whole output as one stripe).

    `placements` has one entry per activation operand (in operand order, constants excluded)
    followed by the output. Weights and bias records are encoded per output-channel slice, for
    the block depth the slice's stripes use (normally one encoding per slice), and placed one
    after the other at `constant_address` of `constant_region` (16-byte aligned); stripes that
    split the output channels read the records of their channels only, as Vela does.

    Table-lookup ops (`LUT_OPS`) place their 256-byte table among the constants and start
    with a DMA of it into SHRAM slot `lut_index` (0-7); a scheduler may hoist or share it.
    """
    if not isinstance(op, SUPPORTED_OPS):
        raise NpuLoweringError(f"{op.name} has no NPU lowering")
    if (reason := operator_refusal(op)) is not None:
        raise NpuLoweringError(reason)
    out_shape = hwc_shape(_shape(op.results[0]))
    if stripes is None:
        stripes = [Box.full(out_shape)]
    builder = _BUILDERS[type(op)]
    plan = _Plan(accelerator, lut_index=lut_index)
    _prepare_constants(op, plan, constants)
    lowered = LoweredOp([])
    address = constant_address
    lut_dma: list[ethosu.EthosUCommand] = []
    if plan.lut is not None:
        blob = ConstantBlob(
            f"{op.results[0].name_hint or op.name}_lut",
            plan.lut,
            ethosu.AddressRangeAttr(constant_region, address, len(plan.lut)),
        )
        lowered.constants.append(blob)
        address += len(plan.lut)
        lut_dma.append(ethosu.DmaOp(blob.range, lut_slot(accelerator, lut_index)))
    if plan.constant is not None and plan.constant.size > 1:
        blob = _constant_operand_blob(op, plan, constant_region, address)
        lowered.constants.append(blob)
        address += len(blob.data)
    # Weights are encoded for one block depth: the first stripe of a channel slice picks it,
    # later stripes of the slice keep it when they can (else the slice is encoded again).
    slice_depth: dict[tuple[int, int], int] = {}
    encoded: dict[tuple[int, int, int], tuple[list[ethosu.AddressRangeAttr], list[ethosu.AddressRangeAttr]]] = {}
    for stripe in stripes:
        probe = builder(op, placements, stripe, plan, None, (1, 1, 1))
        priced = cost_model_block(op, stripe, accelerator, probe)
        # Vela's block search is slow: ask it only when the cost model's block cannot be used.
        candidates = _LazyCandidates(probe, accelerator)
        ranges = None
        if plan.weights is None:
            stripe_block = pick_block_config(candidates, stripe.shape, preferred=priced)
        else:
            key = (stripe.c, stripe.depth)
            preferred = slice_depth.get(key)
            usable = preferred is not None and (
                (priced is not None and priced[2] == preferred) or any(b[2] == preferred for b in candidates)
            )
            if usable:
                stripe_block = pick_block_config(candidates, stripe.shape, preferred, priced)
            else:
                stripe_block = pick_block_config(candidates, stripe.shape, preferred=priced)
                slice_depth.setdefault(key, stripe_block[2])
            plan.block_depth = stripe_block[2]
            if (*key, plan.block_depth) not in encoded:
                blobs = _encode_slice(op, plan, stripe.c, stripe.depth, constant_region, address)
                address = blobs[-1].range.address + blobs[-1].range.length
                lowered.constants.extend(blobs)
                # Per core: its bias records, then its weights.
                encoded[(*key, plan.block_depth)] = ([b.range for b in blobs[0::2]], [b.range for b in blobs[1::2]])
            ranges = encoded[(*key, plan.block_depth)]
        # The probe with its block and constants: the command a second build would give.
        biases, weights = ranges if ranges is not None else ([], [])
        command = probe.with_block(stripe_block, weights, biases)
        extra: list[ethosu.EthosUCommand] = []
        if isinstance(op, nn.PadOp):
            interior, _ = _pad_interior(op, stripe)
            if interior is not None:
                for box in _pad_border(stripe, interior):
                    fill_probe = _pad_fill(op, placements, box, (1, 1, 1))
                    fill_block = pick_block_config(block_configs(fill_probe, accelerator), box.shape)
                    extra.append(fill_probe.with_block(fill_block))
        lowered.stripes.append(LoweredStripe(stripe, [*lut_dma, command, *extra]))
        lut_dma = []
    return lowered


def lut_slot(accelerator: str, index: int) -> ethosu.AddressRangeAttr:
    """The SHRAM range of 8-bit LUT slot `index` (Vela's `shram_lut_address + 256 * index`)."""
    from cascade.interpreter.ethosu import shram_layout

    if not 0 <= index < 8:
        raise NpuLoweringError(f"LUT index must be 0-7, got {index}")
    _, lut_start = shram_layout(accelerator)
    return ethosu.AddressRangeAttr(ethosu.SHRAM_REGION, lut_start + 256 * index, 256)


def lut_values(op: Operation) -> np.ndarray:
    """The int8 table of a unary op: its reference kernel applied to -128..127."""
    from cascade.interpreter import kernels

    assert isinstance(op, nn.UnaryOperation)
    quant = {
        "input_scale": op.input_quant.scales[0],
        "input_zero_point": op.input_quant.zero_points[0],
        "output_scale": op.output_quant.scales[0],
        "output_zero_point": op.output_quant.zero_points[0],
    }
    x = np.arange(-128, 128, dtype=np.int64).astype(np.int8)
    if isinstance(op, nn.TanhOp):
        return np.asarray(kernels.tanh(x, **quant))
    if isinstance(op, nn.SigmoidOp):
        return np.asarray(kernels.sigmoid(x, **quant))
    if isinstance(op, nn.LeakyReluOp):
        return np.asarray(kernels.leaky_relu(x, alpha=op.alpha.value.data, **quant))
    if isinstance(op, nn.HardSwishOp):
        return np.asarray(kernels.hard_swish(x, **quant))
    if isinstance(op, nn.ReluOp):
        return np.asarray(kernels.relu(x, activation=op.activation.data.value.upper(), **quant))
    raise NpuLoweringError(f"{op.name} has no lookup table")


def _prepare_constants(op: Operation, plan: _Plan, constants: Mapping[SSAValue, np.ndarray] | None) -> None:
    """Weights in OHWI with the zero point subtracted, and the traversal Vela would choose."""
    if isinstance(op, nn.ConvolutionOperation | nn.FullyConnectedOp) and (bias := op.bias) is not None:
        plan.bias = constant_value(bias, constants).astype(np.int64)
    if isinstance(op, nn.Conv2DOp):
        plan.weights = constant_value(op.weight, constants).astype(np.int16)
        plan.traversal = choose_traversal(plan.weights, False)
    elif isinstance(op, nn.DepthwiseConv2DOp):
        weights = constant_value(op.weight, constants).astype(np.int16)  # 1HWC
        plan.weights = np.transpose(weights, (3, 1, 2, 0))  # OHWI with I = 1
    elif isinstance(op, nn.FullyConnectedOp):
        weights = constant_value(op.weight, constants).astype(np.int16)  # [O, K]
        quant = op.weight_quant
        zero_point = 0 if quant.is_per_channel else quant.zero_points[0]
        plan.weights = (weights - zero_point)[:, None, None, :]
        plan.traversal = choose_traversal(plan.weights, False)
    elif isinstance(op, LUT_OPS):
        plan.lut = lut_values(op).astype(np.int8).tobytes()
    elif isinstance(op, nn.BinaryOperation):
        for position, operand in enumerate(op.operands):
            if _is_constant(operand, constants):
                plan.constant_operand = position
                plan.constant = constant_value(operand, constants).astype(np.int8)
    elif isinstance(op, nn.MeanOp):
        _, height, width, depth = _shape(op.input)
        plan.weights = np.ones((depth, height, width, 1), dtype=np.int16)


def _is_constant(value: SSAValue, constants: Mapping[SSAValue, np.ndarray] | None) -> bool:
    """Whether `value` is a constant: in `constants`, or made by an `arith.constant`."""
    return (constants is not None and value in constants) or isinstance(value.owner, arith.ConstantOp)


def _constant_operand_blob(op: Operation, plan: _Plan, region: int, address: int) -> ConstantBlob:
    """The constant operand of a binary op as an NHWC int8 feature map among the constants
    (16-byte padded); every stripe reads the part it needs from there, as Vela reads a constant
    IFM2 from flash."""
    assert plan.constant is not None
    assert plan.constant_operand is not None
    data = _pad16(plan.constant.tobytes())
    shape = hwc_shape(plan.constant.shape)
    plan.constant_placement = Placement(region, address, shape, ethosu.Layout.NHWC, data_type=ethosu.DataType.INT8)
    name = op.operands[plan.constant_operand].name_hint or f"{op.results[0].name_hint or op.name}_constant"
    return ConstantBlob(name, data, ethosu.AddressRangeAttr(region, address, len(data)))


def _encode_slice(op: Operation, plan: _Plan, first: int, depth: int, region: int, address: int) -> list[ConstantBlob]:
    """For output channels `[first, first + depth)`, per NPU core: bias records, then weights."""
    assert plan.weights is not None
    assert plan.block_depth is not None
    out_channels = plan.weights.shape[0]
    bias = plan.bias if plan.bias is not None else np.zeros(out_channels, dtype=np.int64)
    input_quant: nn.QuantAttr = op.input_quant  # type: ignore[attr-defined]
    output_quant: nn.QuantAttr = op.output_quant  # type: ignore[attr-defined]
    dilation = op.dilations() if isinstance(op, nn.WindowOperation) else (1, 1)
    name = op.results[0].name_hint or op.name
    ncores = ethosu.cores(plan.accelerator)
    blobs: list[ConstantBlob] = []
    for core in range(min(ncores, depth)):
        block_depth = ethosu.core_block_depth(plan.block_depth, core, ncores)
        if block_depth == 0:
            continue
        channels = ethosu.core_channels(first, depth, core, ncores)
        if isinstance(op, nn.MeanOp):
            records = _mean_records(op, len(range(out_channels)[channels]))
        else:
            weight_quant: nn.QuantAttr = op.weight_quant  # type: ignore[attr-defined]
            scales = list(weight_quant.scales)
            if len(scales) == 1:
                scales *= out_channels
            records = bias_records(bias[channels], input_quant.scales[0], scales[channels], output_quant.scales[0])
        stream = encode_weights(
            plan.accelerator,
            plan.weights[channels],
            dilation,
            block_depth,
            isinstance(op, nn.DepthwiseConv2DOp | nn.MeanOp),
            plan.traversal,
        )
        suffix = f"_core{core}" if ncores > 1 else ""
        for kind, data in (("bias", records), ("weights", stream)):
            where = ethosu.AddressRangeAttr(region, address, len(data))
            blobs.append(ConstantBlob(f"{name}_{kind}_{first}{suffix}", data, where))
            address += len(data)
    return blobs


_Ranges = tuple[list[ethosu.AddressRangeAttr], list[ethosu.AddressRangeAttr]] | None
"""Per NPU core: the bias records' and the weights' ranges (None: no weights)."""


def _conv(
    op: nn.Conv2DOp | nn.DepthwiseConv2DOp,
    placements: Sequence[Placement],
    stripe: Box,
    plan: _Plan,
    ranges: _Ranges,
    block: tuple[int, int, int],
) -> ethosu.EthosUCommand:
    in_box, padding = _window_input(op, stripe)
    depthwise = isinstance(op, nn.DepthwiseConv2DOp)
    if depthwise:  # each output channel reads its own input channel
        in_box = Box(in_box.y, in_box.x, stripe.c, in_box.height, in_box.width, stripe.depth)
    ifm = placements[0].feature_map(in_box, op.input_quant)
    ofm = placements[-1].feature_map(stripe, op.output_quant)
    biases, weights = ranges if ranges is not None else ([], [])
    cls = ethosu.DepthwiseConv2DOp if depthwise else ethosu.Conv2DOp
    return cls(
        ifm=ifm,
        ofm=ofm,
        kernel=_kernel(op),
        padding=padding,
        weights=weights,
        biases=biases,
        block_config=block,
        block_traversal=plan.traversal,
        activation=_activation(op, op.output_quant),
    )


def _fully_connected(
    op: nn.FullyConnectedOp,
    placements: Sequence[Placement],
    stripe: Box,
    plan: _Plan,
    ranges: _Ranges,
    block: tuple[int, int, int],
) -> ethosu.EthosUCommand:
    """A 1x1 convolution over `[N, 1, K]`: each input row is one output row."""
    depth = _shape(op.input)[-1]
    in_box = Box(stripe.y, 0, 0, stripe.height, 1, depth)
    biases, weights = ranges if ranges is not None else ([], [])
    return ethosu.Conv2DOp(
        ifm=placements[0].feature_map(in_box, op.input_quant),
        ofm=placements[-1].feature_map(stripe, op.output_quant),
        kernel=ethosu.KernelAttr(1, 1),
        padding=ethosu.PaddingAttr(0, 0, 0, 0),
        weights=weights,
        biases=biases,
        block_config=block,
        block_traversal=plan.traversal,
        activation=_activation(op, op.output_quant),
    )


def _pool(
    op: nn.Pool2DOp,
    placements: Sequence[Placement],
    stripe: Box,
    plan: _Plan,
    ranges: _Ranges,
    block: tuple[int, int, int],
) -> ethosu.EthosUCommand:
    in_box, padding = _window_input(op, stripe)
    kind = ethosu.PoolingKind.MAX if op.kind.data == nn.PoolKind.MAX else ethosu.PoolingKind.AVERAGE
    # Input and output share one quantization, and TFLite pools the raw values: programming
    # zero point 0 on both sides makes the NPU average (and round) the raw values too, instead
    # of `x - zp`, whose half-way cases round differently.
    scale = op.input_quant.scales[0]
    return ethosu.PoolingOp(
        kind,
        ifm=placements[0].feature_map(in_box, (scale, 0)),
        ofm=placements[-1].feature_map(stripe, (scale, 0)),
        kernel=_kernel(op),
        padding=padding,
        block_config=block,
        activation=_activation(op, op.output_quant, programmed_zero_point=0),
    )


def _rescale(
    op: nn.RescaleOp,
    placements: Sequence[Placement],
    stripe: Box,
    plan: _Plan,
    ranges: _Ranges,
    block: tuple[int, int, int],
) -> ethosu.EthosUCommand:
    """TFLite QUANTIZE int8 -> int8: a 1x1 average pool with Vela's fused-quantize scaling
    (`quantise_scale(double(in_s) / double(out_s))`)."""
    return ethosu.PoolingOp(
        ethosu.PoolingKind.AVERAGE,
        ifm=placements[0].feature_map(stripe, op.input_quant),
        ofm=placements[-1].feature_map(stripe, op.output_quant),
        kernel=ethosu.KernelAttr(1, 1),
        padding=ethosu.PaddingAttr(0, 0, 0, 0),
        block_config=block,
        fused_quantize=True,
    )


_ELEMENTWISE = {
    nn.AddOp: ethosu.ElementwiseKind.ADD,
    nn.SubOp: ethosu.ElementwiseKind.SUB,
    nn.MulOp: ethosu.ElementwiseKind.MUL,
    nn.MinimumOp: ethosu.ElementwiseKind.MIN,
    nn.MaximumOp: ethosu.ElementwiseKind.MAX,
}


def _binary(
    op: nn.BinaryOperation,
    placements: Sequence[Placement],
    stripe: Box,
    plan: _Plan,
    ranges: _Ranges,
    block: tuple[int, int, int],
) -> ethosu.EthosUCommand:
    """A binary elementwise op. The NPU broadcasts only IFM2 (along H, W or C, from size 1),
    so a broadcast first operand is swapped into IFM2 with `reversed_operands`, which keeps
    the operand order of SUB (Vela's `ifm_ifm2_correct_order`)."""
    out_shape = _shape(op.output)
    shapes = (_shape(op.input), _shape(op.input2))
    rank = len(out_shape)
    activations = iter(placements[:-1])
    sources = [plan.constant_placement if i == plan.constant_operand else next(activations) for i in range(2)]
    regions = op.input_regions(stripe.to_region(rank))
    boxes = [Box.from_region(region) if source else None for source, region in zip(sources, regions, strict=True)]
    operands = [(sources[0], boxes[0], op.input_quant), (sources[1], boxes[1], op.input2_quant)]
    # The other one is not broadcast (`refusal`); a scalar is IFM2 even where it is not.
    reversed_operands = shapes[0] != out_shape or sources[0] is None
    if reversed_operands:
        operands.reverse()
    (first, first_box, first_quant), (second, second_box, second_quant) = operands
    assert first is not None
    assert first_box is not None
    ifm2: ethosu.FeatureMapAttr | ethosu.ScalarAttr
    if second is None or second_box is None:  # one constant value: Vela's ifm2_scalar
        assert plan.constant is not None
        scale, zero_point = second_quant.scales[0], second_quant.zero_points[0]
        # Vela quantizes the real value back with this scale: (q - zp) * s / s rounds to q - zp.
        value = (int(plan.constant.reshape(-1)[0]) - zero_point) * scale
        ifm2 = ethosu.ScalarAttr(value, ethosu.DataType.INT8, (scale, zero_point))
    else:
        ifm2 = second.feature_map(second_box, second_quant)
    return ethosu.ElementwiseOp(
        _ELEMENTWISE[type(op)],
        ifm=first.feature_map(first_box, first_quant),
        ifm2=ifm2,
        ofm=placements[-1].feature_map(stripe, op.output_quant),
        block_config=block,
        reversed_operands=reversed_operands,
        activation=_activation(op, op.output_quant),
    )


def _table_lookup(
    op: nn.UnaryOperation,
    placements: Sequence[Placement],
    stripe: Box,
    plan: _Plan,
    ranges: _Ranges,
    block: tuple[int, int, int],
) -> ethosu.EthosUCommand:
    """Vela's LUT rewrite (`convert_to_lut`): ADD of scalar 0 with the OFM quantized like the
    IFM, so the value reaching the table is the input itself, then TABLE_LOOKUP."""
    scale, zero_point = op.input_quant.scales[0], op.input_quant.zero_points[0]
    return ethosu.ElementwiseOp(
        ethosu.ElementwiseKind.ADD,
        ifm=placements[0].feature_map(stripe, (scale, zero_point)),
        ifm2=ethosu.ScalarAttr(0.0, ethosu.DataType.INT8, (scale, 0)),
        ofm=placements[-1].feature_map(stripe, (scale, zero_point)),
        block_config=block,
        activation=ethosu.ActivationAttr(ethosu.ActivationKind.TABLE_LOOKUP, lookup_table_index=plan.lut_index),
    )


def _mean(
    op: nn.MeanOp,
    placements: Sequence[Placement],
    stripe: Box,
    plan: _Plan,
    ranges: _Ranges,
    block: tuple[int, int, int],
) -> ethosu.EthosUCommand:
    """A depthwise convolution whose kernel covers the whole height and width, weights 1."""
    _, height, width, _ = _shape(op.input)
    in_box = Box(0, 0, stripe.c, height, width, stripe.depth)
    biases, weights = ranges if ranges is not None else ([], [])
    return ethosu.DepthwiseConv2DOp(
        ifm=placements[0].feature_map(in_box, op.input_quant),
        ofm=placements[-1].feature_map(stripe, op.output_quant),
        kernel=ethosu.KernelAttr(height, width),
        padding=ethosu.PaddingAttr(0, 0, 0, 0),
        weights=weights,
        biases=biases,
        block_config=block,
    )


def _resize(
    op: nn.ResizeOp,
    placements: Sequence[Placement],
    stripe: Box,
    plan: _Plan,
    ranges: _Ranges,
    block: tuple[int, int, int],
) -> ethosu.EthosUCommand:
    """2x nearest-neighbour resize: a 1x1 pool copying raw values (zero points 0) of the IFM
    upscaled 2x2 by the NPU (`ifm_upscale nearest`)."""
    if stripe.y % 2 or stripe.x % 2:
        raise NpuLoweringError("an upscaled stripe must start on an even row and column")
    scale = op.input_quant.scales[0]
    in_box = Box(stripe.y // 2, stripe.x // 2, stripe.c, -(-stripe.height // 2), -(-stripe.width // 2), stripe.depth)
    return ethosu.PoolingOp(
        ethosu.PoolingKind.AVERAGE,
        ifm=placements[0].feature_map(in_box, (scale, 0)),
        ofm=placements[-1].feature_map(stripe, (scale, 0)),
        kernel=ethosu.KernelAttr(1, 1),
        padding=ethosu.PaddingAttr(0, 0, 0, 0),
        block_config=block,
        ifm_upscale=ethosu.ResamplingMode.NEAREST,
    )


def _pad_op(
    op: nn.PadOp,
    placements: Sequence[Placement],
    stripe: Box,
    plan: _Plan,
    ranges: _Ranges,
    block: tuple[int, int, int],
) -> ethosu.EthosUCommand:
    """The copy of the stripe's interior (a raw 1x1 pool); `_pad_fills` writes the border."""
    interior, source = _pad_interior(op, stripe)
    if interior is None or source is None:
        return _pad_fill(op, placements, stripe, block)
    scale = op.input_quant.scales[0]
    return ethosu.PoolingOp(
        ethosu.PoolingKind.AVERAGE,
        ifm=placements[0].feature_map(source, (scale, 0)),
        ofm=placements[-1].feature_map(interior, (scale, 0)),
        kernel=ethosu.KernelAttr(1, 1),
        padding=ethosu.PaddingAttr(0, 0, 0, 0),
        block_config=block,
    )


def _pad_interior(op: nn.PadOp, stripe: Box) -> tuple[Box | None, Box | None]:
    """The part of an output stripe copied from the input, and where in the input it is."""
    pads = op.pads()
    (top, _), (left, _) = pads[1], pads[2]
    _, height, width, _ = _shape(op.input)
    y0, y1 = max(stripe.y, top), min(stripe.y + stripe.height, top + height)
    x0, x1 = max(stripe.x, left), min(stripe.x + stripe.width, left + width)
    if y0 >= y1 or x0 >= x1:
        return None, None
    interior = Box(y0, x0, stripe.c, y1 - y0, x1 - x0, stripe.depth)
    return interior, Box(y0 - top, x0 - left, stripe.c, y1 - y0, x1 - x0, stripe.depth)


def _pad_fill(
    op: nn.PadOp, placements: Sequence[Placement], box: Box, block: tuple[int, int, int]
) -> ethosu.EthosUCommand:
    """Fills `box` of the output with the pad value (the output zero point): the box times a
    scalar 0, plus the OFM zero point (Vela fills borders with a zero-valued input)."""
    scale, zero_point = op.output_quant.scales[0], op.output_quant.zero_points[0]
    fm = placements[-1].feature_map(box, (scale, zero_point))
    return ethosu.ElementwiseOp(
        ethosu.ElementwiseKind.MUL,
        ifm=fm,
        ifm2=ethosu.ScalarAttr(0.0, ethosu.DataType.INT8, (1.0, 0)),
        ofm=fm,
        block_config=block,
    )


def _pad_border(stripe: Box, interior: Box | None) -> list[Box]:
    """The boxes of a stripe outside its interior: full-width bands above and below, then the
    left and right parts of the interior rows."""
    if interior is None:
        return [stripe]
    boxes = []
    end_y, end_x = stripe.y + stripe.height, stripe.x + stripe.width
    if interior.y > stripe.y:
        boxes.append(Box(stripe.y, stripe.x, stripe.c, interior.y - stripe.y, stripe.width, stripe.depth))
    if interior.y + interior.height < end_y:
        below = interior.y + interior.height
        boxes.append(Box(below, stripe.x, stripe.c, end_y - below, stripe.width, stripe.depth))
    if interior.x > stripe.x:
        boxes.append(Box(interior.y, stripe.x, stripe.c, interior.height, interior.x - stripe.x, stripe.depth))
    if interior.x + interior.width < end_x:
        right = interior.x + interior.width
        boxes.append(Box(interior.y, right, stripe.c, interior.height, end_x - right, stripe.depth))
    return boxes


_BUILDERS = {
    nn.Conv2DOp: _conv,
    nn.DepthwiseConv2DOp: _conv,
    nn.FullyConnectedOp: _fully_connected,
    nn.Pool2DOp: _pool,
    nn.RescaleOp: _rescale,
    nn.TanhOp: _table_lookup,
    nn.SigmoidOp: _table_lookup,
    nn.LeakyReluOp: _table_lookup,
    nn.HardSwishOp: _table_lookup,
    nn.ReluOp: _table_lookup,
    nn.MeanOp: _mean,
    nn.ResizeOp: _resize,
    nn.PadOp: _pad_op,
    **{kind: _binary for kind in _ELEMENTWISE},
}
