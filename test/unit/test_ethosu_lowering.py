"""The per-operation lowering of `nn` operators to `ethosu` commands (`ethos_u/npu_lowering.py`).

Checks the pieces the functional tests rely on: tile boxes of rolling buffers, strides and
layouts, per-stripe padding from the access relation, block configs from Vela, weight streams
that decode back to the model's weights, bias records with TFLite's exact requantization,
and clamps that Vela quantizes back to TFLite's activation range.
"""

from __future__ import annotations

import numpy as np
import pytest

from cascade.dialects import ethosu
from cascade.ethos_u import npu_lowering as lowering
from cascade.ethos_u.npu_examples import row_stripes, single_op_module
from cascade.ethos_u.npu_lowering import Box, NpuLoweringError, Placement, lower_op, rolling_tiles
from cascade.ethos_u.serialize import decode_registers
from cascade.interpreter.ethosu import decode_bias_records, decode_weights
from cascade.interpreter.nn import constant_array
from cascade.interpreter.quantization import activation_range, quantize_multiplier

ACCELERATOR = "ethos-u55-128"


def _placements(single, layout: ethosu.Layout = ethosu.Layout.NHWC) -> list[Placement]:
    shapes = [lowering.hwc_shape(s) for s in single.input_shapes]
    shapes.append(lowering.hwc_shape(single.op.results[0].type.get_shape()))
    placements, address = [], 0
    for shape in shapes:
        placements.append(Placement(1, address, shape, layout))
        address += -(-placements[-1].size // 16) * 16
    return placements


# --------------------------------------------------------------------------- #
# Geometry
# --------------------------------------------------------------------------- #


def test_rolling_tiles_without_wrap_is_one_tile() -> None:
    tiles = rolling_tiles(0x800, 10, 2, 5, 128, 16)
    assert (tiles.height_0, tiles.height_1, tiles.width_0) == (5, 5, 16)
    assert tiles.addresses == (0x800 + 2 * 128, 0, 0, 0)


def test_rolling_tiles_wrap_through_tile_2() -> None:
    # Rows 8..15 of a 10-row buffer: rows 8, 9 before the wrap, rows 10..15 from the start.
    tiles = rolling_tiles(0x800, 10, 8, 8, 128, 16)
    assert (tiles.height_0, tiles.height_1, tiles.width_0) == (2, 2, 16)
    assert tiles.addresses == (0x800 + 8 * 128, 0, 0x800, 0)
    # A later pass over the buffer starts at row first_row mod k.
    again = rolling_tiles(0x800, 10, 26, 4, 128, 16, column_offset=32)
    assert again.addresses == (0x800 + 6 * 128 + 32, 0, 0, 0)


def test_rolling_tiles_reject_boxes_taller_than_the_buffer() -> None:
    with pytest.raises(NpuLoweringError, match="does not fit"):
        rolling_tiles(0, 4, 0, 5, 16, 1)


def test_a_column_rolling_buffer_wraps_through_tile_1() -> None:
    # A 6x20x32 tensor held in 4 columns (NHCWB16): a row is 4 x 32 = 128 bytes, a column 16
    # bytes a brick, a brick 16 x 4 = 64.
    placement = Placement(1, 0x400, (6, 20, 32), ethosu.Layout.NHCWB16, rolling_columns=4)
    assert placement.strides == (128, 16, 64)
    assert placement.size == 6 * 128
    # Rows 2..4, columns 9..10: buffer columns 1..2, no wrap.
    fm = placement.feature_map(Box(2, 9, 0, 3, 2, 32), None)
    assert (fm.tiles.height_0, fm.tiles.height_1, fm.tiles.width_0) == (3, 3, 2)
    assert fm.tiles.addresses == (0x400 + 2 * 128 + 1 * 16, 0, 0, 0)
    # Columns 6..9 of the second brick: buffer columns 2..3 (tile 0), then 0..1 (tile 1).
    fm = placement.feature_map(Box(1, 6, 16, 2, 4, 16), None)
    assert (fm.tiles.height_0, fm.tiles.height_1, fm.tiles.width_0) == (2, 2, 2)
    assert fm.tiles.addresses == (0x400 + 128 + 2 * 16 + 64, 0x400 + 128 + 64, 0, 0)


def test_a_placement_rolls_one_axis_and_holds_the_box() -> None:
    with pytest.raises(NpuLoweringError, match="does not fit a 4-column rolling buffer"):
        Placement(1, 0, (6, 20, 32), rolling_columns=4).tiles(Box(0, 3, 0, 1, 5, 32))
    with pytest.raises(NpuLoweringError, match="rows or along columns, not both"):
        Placement(1, 0, (6, 20, 32), rolling_rows=2, rolling_columns=4)


def test_placement_strides_follow_vela_defaults() -> None:
    nhwc = Placement(1, 0, (4, 5, 20))
    assert nhwc.strides == (100, 20, 1)
    brick = Placement(1, 0, (4, 5, 20), ethosu.Layout.NHCWB16)
    # y = W * round_up(C, 16), x = 16, c = 16 * W (Vela's get_strides)
    assert brick.strides == (160, 16, 80)
    assert brick.column_offset(2, 16) == 2 * 16 + 80
    with pytest.raises(NpuLoweringError, match="16-channel brick"):
        brick.column_offset(0, 8)


def test_feature_map_of_a_stripe_is_a_window_into_the_tensor() -> None:
    placement = Placement(2, 0x100, (8, 6, 4))
    fm = placement.feature_map(Box(3, 1, 0, 2, 5, 4), (0.5, -3))
    assert fm.shape.as_tuple() == (2, 5, 4)
    assert fm.tiles.addresses[0] == 0x100 + 3 * 24 + 1 * 4
    assert fm.strides_or_none is not None
    assert fm.strides_or_none.as_tuple() == (24, 4, 1)
    assert fm.region.data == 2


def test_stripes_get_padding_only_at_tensor_borders() -> None:
    single = single_op_module("conv2d", np.random.default_rng(0), shape=(9, 8, 4), padding=(1, 1, 1, 1))
    lowered = lower_op(single.op, _placements(single), row_stripes((9, 8, 8), 3), accelerator=ACCELERATOR)
    pads = [command.padding.as_tuple() for command in lowered.commands]
    assert pads == [(1, 1, 0, 1), (0, 1, 0, 1), (0, 1, 1, 1)]
    ifm_rows = [(command.ifm.shape.height, command.ifm.tiles.addresses[0] // (8 * 4)) for command in lowered.commands]
    assert ifm_rows == [(4, 0), (5, 2), (4, 5)]  # rows 0..3, 2..6, 5..8


def test_block_config_is_one_of_velas_and_matches_the_weight_encoding() -> None:
    single = single_op_module("conv2d", np.random.default_rng(1), shape=(8, 8, 16), out_channels=24)
    lowered = lower_op(single.op, _placements(single), row_stripes((8, 8, 24), 4), accelerator=ACCELERATOR)
    for command in lowered.commands:
        probe = command.clone()
        assert command.block_config.as_tuple() in lowering.block_configs(probe, ACCELERATOR)
    depths = {command.block_config.depth for command in lowered.commands}
    assert len(depths) == 1


@pytest.mark.parametrize("accelerator", ["ethos-u55-128", "ethos-u65-256"])
def test_remembered_block_searches_are_velas_answers(accelerator: str) -> None:
    # `block_configs` remembers Vela's answer by what Vela reads of a command. Every command of
    # three lowered models (convolutions, depthwise, pooling, mean, adds, fully connected; the
    # stripes of cascades) gets the answer Vela gives it afresh, after the memo has seen the
    # others: a field Vela reads but the key misses would hand one command another's blocks.
    from pathlib import Path

    from cascade.frontends.loader import load_module, make_context
    from cascade.passes.ethosu_pipeline import EthosUPipelinePass

    models = Path(__file__).resolve().parents[1] / "models"
    commands = []
    for model in ("resnet8.tflite", "ds_cnn_kws.tflite", "mbv2_035_96.tflite"):
        module = load_module(models / model)
        EthosUPipelinePass(accelerator=accelerator).apply(make_context(), module)
        streams = [op for op in module.walk() if isinstance(op, ethosu.CommandStreamOp)]
        commands += [c for s in streams for c in s.commands if not isinstance(c, ethosu.DmaOp)]
    lowering._BLOCK_CONFIGS.clear()
    remembered = [lowering.block_configs(command, accelerator) for command in commands]
    keys = {lowering._block_search_inputs(command.to_vela()) for command in commands}
    assert len(keys) < len(commands)  # the memo is used
    for command, answer in zip(commands, remembered, strict=True):
        assert answer == list(lowering._find_block_configs(command.to_vela(), accelerator))
        assert lowering.block_configs(command, accelerator) == answer


def test_encoded_weights_decode_back_to_the_model_weights() -> None:
    for kind in ("conv2d", "depthwise_conv2d", "fully_connected"):
        single = single_op_module(kind, np.random.default_rng(2), shape=(6, 6, 12), out_channels=20)
        lowered = lower_op(single.op, _placements(single), accelerator=ACCELERATOR)
        command = lowered.commands[0]
        weights = constant_array(single.op.operands[1].owner.value)
        if kind == "depthwise_conv2d":
            ohwi = np.transpose(weights, (3, 1, 2, 0))
        elif kind == "fully_connected":
            ohwi = weights[:, None, None, :]
        else:
            ohwi = weights
        blob = next(b for b in lowered.constants if "weights" in b.name)
        traversal = (
            ethosu.BlockTraversal.DEPTH_FIRST if kind == "depthwise_conv2d" else command.block_traversal.data  # type: ignore[union-attr]
        )
        decoded = decode_weights(
            blob.data,
            ACCELERATOR,
            ohwi.shape,
            (1, 1),
            command.block_config.depth,
            kind == "depthwise_conv2d",
            traversal,
        )
        np.testing.assert_array_equal(decoded, ohwi)


def test_bias_records_hold_tflite_requantization() -> None:
    single = single_op_module("conv2d", np.random.default_rng(3), shape=(5, 5, 8), out_channels=12)
    op = single.op
    lowered = lower_op(op, _placements(single), accelerator=ACCELERATOR)
    blob = next(b for b in lowered.constants if "bias" in b.name)
    assert len(blob.data) % 16 == 0
    assert blob.range.length == len(blob.data)
    bias, scale, shift = decode_bias_records(blob.data[: 10 * 12])
    np.testing.assert_array_equal(bias, constant_array(op.bias.owner.value))
    for channel in range(12):
        real = op.input_quant.scales[0] * op.weight_quant.scales[channel] / op.output_quant.scales[0]
        multiplier, exponent = quantize_multiplier(real)
        assert (scale[channel], shift[channel]) == (multiplier, 31 - exponent)


def test_npu_scale_flushes_tiny_multipliers_like_tflite() -> None:
    assert lowering._npu_scale(2.0**-40) == (0, 0)
    assert lowering._npu_scale(0.75) == (quantize_multiplier(0.75)[0], 31)


@pytest.mark.parametrize("activation", ["relu", "relu6", "relu_n1_to_1"])
def test_clamp_is_quantized_back_to_tflite_bounds(activation: str) -> None:
    from ethosu.vela import api

    rng = np.random.default_rng(4)
    for _ in range(5):
        single = single_op_module("conv2d", rng, shape=(4, 4, 4), activation=activation)
        command = lower_op(single.op, _placements(single), accelerator=ACCELERATOR).commands[0]
        words = api.npu_generate_register_command_stream([command.to_vela()], api.NpuAccelerator.Ethos_U55_128)
        (registers,) = decode_registers(words)
        quant = single.op.output_quant
        low, high = activation_range(activation.upper(), quant.scales[0], quant.zero_points[0])
        assert registers.reg("ACTIVATION_MIN", signed=True) == low
        assert registers.reg("ACTIVATION_MAX", signed=True) == high


def test_channel_stripes_encode_one_weight_slice_each() -> None:
    single = single_op_module("conv2d", np.random.default_rng(5), shape=(6, 6, 8), out_channels=32)
    stripes = [Box(0, 0, 0, 6, 6, 16), Box(0, 0, 16, 6, 6, 16)]
    lowered = lower_op(single.op, _placements(single, ethosu.Layout.NHCWB16), stripes, accelerator=ACCELERATOR)
    assert len(lowered.constants) == 4
    ranges = [blob.range for blob in lowered.constants]
    assert all(r.address % 16 == 0 and r.length % 16 == 0 for r in ranges)
    assert [r.address for r in ranges] == sorted(r.address for r in ranges)
    first, second = lowered.commands
    # (compare tuples: xDSL 0.75 `DenseArrayBase.__eq__` does not compare the array contents)
    assert first.weight_ranges[0].as_tuple() != second.weight_ranges[0].as_tuple()
    assert second.ofm.tiles.addresses[0] - first.ofm.tiles.addresses[0] == 16 * 6  # one brick of 16 channels


def test_stripe_reading_only_padding_is_rejected() -> None:
    single = single_op_module("conv2d", np.random.default_rng(8), shape=(4, 4, 4), kernel=(1, 1), padding=(1, 0, 0, 0))
    with pytest.raises(NpuLoweringError, match="reads only padding"):
        lower_op(single.op, _placements(single), row_stripes((5, 4, 8), 1), accelerator=ACCELERATOR)
    lower_op(single.op, _placements(single), row_stripes((5, 4, 8), 2), accelerator=ACCELERATOR)


def test_u65_512_gives_each_core_its_channels() -> None:
    # Two cores: core 0 computes the even output channels, core 1 the odd ones, each from its
    # own bias records (10 bytes a channel, padded to 16) and weight stream.
    single = single_op_module("conv2d", np.random.default_rng(6), shape=(4, 4, 4))
    channels = single.op.results[0].type.get_shape()[-1]
    lowered = lower_op(single.op, _placements(single), accelerator="ethos-u65-512")
    (stripe,) = lowered.stripes
    (command,) = stripe.commands
    assert len(command.weight_ranges) == len(command.bias_ranges) == 2
    per_core = [len(range(core, channels, 2)) for core in (0, 1)]
    assert [r.length for r in command.bias_ranges] == [-(-10 * n // 16) * 16 for n in per_core]
    names = [blob.name for blob in lowered.constants]
    assert [n.rsplit("_", 1)[-1] for n in names] == ["core0", "core0", "core1", "core1"]


def test_unsupported_cases_raise() -> None:
    single = single_op_module("conv2d", np.random.default_rng(6), shape=(4, 4, 4))
    func_op = single.module.ops.first
    assert func_op is not None
    with pytest.raises(NpuLoweringError, match="no NPU lowering"):
        lower_op(func_op, [])


def test_traversal_follows_velas_heuristic() -> None:
    assert lowering.choose_traversal(np.zeros((8, 3, 3, 8)), False) == ethosu.BlockTraversal.PART_KERNEL_FIRST
    assert lowering.choose_traversal(np.zeros((8, 1, 1, 64)), False) == ethosu.BlockTraversal.DEPTH_FIRST
    assert lowering.choose_traversal(np.zeros((8, 3, 3, 1)), True) == ethosu.BlockTraversal.DEPTH_FIRST


def test_explicit_constants_override_the_ir() -> None:
    """Weights and biases may come from a side table (e.g. after a pass replaced the constant)."""
    single = single_op_module("conv2d", np.random.default_rng(9), shape=(4, 4, 4), out_channels=4)
    op = single.op
    weights = constant_array(op.weight.owner.value)
    bias = constant_array(op.bias.owner.value)
    default = lower_op(op, _placements(single), accelerator=ACCELERATOR)
    same = lower_op(op, _placements(single), accelerator=ACCELERATOR, constants={op.weight: weights, op.bias: bias})
    other = lower_op(
        op, _placements(single), accelerator=ACCELERATOR, constants={op.weight: -weights, op.bias: bias + 1}
    )
    assert [b.data for b in same.constants] == [b.data for b in default.constants]
    assert all(a.data != b.data for a, b in zip(other.constants, default.constants, strict=True))


def test_constant_layout_is_relocatable() -> None:
    """Lower once at address 0 to size the constants, again at the allocated address."""
    single = single_op_module("conv2d", np.random.default_rng(10), shape=(6, 6, 8), out_channels=24)
    stripes = [Box(0, 0, 0, 6, 6, 16), Box(0, 0, 16, 6, 6, 8)]
    at_zero = lower_op(single.op, _placements(single), stripes, accelerator=ACCELERATOR)
    placed = lower_op(
        single.op, _placements(single), stripes, accelerator=ACCELERATOR, constant_region=1, constant_address=0x2000
    )
    assert placed.constant_data == at_zero.constant_data
    assert placed.constant_size == len(at_zero.constant_data)
    for moved, original in zip(placed.constants, at_zero.constants, strict=True):
        assert moved.range.as_tuple() == (1, original.range.address + 0x2000, original.range.length)
