"""xDSL output targets for lowered IR (`cascade-opt -t ethosu-cs ...`).

`ethosu-cs` writes the register command stream of every `ethosu.command_stream` in the module
(in walk order), as Vela's `npu_generate_register_command_stream` produces it, in text: one
header comment line per stream, then one little-endian 32-bit word per line in hex
(`0x%08x`). With `payload=true` it writes the COP1 driver payload instead
(`npu_create_driver_payload`: the header the Ethos-U driver expects, then the stream), the
words of the payload's bytes. xDSL targets write text, so the bytes are given as words.

`ethosu-tflite` writes a deployable .tflite in Vela's output format (`ethos_u.tflite_output`).
It is a `BinaryTarget`: `cascade-opt` writes its bytes to the `-o` file, or to stdout when
stdout is not a terminal.
"""

from __future__ import annotations

import contextlib
import io
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

__all__ = [
    "BinaryTarget",
    "EthosUCommandStreamTarget",
    "EthosUTFLiteTarget",
    "command_stream_text",
    "get_all_targets",
]


def command_stream_text(module: ModuleOp, payload: bool = False) -> str:
    """The text `ethosu-cs` writes for `module` (module docstring)."""
    from cascade.dialects import ethosu
    from cascade.ethos_u.serialize import command_stream_words, driver_payload

    lines: list[str] = []
    streams = [op for op in module.walk() if isinstance(op, ethosu.CommandStreamOp)]
    for index, stream in enumerate(streams):
        # Vela prints configuration warnings on stdout; keep them out of the written stream.
        words = command_stream_words(stream)
        with contextlib.redirect_stdout(io.StringIO()):
            data = driver_payload(words, stream.accelerator.data) if payload else b""
        if payload:
            words = list(struct.unpack(f"<{len(data) // 4}I", data))
        kind = "driver payload" if payload else "command stream"
        lines.append(f"// ethosu.command_stream {index} ({stream.accelerator.data}): {kind}, {len(words)} words")
        lines.extend(f"0x{word:08x}" for word in words)
    return "\n".join(lines) + ("\n" if lines else "")


@dataclass(frozen=True)
class EthosUCommandStreamTarget(Target):
    """`ethosu-cs{payload=false}`: the register command streams of the module, in hex words."""

    name: ClassVar[str] = "ethosu-cs"

    payload: bool = False

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from cascade.dialects import ethosu

        if not any(isinstance(op, ethosu.CommandStreamOp) for op in module.walk()):
            raise DiagnosticException(
                f"{self.name}: the module has no ethosu.command_stream to write: run ethosu-pipeline "
                "(or lower-to-ethosu) first"
            )
        from cascade.ethos_u.serialize import SerializationError

        try:
            text = command_stream_text(module, self.payload)
        except SerializationError as error:
            raise DiagnosticException(f"{self.name}: {error}") from None
        output.write(text)


class BinaryTarget(Target):
    """A target whose output is bytes, not text: drivers call `emit_bytes`.

    `emit` (the text interface xDSL tools use) refuses, since bytes do not survive a text
    stream."""

    def emit_bytes(self, ctx: Context, module: ModuleOp) -> bytes:
        raise NotImplementedError

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        raise DiagnosticException(f"target '{self.name}' writes binary output; use cascade-opt with -o FILE")


@dataclass(frozen=True)
class EthosUTFLiteTarget(BinaryTarget):
    """`ethosu-tflite`: the lowered module as a .tflite with `ethos-u` custom operators."""

    name: ClassVar[str] = "ethosu-tflite"

    def emit_bytes(self, ctx: Context, module: ModuleOp) -> bytes:
        from cascade.ethos_u.serialize import SerializationError
        from cascade.ethos_u.tflite_output import TFLiteOutputError, lowered_tflite

        try:
            return lowered_tflite(module)
        except (TFLiteOutputError, SerializationError) as error:
            raise DiagnosticException(f"{self.name}: {error}") from None


def _ethosu_cs() -> type[Target]:
    return EthosUCommandStreamTarget


def _ethosu_tflite() -> type[Target]:
    return EthosUTFLiteTarget


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    """Our targets by name, as the factories `xdsl_opt_main.available_targets` (and
    `Universe.all_targets`) hold: no-argument callables returning the Target class."""
    return {EthosUCommandStreamTarget.name: _ethosu_cs, EthosUTFLiteTarget.name: _ethosu_tflite}
