"""Reads a program from a file, whatever its format: .tflite is imported, anything else parsed as MLIR."""

from __future__ import annotations

from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import get_all_dialects as get_xdsl_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from cascade.frontends.tflite import TFLiteImportError, import_tflite
from cascade.universe import get_all_dialects, get_dialect_overrides


class LoadError(Exception):
    """The file cannot be read, parsed or verified; the message says where and why."""


def make_context() -> Context:
    """A context that knows xDSL's dialects and ours (loaded lazily, on first use); our `tosa` replaces xDSL's."""
    ctx = Context()
    for name, factory in {**get_xdsl_dialects(), **get_all_dialects(), **get_dialect_overrides()}.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)
    return ctx


def load_module(path: str | Path, ctx: Context | None = None) -> ModuleOp:
    """Import a .tflite model or parse and verify an MLIR file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise LoadError(f"{path}: cannot read: {error.strerror or error}") from None
    if path.suffix == ".tflite":
        try:
            return import_tflite(data)
        except TFLiteImportError as error:
            raise LoadError(f"{path}: {error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise LoadError(f"{path}: not a text MLIR file (and not named .tflite)") from None
    try:
        module = Parser(ctx or make_context(), text, str(path)).parse_module()
    except ParseError as error:
        raise LoadError(str(error).strip()) from None
    try:
        module.verify()
    except VerifyException as error:
        raise LoadError(f"{path}: {error}") from None
    return module
