"""`EthosUCostModel`: the planner's `CostModel` for an Ethos-U55/U65 configuration.

The generic planner asks three questions (`cascade.passes.planner.cost.CostModel`):

* `stripe_cycles(op, output, weights_in_sram)`: cycles to compute a region of an operator's
  output with its feature maps in SRAM. The operator is lowered to NPU operations for exactly
  that region (`cascade.ethos_u.lowering`), each priced by `cascade.ethos_u.performance`:
  compute with the block config Vela would pick, and traffic per memory. Weights stream from
  their home memory (flash or DRAM) once per OFM block row/column of the stripe unless
  `weights_in_sram`, in which case they are read from SRAM (the one-time copy is
  `weight_transfer_cycles`, for the planner to add where it schedules the DMA).
* `weight_buffer_bytes(op)`: SRAM for the encoded weight stream and the bias/scale records.
  The stream is encoded with Vela's own encoder (`npu_encode_weights`), so its size is what the
  hardware reads, compression included.
* `buffer_bytes(tensor, region_shape)`: SRAM for a feature-map buffer in the NPU's brick layout
  (NHCWB16: depth rounded up to 16), 16-byte aligned.

`region_cost` answers the same question with any placement of the operands, which the
network estimate (`cascade.ethos_u.estimate`) uses for Vela's memory modes.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

import numpy as np
from ethosu.vela.api import NpuBlockTraversal, npu_encode_weights

from cascade.dialects.access import Region
from cascade.ethos_u.arch import AcceleratorConfig, ArchConfig, Memory
from cascade.ethos_u.lowering import LoweredOp, Operand, UnsupportedOpError, hwc, lower, refusal
from cascade.ethos_u.performance import (
    BlockConfig,
    Layout,
    NpuKind,
    NpuOp,
    OpPerformance,
    Placement,
    Traversal,
    op_performance,
    select_block_config,
    transfer_cycles,
)
from cascade.passes.planner.graph import OpInfo, TensorInfo

if TYPE_CHECKING:
    from cascade.ethos_u.npu_lowering import EncodingRequest

ALIGNMENT = 16  # Vela aligns every tensor, weight stream and buffer to 16 bytes
SCALE_RECORD_BYTES = 10  # per output channel: 40-bit bias, 32-bit scale, 6-bit shift
_Memoised = TypeVar("_Memoised")


class _Stream(NamedTuple):
    """One weight stream to encode, for one NPU core."""

    volume: np.ndarray  # OHWI, zero point subtracted
    dilation: tuple[int, int]  # x, y
    npu: NpuOp
    block_depth: int
    traversal: NpuBlockTraversal


def _round_up(value: int, quantum: int) -> int:
    return -(-value // quantum) * quantum


@dataclass(frozen=True)
class MemoryMap:
    """Where the operands of an operator live.

    `tensors` overrides `feature_maps` for particular program tensors; temporaries inside a
    decomposed operator (mean, softmax) use `temporaries`; constants other than the weight stream
    (softmax's scalars, a constant addend) use `constants`.
    """

    feature_maps: Memory
    temporaries: Memory
    constants: Memory
    tensors: Mapping[str, Memory] = field(default_factory=dict, hash=False, compare=False)

    def memory(self, operand: Operand) -> Memory:
        if operand.constant:
            return self.constants
        if operand.tensor is None:
            return self.temporaries
        return self.tensors.get(operand.tensor, self.feature_maps)


@dataclass
class RegionCost:
    """The NPU operations that compute one region of an operator, priced."""

    ops: list[tuple[LoweredOp, OpPerformance]]

    @property
    def total_cycles(self) -> int:
        """Each NPU operation runs as long as its slowest resource; operations run one after another."""
        return sum(perf.total_cycles for _, perf in self.ops)

    @property
    def npu_cycles(self) -> int:
        return sum(perf.npu_cycles for _, perf in self.ops)

    @property
    def macs(self) -> int:
        return sum(perf.macs for _, perf in self.ops)

    def bytes_by_memory(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for _, perf in self.ops:
            for memory, count in perf.bytes_by_memory().items():
                totals[memory] = totals.get(memory, 0) + count
        return totals

    def access_cycles(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for _, perf in self.ops:
            for memory, cycles in perf.access_cycles.items():
                totals[memory] = totals.get(memory, 0) + cycles
        return totals


@lru_cache(maxsize=1 << 15)
def _performance(
    npu: NpuOp, accelerator: AcceleratorConfig, placement: Placement, block: BlockConfig | None, first: bool, last: bool
) -> OpPerformance:
    """`op_performance`, memoised for the process: regions of one operator often lower to the
    same NPU operation (a 1x1 convolution's stripe prices the same wherever it lies), and the
    report prices the plan the planner priced (on mbv2_100_224, 82 ms of pricing without it).
    Never modified once made."""
    return op_performance(npu, accelerator, placement, block=block, first=first, last=last)


class _PerOperator(Generic[_Memoised]):
    """Answers memoised per operator and an optional hashable detail. By identity: `OpInfo`
    equality leaves out the attributes (stride, weight values), so two operators equal as
    `OpInfo` may lower differently. Each entry keeps its operator, so that the id in its key
    is not reused by another."""

    def __init__(self) -> None:
        self._entries: dict[tuple[int, Hashable], tuple[OpInfo, _Memoised]] = {}

    def get(self, op: OpInfo, detail: Hashable, compute: Callable[[], _Memoised]) -> _Memoised:
        key = (id(op), detail)
        known = self._entries.get(key)
        if known is not None and known[0] is op:
            return known[1]
        value = compute()
        self._entries[key] = (op, value)
        return value


@cache
def _npu_kinds() -> frozenset[str]:
    """The nn operator kinds with an NPU lowering (`npu_lowering.SUPPORTED_OPS`)."""
    from cascade.ethos_u.npu_lowering import SUPPORTED_OPS

    return frozenset(supported.name.removeprefix("nn.") for supported in SUPPORTED_OPS)


ENCODED_SIZE_MEMO = 8192
"""Encoded weight sizes `EthosUCostModel` keeps for the process, the oldest dropped first."""

UPFRONT_SHARE = 1 << 18
"""Bytes of int16 weights (`parallel.split_map`'s unit) from which the whole streams sized
before the search (`size_weights`) are shared with a forked child, below `parallel.MIN_SIZE`.
Forking once, early in the compile, is cheap: U55-128, fastest of 5, mbv2_035_96 (746 KiB as
int16) 45.4 -> 35.9 ms, mbv1_025_96 (405 KiB) 23.3 -> 20.5 ms; at 128 KiB resnet8
(150 KiB) would take 9.6 -> 11.6 ms."""


class _SizeKey:
    """What an encoded size depends on (`EthosUCostModel._size_key`), hashed once: the parts
    hold the operator with its access relations, which a lookup would otherwise hash each
    time (20 of allocate-memory's 55 ms on mbv2_035_96)."""

    __slots__ = ("_hash", "parts")

    def __init__(self, parts: tuple[object, ...]) -> None:
        self.parts = parts
        self._hash = hash(parts)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _SizeKey) and self._hash == other._hash and self.parts == other.parts


_ENCODED_SIZES: OrderedDict[tuple[_SizeKey, tuple[int, int] | None], int] = OrderedDict()
"""Encoded sizes by everything an encoding depends on (`EthosUCostModel._size_key`): shared by
the cost models of one compile, as allocate-memory sizes again the weights cascade-plan sized
(on mbv2_035_96 for U65-256, 30 of its 70 ms)."""


class EthosUCostModel:
    """Prices operators and stripes on one Ethos-U configuration (implements `CostModel`)."""

    def __init__(self, arch: ArchConfig, layouts: Mapping[str, Layout] | None = None, fc_on_npu: bool = False) -> None:
        self.arch = arch
        self.fc_on_npu = fc_on_npu
        """Whether fully connected layers run on the NPU (lower-to-ethosu's `fc-on-npu`)."""
        self.layouts: dict[str, Layout] = dict(layouts or {})
        self._keys: _PerOperator[tuple[object, ...] | None] = _PerOperator()
        self._size_keys: _PerOperator[_SizeKey | None] = _PerOperator()
        self._volumes: dict[tuple[object, ...], np.ndarray | None] = {}
        # The planner prices a region with its weights in SRAM and out, pipelined and not:
        # lower it once.
        self._lowerings: _PerOperator[tuple[LoweredOp, ...]] = _PerOperator()
        # The planner asks about the operators of every candidate cascade: 37,515 times about
        # mbv2_100_224's 65 operators, each answer a `refusal` and a set of kinds built anew.
        self._cascadable: _PerOperator[bool] = _PerOperator()

    # ------------------------------------------------------------------ #
    # The CostModel protocol
    # ------------------------------------------------------------------ #

    def stripe_cycles(
        self, op: OpInfo, output: Region, weights_in_sram: bool, spilled: frozenset[str] = frozenset()
    ) -> int:
        """Cycles to compute `output` of `op` with its feature maps in SRAM, except the tensors
        named in `spilled`, in the arena memory (see the module doc)."""
        return self.region_cost(op, output, self.memory_map(spilled), weights_in_sram).total_cycles

    def memory_map(self, spilled: frozenset[str] = frozenset()) -> MemoryMap:
        """Feature maps and temporaries in SRAM, the tensors named in `spilled` in the arena
        memory (DRAM in Dedicated_Sram), constants in their home memory."""
        sram = self.arch.staging_memory
        return MemoryMap(sram, sram, self.arch.const_memory, {name: self.arch.arena_memory for name in spilled})

    def can_spill(self) -> bool:
        """Whether full tensors may live in the arena instead of SRAM: in Dedicated_Sram, where
        the arena is DRAM and the SRAM a cache (Vela's feature-map spilling)."""
        return self.arch.spilling

    def sram_capacity(self) -> int:
        """The SRAM the memory mode gives the plan: `arena_cache_size` (384 KiB in U65's default
        Dedicated_Sram_384KB), or the whole address space when the mode sets none, as in Vela."""
        return self.arch.staging_limit

    def sram_name(self) -> str:
        """What `sram_capacity` is, for messages."""
        return f"the SRAM of memory mode {self.arch.mode.name} (arena_cache_size)"

    def pipelined_stripe_cycles(
        self, op: OpInfo, output: Region, weights_in_sram: bool, spilled: frozenset[str] = frozenset()
    ) -> int:
        """Cycles of `output` as one of many stripes of `op` in a cascade: as `stripe_cycles`
        without the first IFM fetch, the last OFM write and the pipeline fill and drain, which
        the planner pays once per operator and cascade (`stripe_cycles` of the whole operator
        less its `pipelined_stripe_cycles`).

        This is how Vela prices a cascaded operator (`estimate_full_op_performance`: the whole
        operator with the block config of its stripe), so that the sum over a cascade's stripes
        follows Vela's: a 1-row stripe of a 24x24x16 3x3/2 depthwise on U55-128 takes 880
        cycles alone (one block: MAC, then output, plus the first fetch and last write) but 384
        pipelined (its memory traffic); 24 stripes and the once-paid part come to 10.4k, where
        Vela estimates that operator cascaded in 1-row stripes at 8.8k (mbv1_025_96, Vela's
        `--optimise Size` schedule) and stripes priced alone would sum to 21.1k.
        """
        memories = self.memory_map(spilled)
        return self.region_cost(op, output, memories, weights_in_sram, first=False, last=False).total_cycles

    def can_cascade(self, op: OpInfo) -> bool:
        """Whether lower-to-ethosu can run `op` stripe by stripe: its kind has an NPU lowering
        (`npu_lowering.SUPPORTED_OPS`; a concatenation, for one, runs alone, on the CPU) and
        its parameters are in the NPU's range (`lowering.refusal`: not a stride-4 convolution)."""
        return self._cascadable.get(op, None, lambda: op.kind in _npu_kinds() and refusal(op) is None)

    def runs_on_npu(self, op: OpInfo) -> bool:
        """Whether lower-to-ethosu puts `op` in a command stream: what it cascades, except
        `fully_connected`, which stays on the CPU unless `fc_on_npu` (the NPU's rounding
        differs from TFLite's by 1 LSB)."""
        return (self.fc_on_npu or op.kind != "fully_connected") and self.can_cascade(op)

    def weight_buffer_bytes(self, op: OpInfo) -> int:
        """SRAM for all of `op`'s weights: encoded stream plus scale records, each 16-byte aligned."""
        weights = self.encoded_weight_bytes(op)
        if not weights:
            return 0
        records = self.scale_bytes(op)
        return _round_up(weights, ALIGNMENT) + (self._records_bytes(op.output.shape[-1]) if records else 0)

    def buffer_bytes(self, tensor: TensorInfo, region_shape: tuple[int, ...]) -> int:
        """SRAM for a `region_shape` part of `tensor`: brick layout rounds the depth up to 16.

        A 5x16x24 int8 stripe in NHCWB16 takes 5 * 16 * 32 = 2560 bytes.
        """
        shape = hwc(region_shape)
        depth = shape[2]
        if self.layouts.get(tensor.name, Layout.NHCWB16) is Layout.NHCWB16:
            depth = _round_up(depth, 16)
        return _round_up(shape[0] * shape[1] * depth * tensor.element_bytes, ALIGNMENT)

    # ------------------------------------------------------------------ #
    # Weights
    # ------------------------------------------------------------------ #

    def scale_bytes(self, op: OpInfo) -> int:
        """Bias and scale records: 10 bytes per output channel of an operator with weights."""
        if op.kind in ("conv2d", "depthwise_conv2d", "transpose_conv2d", "fully_connected", "mean"):
            return SCALE_RECORD_BYTES * op.output.shape[-1]
        return 0

    def weight_transfer_cycles(self, op: OpInfo) -> int:
        """Cycles for a DMA of all of `op`'s weights from their home memory into SRAM."""
        size = self.weight_buffer_bytes(op)
        return transfer_cycles(self.arch.const_memory, self.arch.staging_memory, size) if size else 0

    def encoded_weight_bytes(self, op: OpInfo) -> int:
        """Length of the weight stream the NPU reads for the whole operator (0 without weights)."""
        return self._encoded_bytes(op, None)

    def _encoded_bytes(self, op: OpInfo, channels: tuple[int, int] | None) -> int:
        """`_encode`, memoised on the weights' values (0 without weights). An operator left on
        the CPU reads its weights as TFLite stores them, raw int8: nothing is encoded (the
        1280x1000 classifier of mbv2_100_224 would take the encoder 0.1 s)."""
        operator = self._size_key_of(op)
        if operator is None:
            return 0
        if not self.runs_on_npu(op):
            return _round_up(_raw_weight_bytes(op, channels), ALIGNMENT)
        key = (operator, channels)
        size = _ENCODED_SIZES.get(key)
        if size is None:
            size = self._encode(op, channels)
            _remember_size(key, size)
        return size

    def _size_key_of(self, op: OpInfo) -> _SizeKey | None:
        """`_size_key`, kept by operator."""
        return self._size_keys.get(op, None, lambda: self._size_key(op))

    def _size_key(self, op: OpInfo) -> _SizeKey | None:
        """What the encoded size of `op`'s weights depends on (None without weights): their
        values (`_weight_key`), the lowering they are encoded for (the operator, its parameters
        and its tensors' layouts, which choose the block config) and the accelerator."""
        weights = self._weight_key_of(op)
        if weights is None:
            return None
        parameters = tuple(
            sorted((name, _frozen(value)) for name, value in op.attributes.items() if name != "weight_values")
        )
        layouts = tuple(self.layouts.get(tensor.name) for tensor in (*op.inputs, op.output))
        return _SizeKey((self.arch.accelerator.name, weights, op, parameters, layouts))

    def _weight_key_of(self, op: OpInfo) -> tuple[object, ...] | None:
        """`_weight_key`, kept by operator."""
        return self._keys.get(op, None, lambda: self._weight_key(op))

    def _weight_key(self, op: OpInfo) -> tuple[object, ...] | None:
        if op.kind == "mean":
            lowered = lower(op, None, self.layouts, weight_bytes=1)
            npu = lowered[0].npu
            return ("ones", npu.kernel.height, npu.kernel.width, npu.ofm[2])
        if op.kind not in ("conv2d", "depthwise_conv2d", "transpose_conv2d", "fully_connected") or not op.weights:
            return None
        values = op.attributes.get("weight_values")
        digest = None
        if isinstance(values, np.ndarray):
            digest = (values.dtype.str, hashlib.sha1(np.ascontiguousarray(values).tobytes()).hexdigest())
        return (op.name, op.kind, op.output.shape, op.weights[0].shape, digest, op.attributes.get("weight_zero_points"))

    def weight_slice_bytes(self, op: OpInfo, depth: int) -> int:
        """SRAM for the largest slice of `depth` output channels of `op`'s weights: its own
        encoded stream (for the block config that slice runs with) plus its scale records, each
        16-byte aligned, as the lowering copies it into one half of a double buffer. Each slice
        is a separate stream, so slices are not simply in proportion to the whole: a 16-channel
        slice of mbv1_025_96's 128-channel depthwise weights takes 336 to 384 bytes, where 1/8
        of the whole is 330."""
        channels = op.output.shape[-1]
        largest = 0
        for first in range(0, channels, depth):
            size = min(depth, channels - first)
            largest = max(largest, self._encoded_bytes(op, (first, size)) + self._records_bytes(size))
        return largest

    def size_weights(self, ops: Sequence[OpInfo]) -> None:
        """Encode the whole weight streams of `ops` at once: the planner asks for every
        operator's weight buffer before it searches (on mbv1_100_224 the encoder takes 0.5 s)."""
        self._encode_ahead(((op, None) for op in ops if self.runs_on_npu(op)), UPFRONT_SHARE)

    def size_weight_slices(self, op: OpInfo, depths: Sequence[int]) -> None:
        """Encode at once every slice `weight_slice_bytes` of `op` will encode for `depths`."""
        channels = op.output.shape[-1]
        self._encode_ahead(
            (op, (first, min(depth, channels - first))) for depth in depths for first in range(0, channels, depth)
        )

    def _encode_ahead(
        self, streams_of: Iterable[tuple[OpInfo, tuple[int, int] | None]], min_share: int | None = None
    ) -> None:
        """Fill the `_encoded_bytes` memo for `streams_of`, the encoder run in two processes where
        the machine allows and the weights come to `min_share` bytes as int16 (default
        `parallel.MIN_SIZE`; `npu_lowering.encode_weights_ahead`)."""
        pending = []
        for op, channels in streams_of:
            try:
                key = self._size_key_of(op)
                if key is None or (key, channels) in _ENCODED_SIZES:
                    continue
                pending.append(((key, channels), *self._encoding(op, channels)))
            except UnsupportedOpError:
                continue  # `weight_buffer_bytes` says so
        from cascade.ethos_u.npu_lowering import encode_weights_ahead

        encode_weights_ahead(
            [
                self._lowering_encoder_args(*stream)
                for _, _, streams in pending
                for stream in streams or ()
                if stream.npu.ifm_bits == 8
            ],
            min_share,
        )
        for memo_key, fallback, streams in pending:
            _remember_size(memo_key, self._encoded_total(fallback, streams))

    def _encode(self, op: OpInfo, channels: tuple[int, int] | None = None) -> int:
        """Encode the weights as Vela would for the block config chosen for the whole operator
        (or, with `channels` = (first, count), for that slice of output channels run alone)."""
        return self._encoded_total(*self._encoding(op, channels))

    def _encoded_total(self, fallback: int, streams: list[_Stream] | None) -> int:
        """Bytes of `streams`, each 16-byte aligned; `fallback` (raw int8) if there is nothing to
        encode or the encoder rejects a stream."""
        if streams is None:
            return fallback
        total = 0
        for stream in streams:
            try:
                encoded = self._encode_stream(*stream)
            except (AssertionError, ValueError):
                # A shape the encoder rejects (e.g. a depth multiplier): price it as raw int8 weights.
                return fallback
            total += _round_up(len(encoded), ALIGNMENT)
        return total

    def _encoding(self, op: OpInfo, channels: tuple[int, int] | None) -> tuple[int, list[_Stream] | None]:
        """What `_encode` encodes: the streams (one per NPU core), and the size of the weights as
        raw int8 (None for the streams if there is no constant data to encode)."""
        raw = _raw_weight_bytes(op, channels)
        region = None
        if channels is not None:
            shape = op.output.shape
            region = Region((*(0 for _ in shape[:-1]), channels[0]), (*shape[:-1], channels[1]))
        fallback = _round_up(raw, ALIGNMENT)
        lowered = [step for step in lower(op, region, self.layouts, weight_bytes=raw) if step.uses_weights]
        if not lowered:
            return fallback, []
        npu = lowered[0].npu
        block = select_block_config(npu, self.arch.accelerator)
        volume = self._encoder_weights(op, npu.kernel.height, npu.kernel.width, npu.ofm[2])
        if volume is None:
            # No constant data (a hand-built operator): assume incompressible int8 weights.
            return fallback, None
        if channels is not None and op.kind != "mean":  # a mean's weights are ones, sized already
            volume = volume[channels[0] : channels[0] + channels[1]]
        traversal = {
            Traversal.PART_KERNEL: NpuBlockTraversal.PART_KERNEL_FIRST,
            Traversal.DEPTH_FIRST: NpuBlockTraversal.DEPTH_FIRST,
            Traversal.DEPTHWISE: NpuBlockTraversal.DEPTH_FIRST,
        }[block.traversal]
        dilation = (min(npu.kernel.dilation_x, 2), min(npu.kernel.dilation_y, 2))
        from cascade.dialects import ethosu

        # A two-core U65-512 reads one stream per core: the even channels, then the odd ones,
        # each encoded for its half of the block depth (as the lowering emits them).
        ncores = ethosu.cores(self.arch.accelerator.name)
        count = volume.shape[0]
        streams = []
        for core in range(min(ncores, count)):
            block_depth = ethosu.core_block_depth(block.ofm_block[2], core, ncores)
            if block_depth:
                part = volume[ethosu.core_channels(0, count, core, ncores)]
                streams.append(_Stream(part, dilation, npu, block_depth, traversal))
        return fallback, streams

    def _encode_stream(
        self, volume: np.ndarray, dilation: tuple[int, int], npu: NpuOp, block_depth: int, traversal: NpuBlockTraversal
    ) -> bytes:
        if npu.ifm_bits == 8:
            # The lowering's memoised encoder: it emits this very stream again.
            from cascade.ethos_u.npu_lowering import encode_weights

            return encode_weights(*self._lowering_encoder_args(volume, dilation, npu, block_depth, traversal))
        return bytes(
            npu_encode_weights(
                self.arch.accelerator.npu_accelerator,
                volume,
                dilation,
                npu.ifm_bits,
                block_depth,
                npu.kind is NpuKind.DEPTHWISE,
                traversal,
            )
        )

    def _lowering_encoder_args(
        self, volume: np.ndarray, dilation: tuple[int, int], npu: NpuOp, block_depth: int, traversal: NpuBlockTraversal
    ) -> EncodingRequest:
        """A stream as `npu_lowering.encode_weights` takes it (dilation y, x; its traversal)."""
        from cascade.dialects import ethosu

        depthwise = npu.kind is NpuKind.DEPTHWISE
        return (
            self.arch.accelerator.name,
            volume,
            (dilation[1], dilation[0]),
            block_depth,
            depthwise,
            ethosu.BlockTraversal[traversal.name],
        )

    def _records_bytes(self, channels: int) -> int:
        """SRAM for the scale records of `channels` output channels: 10 bytes each, 16-byte
        aligned per core (a U65-512 keeps each core's records apart)."""
        from cascade.dialects import ethosu

        ncores = ethosu.cores(self.arch.accelerator.name)
        shares = [len(range(core, channels, ncores)) for core in range(min(ncores, channels))]
        return sum(_round_up(SCALE_RECORD_BYTES * share, ALIGNMENT) for share in shares)

    def _encoder_weights(self, op: OpInfo, kernel_h: int, kernel_w: int, channels: int) -> np.ndarray | None:
        """`_ohwi_weights`, memoised on the weights' values: every slice depth the planner sizes
        encodes the whole tensor again. Read-only, as it is shared."""
        key = (self._weight_key_of(op), kernel_h, kernel_w, channels)
        if key not in self._volumes:
            volume = self._ohwi_weights(op, kernel_h, kernel_w, channels)
            if volume is not None:
                volume.flags.writeable = False
            self._volumes[key] = volume
        return self._volumes[key]

    @staticmethod
    def _ohwi_weights(op: OpInfo, kernel_h: int, kernel_w: int, channels: int) -> np.ndarray | None:
        """The weights as the encoder wants them: OHWI, zero point subtracted, int16."""
        if op.kind == "mean":
            return np.ones((channels, kernel_h, kernel_w, 1), dtype=np.int16)
        values = op.attributes.get("weight_values")
        if not isinstance(values, np.ndarray):
            return None
        weights = values.astype(np.int16)
        zero_points = np.asarray(op.attributes.get("weight_zero_points", (0,)), dtype=np.int16)
        if op.kind == "depthwise_conv2d":
            weights = weights.reshape(weights.shape[1], weights.shape[2], weights.shape[3])
            weights = weights - (zero_points if zero_points.size in (1, weights.shape[-1]) else 0)
            return np.ascontiguousarray(weights.transpose(2, 0, 1)[..., np.newaxis])
        if op.kind == "fully_connected":
            weights = weights.reshape(weights.shape[0], 1, 1, weights.shape[1])
        if zero_points.size in (1, weights.shape[0]):
            weights = weights - zero_points.reshape(-1, 1, 1, 1)
        return np.ascontiguousarray(weights)

    # ------------------------------------------------------------------ #
    # Pricing
    # ------------------------------------------------------------------ #

    def lower(self, op: OpInfo, output: Region | None = None) -> tuple[LoweredOp, ...]:
        """The NPU operations for `output` (default the whole output) of `op`, memoised."""
        return self._lowerings.get(
            op, output, lambda: tuple(lower(op, output, self.layouts, self.encoded_weight_bytes(op)))
        )

    def region_cost(
        self,
        op: OpInfo,
        output: Region,
        memories: MemoryMap,
        weights_in_sram: bool,
        first: bool = True,
        full_op_blocks: bool = False,
        last: bool = True,
    ) -> RegionCost:
        """Price the NPU operations computing `output` of `op` with operands placed by `memories`.

        Weights are read from SRAM when `weights_in_sram`, else from the constant memory. `first`
        False means the operation follows another stripe of the same operator back to back, `last`
        False that another follows it.
        `full_op_blocks` keeps the block configs chosen for the whole operator (as for the depth
        slices of double-buffered weights) instead of choosing one for the region.
        """
        weight_memory = self.arch.staging_memory if weights_in_sram else self.arch.const_memory
        steps = self.lower(op, output)
        blocks: list[BlockConfig | None] = [None] * len(steps)
        if full_op_blocks:
            whole = self.lower(op)
            if len(whole) == len(steps):
                blocks = [select_block_config(step.npu, self.arch.accelerator) for step in whole]
        priced = []
        for step, block in zip(steps, blocks, strict=True):
            placement = Placement(
                ifm=memories.memory(step.ifm),
                ofm=memories.memory(step.ofm),
                ifm2=memories.memory(step.ifm2) if step.ifm2 is not None else None,
                weights=weight_memory if step.uses_weights else None,
                scales=weight_memory if step.uses_weights else None,
            )
            priced.append((step, _performance(step.npu, self.arch.accelerator, placement, block, first, last)))
        return RegionCost(priced)


def _remember_size(key: tuple[_SizeKey, tuple[int, int] | None], size: int) -> None:
    _ENCODED_SIZES[key] = size
    if len(_ENCODED_SIZES) > ENCODED_SIZE_MEMO:
        _ENCODED_SIZES.popitem(last=False)


def _frozen(value: object) -> object:
    """`value` as a hashable key: arrays as their type, shape and bytes, containers as tuples."""
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, np.ascontiguousarray(value).tobytes())
    if isinstance(value, list | tuple):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((key, _frozen(item)) for key, item in value.items()))
    return value


def _raw_weight_bytes(op: OpInfo, channels: tuple[int, int] | None) -> int:
    """Bytes of `op`'s weights as raw int8 (at least 1), or of the slice of `channels` =
    (first, count) of its output channels: 96 of 1000 channels of 1280-wide weights, 122,880."""
    raw = max(1, math.prod(op.weights[0].shape)) if op.weights else 1
    if channels is None:
        return raw
    return -(-raw * channels[1] // op.output.shape[-1])
