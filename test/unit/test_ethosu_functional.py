"""The `ethosu` functional model (`interpreter/ethosu.py`) against the `nn` interpreter.

Every lowered op kind runs nn op -> `lower_op` -> `ethosu.command_stream` -> functional model
(memory regions, tile boxes, strides, layouts, MLW-decoded weights, bias records, the
registers Vela programs) and is compared bit for bit with `interpreter/nn.py`, on the whole
tensor as one stripe, on row stripes, with the input or the output in a wrapping rolling
buffer, and in NHCWB16. Compared outputs must not be degenerate.

Status (what these tests establish):
* bit-exact: conv2d, depthwise_conv2d, max and average pool2d (zero points programmed as 0,
  so the NPU rounds the raw average as TFLite does), add, sub, mul, minimum, maximum,
  rescale (TFLite QUANTIZE int8 -> int8 as a fused-quantize 1x1 average pool), and tanh,
  sigmoid, leaky_relu, hard_swish, relu as 8-bit table lookups (the table is the reference kernel on
  all 256 inputs, DMA'd to SHRAM; exact by construction, the test checks the plumbing), mean over H
  and W (one depthwise convolution carrying TFLite's folded 1/num multiplier), pad (copy plus
  border fills) and 2x nearest resize (IFM upscaling). ADD/SUB are exact on both of Vela's
  scaling paths (advanced operand rescale, and the simplified one for equal input scales).
* Vela's own streams: the register streams Vela 5.2.0 (Regor) generates for
  ds_cnn_kws_nosoftmax and resnet8_nosoftmax, executed by the model, equal LiteRT's output
  bit for bit (`test_velas_command_stream_runs_bit_exact_to_litert`).
* not bit-exact: fully_connected. LiteRT's reference int8 FULLY_CONNECTED (what the `nn`
  interpreter mirrors) rescales in double, `round(acc * (in_s * w_s / out_s))`; the NPU (and
  Vela's lowering of FC to a 1x1 convolution) uses the Q31 fixed-point multiplier with
  TFLite's double rounding, like TFLite's optimized kernels. They differ by one LSB on some
  elements; `test_fully_connected_matches_the_fixed_point_formulation` shows the NPU result is
  exactly the fixed-point FC.
* assumed, not verified (no Ethos-U simulator exists offline): the hardware meaning of the TFL
  rounding mode (TFLite's double rounding) and of Vela's ADD/SUB "advanced" operand scaling;
  see the module docstring of `interpreter/ethosu.py`.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cascade.dialects import ethosu
from cascade.ethos_u.npu_examples import row_stripes, run_on_npu, single_op_module
from cascade.ethos_u.npu_lowering import Box
from cascade.interpreter.ethosu import _round_half_away, _round_half_up, scale_values
from cascade.interpreter.nn import run_program
from cascade.interpreter.quantization import multiply_by_quantized_multiplier, quantize_multiplier

SETTINGS = settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

LAYOUTS = st.sampled_from([ethosu.Layout.NHWC, ethosu.Layout.NHCWB16])


def _inputs(single, rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.integers(-128, 128, size=shape).astype(np.int8) for shape in single.input_shapes]


def _output_hwc(single) -> tuple[int, int, int]:
    shape = tuple(single.op.results[0].type.get_shape())
    return shape[1:] if len(shape) == 4 else (shape[0], 1, shape[1])


def _check(single, seed: int, mode: str, layout: ethosu.Layout, rows: int) -> None:
    """Runs `single` on the NPU model in `mode` and compares with the nn interpreter."""
    rng = np.random.default_rng(seed)
    inputs = _inputs(single, rng)
    reference = run_program(single.module, inputs).outputs[0]
    assert len(np.unique(reference)) >= 4, "degenerate reference output"
    out_shape = _output_hwc(single)
    count = len(single.input_shapes) + 1
    options: dict = {"layouts": [layout] * count}
    if mode == "channels":
        height, width, depth = out_shape
        split = 16 if layout == ethosu.Layout.NHCWB16 else max(1, depth // 2)
        if depth > split:
            options["stripes"] = [Box(0, 0, 0, height, width, split), Box(0, 0, split, height, width, depth - split)]
    elif mode != "whole":
        options["stripes"] = row_stripes(out_shape, rows)
    if mode == "rolling_input":
        needed = max(
            single.op.input_regions(stripe.to_region(len(reference.shape)))[0].shape[1] for stripe in options["stripes"]
        )
        options["rolling_input_rows"] = needed + 1
    if mode == "rolling_output":
        options["rolling_output_rows"] = rows + 1
    run = run_on_npu(single, inputs, **options)
    np.testing.assert_array_equal(run.output, reference)


def test_rolling_buffers_wrap_in_both_directions() -> None:
    """Deterministic cases whose stripes do wrap: reads through tile 2 of the IFM and writes
    through tile 2 of the OFM (`_check` covers random geometry, wrapping or not)."""
    for kind in ("conv2d", "depthwise_conv2d", "max_pool", "avg_pool", "add", "rescale"):
        rng = np.random.default_rng(3)
        single = single_op_module(kind, rng, shape=(9, 7, 20), stride=(2, 2) if kind == "conv2d" else (1, 1))
        inputs = _inputs(single, rng)
        reference = run_program(single.module, inputs).outputs[0]
        assert len(np.unique(reference)) >= 4
        out_shape = _output_hwc(single)
        for options in ({"rolling_input_rows": 7}, {"rolling_output_rows": 3}):
            run = run_on_npu(single, inputs, stripes=row_stripes(out_shape, 2), **options)
            np.testing.assert_array_equal(run.output, reference)
            fms = [c.ifm if "rolling_input_rows" in options else c.ofm for c in run.stream.commands]
            # A wrapping box has fewer rows in tile 0 than in total; tile 2 is the buffer start.
            wrapped = [fm for fm in fms if fm.tiles.height_0 < fm.shape.height]
            assert wrapped, f"{kind} {options}: no stripe wrapped"
            buffer = run.placements[0 if "rolling_input_rows" in options else -1]
            assert all(fm.tiles.addresses[2] == buffer.address for fm in wrapped)


MODES = st.sampled_from(["whole", "stripes", "rolling_input", "rolling_output"])
ACTIVATIONS = st.sampled_from(["none", "relu", "relu6"])


@SETTINGS
@given(
    kind=st.sampled_from(["conv2d", "depthwise_conv2d"]),
    size=st.tuples(st.integers(5, 10), st.integers(3, 8), st.integers(1, 24)),
    out_channels=st.integers(1, 24),
    kernel=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    stride=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    dilation=st.sampled_from([(1, 1), (2, 1), (1, 2)]),
    pad=st.integers(0, 1),
    activation=ACTIVATIONS,
    per_channel=st.booleans(),
    mode=st.sampled_from(["whole", "stripes", "rolling_input", "rolling_output", "channels"]),
    layout=LAYOUTS,
    rows=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_convolutions_are_bit_exact(
    kind, size, out_channels, kernel, stride, dilation, pad, activation, per_channel, mode, layout, rows, seed
) -> None:
    pad = min(pad, kernel[0] - 1, kernel[1] - 1)  # no stripe may read only padding
    single = single_op_module(
        kind,
        np.random.default_rng(seed),
        shape=size,
        out_channels=out_channels,
        kernel=kernel,
        stride=stride,
        dilation=dilation,
        padding=(pad, pad, pad, pad),
        activation=activation,
        per_channel=per_channel,
    )
    if min(_output_hwc(single)) < 1:
        return
    if len(np.unique(run_program(single.module, _inputs(single, np.random.default_rng(seed))).outputs[0])) < 4:
        return  # saturated example: nothing to compare
    _check(single, seed, mode, layout, rows)


@SETTINGS
@given(
    kind=st.sampled_from(["max_pool", "avg_pool"]),
    size=st.tuples(st.integers(4, 9), st.integers(3, 8), st.integers(1, 20)),
    kernel=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    stride=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    pad=st.integers(0, 1),
    activation=ACTIVATIONS,
    mode=MODES,
    layout=LAYOUTS,
    rows=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_pooling_is_bit_exact(kind, size, kernel, stride, pad, activation, mode, layout, rows, seed) -> None:
    pad = min(pad, kernel[0] - 1, kernel[1] - 1)  # TFLite rejects windows entirely in padding
    single = single_op_module(
        kind,
        np.random.default_rng(seed),
        shape=size,
        kernel=kernel,
        stride=stride,
        padding=(pad, pad, pad, pad),
        activation=activation,
    )
    if len(np.unique(run_program(single.module, _inputs(single, np.random.default_rng(seed))).outputs[0])) < 4:
        return
    _check(single, seed, mode, layout, rows)


@SETTINGS
@given(
    kind=st.sampled_from(
        ["add", "sub", "mul", "minimum", "maximum", "rescale", "tanh", "sigmoid", "leaky_relu", "hard_swish", "relu"]
    ),
    size=st.tuples(st.integers(2, 8), st.integers(2, 8), st.integers(1, 20)),
    activation=ACTIVATIONS,
    broadcast=st.sampled_from([None, None, "c", "hw", "w", "first:c", "first:hwc"]),
    mode=MODES,
    layout=LAYOUTS,
    rows=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_elementwise_is_bit_exact(kind, size, activation, broadcast, mode, layout, rows, seed) -> None:
    if kind in ("minimum", "maximum", "rescale", "tanh", "sigmoid", "leaky_relu", "hard_swish", "relu"):
        activation = "none"
    if mode == "rolling_input" and broadcast is not None and broadcast.startswith("first:"):
        mode = "stripes"  # the rolling buffer holds the first operand, which must be full size
    single = single_op_module(kind, np.random.default_rng(seed), shape=size, activation=activation, broadcast=broadcast)
    if len(np.unique(run_program(single.module, _inputs(single, np.random.default_rng(seed))).outputs[0])) < 4:
        return
    _check(single, seed, mode, layout, rows)


@SETTINGS
@given(
    kind=st.sampled_from(["pad", "resize_nearest", "mean"]),
    size=st.tuples(st.integers(2, 7), st.integers(2, 7), st.integers(1, 24)),
    padding=st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)),
    mode=st.sampled_from(["whole", "stripes", "channels"]),
    layout=LAYOUTS,
    rows=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_mean_pad_and_resize_are_bit_exact(kind, size, padding, mode, layout, rows, seed) -> None:
    single = single_op_module(kind, np.random.default_rng(seed), shape=size, padding=padding)
    if len(np.unique(run_program(single.module, _inputs(single, np.random.default_rng(seed))).outputs[0])) < 4:
        return
    if kind == "mean" and mode == "stripes":
        mode = "channels"  # the output is one pixel per channel
    if kind == "resize_nearest":
        rows *= 2  # upscaled stripes start on even rows
    _check(single, seed, mode, layout, rows)


@pytest.mark.parametrize("output_factor", [None, 1.0, 4.0, 0.5])
def test_add_with_equal_input_scales(output_factor: float | None) -> None:
    """Equal input scales: Vela uses its simplified ADD scaling (integer OPA/OPB scales, no
    operand rescale) when the OFM scale's low 12 bits are zero (output scale = input scale
    times a power of two here), and the advanced scaling otherwise. Both are bit-exact."""
    from cascade.dialects import nn
    from cascade.interpreter.ethosu import _registers

    rng = np.random.default_rng(11)
    paths = set()
    for _ in range(6):
        single = single_op_module("add", rng, shape=(4, 5, 6), activation="none")
        op = single.op
        op.properties["input2_quant"] = op.input_quant
        if output_factor is not None:
            op.properties["output_quant"] = nn.QuantAttr(op.input_quant.scales[0] * output_factor, 3)
        inputs = _inputs(single, rng)
        reference = run_program(single.module, inputs).outputs[0]
        assert len(np.unique(reference)) >= 4
        run = run_on_npu(single, inputs)
        np.testing.assert_array_equal(run.output, reference)
        registers = _registers(run.stream.commands[0], "ethos-u55-128")
        paths.add((registers.reg("IFM_PRECISION") >> 8) & 3)
    # op_to_scale 0: simplified scaling; 1 or 2: the advanced scaling of one operand.
    assert paths == {0} if output_factor is not None else paths <= {1, 2}


@pytest.mark.parametrize("seed", range(6))
def test_fully_connected_matches_the_fixed_point_formulation(seed: int) -> None:
    """The NPU's FC is TFLite's fixed-point FC; LiteRT's reference FC rounds in double."""
    rng = np.random.default_rng(seed)
    single = single_op_module("fully_connected", rng, shape=(6, 1, 24), out_channels=10, activation="none")
    op = single.op
    inputs = _inputs(single, rng)
    run = run_on_npu(single, inputs, stripes=row_stripes((6, 1, 10), 4))
    reference = run_program(single.module, inputs).outputs[0]
    assert len(np.unique(reference)) >= 4
    # The documented inexactness: at most one LSB from LiteRT's reference kernel.
    assert np.abs(run.output.astype(int) - reference.astype(int)).max() <= 1
    from cascade.interpreter.nn import constant_array

    weights = constant_array(op.weight.owner.value).astype(np.int64)
    bias = constant_array(op.bias.owner.value).astype(np.int64)
    acc = (inputs[0].astype(np.int64) - op.input_quant.zero_points[0]) @ weights.T + bias
    multiplier, shift = quantize_multiplier(
        op.input_quant.scales[0] * op.weight_quant.scales[0] / op.output_quant.scales[0]
    )
    fixed = np.clip(
        multiply_by_quantized_multiplier(acc, multiplier, shift) + op.output_quant.zero_points[0], -128, 127
    )
    np.testing.assert_array_equal(run.output, fixed)


def test_scale_values_is_tflite_multiply_by_quantized_multiplier() -> None:
    """TFL rounding mode == TFLite's MultiplyByQuantizedMultiplier, for left and right shifts."""
    rng = np.random.default_rng(0)
    acc = rng.integers(-(2**24), 2**24, size=4000)
    acc[:8] = [0, 1, -1, 2**23, -(2**23), 12345, -12345, 7]
    for real in (0.0003, 0.0123, 0.4999, 0.75, 1.5, 3.99):
        multiplier, shift = quantize_multiplier(real)
        expected = multiply_by_quantized_multiplier(acc if shift <= 0 else acc % 64, multiplier, shift)
        got = scale_values(acc if shift <= 0 else acc % 64, multiplier, 31 - shift, ethosu.RoundingMode.TFL)
        np.testing.assert_array_equal(got, expected)


def test_rounding_helpers() -> None:
    x = np.array([-6, -5, -3, -2, 2, 3, 5, 6])
    np.testing.assert_array_equal(_round_half_away(x, 2), [-2, -1, -1, -1, 1, 1, 1, 2])
    np.testing.assert_array_equal(_round_half_up(x, 2), [-1, -1, -1, 0, 1, 1, 1, 2])
    np.testing.assert_array_equal(scale_values(x, 1, 2, ethosu.RoundingMode.TRUNCATE), [-1, -1, 0, 0, 0, 0, 1, 1])
    np.testing.assert_array_equal(scale_values(x, 1, 2, ethosu.RoundingMode.NATURAL), [-1, -1, -1, 0, 1, 1, 1, 2])


def test_dma_copies_constants_into_sram_before_the_convolution() -> None:
    """Weights DMA'd from flash to SRAM: the conv reads the SRAM copy."""
    from cascade.ethos_u.npu_lowering import Placement, lower_op
    from cascade.interpreter.ethosu import EthosUMachine, read_feature_map, write_feature_map

    rng = np.random.default_rng(7)
    single = single_op_module("conv2d", rng, shape=(6, 6, 8), out_channels=8)
    inputs = _inputs(single, rng)
    ifm, ofm = Placement(1, 0, (6, 6, 8)), Placement(1, 0x200, (6, 6, 8))
    staging = 0x400
    lowered = lower_op(single.op, [ifm, ofm], constant_region=1, constant_address=staging)
    flash = lowered.constant_data
    dma = ethosu.DmaOp(ethosu.AddressRangeAttr(0, 0, len(flash)), ethosu.AddressRangeAttr(1, staging, len(flash)))
    stream = ethosu.CommandStreamOp("ethos-u55-128", [dma, *(c.clone() for c in lowered.commands)])
    sram = np.zeros(staging + len(flash), dtype=np.uint8)
    write_feature_map(sram, ifm.feature_map(ifm_box := _full(ifm), None), inputs[0].reshape(6, 6, 8))
    machine = EthosUMachine("ethos-u55-128", {0: flash, 1: sram})
    machine.run(stream)
    out = read_feature_map(machine.memory[1], ofm.feature_map(_full(ofm), None))
    reference = run_program(single.module, inputs).outputs[0]
    np.testing.assert_array_equal(out.reshape(reference.shape), reference)
    assert ifm_box.height == 6


def _full(placement):
    from cascade.ethos_u.npu_lowering import Box

    return Box.full(placement.shape)


# --------------------------------------------------------------------------- #
# Vela's own command streams: the functional model against LiteRT
# --------------------------------------------------------------------------- #

MODELS = __import__("pathlib").Path(__file__).resolve().parents[1] / "models"


def _vela_raw(model: str, tmp_path) -> dict:
    """Compiles a test model with the vela CLI (`--output-format raw`) and loads the .npz."""
    import shutil
    import subprocess

    if shutil.which("vela") is None:
        pytest.skip("needs the vela CLI")
    subprocess.run(
        [
            "vela",
            str(MODELS / f"{model}.tflite"),
            "--accelerator-config",
            "ethos-u55-128",
            "--output-format",
            "raw",
            "--output-dir",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
    )
    with np.load(tmp_path / f"{model}_vela.npz", allow_pickle=True) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("model", ["ds_cnn_kws_nosoftmax", "resnet8_nosoftmax"])
def test_velas_command_stream_runs_bit_exact_to_litert(model: str, tmp_path) -> None:
    """Executes the register stream Vela (Regor) generates for a whole model: DMAs of
    weights, NHCWB16 intermediates, depth-sliced convolutions, residual ADDs with Vela's
    operand scaling, the mean as an int32 depthwise sum times a constant. The output equals
    LiteRT's reference kernels bit for bit: evidence for the rounding and scaling semantics
    the model assumes, on streams we did not generate."""
    from cascade.ethos_u import serialize
    from cascade.interpreter.ethosu import EthosUMachine
    from cascade.interpreter.litert import run_reference

    raw = _vela_raw(model, tmp_path)
    words = serialize.command_words(raw["cmd_data"].item())
    tflite = (MODELS / f"{model}.tflite").read_bytes()
    in_shape = tuple(int(v) for v in raw["input_shape"][0][2:])  # NHWC of the 6-D shape Vela records
    out_shape = tuple(int(v) for v in raw["output_shape"][0][2:])
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.integers(-128, 128, size=in_shape).astype(np.int8)
        scratch = np.zeros(int(raw["scratch_size"]) + 16, dtype=np.uint8)
        offset = int(raw["input_offset"][0])
        scratch[offset : offset + x.size] = x.view(np.uint8).ravel()
        machine = EthosUMachine("ethos-u55-128", {0: raw["weight_data"].item(), 1: scratch})
        machine.run_register_stream(words)
        out_offset = int(raw["output_offset"][0])
        size = int(np.prod(out_shape))
        ours = machine.memory[1][out_offset : out_offset + size].view(np.int8)
        reference = np.asarray(run_reference(tflite, [x]).outputs[0]).ravel()
        assert len(np.unique(reference)) >= 4
        np.testing.assert_array_equal(ours, reference)


@pytest.mark.parametrize(
    "kind",
    ["conv2d", "depthwise_conv2d", "max_pool", "avg_pool", "add", "mul", "fully_connected", "tanh", "mean", "pad"],
)
def test_serialized_stream_computes_the_same(kind: str) -> None:
    """The bytes we emit, executed as registers (no `ethosu` ops involved), give the nn result:
    lowering -> `npu_generate_register_command_stream` -> `run_register_stream`."""
    from cascade.ethos_u import serialize
    from cascade.interpreter.ethosu import EthosUMachine, read_feature_map, write_feature_map

    rng = np.random.default_rng(21)
    single = single_op_module(kind, rng, shape=(7, 6, 12), activation="relu" if kind == "conv2d" else "none")
    inputs = _inputs(single, rng)
    reference = run_program(single.module, inputs).outputs[0]
    assert len(np.unique(reference)) >= 4
    run = run_on_npu(single, inputs, stripes=row_stripes(_output_hwc(single), 3))
    words = serialize.command_stream_words(run.stream)
    sram = np.zeros(sum(-(-p.size // 16) * 16 for p in run.placements) + 16, dtype=np.uint8)
    for placement, value in zip(run.placements, inputs, strict=False):
        write_feature_map(sram, placement.feature_map(_full(placement), None), value.reshape(placement.shape))
    machine = EthosUMachine("ethos-u55-128", {0: run.lowered.constant_data, 1: sram})
    machine.run_register_stream(words)
    out = run.placements[-1]
    result = read_feature_map(machine.memory[1], out.feature_map(_full(out), None))
    np.testing.assert_array_equal(
        result.reshape(reference.shape), reference if kind != "fully_connected" else run.output
    )
