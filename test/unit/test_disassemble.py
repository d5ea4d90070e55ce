"""`cascade-opt --disassemble`: our streams round-trip, Vela's own .tflite decodes, bad files fail in one line."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cascade.dialects import ethosu
from cascade.ethos_u.serialize import (
    command_stream_bytes,
    command_stream_words,
    disassemble_file,
    driver_payload,
    stream_signature,
)
from cascade.ethos_u.targets import command_stream_text
from cascade.frontends.loader import load_module
from cascade.tools.cascade_opt import run

MODELS = Path(__file__).parents[1] / "models"
ACCELERATOR = "ethos-u55-128"


@pytest.fixture(scope="module")
def lowered():
    from xdsl.context import Context

    from cascade.passes.ethosu_pipeline import EthosUPipelinePass

    module = load_module(MODELS / "resnet8.tflite")
    EthosUPipelinePass(accelerator=ACCELERATOR).apply(Context(), module)
    return module


def _streams(module) -> list[ethosu.CommandStreamOp]:
    return [op for op in module.walk() if isinstance(op, ethosu.CommandStreamOp)]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = run(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("form", ["text", "payload-text", "raw", "payload"])
def test_lowered_streams_round_trip(lowered, tmp_path: Path, form: str):
    """lower -> serialize -> disassemble gives the same operations (modulo what registers cannot
    hold: scales, names; `stream_signature`)."""
    (stream,) = _streams(lowered)
    path = tmp_path / "stream"
    if form == "text":
        path.write_text(command_stream_text(lowered))
    elif form == "payload-text":
        path.write_text(command_stream_text(lowered, payload=True))
    elif form == "raw":
        path.write_bytes(command_stream_bytes(stream))
    else:
        path.write_bytes(driver_payload(stream))
    (decoded,) = _streams(disassemble_file(path, ACCELERATOR))
    assert decoded.accelerator.data == ACCELERATOR
    assert len(decoded.commands) == len(stream.commands)
    assert stream_signature(decoded.commands) == stream_signature(stream.commands)
    # Serialized again, the disassembly is the same stream word for word: the elementwise
    # adds' scale registers come back from scales that reproduce them.
    assert command_stream_words(decoded) == command_stream_words(stream)
    # A bare stream does not hold the flash image: the disassembly does not invent one.
    assert "ethosu.flash" not in decoded.attributes


@pytest.mark.parametrize("model", ["resnet8", "mbv2_035_96"])
@pytest.mark.parametrize("accelerator", ["ethos-u55-32", "ethos-u65-512"])
def test_elementwise_scales_serialize_back_to_the_same_words(model: str, accelerator: str, tmp_path: Path):
    from xdsl.context import Context

    from cascade.passes.ethosu_pipeline import EthosUPipelinePass

    module = load_module(MODELS / f"{model}.tflite")
    EthosUPipelinePass(accelerator=accelerator).apply(Context(), module)
    (stream,) = _streams(module)
    adds = [c for c in stream.commands if isinstance(c, ethosu.ElementwiseOp)]
    assert adds  # the residual adds, whose OPA/OPB/OFM scales the registers alone hold
    path = tmp_path / "stream.bin"
    path.write_bytes(driver_payload(stream))
    (decoded,) = _streams(disassemble_file(path))
    assert command_stream_words(decoded) == command_stream_words(stream)
    scaled = [c for c in decoded.commands if isinstance(c, ethosu.ElementwiseOp) and c.ofm.quantization_or_none]
    assert len(scaled) == len(adds)
    assert all(c.ofm.quantization_or_none.scale_value is not None for c in scaled)


def test_cli_output_parses_back(lowered, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """The printed IR is ethosu IR that cascade-opt reads back as the same operations."""
    source = tmp_path / "cs.txt"
    source.write_text(command_stream_text(lowered))
    status, out, err = _cli(capsys, "--disassemble", str(source))
    assert status == 0, err
    assert err == ""
    ir_file = tmp_path / "decoded.mlir"
    ir_file.write_text(out)
    (stream,) = _streams(lowered)
    (parsed,) = _streams(load_module(ir_file))
    assert stream_signature(parsed.commands) == stream_signature(stream.commands)


def test_header_names_the_accelerator(lowered, tmp_path: Path):
    """A COP1 payload says which accelerator it is for; `--accelerator` does not override it."""
    (stream,) = _streams(lowered)
    path = tmp_path / "u65.bin"
    path.write_bytes(driver_payload(stream, "ethos-u65-256"))
    (decoded,) = _streams(disassemble_file(path, ACCELERATOR))
    assert decoded.accelerator.data == "ethos-u65-256"


VELA_COMMANDS = re.compile(r"\bNPU_OP_(CONV|DEPTHWISE|POOL|ELEMENTWISE|DMA_START)\b")


@pytest.mark.skipif(shutil.which("vela") is None, reason="needs vela")
def test_vela_tflite(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """Vela's own output for resnet8: one stream, as many operations as Vela's register stream
    listing shows, and its read-only tensor as the flash image."""
    listing = subprocess.run(
        [
            shutil.which("vela") or "vela",
            "--accelerator-config",
            ACCELERATOR,
            "--output-dir",
            str(tmp_path),
            "--verbose-register-command-stream",
            str(MODELS / "resnet8.tflite"),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    expected = len(VELA_COMMANDS.findall(listing))
    assert expected > 0
    compiled = tmp_path / "resnet8_vela.tflite"
    module = disassemble_file(compiled)
    (stream,) = _streams(module)
    assert stream.accelerator.data == ACCELERATOR  # from the payload's config word
    assert len(stream.commands) == expected
    flash = stream.attributes["ethosu.flash"]
    # Every DMA that reads flash reads inside the image.
    for dma in (c for c in stream.commands if isinstance(c, ethosu.DmaOp) and c.src.as_tuple()[0] == 0):
        _, address, length = dma.src.as_tuple()
        assert address + length <= len(flash.get_values())  # type: ignore[union-attr]
    status, out, err = _cli(capsys, "--disassemble", str(compiled))
    assert status == 0, err
    assert out.count("ethosu.command_stream") == 1


def _one_error_line(err: str, path: Path) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"cascade-opt: error: {path}: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (bytes(range(7)), "7 bytes is not a whole number of 32-bit words"),
        ((0x0001010F).to_bytes(4, "little") * 3, "no NPU_OP_STOP"),
        (b"0x0001010f\nhello\n", "line 2: expected a hex word"),
        (b"// ethosu.command_stream 0 (ethos-u55-128): command stream, 9 words\n0x00000000\n", "9 words"),
        ((100).to_bytes(4, "little") + b"TFL3" + bytes(8), "not a readable .tflite"),
    ],
)
def test_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str):
    path = tmp_path / "bad.bin"
    path.write_bytes(content)
    status, out, err = _cli(capsys, "--disassemble", str(path))
    assert status == 1
    assert out == ""
    assert message in _one_error_line(err, path)


def test_truncated_vela_tflite(tmp_path: Path, capsys: pytest.CaptureFixture[str], lowered):
    """A plain (not Vela-compiled) model, and our stream cut in half."""
    status, _, err = _cli(capsys, "--disassemble", str(MODELS / "resnet8.tflite"))
    assert status == 1
    assert "no ethos-u operator" in _one_error_line(err, MODELS / "resnet8.tflite")
    (stream,) = _streams(lowered)
    data = command_stream_bytes(stream)
    path = tmp_path / "half.bin"
    path.write_bytes(data[: len(data) // 8 * 4])
    status, _, err = _cli(capsys, "--disassemble", str(path))
    assert status == 1
    assert "truncated" in _one_error_line(err, path)


def test_unknown_accelerator(tmp_path: Path, capsys: pytest.CaptureFixture[str], lowered):
    path = tmp_path / "raw.bin"
    path.write_bytes(command_stream_bytes(_streams(lowered)[0]))
    status, _, err = _cli(capsys, "--disassemble", "--accelerator", "ethos-u99", str(path))
    assert status == 1
    assert "unknown accelerator 'ethos-u99'" in _one_error_line(err, path)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
