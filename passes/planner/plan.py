"""The planner's entry point: from a program and a cost model to a chosen plan and its front.

`plan_program` builds the candidate cascades (`search.Candidates`), computes the exact
(peak, cycles) Pareto front of the partition DP (`search.PartitionDP`), recounts every front
plan's cycles on its exact stripe boxes (`Candidates.exact_path`), makes it concrete
(`realize`: which weight copies are prefetched during the previous step, the cycles
that follow, the buffers placed by `memory.plan_buffers` and `placement.place`), re-culls the
front on placed peaks and realized cycles, and picks one. It searches the program's operator
order and, when `order.lean_order` finds a topological order that keeps less memory live, that
order too (sharing the memoised prices): the plans of both are culled and chosen from together,
and the chosen plan's graph names the order it runs in (`ProgramGraph.order`; `reorder=False`
searches the program's order only). The choice:

* with a budget, objective default or `min-cycles`: the fastest plan whose placed peak fits;
  `min-sram`: the smallest placed peak (it must fit too);
* without a budget, default: the smallest placed peak among the plans whose cycles are within
  `cycles_tolerance` (5 %) of the fastest plan found; `min-cycles`: the fastest; `min-sram`:
  the smallest.

On a target that can spill (`spill`), what TFLite and the CPU see (`spill.pinned_tensors`)
always lives in the spill memory, and a second family of plans is added when the fastest plan
keeping every other tensor in SRAM does not fit the budget (or the SRAM), or for `min-sram`:
the front of a search with every full tensor in the spill memory, each plan with as many
tensors promoted back into SRAM as fit, priced exactly with the rest spilled. Both families are
culled and chosen from together; the peak is always the SRAM's, and the lower bound the one of
plans that may spill every full tensor (0 or next to it: any operator can run from DRAM).

Ties go to fewer cycles, then the smaller peak, then the fastest-first front order. An
impossible budget raises `PlanningError` naming the operator whose smallest working set (all
buffers live while it runs, over every cascade and configuration that contains it) is the
largest, with that many bytes.

The reported `lower_bound` is the **row-striping lower bound**: the smallest possible largest
step memory of a plan whose multi-operator cascades stripe rows one at a time (stripe height 1
at every sink, or width 1 at a sink one row high, `search.one_row`; minimal rolling windows:
every rolling intermediate keeps exactly the rows its consumers' windows need; an output written
over the input rows its cascade has read, where `memory.in_place_output` allows, as close above
them as one-row stripes let it start), not counting weights and before placement. Stripes of one
row give the smallest window of every intermediate and the smallest such lead (b(t) + 1 - L(t)
in `memory.consumed_rows_lead`: the rows written run a whole stripe ahead of the rows still
read), so no row-striped plan over the same candidate cascades can do better; 2-D stripes with
recompute intermediates can (they keep less than a full row), which is why plans may report a
peak below it.

Pure Python: no IR types, no target.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from cascade.dialects.access import Region
from cascade.passes.planner.cost import CostModel, runs_on_target
from cascade.passes.planner.graph import OpInfo, TensorInfo
from cascade.passes.planner.memory import Step, full_tensors_of, plan_buffers, spilled_buffers
from cascade.passes.planner.order import lean_order
from cascade.passes.planner.placement import DEFAULT_EFFORT, Buffer, Placement, align, max_live, place, step_totals
from cascade.passes.planner.program import ProgramGraph, ProgramLike
from cascade.passes.planner.search import (
    MAX_POINTS,
    Candidates,
    Edge,
    PartitionDP,
    Path,
    SearchOptions,
    minimax_path,
    one_row,
)
from cascade.passes.planner.spill import can_spill, pinned_tensors, promote
from cascade.passes.planner.stripes import CascadeGeometry, StripeConfig

OBJECTIVES = ("min-sram", "min-cycles")
STRIPINGS = ("none", "h", "hw", "c", "hc", "hwc")
ROLLING_AXES = ("h", "hw")


class PlanningError(Exception):
    """No plan satisfies the request; the message says why in one line."""


@dataclass(frozen=True)
class PlanOptions:
    """What to plan for (see the module docstring)."""

    sram_budget: int | None = None
    objective: str | None = None
    striping: str = "hwc"
    max_length: int = 24
    max_points: int = MAX_POINTS
    cycles_tolerance: float = 0.05
    exact_pricing: bool = False
    rolling_axes: str = "hw"
    reorder: bool = True
    """Also search the plans of the memory-lean operator order (`order.lean_order`)."""
    whole_front: bool = True
    """Whether `PlanResult.front` holds the whole front (the report's). Without it the plans
    that cannot be chosen are left out where that saves work: those whose compute alone is
    slower than the choice allows (`_realized_front`), and, on a target that does not spill,
    those whose steps cannot fit the budget (or the SRAM). The same plan is chosen, without
    pricing those exactly and placing them."""

    def validate(self) -> None:
        if self.objective is not None and self.objective not in OBJECTIVES:
            raise PlanningError(f"objective must be one of {', '.join(OBJECTIVES)}, got '{self.objective}'")
        if self.striping not in STRIPINGS:
            raise PlanningError(f"striping must be one of {', '.join(STRIPINGS)}, got '{self.striping}'")
        if self.rolling_axes not in ROLLING_AXES:
            raise PlanningError(f"rolling-axes must be one of {', '.join(ROLLING_AXES)}, got '{self.rolling_axes}'")
        if self.sram_budget is not None and self.sram_budget < 0:
            raise PlanningError(f"sram-budget must be non-negative, got {self.sram_budget}")
        if self.max_length < 1 or self.max_points < 2:
            raise PlanningError("max-length must be >= 1 and max-points >= 2")


@dataclass(frozen=True)
class PlannedCascade:
    """One chosen cascade: operators `first..sink` and how they run."""

    first: int
    sink: int
    config: StripeConfig
    recompute: frozenset[int]
    weights_in_sram: bool
    memory: int
    """Bytes of the buffers live while it runs (before placement), the next cascade's
    prefetched weights included."""
    cycles: int
    peak: int
    """Highest placed byte while it runs."""
    prefetch: bool = False
    """Its weights are copied into SRAM while the previous cascade runs."""
    weight_slice_depth: int = 0
    """Weights double-buffered in slices of this many output channels (0: all at once)."""

    def step(self) -> Step:
        return Step(
            self.first,
            self.sink,
            self.config,
            self.recompute,
            self.weights_in_sram,
            self.prefetch,
            self.weight_slice_depth,
        )

    @property
    def size(self) -> int:
        return self.sink - self.first + 1


@dataclass(frozen=True)
class FrontPoint:
    """A Pareto-optimal plan, summarised as the report shows it."""

    peak_sram_bytes: int
    cycles: int
    cascades: int
    max_live_bytes: int

    def as_json(self) -> dict[str, int]:
        return {"peak_sram_bytes": self.peak_sram_bytes, "cycles": self.cycles, "cascades": self.cascades}


@dataclass
class PlanResult:
    """The chosen plan, its buffers and their placement, the front and the lower bound."""

    graph: ProgramGraph
    cascades: tuple[PlannedCascade, ...]
    buffers: list[Buffer]
    placement: Placement
    lower_bound: int
    front: list[FrontPoint]
    seconds: float
    stats: dict[str, int]
    spilled: frozenset[str] = frozenset()
    """Full tensors kept in the spill memory (`spill`)."""
    dram_peak: int = 0
    """Placed peak of the spilled tensors' buffers in the spill memory."""

    @property
    def peak(self) -> int:
        return self.placement.peak

    @property
    def cycles(self) -> int:
        return sum(c.cycles for c in self.cascades)

    @property
    def max_live(self) -> int:
        return max_live(self.buffers)

    @property
    def multi_op_cascades(self) -> int:
        return sum(1 for c in self.cascades if c.size > 1)

    def spilled_operands(self, cascade: PlannedCascade, op: int) -> frozenset[str]:
        """The spilled tensors operator `op` of `cascade` reads or writes in the spill memory:
        operands from before the cascade and, for the sink, its output."""
        return full_tensors_of(self.graph, op, cascade.first, cascade.sink) & self.spilled

    def geometry(self, cascade: PlannedCascade) -> CascadeGeometry:
        return CascadeGeometry.build(self.graph, cascade.first, cascade.sink, cascade.config, cascade.recompute)

    def report(self) -> dict[str, object]:
        """The JSON report of the `report=` option."""
        chosen: dict[str, object] = {
            "peak_sram_bytes": self.peak,
            "cycles": self.cycles,
            "cascades": self.multi_op_cascades,
        }
        if self.spilled:
            chosen["peak_dram_bytes"] = self.dram_peak
            chosen["spilled_tensors"] = sorted(self.spilled)
        return {
            "chosen": chosen,
            "lower_bound_bytes": self.lower_bound,
            "front": [point.as_json() for point in self.front],
        }


def describe_op(graph: ProgramGraph, op: int) -> str:
    info = graph.ops[op]
    location = info.attributes.get("location")
    return f"nn.{info.kind} '{location if isinstance(location, str) else info.name}'"


def plan_program(program: ProgramLike, cost: CostModel, options: PlanOptions | None = None) -> PlanResult:
    """Plan `program` (see the module docstring)."""
    options = options or PlanOptions()
    options.validate()
    started = time.perf_counter()
    graph = cascadable_graph(program, cost)
    capacity, capacity_name = _sram_capacity(cost)
    budget = (
        options.sram_budget if capacity is None or options.sram_budget is None else min(options.sram_budget, capacity)
    )
    cost = CachedCost(cost)
    if graph.size == 0:
        return PlanResult(graph, (), [], Placement({}, 0, "none"), 0, [], 0.0, {})
    size_weights = getattr(cost, "size_weights", None)
    if callable(size_weights):
        size_weights([op for op in graph.ops if op.weights])
    search = SearchOptions(
        options.striping, options.max_length, options.max_points, options.exact_pricing, options.rolling_axes
    )
    cap = capacity if budget is None else budget
    # On a target that spills, what TFLite and the CPU see always lives in the arena.
    pinned = pinned_tensors(graph, cost) if can_spill(cost) else frozenset()
    searches = [_search(Candidates(graph, cost, search, pinned), budget, cap, options, pinned)]
    order = lean_order(graph, cost) if options.reorder else None
    if order is not None:
        # The same candidates in the lean order: the prices are known, the plans differ.
        reordered = graph.reordered(order)
        candidates = searches[0].candidates.reordered(reordered, order)
        searches.append(_search(candidates, budget, cap, options, pinned, searches[0].limit))
    realized = _settled([entry for searched in searches for entry in searched.realized], cost, options, cap)
    front_entries = _placed_front(realized)
    try:
        index = _choose(front_entries, options, graph, searches, capacity, capacity_name)
    except PlanningError:
        # Nothing fits: the message names the smallest plan of all, so those left unrealized
        # count too.
        unplaced = [entry for searched in searches for plan in searched.unplaced for entry in plan.realize(cost)]
        if not unplaced:
            raise
        front_entries = _placed_front(realized + unplaced)
        index = _choose(front_entries, options, graph, searches, capacity, capacity_name)
    chosen = front_entries[index]
    front = [
        FrontPoint(e.placement.peak, e.cycles, e.path.multi_op_cascades, max_live(e.buffers)) for e in front_entries
    ]
    stats = {
        "candidate_cascades": sum(len(searched.edges) for searched in searches),
        "evaluated_points": sum(searched.candidates.evaluated for searched in searches),
        "cost_model_calls": sum(searched.pricer_calls for searched in searches),
        "front_size": len(front),
        "orders": len(searches),
    }
    # Only the chosen plan's spilled tensors are placed: the front is culled on SRAM alone.
    spilled = chosen.spilled
    dram_peak = place(spilled_buffers(chosen.graph, chosen.steps, cost, spilled)).peak if spilled else 0
    return PlanResult(
        chosen.graph,
        chosen.cascades(),
        chosen.buffers,
        chosen.placement,
        min(searched.lower_bound for searched in searches),
        front,
        time.perf_counter() - started,
        stats,
        spilled,
        dram_peak,
    )


def cascadable_graph(program: ProgramLike, cost: CostModel) -> ProgramGraph:
    """`program`'s graph as the search sees it: an operator the cost model cannot run inside a
    cascade (its optional `can_cascade`), or leaves to the CPU (`runs_on_target`), runs alone."""
    graph = ProgramGraph.build(program)
    can_cascade = getattr(cost, "can_cascade", None)
    if not callable(can_cascade):
        return graph
    allowed = tuple(bool(can_cascade(op)) and runs_on_target(cost, op) for op in graph.ops)
    stripable = tuple(s and a for s, a in zip(graph.stripable, allowed, strict=True))
    channel_stripable = tuple(s and a for s, a in zip(graph.channel_stripable, allowed, strict=True))
    return replace(graph, stripable=stripable, channel_stripable=channel_stripable)


@dataclass
class _Searched:
    """The realized plans of one operator order, and what else its search leaves."""

    candidates: Candidates
    edges: list[Edge]
    realized: list[Realized]
    lower_bound: int
    limit: float
    """The most cycles a plan may take to be chosen, given those realized (`_realized_front`)."""
    unplaced: list[_Unplaced] = field(default_factory=list)
    """Plans of the front left unrealized because they cannot fit (`_realized_front`)."""

    @property
    def pricer_calls(self) -> int:
        pricer, exact = self.candidates.pricer, self.candidates.exact_pricer
        return pricer.calls + (exact.calls if exact is not pricer else 0)


def _search(
    candidates: Candidates,
    budget: int | None,
    cap: int | None,
    options: PlanOptions,
    pinned: frozenset[str],
    limit: float = math.inf,
) -> _Searched:
    """The front of `candidates`' operator order realized (and, on a target that spills and
    needs to, the front of plans that spill), not yet culled (module docstring)."""
    graph, cost = candidates.graph, candidates.cost
    edges = candidates.edges()
    dp = PartitionDP(graph.size, edges)
    # A plan whose step memory exceeds `cap` can never be chosen. On a target that spills it
    # still counts: whether to search spilling plans depends on the fastest plan of all.
    fitting = cap is not None and not options.whole_front and not can_spill(cost)
    front = dp.pareto_front(bound=cap) if fitting else []
    if not front:  # the whole front, or what the error that nothing fits names the smallest of
        front = dp.pareto_front()
    paths = [(candidates.exact_path(path, pinned), pinned) for path in front]
    realized, limit, unplaced = _realized_front(graph, paths, cost, budget, cap, options, limit)
    spilling = candidates.spilling() if can_spill(cost) else None
    # The bound of every plan the target allows, spilling searched or not.
    lower_bound = row_lower_bound(graph, spilling if spilling is not None else candidates)
    if spilling is not None and cap is not None and _wants_spill(realized, cap, options):
        spill_edges = spilling.spilled_edges(candidates, edges)
        edges += spill_edges
        spill_front = PartitionDP(graph.size, spill_edges).pareto_front(bound=cap)
        variants = []
        for path, promotion_cap in _spill_variants(spill_front, cap):
            spilled = promote(spilling, _steps(path), promotion_cap, pinned)
            variants.append((spilling.exact_path(path, spilled), spilled))
        spilling_realized, _, spilling_unplaced = _realized_front(graph, variants, cost, cap, cap, options, limit)
        realized += spilling_realized
        unplaced += spilling_unplaced
    return _Searched(candidates, edges, realized, lower_bound, limit, unplaced)


@dataclass(frozen=True)
class _Unplaced:
    """A plan `_realized_front` left unrealized, and what realizing it takes."""

    graph: ProgramGraph
    path: Path
    budget: int | None
    spilled: frozenset[str]

    @property
    def compute(self) -> int:
        """Its cascades' compute cycles: a lower bound of its cycles however it is realized."""
        return sum(point.compute for _, point in self.path.steps)

    def realize(self, cost: CostModel) -> list[Realized]:
        """The plan realized as the whole front has it: it cannot be chosen, so placed quickly."""
        return _realized(self.graph, self.path, cost, self.budget, self.spilled, 0)


def _realized(
    graph: ProgramGraph,
    path: Path,
    cost: CostModel,
    budget: int | None,
    spilled: frozenset[str] = frozenset(),
    effort: int = DEFAULT_EFFORT,
) -> list[Realized]:
    """`path` realized, and its variants that may place better (placed with `effort`)."""
    entry = realize(graph, path, cost, budget or 0, spilled=spilled, effort=effort)
    if budget is not None and entry.placement.peak > budget:
        # Prefetch up to the budget fragmented too much.
        entry = realize(graph, path, cost, spilled=spilled, effort=effort)
    entries = [entry]
    if entry.placement.peak > max_live(entry.buffers) and any(step.prefetch for step in entry.steps):
        # Prefetched weights fill steps up to the peak, which can leave the placement
        # fragmented: the plan without prefetch may place tighter (and run slower).
        entries.append(realize(graph, path, cost, prefetch=False, spilled=spilled, effort=effort))
    return entries


def _realized_front(
    graph: ProgramGraph,
    paths: list[tuple[Path, frozenset[str]]],
    cost: CostModel,
    budget: int | None,
    cap: int | None,
    options: PlanOptions,
    limit: float = math.inf,
) -> tuple[list[Realized], float, list[_Unplaced]]:
    """Plans (each with the tensors it spills) realized, the most cycles a plan may take to be
    chosen given those of them that fit `cap` (starting from `limit`), and the plans left
    unrealized because they cannot fit.

    A plan that provably cannot be chosen is placed with the quick heuristics only
    (`placement.place` with effort 0; its peak, on the reported front, is then that of a real
    but perhaps looser placement): its SRAM at some step (`Point.memory`, a lower bound of any
    placement) exceeds `cap`, or its compute alone (a lower bound of its cycles) exceeds what a
    plan already realized within `cap` allows (`_cycle_limit`). The plans that can be chosen
    are placed as the allocator places them, but when the choice is the smallest peak (no
    budget, objective default or `min-sram`), or under a budget without `whole_front`, they
    are placed quickly first, marked with their `floor`, and `_settled` places for real only
    those the choice may fall on. A quick placement that does not fit `cap` is redone at once:
    whether a plan fits is never in doubt (it decides the cycle limit and the spill search).
    One that fits is realized as in full: the hill climb only lowers a quick peak, so the
    budget never makes a plan realize again without prefetch (`_realized`).

    Without `whole_front` (no report lists the front), two kinds of plan are not realized at
    all. One whose compute alone exceeds the cycle limit, as long as one realized here is
    within the limit: 15 of the 32 plans of mbv2_035_96's front for U65-256 without a budget,
    23 of the spill search's 27 for mbv2_100_224 at 385,504 B. And one that cannot fit `cap`
    whose compute alone is slower than a plan realized before it, so that the fastest plan
    (which decides the spill search) is always realized: 13 of the 17 of mbv2_100_224's front
    that cannot fit 385,504 B. Those are realized after all if nothing fits
    (`_Searched.unplaced`), for the message to name the smallest plan of all."""
    realized: list[Realized] = []
    too_slow: list[_Unplaced] = []
    unfit: list[_Unplaced] = []
    quickest = math.inf  # the fewest cycles of a plan realized here
    defer = DEFER_PLACEMENT and (options.objective in (None, "min-sram") if budget is None else not options.whole_front)
    for path, spilled in paths:
        smallest = max((point.memory for _, point in path.steps), default=0)
        fastest = sum(point.compute for _, point in path.steps)
        if not options.whole_front:  # no report lists the front: leave out what cannot be chosen
            if fastest > limit:
                too_slow.append(_Unplaced(graph, path, budget, spilled))
                continue
            if cap is not None and smallest > cap and fastest > quickest:
                unfit.append(_Unplaced(graph, path, budget, spilled))  # nor is it the fastest plan
                continue
        hopeless = (cap is not None and smallest > cap) or fastest > limit
        if defer and not hopeless:
            quick = realize(graph, path, cost, budget or 0, spilled=spilled, effort=0)
            quick = replace(quick, floor=smallest, budget=budget)
            fits = cap is None or quick.placement.peak <= cap
            entries = [quick] if fits else _realized(graph, path, cost, budget, spilled)
        else:
            entries = _realized(graph, path, cost, budget, spilled, 0 if hopeless else DEFAULT_EFFORT)
        realized += entries
        for entry in entries:
            quickest = min(quickest, entry.cycles)
            if not hopeless and (cap is None or entry.placement.peak <= cap):
                limit = min(limit, _cycle_limit(entry.cycles, options))
    if too_slow and not any(entry.cycles <= limit for entry in realized):
        # Only the plans of another search can be chosen, but which plan of these is the
        # fastest still decides whether to search spilling ones (`_wants_spill`).
        realized += _fastest_realized(too_slow, cost, min((entry.cycles for entry in realized), default=math.inf))
    return realized, limit, unfit


def _fastest_realized(plans: Sequence[_Unplaced], cost: CostModel, fewest: float = math.inf) -> list[Realized]:
    """`plans` realized in order of their compute, a lower bound of their cycles, until none left
    can take fewer cycles than `fewest` or than one realized: so the fastest of them (by cycles,
    then peak) is among those returned. mbv1_025_96 for U65-256 at Vela Size's budget: 1 of the
    spill search's 27 plans, not 24 ms for all."""
    realized: list[Realized] = []
    for plan in sorted(plans, key=lambda plan: plan.compute):
        if plan.compute > fewest:
            break
        entries = plan.realize(cost)
        realized += entries
        fewest = min([fewest, *(entry.cycles for entry in entries)])
    return realized


DEFER_PLACEMENT = True
"""Whether `_realized_front` may place a plan quickly pending the choice (`_settled`). The
choice is the same either way (test_planner_search); without, every plan that can be chosen is
placed in full: on mbv2_100_224 for U55-128 19 plans, 0.19 s, instead of one. Under Vela
Size's budget for U65-256 (ethosu-pipeline, no front reported), realizing the plans takes
mbv2_035_96 12 ms instead of 25, mbv2_100_224 22 ms instead of 56."""


def _settled(entries: list[Realized], cost: CostModel, options: PlanOptions, capacity: int | None) -> list[Realized]:
    """`entries` with the plans placed quickly pending the choice (`Realized.floor`) placed as
    the allocator places them, as many as the choice needs, smallest floor first: a plan that
    could be chosen (within the cycle limit of all the plans that fit `capacity`, the budget
    if there is one) whose floor is at most the smallest placed peak of such a plan. The rest
    cannot be chosen: their peaks, quick or not, are above that one's. On mbv1_025_96 for
    U65-256 without a budget, 3 of 13; mbv2_035_96 at Vela Size's 188,640 bytes, 1 of 5."""
    entries = list(entries)
    while True:
        fitting = [e for e in entries if capacity is None or e.placement.peak <= capacity]
        limit = _cycle_limit(min((e.cycles for e in fitting), default=0), options)
        best = min((e.placement.peak for e in fitting if e.floor is None and e.cycles <= limit), default=math.inf)
        pending = [i for i, e in enumerate(entries) if e.floor is not None and e.cycles <= limit and e.floor <= best]
        if not pending:
            return entries
        index = min(pending, key=lambda i: (entries[i].floor, i))
        entry = entries[index]
        entries[index : index + 1] = _realized(entry.graph, entry.path, cost, entry.budget, entry.spilled)


def _cycle_limit(cycles: int, options: PlanOptions) -> float:
    """The most cycles a plan may take to be chosen, given a realized plan of `cycles` that
    fits (`_choose`): the fastest one wins under a budget or for `min-cycles`, the smallest
    peak within the tolerance of the fastest without one; `min-sram` may choose any."""
    if options.objective == "min-sram":
        return math.inf
    if options.objective == "min-cycles" or options.sram_budget is not None:
        return cycles
    return cycles * (1 + options.cycles_tolerance)


SPILL_VARIANTS = 12
"""Plans of the spill search's front that are realized, spread evenly over it."""


def _spill_variants(paths: list[Path], cap: int) -> list[tuple[Path, int]]:
    """(plan, promotion cap) pairs to realize from the spill search's front (fastest first).
    Plans spread over the front, and the four fastest, promote as much as `cap` allows: the
    search's cycles assume everything spilled, so a smaller plan with more room to promote can
    end up faster. The spread plans also promote only what fits in their own peak, for the
    objectives that want a small peak (promoting up to the cap makes every plan as large)."""
    last = len(paths) - 1
    spread = sorted({round(k * last / (SPILL_VARIANTS - 1)) for k in range(SPILL_VARIANTS)} if paths else ())
    variants = [(paths[index], cap) for index in sorted(set(spread) | set(range(min(4, len(paths)))))]
    variants += [(paths[index], paths[index].peak) for index in spread if paths[index].peak < cap]
    return variants


def _wants_spill(realized: list[Realized], cap: int, options: PlanOptions) -> bool:
    """Whether to search spilling plans: for the smallest SRAM, or when the fastest plan
    keeping every tensor in SRAM does not fit `cap` (spilling costs cycles: otherwise that
    plan, or one near it, is what the objectives choose)."""
    if options.objective == "min-sram":
        return True
    fastest = min(realized, key=lambda r: (r.cycles, r.placement.peak), default=None)
    return fastest is None or fastest.placement.peak > cap


class CachedCost:
    """Memoises the byte counts of a cost model (they are asked for again and again); cycles
    are memoised by the search's `Pricer`."""

    def __init__(self, inner: CostModel) -> None:
        self.inner = inner
        self._weights: dict[str, int] = {}
        self._buffers: dict[tuple[str, tuple[int, ...]], int] = {}
        transfer = getattr(inner, "weight_transfer_cycles", None)
        if callable(transfer):
            self.weight_transfer_cycles = transfer
        pipelined = getattr(inner, "pipelined_stripe_cycles", None)
        if callable(pipelined):
            self.pipelined_stripe_cycles = pipelined
        if callable(getattr(inner, "weight_slice_bytes", None)):
            self.weight_slice_bytes = self._weight_slice_bytes
        for optional in ("can_spill", "can_cascade", "runs_on_npu", "size_weights", "size_weight_slices"):
            if callable(getattr(inner, optional, None)):
                setattr(self, optional, getattr(inner, optional))
        self._slices: dict[tuple[str, int], int] = {}

    def stripe_cycles(self, op: OpInfo, output: Region, weights_in_sram: bool, **spilled: frozenset[str]) -> int:
        return self.inner.stripe_cycles(op, output, weights_in_sram, **spilled)

    def weight_buffer_bytes(self, op: OpInfo) -> int:
        if op.name not in self._weights:
            self._weights[op.name] = self.inner.weight_buffer_bytes(op)
        return self._weights[op.name]

    def _weight_slice_bytes(self, op: OpInfo, depth: int) -> int:
        key = (op.name, depth)
        if key not in self._slices:
            self._slices[key] = self.inner.weight_slice_bytes(op, depth)  # type: ignore[attr-defined]
        return self._slices[key]

    def buffer_bytes(self, tensor: TensorInfo, region_shape: tuple[int, ...]) -> int:
        key = (tensor.name, tuple(region_shape))
        if key not in self._buffers:
            self._buffers[key] = self.inner.buffer_bytes(tensor, region_shape)
        return self._buffers[key]


@dataclass
class Realized:
    """A plan of the DP front made concrete: prefetch decided, buffers placed, cycles counted."""

    path: Path
    steps: list[Step]
    cycles_per_step: list[int]
    buffers: list[Buffer]
    placement: Placement
    graph: ProgramGraph
    """The program in the operator order the plan runs."""
    spilled: frozenset[str] = frozenset()
    """Full tensors kept in the spill memory."""
    floor: int | None = None
    """Set while the plan is placed with the quick heuristics only, pending the choice
    (`_settled`): the most memory a step of it needs (`Point.memory`), below which no placement
    of it, with or without prefetch, can go."""
    budget: int | None = None
    """While pending: the budget it was realized under, to realize it again in full."""

    @property
    def cycles(self) -> int:
        return sum(self.cycles_per_step)

    def cascades(self) -> tuple[PlannedCascade, ...]:
        cascades = []
        for index, ((edge, point), step) in enumerate(zip(self.path.steps, self.steps, strict=True)):
            live = [b for b in self.buffers if b.first_step <= index <= b.last_step]
            own = sum(b.size for b in live)
            peak = max((self.placement.offsets[b.name] + b.size for b in live if b.size), default=0)
            cascades.append(
                PlannedCascade(
                    edge.first,
                    edge.sink,
                    point.config,
                    point.recompute,
                    point.weights_in_sram,
                    own,
                    self.cycles_per_step[index],
                    peak,
                    step.prefetch,
                    step.weight_slice_depth,
                )
            )
        return tuple(cascades)


def _steps(path: Path) -> list[Step]:
    return [
        Step(
            edge.first,
            edge.sink,
            point.config,
            point.recompute,
            point.weights_in_sram,
            weight_slice_depth=point.slice_depth,
        )
        for edge, point in path.steps
    ]


def realize(
    graph: ProgramGraph,
    path: Path,
    cost: CostModel,
    budget: int = 0,
    prefetch: bool = True,
    spilled: frozenset[str] = frozenset(),
    effort: int = DEFAULT_EFFORT,
) -> Realized:
    """Decide weight prefetch for a DP plan, count its cycles, place its buffers.

    A cascade keeping its weights in SRAM copies them once; the copy runs while the previous
    cascade runs (prefetch) when its buffers fit there without raising the plan's peak as the
    DP counted it (`Path.peak`, the prefetches the DP chose included) or, under a budget,
    without exceeding the budget. Then the copy hides behind the
    previous cascade's slack (`search.Point.slack`: its cycles, less one read of its own
    weights if it streams them); what is not hidden adds up (`search.Point.duration`). The
    full tensors in `spilled` live in the spill memory (`spill`), placed on their own.
    """
    steps = _steps(path)
    buffers = plan_buffers(graph, steps, cost, spilled)
    totals = step_totals(buffers)
    # The DP's peak counts the prefetches it chose: they fit.
    cap = max(max(totals.values(), default=0), budget, path.peak if prefetch else 0)
    points = [point for _, point in path.steps]
    cycles = [point.duration(0) for point in points]
    for index in range(1, len(steps) if prefetch else 1):
        point = points[index]
        if not point.weights_in_sram or not point.transfer:
            continue
        size = sum(b.size for b in buffers if b.kind == "weights" and b.first_step == b.last_step == index)
        if totals.get(index - 1, 0) + size > cap:
            continue
        totals[index - 1] = totals.get(index - 1, 0) + size
        steps[index] = replace(steps[index], prefetch=True)
        cycles[index] = point.duration(points[index - 1].slack)
    if any(step.prefetch for step in steps):
        buffers = plan_buffers(graph, steps, cost, spilled)
    return Realized(path, steps, cycles, buffers, place(buffers, effort), graph, spilled)


def _placed_front(realized: list[Realized]) -> list[Realized]:
    """The plans re-culled on placed peaks and realized cycles (fastest first, peaks
    strictly decreasing)."""
    ordered = sorted(realized, key=lambda r: (r.cycles, r.placement.peak))
    kept: list[Realized] = []
    for entry in ordered:
        if kept and entry.placement.peak >= kept[-1].placement.peak:
            continue
        kept.append(entry)
    return kept


def _sram_capacity(cost: CostModel) -> tuple[int | None, str]:
    """The target's SRAM in bytes (None: no limit) and its name for messages."""
    capacity = getattr(cost, "sram_capacity", None)
    name = getattr(cost, "sram_name", None)
    return (None if capacity is None else capacity()), (name() if name is not None else "the target's SRAM")


def _choose(
    entries: list[Realized],
    options: PlanOptions,
    graph: ProgramGraph,
    searches: list[_Searched],
    capacity: int | None,
    capacity_name: str,
) -> int:
    indices = list(range(len(entries)))
    if capacity is not None:
        indices = [i for i in indices if entries[i].placement.peak <= capacity]
        if not indices:
            smallest = min(e.placement.peak for e in entries)
            what = f"{capacity_name} of {capacity} bytes"
            raise PlanningError(_budget_message(graph, searches, capacity, smallest, what))
    if options.sram_budget is not None:
        budget = options.sram_budget
        indices = [i for i in indices if entries[i].placement.peak <= budget]
        if not indices:
            raise PlanningError(_budget_message(graph, searches, budget, min(e.placement.peak for e in entries)))
    if options.objective == "min-sram":
        return min(indices, key=lambda i: (entries[i].placement.peak, entries[i].cycles))
    if options.objective == "min-cycles" or options.sram_budget is not None:
        return min(indices, key=lambda i: (entries[i].cycles, entries[i].placement.peak))
    fastest = min(entries[i].cycles for i in indices)
    limit = fastest * (1 + options.cycles_tolerance)
    within = [i for i in indices if entries[i].cycles <= limit]
    return min(within, key=lambda i: (entries[i].placement.peak, entries[i].cycles))


def _budget_message(
    graph: ProgramGraph, searches: list[_Searched], budget: int, smallest: int, what: str | None = None
) -> str:
    """Why nothing fits `budget` (`what` names it; default: the sram-budget). `graph` is the
    program in its own order; each search's operators are mapped back to it."""
    what = what or f"sram-budget of {budget} bytes"
    working_set: list[int | None] = [None] * graph.size
    for searched in searches:
        for edge in searched.edges:
            if not edge.points:
                continue
            memory = edge.points[0].memory
            for op in range(edge.first, edge.sink + 1):
                position = searched.candidates.graph.position(op)
                current = working_set[position]
                working_set[position] = memory if current is None else min(current, memory)
    worst = max(range(graph.size), key=lambda op: (working_set[op] or 0, -op))
    # Stripes of rows and columns can go below any plan of rows (test patches_2d.mlir).
    searched = _UNSEARCHED_STRIPES[searches[0].candidates.options.striping]
    if (working_set[worst] or 0) > budget:
        return (
            f"{what} is too small: {describe_op(graph, worst)} needs at least "
            f"{working_set[worst]} bytes (its smallest working set{searched})"
        )
    return f"{what} is too small: the smallest plan found needs {smallest} bytes{searched}"


_UNSEARCHED_STRIPES = {
    "hwc": "",
    "hw": "",
    "hc": " in stripes of rows or of channels, or of columns where an output is one row high; "
    "striping=hwc also cuts columns",
    "h": " in stripes of rows, or of columns where an output is one row high; striping=hw also cuts columns",
    "c": " unstriped or in stripes of channels; striping=hc or hwc also cuts rows",
    "none": " unstriped; striping=h or hw cuts stripes",
}
"""What a budget message adds about the stripes the search did not try, by `striping`."""


def row_lower_bound(graph: ProgramGraph, candidates: Candidates) -> int:
    """The row-striping lower bound (see the module docstring)."""
    weights: dict[tuple[int, int], int] = {}
    for sink in range(graph.size):
        weights[(sink, sink)] = candidates.base(sink, sink)
        start = graph.range_start_limit(sink, candidates.options.max_length)
        if start == sink:
            continue
        config = StripeConfig((2,) if one_row(graph.output_shape(sink)) else (1,), (1,))
        geometry = CascadeGeometry.build(graph, start, sink, config, frozenset())
        intermediates = 0
        for first in range(sink - 1, start - 1, -1):
            shape = geometry.buffer_shape(first)
            intermediates += align(candidates.cost.buffer_bytes(graph.ops[first].output, shape))
            saving = candidates.in_place_saving(first, sink, config, frozenset(), geometry)
            weights[(first, sink)] = candidates.base(first, sink) + intermediates - saving
    bound = minimax_path(graph.size, weights)
    return bound or 0
