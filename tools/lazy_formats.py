"""Defers compiling the declarative assembly formats of xDSL operations until an operation of
that kind is first parsed or printed. Used by `cascade-opt`'s entry point only.

`irdl_op_definition` turns each `assembly_format` string into a `FormatProgram` while its module
imports: 76 of them in a compile, 0.05 to 0.07 s of the 0.5 to 0.6 s a compile spends
importing (on a slow machine), though a compile to `.tflite` prints and parses none of them.
`defer_assembly_formats` makes `FormatProgram.from_str` return a stand-in that compiles the
format on its first `parse` or `print` and keeps it.

A malformed format then fails on first use instead of at import. Only the console script
defers: the library, and so the tests, compile every format when its operation is defined.
"""

from __future__ import annotations

from functools import partial
from typing import Any


class _DeferredProgram:
    """A `FormatProgram` compiled on first use."""

    __slots__ = ("_compile", "_op_def", "_program", "_text")

    def __init__(self, compile_format: Any, text: str, op_def: Any) -> None:
        self._compile = compile_format
        self._text = text
        self._op_def = op_def
        self._program: Any = None

    def program(self) -> Any:
        if self._program is None:
            self._program = self._compile(self._text, self._op_def)
        return self._program

    def parse(self, parser: Any, op_type: Any) -> Any:
        return self.program().parse(parser, op_type)

    def print(self, printer: Any, op: Any) -> None:
        return self.program().print(printer, op)


def defer_assembly_formats() -> None:
    """Compile assembly formats on first use from now on (before the dialects import)."""
    from xdsl.irdl.declarative_assembly_format import FormatProgram

    compile_format = FormatProgram.from_str
    if isinstance(compile_format, partial) and compile_format.func is _DeferredProgram:
        return  # deferred already
    # A partial is no descriptor: the class attribute is called as the static method was.
    FormatProgram.from_str = partial(_DeferredProgram, compile_format)  # type: ignore[method-assign]
