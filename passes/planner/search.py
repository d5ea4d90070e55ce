"""The search: candidate cascades, their Pareto sets, and the exact partition DP.

Candidates
----------
Every contiguous range `[first, sink]` that is a cascade (`ProgramGraph.range_start_limit`),
at most `max_length` operators long, is a candidate. For each one the search evaluates stripe
configurations and keeps a Pareto set over (step memory, cycles):

* one operator: one stripe, weights in SRAM or streamed;
* several operators, `striping=h`: row stripes of the sink, `ceil(H/n)` rows for n in
  `STRIPE_COUNTS` (column stripes, likewise, for a sink one row high: a 1-D network's), all
  intermediates rolling (in 1-D stripes, rolling never uses more memory than recompute and
  never computes more). One stripe over several operators is not tried: it holds every
  intermediate in full, never less than running the operators one by one;
* `striping=hw` adds column stripes alone (for outputs wider than tall), and 2-D stripes (for
  outputs at least `MIN_2D_EXTENT` tall and wide) in both orders (rows outer or
  columns outer) with `ceil(extent/n)` for n in `OUTER_COUNTS` x `INNER_COUNTS`. In 2-D, the
  intermediates whose full tensor is largest are switched to recompute (which holds only the
  stripe's box instead of full-width rows, at the price of recomputed halos): one buffer-mode
  assignment per threshold on the tensor size, the `MAX_MODE_SETS` largest thresholds and the
  smallest (everything recomputed, MCUNetV2-style patches), plus one found greedily on the
  smallest 2-D stripes and tried with every 2-D configuration (`Candidates._smallest_mode_set`:
  from everything recomputed, switch the intermediate that saves most bytes, twice at most);
* `striping=c`, `hc` or `hwc` adds channel stripes (`stripes` module doc) to the candidates
  that can run in them (`ProgramGraph.channel_range_start_limit`, which may reach further back
  than rows can: a global mean has no rows to cut, but its channels), `ceil(C/n)` channels
  rounded up to 16 for n in `CHANNEL_COUNTS`, every intermediate recomputed, weights streamed:
  a channel stripe reads only its own slice of them, so no stripe reads a weight twice;
* each configuration with weights kept in SRAM (their buffers count, one DMA each) or
  streamed from their home memory for every stripe; an operator run alone may also
  double-buffer its weights in output-channel slices (`SLICE_COUNTS`), as Vela does for large
  weights: two slices resident, the next copied while the current one computes.

Weight copies overlap the cascade before (prefetch) when their buffers fit in that step too:
a point keeping weights in SRAM has `Point.cycles` prefetched (assuming the least slack any
cascade ending just before can leave, `Candidates.previous_slack`) and `Point.plain` not;
the DP prefetches only where the step before has room for `Point.prefetch_bytes`.
`plan.realize` then decides prefetch for the actual plan and counts its cycles exactly
(`Point.duration`).

With `spill` (`Candidates.spilling`), every full tensor is taken to live in the spill memory:
step memory counts only intermediates and weights, and each cascade's cycles add the extra
cycles of its operators reading and writing full tensors there, estimated on whole operators
(`spill_penalty`); the plans are priced exactly once `planner.spill` has decided what stays
spilled.

A range's points are Pareto-culled on (memory, cycles), a point faster without prefetch than
every smaller one kept too, and, if more than `max_points` remain, thinned evenly keeping both
extremes (deterministic).

A cascade striped on rows first may write its output over the rows of a dying full input
it has read (`memory.in_place_output`): its points then count the two tensors as the bytes
they cover together at its step (`Candidates.in_place_saving`).

The partition DP
----------------
A plan is a path from position 0 to `n` whose edges are candidate cascades. The buffers live
while cascade `[first, sink]` runs depend only on (first, sink) and its own configuration
(`memory` module), plus the weights of the next cascade if they are prefetched, so the peak of
a plan is the largest step memory on its path, prefetched weights counted in the step before.
The fewest cycles under a bound M is a shortest path over the edges whose points fit M, whose
state at a position is the memory of the last step (what decides whether the next one can
prefetch): the Pareto set of (that memory, cycles) at each position is exact
(`fastest_under`). Sweeping M from infinity down through the peaks found gives the exact
Pareto front over the candidate set and the points' DP cycles (`pareto_front`); the cycles
of each front plan are then recounted with its actual prefetch (`plan.realize`). The
row-striping lower bound is a minimax path (`minimax_path`, used by `plan.row_lower_bound`).

Bounds, for speed: `max_length` (24) operators per cascade, `max_points` (`MAX_POINTS`, 23)
points per candidate cascade. On two cores a forked child builds the candidates of the last
sinks while this process builds the first ones (`Candidates.edges`, from `SHARED_WORK`): on
mbv2_100_224 (65 operators, 645 candidate cascades, 2-D stripes) building them takes 1.05 to
1.1 s instead of 1.45 to 1.55 s, for U55-128 and U65-256 alike (planning alone, fastest of 2,
2026-12-01).

Pricing
-------
`Pricer` asks the cost model for the cycles of each distinct computed box. In a cascade the
stripes of an operator run back to back: each is priced pipelined (the cost model's optional
`pipelined_stripe_cycles`: no pipeline fill and drain, first fetch or last write) and the
operator pays those once (`Pricer.once`), which is how Vela prices a cascaded operator (the
whole operator with its stripe's block config); the slices of double-buffered weights too. With
`exact=False` (the default for speed), a box of h rows x w columns is priced from exact prices
of boxes whose height and width are each in {1, 2, 3, 4, 5, 8, 9, 16, 17, ...} (`_grid`) or
the full extent: linear interpolation in between (bilinear for a box narrower than the tensor
on both axes). Boxes of the sampled sizes are exact. Interpolation only steers the search: the
plans of the DP front are recounted on their exact boxes (`Candidates.exact_path`; a box of a
sampled size and class is priced once for both, `Pricer.exact_sibling`) before one is chosen
and its cycles reported.
A product model `rows(h) * columns(w) / whole` would be cheaper but misses the per-stripe cost
of whole blocks: a 1x2x16 stripe of resnet8's 32x32x16 3x3 convolution on U55-128 costs 400
cycles pipelined, where the product gives 48.

Pure Python: no IR types, no target.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import groupby

from cascade import parallel
from cascade.dialects.access import Region
from cascade.passes.planner.cost import CostModel, runs_on_target
from cascade.passes.planner.memory import (
    ROWS,
    SLICE_GRANULE,
    full_bytes,
    full_tensors_of,
    in_place_output,
    in_place_source,
    slice_depth,
    sliced_weight_bytes,
    weight_bytes,
)
from cascade.passes.planner.placement import align
from cascade.passes.planner.program import CHANNELS, SPATIAL_AXES, ProgramGraph
from cascade.passes.planner.stripes import (
    UNSTRIPED,
    CascadeGeometry,
    PriceClass,
    StripeConfig,
)

STRIPE_COUNTS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
"""Numbers of row (or column) stripes tried for 1-D striping; the extent itself is added."""
OUTER_COUNTS = (2, 4, 8, 16, 32, 64, 128)
"""Numbers of stripes along the outer axis tried for 2-D striping; the extent itself is added."""
INNER_COUNTS = (2, 4, 8, 16)
"""Numbers of stripes along the inner axis tried for 2-D striping. 16 gives the 28-wide outputs of
the ImageNet models stripes two columns wide. Then mbv1_100_224 for U55-128 under 299,877 bytes
takes 18.9 M cycles instead of 29.7 M, and mbv2_100_224 under 236,214 bytes 16.4 M instead of
25.8 M. Over 14 budgets each the geometric means are 0.96 for both. mbv2_100_224 under 224,912
bytes got 4.7 % slower (27.0 M) while the estimates put its first cascade's two-column stripes
ahead of the two-row ones, which run faster; sampling sizes past the powers of two (`_grid`)
brought it back to 25.8 M. mbv2_035_96 on both accelerators and mbv1_025_96 on U65-256 kept
their plans at 14 budgets each. Row stripes do not use these counts."""
MAX_POINTS = 23
"""Points kept per candidate cascade (`cull`, thinning evenly). Only 2-D stripes (`striping=hw`)
give a cascade more Pareto points than 12: with rows alone the fronts and plans of the six bench
models on U55-128 and U65-256 are the same with 12 or 23. In 2-D, thinning to 12 lost fast plans
(measured with `INNER_COUNTS` (2, 4, 8)). mbv2_100_224 for U55-128 under budgets of 224,912 and
236,214 bytes took 40.9 M cycles, 25.8 M with 23; mbv1_100_224 under 299,877 bytes took 48.4 M,
29.7 M with 23. Over 14 budgets each, no plan of either got more than 0.2 % slower. mbv2_035_96
for U65-256 got up to 3 % slower under 16 to 28 KB, where plans realized differ from the DP's
estimates. 23 = 2 x 12 - 1, so even thinning keeps every point that 12 kept (fractions k/11
among j/22)."""
MAX_MODE_SETS = 2
"""Largest-tensor thresholds tried per 2-D configuration (`Candidates._mode_sets`). From 6 down
to 2, 22 of 24 plans stayed the same (six bench models on U55-128 and U65-256, no budget and
at Vela `--optimise Size`'s peak), every front kept its smallest peak, and mbv2_100_224 built
44,128 points instead of 74,800 (9 % fewer instructions in all). Its two plans on U55-128
changed: under the budget one 1.7 % faster, as the extra points had crowded it out of the
culled sets; without one, one 1.4 % smaller (but rolling rows only, 0.9 % larger and 1.3 %
slower: the plan chosen before needed a third threshold)."""
SLICE_COUNTS = (2, 4, 8, 16)
"""Numbers of weight slices tried for double-buffered weights (operators run alone)."""
CHANNEL_COUNTS = (2, 4, 8, 16, 32, 64, 128)
"""Numbers of channel stripes tried (`striping=hwc`), each rounded to whole 16-channel slices
(`memory.slice_depth`): 1280 channels in 640, 320, 160, 80, 48, 32 and 16."""
GREEDY_MODE_STEPS = 2
"""Single-intermediate mode switches of the greedy buffer-mode assignment (`_smallest_mode_set`)."""
MIN_2D_EXTENT = 16
"""2-D stripes are tried only for sinks at least this tall and wide: below, full-width rows are
small enough that cutting columns (and recomputing their halos) does not pay."""
SHARED_WORK = 1_000
"""Estimated work (`Candidates._sink_work`) from which a forked child builds half of the
candidates. Row stripes (what ethosu-pipeline plans with) come to 356 on ds_cnn_kws, 1,215 on
mbv1_025_96, 2,097 on mbv2_035_96 and 3,788 on mbv2_100_224; 2-D stripes to 26,820 on
mbv2_100_224. Building the candidates alone and shared, in ms (3 runs each, 2026-12-04):
mbv1_025_96 168 -> 130 (U55-128) and 206 -> 158 (U65-256), mbv2_035_96 275 -> 210 and
345 -> 265, mbv2_100_224 595 -> 455 and 600 -> 490. ds_cnn_kws and resnet8 (173) gain
nothing: their 50-70 ms hardly pay for the fork and the copied pages."""


ProgressCallback = Callable[[int, int], None]
"""Called as `(done, total)` after the candidates of each sink are built (total: operators)."""
_progress: ContextVar[ProgressCallback | None] = ContextVar("planner_search_progress", default=None)


@contextmanager
def reporting_progress(callback: ProgressCallback | None) -> Iterator[None]:
    """Searches run inside report their progress to `callback`; a context variable rather than
    an option, so that callers reach the search through `plan.plan_program` unchanged."""
    token = _progress.set(callback)
    try:
        yield
    finally:
        _progress.reset(token)


@dataclass(frozen=True)
class SearchOptions:
    """Knobs of the search (documented in the module docstring)."""

    striping: str = "hwc"
    max_length: int = 24
    max_points: int = MAX_POINTS
    exact_pricing: bool = False
    rolling_axes: str = "hw"
    """Axes an intermediate may roll along: "hw", or "h" (a configuration whose outer axis is
    the width then recomputes every intermediate)."""

    @property
    def spatial(self) -> str:
        """The row and column part of `striping`: "none", "h" or "hw"."""
        return self.striping.replace("c", "") or "none"

    @property
    def channels(self) -> bool:
        """Whether `striping` cuts channels too ("c", "hc", "hwc")."""
        return "c" in self.striping


@dataclass(frozen=True)
class Point:
    """One configuration of one candidate cascade, with its step memory and cycles."""

    memory: int
    cycles: int
    """What the DP minimises: `compute + transfer - hidden` (see `Candidates`)."""
    config: StripeConfig
    recompute: frozenset[int]
    weights_in_sram: bool
    compute: int = 0
    """Cycles of the stripes themselves (weights read from SRAM or streamed)."""
    transfer: int = 0
    """Cycles of a one-time copy of the cascade's weights into SRAM (paid only when kept there)."""
    slice_depth: int = 0
    """Weights double-buffered in slices of this many output channels (0: not sliced)."""
    schedule: tuple[tuple[int, int], ...] = ()
    """For sliced weights: (compute cycles, copy cycles) of every slice, in order."""
    prefetch_bytes: int = 0
    """Bytes of its weight buffers, live during the previous step too when they are prefetched
    (0: nothing to prefetch)."""

    @cached_property
    def plain(self) -> int:
        """Cycles without prefetch: the weight copy (or the first slices') does not overlap the
        cascade before. (Cached: the DP asks for it of every point at every sweep.)"""
        return self.duration(0)

    @cached_property
    def prefetchable(self) -> bool:
        return self.prefetch_bytes > 0 and self.cycles < self.plain

    @property
    def slack(self) -> int:
        """Cycles during which the weight memory is free for the next cascade's copy: all of
        them when the weights are in SRAM, else (streamed or sliced) at least one full read of
        them keeps it busy."""
        if self.weights_in_sram and not self.slice_depth:
            return self.compute
        return max(self.compute - self.transfer, 0)

    def duration(self, slack: int) -> int:
        """Cycles of the cascade when the cascade before it leaves `slack` cycles for copying
        its weights into SRAM (0: no overlap)."""
        if self.slice_depth:
            return sliced_duration(self.schedule, slack)
        return whole_copy_duration(self.compute, self.transfer, self.weights_in_sram, slack)

    def sort_key(self) -> tuple[object, ...]:
        return (
            self.memory,
            self.cycles,
            self.config.order,
            self.config.sizes,
            tuple(sorted(self.recompute)),
            not self.weights_in_sram,
            self.slice_depth,
        )


def whole_copy_duration(compute: int, transfer: int, weights_in_sram: bool, slack: int) -> int:
    """Cycles of a cascade whose weights, if kept in SRAM, are copied at once before it runs,
    the copy hidden behind up to `slack` cycles of the cascade before."""
    if not weights_in_sram:
        return compute
    return compute + transfer - min(transfer, slack)


def sliced_duration(schedule: Sequence[tuple[int, int]], slack: int) -> int:
    """Cycles of an operator whose weights are double-buffered in slices.

    Two SRAM slots: slice i's copy waits for the copy before it and for slice i-2 to finish
    computing (its slot); slice i computes once copied and once slice i-1 is done. The first
    copies may start `slack` cycles before the operator (during the previous one). Slices of
    30k compute and 20k copy cycles: the first copy shows, the others hide.
    """
    copied = -slack
    done = [0, 0]  # completion of the last two slices (0: the previous operator)
    for index, (compute, copy) in enumerate(schedule):
        slot_free = done[0] if index >= 2 else -slack
        copied = max(copied, slot_free) + copy
        start = max(copied, done[1])
        done = [done[1], start + compute]
    return done[1]


@dataclass(frozen=True)
class Edge:
    """A candidate cascade [first, sink] and its Pareto points, sorted by memory ascending."""

    first: int
    sink: int
    points: tuple[Point, ...]
    memories: tuple[int, ...] = field(compare=False)

    def best_under(self, bound: int) -> Point | None:
        """The fastest point with memory <= bound (the last one, the list being Pareto)."""
        index = bisect.bisect_right(self.memories, bound) - 1
        return self.points[index] if index >= 0 else None


@dataclass(frozen=True)
class Path:
    """A plan found by the DP: its cascades in order with the chosen points, and whether each
    one's weights are prefetched during the step before (`prefetch`, empty: none)."""

    steps: tuple[tuple[Edge, Point], ...]
    prefetch: tuple[bool, ...] = ()

    def prefetched(self, index: int) -> bool:
        return bool(self.prefetch) and self.prefetch[index]

    @property
    def peak(self) -> int:
        """The largest step memory, a prefetched step's weights counted in the step before."""
        peak = 0
        for index, (_, point) in enumerate(self.steps):
            peak = max(peak, point.memory)
            if index > 0 and self.prefetched(index):
                peak = max(peak, self.steps[index - 1][1].memory + point.prefetch_bytes)
        return peak

    @property
    def cycles(self) -> int:
        return sum(point.cycles if self.prefetched(i) else point.plain for i, (_, point) in enumerate(self.steps))

    @property
    def multi_op_cascades(self) -> int:
        return sum(1 for edge, _ in self.steps if edge.sink > edge.first)


# --------------------------------------------------------------------------- #
# Pricing
# --------------------------------------------------------------------------- #


def _grid(extent: int) -> tuple[int, ...]:
    """The sampled sizes of an axis `extent` long: the powers of two, one more than each, and
    the extent. A price counts whole blocks, so it steps up just past the sizes they divide,
    and halos make such sizes common: a 3x3 window of stride 2 over 4 rows reads 9. On U55-128,
    9 full-width rows of mbv2_100_224's 56x56x96 depthwise convolution cost 42,848 cycles,
    where interpolating between 8 rows (32,816) and 16 (65,632) gives 36,918. Sampling the
    sizes just past the powers too, the estimated compute of multi-operator cascades' points
    is off the exact count by 0.9 % on average instead of 2.2 % (24 searches: the six bench
    models, both accelerators, rows and 2-D stripes); on rows, mbv2_100_224 for U55-128
    1.45 % -> 0.28 %, mbv1_100_224 for U65-256 4.8 % -> 0.5 %. Only mbv1_025_96 on U55-128
    rows got worse, 1.55 % -> 1.88 %. Pricing every box exactly (`exact_pricing`) then
    changes the plans chosen little: 0.999 in geometric mean over 108 plans in 2-D stripes."""
    values = {extent}
    size = 1
    while size < extent:
        values.update(value for value in (size, size + 1) if value < extent)
        size *= 2
    return tuple(sorted(values))


class Pricer:
    """Cycles of computed boxes, memoised; see the module docstring for the interpolation.

    Every price may name `spilled` tensors: operands or the output of the operator kept in the
    cost model's spill memory (`CostModel.can_spill`) instead of SRAM."""

    def __init__(
        self, graph: ProgramGraph, cost: CostModel, exact: bool = False, ids: Sequence[int] | None = None
    ) -> None:
        self.graph = graph
        self.cost = cost
        self.exact = exact
        self.ids: Sequence[int] = range(graph.size) if ids is None else ids
        """What the memos know each operator by: its index, or that of the pricer this one
        shares them with (`reordered`)."""
        self._samples: dict[tuple[object, ...], int] = {}
        self._exact: dict[tuple[object, ...], int] = {}
        self._whole: dict[tuple[object, ...], int] = {}
        self._interpolations: dict[tuple[object, ...], float] = {}
        self._transfers: dict[int, int] = {}
        self._grids: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        transfer = getattr(cost, "weight_transfer_cycles", None)
        self._transfer = transfer if callable(transfer) else None
        pipelined = getattr(cost, "pipelined_stripe_cycles", None)
        self._pipelined = pipelined if callable(pipelined) else None
        self.calls = 0

    def reordered(self, graph: ProgramGraph, order: Sequence[int]) -> Pricer:
        """A pricer of `graph`, whose operator k is this one's operator `order[k]`, sharing this
        one's memos: a price depends on the operator and the box, not on where the operator
        runs."""
        sibling = Pricer(graph, self.cost, self.exact, tuple(self.ids[op] for op in order))
        sibling._samples, sibling._exact, sibling._whole = self._samples, self._exact, self._whole
        sibling._interpolations, sibling._transfers, sibling._grids = self._interpolations, self._transfers, self._grids
        return sibling

    def exact_sibling(self) -> Pricer:
        """An `exact` pricer of the same graph sharing this one's prices of boxes: a sampled
        box is an exact box, and the plans the exact one recounts reuse 9 to 17 % of the
        samples (resnet8, mbv1_025_96, mbv2_035_96, mbv2_100_224)."""
        sibling = Pricer(self.graph, self.cost, True, self.ids)
        sibling._exact, sibling._whole, sibling._transfers = self._exact, self._whole, self._transfers
        return sibling

    def memos(self) -> list[dict[object, object]]:
        """Every memo of this pricer (for `Candidates._memos`)."""
        memos = [self._samples, self._exact, self._whole, self._interpolations, self._transfers, self._grids]
        return memos  # type: ignore[return-value]

    def _price(
        self, op: int, region: Region, weights_in_sram: bool, pipelined: bool, spilled: frozenset[str] = frozenset()
    ) -> int:
        self.calls += 1
        info = self.graph.ops[op]
        extra = {"spilled": spilled} if spilled else {}
        if pipelined and self._pipelined is not None:
            return int(self._pipelined(info, region, weights_in_sram, **extra))
        return int(self.cost.stripe_cycles(info, region, weights_in_sram, **extra))

    def whole(
        self, op: int, weights_in_sram: bool, pipelined: bool = False, spilled: frozenset[str] = frozenset()
    ) -> int:
        """Cycles of the whole operator in one go (`pipelined`: without its fill and drain)."""
        key = (self.ids[op], weights_in_sram, pipelined and self._pipelined is not None, spilled)
        if key not in self._whole:
            info = self.graph.ops[op]
            self._whole[key] = self._price(op, Region.full(info.output.shape), weights_in_sram, key[2], spilled)
        return self._whole[key]

    def once(self, op: int, weights_in_sram: bool, spilled: frozenset[str] = frozenset()) -> int:
        """Cycles an operator pays once however it is striped (pipeline fill and drain, first
        fetch, last write): the whole operator's price less its pipelined price. 0 when the cost
        model prices no pipelined stripes."""
        if self._pipelined is None:
            return 0
        return max(self.whole(op, weights_in_sram, spilled=spilled) - self.whole(op, weights_in_sram, True, spilled), 0)

    def spill_penalty(self, op: int, weights_in_sram: bool, spilled: frozenset[str]) -> int:
        """Extra cycles of the whole operator with `spilled` tensors out of SRAM: the search's
        estimate for a cascaded operator too (its external reads and final writes are about one
        whole operator's); plans are recounted exactly (`Candidates.exact_path`)."""
        if not spilled:
            return 0
        return max(self.whole(op, weights_in_sram, spilled=spilled) - self.whole(op, weights_in_sram), 0)

    def transfer(self, op: int) -> int:
        """Cycles to copy an operator's weights into SRAM once (0 if the model has no such price)."""
        if self._transfer is None or not self.graph.ops[op].weights:
            return 0
        key = self.ids[op]
        if key not in self._transfers:
            self._transfers[key] = int(self._transfer(self.graph.ops[op]))
        return self._transfers[key]

    def box(
        self,
        op: int,
        region: Region,
        weights_in_sram: bool,
        pipelined: bool = False,
        spilled: frozenset[str] = frozenset(),
    ) -> float:
        """Cycles to compute `region` of `op`'s output (`pipelined`: as one of many stripes run
        back to back, see `once`)."""
        shape = self.graph.output_shape(op)
        if not self.exact and len(shape) == 4 and region.shape[3] == shape[3]:
            return self.stripe(op, region.shape[1], region.shape[2], weights_in_sram, pipelined, spilled)
        pipelined = pipelined and self._pipelined is not None
        if tuple(region.shape) == tuple(shape):
            return self.whole(op, weights_in_sram, pipelined, spilled)
        return self._exact_price(op, region, weights_in_sram, pipelined, spilled)

    def stripe(
        self,
        op: int,
        height: int,
        width: int,
        weights_in_sram: bool,
        pipelined: bool = False,
        spilled: frozenset[str] = frozenset(),
    ) -> float:
        """Cycles of a `height` x `width` stripe of `op`'s 4-d output, interpolated between
        sampled sizes (the whole operator's price for the whole output): `box` without the box,
        for a pricer that is not `exact`."""
        shape = self.graph.output_shape(op)
        pipelined = pipelined and self._pipelined is not None
        if height == shape[1] and width == shape[2]:
            return self.whole(op, weights_in_sram, pipelined, spilled)
        return self._interpolated(op, height, width, weights_in_sram, pipelined, spilled)

    def add_stripes(
        self,
        total: float,
        op: int,
        rows: Sequence[tuple[PriceClass, int, int]],
        columns: Sequence[tuple[PriceClass, int, int]],
        weights_in_sram: bool,
        spilled: frozenset[str] = frozenset(),
    ) -> float:
        """`total` plus `stripe` (pipelined) of every row class by column class of a 4-d
        output, each times its count: the search's hottest sum, with `stripe`'s choice and the
        memo read inline (a unit test holds the two equal). It adds onto `total`, not a sum of
        its own, so that the float additions run in the order they always have: the same
        cycles to the last bit, so the same plans."""
        pipelined = self._pipelined is not None
        shape = self.graph.output_shape(op)
        interpolations = self._interpolations
        key_op = self.ids[op]
        for (height, _, _), row_count, _ in rows:
            for (width, _, _), column_count, _ in columns:
                if height == shape[1] and width == shape[2]:
                    price = self.whole(op, weights_in_sram, pipelined, spilled)
                else:
                    price = interpolations.get((key_op, height, width, weights_in_sram, pipelined, spilled))
                    if price is None:
                        price = self._interpolated(op, height, width, weights_in_sram, pipelined, spilled)
                total += row_count * column_count * price
        return total

    def channel_slice(self, op: int, depth: int, pipelined: bool = False, spilled: frozenset[str] = frozenset()) -> int:
        """Cycles of the whole output of `op` restricted to `depth` output channels, weights in
        SRAM (one slice of double-buffered weights; `pipelined`: as one of several, see `once`)."""
        shape = self.graph.output_shape(op)
        region = Region(tuple(0 for _ in shape), (*shape[:-1], depth))
        return self._exact_price(op, region, True, pipelined and self._pipelined is not None, spilled)

    def _exact_price(
        self,
        op: int,
        region: Region,
        weights_in_sram: bool,
        pipelined: bool = False,
        spilled: frozenset[str] = frozenset(),
    ) -> int:
        shape = self.graph.output_shape(op)
        edges = tuple(
            (lo == 0, lo + size == extent) for lo, size, extent in zip(region.offset, region.shape, shape, strict=True)
        )
        key = (self.ids[op], tuple(region.shape), edges, weights_in_sram, pipelined, spilled)
        if key not in self._exact:
            self._exact[key] = self._price(op, region, weights_in_sram, pipelined, spilled)
        return self._exact[key]

    def _sample(
        self, op: int, height: int, width: int, weights_in_sram: bool, pipelined: bool, spilled: frozenset[str]
    ) -> int:
        key = (self.ids[op], height, width, weights_in_sram, pipelined, spilled)
        if key not in self._samples:
            shape = self.graph.output_shape(op)
            if (height, width) == (shape[1], shape[2]):
                self._samples[key] = self.whole(op, weights_in_sram, pipelined, spilled)
            else:
                # An interior stripe: centred, so that padding clips none of its reads.
                offset = (0, (shape[1] - height) // 2, (shape[2] - width) // 2, 0)
                region = Region(offset, (shape[0], height, width, shape[3]))
                self._samples[key] = self._exact_price(op, region, weights_in_sram, pipelined, spilled)
        return self._samples[key]

    def _interpolated(
        self, op: int, height: int, width: int, weights_in_sram: bool, pipelined: bool, spilled: frozenset[str]
    ) -> float:
        key = (self.ids[op], height, width, weights_in_sram, pipelined, spilled)
        if key in self._interpolations:
            return self._interpolations[key]
        if key[0] not in self._grids:
            shape = self.graph.output_shape(op)
            self._grids[key[0]] = (_grid(shape[1]), _grid(shape[2]))
        row_grid, col_grid = self._grids[key[0]]
        total = sum(
            wh * ww * self._sample(op, h, w, weights_in_sram, pipelined, spilled)
            for h, wh in _bracket(row_grid, height)
            for w, ww in _bracket(col_grid, width)
        )
        self._interpolations[key] = total
        return total


def _bracket(grid: Sequence[int], value: int) -> list[tuple[int, float]]:
    """Grid points around `value` with linear interpolation weights."""
    index = bisect.bisect_left(grid, value)
    if index < len(grid) and grid[index] == value:
        return [(value, 1.0)]
    lo, hi = grid[index - 1], grid[index]
    t = (value - lo) / (hi - lo)
    return [(lo, 1.0 - t), (hi, t)]


# --------------------------------------------------------------------------- #
# Candidates
# --------------------------------------------------------------------------- #


def _weight_modes(has_npu_weights: bool) -> tuple[bool, ...]:
    """The weight modes to try for a cascade (in SRAM, streamed): streamed only when none of
    its operators has weights the target can buffer (`Candidates.has_npu_weights`)."""
    return (True, False) if has_npu_weights else (False,)


def _sizes(extent: int, counts: Iterable[int]) -> list[int]:
    """Distinct stripe sizes ceil(extent / n) for the counts n in [2, extent], plus size 1."""
    sizes = {-(-extent // n) for n in counts if 2 <= n <= extent}
    if extent >= 2:
        sizes.add(1)
    return sorted(sizes, reverse=True)


class Candidates:
    """Builds the Pareto points of every candidate cascade (see the module docstring)."""

    def __init__(
        self, graph: ProgramGraph, cost: CostModel, options: SearchOptions, spilled: frozenset[str] = frozenset()
    ) -> None:
        self.graph = graph
        self.cost = cost
        self.options = options
        self.spilled = spilled
        """Full tensors taken to live in the spill memory: no SRAM, their traffic estimated
        (`spill_penalty`)."""
        self.pricer = Pricer(graph, cost, options.exact_pricing)
        self.exact_pricer = self.pricer if options.exact_pricing else self.pricer.exact_sibling()
        self.live_before = self._live_before()
        self.out_bytes = [0 if op.output.name in spilled else full_bytes(cost, op.output) for op in graph.ops]
        self._penalties: dict[tuple[int, int, bool], int] = {}
        self._bases: dict[tuple[int, int], int] = {}
        self._savings: dict[tuple[int, int, int, frozenset[int]], int] = {}
        self.weight_bytes = [weight_bytes(cost, graph, op) for op in range(graph.size)]
        self.has_npu_weights = [self._has_npu_weights(op) for op in range(graph.size)]
        self.evaluated = 0
        self.fastest_ending = [0] * graph.size
        self._op_cycles: dict[tuple[object, ...], tuple[int, int]] = {}
        self._buffer_bytes: dict[tuple[int, tuple[int, ...]], int] = {}
        self._exact_points: dict[tuple[int, int, int, frozenset[str]], tuple[Point, Point]] = {}

    def reordered(self, graph: ProgramGraph, order: Sequence[int]) -> Candidates:
        """The candidates of `graph`, whose operator k is this one's operator `order[k]` (the
        same program in another order), sharing this search's memoised prices."""
        sibling = Candidates(graph, self.cost, self.options, self.spilled)
        sibling.pricer = self.pricer.reordered(graph, order)
        exact = self.exact_pricer
        sibling.exact_pricer = sibling.pricer if exact is self.pricer else exact.reordered(graph, order)
        sibling._op_cycles, sibling._buffer_bytes = self._op_cycles, self._buffer_bytes
        return sibling

    def spilling(self) -> Candidates:
        """The candidates with every full tensor spilled, sharing this search's memoised
        prices (the stripe geometry is memoised on the graph)."""
        every = {tensor.name for tensor in self.graph.external_inputs} | {op.output.name for op in self.graph.ops}
        sibling = Candidates(self.graph, self.cost, self.options, frozenset(every))
        sibling.pricer, sibling.exact_pricer = self.pricer, self.exact_pricer
        sibling._op_cycles, sibling._buffer_bytes = self._op_cycles, self._buffer_bytes
        sibling.fastest_ending = self.fastest_ending
        return sibling

    def spilled_edges(self, resident: Candidates, edges: Sequence[Edge]) -> list[Edge]:
        """The spill search's edges, derived from `resident`'s `edges`: within an edge, every
        point's full tensors are the same (`base`), and so is, per weight mode, the estimated
        cost of spilling them (`spill_penalty`); so each point moves by constants and the
        points are culled again, without enumerating the configurations twice."""
        derived = []
        for edge in edges:
            points = [self._spilled_point(edge, point, resident) for point in edge.points]
            kept = cull(points, self.options.max_points)
            derived.append(Edge(edge.first, edge.sink, tuple(kept), tuple(p.memory for p in kept)))
        return derived

    def _spilled_point(self, edge: Edge, point: Point, resident: Candidates) -> Point:
        first, sink, mode = edge.first, edge.sink, point.weights_in_sram
        penalty = self.spill_penalty(first, sink, mode) - resident.spill_penalty(first, sink, mode)
        memory = point.memory - resident.base(first, sink) + self.base(first, sink)
        # Every full tensor is spilled here: an output over its input's rows saves no SRAM.
        memory += resident.in_place_saving(first, sink, point.config, point.recompute)
        moved = replace(point, memory=memory, compute=point.compute + penalty)
        if point.slice_depth:
            channels = self.graph.output_shape(edge.sink)[-1]
            schedule = _with_slice_shares(point.schedule, penalty, point.slice_depth, channels)
            moved = replace(moved, compute=sum(c for c, _ in schedule), schedule=schedule)
        return replace(moved, cycles=moved.duration(self.previous_slack(edge.first)))

    def _live_before(self) -> list[int]:
        """Bytes of full tensors live when a cascade starts at each position (its inputs and
        anything read later or returned), the sink's own output excluded."""
        graph = self.graph
        delta = [0] * (graph.size + 1)
        for tensor, last in zip(graph.external_inputs, graph.external_last_use, strict=True):
            size = 0 if tensor.name in self.spilled else full_bytes(self.cost, tensor)
            delta[0] += size
            delta[min(last, graph.size - 1) + 1] -= size
        for op in range(graph.size):
            if graph.last_use[op] > op and graph.ops[op].output.name not in self.spilled:
                size = full_bytes(self.cost, graph.ops[op].output)
                delta[op + 1] += size
                delta[min(graph.last_use[op], graph.size - 1) + 1] -= size
        live = []
        running = 0
        for position in range(graph.size):
            running += delta[position]
            live.append(running)
        return live

    def base(self, first: int, sink: int) -> int:
        """Full tensors live while cascade [first, sink] runs: an in-place output adds none."""
        key = (first, sink)
        if key not in self._bases:
            in_place = in_place_source(self.graph, self.cost, first, sink) >= 0
            self._bases[key] = self.live_before[first] + (0 if in_place else self.out_bytes[sink])
        return self._bases[key]

    def in_place_saving(
        self,
        first: int,
        sink: int,
        config: StripeConfig,
        recompute: frozenset[int],
        geometry: CascadeGeometry | None = None,
    ) -> int:
        """Bytes cascade [first, sink] under `config` saves at its step by writing its output
        over rows of a dying input it has read (`memory.in_place_output` with a lead), both in
        SRAM; `base` already counts an elementwise output in place. `geometry`, when known,
        may be that of a longer cascade ending at `sink` with the same stripes."""
        if config.outer_axis != ROWS or first == sink or not self.out_bytes[sink]:
            return 0
        recompute = recompute & frozenset(range(first, sink))
        key = (first, sink, config.sizes[0], recompute)
        saving = self._savings.get(key)
        if saving is None:
            saving = 0
            geometry = geometry or self._geometry(sink, first, config, recompute)
            found = in_place_output(self.graph, self.cost, first, sink, geometry)
            if found is not None and found.lead and self.out_bytes[found.source]:
                saving = found.saving(self.out_bytes[found.source], self.out_bytes[sink])
            self._savings[key] = saving
        return saving

    def edges(self) -> list[Edge]:
        """The candidate cascades of every sink, their points culled (module docstring).

        With two cores, a forked child builds the points of the last sinks while this process
        builds the first ones (`SHARED_WORK`): a point's cycles depend on the slack the
        cascades before can leave (`previous_slack`), which the child cannot know, so it sends
        its points uncut but for the ones no slack can save (`_undominated`), and this process
        gives them their cycles and culls them in order. The edges are the same either way."""
        size = self.graph.size
        self.fastest_ending = [0] * size
        progress = _progress.get()
        split = self._shared_split()
        edges: list[Edge] = []

        def build_first_sinks() -> None:
            for sink in range(split):
                edges.extend(self._finished_edges(sink, self._points_of_sink(sink)))
                if progress is not None:
                    progress(sink + 1, size)

        if split == size:
            build_first_sinks()
            return edges
        theirs = parallel.beside(lambda: self._built_elsewhere(range(split, size)), build_first_sinks)
        self._adopt(theirs)
        for sink, points in zip(range(split, size), theirs.points, strict=True):
            slack_known = {first: self._with_slack(first, listed) for first, listed in points.items()}
            edges.extend(self._finished_edges(sink, slack_known))
            if progress is not None:
                progress(sink + 1, size)
        return edges

    def _shared_split(self) -> int:
        """The first sink a forked child builds, by the estimated work of each sink
        (`_sink_work`): the graph's size when the work is too small to share."""
        work = [self._sink_work(sink) for sink in range(self.graph.size)]
        total = sum(work)
        if total < SHARED_WORK or not parallel.may_fork():
            return self.graph.size
        done = 0
        for sink, amount in enumerate(work):
            done += amount
            if done * 2 >= total:
                return sink + 1
        return self.graph.size

    def _sink_work(self, sink: int) -> int:
        """Configurations times operators of the candidates ending at `sink` (what building
        them costs, roughly): as `_configs` makes them, 1-D sizes, and for a tall and wide sink
        the 2-D ones."""
        start = self.graph.range_start_limit(sink, self.options.max_length)
        channel_work = 0
        if self.options.channels:
            channel_start = self.graph.channel_range_start_limit(sink, self.options.max_length)
            channel_work = len(CHANNEL_COUNTS) * (sink - channel_start + 1)
        if self.options.spatial == "none" or start == sink:
            return 1 + channel_work
        shape = self.graph.output_shape(sink)
        if len(shape) != 4:
            return sink - start + 1
        configs = len(_sizes(shape[1], STRIPE_COUNTS))
        if self._column_stripes(shape[1], shape[2]):
            configs += len(_sizes(shape[2], STRIPE_COUNTS))
        if self.options.spatial == "hw" and min(shape[1], shape[2]) >= MIN_2D_EXTENT:
            per_order = len(_sizes(shape[1], OUTER_COUNTS)) * len(_sizes(shape[2], INNER_COUNTS))
            configs += 2 * per_order * min(sink - start + 1, MAX_MODE_SETS + 2)
        return configs * (sink - start + 1) + channel_work

    def _with_slack(self, first: int, points: list[Point]) -> list[Point]:
        """`points` of a cascade starting at `first`, built without knowing the slack before
        it, with their cycles given that slack."""
        slack = self.previous_slack(first)
        return [replace(point, cycles=point.duration(slack)) for point in points]

    def _memos(self) -> list[dict[object, object]]:
        """The memos of prices and bytes that building points fills: what a child that built
        some sends back. Not the stripe geometry memoised on the graph: on mbv2_100_224 it would
        make the child's 1 MB answer 3.7 MB, and only the front's few cascades need it again."""
        memos = [*self.pricer.memos(), *self.exact_pricer.memos()]
        memos += [self._op_cycles, self._buffer_bytes, self._penalties, self._bases, self._savings]  # type: ignore[list-item]
        return list({id(memo): memo for memo in memos}.values())  # the pricers share some

    def _built_elsewhere(self, sinks: range) -> _BuiltElsewhere:
        """The points of `sinks`, as a forked child sends them: uncut but for the dominated
        ones, and with what the memos learnt. The counters are left as they were, so that
        `_adopt` counts once when no child could run and this process built them."""
        memos = self._memos()
        known = [len(memo) for memo in memos]
        evaluated, calls = self.evaluated, self.pricer.calls
        points = [
            {first: _undominated(listed) for first, listed in self._points_of_sink(sink).items()} for sink in sinks
        ]
        learnt = [list(memo.items())[count:] for memo, count in zip(memos, known, strict=True)]
        built = _BuiltElsewhere(points, learnt, self.evaluated - evaluated, self.pricer.calls - calls)
        self.evaluated, self.pricer.calls = evaluated, calls
        return built

    def _adopt(self, built: _BuiltElsewhere) -> None:
        """Take in what a child learnt building its sinks (`_built_elsewhere`)."""
        for memo, learnt in zip(self._memos(), built.learnt, strict=True):
            memo.update(learnt)
        self.evaluated += built.evaluated
        self.pricer.calls += built.pricer_calls

    def _point(
        self,
        first: int,
        memory: int,
        compute: int,
        transfer: int,
        config: StripeConfig,
        recompute: frozenset[int],
        weights_in_sram: bool,
        weights: int = 0,
    ) -> Point:
        """A point; `weights` are the bytes of its weight buffers when `weights_in_sram`."""
        prefetch_bytes = weights if weights_in_sram and transfer else 0
        cycles = whole_copy_duration(compute, transfer, weights_in_sram, self.previous_slack(first))
        return Point(
            memory, cycles, config, recompute, weights_in_sram, compute, transfer, prefetch_bytes=prefetch_bytes
        )

    def previous_slack(self, first: int) -> int:
        """A lower bound of the slack of whatever cascade runs before one starting at `first`."""
        return self.fastest_ending[first - 1] if first > 0 else 0

    def _points_of_sink(self, sink: int) -> dict[int, list[Point]]:
        """Every point of the candidates ending at `sink`, by their first operator."""
        graph = self.graph
        start = graph.range_start_limit(sink, self.options.max_length)
        channel_start = sink
        if self.options.spatial == "none":
            start = sink
        if self.options.channels:
            channel_start = graph.channel_range_start_limit(sink, self.options.max_length)
        points: dict[int, list[Point]] = {first: [] for first in range(min(start, channel_start), sink + 1)}
        for weights_in_sram in _weight_modes(self.has_npu_weights[sink]):
            weights = self.weight_bytes[sink] if weights_in_sram else 0
            compute = self.pricer.whole(sink, weights_in_sram) + self.spill_penalty(sink, sink, weights_in_sram)
            transfer = self.pricer.transfer(sink)
            memory = self.base(sink, sink) + weights
            point = self._point(sink, memory, compute, transfer, UNSTRIPED, frozenset(), weights_in_sram, weights)
            points[sink].append(point)
        points[sink] += self._sliced_points(sink)
        if start < sink:
            for config, recompute in self._configs(sink, start):
                self._add_config_points(sink, start, config, recompute, points)
        if channel_start < sink:
            channels = graph.output_shape(sink)[CHANNELS]
            for depth in sorted({slice_depth(channels, count) for count in CHANNEL_COUNTS} - {channels}):
                config = StripeConfig((CHANNELS,), (depth,))
                self._add_config_points(sink, channel_start, config, frozenset(range(channel_start, sink)), points)
        return points

    def _finished_edges(self, sink: int, points: dict[int, list[Point]]) -> list[Edge]:
        """The edges ending at `sink` from all their `points` (cycles given): culled, weight
        slices sized exactly; records the least slack they leave."""
        edges = []
        for first in sorted(points):
            kept = cull(points[first], self.options.max_points)
            if first == sink and any(p.slice_depth for p in kept):
                size_slices = getattr(self.cost, "size_weight_slices", None)
                if callable(size_slices):
                    size_slices(self.graph.ops[sink], sorted({p.slice_depth for p in kept if p.slice_depth}))
                kept = cull([self._exact_slices(sink, p) for p in kept], self.options.max_points)
            edges.append(Edge(first, sink, tuple(kept), tuple(p.memory for p in kept)))
        self.fastest_ending[sink] = min((p.slack for e in edges for p in e.points), default=0)
        return edges

    def _exact_slices(self, op: int, point: Point) -> Point:
        """`point` with its weight slices' double buffer sized exactly, if it has one. Each
        slice is its own encoded stream, so a slice can exceed its share of the whole."""
        if not point.slice_depth:
            return point
        buffer = sliced_weight_bytes(self.cost, self.graph, op, point.slice_depth)
        return replace(point, memory=point.memory - point.prefetch_bytes + buffer, prefetch_bytes=buffer)

    def _sliced_points(self, op: int) -> list[Point]:
        """Operator `op` alone with its weights double-buffered in output-channel slices."""
        shape = self.graph.output_shape(op)
        channels = shape[-1]
        transfer = self.pricer.transfer(op)
        if not self.has_npu_weights[op] or not transfer or channels < 2 * SLICE_GRANULE:
            return []
        points = []
        depths = sorted({slice_depth(channels, count) for count in SLICE_COUNTS} - {channels}, reverse=True)
        for depth in depths:
            schedule = []
            for start in range(0, channels, depth):
                size = min(depth, channels - start)
                # Slices pipeline back to back like stripes: fill and drain once, in the first.
                compute = self.pricer.channel_slice(op, size, pipelined=True)
                if not start:
                    compute += self.pricer.once(op, True)
                schedule.append((compute, transfer * size // channels))
            schedule = _with_slice_shares(schedule, self.spill_penalty(op, op, True), depth, channels)
            # Sized in proportion first (encoding every slice of every depth is slow); the
            # points that survive culling are sized exactly (`_exact_slices`).
            buffer = sliced_weight_bytes(self.cost, self.graph, op, depth, estimate=True)
            compute = sum(c for c, _ in schedule)
            memory = self.base(op, op) + buffer
            point = Point(memory, 0, UNSTRIPED, frozenset(), True, compute, transfer, depth, tuple(schedule), buffer)
            points.append(replace(point, cycles=point.duration(self.previous_slack(op))))
        return points

    def spilled_operands(self, op: int, first: int, sink: int, spilled: frozenset[str] | None = None) -> frozenset[str]:
        """The tensors `op` of cascade [first, sink] reads from or writes to the spill memory:
        its operands produced before the cascade and, for the sink, its output, those in
        `spilled` (None: this search's `spilled`)."""
        return full_tensors_of(self.graph, op, first, sink) & (self.spilled if spilled is None else spilled)

    def spill_penalty(self, first: int, sink: int, weights_in_sram: bool, spilled: frozenset[str] | None = None) -> int:
        """The estimated extra cycles of cascade [first, sink] for the full tensors of
        `spilled` (None: this search's) it reads or writes, each operator priced whole."""
        if spilled is not None:
            return self._spill_penalty(first, sink, weights_in_sram, spilled)
        key = (first, sink, weights_in_sram)
        if key not in self._penalties:
            self._penalties[key] = self._spill_penalty(first, sink, weights_in_sram, self.spilled)
        return self._penalties[key]

    def _spill_penalty(self, first: int, sink: int, weights_in_sram: bool, spilled: frozenset[str]) -> int:
        return sum(
            self.pricer.spill_penalty(op, weights_in_sram, self.spilled_operands(op, first, sink, spilled))
            for op in range(first, sink + 1)
        )

    def _has_npu_weights(self, op: int) -> bool:
        """Whether `op` has weights and the target runs it: whether its weights have an SRAM
        buffer to choose. One the target leaves to the CPU (`CostModel.runs_on_npu`) reads
        its weights where they are, and so does one whose constants take no buffer (an
        elementwise operator reads its constant operand from the constant memory)."""
        info = self.graph.ops[op]
        return bool(info.weights) and self.weight_bytes[op] > 0 and runs_on_target(self.cost, info)

    def _configs(self, sink: int, start: int) -> list[tuple[StripeConfig, frozenset[int]]]:
        shape = self.graph.output_shape(sink)
        height, width = shape[1], shape[2]
        # One stripe over several operators is never useful: it holds every intermediate in
        # full at once, which a split into single operators never needs more than.
        configs: list[tuple[StripeConfig, frozenset[int]]] = []
        if self.options.spatial in ("h", "hw"):
            configs += [(StripeConfig((1,), (size,)), frozenset()) for size in _sizes(height, STRIPE_COUNTS)]
        if self._column_stripes(height, width):
            configs += [(StripeConfig((2,), (size,)), frozenset()) for size in _sizes(width, STRIPE_COUNTS)]
        if self.options.spatial != "hw" or min(height, width) < MIN_2D_EXTENT:
            return self._rolling_along_allowed_axes(configs, sink, start)
        mode_sets = self._mode_sets(sink, start)
        smallest = self._smallest_mode_set(sink, start, StripeConfig((1, 2), (1, 1)))
        if smallest not in mode_sets:
            mode_sets.append(smallest)
        for outer, inner in ((1, 2), (2, 1)):
            outer_sizes = _sizes(shape[outer], OUTER_COUNTS)
            inner_sizes = _sizes(shape[inner], INNER_COUNTS)
            for outer_size in outer_sizes:
                for inner_size in inner_sizes:
                    config = StripeConfig((outer, inner), (outer_size, inner_size))
                    configs += [(config, recompute) for recompute in mode_sets]
        return self._rolling_along_allowed_axes(configs, sink, start)

    def _column_stripes(self, height: int, width: int) -> bool:
        """Whether 1-D stripes of columns are tried on an output `height` x `width`. They mirror
        row stripes, so they only pay on a wide output (`striping=hw`), and they are all there
        is to cut in one a single row high (`h` too, `one_row`)."""
        if self.options.spatial == "hw":
            return width > height
        return self.options.spatial == "h" and one_row((1, height, width, 1))

    def _rolling_along_allowed_axes(
        self, configs: list[tuple[StripeConfig, frozenset[int]]], sink: int, start: int
    ) -> list[tuple[StripeConfig, frozenset[int]]]:
        """`configs` with every intermediate recomputed where the outer axis may not roll."""
        if self.options.rolling_axes == "hw":
            return configs
        everything = frozenset(range(start, sink))
        rows = SPATIAL_AXES[0]
        adjusted = [(config, recompute if config.outer_axis == rows else everything) for config, recompute in configs]
        return list(dict.fromkeys(adjusted))

    def _mode_sets(self, sink: int, start: int) -> list[frozenset[int]]:
        """Recompute the intermediates whose full tensor is at least a threshold, for the
        `MAX_MODE_SETS` largest thresholds and the smallest (nested sets, largest tensors first,
        the last one recomputing every intermediate)."""
        sizes = sorted({self.out_bytes[op] for op in range(start, sink)}, reverse=True)
        thresholds = sizes[:MAX_MODE_SETS] + sizes[-1:] if len(sizes) > MAX_MODE_SETS else sizes
        ops = range(start, sink)
        return [frozenset(op for op in ops if self.out_bytes[op] >= threshold) for threshold in thresholds]

    def _smallest_mode_set(self, sink: int, start: int, config: StripeConfig) -> frozenset[int]:
        """A buffer-mode assignment for small memory: from everything recomputed, switch the
        intermediate (to rolling or back) that lowers the cascade's intermediate bytes most under
        `config`, up to `GREEDY_MODE_STEPS` times. Recomputing the largest tensors first misses
        that a thin tensor read by two consumers (a residual add's output in MobileNetV2, 24
        channels) holds less as rolling rows than as the recompute boxes of both its readers."""
        ops = range(start, sink)
        current = frozenset(ops)
        best = self._intermediates_bytes(sink, start, config, current)
        for _ in range(GREEDY_MODE_STEPS):
            move = None
            for op in ops:
                candidate = current ^ {op}
                size = self._intermediates_bytes(sink, start, config, candidate)
                if size < best:
                    best, move = size, candidate
            if move is None:
                break
            current = move
        return current

    def _intermediates_bytes(self, sink: int, start: int, config: StripeConfig, recompute: frozenset[int]) -> int:
        geometry = self._geometry(sink, start, config, recompute)
        return sum(self._intermediate_bytes(op, geometry.buffer_shape(op)) for op in range(start, sink))

    def _add_config_points(
        self,
        sink: int,
        start: int,
        config: StripeConfig,
        recompute: frozenset[int],
        points: dict[int, list[Point]],
    ) -> None:
        geometry = self._geometry(sink, start, config, recompute)
        per_op_memory: dict[int, int] = {}
        per_op_cycles: dict[tuple[int, bool], int] = {}
        for op in range(start, sink + 1):
            if op != sink:
                per_op_memory[op] = self._intermediate_bytes(op, geometry.buffer_shape(op))
            per_op_cycles[(op, True)], per_op_cycles[(op, False)] = self._cycles_of(geometry, op)
        intermediates = 0
        cycles = {True: per_op_cycles[(sink, True)], False: per_op_cycles[(sink, False)]}
        weights = self.weight_bytes[sink]
        transfers = self.pricer.transfer(sink)
        has_npu_weights = self.has_npu_weights[sink]
        for first in range(sink - 1, start - 1, -1):
            intermediates += per_op_memory[first]
            weights += self.weight_bytes[first]
            has_npu_weights = has_npu_weights or self.has_npu_weights[first]
            transfers += self.pricer.transfer(first)
            for mode in (True, False):
                cycles[mode] += per_op_cycles[(first, mode)]
            effective = frozenset(op for op in geometry.recompute if op >= first)
            memory = self.base(first, sink) + intermediates
            memory -= self.in_place_saving(first, sink, config, geometry.recompute, geometry)
            # Channel stripes read each weight slice once, from its home memory: the lowering
            # keeps no weights of such a cascade in SRAM.
            for weights_in_sram in _weight_modes(has_npu_weights and not config.along_channels):
                self.evaluated += 1
                points[first].append(
                    self._point(
                        first,
                        memory + (weights if weights_in_sram else 0),
                        cycles[weights_in_sram] + self.spill_penalty(first, sink, weights_in_sram),
                        transfers,
                        config,
                        effective,
                        weights_in_sram,
                        weights,
                    )
                )

    def _intermediate_bytes(self, op: int, shape: tuple[int, ...]) -> int:
        key = (self.pricer.ids[op], shape)
        if key not in self._buffer_bytes:
            self._buffer_bytes[key] = align(self.cost.buffer_bytes(self.graph.ops[op].output, shape))
        return self._buffer_bytes[key]

    def _cycles_of(
        self, geometry: CascadeGeometry, op: int, exact: bool = False, spilled: frozenset[str] = frozenset()
    ) -> tuple[int, int]:
        """(cycles with weights in SRAM, cycles streaming them) of `op` over all stripes
        (`exact`: every distinct box priced by the cost model, no interpolation; `spilled`:
        the operands and output `op` reads and writes in the spill memory)."""
        pricer = self.exact_pricer if exact else self.pricer
        shape = self.graph.output_shape(op)
        rows = columns = ()
        if len(shape) == 4:
            rows, columns = geometry.tracks[1][op].classes, geometry.tracks[2][op].classes
        channels = geometry.tracks[CHANNELS][op].classes
        key = (pricer.ids[op], rows, columns, channels, pricer.exact, spilled)
        cycles = self._op_cycles.get(key)
        if cycles is not None:
            return cycles
        totals = []
        for weights_in_sram in (True, False):
            # Stripes pipeline back to back; fill and drain are paid once (`Pricer.once`).
            total = float(pricer.once(op, weights_in_sram, spilled))
            if pricer.exact or len(shape) != 4 or geometry.config.along_channels:
                for region, count in geometry.price_boxes(op):
                    total += count * pricer.box(op, region, weights_in_sram, pipelined=True, spilled=spilled)
            else:
                # `price_boxes` and `box` without building the boxes: an interpolated price
                # depends on the box's height and width alone.
                total = pricer.add_stripes(total, op, rows, columns, weights_in_sram, spilled)
            totals.append(round(total))
        cycles = self._op_cycles[key] = (totals[0], totals[1])
        return cycles

    def exact_path(self, path: Path, spilled: frozenset[str] = frozenset()) -> Path:
        """`path` with every cascade's compute cycles recounted exactly, the full tensors in
        `spilled` read and written in the spill memory. The search prices boxes between
        sampled sizes by interpolation, which can be a few % off (mbv1_100_224 on U65-256: 4.6 %
        under the exact count), and estimates spilling (`spill_penalty`); the cycles a plan
        reports, and the choice among the front's plans, use exact prices."""
        if self.options.exact_pricing and not self.spilled:
            return path
        steps = tuple((edge, self.exact_point(edge.first, edge.sink, point, spilled)) for edge, point in path.steps)
        return replace(path, steps=steps)

    def exact_point(self, first: int, sink: int, point: Point, spilled: frozenset[str] = frozenset()) -> Point:
        """`point` of cascade [first, sink] priced exactly with the tensors of `spilled` in the
        spill memory. Memoised: the plans of a front share most of their steps."""
        key = (id(point), first, sink, spilled)
        known = self._exact_points.get(key)
        if known is not None:
            return known[1]
        exact = self._exact_point(first, sink, point, spilled)
        self._exact_points[key] = (point, exact)  # keeps `point`, so that its id is not reused
        return exact

    def _exact_point(self, first: int, sink: int, point: Point, spilled: frozenset[str]) -> Point:
        if point.slice_depth:
            exact = self._exact_slices_compute(sink, point, self.spilled_operands(sink, first, sink, spilled))
        elif not point.config.order:
            operands = self.spilled_operands(sink, first, sink, spilled)
            exact = replace(point, compute=self.exact_pricer.whole(sink, point.weights_in_sram, spilled=operands))
        else:
            geometry = self._geometry(sink, first, point.config, point.recompute)
            mode = 0 if point.weights_in_sram else 1
            compute = sum(
                self._cycles_of(geometry, op, True, self.spilled_operands(op, first, sink, spilled))[mode]
                for op in range(first, sink + 1)
            )
            exact = replace(point, compute=compute)
        return replace(exact, cycles=exact.duration(self.previous_slack(first)))

    def _exact_slices_compute(self, op: int, point: Point, spilled: frozenset[str]) -> Point:
        """A weight-sliced point of `op` with its slices priced with `spilled` operands."""
        if not spilled and not self.spilled:
            return point
        channels = self.graph.output_shape(op)[-1]
        schedule = []
        for index, (start, (_, transfer)) in enumerate(
            zip(range(0, channels, point.slice_depth), point.schedule, strict=True)
        ):
            size = min(point.slice_depth, channels - start)
            compute = self.exact_pricer.channel_slice(op, size, pipelined=True, spilled=spilled)
            if not index:
                compute += self.exact_pricer.once(op, True, spilled)
            schedule.append((compute, transfer))
        return replace(point, compute=sum(c for c, _ in schedule), schedule=tuple(schedule))

    def _geometry(self, sink: int, start: int, config: StripeConfig, recompute: frozenset[int]) -> CascadeGeometry:
        return CascadeGeometry.build(self.graph, start, sink, config, recompute)


def _with_slice_shares(
    schedule: Sequence[tuple[int, int]], cycles: int, depth: int, channels: int
) -> tuple[tuple[int, int], ...]:
    """A weight-slice schedule with `cycles` of the whole operator (its spilled traffic) added
    to each slice's compute in proportion to its channels: 100 cycles over 40 channels in
    slices of 16 add 40, 40 and 20."""
    starts = range(0, channels, depth)
    return tuple(
        (compute + cycles * min(depth, channels - start) // channels, copy)
        for start, (compute, copy) in zip(starts, schedule, strict=True)
    )


def _undominated(points: Sequence[Point]) -> list[Point]:
    """`points` of one candidate cascade less those `cull` drops whatever slack comes before
    it: B goes when some A has no more memory and no more compute, and less of one (so A sorts
    first), and A's weights are streamed or both keep them in SRAM. Then A takes no more
    cycles than B with or without prefetch at any slack (`whole_copy_duration`: the points of
    one cascade share its weight transfer). Sliced points all stay."""
    sliced = [point for point in points if point.slice_depth]
    whole = sorted((point for point in points if not point.slice_depth), key=lambda p: (p.memory, p.compute))
    if len({point.transfer for point in whole if point.weights_in_sram}) > 1:
        return list(points)
    kept: list[Point] = []
    # The least compute of the points with less memory: streamed ones, and all of them.
    least_streamed = least_any = math.inf
    for _, group_iter in groupby(whole, key=lambda p: p.memory):
        group = list(group_iter)
        group_streamed = min((p.compute for p in group if not p.weights_in_sram), default=math.inf)
        group_any = min(p.compute for p in group)
        for point in group:
            below, beside = (least_any, group_any) if point.weights_in_sram else (least_streamed, group_streamed)
            if below <= point.compute or beside < point.compute:
                continue
            kept.append(point)
        least_streamed, least_any = min(least_streamed, group_streamed), min(least_any, group_any)
    return kept + sliced


@dataclass
class _BuiltElsewhere:
    """What a forked child sends back from building the points of some sinks."""

    points: list[dict[int, list[Point]]]
    """Per sink, its points by first operator, cycles not yet given."""
    learnt: list[list[tuple[object, object]]]
    """The entries each memo gained (`Candidates._memos`, in order)."""
    evaluated: int
    pricer_calls: int


def cull(points: Sequence[Point], max_points: int) -> list[Point]:
    """Pareto-efficient points (memory and cycles both minimised; a point whose cycles without
    prefetch (`Point.plain`) beat every smaller point's is kept too, for when its weights cannot
    be prefetched), sorted by memory, thinned evenly to at most `max_points` keeping both
    extremes. Deterministic: ties are broken by the full sort key."""
    front: list[Point] = []
    fastest = fastest_plain = math.inf
    for point in sorted(points, key=Point.sort_key):
        plain = point.plain if point.prefetch_bytes else point.cycles
        if point.cycles >= fastest and plain >= fastest_plain:
            continue
        front.append(point)
        fastest, fastest_plain = min(fastest, point.cycles), min(fastest_plain, plain)
    if len(front) <= max_points:
        return front
    last = len(front) - 1
    picks = sorted({round(k * last / (max_points - 1)) for k in range(max_points)})
    return [front[i] for i in picks]


def one_row(shape: Sequence[int]) -> bool:
    """Whether an NHWC output is a single row of several columns (a 1-D network's `[1, 1, T,
    C]`): its 1-D stripes are stripes of columns."""
    return len(shape) == 4 and shape[1] == 1 < shape[2]


# --------------------------------------------------------------------------- #
# The partition DP
# --------------------------------------------------------------------------- #


class PartitionDP:
    """Shortest paths over the candidate cascades (see the module docstring)."""

    def __init__(self, size: int, edges: Sequence[Edge]) -> None:
        self.size = size
        self.incoming: list[list[Edge]] = [[] for _ in range(size + 1)]
        for edge in sorted(edges, key=lambda e: (e.sink, e.first)):
            if edge.points:
                self.incoming[edge.sink + 1].append(edge)
        # What `fastest_under` reads of every point, unpacked once: it runs once per front plan.
        self._terms = {
            id(edge): [(p.memory, p.plain, p.cycles, p.prefetchable, p.prefetch_bytes, p) for p in edge.points]
            for arriving in self.incoming
            for edge in arriving
        }

    def fastest_under(self, bound: int) -> Path | None:
        """The plan with the fewest cycles whose every step fits `bound`, a prefetched step's
        weights counted in the step before (ties: fewer steps, then the earliest cut), or None.

        A point keeping weights in SRAM runs in `Point.cycles` if its weights are prefetched,
        which needs `previous step memory + Point.prefetch_bytes <= bound`, else in
        `Point.plain`. So the states at a position are the (memory of the last step, cycles)
        Pareto set of the plans reaching it: exact, as nothing else of the past matters.
        """
        # states[position]: (memory, cycles, steps, back) sorted by memory, cycles decreasing;
        # back = (position before, state index there, edge, point, prefetched).
        states: list[list[tuple[int, int, int, tuple[object, ...] | None]]] = [[] for _ in range(self.size + 1)]
        memories: list[list[int]] = [[] for _ in range(self.size + 1)]
        states[0] = [(0, 0, 0, None)]
        memories[0] = [0]
        bisect_right = bisect.bisect_right
        for end in range(1, self.size + 1):
            # (memory, cycles, steps, arrival number, back): the number keeps the sort stable,
            # the earliest cut first on ties, and never lets it compare two backs.
            arrivals: list[tuple[int, int, int, int, tuple[object, ...]]] = []
            for edge in self.incoming[end]:
                first = edge.first
                before = states[first]
                if not before:
                    continue
                last = len(before) - 1
                _, best_cycles, best_steps, _ = before[last]
                fitting = bisect_right(edge.memories, bound)
                before_memories = memories[first]
                for memory, plain, cycles, prefetchable, prefetch_bytes, point in self._terms[id(edge)][:fitting]:
                    arrivals.append(
                        (memory, best_cycles + plain, best_steps + 1, len(arrivals), (first, last, edge, point, False))
                    )
                    if first == 0 or not prefetchable:
                        continue
                    index = bisect_right(before_memories, bound - prefetch_bytes) - 1
                    if index < 0:
                        continue
                    _, previous_cycles, steps, _ = before[index]
                    arrivals.append(
                        (memory, previous_cycles + cycles, steps + 1, len(arrivals), (first, index, edge, point, True))
                    )
            arrivals.sort()
            kept: list[tuple[int, int, int, tuple[object, ...] | None]] = []
            kept_cycles, kept_steps = math.inf, math.inf
            for memory, cycles, steps, _, back in arrivals:
                if cycles > kept_cycles or (cycles == kept_cycles and steps >= kept_steps):
                    continue
                kept.append((memory, cycles, steps, back))
                kept_cycles, kept_steps = cycles, steps
            states[end] = kept
            memories[end] = [state[0] for state in kept]
        if not states[self.size]:
            return None
        steps: list[tuple[Edge, Point]] = []
        prefetch: list[bool] = []
        position, index = self.size, len(states[self.size]) - 1
        while position > 0:
            back = states[position][index][3]
            assert back is not None
            position, index, edge, point, prefetched = back  # type: ignore[misc]
            steps.append((edge, point))  # type: ignore[arg-type]
            prefetch.append(prefetched)  # type: ignore[arg-type]
        return Path(tuple(reversed(steps)), tuple(reversed(prefetch)))

    def pareto_front(self, max_front: int = 10_000, bound: float = math.inf) -> list[Path]:
        """The exact (peak, cycles) Pareto front over the candidates, fastest first: its plans
        whose peak is at most `bound`."""
        front: list[Path] = []
        while len(front) < max_front:
            path = self.fastest_under(bound)  # type: ignore[arg-type]
            if path is None:
                break
            if front and path.cycles == front[-1].cycles:
                front[-1] = path  # same cycles with a lower peak: the earlier one is dominated
            else:
                front.append(path)
            bound = path.peak - 1
        return front

    def min_peak(self) -> Path | None:
        """A plan with the lowest peak (the last point of the front)."""
        front = self.pareto_front()
        return front[-1] if front else None


def minimax_path(size: int, weights: dict[tuple[int, int], int]) -> int | None:
    """The smallest possible largest edge weight of a path 0 -> size; edges (first, sink)."""
    best: list[float] = [math.inf] * (size + 1)
    best[0] = 0
    incoming: dict[int, list[tuple[int, int]]] = {}
    for (first, sink), weight in weights.items():
        incoming.setdefault(sink + 1, []).append((first, weight))
    for end in range(1, size + 1):
        for first, weight in sorted(incoming.get(end, [])):
            best[end] = min(best[end], max(best[first], weight))
    return None if best[size] == math.inf else int(best[size])
