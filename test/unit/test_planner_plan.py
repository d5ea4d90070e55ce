"""Plan selection: objectives, budgets, impossible budgets, prefetch, the lower bound."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from cascade.passes.planner.placement import max_live, place
from cascade.passes.planner.plan import PlanningError, PlanOptions, _fastest_realized, plan_program
from cascade.passes.planner.program import CHANNELS
from cascade.passes.planner.testing import AnalyticalCost, ToyProgram


def expansion_block() -> ToyProgram:
    # x 1x16x8x8 -> conv 1x1 (32 ch) -> depthwise 3x3 pad 1 -> conv 1x1 (8 ch). x and the
    # output are 1024 bytes, the intermediates 4096, one row of them 8*32 = 256.
    program = ToyProgram((1, 16, 8, 8))
    a = program.conv(program.x, 1, channels=32)
    b = program.dw(a, 3, pad=1)
    program.conv(b, 1, channels=8)
    return program


COST = AnalyticalCost()


def test_min_sram_is_the_one_row_cascade():
    # One row at a time: x + out + 3 rows of a + 1 row of b = 1024 + 1024 + 768 + 256 = 3072,
    # against 4096 + 4096 = 8192 for the depthwise conv alone. Weights stream (no SRAM).
    result = plan_program(expansion_block(), COST, PlanOptions(objective="min-sram"))
    assert result.peak == 3072
    assert result.lower_bound == 3072
    (cascade,) = result.cascades
    assert (cascade.first, cascade.sink, cascade.config.order, cascade.config.sizes) == (0, 2, (1,), (1,))
    assert not cascade.weights_in_sram


def test_min_cycles_runs_operators_alone():
    # Striping only adds per-stripe overhead in this cost model: the fastest plan is the
    # unstriped one, with weights in SRAM (read at 4 B/cycle rather than streamed at 1).
    result = plan_program(expansion_block(), COST, PlanOptions(objective="min-cycles"))
    assert all(c.first == c.sink for c in result.cascades)
    assert result.cycles == min(point.cycles for point in result.front)


def test_default_is_the_smallest_within_five_percent_of_the_fastest():
    result = plan_program(expansion_block(), COST, PlanOptions())
    fastest = min(point.cycles for point in result.front)
    assert result.cycles <= fastest * 1.05
    smaller = [p for p in result.front if p.peak_sram_bytes < result.peak]
    assert all(p.cycles > fastest * 1.05 for p in smaller)


@pytest.mark.parametrize("budget", [3072, 4000, 6000, 9000, 100_000])
def test_budget_gives_the_fastest_plan_that_fits(budget):
    result = plan_program(expansion_block(), COST, PlanOptions(sram_budget=budget))
    assert result.peak <= budget
    fitting = [p for p in result.front if p.peak_sram_bytes <= budget]
    assert result.cycles == min(p.cycles for p in fitting)


def test_impossible_budget_names_the_operator():
    # No operator runs in less than 3072 bytes: op 0 alone needs x + a = 5120, op 1 alone
    # a + b = 8192, op 2 alone b + out = 5120; the one-row cascade serves all three in 3072.
    # On a tie the first operator is named.
    with pytest.raises(
        PlanningError,
        match=r"sram-budget of 3071 bytes is too small: nn.conv2d 't0' "
        r"needs at least 3072 bytes \(its smallest working set\)",
    ):
        plan_program(expansion_block(), COST, PlanOptions(sram_budget=3071))


@pytest.mark.parametrize(
    ("striping", "operator", "needs", "searched"),
    [
        # Unstriped, the depthwise conv alone needs the most: a + b = 8192.
        ("none", "nn.depthwise_conv2d 't1'", 8192, "unstriped; striping=h or hw cuts stripes"),
        (
            "h",
            "nn.conv2d 't0'",
            3072,
            "in stripes of rows, or of columns where an output is one row high; striping=hw also cuts columns",
        ),
    ],
)
def test_an_impossible_budget_says_which_stripes_were_not_tried(striping, operator, needs, searched):
    with pytest.raises(PlanningError) as raised:
        plan_program(expansion_block(), COST, PlanOptions(sram_budget=3071, striping=striping))
    assert str(raised.value) == (
        f"sram-budget of 3071 bytes is too small: {operator} needs at least {needs} bytes "
        f"(its smallest working set {searched})"
    )


class CappedCost(AnalyticalCost):
    """The analytical cost model of a target with only `capacity` bytes of SRAM."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity

    def sram_capacity(self) -> int:
        return self.capacity


def test_the_targets_sram_caps_every_plan():
    # Without a capacity the default plan is the fastest family (operators alone, weights in
    # SRAM, above 8192 bytes: the depthwise conv alone holds a and b). A 6000-byte SRAM
    # forbids it; the plan is then the default rule applied to what fits: the smallest within
    # 5 % of the fastest plan that fits.
    unlimited = plan_program(expansion_block(), COST, PlanOptions())
    assert unlimited.peak > 6000
    capped = plan_program(expansion_block(), CappedCost(6000), PlanOptions())
    assert capped.peak <= 6000
    fitting = [p for p in capped.front if p.peak_sram_bytes <= 6000]
    fastest = min(p.cycles for p in fitting)
    assert capped.cycles <= fastest * 1.05
    assert all(p.cycles > fastest * 1.05 for p in fitting if p.peak_sram_bytes < capped.peak)
    # A budget above the capacity is capped too; one below it is honoured as given.
    assert plan_program(expansion_block(), CappedCost(6000), PlanOptions(sram_budget=9000)).peak <= 6000
    below = plan_program(expansion_block(), CappedCost(6000), PlanOptions(sram_budget=4000))
    assert below.peak <= 4000
    assert below.cycles == plan_program(expansion_block(), COST, PlanOptions(sram_budget=4000)).cycles


def test_a_target_sram_too_small_for_any_plan_names_the_operator():
    with pytest.raises(
        PlanningError,
        match=r"the target's SRAM of 3000 bytes is too small: nn.conv2d 't0' needs at least 3072 bytes",
    ):
        plan_program(expansion_block(), CappedCost(3000), PlanOptions())


@pytest.mark.parametrize("budget", [None, 3072, 4000, 6000, 9000, 100_000])
@pytest.mark.parametrize("capacity", [None, 7000])
def test_without_the_whole_front_the_same_plan_is_chosen(budget, capacity):
    # Plans that cannot be chosen are left out of the front, and only they: those that do not
    # fit, and those slower than the choice allows (the fastest fitting plan under a budget,
    # 5 % more without one).
    cost = COST if capacity is None else CappedCost(capacity)
    whole = plan_program(expansion_block(), cost, PlanOptions(sram_budget=budget))
    fitting = plan_program(expansion_block(), cost, PlanOptions(sram_budget=budget, whole_front=False))
    assert (fitting.peak, fitting.cycles, fitting.cascades) == (whole.peak, whole.cycles, whole.cascades)
    caps = [c for c in (budget, capacity) if c is not None]
    cap = min(caps) if caps else math.inf
    fits = [point for point in whole.front if point.peak_sram_bytes <= cap]
    fastest = min(point.cycles for point in fits)
    limit = fastest if budget is not None else fastest * 1.05
    assert fitting.front == [point for point in fits if point in fitting.front]
    assert all(point.cycles > limit for point in fits if point not in fitting.front)
    # The expansion block's front reaches plans more than 5 % slower than the fastest: some
    # are left out even where every plan fits.
    assert len(fitting.front) < len(whole.front)


def test_without_the_whole_front_an_impossible_budget_still_names_the_operator():
    with pytest.raises(PlanningError, match=r"sram-budget of 3071 bytes is too small: nn.conv2d 't0'"):
        plan_program(expansion_block(), COST, PlanOptions(sram_budget=3071, whole_front=False))


@pytest.mark.parametrize("budget", [2048, 2560, 3056])
def test_without_the_whole_front_an_impossible_budget_says_the_same(budget):
    # Without the whole front 15 of the expansion block's plans are left unrealized (they cannot
    # fit, and a faster plan was realized before them); an impossible budget still gets the
    # whole front's message.
    messages = []
    for whole_front in (True, False):
        with pytest.raises(PlanningError) as error:
            plan_program(expansion_block(), COST, PlanOptions(sram_budget=budget, whole_front=whole_front))
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_bad_options():
    with pytest.raises(PlanningError, match="objective must be one of"):
        plan_program(expansion_block(), COST, PlanOptions(objective="fast"))
    with pytest.raises(PlanningError, match="striping must be one of"):
        plan_program(expansion_block(), COST, PlanOptions(striping="diagonal"))


def test_predicted_peak_is_the_placed_peak_of_the_buffers():
    for objective in (None, "min-sram", "min-cycles"):
        result = plan_program(expansion_block(), COST, PlanOptions(objective=objective))
        assert place(result.buffers).peak == result.peak
        assert result.peak >= max_live(result.buffers)


def test_deterministic():
    first = plan_program(expansion_block(), COST, PlanOptions())
    second = plan_program(expansion_block(), COST, PlanOptions())
    assert first.cascades == second.cascades
    assert first.report() == second.report()


def test_weights_are_prefetched_only_under_the_peak():
    # Four 1x1 convs on 1x4x4x8, weights 8*8 = 64 bytes each, copy 64 cycles each (1 B/cycle),
    # hidden behind the previous operator's cycles when its buffers fit there.
    program = ToyProgram((1, 4, 4, 8))
    t = program.x
    for _ in range(4):
        t = program.conv(t, 1, channels=8)
    result = plan_program(program, COST, PlanOptions(objective="min-cycles"))
    steps = [c for c in result.cascades]
    assert not steps[0].prefetch  # nothing runs before the first one
    totals = {}
    for buffer in result.buffers:
        for step in range(buffer.first_step, buffer.last_step + 1):
            totals[step] = totals.get(step, 0) + buffer.size
    for index, cascade in enumerate(steps):
        if cascade.prefetch:
            assert cascade.weights_in_sram
            assert totals[index - 1] <= max(totals.values())


def test_report_shape():
    result = plan_program(expansion_block(), COST, PlanOptions(objective="min-sram"))
    report = result.report()
    assert set(report) == {"chosen", "lower_bound_bytes", "front"}
    assert report["chosen"] == {"peak_sram_bytes": 3072, "cycles": result.cycles, "cascades": 1}
    assert all(set(entry) == {"peak_sram_bytes", "cycles", "cascades"} for entry in report["front"])
    peaks = [entry["peak_sram_bytes"] for entry in report["front"]]
    assert peaks == sorted(peaks, reverse=True)  # fastest first, peaks decreasing


def _wide_chain() -> ToyProgram:
    # 4 rows x 96 columns: column stripes roll far fewer bytes than row stripes, so the
    # smallest plan rolls its intermediates along the width.
    program = ToyProgram((1, 4, 96, 8))
    t = program.conv(program.x, 3, pad=1, channels=16)
    t = program.conv(t, 3, pad=1, channels=16)
    program.conv(t, 3, pad=1, channels=8)
    return program


def _rolling_outer_axes(result) -> set[int]:
    return {
        cascade.config.outer_axis
        for cascade in result.cascades
        if any(result.geometry(cascade).is_rolling(op) for op in range(cascade.first, cascade.sink))
    }


def _one_row_chain() -> ToyProgram:
    # A 1-D network's tensors, [1, 1, T, C]: 1 x 3 windows along 64 columns.
    program = ToyProgram((1, 1, 64, 8))
    t = program.window(program.x, "conv2d", (1, 3), (1, 1), (0, 1, 0, 1), 16)
    t = program.window(t, "depthwise_conv2d", (1, 3), (1, 1), (0, 1, 0, 1))
    program.window(t, "conv2d", (1, 1), (1, 1), (0, 0, 0, 0), 8)
    return program


def test_row_stripes_of_a_one_row_output_are_its_columns():
    """striping=h has no rows to cut in a one-row output: it cuts its columns, as hw does,
    and with rolling-axes=h those stripes recompute their intermediates instead of rolling."""
    rows = plan_program(_one_row_chain(), COST, PlanOptions(objective="min-sram", striping="h"))
    both = plan_program(_one_row_chain(), COST, PlanOptions(objective="min-sram", striping="hw"))
    unstriped = plan_program(_one_row_chain(), COST, PlanOptions(objective="min-sram", striping="none"))
    assert rows.peak == both.peak < unstriped.peak
    assert _rolling_outer_axes(rows) == {2}
    # The row-striping bound stripes such a sink one column at a time: these plans reach it.
    # x 64 x 8 = 512 and the output 512, 3 columns of the conv's 16 channels (48, aligned to
    # 48) and 1 of the depthwise's (16): 512 + 512 + 48 + 16 = 1088.
    assert rows.lower_bound == rows.peak == 1088
    recomputing = plan_program(
        _one_row_chain(), COST, PlanOptions(objective="min-sram", striping="h", rolling_axes="h")
    )
    assert _rolling_outer_axes(recomputing) == set()
    assert {cascade.config.outer_axis for cascade in recomputing.cascades if cascade.sink > cascade.first} == {2}


def test_rolling_axes_h_keeps_every_rolling_buffer_on_rows():
    free = plan_program(_wide_chain(), COST, PlanOptions(objective="min-sram"))
    assert 2 in _rolling_outer_axes(free)
    rows = plan_program(_wide_chain(), COST, PlanOptions(objective="min-sram", rolling_axes="h"))
    assert _rolling_outer_axes(rows) <= {1}
    # Restricting the search can only cost memory.
    assert rows.peak >= free.peak
    with pytest.raises(PlanningError, match="rolling-axes"):
        plan_program(_wide_chain(), COST, PlanOptions(rolling_axes="w"))


class _StandIn:
    """A plan left unrealized: its compute (a lower bound of its cycles) and what realizing it
    gives, counted."""

    def __init__(self, compute: int, entries: list[tuple[int, int]]) -> None:
        self.compute = compute
        self.entries = [SimpleNamespace(cycles=cycles, peak=peak) for cycles, peak in entries]
        self.realized = 0

    def realize(self, cost: object) -> list[SimpleNamespace]:
        self.realized += 1
        return self.entries


def test_too_slow_plans_are_realized_only_until_the_fastest_is_known():
    # By compute: 100 realizes to 130 cycles and 120 to 125 (with a variant of 140), so the
    # one of compute 126 cannot beat 125 and, with 150, is not realized; 125 at compute 125
    # ties and must be realized, for its peak may be smaller.
    plans = [
        _StandIn(150, [(150, 1)]),
        _StandIn(120, [(125, 9), (140, 2)]),
        _StandIn(100, [(130, 5)]),
        _StandIn(126, [(126, 1)]),
        _StandIn(125, [(125, 3)]),
    ]
    realized = _fastest_realized(plans, None)  # type: ignore[arg-type]
    assert [plan.realized for plan in plans] == [0, 1, 1, 0, 1]
    assert min((entry.cycles, entry.peak) for entry in realized) == (125, 3)
    # A plan realized before bounds them too: none can take fewer than 90 cycles here.
    assert _fastest_realized(plans, None, fewest=90) == []  # type: ignore[arg-type]


def pooled_head() -> ToyProgram:
    # x 1x8x8x8 -> conv 1x1 (64 ch) -> global mean (1x64). x is 512 bytes, the convolution's
    # output 8*8*64 = 4096, the mean's 64.
    program = ToyProgram((1, 8, 8, 8))
    program.mean(program.conv(program.x, 1, channels=64))
    return program


@pytest.mark.parametrize("striping", ["c", "hc", "hwc"])
def test_channel_stripes_cut_a_convolution_feeding_a_global_mean(striping):
    # Rows cannot cut the mean (it reads every row), so without channel stripes the peak is the
    # convolution alone, x + its output = 4608. In channel stripes of 16 (the smallest tried,
    # the NPU's granule) the cascade holds x, an 8x8x16 slice (1024) and the mean's output:
    # 512 + 1024 + 64 = 1600; its weights stream, each slice once.
    assert plan_program(pooled_head(), COST, PlanOptions(objective="min-sram", striping="hw")).peak == 4608
    result = plan_program(pooled_head(), COST, PlanOptions(objective="min-sram", striping=striping))
    assert result.peak == 1600
    (cascade,) = result.cascades
    assert (cascade.first, cascade.sink, cascade.config.order, cascade.config.sizes) == (0, 1, (CHANNELS,), (16,))
    assert not cascade.weights_in_sram
    with pytest.raises(PlanningError, match=r"nn.conv2d 't0' needs at least 1600 bytes"):
        plan_program(pooled_head(), COST, PlanOptions(sram_budget=1599, striping=striping))
