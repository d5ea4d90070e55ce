"""TOSA import: TFLite models through Arm's converter, TOSA MLIR text into xDSL, then `nn`.

    .tflite --tosa-converter-for-tflite--> TOSA (custom syntax, #loc aliases)
            --tosa-opt --mlir-print-op-generic --mlir-print-local-scope--> generic TOSA text
            --xDSL parser, cascade's `tosa` dialect--> ModuleOp --legalize-tosa--> nn

The two tools are separate programs (tosa-tools pins its own numpy), run as subprocesses. They
are found through the environment variables TOSA_CONVERTER and TOSA_OPT, else on PATH. The
generic form is what xDSL reads reliably: custom TOSA syntax differs between MLIR builds, and
`--mlir-print-local-scope` inlines the `#loc` aliases xDSL cannot resolve.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import get_all_dialects as get_xdsl_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect
from xdsl.parser import Parser

from cascade.universe import get_all_dialects

CONVERTER_ENV = "TOSA_CONVERTER"
TOSA_OPT_ENV = "TOSA_OPT"


class TosaToolError(Exception):
    """A TOSA tool is missing or failed; the message says which and why."""


def _tosa_dialect() -> Dialect:
    from cascade.dialects.tosa import TOSA

    return TOSA


def make_tosa_context() -> Context:
    """xDSL's dialects and ours, with cascade's `tosa` in place of xDSL's (which lacks conv2d)."""
    ctx = Context()
    for name, factory in {**get_xdsl_dialects(), **get_all_dialects()}.items():
        ctx.register_dialect(name, _tosa_dialect if name == "tosa" else factory)
    return ctx


def find_tool(env: str, name: str) -> str:
    """The path of a TOSA tool: `$env` if set, else `name` on PATH."""
    path = os.environ.get(env) or shutil.which(name)
    if not path:
        raise TosaToolError(f"{name} not found: install tosa-tools and tosa-converter-for-tflite, or set {env}")
    return path


def tosa_tools_available() -> bool:
    """Whether `tosa-converter-for-tflite` and `tosa-opt` are both found (`find_tool`)."""
    try:
        find_tool("TOSA_CONVERTER", "tosa-converter-for-tflite")
        find_tool("TOSA_OPT", "tosa-opt")
    except TosaToolError:
        return False
    return True


def _run(command: list[str], stdin: bytes) -> bytes:
    try:
        done = subprocess.run(command, input=stdin, capture_output=True, check=False)
    except OSError as error:
        raise TosaToolError(f"cannot run {command[0]}: {error.strerror or error}") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        raise TosaToolError(f"{Path(command[0]).name} failed: {message}")
    return done.stdout


def tflite_to_tosa(model: bytes, *, debug_info: bool = True) -> str:
    """TOSA MLIR in generic form for a .tflite model; `debug_info` names ops by TFLite tensor."""
    converter = [find_tool(CONVERTER_ENV, "tosa-converter-for-tflite"), "-", "--text"]
    if debug_info:
        converter.append("--emit-debug-info")
    text = _run(converter, model)
    tosa_opt = [find_tool(TOSA_OPT_ENV, "tosa-opt"), "-", "--mlir-print-op-generic", "--mlir-print-local-scope"]
    if debug_info:
        tosa_opt.append("--mlir-print-debuginfo")
    return _run(tosa_opt, text).decode()


def import_tflite_via_tosa(model: bytes, *, fully_connected: str = "tflite") -> ModuleOp:
    """A .tflite model as `nn`, through the converter, tosa-opt and `legalize-tosa`."""
    from cascade.passes.legalize_tosa import LegalizeTosaPass

    ctx = make_tosa_context()
    module = Parser(ctx, tflite_to_tosa(model), "<tflite>").parse_module()
    module.verify()
    LegalizeTosaPass(fully_connected=fully_connected).apply(ctx, module)
    module.verify()
    return module
