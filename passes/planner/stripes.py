"""Stripe algebra: which region of every operator of a cascade one stripe needs and computes.

A cascade `[first, sink]` executes the sink's output stripe by stripe. A `StripeConfig` names
the striped axes, outer first (`(1,)` rows, `(1, 2)` rows then columns, `(2, 1)` columns then
rows, `()` one stripe) and the sink's stripe size along each. Stripe `(i, j)` of the sink
covers rows `[i*sh, (i+1)*sh)` and columns `[j*sw, (j+1)*sw)`, clipped to the tensor (the last
stripe of an axis may be short). Stripes run in lexicographic order of their index.

For every other operator `p` of the cascade, in reverse program order, and every stripe:

* **required** box: the bounding box of what its consumers read to compute *their computed
  box* at that stripe (access relations, clipped to `p`'s output);
* **computed** box: for a `recompute` operator the whole required box; for a `rolling`
  operator only the cells not computed before: rows `(W_prev, W]` along the outer axis, where
  `W` is the highest row required so far, and columns `(V_prev, V]` along the inner axis, where
  `V` is the highest column required so far *in the current row band*. A rolling operator's
  buffer keeps the last `depth` rows (full extent on the other axes); `depth` is the largest
  span, over all stripes, from the lowest row still required to the highest row written.

Worked example (rows only): sink = 3x3 conv, stride 1, padding 1, on rolling `p`; stripes of
2 rows. Stripe 0 needs rows -1..2 of `p`, clipped 0..2: `p` computes rows 0..2; stripe 1 needs
rows 1..4: `p` computes rows 3..4 and keeps rows 1..4 live, so `depth` = 4 = (2-1)*1 + 3.

Every box is a product of one interval per axis, and the rule above is applied to each
spatial axis separately (`simulate_axis`): an operator's interval along an axis at stripe
coordinate t is the hull of its consumers' reads along that axis, over the consumers whose
interval along that axis is not empty. This is exact for chains; in a diamond where one
consumer computes nothing at a stripe because of the *other* axis, the hull may include its
columns anyway (a superset: more computed, never less). Batch is never striped.

Channel stripes (`StripeConfig((CHANNELS,), (d,))`) cut the sink's output channels (its last
axis) into slices of `d`; every intermediate is recomputed (nothing overlaps between two
slices, so there is nothing to roll) and computed whole along rows and columns. The cascade
must run in channel slices (`ProgramGraph.channel_range_start_limit`): a convolution opens
one, reading all of its input, and every later operator reads its input channel by channel.
E.g. a 1x1 convolution 320 -> 1280 at 7x7 and the global mean after it, in 16-channel
stripes: the convolution's buffer holds 7x7x16 (784 bytes) instead of 7x7x1280 (62,720).

Pure Python: no IR types, no target.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from cascade.dialects.access import Region
from cascade.passes.planner.program import CHANNELS, SPATIAL_AXES, ProgramGraph, axes_of

Interval = tuple[int, int] | None
"""An inclusive index interval [lo, hi], or None when empty."""

PriceClass = tuple[int, bool, bool]
"""How a computed interval is priced: (length, touches index 0, touches the last index)."""


@dataclass(frozen=True)
class StripeConfig:
    """How the sink's output is cut: striped axes (outer first) and the stripe size along each."""

    order: tuple[int, ...]
    sizes: tuple[int, ...]

    def size_along(self, axis: int, extent: int) -> int:
        """Stripe size along `axis`: the configured size, or the whole extent if unstriped."""
        if axis in self.order:
            return self.sizes[self.order.index(axis)]
        return extent

    @property
    def outer_axis(self) -> int | None:
        return self.order[0] if self.order else None

    @property
    def along_channels(self) -> bool:
        """Whether the stripes cut channels (then rows and columns are whole)."""
        return CHANNELS in self.order

    def ir_order(self, rank: int) -> tuple[int, ...]:
        """`order` as the axes of a rank-`rank` sink (channels: its last axis)."""
        return tuple(axis % rank for axis in self.order)

    def ir_stripe_shape(self, shape: Sequence[int]) -> list[int]:
        """The stripe shape of a sink of `shape`: the stripe size on striped axes, the extent
        elsewhere."""
        sizes = dict(zip(self.ir_order(len(shape)), self.sizes, strict=True))
        return [sizes.get(axis, extent) for axis, extent in enumerate(shape)]

    @staticmethod
    def from_ir(order: Sequence[int], stripe_shape: Sequence[int]) -> StripeConfig:
        """The configuration of a sink striped on IR axes `order` (the last one: channels)."""
        rank = len(stripe_shape)
        axes = tuple(CHANNELS if axis == rank - 1 else axis for axis in order)
        return StripeConfig(axes, tuple(stripe_shape[axis] for axis in order))

    def describe(self) -> str:
        if not self.order:
            return "unstriped"
        names = {1: "h", 2: "w", CHANNELS: "c"}
        return " x ".join(f"{names[a]}{s}" for a, s in zip(self.order, self.sizes, strict=True))


UNSTRIPED = StripeConfig((), ())


@dataclass(frozen=True)
class AxisTrack:
    """One operator along one axis, over the stripe coordinates of that axis."""

    required: tuple[Interval, ...]
    computed: tuple[Interval, ...]
    written: tuple[int, ...]
    """For rolling operators, the highest index written after each coordinate (the running W)."""
    depth: int
    """Rolling buffer depth if this axis is the outer (rolling) axis: max(W - lowest required + 1)."""
    max_required: int
    """Longest required interval: the recompute buffer extent along this axis."""
    classes: tuple[tuple[PriceClass, int, int], ...]
    """(price class, count, representative lo) of the non-empty computed intervals, first-seen order."""


def stripe_count(extent: int, size: int) -> int:
    return -(-extent // size)


def simulate_axis(
    graph: ProgramGraph,
    sink: int,
    first: int,
    axis: int,
    size: int,
    recompute: frozenset[int],
) -> dict[int, AxisTrack]:
    """The tracks of operators `first..sink` along `axis` for sink stripes of `size` elements.

    `recompute` holds the operators buffered in recompute mode; all others (except the sink,
    whose output is stored in full) are rolling. See the module docstring for the rules.
    Memoised on the graph (`ProgramGraph.memo`): do not modify the result.
    """
    recompute = frozenset(op for op in recompute if first <= op < sink)
    key = ("axis_tracks", sink, first, axis, size, recompute)
    tracks = graph.memo.get(key)
    if tracks is None:
        tracks = graph.memo[key] = _simulate_axis(graph, sink, first, axis, size, recompute)
    return tracks  # type: ignore[return-value]


def _simulate_axis(
    graph: ProgramGraph, sink: int, first: int, axis: int, size: int, recompute: frozenset[int]
) -> dict[int, AxisTrack]:
    extent = graph.output_shape(sink)[axis]
    count = stripe_count(extent, size)
    sink_intervals = tuple((t * size, min(extent, (t + 1) * size) - 1) for t in range(count))
    computed: dict[int, tuple[Interval, ...]] = {sink: sink_intervals}
    tracks = {sink: _track(sink_intervals, sink_intervals, sink_intervals, 0, extent)}
    for op in range(sink - 1, first - 1, -1):
        op_extent = graph.output_shape(op)[axis]
        required = _required(graph, op, axis, op_extent, count, computed)
        if op in recompute:
            track = _track(required, required, tuple(-1 for _ in required), 0, op_extent)
        else:
            track = _rolling_track(required, op_extent)
        computed[op] = track.computed
        tracks[op] = track
    return tracks


def _required(
    graph: ProgramGraph,
    op: int,
    axis: int,
    op_extent: int,
    count: int,
    computed: Mapping[int, tuple[Interval, ...]],
) -> tuple[Interval, ...]:
    # The hottest loop of the planner: the axis map is applied inline (`AxisMap.apply`).
    lows: list[int | None] = [None] * count
    highs: list[int] = [0] * count
    top = op_extent - 1
    for consumer, position in graph.consumers[op]:
        axis_map = graph.operands[consumer][position].axis_maps[axis]
        assert axis_map is not None, "a consumer inside a cascade must be stripable"
        scale, first, last, denominator = axis_map.scale, axis_map.first, axis_map.last, axis_map.denominator
        for t, interval in enumerate(computed[consumer]):
            if interval is None:
                continue
            lo = (scale * interval[0] + first) // denominator
            hi = (scale * interval[1] + last) // denominator
            if lo < 0:
                lo = 0
            if hi > top:
                hi = top
            if lo > hi:
                continue
            current = lows[t]
            if current is None:
                lows[t], highs[t] = lo, hi
                continue
            if lo < current:
                lows[t] = lo
            if hi > highs[t]:
                highs[t] = hi
    return tuple([None if lo is None else (lo, hi) for lo, hi in zip(lows, highs, strict=True)])


def _whole_track(extent: int) -> AxisTrack:
    whole = ((0, extent - 1),)
    return _track(whole, whole, (-1,), 0, extent)


def whole_tracks(graph: ProgramGraph, sink: int, first: int, axis: int) -> dict[int, AxisTrack]:
    """Operators `first..sink` (those that have `axis`) computed whole along `axis` at one
    stripe. Memoised like `simulate_axis`."""
    key = ("whole_tracks", sink, first, axis)
    tracks = graph.memo.get(key)
    if tracks is None:
        tracks = graph.memo[key] = {
            op: _whole_track(graph.output_shape(op)[axis])
            for op in range(first, sink + 1)
            if axis in axes_of(graph.output_shape(op))
        }
    return tracks  # type: ignore[return-value]


def cascade_tracks(
    graph: ProgramGraph, first: int, sink: int, config: StripeConfig, recompute: frozenset[int]
) -> dict[int, dict[int, AxisTrack]]:
    """`tracks[axis][op]` of cascade `[first, sink]` on every stripe axis. Row and column
    stripes: simulated on rows and columns (both: an unstriped axis may still be read in
    part, e.g. by a stride-2 window that skips the last row), whole on channels. Channel
    stripes: simulated on channels, whole on rows and columns."""
    extent = graph.output_shape(sink)
    tracks: dict[int, dict[int, AxisTrack]] = {}
    if config.along_channels:
        for axis in SPATIAL_AXES:
            tracks[axis] = whole_tracks(graph, sink, first, axis)
        channels = config.size_along(CHANNELS, extent[CHANNELS])
        tracks[CHANNELS] = simulate_axis(graph, sink, first, CHANNELS, channels, recompute)
        return tracks
    for axis in SPATIAL_AXES:
        tracks[axis] = simulate_axis(graph, sink, first, axis, config.size_along(axis, extent[axis]), recompute)
    tracks[CHANNELS] = whole_tracks(graph, sink, first, CHANNELS)
    return tracks


def _rolling_track(required: tuple[Interval, ...], extent: int) -> AxisTrack:
    """New cells only: (W_prev, W], with W the running maximum of the required high end."""
    lowest = min((iv[0] for iv in required if iv is not None), default=0)
    high = lowest - 1
    depth = 0
    computed: list[Interval] = []
    written: list[int] = []
    for interval in required:
        if interval is None:
            computed.append(None)
            written.append(high)
            continue
        if interval[1] > high:
            computed.append((high + 1, interval[1]))
            high = interval[1]
        else:
            computed.append(None)
        written.append(high)
        if high - interval[0] + 1 > depth:
            depth = high - interval[0] + 1
    return _track(required, tuple(computed), tuple(written), depth, extent)


def _track(
    required: tuple[Interval, ...],
    computed: tuple[Interval, ...],
    written: tuple[int, ...],
    depth: int,
    extent: int,
) -> AxisTrack:
    max_required = 0
    for interval in required:
        if interval is not None and interval[1] - interval[0] + 1 > max_required:
            max_required = interval[1] - interval[0] + 1
    classes: dict[PriceClass, list[int]] = {}
    last = extent - 1
    for interval in computed:
        if interval is None:
            continue
        lo, hi = interval
        key = (hi - lo + 1, lo == 0, hi == last)
        entry = classes.get(key)
        if entry is None:
            classes[key] = [1, lo]
        else:
            entry[0] += 1
    return AxisTrack(
        required=required,
        computed=computed,
        written=written,
        depth=depth,
        max_required=max_required,
        classes=tuple((key, entry[0], entry[1]) for key, entry in classes.items()),
    )


# --------------------------------------------------------------------------- #
# A whole cascade: tracks on every spatial axis, buffer shapes, per-stripe boxes
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class CascadeGeometry:
    """The stripe geometry of cascade `[first, sink]` under `config` and buffer modes.

    `recompute` holds the intermediates in recompute mode; the others are rolling. An
    unstriped cascade (one stripe) and one striped on channels have only recompute
    intermediates.
    """

    graph: ProgramGraph
    first: int
    sink: int
    config: StripeConfig
    recompute: frozenset[int]
    tracks: dict[int, dict[int, AxisTrack]]
    """tracks[axis][op]."""

    @staticmethod
    def build(
        graph: ProgramGraph,
        first: int,
        sink: int,
        config: StripeConfig,
        recompute: frozenset[int],
    ) -> CascadeGeometry:
        if not config.order or config.along_channels:
            recompute = frozenset(range(first, sink))
        recompute = frozenset(op for op in recompute if first <= op < sink)
        tracks = cascade_tracks(graph, first, sink, config, recompute)
        return CascadeGeometry(graph, first, sink, config, recompute, tracks)

    @property
    def ops(self) -> range:
        return range(self.first, self.sink + 1)

    def is_rolling(self, op: int) -> bool:
        return op != self.sink and op not in self.recompute

    def num_stripes(self) -> tuple[int, ...]:
        """Stripes per striped axis, in `config.order` order."""
        return tuple(len(self.tracks[axis][self.sink].computed) for axis in self.config.order)

    def stripe_indices(self) -> Iterator[tuple[int, ...]]:
        return itertools.product(*(range(count) for count in self.num_stripes()))

    def buffer_shape(self, op: int) -> tuple[int, ...]:
        """Shape of the SRAM buffer of intermediate `op` (its full shape for the sink).

        Rolling: `depth` rows along the outer axis, full extent elsewhere. Recompute: the
        largest required interval along each stripe axis, full batch.
        """
        shape = list(self.graph.output_shape(op))
        if op == self.sink:
            return tuple(shape)
        outer = self.config.outer_axis
        if self.is_rolling(op) and outer is not None:
            shape[outer] = self.tracks[outer][op].depth
            return tuple(shape)
        for axis in axes_of(shape):
            shape[axis] = self.tracks[axis][op].max_required
        return tuple(shape)

    def _coordinate(self, stripe: Sequence[int], axis: int) -> int:
        return stripe[self.config.order.index(axis)] if axis in self.config.order else 0

    def _box(self, op: int, stripe: Sequence[int], which: str) -> Region | None:
        shape = self.graph.output_shape(op)
        offset = [0] * len(shape)
        size = list(shape)
        for axis in axes_of(shape):
            track = self.tracks[axis][op]
            interval = getattr(track, which)[self._coordinate(stripe, axis)]
            if interval is None:
                return None
            offset[axis], size[axis] = interval[0], interval[1] - interval[0] + 1
        return Region(tuple(offset), tuple(size))

    def required_box(self, op: int, stripe: Sequence[int]) -> Region | None:
        """What `op`'s consumers read from it at `stripe` (the sink: its output stripe)."""
        return self._box(op, stripe, "required")

    def computed_box(self, op: int, stripe: Sequence[int]) -> Region | None:
        """What `op` computes at `stripe`; None when it computes nothing."""
        return self._box(op, stripe, "computed")

    def held_box(self, op: int, stripe: Sequence[int]) -> Region | None:
        """What `op`'s buffer holds after `stripe` ran: for a rolling operator the last `depth`
        rows written (full extent on the other axes), otherwise the required box."""
        outer = self.config.outer_axis
        if not self.is_rolling(op) or outer is None:
            return self.required_box(op, stripe)
        shape = self.graph.output_shape(op)
        track = self.tracks[outer][op]
        high = track.written[self._coordinate(stripe, outer)]
        lo = max(high - track.depth + 1, 0)
        if high < lo:
            return None
        offset = [0] * len(shape)
        size = list(shape)
        offset[outer], size[outer] = lo, high - lo + 1
        return Region(tuple(offset), tuple(size))

    def price_boxes(self, op: int) -> list[tuple[Region, int]]:
        """The distinct computed boxes of `op` to price, each with how many stripes compute it.

        Boxes are grouped per axis by (length, touches the start, touches the end); the
        representative is the first such interval. Empty boxes are left out.
        """
        shape = self.graph.output_shape(op)
        axes = axes_of(shape)
        per_axis = [self.tracks[axis][op].classes for axis in axes]
        boxes = []
        for combo in itertools.product(*per_axis):
            count = math.prod(entry[1] for entry in combo)
            offset = [0] * len(shape)
            size = list(shape)
            for axis, ((length, _, _), _, lo) in zip(axes, combo, strict=True):
                offset[axis], size[axis] = lo, length
            boxes.append((Region(tuple(offset), tuple(size)), count))
        return boxes
