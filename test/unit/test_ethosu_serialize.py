"""Serialization through Vela and the disassembler (`ethos_u/serialize.py`).

Round trip: lowered ops -> `npu_generate_register_command_stream` -> `disassemble` -> the same
ops, compared with `command_signature` (everything the registers encode: geometry, tiles,
strides, layouts, addresses, constant ranges, zero points, clamps, kernel, padding, block
config, traversal, modes). Re-serializing the disassembled stream reproduces the original
words except the OFM/OPA/OPB scale registers, whose float quantization scales are not in the
stream.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cascade.dialects import ethosu
from cascade.ethos_u import serialize
from cascade.ethos_u.npu_examples import row_stripes, run_on_npu, single_op_module
from cascade.ethos_u.npu_lowering import Box

KINDS = [
    "conv2d",
    "depthwise_conv2d",
    "max_pool",
    "avg_pool",
    "add",
    "sub",
    "mul",
    "minimum",
    "maximum",
    "fully_connected",
    "rescale",
    "tanh",
    "leaky_relu",
    "hard_swish",
    "relu",
    "mean",
    "pad",
    "resize_nearest",
]
SCALE_REGISTERS = {"NPU_SET_OFM_SCALE", "NPU_SET_OPA_SCALE", "NPU_SET_OPB_SCALE"}
MODELS = Path(__file__).resolve().parents[1] / "models"


def _lowered_stream(kind: str, seed: int, **options) -> ethosu.CommandStreamOp:
    rng = np.random.default_rng(seed)
    single = single_op_module(kind, rng, shape=(9, 7, 20), activation="relu" if kind in ("conv2d", "add") else "none")
    inputs = [rng.integers(-128, 128, size=s).astype(np.int8) for s in single.input_shapes]
    shape = tuple(single.op.results[0].type.get_shape())
    hwc = shape[1:] if len(shape) == 4 else (shape[0], 1, shape[1])
    return run_on_npu(single, inputs, stripes=row_stripes(hwc, 2), **options).stream


def _without_scales(words: list[int]) -> list[tuple[int, ...]]:
    """The commands of a stream, scale-register writes left out and the operand-to-scale
    bits of IFM_PRECISION (chosen from the float scales) cleared."""
    from ethosu.vela.ethos_u55_regs.ethos_u55_regs import cmd0, cmd1

    commands, index = [], 0
    while index < len(words):
        word = words[index]
        if word & serialize.PAYLOAD_FLAG:
            if f"NPU_SET_{cmd1(word & 0x3FF).name.removeprefix('NPU_SET_')}" not in SCALE_REGISTERS:
                commands.append((word, words[index + 1]))
            index += 2
        else:
            if word & 0x3FF == cmd0.NPU_SET_IFM_PRECISION.value:
                word &= ~(0x300 << 16)
            commands.append((word,))
            index += 1
    return commands


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "options",
    [{}, {"rolling_output_rows": 3}, {"layouts": [ethosu.Layout.NHCWB16] * 3}],
    ids=["nhwc", "rolling", "nhcwb16"],
)
def test_round_trip(kind: str, options: dict) -> None:
    if "layouts" in options and kind not in ("add", "sub", "mul", "minimum", "maximum"):
        options = {"layouts": [ethosu.Layout.NHCWB16] * 2}
    stream = _lowered_stream(kind, 1, **options)
    words = serialize.command_stream_words(stream)
    back = serialize.disassemble(words)
    assert back.accelerator.data == stream.accelerator.data
    assert serialize.stream_signature(back.commands) == serialize.stream_signature(stream.commands)
    back.verify()
    again = serialize.command_stream_words(back)
    assert _without_scales(again) == _without_scales(words)
    if kind in ("conv2d", "depthwise_conv2d", "max_pool", "minimum", "maximum"):
        assert again == words  # nothing float-derived in these streams


def test_bytes_payload_and_words_disassemble_alike() -> None:
    stream = _lowered_stream("conv2d", 2)
    words = serialize.command_stream_words(stream)
    data = serialize.command_stream_bytes(stream)
    assert data == struct.pack(f"<{len(words)}I", *words)
    payload = serialize.driver_payload(stream)
    assert payload[:4] == b"COP1"
    # The stream follows the driver header, its start 16-byte aligned (NOPs pad the header).
    assert payload.endswith(data)
    assert (len(payload) - len(data)) % 16 == 0
    assert payload == serialize.driver_payload(words, "ethos-u55-128")
    signatures = [serialize.stream_signature(serialize.disassemble(d).commands) for d in (words, data, payload)]
    assert signatures[0] == signatures[1] == signatures[2] == serialize.stream_signature(stream.commands)


@pytest.mark.parametrize("accelerator", ["ethos-u55-64", "ethos-u65-256"])
def test_payload_names_the_accelerator(accelerator: str) -> None:
    # Block configs are chosen per accelerator: lower for the target, then name it again.
    stream = _lowered_stream("add", 3, accelerator=accelerator)
    retargeted = ethosu.CommandStreamOp(accelerator, [op.clone() for op in stream.commands])
    back = serialize.disassemble(serialize.driver_payload(retargeted))
    assert back.accelerator.data == accelerator
    assert serialize.stream_signature(back.commands) == serialize.stream_signature(stream.commands)
    assert serialize.command_stream_bytes(stream, accelerator) == serialize.command_stream_bytes(retargeted)


def test_dma_and_waits_round_trip() -> None:
    stream = _lowered_stream("conv2d", 4)
    conv = stream.commands[0]
    (weights,) = conv.weight_ranges
    dma = ethosu.DmaOp(
        ethosu.AddressRangeAttr(0, weights.address, weights.length),
        ethosu.AddressRangeAttr(1, 0x4000, weights.length),
    )
    commands = [dma, *(op.clone() for op in stream.commands)]
    combined = ethosu.CommandStreamOp("ethos-u55-128", commands)
    words = serialize.command_stream_words(combined)
    decoded = serialize.decode_registers(words)
    assert [d.opcode for d in decoded][:2] == ["NPU_OP_DMA_START", "NPU_OP_CONV"]
    back = serialize.disassemble(words)
    assert serialize.stream_signature(back.commands) == serialize.stream_signature(combined.commands)


def test_wrapping_tiles_survive_the_round_trip() -> None:
    stream = _lowered_stream("depthwise_conv2d", 5, rolling_input_rows=6)
    wrapping = [c for c in stream.commands if c.ifm.tiles.height_0 < c.ifm.shape.height]
    assert wrapping
    back = serialize.disassemble(serialize.command_stream_words(stream))
    for original, decoded in zip(stream.commands, back.commands, strict=True):
        assert decoded.ifm.tiles.as_tuple() == original.ifm.tiles.as_tuple()


def test_scalar_operand_round_trips() -> None:
    stream = _lowered_stream("mul", 6)
    mul = stream.commands[0]
    scalar = ethosu.ScalarAttr(0.5, ethosu.DataType.INT8, (0.25, 3))
    op = ethosu.ElementwiseOp(
        ethosu.ElementwiseKind.MUL, ifm=mul.ifm, ofm=mul.ofm, block_config=mul.block_config, ifm2=scalar
    )
    single = ethosu.CommandStreamOp("ethos-u55-128", [op])
    back = serialize.disassemble(serialize.command_stream_words(single))
    assert serialize.stream_signature(back.commands) == serialize.stream_signature(single.commands)


def test_stripe_box_values_are_decoded() -> None:
    stream = _lowered_stream("conv2d", 7)
    back = serialize.disassemble(serialize.command_stream_words(stream))
    first = back.commands[0]
    assert isinstance(first, ethosu.Conv2DOp)
    assert first.ofm.shape.as_tuple() == (2, 7, 8)
    assert first.padding.as_tuple() == (1, 1, 0, 1)
    assert Box(0, 0, 0, *first.ifm.shape.as_tuple()) == Box(0, 0, 0, 3, 7, 20)


@pytest.mark.skipif(shutil.which("vela") is None, reason="needs the vela CLI")
def test_disassembles_a_vela_written_tflite(tmp_path: Path) -> None:
    model = MODELS / "ds_cnn_kws_nosoftmax.tflite"
    subprocess.run(
        ["vela", str(model), "--accelerator-config", "ethos-u55-128", "--output-dir", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    stream = serialize.disassemble(tmp_path / "ds_cnn_kws_nosoftmax_vela.tflite")
    stream.verify()
    assert stream.accelerator.data == "ethos-u55-128"
    names = [op.name for op in stream.commands]
    assert {"ethosu.conv2d", "ethosu.depthwise_conv2d", "ethosu.dma"} <= set(names)
    # Our serializer accepts Vela's own commands and reproduces their geometry.
    again = serialize.disassemble(serialize.command_stream_words(stream))
    assert serialize.stream_signature(again.commands) == serialize.stream_signature(stream.commands)
