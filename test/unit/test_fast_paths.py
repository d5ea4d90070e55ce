"""Fast paths of the lowering, the .tflite writer and the importer against the straightforward
computations they replace, on randomised inputs: each would fail if its fast path differed.

* `feature_map_addresses` (column addresses plus channel offsets) and `feature_map_extent`
  (min and max without the array) against the element-by-element broadcast formula;
* `tflite_output._owners` against a Python loop over the owned bytes;
* `nn.QuantAttr` (scales rounded to float32 in one cast, zero points packed in one call)
  against `DenseArrayBase.from_list` of the per-element values;
* interned attributes (`_IntTupleAttr.interned`, `Placement.feature_map`) against freshly
  built ones, including the errors of invalid values.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import DenseArrayBase, f64, i64
from xdsl.utils.exceptions import VerifyException

from cascade.dialects import ethosu, nn
from cascade.ethos_u import npu_lowering
from cascade.ethos_u.npu_lowering import Box, NpuLoweringError, Placement
from cascade.ethos_u.tflite_output import _owners
from cascade.interpreter.ethosu import _strides, feature_map_addresses, feature_map_extent

SETTINGS = settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _reference_addresses(fm: ethosu.FeatureMapAttr) -> np.ndarray:
    """Vela's `get_address` for every element, as one broadcast over `(y, x, c)`."""
    height, width, depth = fm.shape.as_tuple()
    tiles = fm.tiles
    stride_y, stride_x, stride_c = _strides(fm)
    e = fm.element_size
    if fm.layout.data == ethosu.Layout.NHWC:
        stride_c, brick_x = 16 * e, stride_x
    else:
        brick_x = 16 * e
    y = np.arange(height)[:, None, None]
    x = np.arange(width)[None, :, None]
    c = np.arange(depth)[None, None, :]
    right = x >= tiles.width_0
    below = np.where(right, y >= tiles.height_1, y >= tiles.height_0)
    tile = right.astype(np.int64) + 2 * below.astype(np.int64)
    local_y = y - np.where(below, np.where(right, tiles.height_1, tiles.height_0), 0)
    local_x = x - np.where(right, tiles.width_0, 0)
    bases = np.asarray(tiles.addresses, dtype=np.int64)[tile]
    return bases + local_y * stride_y + local_x * brick_x + (c // 16) * stride_c + (c % 16) * e


@st.composite
def feature_maps(draw: st.DrawFn) -> ethosu.FeatureMapAttr:
    """Valid feature maps of every tile arrangement, layout, data type and stride choice."""
    height = draw(st.integers(1, 9))
    width = draw(st.integers(1, 9))
    depth = draw(st.integers(1, 70))
    height_0 = draw(st.integers(1, height))
    width_0 = draw(st.integers(1, width))
    if width_0 < width:  # tile 1 is used: at least one row
        height_1 = draw(st.integers(1, height))
    else:
        height_1 = draw(st.sampled_from([0, height_0]))
    addresses = [16 * draw(st.integers(0, 4096)) for _ in range(4)]
    layout = draw(st.sampled_from([ethosu.Layout.NHWC, ethosu.Layout.NHCWB16]))
    data_type = draw(st.sampled_from([ethosu.DataType.INT8, ethosu.DataType.INT16, ethosu.DataType.INT32]))
    e = data_type.size_in_bytes
    strides = None
    if draw(st.booleans()):  # explicit strides, any multiple of 16 (or of the element size for c)
        strides = (16 * draw(st.integers(0, 64)), 16 * draw(st.integers(0, 16)), e * draw(st.integers(0, 64)))
        if layout == ethosu.Layout.NHCWB16:  # small brick strides put the extremes mid-depth
            strides = (strides[0], strides[1], 16 * draw(st.integers(0, 2) | st.integers(0, 64)))
    tiles = ethosu.TileBoxAttr(height_0, height_1, width_0, addresses)
    return ethosu.FeatureMapAttr(data_type, 1, (height, width, depth), tiles, layout, None, strides)


@SETTINGS
@given(feature_maps())
def test_feature_map_addresses_and_extent_match_the_element_formula(fm: ethosu.FeatureMapAttr) -> None:
    expected = _reference_addresses(fm)
    addresses = feature_map_addresses(fm)
    assert addresses.dtype == expected.dtype
    assert addresses.shape == expected.shape
    np.testing.assert_array_equal(addresses, expected)
    assert feature_map_extent(fm) == (int(expected.min()), int(expected.max()))


@SETTINGS
@given(st.lists(st.integers(-1, 11), max_size=300))
def test_owners_are_the_distinct_owners_of_the_bytes(owned: list[int]) -> None:
    array = np.asarray(owned, dtype=np.int64)
    assert _owners(array, 12) == sorted(dict.fromkeys(i for i in owned if i >= 0))


finite_scales = st.floats(min_value=1e-12, max_value=1e6, allow_nan=False, allow_infinity=False)


@SETTINGS
@given(
    st.lists(finite_scales, min_size=1, max_size=40),
    st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(-128, 127), min_size=1, max_size=40),
)
def test_quant_attr_packs_like_from_list(scales: list[float], zero_points: list[int]) -> None:
    count = min(len(scales), len(zero_points))
    scales, zero_points = scales[:count], zero_points[:count]
    axis = 0 if count > 1 else -1
    quant = nn.QuantAttr(scales, zero_points, axis)
    rounded = [float(np.float32(s)) for s in scales]
    assert quant.scale == DenseArrayBase.from_list(f64, rounded)
    assert quant.zero_point == DenseArrayBase.from_list(i64, zero_points)
    assert nn.QuantAttr(scales, zero_points, axis, exact=True).scales == tuple(scales)


def test_quant_attr_keeps_from_list_for_other_values() -> None:
    # Unsigned 64-bit values normalise to negative ones; out-of-range ones raise as before.
    quant = nn.QuantAttr([0.5, 0.25], [2**64 - 1, 3], 0)
    assert quant.zero_points == (-1, 3)
    with pytest.raises(ValueError, match="out of range"):
        nn.QuantAttr([0.5, 0.25], [2**64, 3], 0)
    # Integer scales (not Python floats) round one by one, as before.
    assert nn.QuantAttr([2**60 + 1, 0.5], [0, 0], 0).scales == (float(np.float32(2**60 + 1)), 0.5)


@SETTINGS
@given(st.lists(st.integers(-3, 300), min_size=7, max_size=7))
def test_interned_int_tuples_equal_fresh_ones(values: list[int]) -> None:
    for cls, count in ((ethosu.PaddingAttr, 4), (ethosu.Shape3DAttr, 3), (ethosu.AddressRangeAttr, 3)):
        args = values[:count]
        try:
            fresh = cls(*args)
        except VerifyException as error:
            with pytest.raises(VerifyException, match=re.escape(str(error))):
                cls.interned(*args)
            continue
        assert cls.interned(*args) == fresh
        assert type(cls.interned(*args)) is cls
    tiles = values[:3], values[3:]
    try:
        fresh_tiles = ethosu.TileBoxAttr(*tiles[0], tiles[1])
    except VerifyException:
        with pytest.raises(VerifyException):
            ethosu.TileBoxAttr.interned(*values)
    else:
        assert ethosu.TileBoxAttr.interned(*values) == fresh_tiles


@SETTINGS
@given(
    st.integers(0, 4),
    st.integers(0, 4),
    st.integers(0, 40),
    st.integers(1, 5),
    st.integers(1, 5),
    st.integers(1, 40),
    st.sampled_from([None, 3, 5]),
    st.sampled_from([ethosu.Layout.NHWC, ethosu.Layout.NHCWB16]),
    st.sampled_from([None, (0.25, -3), (0.5, 0)]),
)
def test_memoised_feature_maps_equal_fresh_ones(y, x, c, height, width, depth, rolling, layout, quant) -> None:
    placement = Placement(1, 256, (10, 6, 48), layout, rolling)
    box = Box(y, x, c, height, width, depth)

    def fresh() -> ethosu.FeatureMapAttr:
        column = placement.column_offset(box.x, box.c)
        if rolling is None:
            address = placement.address + box.y * placement.strides[0] + column
            tiles = ethosu.TileBoxAttr.single(box.height, box.width, address)
        else:
            start = box.y % rolling
            height_0 = min(box.height, rolling - start)
            bottom = placement.address + column if box.height > height_0 else 0
            if not 0 < box.height <= rolling:
                raise NpuLoweringError("too tall")
            address = placement.address + start * placement.strides[0] + column
            tiles = ethosu.TileBoxAttr(height_0, height_0, box.width, (address, 0, bottom, 0))
        return ethosu.FeatureMapAttr(
            ethosu.DataType.INT8, 1, box.shape, tiles, layout, quant, strides=placement.strides
        )

    try:
        expected = fresh()
    except (NpuLoweringError, VerifyException) as error:
        with pytest.raises(type(error)):
            placement.feature_map(box, quant)
        return
    for _ in range(2):  # built, then from the memo
        assert placement.feature_map(box, quant) == expected
    assert placement.tiles(box) == expected.tiles


def test_activation_clamps_are_memoised_on_their_values() -> None:
    npu_lowering._clamp.cache_clear()
    first = npu_lowering._clamp("RELU6", 0.05, -128, -128)
    assert npu_lowering._clamp("RELU6", 0.05, -128, -128) is first
    assert first == ethosu.ActivationAttr(ethosu.ActivationKind.NONE_OR_RELU, None, (-8 + 128) * 0.05)
    assert npu_lowering._clamp("NONE", 0.05, 0, 0) is None
