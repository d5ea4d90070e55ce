"""A functional model of the `ethosu` level: runs an `ethosu.command_stream` over memory.

Memory is one byte array per region (base-pointer index 0-7, plus 0x103 for SHRAM). Every
command reads and writes exactly the bytes its feature maps address: tile boxes (rolling
buffer wraps), byte strides, NHWC and NHCWB16 layouts. Arithmetic uses what the hardware is
given, not the `nn` op it came from:

* weights are decoded from the MLW stream in memory (`ethosu.mlw_codec.decode`), and put back
  in OHWI order by inverting Vela's weight reordering for the command's block depth, traversal
  and dilation (`_weight_order`);
* per-channel bias, scale and shift are decoded from the 10-byte `npu_encode_bias` records in
  memory (40-bit bias, 32-bit scale, 6-bit shift);
* zero points, clamps, the rounding mode and the pooling/elementwise OFM, OPA and OPB scales
  are the register values Vela programs for the command (`serialize.decode_registers` of the
  command's own register stream), so Vela's scale derivations are exercised, not re-derived.
  `EthosUMachine.run_register_stream` instead takes every value from a register stream,
  ours or one Vela wrote.

Hardware semantics this model assumes. There is no Ethos-U simulator to check them against,
but Vela's own streams for ds_cnn_kws and resnet8, run by this model, equal LiteRT bit for bit
(`test/unit/test_ethosu_functional.py`), which exercises the TFL rounding, the bias records,
MLW decoding, NHCWB16, DMAs, the advanced ADD scaling and an int32 mean:

* OFM scaling `acc * scale >> shift`: TFL rounding is TFLite's double rounding
  (`SaturatingRoundingDoublingHighMul` then `RoundingDivideByPOT`), NATURAL rounds half up,
  TRUNCATE rounds toward zero. The accumulator is not wrapped to 32 bits (it is 40 bits wide).
* Convolution taps in the padding read the IFM zero point (contribute 0).
* MAX pooling ignores padded taps and applies no OFM scale (Vela programs none); AVERAGE
  pooling with a global scale (no padding) scales the sum of `x - zp`; AVERAGE pooling with
  padding (no scale programmed) divides by the number of in-image taps, rounding half away
  from zero.
* ADD/SUB with "advanced" scaling (`op_to_scale` in IFM_PRECISION): the scaled operand is
  `RDBPOT(SRDHM(x << 20, opa_scale), opa_shift - 11)`, the other `x << 19`, i.e. TFLite's
  operand rescale with the register values; with `op_to_scale == 0` each operand is
  multiplied by its integer OPA/OPB scale.
* MIN/MAX compare `x - zp` of both operands; MUL multiplies them; both then take the OFM
  scale (1 and 0 for MIN/MAX) and the OFM zero point.
* NEAREST IFM upscaling repeats every IFM element over a 2x2 square (pooling only).
* TABLE_LOOKUP (8-bit): the value after the OFM zero point, saturated, indexes 256 entries at
  `shram_lut_address + 256 * index` of SHRAM; the clamp applies to the looked-up value.
* The 16-bit ACTIVATION_MIN/MAX clamp is not applied to 32-bit OFMs (unless the activation's
  clip-range field forces a range); such OFMs hold raw sums, as in Vela's mean lowering.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from cascade.dialects import ethosu

if TYPE_CHECKING:
    from cascade.ethos_u.serialize import DecodedOperation as _Registers

__all__ = ["EthosUMachine", "decode_bias_records", "decode_weights", "read_feature_map", "write_feature_map"]

_NUMPY_TYPES = {
    ethosu.DataType.UINT8: np.dtype("<u1"),
    ethosu.DataType.INT8: np.dtype("<i1"),
    ethosu.DataType.UINT16: np.dtype("<u2"),
    ethosu.DataType.INT16: np.dtype("<i2"),
    ethosu.DataType.INT32: np.dtype("<i4"),
}


_FORCED_CLIP = {2: (0, 255), 3: (-128, 127), 5: (-(1 << 15), (1 << 15) - 1)}
"""The `act_clip_range` values of NPU_SET_ACTIVATION bits 12-15 that force a range."""


class FunctionalModelError(RuntimeError):
    """The command cannot be executed (unsupported mode, out-of-range access)."""


# --------------------------------------------------------------------------- #
# Feature-map addressing
# --------------------------------------------------------------------------- #


def _strides(fm: ethosu.FeatureMapAttr) -> tuple[int, int, int]:
    """`[y, x, c]` byte strides as Vela's `get_strides` computes them."""
    if (strides := fm.strides_or_none) is not None:
        return strides.as_tuple()  # type: ignore[return-value]
    e = fm.element_size
    _, width, depth = fm.shape.as_tuple()
    if fm.layout.data == ethosu.Layout.NHWC:
        return (width * depth * e, depth * e, e)
    return (e * width * (-(-depth // 16) * 16), 16 * e, 16 * e * width)


def feature_map_addresses(fm: ethosu.FeatureMapAttr) -> np.ndarray:
    """Byte address of every element `(y, x, c)` of the feature map (Vela's `get_address`)."""
    height, width, depth = fm.shape.as_tuple()
    stride_y, brick_x, stride_c, e = _address_steps(fm)
    # An element's address is its column's `(y, x)` address plus its channel's offset: both
    # computed apart, then added in one broadcast (the int64 sums are exact in any order).
    y = np.arange(height)[:, None]
    x = np.arange(width)[None, :]
    tiles = fm.tiles
    right = x >= tiles.width_0
    below = np.where(right, y >= tiles.height_1, y >= tiles.height_0)
    tile = right.astype(np.int64) + 2 * below.astype(np.int64)
    local_y = y - np.where(below, np.where(right, tiles.height_1, tiles.height_0), 0)
    local_x = x - np.where(right, tiles.width_0, 0)
    bases = np.asarray(tiles.addresses, dtype=np.int64)[tile]
    columns = bases + local_y * stride_y + local_x * brick_x
    c = np.arange(depth)
    channels = (c // 16) * stride_c + (c % 16) * e
    return columns[:, :, None] + channels[None, None, :]


def _address_steps(fm: ethosu.FeatureMapAttr) -> tuple[int, int, int, int]:
    """Bytes per local row, per column, per 16-channel brick and per channel within a brick:
    an element's address is `tile base + y * row + x * column + (c // 16) * brick + (c % 16) *
    channel` (NHWC: a brick of 16 channels is `16 * e` bytes, so the last two are `c * e`)."""
    stride_y, stride_x, stride_c = _strides(fm)
    e = fm.element_size
    if fm.layout.data == ethosu.Layout.NHWC:
        return stride_y, stride_x, 16 * e, e
    return stride_y, 16 * e, stride_c, e


def feature_map_extent(fm: ethosu.FeatureMapAttr) -> tuple[int, int]:
    """The lowest and highest element address of the feature map, the min and max of
    `feature_map_addresses(fm)` without building it: an address is linear in each of the
    tile's local row and column, the brick and the channel within it, so its extremes lie at
    the ends of their ranges (e.g. NHCWB16 depth 40: channels 0, 15, 16, 31, 32 and 39)."""
    height, width, depth = fm.shape.as_tuple()
    stride_y, brick_x, stride_c, e = _address_steps(fm)
    channels = [(c // 16) * stride_c + (c % 16) * e for c in _channel_corners(depth)]
    lows, highs = [], []
    for base, (first_y, last_y), (first_x, last_x) in _tile_ranges(fm.tiles, height, width):
        terms = [(first_y * stride_y, last_y * stride_y), (first_x * brick_x, last_x * brick_x), channels]
        lows.append(base + sum(min(term) for term in terms))
        highs.append(base + sum(max(term) for term in terms))
    if not lows or not channels:  # no element: the array's min raises
        addresses = feature_map_addresses(fm)
        return int(addresses.min()), int(addresses.max())
    return min(lows), max(highs)


def feature_map_span(fm: ethosu.FeatureMapAttr) -> tuple[int, int] | None:
    """The bytes `[start, end)` the elements of `fm` fill when they make one range without
    gaps, else None. Each tile's bytes are one range when each dimension, innermost first,
    steps by the length of the ones inside it: NHWC rows of full width and depth, or NHCWB16
    whose depth is a multiple of 16 (a partial brick leaves a gap after every column). The
    ranges of the tiles then have to join up (a rolling buffer's wrap usually does not).
    E.g. rows 4-7 of an NHWC 8x8x16 int8 map at 0: each column is 16 bytes, each row 128,
    four rows 512, so `(512, 1024)`."""
    height, width, depth = fm.shape.as_tuple()
    stride_y, brick_x, stride_c, e = _address_steps(fm)
    if fm.layout.data == ethosu.Layout.NHWC:
        unit, inner = depth * e, []
    elif depth <= 16:
        unit, inner = depth * e, []  # one brick: a gap after each column unless depth is 16
    elif depth % 16 == 0:
        unit, inner = 16 * e, [(depth // 16, stride_c)]
    else:
        return None
    spans = []
    for base, (first_y, last_y), (first_x, last_x) in _tile_ranges(fm.tiles, height, width):
        length = unit
        # (count, step) of columns within a brick row, then bricks, then rows.
        for count, step in [(last_x - first_x + 1, brick_x), *inner, (last_y - first_y + 1, stride_y)]:
            if count == 1:
                continue
            if step != length:
                return None
            length *= count
        start = base + first_y * stride_y + first_x * brick_x
        spans.append((start, start + length))
    if not spans:
        return None
    spans.sort()
    start, end = spans[0]
    for next_start, next_end in spans[1:]:
        if next_start > end:
            return None
        end = max(end, next_end)
    return start, end


def _channel_corners(depth: int) -> list[int]:
    """The channels where `(c // 16) * brick + (c % 16) * channel` can be extreme: the first
    and last of the first brick, of the last full brick and of the (partial) last brick."""
    last = depth - 1
    candidates = {0, 15, last - last % 16 - 16, last - last % 16 - 1, last - last % 16, last}
    return sorted(c for c in candidates if 0 <= c <= last)


def _tile_ranges(
    tiles: ethosu.TileBoxAttr, height: int, width: int
) -> list[tuple[int, tuple[int, int], tuple[int, int]]]:
    """Each tile with elements: its base address and the first and last local row and column
    (tiles 0 and 2 are the columns left of `width_0`, split at row `height_0`; tiles 1 and 3
    the others, split at `height_1`)."""
    split_x = min(max(tiles.width_0, 0), width)
    found = []
    for tile, (x0, x1, x_origin, split) in enumerate(
        [(0, split_x, 0, tiles.height_0), (split_x, width, tiles.width_0, tiles.height_1)]
    ):
        split_y = min(max(split, 0), height)
        for below, (y0, y1, y_origin) in enumerate([(0, split_y, 0), (split_y, height, split)]):
            if y0 < y1 and x0 < x1:
                base = tiles.addresses[tile + 2 * below]
                found.append((base, (y0 - y_origin, y1 - 1 - y_origin), (x0 - x_origin, x1 - 1 - x_origin)))
    return found


class EthosUMachine:
    """Memory regions plus the executor of `ethosu` commands."""

    def __init__(self, accelerator: str, regions: Mapping[int, bytes | bytearray | np.ndarray]):
        self.accelerator = accelerator
        self.memory: dict[int, np.ndarray] = {
            region: np.frombuffer(bytes(data), dtype=np.uint8).copy() if not isinstance(data, np.ndarray) else data
            for region, data in regions.items()
        }
        # The SHRAM, where LUTs are DMA'd (Vela's region 0x103): its LUT area starts at
        # `shram_lut_address` of the accelerator, one 256-byte slot per 8-bit LUT index.
        shram_size, self.lut_start = shram_layout(accelerator)
        self.memory.setdefault(ethosu.SHRAM_REGION, np.zeros(shram_size, dtype=np.uint8))

    # -- memory --------------------------------------------------------------

    def region(self, index: int) -> np.ndarray:
        if index not in self.memory:
            raise FunctionalModelError(f"region {index:#x} has no memory")
        return self.memory[index]

    def read_bytes(self, region: int, address: int, length: int) -> bytes:
        memory = self.region(region)
        if address < 0 or address + length > memory.size:
            raise FunctionalModelError(f"read [{address:#x}, {address + length:#x}) outside region {region}")
        return memory[address : address + length].tobytes()

    def read(self, fm: ethosu.FeatureMapAttr) -> np.ndarray:
        """The feature map's elements, `[height, width, depth]`, as int64."""
        return read_feature_map(self.region(fm.region.data), fm)

    def write(self, fm: ethosu.FeatureMapAttr, values: np.ndarray) -> None:
        write_feature_map(self.region(fm.region.data), fm, values)

    # -- execution -----------------------------------------------------------

    def run(self, stream: ethosu.CommandStreamOp) -> None:
        for command in stream.commands:
            self.execute(command)

    def run_register_stream(self, words: Sequence[int]) -> None:
        """Executes a register command stream as the hardware sees it: every operation with
        the register values the stream set, whoever generated it (our lowering or Vela)."""
        from cascade.ethos_u.serialize import command_from_registers, decode_registers

        for decoded in decode_registers(words):
            self.execute(command_from_registers(decoded), decoded)

    def execute(self, command: ethosu.EthosUCommand, registers: _Registers | None = None) -> None:
        """Executes one command. `registers` are its register values (default: those Vela
        programs for the command alone)."""
        if isinstance(command, ethosu.DmaOp):
            src, dest = command.src, command.dest
            data = self.read_bytes(src.region, src.address, src.length)
            target = self.memory.setdefault(dest.region, np.zeros(0, dtype=np.uint8))
            if dest.address + src.length > target.size:
                raise FunctionalModelError(f"DMA writes beyond region {dest.region}")
            target[dest.address : dest.address + src.length] = np.frombuffer(data, dtype=np.uint8)
            return
        upscale = command.ifm_upscale.data
        if upscale == ethosu.ResamplingMode.TRANSPOSE or (
            upscale == ethosu.ResamplingMode.NEAREST and not isinstance(command, ethosu.PoolingOp)
        ):
            raise FunctionalModelError(f"IFM upscaling '{upscale.value}' is modelled for pooling only (nearest)")
        if registers is None:
            registers = _registers(command, self.accelerator)
        if isinstance(command, ethosu.Conv2DOp | ethosu.DepthwiseConv2DOp):
            result = self._convolution(command, registers)
        elif isinstance(command, ethosu.PoolingOp):
            result = self._pooling(command, registers)
        elif isinstance(command, ethosu.ElementwiseOp):
            result = self._elementwise(command, registers)
        else:
            raise FunctionalModelError(f"unsupported command {command.name}")
        low, high = registers.reg("ACTIVATION_MIN", signed=True), registers.reg("ACTIVATION_MAX", signed=True)
        result = result + registers.reg("OFM_ZERO_POINT", signed=True)
        activation = registers.reg("ACTIVATION")
        function, clip_range = activation & 0xFFF, activation >> 12
        if 16 <= function < 24:
            result = self._lookup(command.ofm, result, function - 16)
        elif function:
            raise FunctionalModelError("the tanh and sigmoid activation functions are not modelled")
        if clip_range in _FORCED_CLIP:
            forced_low, forced_high = _FORCED_CLIP[clip_range]
            low, high = max(low, forced_low), min(high, forced_high)
        elif command.ofm.data_type.data == ethosu.DataType.INT32:
            # The clamp registers are 16 bits; a 32-bit OFM (e.g. a raw sum) is not clamped.
            low, high = None, None
        self.write(command.ofm, np.clip(result, low, high) if low is not None else result)

    def _lookup(self, ofm: ethosu.FeatureMapAttr, values: np.ndarray, index: int) -> np.ndarray:
        """An 8-bit table lookup: the saturated OFM value indexes a 256-entry LUT in SHRAM."""
        data_type = ofm.data_type.data
        if data_type not in (ethosu.DataType.INT8, ethosu.DataType.UINT8):
            raise FunctionalModelError("only 8-bit LUTs are modelled")
        dtype = _NUMPY_TYPES[data_type]
        info = np.iinfo(dtype)
        address = self.lut_start + 256 * index
        table = self.memory[ethosu.SHRAM_REGION][address : address + 256].view(dtype).astype(np.int64)
        return table[np.clip(values, info.min, info.max).astype(np.int64) - info.min]

    def _convolution(self, command: ethosu.Conv2DOp | ethosu.DepthwiseConv2DOp, registers: _Registers) -> np.ndarray:
        kernel = command.kernel
        ifm = self.read(command.ifm) - registers.reg("IFM_ZERO_POINT", signed=True)
        padded = _pad(ifm, command.padding, 0)
        depthwise = isinstance(command, ethosu.DepthwiseConv2DOp)
        out_h, out_w, out_c = command.ofm.shape.as_tuple()
        in_c = 1 if depthwise else command.ifm.shape.depth
        traversal = ethosu.BlockTraversal.DEPTH_FIRST if depthwise else command.block_traversal.data
        weights = np.zeros((out_c, kernel.height, kernel.width, in_c), dtype=np.int64)
        bias, scale, shift = (np.zeros(out_c, dtype=np.int64) for _ in range(3))
        # One weight stream and one set of bias records per NPU core; core k computes every
        # `ncores`-th output channel from channel k (two cores on Ethos-U65-512).
        ncores = len(command.weight_ranges)
        if ncores != len(command.bias_ranges) or ncores not in (1, ethosu.cores(self.accelerator)):
            raise FunctionalModelError(
                f"{len(command.weight_ranges)} weight and {len(command.bias_ranges)} bias ranges on "
                f"{self.accelerator} ({ethosu.cores(self.accelerator)} cores)"
            )
        for core, (weight_range, bias_range) in enumerate(zip(command.weight_ranges, command.bias_ranges, strict=True)):
            channels = ethosu.core_channels(0, out_c, core, ncores)
            count = len(range(out_c)[channels])
            stream = self.read_bytes(weight_range.region, weight_range.address, weight_range.length)
            weights[channels] = decode_weights(
                stream,
                self.accelerator,
                (count, kernel.height, kernel.width, in_c),
                (kernel.dilation_y, kernel.dilation_x),
                ethosu.core_block_depth(command.block_config.depth, core, ncores),
                depthwise,
                traversal,
            )
            records = self.read_bytes(bias_range.region, bias_range.address, 10 * count)
            bias[channels], scale[channels], shift[channels] = decode_bias_records(records)
        acc = np.zeros((out_h, out_w, out_c), dtype=np.int64)
        for ky in range(kernel.height):
            for kx in range(kernel.width):
                y0, x0 = ky * kernel.dilation_y, kx * kernel.dilation_x
                patch = padded[
                    y0 : y0 + (out_h - 1) * kernel.stride_y + 1 : kernel.stride_y,
                    x0 : x0 + (out_w - 1) * kernel.stride_x + 1 : kernel.stride_x,
                ]
                if depthwise:
                    acc += patch * weights[:, ky, kx, 0]
                else:
                    acc += patch @ weights[:, ky, kx, :].T
        rounding = command.rounding_mode.data
        return scale_values(acc + bias, scale, shift, rounding)

    def _pooling(self, command: ethosu.PoolingOp, registers: _Registers) -> np.ndarray:
        kernel, padding = command.kernel, command.padding
        ifm = self.read(command.ifm) - registers.reg("IFM_ZERO_POINT", signed=True)
        if command.ifm_upscale.data == ethosu.ResamplingMode.NEAREST:
            ifm = ifm.repeat(2, axis=0).repeat(2, axis=1)  # each element fills a 2x2 square
        in_h, in_w, _ = ifm.shape
        out_h, out_w, depth = command.ofm.shape.as_tuple()
        kind = command.kind.data
        total = np.zeros((out_h, out_w, depth), dtype=np.int64)
        best = np.full((out_h, out_w, depth), np.iinfo(np.int64).min, dtype=np.int64)
        count = np.zeros((out_h, out_w, 1), dtype=np.int64)
        for ky in range(kernel.height):
            for kx in range(kernel.width):
                ys = np.arange(out_h) * kernel.stride_y - padding.top + ky
                xs = np.arange(out_w) * kernel.stride_x - padding.left + kx
                valid = ((ys >= 0) & (ys < in_h))[:, None] & ((xs >= 0) & (xs < in_w))[None, :]
                values = ifm[np.clip(ys, 0, in_h - 1)][:, np.clip(xs, 0, in_w - 1)]
                total += np.where(valid[..., None], values, 0)
                best = np.where(valid[..., None], np.maximum(best, values), best)
                count += valid[..., None]
        if kind == ethosu.PoolingKind.MAX:
            return best
        if kind == ethosu.PoolingKind.REDUCE_SUM:
            return total
        if "OFM_SCALE" in registers.payloads and sum(padding.as_tuple()) == 0:
            scale, shift = registers.payloads["OFM_SCALE"], registers.registers["OFM_SCALE"]
            return scale_values(total, scale, shift, command.rounding_mode.data)
        if np.any(count == 0):
            raise FunctionalModelError("average pooling window without an in-image tap")
        half = count // 2
        numerator = np.where(total >= 0, total + half, total - half)
        return np.sign(numerator) * (np.abs(numerator) // count)

    def _elementwise(self, command: ethosu.ElementwiseOp, registers: _Registers) -> np.ndarray:
        kind = command.kind.data
        a = self.read(command.ifm) - registers.reg("IFM_ZERO_POINT", signed=True)
        if command.ifm2_scalar is not None:
            b = np.full_like(a, registers.reg("IFM2_SCALAR", signed=True))
        elif command.ifm2 is not None:
            b = np.broadcast_to(self.read(command.ifm2), a.shape).astype(np.int64)
        else:
            raise FunctionalModelError(f"unary elementwise {kind.value} is not modelled")
        b = b - registers.reg("IFM2_ZERO_POINT", signed=True)
        if command.reversed_operands is not None:
            a, b = b, a
        scale, shift = registers.payloads.get("OFM_SCALE", 1), registers.registers.get("OFM_SCALE", 0)
        rounding = command.rounding_mode.data
        if kind in (ethosu.ElementwiseKind.MIN, ethosu.ElementwiseKind.MAX):
            chosen = np.minimum(a, b) if kind == ethosu.ElementwiseKind.MIN else np.maximum(a, b)
            return scale_values(chosen, scale, shift, rounding)
        if kind == ethosu.ElementwiseKind.MUL:
            return scale_values(a * b, scale, shift, rounding)
        if kind not in (ethosu.ElementwiseKind.ADD, ethosu.ElementwiseKind.SUB):
            raise FunctionalModelError(f"elementwise {kind.value} is not modelled")
        op_to_scale = (registers.reg("IFM_PRECISION") >> 8) & 3
        if op_to_scale and command.ifm.element_size != 1:
            raise FunctionalModelError("advanced ADD/SUB scaling is modelled for 8-bit inputs only")
        opa_scale, opa_shift = registers.payloads["OPA_SCALE"], registers.registers["OPA_SCALE"]
        if op_to_scale == 0:
            a, b = a * opa_scale, b * registers.payloads["OPB_SCALE"]
        else:
            # TFLite's operand rescale with Vela's register values: the 8-bit input shift is 20.
            def rescale(x: np.ndarray) -> np.ndarray:
                return _round_half_away(_round_half_up(x * opa_scale, 11), opa_shift - 11)

            if op_to_scale == 1:
                a, b = rescale(a), b << 19
            else:
                a, b = a << 19, rescale(b)
        total = a + b if kind == ethosu.ElementwiseKind.ADD else a - b
        return scale_values(total, scale, shift, rounding)


@lru_cache(maxsize=8)
def shram_layout(accelerator: str) -> tuple[int, int]:
    """(SHRAM bytes, start of the LUT area) of an accelerator, from Vela's architecture."""
    from cascade.ethos_u.arch import vela_default_arch

    arch = vela_default_arch(accelerator)
    return int(arch.shram_size_bytes), int(arch.shram_lut_address)


def _pad(values: np.ndarray, padding: ethosu.PaddingAttr, fill: int) -> np.ndarray:
    top, left, bottom, right = padding.as_tuple()
    return np.pad(values, ((top, bottom), (left, right), (0, 0)), constant_values=fill)


def read_feature_map(memory: np.ndarray, fm: ethosu.FeatureMapAttr) -> np.ndarray:
    """The elements of `fm` read from one region's bytes, as int64 `[height, width, depth]`."""
    addresses = feature_map_addresses(fm)
    dtype = _NUMPY_TYPES[fm.data_type.data]
    if addresses.min() < 0 or addresses.max() + dtype.itemsize > memory.size:
        raise FunctionalModelError(f"feature map reads outside its region ({memory.size} bytes)")
    raw = np.stack([memory[addresses + i] for i in range(dtype.itemsize)], axis=-1)
    return raw.copy().view(dtype)[..., 0].astype(np.int64)


def write_feature_map(memory: np.ndarray, fm: ethosu.FeatureMapAttr, values: np.ndarray) -> None:
    """Stores `values` (saturated to the element type) at the feature map's addresses."""
    addresses = feature_map_addresses(fm)
    dtype = _NUMPY_TYPES[fm.data_type.data]
    if addresses.min() < 0 or addresses.max() + dtype.itemsize > memory.size:
        raise FunctionalModelError(f"feature map writes outside its region ({memory.size} bytes)")
    info = np.iinfo(dtype)
    data = np.clip(values, info.min, info.max).astype(dtype)
    raw = data[..., None].view(np.uint8)
    for i in range(dtype.itemsize):
        memory[addresses + i] = raw[..., i]


# --------------------------------------------------------------------------- #
# Arithmetic
# --------------------------------------------------------------------------- #


def _round_half_up(x: np.ndarray, shift: int | np.ndarray) -> np.ndarray:
    """`x / 2**shift` rounded half up, toward +infinity (SaturatingRoundingDoublingHighMul's
    nudge-and-truncate rounding, and the NATURAL mode)."""
    s = np.asarray(shift, dtype=np.int64)
    half = np.where(s > 0, np.left_shift(np.int64(1), np.maximum(s - 1, 0)), 0)
    return (np.asarray(x, dtype=np.int64) + half) >> s


def _round_half_away(x: np.ndarray, shift: int | np.ndarray) -> np.ndarray:
    """`x / 2**shift` rounded half away from zero (gemmlowp's rounding), exact in int64."""
    x = np.asarray(x, dtype=np.int64)
    s = np.asarray(shift, dtype=np.int64)
    if np.any(s < 0):
        raise FunctionalModelError("negative rounding shift")
    half = np.where(s > 0, np.left_shift(np.int64(1), np.maximum(s - 1, 0)), 0)
    magnitude = (np.abs(x) + half) >> s
    return np.sign(x) * magnitude


def scale_values(
    acc: np.ndarray, scale: np.ndarray | int, shift: np.ndarray | int, rounding: ethosu.RoundingMode
) -> np.ndarray:
    """`acc * scale / 2**shift` with the NPU rounding mode (per-channel arrays broadcast)."""
    acc = np.asarray(acc, dtype=np.int64)
    scale = np.asarray(scale, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    if int(np.abs(acc).max(initial=0)) * int(np.abs(scale).max(initial=0)) >= 1 << 62:
        return _scale_values_exact(acc, scale, shift, rounding)
    product = acc * scale
    if rounding == ethosu.RoundingMode.TFL:
        # SaturatingRoundingDoublingHighMul (round half up at bit 31) and RoundingDivideByPOT
        # (round half away from zero) for the rest; a shift below 31 is TFLite's left shift
        # of the input, after which the high multiply rounds once.
        high = _round_half_up(product, np.minimum(shift, 31))
        return _round_half_away(high, np.maximum(shift - 31, 0))
    if rounding == ethosu.RoundingMode.NATURAL:
        return _round_half_up(product, shift)
    return np.sign(product) * (np.abs(product) >> shift)


def _scale_values_exact(
    acc: np.ndarray, scale: np.ndarray, shift: np.ndarray, rounding: ethosu.RoundingMode
) -> np.ndarray:
    """`scale_values` in Python integers, for products beyond int64 (40-bit accumulators or
    32-bit elementwise operands times a 32-bit scale)."""
    acc, scale, shift = np.broadcast_arrays(acc, scale, shift)

    def one(a: int, m: int, s: int) -> int:
        product = a * m
        if rounding == ethosu.RoundingMode.TFL:
            first = min(s, 31)
            high = (product + ((1 << first) >> 1)) >> first
            rest = max(s - 31, 0)
            if rest == 0:
                return high
            magnitude = (abs(high) + (1 << (rest - 1))) >> rest
            return magnitude if high >= 0 else -magnitude
        if rounding == ethosu.RoundingMode.NATURAL:
            return (product + ((1 << s) >> 1)) >> s
        return (abs(product) >> s) * (1 if product >= 0 else -1)

    flat = [one(int(a), int(m), int(s)) for a, m, s in zip(acc.ravel(), scale.ravel(), shift.ravel(), strict=True)]
    return np.array(flat, dtype=object).reshape(acc.shape)


def decode_bias_records(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bias, scale, shift) per channel from `npu_encode_bias` records (10 bytes each)."""
    count = len(data) // 10
    raw = np.frombuffer(data[: 10 * count], dtype=np.uint8).reshape(count, 10).astype(np.int64)
    bias = sum(raw[:, i] << (8 * i) for i in range(5))
    bias = np.where(bias >= 1 << 39, bias - (1 << 40), bias)
    scale = sum(raw[:, 5 + i] << (8 * i) for i in range(4))
    shift = raw[:, 9] & 0x3F
    return bias, scale, shift


@lru_cache(maxsize=256)
def _weight_order(
    accelerator: str,
    shape: tuple[int, int, int, int],
    dilation: tuple[int, int],
    block_depth: int,
    depthwise: bool,
    traversal: ethosu.BlockTraversal,
) -> np.ndarray:
    """For each value of the decoded (reordered) weight stream, its flat OHWI index, or -1
    for the zero padding Vela's reordering inserts.

    Found by encoding index digits: the reordering does not depend on the values, so encoding
    volumes whose elements are the base-254 digits of their own index (mapped to non-zero
    weights) and decoding them gives every position's index.
    """
    from ethosu import mlw_codec

    from cascade.ethos_u.npu_lowering import encode_weights

    size = int(np.prod(shape))
    index = np.arange(size, dtype=np.int64)
    digits = 1
    while 254**digits < size:
        digits += 1
    order: np.ndarray | None = None
    for d in range(digits):
        digit = (index // 254**d) % 254
        values = np.where(digit < 127, digit - 127, digit - 126).reshape(shape)  # never 0
        stream = encode_weights(accelerator, values, (dilation[0], dilation[1]), block_depth, depthwise, traversal)
        decoded = np.asarray(mlw_codec.decode(bytearray(stream)), dtype=np.int64)
        recovered = np.where(decoded < 0, decoded + 127, decoded + 126)
        part = np.where(decoded == 0, -1, recovered * 254**d)
        order = part if order is None else np.where(part < 0, -1, order + part)
    assert order is not None
    return order


def decode_weights(
    stream: bytes,
    accelerator: str,
    shape: tuple[int, int, int, int],
    dilation: tuple[int, int],
    block_depth: int,
    depthwise: bool,
    traversal: ethosu.BlockTraversal,
) -> np.ndarray:
    """OHWI weights from an MLW stream encoded for this shape, block depth and traversal."""
    from ethosu import mlw_codec

    decoded = np.asarray(mlw_codec.decode(bytearray(stream)), dtype=np.int64)
    order = _weight_order(accelerator, shape, dilation, block_depth, depthwise, traversal)
    if decoded.size < order.size:
        raise FunctionalModelError(f"weight stream decodes to {decoded.size} values, expected {order.size}")
    decoded = decoded[: order.size]
    if np.any(decoded[order < 0] != 0):
        raise FunctionalModelError("weight stream has non-zero values in the reordering padding")
    weights = np.zeros(int(np.prod(shape)), dtype=np.int64)
    weights[order[order >= 0]] = decoded[order >= 0]
    return weights.reshape(shape)


# --------------------------------------------------------------------------- #
# Registers
# --------------------------------------------------------------------------- #


def _registers(command: ethosu.EthosUCommand, accelerator: str) -> _Registers:
    """The register file Vela programs for `command` alone."""
    from cascade.ethos_u.serialize import SerializationError, decode_registers, single_command_words

    try:
        words = single_command_words(command, accelerator)
    except SerializationError as error:
        raise FunctionalModelError(str(error)) from None
    (decoded,) = decode_registers(words)
    return decoded
