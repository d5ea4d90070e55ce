"""The cascade dialect: constructors, accessors, affine-map helpers and verifiers, from Python."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from xdsl.context import Context
from xdsl.dialects.arith import AddiOp, Arith, ConstantOp
from xdsl.dialects.builtin import (
    AffineMapAttr,
    Builtin,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
    i8,
    i16,
    i32,
)
from xdsl.dialects.func import Func, FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from cascade.dialects.cascade import (
    SRAM_ALIGNMENT,
    BufferMode,
    BufferModeAttr,
    Cascade,
    ForStripesOp,
    GroupOp,
    MemoryRegion,
    MemoryRegionAttr,
    PlacementAttr,
    RollingBufferOp,
    StripeAttr,
    WeightsMode,
    WeightsModeAttr,
    YieldOp,
    count_stripes,
    element_bytes,
    get_placement,
    get_stripe,
    get_value_stripe,
    rolling_index_map,
    set_placement,
    set_stripe,
    tiling_offset_map,
)

T16 = TensorType(i8, [1, 16, 16, 8])


def _context() -> Context:
    ctx = Context()
    for dialect in (Builtin, Func, Arith, Cascade):
        ctx.load_dialect(dialect)
    return ctx


def _parse_attr(text: str) -> Attribute:
    return Parser(_context(), text).parse_attribute()


def _print(op: Operation, generic: bool = False) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(op)
    return stream.getvalue()


def _chain_group() -> tuple[GroupOp, ModuleOp]:
    """x -> addi (rolling, 6 rows) -> rolling_buffer(k=6) -> addi (output): 4 row stripes."""
    func_block = Block(arg_types=[T16])
    group = GroupOp.build_group(
        func_block.args,
        [T16],
        stripe_shape=[1, 4, 16, 8],
        stripe_order=[1],
        weights=WeightsMode.STREAM,
        peak_sram_bytes=4096,
        cycles=1000,
    )
    (a,) = group.body_block.args
    first = AddiOp(a, a)
    set_stripe(
        first,
        StripeAttr(
            [1, 6, 16, 8],
            AffineMap.from_callable(lambda i: (0, i * 4 - 1, 0, 0)),
            BufferMode.ROLLING,
        ),
    )
    buffer = RollingBufferOp(first.result, depth=6, axis=1, placement=PlacementAttr(MemoryRegion.SRAM, 0, 768))
    second = AddiOp(buffer.result, buffer.result)
    set_stripe(second, group.output_stripe())
    set_placement(second, PlacementAttr(MemoryRegion.SRAM, 1024, 2048))
    group.body_block.add_ops([first, buffer, second, YieldOp(second.result)])
    func_block.add_ops([group, ReturnOp()])
    module = ModuleOp([FuncOp("f", ([T16], []), Region(func_block))])
    return group, module


# --------------------------------------------------------------------------- #
# Affine-map helpers
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("depth", [2, 3, 5])
def test_rolling_index_map_is_h_mod_k(depth: int) -> None:
    index_map = rolling_index_map(4, 1, depth)
    assert index_map.num_dims == 4
    for h in range(0, 23):
        assert index_map.eval([0, h, 7, 3], []) == (0, h % depth, 7, 3)


def test_rolling_index_map_depth_one_is_mlir_canonical_zero() -> None:
    index_map = rolling_index_map(4, 1, 1)
    assert str(index_map) == "(d0, d1, d2, d3) -> (d0, 0, d2, d3)"
    assert index_map.eval([0, 9, 2, 1], []) == (0, 0, 2, 1)


def test_rolling_index_map_on_width() -> None:
    index_map = rolling_index_map(4, 2, 4)
    assert str(index_map) == "(d0, d1, d2, d3) -> (d0, d1, (d2 mod 4), d3)"
    assert index_map.eval([0, 9, 10, 1], []) == (0, 9, 2, 1)


def test_tiling_offset_map() -> None:
    offset_map = tiling_offset_map([1, 4, 8, 8], [1, 2])
    assert offset_map.num_dims == 2
    assert offset_map.eval([2, 1], []) == (0, 8, 8, 0)
    assert tiling_offset_map([2, 3], []).eval([], []) == (0, 0)


def test_count_stripes_rounds_up() -> None:
    assert count_stripes([1, 16, 16, 8], [1, 5, 16, 8], [1]) == (4,)
    assert count_stripes([1, 10, 12, 8], [1, 4, 5, 8], [1, 2]) == (3, 3)
    assert count_stripes([1, 10, 12, 8], [1, 10, 12, 8], []) == ()


def test_element_bytes() -> None:
    assert element_bytes(T16) == 1
    assert element_bytes(TensorType(i16, [2])) == 2
    assert element_bytes(TensorType(i32, [2])) == 4


# --------------------------------------------------------------------------- #
# StripeAttr
# --------------------------------------------------------------------------- #


def test_stripe_accessors_and_regions() -> None:
    stripe = StripeAttr([1, 6, 16, 8], AffineMap.from_callable(lambda i: (0, i * 4 - 1, 0, 0)), BufferMode.ROLLING)
    assert stripe.get_shape() == (1, 6, 16, 8)
    assert stripe.rank == 4
    assert stripe.num_stripe_dims == 1
    assert stripe.get_mode() == BufferMode.ROLLING
    assert stripe.offset_of([2]) == (0, 7, 0, 0)
    # The first stripe starts in the padding: rows -1..4 clip to 0..4.
    assert stripe.region_of([0], [1, 16, 16, 8]) == ((0, 0, 0, 0), (1, 5, 16, 8))
    assert stripe.region_of([1], [1, 16, 16, 8]) == ((0, 3, 0, 0), (1, 6, 16, 8))
    # The last stripe runs past the end: rows 11..16 clip to 11..15.
    assert stripe.region_of([3], [1, 16, 16, 8]) == ((0, 11, 0, 0), (1, 5, 16, 8))
    # Entirely outside: empty.
    assert stripe.region_of([5], [1, 16, 16, 8])[1][1] == 0
    assert stripe.with_mode(None).get_mode() is None
    assert stripe.with_mode(BufferMode.RECOMPUTE).get_mode() == BufferMode.RECOMPUTE


def test_stripe_two_dimensional_region() -> None:
    stripe = StripeAttr([1, 4, 5, 8], AffineMap.from_callable(lambda i, j: (0, i * 4, j * 5, 0)))
    assert stripe.num_stripe_dims == 2
    assert stripe.region_of([2, 2], [1, 10, 12, 8]) == ((0, 8, 10, 0), (1, 2, 2, 8))


def test_stripe_parse_print_round_trip() -> None:
    text = (
        "#cascade.stripe<shape = [1, 6, 16, 8], "
        "offset = affine_map<(d0) -> (0, ((d0 * 4) + -1), 0, 0)>, mode = rolling>"
    )
    stripe = _parse_attr(text)
    assert isinstance(stripe, StripeAttr)
    assert str(stripe) == text
    assert stripe.offset_of([1]) == (0, 3, 0, 0)
    no_mode = _parse_attr("#cascade.stripe<shape = [4], offset = affine_map<(d0) -> (d0 * 4)>>")
    assert isinstance(no_mode, StripeAttr)
    assert no_mode.get_mode() is None
    assert str(no_mode) == "#cascade.stripe<shape = [4], offset = affine_map<(d0) -> ((d0 * 4))>>"


@pytest.mark.parametrize(
    ("shape", "offset_map", "message"),
    [
        ([1, 0], AffineMap.from_callable(lambda i: (0, i)), "stripe shape entries must be >= 1, got [1, 0]"),
        (
            [1, 4],
            AffineMap(1, 1, (AffineExpr.constant(0), AffineExpr.dimension(0) + AffineExpr.symbol(0))),
            "stripe offset map must not have symbols, got 1",
        ),
        (
            [1, 4],
            AffineMap.from_callable(lambda i: (0, i, 0)),
            "stripe offset map has 3 results but the stripe shape has rank 2",
        ),
    ],
)
def test_stripe_verifier(shape: list[int], offset_map: AffineMap, message: str) -> None:
    with pytest.raises(VerifyException, match=re.escape(message)):
        StripeAttr(shape, offset_map)


# --------------------------------------------------------------------------- #
# PlacementAttr and enums
# --------------------------------------------------------------------------- #


def test_placement_accessors() -> None:
    placement = PlacementAttr(MemoryRegion.SRAM, 32, 100)
    assert placement.get_region() == MemoryRegion.SRAM
    assert placement.get_offset() == 32
    assert placement.get_size() == 100
    assert placement.get_end() == 132
    assert str(placement) == "#cascade.placement<sram, 32, 100>"
    assert placement.overlaps(PlacementAttr(MemoryRegion.SRAM, 128, 16))
    assert not placement.overlaps(PlacementAttr(MemoryRegion.SRAM, 144, 16))
    assert not placement.overlaps(PlacementAttr(MemoryRegion.FLASH, 32, 100))
    # Alignment is only required in SRAM.
    assert PlacementAttr(MemoryRegion.FLASH, 3, 5).get_offset() == 3
    assert _parse_attr("#cascade.placement<dram, 7, 0>") == PlacementAttr(MemoryRegion.DRAM, 7, 0)


@pytest.mark.parametrize(
    ("region", "offset", "size", "message"),
    [
        (MemoryRegion.FLASH, -16, 32, "placement offset must be non-negative, got -16"),
        (MemoryRegion.DRAM, 0, -1, "placement size must be non-negative, got -1"),
        (MemoryRegion.SRAM, 8, 16, f"SRAM placement offset 8 is not a multiple of {SRAM_ALIGNMENT}"),
    ],
)
def test_placement_verifier(region: MemoryRegion, offset: int, size: int, message: str) -> None:
    with pytest.raises(VerifyException, match=message):
        PlacementAttr(region, offset, size)


def test_enum_attributes_round_trip() -> None:
    for attr in (
        BufferModeAttr(BufferMode.RECOMPUTE),
        MemoryRegionAttr(MemoryRegion.FLASH),
        WeightsModeAttr(WeightsMode.SRAM),
    ):
        assert _parse_attr(str(attr)) == attr
    assert str(BufferModeAttr(BufferMode.ROLLING)) == "#cascade.buffer_mode<rolling>"


# --------------------------------------------------------------------------- #
# cascade.rolling_buffer
# --------------------------------------------------------------------------- #


def test_rolling_buffer_constructor_and_helpers() -> None:
    block = Block(arg_types=[T16])
    buffer = RollingBufferOp(block.args[0], depth=3, axis=1)
    assert buffer.get_depth() == 3
    assert buffer.logical_type == T16
    assert buffer.result.type == T16
    assert buffer.rolling_axis() == 1
    assert buffer.get_index_map() == rolling_index_map(4, 1, 3)
    assert buffer.storage_shape() == (1, 3, 16, 8)
    assert buffer.storage_bytes() == 384
    for h in range(16):
        assert buffer.storage_index([0, h, 5, 2]) == (0, h % 3, 5, 2)
    assert buffer.placement is None
    assert get_placement(buffer) is None
    set_placement(buffer, PlacementAttr(MemoryRegion.SRAM, 64, 384))
    assert buffer.placement == PlacementAttr(MemoryRegion.SRAM, 64, 384)
    buffer.verify()


def test_rolling_buffer_depth_one() -> None:
    block = Block(arg_types=[T16])
    buffer = RollingBufferOp(block.args[0], depth=1, axis=1)
    assert buffer.rolling_axis() == 1
    assert buffer.storage_shape() == (1, 1, 16, 8)
    buffer.verify()


def _buffer_with_map(tensor_type: TensorType, depth: int, index_map: str) -> RollingBufferOp:
    block = Block(arg_types=[tensor_type])
    buffer = RollingBufferOp(block.args[0], depth=3, axis=1)
    buffer.depth = IntegerAttr(depth, 64)
    parsed = _parse_attr(f"affine_map<{index_map}>")
    assert isinstance(parsed, AffineMapAttr)
    buffer.index_map = parsed
    return buffer


@pytest.mark.parametrize(
    ("depth", "index_map", "message"),
    [
        (0, "(d0, d1, d2, d3) -> (d0, d1, d2, d3)", "depth must be >= 1, got 0"),
        (3, "(d0, d1, d2) -> (d0, d1 mod 3, d2)", "index_map must have 4 dims, no symbols and 4 results"),
        (3, "(d0, d1, d2, d3) -> (d0, d1 mod 3, d2 + 1, d3)", "index_map result 2 must be d2 or d2 mod 3"),
        (3, "(d0, d1, d2, d3) -> (d0, d1 mod 4, d2, d3)", "index_map wraps axis 1 modulo 4 but depth is 3"),
        (3, "(d0, d1, d2, d3) -> (d0, d1, d2, d3)", "index_map must wrap exactly one axis modulo 3"),
        (3, "(d0, d1, d2, d3) -> (d0, d1 mod 3, d2 mod 3, d3)", "index_map must wrap exactly one axis, got axes"),
        (17, "(d0, d1, d2, d3) -> (d0, d1 mod 17, d2, d3)", "depth 17 exceeds the extent 16 of rolling axis 1"),
    ],
)
def test_rolling_buffer_verifier(depth: int, index_map: str, message: str) -> None:
    buffer = _buffer_with_map(T16, depth, index_map)
    with pytest.raises(VerifyException, match=re.escape(message)):
        buffer.verify_()


def test_rolling_buffer_placement_too_small() -> None:
    block = Block(arg_types=[T16])
    buffer = RollingBufferOp(block.args[0], depth=3, axis=1, placement=PlacementAttr(MemoryRegion.SRAM, 0, 100))
    with pytest.raises(VerifyException, match="placement size 100 is smaller than the 384 bytes"):
        buffer.verify_()


# --------------------------------------------------------------------------- #
# cascade.group
# --------------------------------------------------------------------------- #


def test_build_group_accessors() -> None:
    group, module = _chain_group()
    module.verify()
    assert group.get_stripe_shape() == (1, 4, 16, 8)
    assert group.get_stripe_order() == (1,)
    assert group.get_num_stripes() == (4,)
    assert group.get_weights_mode() == WeightsMode.STREAM
    assert group.get_peak_sram_bytes() == 4096
    assert group.get_cycles() == 1000
    assert group.output_type == T16
    assert group.rolling_axis() == 1
    assert group.total_stripes() == 4
    assert list(group.stripe_indices()) == [(0,), (1,), (2,), (3,)]
    assert group.output_offset_map().eval([3], []) == (0, 12, 0, 0)
    assert group.input_args == tuple(group.body_block.args)
    assert isinstance(group.yield_op, YieldOp)
    ops = [op.name for op, _ in group.striped_ops()]
    assert ops == ["arith.addi", "arith.addi"]


def test_value_stripes_and_placements() -> None:
    group, _ = _chain_group()
    first, buffer, second, _ = list(group.body_block.ops)
    assert isinstance(buffer, RollingBufferOp)
    first_stripe = get_stripe(first)
    assert first_stripe is not None
    assert first_stripe.get_mode() == BufferMode.ROLLING
    # A rolling buffer's result has the stripe map of what it stores.
    assert get_value_stripe(buffer.result) == first_stripe
    assert get_value_stripe(group.body_block.args[0]) is None
    assert get_value_stripe(second.results[0]) == group.output_stripe()
    assert get_placement(second) == PlacementAttr(MemoryRegion.SRAM, 1024, 2048)
    assert get_placement(buffer) == PlacementAttr(MemoryRegion.SRAM, 0, 768)
    set_placement(second, None)
    set_stripe(first, None)
    assert get_placement(second) is None
    assert get_stripe(first) is None


def test_build_group_partial_stripes_two_axes() -> None:
    tensor_type = TensorType(i8, [1, 10, 12, 8])
    block = Block(arg_types=[tensor_type])
    group = GroupOp.build_group(block.args, [tensor_type], stripe_shape=[1, 4, 5, 8], stripe_order=[1, 2])
    group.body_block.add_op(YieldOp(group.body_block.args[0]))
    assert group.get_num_stripes() == (3, 3)
    assert group.total_stripes() == 9
    assert list(group.stripe_indices())[:4] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert group.get_weights_mode() is None
    assert group.get_peak_sram_bytes() is None
    assert group.get_cycles() is None
    group.verify()


def test_group_custom_and_generic_syntax_round_trip() -> None:
    _, module = _chain_group()
    for generic in (False, True):
        text = _print(module, generic)
        reparsed = Parser(_context(), text).parse_module()
        reparsed.verify()
        assert _print(reparsed, generic) == text
        assert "#builtin.int" not in text
    custom = _print(module)
    assert "stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] weights stream" in custom
    assert "peak_sram_bytes 4096 cycles 1000" in custom
    assert "placement #cascade.placement<sram, 0, 768>" in custom


def test_group_must_end_with_yield() -> None:
    # The IR verifier reports a missing terminator before the group's own verifier runs;
    # the group's check still guards its accessors.
    block = Block(arg_types=[T16])
    group = GroupOp.build_group(block.args, [T16], stripe_shape=[1, 4, 16, 8], stripe_order=[1])
    group.body_block.add_op(ConstantOp(DenseIntOrFPElementsAttr.from_list(T16, [0])))
    with pytest.raises(VerifyException, match=re.escape("body must be terminated by cascade.yield")):
        group.verify_()
    with pytest.raises(ValueError, match=re.escape("not terminated by cascade.yield")):
        _ = group.yield_op


@pytest.mark.parametrize(
    ("stripe_shape", "stripe_order", "num_stripes", "message"),
    [
        ([1, 4, 16], [1], [4], r"stripe_shape has 3 entries but result 0 \(tensor<1x16x16x8xi8>\) has rank 4"),
        ([1, 0, 16, 8], [1], [4], r"stripe_shape\[1\] = 0 must be in \[1, 16\]"),
        ([1, 16, 16, 8], [4], [1], "stripe_order axis 4 is out of range for rank 4"),
        ([1, 4, 16, 8], [1, 1], [4, 4], r"stripe_order has a repeated axis: \[1, 1\]"),
        ([1, 4, 8, 8], [1], [4], "axis 2 is not in stripe_order, so its stripe size must be the full extent 16, got 8"),
        ([1, 4, 16, 8], [1], [4, 1], "num_stripes has 2 entries but stripe_order has 1"),
        ([1, 5, 16, 8], [1], [3], r"num_stripes for axis 1 is 3 but ceil\(16 / 5\) = 4"),
    ],
)
def test_group_tiling_verifier(
    stripe_shape: list[int], stripe_order: list[int], num_stripes: list[int], message: str
) -> None:
    block = Block(arg_types=[T16])
    body = Block(arg_types=[T16])
    body.add_op(YieldOp(body.args[0]))
    group = GroupOp(
        block.args,
        [T16],
        body,
        stripe_shape=stripe_shape,
        stripe_order=stripe_order,
        num_stripes=num_stripes,
    )
    with pytest.raises(VerifyException, match=message):
        group.verify_()


def test_group_rejects_negative_estimates() -> None:
    block = Block(arg_types=[T16])
    group = GroupOp.build_group(block.args, [T16], stripe_shape=[1, 4, 16, 8], stripe_order=[1], cycles=-3)
    group.body_block.add_op(YieldOp(group.body_block.args[0]))
    with pytest.raises(VerifyException, match="cycles must be non-negative, got -3"):
        group.verify_()


# --------------------------------------------------------------------------- #
# cascade.for_stripes
# --------------------------------------------------------------------------- #


def test_build_loop() -> None:
    func_block = Block(arg_types=[T16])
    loop = ForStripesOp.build_loop(func_block.args, [T16], stripe_shape=[1, 4, 8, 8], stripe_order=[1, 2])
    i, j, a = loop.body_block.args
    assert i.type == IndexType()
    assert j.type == IndexType()
    assert loop.stripe_index_args == (i, j)
    assert loop.input_args == (a,)
    assert loop.get_num_stripes() == (4, 2)
    loop.body_block.add_op(YieldOp(a))
    func_block.add_ops([loop, ReturnOp()])
    module = ModuleOp([FuncOp("f", ([T16], []), Region(func_block))])
    module.verify()
    text = _print(module)
    assert "cascade.for_stripes (%2, %3) ins(%4 = %0 : tensor<1x16x16x8xi8>)" in text
    reparsed = Parser(_context(), text).parse_module()
    assert _print(reparsed) == text


def test_loop_index_argument_must_be_index() -> None:
    block = Block(arg_types=[T16])
    body = Block(arg_types=[i32, T16])
    body.add_op(YieldOp(body.args[1]))
    loop = ForStripesOp(block.args, [T16], body, stripe_shape=[1, 4, 16, 8], stripe_order=[1], num_stripes=[4])
    with pytest.raises(VerifyException, match="body argument 0 is a stripe index and must have type index, got i32"):
        loop.verify_()
