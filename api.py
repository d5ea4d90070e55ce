"""The Python API: run cascade-opt pipelines from another flow, in process.

    from cascade.api import CompileError, compile

    result = compile(tosa_generic_text, "legalize-tosa,cascade-plan,rolling-buffer,allocate-memory")
    result.module            # the xDSL ModuleOp after the pipeline
    result.text              # it printed (generic=True: generic form, for upstream MLIR tools)
    result.command_streams   # register command stream bytes of every ethosu.command_stream
    result.report            # the compile report (cascade.ethos_u.report), None if not planned

`source` is MLIR text (custom or generic form; TOSA in generic form too), an xDSL `ModuleOp`
(copied, never changed), the bytes of a .tflite model, or a `Path` to a .tflite or .mlir file.
`pipeline` is what `cascade-opt -p` takes. `target` is an output target (`ethosu-cs`, `mlir`);
by default the text is MLIR. Everything runs exactly as in the `cascade-opt` driver (same
dialects, passes, verification between passes), and bad input raises `CompileError` whose
message is the line `cascade-opt` would print after `cascade-opt: error: ` (for IR:
`file:line:col: error: ...`; text sources are named `<source>`).
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.arg_spec import ArgSpecParseError

__all__ = ["CompileError", "CompileResult", "compile"]

SOURCE_NAME = "<source>"


class CompileError(Exception):
    """Bad input or a failing pipeline; `str(error)` is cascade-opt's one-line message (the first
    line of it for parse errors, whose next lines show the source line and a caret)."""


@dataclass(frozen=True)
class CompileResult:
    """What `compile` returns (see the module docstring)."""

    module: ModuleOp
    text: str
    command_streams: list[bytes]
    report: dict[str, Any] | None


def _driver_args(pipeline: str, target: str | None, generic: bool) -> list[str]:
    args = ["-p", pipeline] if pipeline else []
    if target is not None:
        args += ["-t", target]
    if generic:
        args.append("--print-op-generic")
    return args


def _source_bytes(source: str | bytes | Path) -> tuple[bytes, str, str]:
    """(bytes, frontend, name) of a text, .tflite bytes or file source."""
    if isinstance(source, Path):
        try:
            data = source.read_bytes()
        except OSError as error:
            raise CompileError(f"cannot read '{source}': {error.strerror}") from None
        return data, "tflite" if source.suffix == ".tflite" else "mlir", str(source)
    if isinstance(source, str):
        return source.encode("utf-8"), "mlir", SOURCE_NAME
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(source), "tflite", SOURCE_NAME
    raise CompileError(
        f"source is {type(source).__name__}: give MLIR text (str), .tflite bytes, a Path or an xDSL ModuleOp"
    )


def compile(
    source: str | bytes | Path | ModuleOp,
    pipeline: str = "",
    *,
    target: str | None = None,
    generic: bool = False,
    accelerator: str | None = None,
) -> CompileResult:
    """Run `pipeline` on `source`; see the module docstring. `accelerator` names the
    accelerator for a report on IR whose pipeline names none (as `cascade-opt --accelerator`)."""
    from cascade.tools.cascade_opt import CascadeOptMain, _report

    started = time.perf_counter()
    driver: CascadeOptMain | None = None
    try:
        driver = CascadeOptMain(args=_driver_args(pipeline, target, generic))
        driver.keep_plan = True
        driver.args.accelerator = accelerator
        if isinstance(source, ModuleOp):
            module = source.clone()
            driver.args.input_file = SOURCE_NAME
        else:
            data, frontend, name = _source_bytes(source)
            driver.args.input_file = name
            parsed = driver.parse_chunk(io.BytesIO(data), frontend)
            assert parsed is not None
            module = parsed
        driver.apply_passes(module)
        text = driver.output_resulting_program(module)
        streams = _command_streams(module)
        report = _report_of(driver, time.perf_counter() - started)
    except CompileError:
        raise
    except (Exception, ArgSpecParseError) as error:
        message = _report(error, driver) if isinstance(error, Exception) else str(error)
        raise CompileError(message.removeprefix("cascade-opt: error: ")) from error
    return CompileResult(module, text, streams, report)


def _command_streams(module: ModuleOp) -> list[bytes]:
    from cascade.dialects import ethosu
    from cascade.ethos_u.serialize import command_stream_bytes

    return [command_stream_bytes(op) for op in module.walk() if isinstance(op, ethosu.CommandStreamOp)]


def _report_of(driver: Any, seconds: float) -> dict[str, Any] | None:
    from cascade.ethos_u.report import is_planned

    module, planned = driver.compiled
    if not is_planned(module) and planned is None:
        return None
    return driver.compile_report(seconds)
