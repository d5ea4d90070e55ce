"""Access relations of the nn operators on worked examples, and against brute force.

Each worked example states the expected input region derived by hand in its comment.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.parser import Parser

from cascade.dialects.access import Region
from cascade.dialects.nn import NN, HasAccessRelation, to_affine_maps

Q = "#nn.quant<0.5:0>"


def _context() -> Context:
    ctx = Context()
    for dialect in (Builtin, Func, Arith, NN):
        ctx.load_dialect(dialect)
    return ctx


def parse_op(body: str, args: str) -> HasAccessRelation:
    """Parse one nn op inside a function with `args`, verify it, and return it."""
    text = f"func.func @f({args}) {{\n{body}\n func.return\n}}"
    module = Parser(_context(), text).parse_module()
    module.verify()
    return _first_nn_op(module)


def _first_nn_op(module: ModuleOp) -> HasAccessRelation:
    for op in module.walk():
        if isinstance(op, HasAccessRelation):
            return op
    raise AssertionError("no nn op in module")


def conv(in_hw: int, k: int, s: int, d: int, pads: tuple[int, int, int, int], cin: int = 8, cout: int = 16):
    top, left, bottom, right = pads
    span = (k - 1) * d + 1
    oh = (in_hw + top + bottom - span) // s + 1
    ow = (in_hw + left + right - span) // s + 1
    body = (
        f"%y = nn.conv2d %x, %w, %b {{stride = array<i64: {s}, {s}>, dilation = array<i64: {d}, {d}>, "
        f"padding = array<i64: {top}, {left}, {bottom}, {right}>, activation = #nn<activation none>, "
        f"input_quant = {Q}, weight_quant = {Q}, output_quant = {Q}}} : "
        f"(tensor<1x{in_hw}x{in_hw}x{cin}xi8>, tensor<{cout}x{k}x{k}x{cin}xi8>, tensor<{cout}xi32>) "
        f"-> tensor<1x{oh}x{ow}x{cout}xi8>"
    )
    args = f"%x: tensor<1x{in_hw}x{in_hw}x{cin}xi8>, %w: tensor<{cout}x{k}x{k}x{cin}xi8>, %b: tensor<{cout}xi32>"
    return parse_op(body, args), (oh, ow)


def test_unstrided_3x3_conv_reads_two_more_rows_and_columns_and_all_channels():
    op, _ = conv(16, k=3, s=1, d=1, pads=(0, 0, 0, 0))
    # Output rows 4..7, cols 0..7, channels 0..15 -> input rows 4..9, cols 0..9, all 8 channels.
    ifm, weight, bias = op.input_regions(Region((0, 4, 0, 0), (1, 4, 8, 16)))
    assert ifm == Region((0, 4, 0, 0), (1, 6, 10, 8))
    # All 16 output channels -> the whole 16x3x3x8 weight tensor and all 16 biases.
    assert weight == Region((0, 0, 0, 0), (16, 3, 3, 8))
    assert bias == Region((0,), (16,))


def test_output_channel_stripe_reads_only_its_weights():
    op, _ = conv(16, k=3, s=1, d=1, pads=(1, 1, 1, 1))
    # Channels 4..7 of the output need filters 4..7 and biases 4..7, but every input channel.
    ifm, weight, bias = op.input_regions(Region((0, 0, 0, 4), (1, 16, 16, 4)))
    assert ifm == Region((0, 0, 0, 0), (1, 16, 16, 8))
    assert weight == Region((4, 0, 0, 0), (4, 3, 3, 8))
    assert bias == Region((4,), (4,))


def test_strided_padded_conv_clips_padding_rows():
    op, (oh, _) = conv(8, k=3, s=2, d=1, pads=(1, 1, 1, 1))
    assert oh == 4
    # Output rows 0..3 read rows 2*0-1 .. 2*3-1+2 = -1..7; row -1 is padding, so 0..7 remain.
    relation = op.access_relations()[0]
    out = Region((0, 0, 0, 0), (1, 4, 1, 16))
    assert relation.unclipped_input_region(out) == Region((0, -1, -1, 0), (1, 9, 3, 8))
    assert op.input_regions(out)[0] == Region((0, 0, 0, 0), (1, 8, 2, 8))


def test_dilated_conv_span():
    op, _ = conv(16, k=3, s=1, d=2, pads=(0, 0, 0, 0))
    # Dilated span (3-1)*2+1 = 5: output rows 2..3 read rows 2..3+4 = 2..7 (6 rows).
    ifm = op.input_regions(Region((0, 2, 0, 0), (1, 2, 1, 16)))[0]
    assert ifm == Region((0, 2, 0, 0), (1, 6, 5, 8))


def test_depthwise_multiplier_maps_output_channels_to_fewer_input_channels():
    body = (
        "%y = nn.depthwise_conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, "
        "padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation relu>, "
        f"input_quant = {Q}, weight_quant = {Q}, output_quant = {Q}}} : "
        "(tensor<1x8x8x4xi8>, tensor<1x3x3x8xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi8>"
    )
    op = parse_op(body, "%x: tensor<1x8x8x4xi8>, %w: tensor<1x3x3x8xi8>, %b: tensor<8xi32>")
    # Multiplier 2: output channels 4..7 come from input channels 2..3; rows 0..1 read -1..2 -> 0..2.
    ifm, weight, bias = op.input_regions(Region((0, 0, 0, 4), (1, 2, 8, 4)))
    assert ifm == Region((0, 0, 0, 2), (1, 3, 8, 2))
    assert weight == Region((0, 0, 0, 4), (1, 3, 3, 4))
    assert bias == Region((4,), (4,))


def resize(mode: str, half_pixel: bool):
    body = (
        f"%y = nn.resize %x {{mode = #nn<resize_mode {mode}>, align_corners = false, "
        f"half_pixel_centers = {'true' if half_pixel else 'false'}, input_quant = {Q}, output_quant = {Q}}} : "
        "(tensor<1x4x4x2xi8>) -> tensor<1x8x8x2xi8>"
    )
    return parse_op(body, "%x: tensor<1x4x4x2xi8>")


def test_nearest_upscale_halves_rows():
    op = resize("nearest", half_pixel=False)
    # Output rows 3..6 read floor(3/2)..floor(6/2) = 1..3.
    assert op.input_regions(Region((0, 3, 0, 0), (1, 4, 8, 2)))[0] == Region((0, 1, 0, 0), (1, 3, 4, 2))


def test_bilinear_half_pixel_upscale_reads_neighbouring_rows():
    op = resize("bilinear", half_pixel=True)
    # Source row of output y is (y + 0.5)/2 - 0.5: y=0 -> -0.25 (rows -1, 0), y=3 -> 1.25 (rows 1, 2).
    # So rows 0..3 read -1..2, clipped to 0..2.
    assert op.input_regions(Region((0, 0, 0, 0), (1, 4, 8, 2)))[0] == Region((0, 0, 0, 0), (1, 3, 4, 2))


def test_transpose_conv_gathers_inputs():
    body = (
        "%y = nn.transpose_conv2d %x, %w, %b {stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, "
        "padding = array<i64: 1, 1, 0, 0>, activation = #nn<activation none>, "
        f"input_quant = {Q}, weight_quant = {Q}, output_quant = {Q}}} : "
        "(tensor<1x4x4x2xi8>, tensor<3x3x3x2xi8>, tensor<3xi32>) -> tensor<1x8x8x3xi8>"
    )
    op = parse_op(body, "%x: tensor<1x4x4x2xi8>, %w: tensor<3x3x3x2xi8>, %b: tensor<3xi32>")
    # Input x writes outputs 2x - 1 + k, k in 0..2. Output 0 gets x=0 (k=1); output 3 gets x=1 (k=2)
    # and x=2 (k=0). So output rows 0..3 gather input rows 0..2.
    assert op.input_regions(Region((0, 0, 0, 0), (1, 4, 8, 3)))[0] == Region((0, 0, 0, 0), (1, 3, 4, 2))


def test_broadcast_add_reads_single_row():
    body = (
        "%y = nn.add %x, %c {activation = #nn<activation none>, input_quant = "
        f"{Q}, input2_quant = {Q}, output_quant = {Q}}} : "
        "(tensor<1x8x8x4xi8>, tensor<1x1x1x4xi8>) -> tensor<1x8x8x4xi8>"
    )
    op = parse_op(body, "%x: tensor<1x8x8x4xi8>, %c: tensor<1x1x1x4xi8>")
    first, second = op.input_regions(Region((0, 2, 3, 1), (1, 2, 2, 2)))
    assert first == Region((0, 2, 3, 1), (1, 2, 2, 2))
    # The broadcast operand has one row and column: every stripe reads (0, 0), channels 1..2.
    assert second == Region((0, 0, 0, 1), (1, 1, 1, 2))


def test_concat_splits_channel_stripe_between_inputs():
    body = (
        f"%y = nn.concat %a, %b {{axis = 3 : i64, input_quants = [{Q}, {Q}], output_quant = {Q}}} : "
        "(tensor<1x4x4x8xi8>, tensor<1x4x4x6xi8>) -> tensor<1x4x4x14xi8>"
    )
    op = parse_op(body, "%a: tensor<1x4x4x8xi8>, %b: tensor<1x4x4x6xi8>")
    # Output channels 4..11: channels 4..7 of the first input and 0..3 of the second.
    first, second = op.input_regions(Region((0, 0, 0, 4), (1, 4, 4, 8)))
    assert first == Region((0, 0, 0, 4), (1, 4, 4, 4))
    assert second == Region((0, 0, 0, 0), (1, 4, 4, 4))
    # A stripe entirely inside the first input reads nothing of the second.
    assert op.input_regions(Region((0, 0, 0, 0), (1, 4, 4, 8)))[1].is_empty


def test_mean_and_fully_connected_read_whole_inputs():
    body = (
        f"%m = nn.mean %x {{axes = array<i64: 1, 2>, keep_dims = true, input_quant = {Q}, output_quant = {Q}}} : "
        "(tensor<1x5x5x8xi8>) -> tensor<1x1x1x8xi8>"
    )
    op = parse_op(body, "%x: tensor<1x5x5x8xi8>")
    # Channels 2..3 of the mean read all 5x5 positions of channels 2..3.
    assert op.input_regions(Region((0, 0, 0, 2), (1, 1, 1, 2)))[0] == Region((0, 0, 0, 2), (1, 5, 5, 2))


def test_pad_shifts_and_clips():
    body = (
        "%y = nn.pad %x {padding = array<i64: 0, 0, 1, 1, 2, 2, 0, 0>, "
        f"input_quant = {Q}, output_quant = {Q}}} : (tensor<1x4x4x2xi8>) -> tensor<1x6x8x2xi8>"
    )
    op = parse_op(body, "%x: tensor<1x4x4x2xi8>")
    # Output rows 0..2 are input rows -1..1 (row -1 is padding); cols 0..3 are -2..1.
    assert op.input_regions(Region((0, 0, 0, 0), (1, 3, 4, 2)))[0] == Region((0, 0, 0, 0), (1, 2, 2, 2))


def test_affine_maps_agree_with_relation():
    op = resize("bilinear", half_pixel=True)
    relation = op.access_relations()[0]
    first_map, last_map = to_affine_maps(relation)
    for y in range(8):
        point = (0, y, 7 - y, 1)
        assert first_map.eval(point, []) == relation.map_point(point, relation.first_offset)
        assert last_map.eval(point, []) == relation.map_point(point, relation.last_offset)


# --------------------------------------------------------------------------- #
# Brute force: enumerate every input position each output position touches.
# --------------------------------------------------------------------------- #


def brute_force_rows(out_rows: range, k: int, s: int, d: int, pad: int, size: int) -> tuple[int, int] | None:
    """The rows a window reads: the span of every tap, clipped to the tensor; None if all are padding.

    The region is a box, so with kernel taps sparser than the stride (k=1, s=2) it also holds
    the untouched rows between taps; every touched row must lie inside it.
    """
    touched = {y * s - pad + i * d for y in out_rows for i in range(k)}
    lo, hi = max(min(touched), 0), min(max(touched), size - 1)
    return None if lo > hi else (lo, hi)


def assert_rows(region: Region, axis: int, expected: tuple[int, int] | None) -> None:
    if expected is None:
        assert region.is_empty
        return
    assert (region.offset[axis], region.last[axis]) == expected


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    size=st.integers(4, 20),
    k=st.integers(1, 5),
    s=st.integers(1, 3),
    d=st.integers(1, 3),
    pads=st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)),
    data=st.data(),
)
def test_conv_region_matches_brute_force(size, k, s, d, pads, data):
    span = (k - 1) * d + 1
    if (size + pads[0] + pads[2] - span) < 0 or (size + pads[1] + pads[3] - span) < 0:
        return
    op, (oh, ow) = conv(size, k, s, d, pads, cin=2, cout=2)
    first = data.draw(st.integers(0, oh - 1))
    count = data.draw(st.integers(1, oh - first))
    region = op.input_regions(Region((0, first, 0, 0), (1, count, ow, 2)))[0]
    rows = brute_force_rows(range(first, first + count), k, s, d, pads[0], size)
    assert_rows(region, 1, rows)
    if rows is not None:
        assert_rows(region, 2, brute_force_rows(range(ow), k, s, d, pads[1], size))


@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("kernel", [1, 2, 3, 4])
def test_transpose_conv_matches_brute_force(stride, kernel):
    size = 5
    pad = kernel // 2
    out = (size - 1) * stride + kernel - pad
    body = (
        f"%y = nn.transpose_conv2d %x, %w, %b {{stride = array<i64: {stride}, {stride}>, "
        f"dilation = array<i64: 1, 1>, padding = array<i64: {pad}, {pad}, 0, 0>, activation = #nn<activation none>, "
        f"input_quant = {Q}, weight_quant = {Q}, output_quant = {Q}}} : "
        f"(tensor<1x{size}x{size}x1xi8>, tensor<1x{kernel}x{kernel}x1xi8>, tensor<1xi32>) -> tensor<1x{out}x{out}x1xi8>"
    )
    op = parse_op(body, f"%x: tensor<1x{size}x{size}x1xi8>, %w: tensor<1x{kernel}x{kernel}x1xi8>, %b: tensor<1xi32>")
    for first in range(out):
        for count in range(1, out - first + 1):
            rows = range(first, first + count)
            writers = {x for x in range(size) for i in range(kernel) if x * stride - pad + i in rows}
            region = op.input_regions(Region((0, first, 0, 0), (1, count, 1, 1)))[0]
            if not writers:  # stride > kernel leaves output rows that no input writes
                assert region.is_empty
                continue
            assert (region.offset[1], region.last[1]) == (min(writers), max(writers))


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.lists(st.integers(-3, 3), min_size=2, max_size=2),
            st.integers(-4, 4),
            st.integers(0, 6),
        ),
        min_size=1,
        max_size=3,
    ),
    whole_fractions=st.booleans(),
    offset=st.tuples(st.integers(-5, 5), st.integers(-5, 5)),
    shape=st.tuples(st.integers(1, 6), st.integers(1, 6)),
)
def test_whole_number_relations_map_boxes_as_the_rational_formula_does(rows, whole_fractions, offset, shape):
    # Relations whose coefficients and offsets are whole numbers (ints, or Fractions equal to
    # ints) take an integer fast path; it must give what the floor-of-sum formula gives.
    from fractions import Fraction

    from cascade.dialects.access import AccessRelation

    def number(value: int) -> int | Fraction:
        return Fraction(value * 2, 2) if whole_fractions else value

    relation = AccessRelation(
        tuple(tuple(number(m) for m in row) for row, _, _ in rows),
        tuple(number(first) for _, first, _ in rows),
        tuple(number(first + extra) for _, first, extra in rows),
    )
    output = Region(offset, shape)
    first = relation.map_point(output.offset, relation.first_offset)
    last = relation.map_point(output.last, relation.last_offset)
    expected = Region(first, tuple(max(hi - lo + 1, 0) for lo, hi in zip(first, last, strict=True)))
    assert relation.unclipped_input_region(output) == expected
    assert all(type(v) is int for v in (*relation.unclipped_input_region(output).offset,))
