"""The search: per-cascade Pareto sets, memory accounting, and the partition DP against brute force."""

from __future__ import annotations

import itertools
import os
import sys
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cascade import parallel
from cascade.dialects.access import Region
from cascade.passes.planner import plan, search
from cascade.passes.planner.graph import TensorInfo
from cascade.passes.planner.memory import Step, plan_buffers
from cascade.passes.planner.placement import DEFAULT_EFFORT, place, step_totals
from cascade.passes.planner.program import ProgramGraph
from cascade.passes.planner.search import (
    Candidates,
    Edge,
    PartitionDP,
    Point,
    SearchOptions,
    _undominated,
    cull,
    minimax_path,
)
from cascade.passes.planner.stripes import UNSTRIPED, StripeConfig
from cascade.passes.planner.testing import AnalyticalCost, ToyProgram


def _point(memory: int, cycles: int) -> Point:
    return Point(memory, cycles, UNSTRIPED, frozenset(), False)


def test_cull_keeps_the_pareto_front_and_both_extremes():
    points = [_point(m, c) for m, c in [(10, 100), (20, 50), (15, 120), (30, 40), (40, 40), (50, 10), (60, 5)]]
    front = cull(points, 10)
    assert [(p.memory, p.cycles) for p in front] == [(10, 100), (20, 50), (30, 40), (50, 10), (60, 5)]
    thinned = cull(points, 3)
    assert [(p.memory, p.cycles) for p in thinned] == [(10, 100), (30, 40), (60, 5)]


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    st.lists(st.tuples(st.integers(1, 10_000), st.integers(1, 10_000)), min_size=1, max_size=80),
    st.integers(2, 16),
)
def test_thinning_to_twice_as_many_less_one_keeps_every_point_kept_before(raw, max_points):
    """Why `MAX_POINTS` is 2 x 12 - 1: thinning evenly to 2m - 1 points keeps each of the m that
    thinning to m keeps, so the DP sees a superset of the candidates it saw with 12."""
    points = [_point(memory, cycles) for memory, cycles in raw]
    fewer = cull(points, max_points)
    more = cull(points, 2 * max_points - 1)
    assert set(fewer) <= set(more)
    assert len(more) <= 2 * max_points - 1


def test_prefetch_needs_room_in_the_step_before():
    # Two steps; the second keeps 30 bytes of weights in SRAM: 100 cycles when they are copied
    # while the first step runs, 130 when not. The first step takes 50 or 80 bytes.
    small, large = Point(50, 10, UNSTRIPED, frozenset(), False, 10), Point(80, 5, UNSTRIPED, frozenset(), False, 5)
    second = Point(60, 100, UNSTRIPED, frozenset(), True, 100, 30, prefetch_bytes=30)
    edges = [
        Edge(0, 0, (small, large), (50, 80)),
        Edge(1, 1, (second,), (60,)),
    ]
    dp = PartitionDP(2, edges)
    unbounded = dp.fastest_under(10**9)
    assert (unbounded.cycles, unbounded.peak, unbounded.prefetch) == (105, 110, (False, True))
    # Under 100 bytes: no room after the large step (80 + 30), so the small one and prefetch.
    bounded = dp.fastest_under(100)
    assert (bounded.cycles, bounded.peak, bounded.steps[0][1], bounded.prefetch) == (110, 80, small, (False, True))
    # Under 79: 50 + 30 does not fit either: the copy shows.
    bounded = dp.fastest_under(79)
    assert (bounded.cycles, bounded.peak, bounded.prefetch) == (10 + 130, 60, (False, False))
    assert [(p.peak, p.cycles) for p in dp.pareto_front()] == [(110, 105), (80, 110), (60, 140)]


def _inverted_residual(program: ToyProgram, expanded: int) -> TensorInfo:
    """A 3x3 convolution to 8 channels, then a MobileNetV2 block on it (1x1 to `expanded`
    channels, 3x3 depthwise, 1x1 back to 8) added to it."""
    y = program.conv(program.x, 3, pad=1, channels=8)
    t = program.conv(y, 1, channels=expanded)
    t = program.dw(t, 3, pad=1)
    t = program.conv(t, 1, channels=8)
    return program.add(y, t)


def test_greedy_mode_set_holds_no_more_than_recomputing_everything():
    program = ToyProgram((1, 16, 16, 4))
    program.conv(_inverted_residual(program, 32), 3, s=2, pad=1, channels=8)
    graph = ProgramGraph.build(program)
    candidates = Candidates(graph, AnalyticalCost(), SearchOptions())
    sink = graph.size - 1
    config = StripeConfig((1, 2), (1, 1))
    everything = frozenset(range(sink))
    chosen = candidates._smallest_mode_set(sink, 0, config)
    assert candidates._intermediates_bytes(sink, 0, config, chosen) <= candidates._intermediates_bytes(
        sink, 0, config, everything
    )
    assert chosen == candidates._smallest_mode_set(sink, 0, config)  # deterministic


def test_minimax_path():
    # 0 -> 1 -> 2 costs max(5, 7) = 7; the direct edge 0 -> 2 costs 6.
    assert minimax_path(2, {(0, 0): 5, (1, 1): 7, (0, 1): 6}) == 6


def _residual_program() -> ToyProgram:
    program = ToyProgram((1, 8, 6, 4))
    y = program.conv(program.x, 1, channels=8)
    t = program.conv(y, 1, channels=16)
    t = program.dw(t, 3, pad=1)
    t = program.conv(t, 1, channels=8)
    program.add(y, t)
    return program


@st.composite
def programs(draw: st.DrawFn) -> ToyProgram:
    program = ToyProgram((1, draw(st.integers(4, 10)), draw(st.integers(4, 10)), 4))
    tensors = [program.x]
    for _ in range(draw(st.integers(2, 6))):
        current = tensors[-1]
        kind = draw(st.sampled_from(["conv1", "conv3", "dw", "pool", "add", "whole"]))
        if kind == "add":
            same = [t for t in tensors[:-1] if t.shape == current.shape]
            if not same:
                continue
            tensors.append(program.add(current, draw(st.sampled_from(same))))
        elif kind == "conv1":
            tensors.append(program.conv(current, 1, channels=draw(st.sampled_from([4, 8, 16]))))
        elif kind == "conv3":
            tensors.append(program.conv(current, 3, s=draw(st.integers(1, 2)), pad=1, channels=4))
        elif kind == "dw":
            tensors.append(program.dw(current, 3, pad=1))
        elif kind == "pool" and min(current.shape[1:3]) >= 2:
            tensors.append(program.pool(current, 2, s=2))
    if len(program.ops) < 2:
        tensors.append(program.conv(tensors[-1], 3, pad=1, channels=4))
        tensors.append(program.conv(tensors[-1], 1, channels=8))
    if draw(st.booleans()):
        program.whole(tensors[-1])
    return program


def _all_plans(size: int, edges: list[Edge]):
    """Every partition into candidate cascades, with every combination of their points."""
    by_first: dict[int, list[Edge]] = {}
    for edge in edges:
        by_first.setdefault(edge.first, []).append(edge)

    def walk(position: int):
        if position == size:
            yield []
            return
        for edge in by_first.get(position, []):
            for rest in walk(edge.sink + 1):
                for point in edge.points:
                    yield [(edge, point), *rest]

    yield from walk(0)


def _front(plans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    front: list[tuple[int, int]] = []
    for peak, cycles in sorted(set(plans), key=lambda p: (p[1], p[0])):
        if front and peak >= front[-1][0]:
            continue
        front.append((peak, cycles))
    return front


@settings(max_examples=40, deadline=None, derandomize=True)
@given(programs())
def test_partition_dp_front_is_exact(program):
    graph = ProgramGraph.build(program)
    candidates = Candidates(graph, AnalyticalCost(), SearchOptions(max_points=3))
    edges = candidates.edges()
    plans = [summary for plan in _all_plans(graph.size, edges) for summary in _with_prefetch(plan)]
    dp_front = [(path.peak, path.cycles) for path in PartitionDP(graph.size, edges).pareto_front()]
    assert dp_front == _front(plans)


def _with_prefetch(plan):
    """(peak, cycles) of a plan for every choice of which steps prefetch their weights: a
    prefetched step runs in `cycles` and its weight buffers count in the step before, any other
    in `plain` cycles; the first step cannot prefetch."""
    choices = [[False, True] if index and point.prefetchable else [False] for index, (_, point) in enumerate(plan)]
    for prefetch in itertools.product(*choices):
        peak = max(point.memory for _, point in plan)
        cycles = 0
        for index, (_, point) in enumerate(plan):
            if prefetch[index]:
                peak = max(peak, plan[index - 1][1].memory + point.prefetch_bytes)
                cycles += point.cycles
            else:
                cycles += point.plain
        yield peak, cycles


@settings(max_examples=40, deadline=None, derandomize=True)
@given(programs())
def test_point_memory_is_the_buffers_live_in_that_step(program):
    # The search adds memory incrementally per range; memory.plan_buffers lists the buffers of
    # a whole plan. Each point of each candidate cascade must agree, with the other operators
    # run one at a time.
    graph = ProgramGraph.build(program)
    cost = AnalyticalCost()
    candidates = Candidates(graph, cost, SearchOptions(max_points=4))
    for edge in candidates.edges():
        for point in edge.points:
            steps = [Step(op, op, UNSTRIPED, frozenset(), False) for op in range(edge.first)]
            steps.append(Step(edge.first, edge.sink, point.config, point.recompute, point.weights_in_sram))
            steps += [Step(op, op, UNSTRIPED, frozenset(), False) for op in range(edge.sink + 1, graph.size)]
            totals = step_totals(plan_buffers(graph, steps, cost))
            assert totals[edge.first] == point.memory


def test_base_memory_by_hand():
    # _residual_program: x 8*6*4 = 192; y 8*6*8 = 384 (read by the add, op 4); t1 768; t2 768;
    # t3 384; out 384. A cascade [1, 3] runs while x is dead and y is live: y + t3 = 768.
    # The add alone reads y and t3, both dying there and shaped like its output: it writes out
    # over y (its first operand), so y + t3 = 768, not y + t3 + out = 1152.
    graph = ProgramGraph.build(_residual_program())
    candidates = Candidates(graph, AnalyticalCost(), SearchOptions())
    assert candidates.base(0, 0) == 192 + 384
    assert candidates.base(1, 3) == 384 + 384
    assert candidates.base(4, 4) == 384 + 384
    # In a cascade [2, 4] the add still reads y (produced before it) and nothing else in the
    # cascade reads y: in place too, so the full tensors are y and the cascade's input t1.
    assert candidates.base(2, 4) == 384 + 768
    # In [1, 4] op 1 reads y as well, and could need rows the add has overwritten: not in place.
    assert candidates.base(1, 4) == 384 + 384


def test_every_operator_has_a_singleton_edge():
    graph = ProgramGraph.build(_residual_program())
    edges = Candidates(graph, AnalyticalCost(), SearchOptions()).edges()
    singles = {edge.first for edge in edges if edge.first == edge.sink and edge.points}
    assert singles == set(range(graph.size))
    assert any(edge.first == 0 and edge.sink == 4 for edge in edges)  # the residual inside


def test_striping_none_has_singletons_only():
    graph = ProgramGraph.build(_residual_program())
    edges = Candidates(graph, AnalyticalCost(), SearchOptions(striping="none")).edges()
    assert all(edge.first == edge.sink for edge in edges)


def test_front_is_deterministic():
    graph = ProgramGraph.build(_residual_program())

    def front():
        edges = Candidates(graph, AnalyticalCost(), SearchOptions()).edges()
        return [
            (p.peak, p.cycles, tuple((e.first, e.sink, q.config, tuple(sorted(q.recompute))) for e, q in p.steps))
            for p in PartitionDP(graph.size, edges).pareto_front()
        ]

    assert front() == front()


def test_length_limit():
    graph = ProgramGraph.build(_residual_program())
    edges = Candidates(graph, AnalyticalCost(), SearchOptions(max_length=2)).edges()
    assert max(edge.sink - edge.first + 1 for edge in edges) == 2
    assert list(itertools.islice((e for e in edges if e.sink - e.first == 1), 1))


# --------------------------------------------------------------------------- #
# Candidates built half in a forked child
# --------------------------------------------------------------------------- #


def _cascade_point(memory: int, compute: int, weights_in_sram: bool, depth: int, transfer: int, index: int) -> Point:
    """A point of one cascade whose weights (64 bytes) take `transfer` cycles to copy; each
    point its own configuration (so none are equal), sliced in two when `depth`."""
    config = StripeConfig((1,), (index + 1,))
    if depth:
        half = (compute // 2, transfer // 2)
        schedule = (half, (compute - half[0], transfer - half[1]))
        return Point(memory, 0, config, frozenset(), True, compute, transfer, depth, schedule, 32)
    prefetch = 64 if weights_in_sram and transfer else 0
    return Point(memory, 0, config, frozenset(), weights_in_sram, compute, transfer, prefetch_bytes=prefetch)


def test_undominated_drops_what_more_memory_buys_nothing_for():
    streamed = _cascade_point(16, 10, False, 0, 8, 0)
    slower_in_sram = _cascade_point(32, 20, True, 0, 8, 1)  # streamed is as small and faster
    faster_in_sram = _cascade_point(32, 5, True, 0, 8, 2)
    same_in_sram = _cascade_point(16, 10, True, 0, 8, 3)  # ties streamed: both stay
    slower_streamed = _cascade_point(48, 9, False, 0, 8, 4)  # faster_in_sram cannot drop it
    sliced = _cascade_point(64, 50, True, 16, 8, 5)  # sliced points always stay
    points = [sliced, slower_streamed, same_in_sram, faster_in_sram, slower_in_sram, streamed]
    kept = _undominated(points)
    assert set(kept) == {streamed, faster_in_sram, same_in_sram, slower_streamed, sliced}


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 40), st.booleans(), st.sampled_from([0, 0, 0, 16])),
        min_size=1,
        max_size=14,
    ),
    st.integers(0, 30),
    st.integers(0, 60),
    st.sampled_from([2, 3, 12]),
)
def test_undominated_keeps_all_that_cull_keeps_at_any_slack(raw, transfer, slack, max_points):
    # The child culls before it knows the slack before a cascade: whatever the slack turns
    # out to be, culling what it kept gives what culling every point gives.
    points = [
        _cascade_point(16 * memory, compute, in_sram, depth, transfer, index)
        for index, (memory, compute, in_sram, depth) in enumerate(raw)
    ]

    def culled(chosen: list[Point]) -> list[Point]:
        return cull([replace(p, cycles=p.duration(slack)) for p in chosen], max_points)

    assert culled(_undominated(points)) == culled(points)


def _striped_program() -> ToyProgram:
    """Tall and wide enough for 2-D stripes and buffer-mode sets, with a residual add."""
    program = ToyProgram((1, 24, 20, 4))
    t = program.dw(_inverted_residual(program, 16), 3, s=2, pad=1)
    t = program.conv(t, 1, channels=16)
    program.whole(program.pool(t, 2, s=2))
    return program


def _edges_and_counts(graph: ProgramGraph) -> tuple[list[Edge], list[int], int]:
    candidates = Candidates(graph, AnalyticalCost(), SearchOptions())
    edges = candidates.edges()
    return edges, candidates.fastest_ending, candidates.evaluated


needs_fork = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the child is forked on Linux only")


@pytest.fixture
def sharing(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every search shares its candidates with a forked child; yields the pids that built the
    child's share (the child's own, or this process's if it fell back)."""
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    monkeypatch.setattr(parallel, "_can_fork", lambda: True)
    monkeypatch.setattr(search, "SHARED_WORK", 0)
    builders: list[int] = []
    real_built, real_adopt = Candidates._built_elsewhere, Candidates._adopt

    def built(self: Candidates, sinks: range) -> object:
        result = real_built(self, sinks)
        result.pid = os.getpid()  # type: ignore[attr-defined]
        return result

    def adopt(self: Candidates, result: object) -> None:
        builders.append(result.pid)  # type: ignore[attr-defined]
        real_adopt(self, result)  # type: ignore[arg-type]

    monkeypatch.setattr(Candidates, "_built_elsewhere", built)
    monkeypatch.setattr(Candidates, "_adopt", adopt)
    return builders


@needs_fork
def test_candidates_built_half_in_a_child_are_the_same(monkeypatch: pytest.MonkeyPatch, sharing: list[int]):
    graph = ProgramGraph.build(_striped_program())
    with monkeypatch.context() as alone:
        alone.setattr(parallel, "available_cores", lambda: 1)
        expected = _edges_and_counts(graph)
    assert not sharing
    shared = _edges_and_counts(ProgramGraph.build(_striped_program()))
    assert len(sharing) == 1
    assert sharing[0] != os.getpid()
    assert shared == expected


@needs_fork
def test_candidates_are_the_same_when_the_child_fails(monkeypatch: pytest.MonkeyPatch, sharing: list[int]):
    graph = ProgramGraph.build(_striped_program())
    expected = _edges_and_counts(graph)
    parent = os.getpid()
    sharing.clear()
    real_points = Candidates._points_of_sink

    def dying_in_the_child(self: Candidates, sink: int) -> dict[int, list[Point]]:
        if os.getpid() != parent:
            os._exit(3)
        return real_points(self, sink)

    monkeypatch.setattr(Candidates, "_points_of_sink", dying_in_the_child)
    assert _edges_and_counts(ProgramGraph.build(_striped_program())) == expected
    assert sharing == [parent]  # this process built the child's share itself, counted once


def test_the_exact_pricer_reuses_the_boxes_the_search_sampled():
    # A 4-row interior stripe of the first convolution: the search samples it (4 is a grid
    # size) centred; recounting a plan prices an interior 4-row box of the same shape, which
    # it finds priced. A box of another class (touching the top) is priced anew.
    graph = ProgramGraph.build(_striped_program())
    candidates = Candidates(graph, AnalyticalCost(), SearchOptions())
    search_pricer, exact = candidates.pricer, candidates.exact_pricer
    batch, _, width, channels = graph.output_shape(0)
    sampled = search_pricer.stripe(0, 4, width, True, pipelined=True)
    assert search_pricer.calls == 1  # 4 rows and the whole width are grid sizes: one sample
    interior = Region((0, 4, 0, 0), (batch, 4, width, channels))
    assert exact.box(0, interior, True, pipelined=True) == sampled
    assert exact.calls == 0
    exact.box(0, Region((0, 0, 0, 0), (batch, 4, width, channels)), True, pipelined=True)
    assert exact.calls == 1


class _CappedCost(AnalyticalCost):
    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.sram_capacity = lambda: capacity


def _chosen_plan(
    program: ToyProgram, cost: AnalyticalCost, objective: str | None, defer: bool, budget: int | None = None
):
    previous, plan.DEFER_PLACEMENT = plan.DEFER_PLACEMENT, defer
    options = plan.PlanOptions(objective=objective, sram_budget=budget, whole_front=budget is None)
    try:
        result = plan.plan_program(program, cost, options)
    except plan.PlanningError as error:
        return str(error)
    finally:
        plan.DEFER_PLACEMENT = previous
    # The chosen plan is placed as the allocator places it, deferred or not.
    assert place(result.buffers).offsets == result.placement.offsets
    return result.peak, result.cycles, result.cascades, result.placement.offsets


@st.composite
def _residual_stacks(draw: st.DrawFn) -> ToyProgram:
    """MobileNetV2-like blocks (1x1 expansion, 3x3 depthwise, 1x1 projection, added back):
    fronts of several plans whose quick and full placements differ."""
    program = ToyProgram((1, draw(st.integers(8, 16)), draw(st.integers(8, 16)), draw(st.sampled_from([4, 8]))))
    tensor = program.x
    for _ in range(draw(st.integers(2, 4))):
        expanded = program.dw(program.conv(tensor, 1, channels=draw(st.sampled_from([16, 32]))), 3, pad=1)
        tensor = program.add(tensor, program.conv(expanded, 1, channels=tensor.shape[-1]))
    return program


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    st.one_of(programs(), _residual_stacks()),
    st.sampled_from([None, "min-sram"]),
    st.sampled_from([None, 6000, "tight"]),
)
def test_plans_placed_quickly_pending_the_choice_change_nothing_chosen(program, objective, capacity):
    # Without a budget the planner places most front plans quickly and only those the choice
    # may fall on in full (`plan._settled`); placing every plan in full chooses the same.
    # "tight": an SRAM exactly the size of the plan chosen without one, which its quick
    # placement may exceed.
    if capacity == "tight":
        capacity = plan.plan_program(program, AnalyticalCost(), plan.PlanOptions(objective=objective)).peak
    cost = AnalyticalCost() if capacity is None else _CappedCost(capacity)
    assert _chosen_plan(program, cost, objective, True) == _chosen_plan(program, cost, objective, False)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    st.one_of(programs(), _residual_stacks()),
    st.sampled_from([None, "min-sram", "min-cycles"]),
    st.floats(0, 1),
)
def test_plans_placed_quickly_under_a_budget_change_nothing_chosen(program, objective, where):
    # Under a budget, without the whole front (as ethosu-pipeline plans), the plans that fit
    # by their quick placement are placed in full only if the choice may fall on them; placing
    # every plan in full chooses the same. The budget is the peak of a plan of the front: its
    # quick placement may exceed it.
    front = plan.plan_program(program, AnalyticalCost(), plan.PlanOptions(objective=objective)).front
    budget = sorted(point.peak_sram_bytes for point in front)[round(where * (len(front) - 1))]
    cost = AnalyticalCost()
    assert _chosen_plan(program, cost, objective, True, budget) == _chosen_plan(program, cost, objective, False, budget)


def test_only_the_plans_the_choice_may_fall_on_are_placed_in_full(monkeypatch: pytest.MonkeyPatch):
    # Four inverted residual blocks: without a budget, the smallest plan within 5 % of the
    # fastest is placed in full, and the plans above it on the front only quickly.
    program = ToyProgram((1, 16, 16, 8))
    tensor = program.x
    for _ in range(4):
        expanded = program.dw(program.conv(tensor, 1, channels=32), 3, pad=1)
        tensor = program.add(tensor, program.conv(expanded, 1, channels=8))
    efforts: list[int] = []
    real_place = plan.place

    def counting_place(buffers, effort=DEFAULT_EFFORT):
        efforts.append(effort)
        return real_place(buffers, effort)

    monkeypatch.setattr(plan, "place", counting_place)
    eager = _chosen_plan(program, AnalyticalCost(), None, False)
    eager_full = sum(1 for effort in efforts if effort)
    efforts.clear()
    assert _chosen_plan(program, AnalyticalCost(), None, True) == eager
    deferred_full = sum(1 for effort in efforts if effort)
    assert deferred_full < eager_full
