"""Fast paths of the lowering, the .tflite writer and the importer against the straightforward
computations they replace, on randomised inputs: each would fail if its fast path differed.

* `feature_map_addresses` (column addresses plus channel offsets), `feature_map_extent`
  (min and max without the array) and `feature_map_span` (one range without the array)
  against the element-by-element broadcast formula;
* `tflite_output._owners` against a Python loop over the owned bytes;
* `nn.QuantAttr` (scales rounded to float32 in one cast, zero points packed in one call)
  against `DenseArrayBase.from_list` of the per-element values;
* interned attributes (`_IntTupleAttr.interned`, `Placement.feature_map`) against freshly
  built ones, including the errors of invalid values;
* `bias_records` (scale and shift of all channels in numpy, records packed in one array)
  against Vela's `npu_encode_bias` per channel, errors included;
* the attributes' `to_vela` (one shared Vela object per attribute) against Vela objects built
  field by field, converted in an interleaved order;
* `_BlockOp.with_block` against the constructor given the same block and ranges: equal ops,
  properties in the same order, the same generic text;
* `op_info_from_nn` with its memo of operator parts against the parts built afresh, for the
  operators of two models, their copies, and operators whose properties, types or constant
  weights changed.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from io import StringIO

import numpy as np
import pytest
from ethosu.vela import api
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import DenseArrayBase, f64, i64
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from cascade.dialects import ethosu, nn
from cascade.ethos_u import npu_lowering
from cascade.ethos_u.npu_lowering import Box, NpuLoweringError, Placement, _npu_scale, bias_records
from cascade.ethos_u.testing import vela_fields
from cascade.ethos_u.tflite_output import _owners
from cascade.interpreter.ethosu import _strides, feature_map_addresses, feature_map_extent, feature_map_span

SETTINGS = settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
BIAS_SETTINGS = settings(SETTINGS, max_examples=400)


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


def _reference_bytes(fm: ethosu.FeatureMapAttr) -> np.ndarray:
    """Every byte of every element, sorted, without repeats."""
    first = _reference_addresses(fm).reshape(-1)
    return np.unique(first[:, None] + np.arange(fm.element_size)[None, :])


@SETTINGS
@given(feature_maps())
def test_feature_map_span_is_exactly_the_bytes_of_the_elements(fm: ethosu.FeatureMapAttr) -> None:
    span = feature_map_span(fm)
    if span is not None:
        np.testing.assert_array_equal(_reference_bytes(fm), np.arange(*span))


def _nhwc(shape: tuple[int, int, int], tiles: ethosu.TileBoxAttr, **kwargs: object) -> ethosu.FeatureMapAttr:
    layout = kwargs.pop("layout", ethosu.Layout.NHWC)
    strides = kwargs.pop("strides", None)
    return ethosu.FeatureMapAttr(ethosu.DataType.INT8, 1, shape, tiles, layout, None, strides)  # type: ignore[arg-type]


def test_feature_map_span_of_maps_the_lowering_writes() -> None:
    # Rows 4-7 of an 8x8x16 NHWC map at 0: 128-byte rows, so bytes 512 to 1024.
    rows = _nhwc((4, 8, 16), ethosu.TileBoxAttr(4, 0, 8, [512, 0, 0, 0]), strides=(128, 16, 1))
    assert feature_map_span(rows) == (512, 1024)
    # NHCWB16 of depth 32: two bricks of 8 columns of 16 bytes, one range of 4 * 256 bytes.
    bricks = _nhwc((4, 8, 32), ethosu.TileBoxAttr(4, 0, 8, [64, 0, 0, 0]), layout=ethosu.Layout.NHCWB16)
    assert feature_map_span(bricks) == (64, 64 + 1024)
    # A rolling buffer's wrap: rows 0-1 of the stripe are rows 6-7 of an 8-row buffer (tile 0
    # at 768), rows 2-3 its rows 0-1 (tile 2 at 0): two ranges. Had tile 2 followed at 1024,
    # one range.
    wrap = _nhwc((4, 8, 16), ethosu.TileBoxAttr(2, 0, 8, [768, 0, 0, 0]), strides=(128, 16, 1))
    assert feature_map_span(wrap) is None
    joined = _nhwc((4, 8, 16), ethosu.TileBoxAttr(2, 0, 8, [768, 0, 1024, 0]), strides=(128, 16, 1))
    assert feature_map_span(joined) == (768, 1280)
    apart = _nhwc((4, 8, 16), ethosu.TileBoxAttr(2, 0, 8, [768, 0, 1040, 0]), strides=(128, 16, 1))
    assert feature_map_span(apart) is None
    # Gaps: 8 channels of 16-byte columns, a partial last brick (depth 40).
    one_tile = ethosu.TileBoxAttr(2, 0, 4, [0, 0, 0, 0])
    assert feature_map_span(_nhwc((2, 4, 8), one_tile, strides=(256, 16, 1))) is None
    assert feature_map_span(_nhwc((2, 4, 40), one_tile, layout=ethosu.Layout.NHCWB16)) is None


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


def test_signed_zero_scales_are_not_shared_between_feature_maps() -> None:
    # 0.0 and -0.0 are equal memo keys but print differently: each feature map must print the
    # scale it was given, whichever was built first.
    placement = Placement(1, 256, (10, 6, 48), ethosu.Layout.NHWC, None)
    box = Box(0, 0, 0, 2, 3, 16)
    printed = {}
    for scale in (0.0, -0.0, 0.0):
        tiles = ethosu.TileBoxAttr.single(box.height, box.width, placement.address)
        fresh = ethosu.FeatureMapAttr(
            ethosu.DataType.INT8, 1, box.shape, tiles, ethosu.Layout.NHWC, (scale, 3), strides=placement.strides
        )
        built = placement.feature_map(box, (scale, 3))
        assert str(built) == str(fresh)
        printed[str(scale)] = str(built)
    assert printed["0.0"] != printed["-0.0"]


def test_activation_clamps_are_memoised_on_their_values() -> None:
    npu_lowering._clamp.cache_clear()
    first = npu_lowering._clamp("RELU6", 0.05, -128, -128)
    assert npu_lowering._clamp("RELU6", 0.05, -128, -128) is first
    assert first == ethosu.ActivationAttr(ethosu.ActivationKind.NONE_OR_RELU, None, (-8 + 128) * 0.05)
    assert npu_lowering._clamp("NONE", 0.05, 0, 0) is None


# --------------------------------------------------------------------------- #
# Bias records
# --------------------------------------------------------------------------- #


def _reference_records(biases: list[int], input_scale: float, weight_scales: list[float], output_scale: float) -> bytes:
    """One `npu_encode_bias` per channel, of TFLite's scalar `quantize_multiplier`."""
    records = bytearray()
    for bias, weight_scale in zip(biases, weight_scales, strict=True):
        multiplier, shift = _npu_scale(input_scale * weight_scale / output_scale)
        records += api.npu_encode_bias(np.int64(bias), multiplier, shift)
    return bytes(records) + bytes(-len(records) % 16)


def _outcome(compute: Callable[..., object], *args: object) -> tuple[str, object]:
    try:
        return "ok", compute(*args)
    except Exception as error:
        return type(error).__name__, str(error)


INT40 = 1 << 39
biases_40 = st.integers(-INT40, INT40 - 1) | st.sampled_from([-INT40, INT40 - 1, -(2**31), 2**31 - 1, -1, 0, 1])
fractions = st.floats(0.5, 1.0, exclude_max=True) | st.sampled_from([0.5, 1 - 2**-53, 1 - 2**-33, 1 - 2**-32])


@st.composite
def real_scales(draw: st.DrawFn, low: int = -36, high: int = 31) -> float:
    """Requantization scales `q * 2**e` around the 6-bit shift's limits (`e` in [-31, 30]
    fits; below flushes to 0, above 30 overflows), a few of them half-way cases of `q * 2**31`
    and `q` close enough to 1 to round up to 2**31; or 0, or a subnormal."""
    if draw(st.integers(0, 15)) == 0:
        return draw(st.sampled_from([0.0, 5e-324, 2.2e-308, 1e-300]))
    if draw(st.booleans()):
        fraction = (draw(st.integers(2**30, 2**31 - 1)) + 0.5) / 2**31  # exactly half-way
    else:
        fraction = draw(fractions)
    return math.ldexp(fraction, draw(st.integers(low, high)))


@st.composite
def channel_sets(draw: st.DrawFn, low: int = -36, high: int = 30) -> tuple[list[int], float, list[float], float]:
    """Biases, an input scale, per-channel weight scales and an output scale whose ratio spans
    tiny to huge: `in * w / out` is one of `real_scales` times a rounding error or two."""
    count = draw(st.integers(0, 40))
    biases = draw(st.lists(biases_40, min_size=count, max_size=count))
    input_scale = draw(st.sampled_from([1.0, 0.5]) | st.floats(1e-6, 1.0))
    output_scale = draw(st.sampled_from([1.0, 0.25]) | st.floats(1e-6, 1.0))
    reals = draw(st.lists(real_scales(low, high), min_size=count, max_size=count))
    weight_scales = [real * output_scale / input_scale for real in reals]
    return biases, input_scale, weight_scales, output_scale


@BIAS_SETTINGS
@given(channel_sets())
def test_bias_records_match_vela_per_channel(channels: tuple[list[int], float, list[float], float]) -> None:
    biases, input_scale, weight_scales, output_scale = channels
    expected = _outcome(_reference_records, biases, input_scale, weight_scales, output_scale)
    records = _outcome(bias_records, np.asarray(biases, dtype=np.int64), input_scale, weight_scales, output_scale)
    assert records == expected
    # The values Vela accepts are packed in numpy, not handed to the per-channel path.
    packed = npu_lowering._packed_bias_records(
        np.asarray(biases, dtype=np.int64), input_scale, np.asarray(weight_scales, dtype=np.float64), output_scale
    )
    if expected[0] == "ok":
        assert packed is not None
        assert packed + bytes(-len(packed) % 16) == expected[1]


@BIAS_SETTINGS
@given(channel_sets(low=-40, high=34), st.sampled_from([None, 2**39, -(2**39) - 1, 2**63 - 1, -(2**63)]))
def test_bias_records_raise_like_vela_per_channel(
    channels: tuple[list[int], float, list[float], float], bad_bias: int | None
) -> None:
    """Shifts beyond 0-63 raise `NpuLoweringError`, biases beyond 40 bits Vela's assertion."""
    biases, input_scale, weight_scales, output_scale = channels
    if bad_bias is not None and biases:
        biases[len(biases) // 2] = bad_bias
    expected = _outcome(_reference_records, biases, input_scale, weight_scales, output_scale)
    records = _outcome(bias_records, np.asarray(biases, dtype=np.int64), input_scale, weight_scales, output_scale)
    assert records == expected


@pytest.mark.parametrize(
    ("input_scale", "weight_scale", "output_scale"),
    [
        (1.0, math.inf, 1.0),
        (1.0, math.nan, 1.0),
        (1.0, 0.5, 0.0),  # a ZeroDivisionError, as in the scalar path
        (1e300, 1e300, 1e-300),
        (1.0, -0.5, 1.0),  # a negative multiplier: Vela's assertion
        (1.0, -1e-30, 1.0),  # negative but flushed to 0: a valid record
        (1.0, -0.0, 1.0),
    ],
)
def test_bias_records_of_odd_scales_take_the_per_channel_path(
    input_scale: float, weight_scale: float, output_scale: float
) -> None:
    args = ([5, -7], input_scale, [0.25, weight_scale], output_scale)
    expected = _outcome(_reference_records, *args)
    assert _outcome(bias_records, np.asarray(args[0], dtype=np.int64), *args[1:]) == expected


def test_bias_record_layout_is_vela_s() -> None:
    # bias -1 (40-bit two's complement), scale 2**30 little-endian, shift 38: 0.5 * 2**-7.
    record = bias_records(np.asarray([-1]), 1.0, [2.0**-8], 1.0)
    assert record[:10] == bytes.fromhex("ffffffffff0000004026")
    assert record[10:] == bytes(6)


# --------------------------------------------------------------------------- #
# Shared Vela objects of attributes
# --------------------------------------------------------------------------- #


def _reference_vela_fm(fm: ethosu.FeatureMapAttr) -> api.NpuFeatureMap:
    """`NpuFeatureMap` field by field from the attribute's values."""
    vela = api.NpuFeatureMap()
    vela.data_type = api.NpuDataType[fm.data_type.data.name]
    vela.region = fm.region.data
    vela.shape = api.NpuShape3D(*fm.shape.as_tuple())
    height_0, height_1, width_0, *addresses = fm.tiles.as_tuple()
    vela.tiles = api.NpuTileBox(height_0, height_1, width_0, addresses)
    quant = fm.quantization_or_none
    vela.quantization = None if quant is None else api.NpuQuantization(quant.scale_value, quant.zero_point.data)
    vela.layout = api.NpuLayout[fm.layout.data.name]
    strides = fm.strides_or_none
    vela.strides = None if strides is None else api.NpuShape3D(*strides.as_tuple())
    vela.name = fm.debug_name_or_none
    return vela


@st.composite
def named_feature_maps(draw: st.DrawFn) -> ethosu.FeatureMapAttr:
    fm = draw(feature_maps())
    quant = draw(st.sampled_from([None, (0.25, -3), (None, 5), (0.5, 0)]))
    name = draw(st.sampled_from([None, "a", "b"]))
    return ethosu.FeatureMapAttr(
        fm.data_type.data, fm.region.data, fm.shape, fm.tiles, fm.layout.data, quant, fm.strides_or_none, name
    )


@SETTINGS
@given(st.lists(named_feature_maps(), min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_shared_vela_feature_maps_equal_fresh_ones(fms: list[ethosu.FeatureMapAttr], rng: random.Random) -> None:
    order = [*range(len(fms))] * 2
    rng.shuffle(order)
    converted = {index: fms[index].to_vela() for index in order}
    for index, fm in enumerate(fms):
        assert vela_fields(converted[index]) == vela_fields(_reference_vela_fm(fm))
        assert fm.to_vela() is converted[index]  # built once
        assert vela_fields(fm.tiles.to_vela()) == vela_fields(_reference_vela_fm(fm).tiles)


@SETTINGS
@given(
    st.integers(1, 8),
    st.integers(1, 8),
    st.integers(1, 3),
    st.integers(1, 2),
    st.sampled_from([(0, 0, 0, 0), (1, 0, 2, 1)]),
    st.sampled_from([None, (None, 6.0), (-1.0, 1.0)]),
)
def test_shared_vela_kernels_paddings_activations(
    height: int,
    width: int,
    stride: int,
    dilation: int,
    padding: tuple[int, int, int, int],
    clamp: tuple[float | None, float] | None,
) -> None:
    kernel = ethosu.KernelAttr(height, width, stride, stride + 1 if stride < 3 else 1, dilation, 1)
    expected_kernel = api.NpuKernel(width, height, kernel.stride_x, stride, 1, dilation)
    assert vela_fields(kernel.to_vela()) == vela_fields(expected_kernel)
    assert kernel.to_vela() is kernel.to_vela()
    assert ethosu.PaddingAttr(*padding).to_vela() == api.NpuPadding(*padding)
    if clamp is not None:
        activation = ethosu.ActivationAttr(ethosu.ActivationKind.NONE_OR_RELU, *clamp)
        expected = api.NpuActivation(api.NpuActivationOp.NONE_OR_RELU)
        expected.min, expected.max, expected.lookup_table_index = clamp[0], clamp[1], 0
        assert vela_fields(activation.to_vela()) == vela_fields(expected)


# --------------------------------------------------------------------------- #
# A probe command completed with its block and constants
# --------------------------------------------------------------------------- #


def _generic(op: ethosu.EthosUCommand) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(op)
    return stream.getvalue()


# One or two (cores') ranges in one region.
ranges = st.integers(0, 7).flatmap(
    lambda region: st.lists(
        st.builds(ethosu.AddressRangeAttr, st.just(region), st.integers(0, 64).map(lambda a: 16 * a), st.just(160)),
        min_size=1,
        max_size=2,
    )
)
blocks = st.tuples(st.integers(1, 16), st.integers(1, 16), st.integers(1, 64))


@st.composite
def block_options(draw: st.DrawFn) -> dict[str, object]:
    options: dict[str, object] = {}
    if draw(st.booleans()):
        options["activation"] = ethosu.ActivationAttr(ethosu.ActivationKind.NONE_OR_RELU, 0.0, 6.0)
    for key, values in (
        ("rounding_mode", list(ethosu.RoundingMode)),
        ("ifm_upscale", list(ethosu.ResamplingMode)),
        ("accumulator_type", list(ethosu.AccumulatorType)),
        ("fused_quantize", [True, False]),
        ("debug_name", ["stripe"]),
    ):
        if draw(st.booleans()):
            options[key] = draw(st.sampled_from(values))
    return options


@st.composite
def commands(draw: st.DrawFn) -> tuple[type, dict[str, object], bool]:
    """A block command's class and constructor arguments (block config left out), and
    whether it takes weights."""
    fm = ethosu.FeatureMapAttr(ethosu.DataType.INT8, 1, (4, 4, 16), 0, quantization=(0.5, 1))
    args: dict[str, object] = {"ifm": fm, "ofm": fm, **draw(block_options())}
    kind = draw(st.sampled_from(["conv", "depthwise", "pool", "elementwise"]))
    if kind in ("conv", "depthwise", "pool"):
        args["kernel"] = ethosu.KernelAttr(3, 3)
        args["padding"] = ethosu.PaddingAttr(1, 1, 1, 1)
    if kind == "conv":
        args["block_traversal"] = draw(st.sampled_from(list(ethosu.BlockTraversal)))
        return ethosu.Conv2DOp, args, True
    if kind == "depthwise":
        return ethosu.DepthwiseConv2DOp, args, True
    if kind == "pool":
        args["rescale"] = draw(st.sampled_from([None, 0.5]))
        return ethosu.PoolingOp, {"kind": draw(st.sampled_from(list(ethosu.PoolingKind))), **args}, False
    args["ifm2"] = draw(st.sampled_from([None, fm, ethosu.ScalarAttr(2.0, ethosu.DataType.INT8)]))
    args["reversed_operands"] = args["ifm2"] is not None and draw(st.booleans())
    args["rescale"] = None if args["ifm2"] is None else draw(st.sampled_from([None, (3, 1)]))
    unary = args["ifm2"] is None
    kind_of = ethosu.ElementwiseKind.ABS if unary else ethosu.ElementwiseKind.ADD
    return ethosu.ElementwiseOp, {"kind": kind_of, **args}, False


@SETTINGS
@given(commands(), blocks, ranges, ranges)
def test_with_block_is_the_constructor_s_op(
    command: tuple[type, dict[str, object], bool],
    block: tuple[int, int, int],
    weights: list[ethosu.AddressRangeAttr],
    biases: list[ethosu.AddressRangeAttr],
) -> None:
    cls, args, has_weights = command
    kind = args.pop("kind", None)
    positional = () if kind is None else (kind,)
    constants = {"weights": weights, "biases": (biases * 2)[: len(weights)]} if has_weights else {}
    if has_weights:
        probe = cls(*positional, block_config=(1, 1, 1), weights=[], biases=[], **args)
    else:
        probe = cls(*positional, block_config=(1, 1, 1), **args)
    expected = cls(*positional, block_config=block, **constants, **args)
    built = probe.with_block(block, **constants)
    assert type(built) is cls
    assert list(built.properties.items()) == list(expected.properties.items())
    assert built.attributes == expected.attributes
    assert _generic(built) == _generic(expected)
    built.verify()


def test_memoised_access_relations_follow_a_changed_operator() -> None:
    # The lowering keeps each operator's access relations; changing what they derive from
    # (here the padding and the stride of a convolution) must give the fresh relations.
    from pathlib import Path

    from xdsl.dialects.builtin import DenseArrayBase, i64

    from cascade.dialects import nn
    from cascade.ethos_u import npu_lowering
    from cascade.frontends.loader import load_module

    module = load_module(str(Path(__file__).parents[1] / "models" / "resnet8.tflite"))
    conv = next(op for op in module.walk() if isinstance(op, nn.Conv2DOp) and op.paddings() != (0, 0, 0, 0))
    assert npu_lowering._access_relations(conv) == conv.access_relations()
    kept = npu_lowering._access_relations(conv)
    assert npu_lowering._access_relations(conv) is kept  # memoised
    conv.padding = DenseArrayBase.from_list(i64, [0, 0, 0, 0])
    assert npu_lowering._access_relations(conv) == conv.access_relations() != kept
    conv.stride = DenseArrayBase.from_list(i64, [2, 2])
    assert npu_lowering._access_relations(conv) == conv.access_relations()
    npu_lowering.forget_costing_views()
    assert conv not in npu_lowering._ACCESS_RELATIONS


def _fresh_op_info(op: nn.NNOperation, names: object) -> object:
    """`op_info_from_nn` with an empty memo (restored after)."""
    from cascade.passes.planner import from_nn

    kept = dict(from_nn._PARTS)
    from_nn._PARTS.clear()
    try:
        return from_nn.op_info_from_nn(op, names)  # type: ignore[arg-type]
    finally:
        from_nn._PARTS.clear()
        from_nn._PARTS.update(kept)


def _same_op_info(got: object, expected: object) -> bool:
    """Equal OpInfos, attributes included (dataclass equality leaves them out; weights are arrays)."""
    if got != expected:
        return False
    ours, theirs = got.attributes, expected.attributes  # type: ignore[attr-defined]
    if ours.keys() != theirs.keys():
        return False
    return all(
        np.array_equal(value, theirs[key]) if isinstance(value, np.ndarray) else value == theirs[key]
        for key, value in ours.items()
    )


@pytest.mark.parametrize("model", ["resnet8.tflite", "ds_cnn_kws.tflite"])
def test_memoised_op_infos_equal_fresh_ones_and_serve_copies(model: str) -> None:
    from pathlib import Path

    from cascade.frontends.loader import load_module
    from cascade.passes.planner.from_nn import ValueNames, _parts, op_info_from_nn

    module = load_module(str(Path(__file__).parents[1] / "models" / model))
    ops = [op for op in module.walk() if isinstance(op, nn.NNOperation)]
    assert len(ops) > 5
    names, fresh_names = ValueNames(), ValueNames()
    for op in ops:
        assert _same_op_info(op_info_from_nn(op, names), _fresh_op_info(op, fresh_names))
    # A copy shares its attributes, types and location with the original: the same parts.
    copy = module.clone()
    copied = [op for op in copy.walk() if isinstance(op, nn.NNOperation)]
    assert all(_parts(new) is _parts(old) for new, old in zip(copied, ops, strict=True))
    # The passes' own marks (discardable attributes) do not change an operator's parts.
    ops[1].attributes["cascade.mark"] = i64
    assert _parts(ops[1]) is _parts(copied[1])


def test_memoised_op_infos_follow_a_changed_operator() -> None:
    from pathlib import Path

    from xdsl.dialects.arith import ConstantOp
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType, TensorType

    from cascade.frontends.loader import load_module
    from cascade.passes.planner.from_nn import ValueNames, _parts, op_info_from_nn

    module = load_module(str(Path(__file__).parents[1] / "models" / "resnet8.tflite"))
    conv = next(op for op in module.walk() if isinstance(op, nn.Conv2DOp) and op.paddings() != (0, 0, 0, 0))

    def check() -> object:
        info = op_info_from_nn(conv, ValueNames())
        assert _same_op_info(info, _fresh_op_info(conv, ValueNames()))
        return info

    before = check()
    parts = _parts(conv)
    conv.padding = DenseArrayBase.from_list(i64, [0, 0, 0, 0])
    padded = check()
    assert _parts(conv) is not parts
    assert padded.input_relations != before.input_relations  # type: ignore[attr-defined]
    conv.stride = DenseArrayBase.from_list(i64, [2, 2])
    strided = check()
    assert strided.attributes["stride"] == (2, 2) != before.attributes["stride"]  # type: ignore[attr-defined]
    # New weights: another constant with the same type.
    weight = conv.operands[1].owner
    assert isinstance(weight, ConstantOp)
    values = np.asarray(strided.attributes["weight_values"])  # type: ignore[attr-defined]
    weight_type = weight.result.type
    assert isinstance(weight_type, TensorType)
    assert isinstance(weight_type.element_type, IntegerType)
    flipped = DenseIntOrFPElementsAttr.from_list(weight_type, (-values - 1).ravel().tolist())
    replacement = ConstantOp(flipped, weight_type)
    block = weight.parent_block()
    assert block is not None
    block.insert_op_before(replacement, weight)
    conv.operands[1] = replacement.result
    reweighted = check()
    assert np.array_equal(reweighted.attributes["weight_values"], -values - 1)  # type: ignore[attr-defined]


def test_nn_operators_keep_their_parameters_in_properties() -> None:
    # The op-info memo keys an operator on its properties and leaves its attributes (the
    # passes' marks) out: an `nn` attribute definition would break that.
    operations = list(nn.NN.operations)
    assert len(operations) >= 20
    assert [op.name for op in operations if op.get_irdl_definition().attributes] == []
    assert {"stride", "padding"} <= set(nn.Conv2DOp.get_irdl_definition().properties)
