"""Stripe algebra of the planner: worked examples, and random cascades against a brute force.

The brute force executes a cascade cell by cell: every stripe, every operator writes the cells
of its computed box into its buffer (a rolling buffer keeps row r at r mod depth, a recompute
buffer holds only this stripe's cells, the sink's output is a full tensor), and every read an
operator makes (its access relation applied to its computed box, clipped) must find the cell it
needs in the producer's buffer. That proves there are no gaps; boxes are also checked to lie in
bounds, and the sink's stripes to cover its output exactly once. The predicted rolling depth
must be the smallest depth for which the brute force succeeds.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cascade.dialects.access import Region
from cascade.passes.planner.program import CHANNELS, ProgramGraph
from cascade.passes.planner.stripes import CascadeGeometry, StripeConfig, simulate_axis
from cascade.passes.planner.testing import ToyProgram

# --------------------------------------------------------------------------- #
# The brute force
# --------------------------------------------------------------------------- #


class Gap(Exception):
    """A read found a cell missing (or stale) in its producer's buffer."""

    def __init__(self, producer: int, message: str):
        super().__init__(message)
        self.producer = producer


def _cells(region: Region) -> list[tuple[int, int]]:
    return list(
        itertools.product(
            range(region.offset[1], region.offset[1] + region.shape[1]),
            range(region.offset[2], region.offset[2] + region.shape[2]),
        )
    )


def brute_force(geometry: CascadeGeometry, depths: dict[int, int] | None = None) -> None:
    """Execute the cascade cell by cell; raise Gap or AssertionError on any violation."""
    graph = geometry.graph
    outer = geometry.config.outer_axis
    depth = {op: geometry.buffer_shape(op)[outer] for op in geometry.ops if geometry.is_rolling(op)}
    depth.update(depths or {})
    rolling: dict[int, dict[tuple[int, int], tuple[int, int]]] = {op: {} for op in depth}
    current: dict[int, set[tuple[int, int]]] = {}
    sink_writes: dict[tuple[int, int], int] = {}
    for stripe in geometry.stripe_indices():
        for op in geometry.ops:
            if op in geometry.recompute:
                current[op] = set()
            box = geometry.computed_box(op, stripe)
            if box is None:
                continue
            shape = graph.output_shape(op)
            assert Region.full(shape).contains(box), f"op {op} stripe {stripe}: {box} out of bounds"
            if op in geometry.recompute:
                limit = geometry.buffer_shape(op)
                assert all(b <= lim for b, lim in zip(box.shape, limit, strict=True)), "box exceeds buffer"
            for operand in graph.operands[op]:
                producer = operand.producer
                if producer < geometry.first:
                    continue  # a full tensor entering the cascade
                read = operand.relation.input_region(box, operand.tensor.shape)
                for cell in _cells(read):
                    if producer in rolling:
                        slot = (
                            (cell[0] % depth[producer], cell[1]) if outer == 1 else (cell[0], cell[1] % depth[producer])
                        )
                        if rolling[producer].get(slot) != cell:
                            raise Gap(producer, f"op {op} stripe {stripe} reads {cell} of op {producer}: missing")
                    elif cell not in current[producer]:
                        raise Gap(producer, f"op {op} stripe {stripe} reads {cell} of op {producer}: not computed")
            for cell in _cells(box):
                if op == geometry.sink:
                    sink_writes[cell] = sink_writes.get(cell, 0) + 1
                elif op in rolling:
                    slot = (cell[0] % depth[op], cell[1]) if outer == 1 else (cell[0], cell[1] % depth[op])
                    rolling[op][slot] = cell
                else:
                    current[op].add(cell)
    shape = graph.output_shape(geometry.sink)
    assert set(sink_writes) == set(itertools.product(range(shape[1]), range(shape[2]))), "sink not covered"
    assert set(sink_writes.values()) == {1}, "a sink cell is computed twice"


def minimal_depth(geometry: CascadeGeometry, op: int) -> int:
    """The smallest rolling depth of `op` for which the brute force succeeds."""
    for depth in range(1, geometry.graph.output_shape(op)[geometry.config.outer_axis] + 1):
        try:
            brute_force(geometry, {op: depth})
        except Gap as gap:
            if gap.producer != op:
                raise
            continue
        return depth
    raise AssertionError(f"no depth works for op {op}")


# --------------------------------------------------------------------------- #
# Worked examples (numbers derived by hand in the comments)
# --------------------------------------------------------------------------- #


def _chain_3x3(height: int = 8) -> ToyProgram:
    program = ToyProgram((1, height, 6, 4))
    a = program.conv(program.x, 1, channels=4)  # op 0: 1x1, 8x6x4
    program.conv(a, 3, pad=1, channels=4)  # op 1: 3x3 stride 1 pad 1, 8x6x4
    return program


def test_rolling_window_of_a_3x3_consumer():
    # Sink op 1 in stripes of 2 rows. Stripe 0 reads rows -1..2 of op 0, clipped 0..2: op 0
    # computes rows 0..2. Stripe 1 reads rows 1..4: op 0 computes 3..4 and holds 1..4.
    # Depth = max(2 - 0 + 1, 4 - 1 + 1) = 4 = (h - 1) * s + k = (2 - 1) * 1 + 3.
    graph = ProgramGraph.build(_chain_3x3())
    tracks = simulate_axis(graph, 1, 0, 1, 2, frozenset())
    assert tracks[0].required[:2] == ((0, 2), (1, 4))
    assert tracks[0].computed[:2] == ((0, 2), (3, 4))
    assert tracks[0].depth == 4
    # The last stripe (rows 6..7) reads rows 5..8, clipped 5..7: op 0 computes only row 7.
    assert tracks[0].computed[-1] == (7, 7)


def test_recompute_holds_the_halo():
    # Recompute: op 0 computes its whole required box each stripe: 4 rows in the interior
    # (2 + 3 - 1), 3 at the clipped top; the buffer holds the largest, 4 rows.
    graph = ProgramGraph.build(_chain_3x3())
    geometry = CascadeGeometry.build(graph, 0, 1, StripeConfig((1,), (2,)), frozenset({0}))
    assert geometry.tracks[1][0].computed[:2] == ((0, 2), (1, 4))
    assert geometry.buffer_shape(0) == (1, 4, 6, 4)


def test_stride_two_window():
    # A 3x3 stride-2 pad-1 sink on an 8-row op 0: output rows 0..3. Stripes of 1 row: row i
    # reads 2i-1..2i+1. Rows 0..1 (clipped), then 1..3, 3..5, 5..7: the rolling op computes
    # 0..1, 2..3, 4..5, 6..7 and holds 3 rows = (1 - 1) * 2 + 3.
    program = ToyProgram((1, 8, 8, 2))
    a = program.conv(program.x, 1, channels=2)
    program.conv(a, 3, s=2, pad=1, channels=2)
    graph = ProgramGraph.build(program)
    track = simulate_axis(graph, 1, 0, 1, 1, frozenset())[0]
    assert track.computed == ((0, 1), (2, 3), (4, 5), (6, 7))
    assert track.depth == 3


def test_residual_branch_inside_a_cascade():
    # x -> op0 (1x1) -> op1 (3x3 pad 1) -> op2 = op0 + op1. op0 feeds both op1 and the add:
    # the add reads the same rows as it computes, op1 needs one more row each side, so op0's
    # window is the 3x3 halo: depth 3 for 1-row stripes.
    program = ToyProgram((1, 6, 5, 2))
    a = program.conv(program.x, 1, channels=2)
    b = program.conv(a, 3, pad=1, channels=2)
    program.add(a, b)
    graph = ProgramGraph.build(program)
    assert graph.range_start_limit(2, 24) == 0
    geometry = CascadeGeometry.build(graph, 0, 2, StripeConfig((1,), (1,)), frozenset())
    brute_force(geometry)
    assert geometry.buffer_shape(0)[1] == 3
    assert geometry.buffer_shape(1)[1] == 1


def test_whole_tensor_operators_stand_alone():
    program = ToyProgram((1, 4, 4, 2))
    a = program.conv(program.x, 1, channels=2)
    program.whole(a)
    graph = ProgramGraph.build(program)
    assert graph.stripable == (True, False)
    assert graph.range_start_limit(1, 24) == 1


def test_range_stops_at_a_tensor_used_after_the_sink():
    program = ToyProgram((1, 4, 4, 2))
    a = program.conv(program.x, 1, channels=2)  # op 0, also read by op 2
    b = program.conv(a, 1, channels=2)  # op 1
    program.add(a, b)  # op 2
    graph = ProgramGraph.build(program)
    assert graph.range_start_limit(1, 24) == 1  # [0, 1] would leave op 0's output needed later
    assert graph.range_start_limit(2, 24) == 0


def test_two_dimensional_recompute_box():
    # 2-D stripes 2 x 2 of a 3x3 pad-1 sink; op 0 in recompute mode needs a 4 x 4 box in the
    # interior (2 + 2 halo on each axis); rolling it would keep 4 full-width rows instead.
    graph = ProgramGraph.build(_chain_3x3(height=8))
    recompute = CascadeGeometry.build(graph, 0, 1, StripeConfig((1, 2), (2, 2)), frozenset({0}))
    assert recompute.buffer_shape(0) == (1, 4, 4, 4)
    rolling = CascadeGeometry.build(graph, 0, 1, StripeConfig((1, 2), (2, 2)), frozenset())
    assert rolling.buffer_shape(0) == (1, 4, 6, 4)
    brute_force(recompute)
    brute_force(rolling)


# --------------------------------------------------------------------------- #
# Random chains and diamonds against the brute force
# --------------------------------------------------------------------------- #


@st.composite
def cascades(draw: st.DrawFn) -> tuple[ToyProgram, StripeConfig, frozenset[int]]:
    height = draw(st.integers(4, 12))
    width = draw(st.integers(4, 12))
    program = ToyProgram((1, height, width, 2))
    current = program.x
    tensors = [current]
    for _ in range(draw(st.integers(2, 5))):
        kind = draw(st.sampled_from(["conv", "dw", "pool", "add", "upscale"]))
        if kind == "add":
            same = [t for t in tensors[:-1] if t.shape == current.shape]
            if not same:
                continue
            current = program.add(current, draw(st.sampled_from(same)))
        elif kind == "upscale":
            if current.shape[1] > 8:
                continue
            current = program.upscale(current, 2)
        else:
            kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
            stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
            dilation = (draw(st.integers(1, 2)), 1)
            padding = tuple(draw(st.integers(0, 1)) for _ in range(4))
            span_h = (kernel[0] - 1) * dilation[0] + 1
            if (
                current.shape[1] + padding[0] + padding[2] < span_h
                or current.shape[2] + padding[1] + padding[3] < kernel[1]
            ):
                continue
            name = {"conv": "conv2d", "dw": "depthwise_conv2d", "pool": "pool2d"}[kind]
            current = program.window(current, name, kernel, stride, padding, 2, dilation)  # type: ignore[arg-type]
        tensors.append(current)
    if len(program.ops) < 2:
        current = program.conv(current, 3, pad=1, channels=2)
        current = program.conv(current, 1, channels=2)
    sink = program.ops[-1].output.shape
    order = draw(st.sampled_from([(1,), (2,), (1, 2), (2, 1)]))
    sizes = tuple(draw(st.integers(1, sink[axis])) for axis in order)
    recompute = frozenset(op for op in range(len(program.ops) - 1) if draw(st.booleans()))
    return program, StripeConfig(order, sizes), recompute


def _longest_cascade(program: ToyProgram) -> tuple[ProgramGraph, int, int]:
    """The program's graph, its last operator, and the first operator of the longest cascade
    ending there."""
    graph = ProgramGraph.build(program)
    sink = graph.size - 1
    return graph, graph.range_start_limit(sink, 24), sink


@settings(max_examples=150, deadline=None, derandomize=True)
@given(cascades())
def test_random_cascades_read_only_computed_cells(case):
    program, config, recompute = case
    graph, first, sink = _longest_cascade(program)
    brute_force(CascadeGeometry.build(graph, first, sink, config, recompute))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(cascades())
def test_predicted_depth_is_the_smallest_that_works(case):
    program, config, recompute = case
    graph, first, sink = _longest_cascade(program)
    geometry = CascadeGeometry.build(graph, first, sink, config, recompute)
    # Boxes are intervals per axis: an operator whose reads fall entirely in padding along one
    # axis computes nothing, yet keeps its (unused) window along the other (module docstring).
    assume(all(any(iv is not None for iv in geometry.tracks[a][op].computed) for a in (1, 2) for op in geometry.ops))
    for op in geometry.ops:
        if geometry.is_rolling(op):
            assert minimal_depth(geometry, op) == geometry.buffer_shape(op)[config.outer_axis]


@pytest.mark.parametrize("order", [(1,), (1, 2), (2, 1)])
def test_held_box_contains_the_required_box(order):
    program = ToyProgram((1, 9, 7, 2))
    a = program.conv(program.x, 3, pad=1, channels=2)
    b = program.dw(a, 3, s=2, pad=1)
    program.conv(b, 1, channels=2)
    graph = ProgramGraph.build(program)
    config = StripeConfig(order, tuple(2 for _ in order))
    geometry = CascadeGeometry.build(graph, 0, 2, config, frozenset())
    for stripe in geometry.stripe_indices():
        for op in geometry.ops:
            required = geometry.required_box(op, stripe)
            held = geometry.held_box(op, stripe)
            if required is not None:
                assert held is not None
                assert held.contains(required)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(cascades())
def test_tracks_memoised_on_the_graph_are_those_computed_afresh(case):
    # One graph answers every sub-cascade and buffer-mode set from its memo (`simulate_axis`);
    # each answer must be what a graph that never saw the others computes.
    program, config, recompute = case
    shared, start, sink = _longest_cascade(program)
    variants = [recompute, frozenset(), frozenset(range(sink)), recompute | {sink, sink + 5}]
    for first in range(start, sink + 1):
        for modes in variants:
            fresh = ProgramGraph.build(program)
            expected = CascadeGeometry.build(fresh, first, sink, config, modes).tracks
            assert CascadeGeometry.build(shared, first, sink, config, modes).tracks == expected
            assert simulate_axis(shared, sink, first, 1, 1, modes) == simulate_axis(fresh, sink, first, 1, 1, modes)


# --------------------------------------------------------------------------- #
# Channel stripes: random channel-wise chains against a brute force over every axis
# --------------------------------------------------------------------------- #


def _all_cells(region: Region) -> set[tuple[int, ...]]:
    return set(itertools.product(*(range(lo, lo + size) for lo, size in zip(region.offset, region.shape, strict=True))))


def brute_force_channels(geometry: CascadeGeometry) -> None:
    """Execute a cascade striped on channels cell by cell, on every axis: each intermediate is
    recomputed, so every read at a stripe must find its cell computed at that very stripe; boxes
    lie in bounds and fit their buffers; the sink's cells are computed exactly once."""
    graph = geometry.graph
    sink_writes: dict[tuple[int, ...], int] = {}
    for stripe in geometry.stripe_indices():
        current: dict[int, set[tuple[int, ...]]] = {}
        for op in geometry.ops:
            box = geometry.computed_box(op, stripe)
            if box is None:
                continue
            assert Region.full(graph.output_shape(op)).contains(box), f"op {op} stripe {stripe}: {box} out of bounds"
            if op != geometry.sink:
                limit = geometry.buffer_shape(op)
                assert all(b <= lim for b, lim in zip(box.shape, limit, strict=True)), "box exceeds buffer"
            for operand in graph.operands[op]:
                if operand.producer < geometry.first:
                    continue
                read = operand.relation.input_region(box, operand.tensor.shape)
                missing = _all_cells(read) - current.get(operand.producer, set())
                if missing:
                    raise Gap(operand.producer, f"op {op} stripe {stripe} reads {min(missing)}: not computed")
            cells = _all_cells(box)
            if op == geometry.sink:
                for cell in cells:
                    sink_writes[cell] = sink_writes.get(cell, 0) + 1
            else:
                current[op] = cells
    assert set(sink_writes) == _all_cells(Region.full(graph.output_shape(geometry.sink))), "sink not covered"
    assert set(sink_writes.values()) == {1}, "a sink cell is computed twice"


@st.composite
def channel_cascades(draw: st.DrawFn) -> tuple[ToyProgram, int]:
    """A chain a channel cascade can run: perhaps a convolution first, then channel-wise
    operators (depthwise, pool, add of a tensor of the chain, upscale), perhaps a global mean
    last; and a stripe depth."""
    program = ToyProgram((1, draw(st.integers(2, 6)), draw(st.integers(2, 6)), draw(st.integers(1, 6))))
    current = program.x
    if draw(st.booleans()):
        current = program.conv(current, draw(st.integers(1, 3)), pad=1, channels=draw(st.integers(1, 9)))
    chain = [current]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["dw", "pool", "add", "upscale"]))
        if kind == "add" and program.ops:
            current = program.add(current, draw(st.sampled_from(chain)))
        elif kind == "upscale" and current.shape[1] <= 4:
            current = program.upscale(current, 2)
        else:
            kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
            stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
            name = "depthwise_conv2d" if kind == "dw" else "pool2d"
            current = program.window(current, name, kernel, stride, (1, 1, 1, 1))
        chain.append(current)
    if draw(st.booleans()):
        current = program.mean(current)
    assume(len(program.ops) >= 2)
    return program, draw(st.integers(1, current.shape[-1]))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(channel_cascades())
def test_random_channel_cascades_read_only_computed_cells(case):
    program, depth = case
    graph = ProgramGraph.build(program)
    sink = graph.size - 1
    # Every operator joins: a convolution only opens the chain, all others read channel-wise.
    assert graph.channel_range_start_limit(sink, 24) == 0
    for first in range(sink):
        geometry = CascadeGeometry.build(graph, first, sink, StripeConfig((CHANNELS,), (depth,)), frozenset())
        assert geometry.recompute == frozenset(range(first, sink))
        brute_force_channels(geometry)
        for op in range(first, sink):
            # Whole rows and columns, the stripe's channels: no larger than what a stripe needs.
            shape = graph.output_shape(op)
            needed = [geometry.required_box(op, s) for s in geometry.stripe_indices()]
            assert geometry.buffer_shape(op) == (*shape[:-1], max(box.shape[-1] for box in needed if box is not None))


def test_a_convolution_opens_a_channel_cascade_but_cannot_continue_one():
    program = ToyProgram((1, 6, 6, 8))
    a = program.conv(program.x, 1, channels=16)  # op 0
    b = program.dw(a, 3, pad=1)  # op 1
    c = program.conv(b, 1, channels=32)  # op 2: each output channel reads all of b's
    d = program.dw(c, 3, pad=1)  # op 3
    program.mean(d)  # op 4
    graph = ProgramGraph.build(program)
    assert graph.channel_range_start_limit(4, 24) == 2
    assert graph.channel_range_start_limit(1, 24) == 0
    assert graph.channel_range_start_limit(4, 2) == 3  # at most two operators
    # The mean has no rows or columns to cut: it never joins a cascade of row stripes.
    assert graph.range_start_limit(4, 24) == 4
    assert not graph.stripable[4]
    assert graph.channel_stripable[4]
    # Channel slices of 3 over the last cascade: stripes cover channels 0-2, ..., 30-31.
    geometry = CascadeGeometry.build(graph, 2, 4, StripeConfig((CHANNELS,), (3,)), frozenset())
    assert geometry.num_stripes() == (11,)
    assert geometry.buffer_shape(2) == (1, 6, 6, 3)
    assert geometry.computed_box(4, (10,)) == Region((0, 30), (1, 2))
    assert geometry.computed_box(3, (10,)) == Region((0, 0, 0, 30), (1, 6, 6, 2))
    brute_force_channels(geometry)
