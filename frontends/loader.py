"""Reads a program from a file, whatever its format: .tflite is imported, anything else parsed as MLIR.

Every failure is a `LoadError` with a one-line message that says where: `file:line:col: reason`
for MLIR (a verifier error also names the failing operation, `'nn.conv2d' op ...`), and
`file: operator #k NAME: ...` for TFLite. The same located parsing is used by `cascade-opt`
(`LocatingParser`, `format_location`, `failing_op`), so all tools report bad IR alike.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects import get_all_dialects as get_xdsl_dialects
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, NameLoc, StringAttr, UnknownLoc
from xdsl.ir import Block, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span, Token
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind, StringLiteral

from cascade.universe import get_all_dialects, get_dialect_overrides

EMPTY_INPUT = "the input has no operations (it is empty or only comments)"
"""Replaces xDSL's "Could not parse entire input!" for an input without a single token."""


_BACKTRACKING_STRING = r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
"""xDSL 0.75's string-literal pattern: a string that never closes (a file cut inside a weight
blob) makes it try every split of the text into runs, time doubling with each character
(28 hex digits: over 20 s). Possessive quantifiers match the same strings and fail at once."""
if MLIRLexer._unescaped_characters_regex.pattern == _BACKTRACKING_STRING:
    MLIRLexer._unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


def _lex_utf8_string(lex: Any) -> Any:
    """xDSL 0.75 lexes a string with escaped non-ASCII bytes as bytes, even when they are
    UTF-8 (its own docstring says they should be a string). So `loc("entr\\C3\\A9e")`, which
    it prints for a tensor named "entrée", did not parse back, and a string attribute came
    back as a `BytesAttr`. A literal whose bytes are UTF-8 is a string, as in MLIR."""

    def lex_string_literal(self: MLIRLexer, start_pos: int) -> Any:
        token = lex(self, start_pos)
        if token.kind is not MLIRTokenKind.BYTES_LIT:
            return token
        try:
            StringLiteral.from_span(token.span).bytes_contents.decode()
        except UnicodeDecodeError:
            return token
        return Token(MLIRTokenKind.STRING_LIT, token.span)

    return lex_string_literal


if not getattr(MLIRLexer._lex_string_literal, "_cascade_utf8", False):
    MLIRLexer._lex_string_literal = _lex_utf8_string(MLIRLexer._lex_string_literal)
    MLIRLexer._lex_string_literal._cascade_utf8 = True


class LoadError(Exception):
    """The file cannot be read, parsed or verified; the message says where and why."""


def make_context() -> Context:
    """A context that knows xDSL's dialects and ours (loaded lazily, on first use); our `tosa` replaces xDSL's."""
    ctx = Context()
    for name, factory in {**get_xdsl_dialects(), **get_all_dialects(), **get_dialect_overrides()}.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)
    return ctx


TOSA_HINT = (
    "legalize-tosa reads the TOSA of int8 CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, MEAN, "
    "MAX_POOL_2D, RESHAPE and QUANTIZE (a SOFTMAX becomes tosa.table and integer arithmetic, which it "
    "does not rebuild); compile the .tflite itself"
)
"""Why a TOSA operation has no definition here, and what to do instead."""


class LocatingParser(Parser):
    """A parser that gives each parsed operation without a `loc(...)` its file:line:col.

    xDSL keeps no source position on operations, so without this a verifier error could not
    say where the failing operation is written.
    """

    def __init__(self, *args: Any, line_offset: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line_offset = line_offset
        self.open_operations: list[FileLineColLoc] = []
        """Where each operation being parsed starts, outermost first."""

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if self._current_token.kind == MLIRTokenKind.EOF:
            self.raise_error(EMPTY_INPUT)
        return super().parse_module(allow_implicit_module)

    def _parse_block(self) -> Block:
        # xDSL expects another block here and says only " in block definition"; what is
        # usually missing is the `}` that closes the region.
        if self._current_token.kind == MLIRTokenKind.EOF:
            self.raise_error("unexpected end of input: '}' expected to close the region")
        if self._current_token.kind != MLIRTokenKind.CARET_IDENT:
            self.raise_error("'}' expected to close the region, or a block label (^bb0:)")
        return super()._parse_block()

    def _consume_token(self, expected_kind: Any = None) -> Token[Any, Any]:
        # xDSL asserts the token kind on some paths where the input decides it (a '(' inside
        # a dense literal takes the complex-number path, which asserts a ')'): make it the
        # parse error it is, at that token.
        found = self._current_token
        if expected_kind is not None and found.kind != expected_kind:
            what = "end of input" if found.kind == MLIRTokenKind.EOF else f"'{found.text}'"
            self.raise_error(f"{_spelling(expected_kind)} expected, found {what}")
        return super()._consume_token(expected_kind)

    def parse_dense_int_or_fp_elements_attr(self, type: Any) -> Any:
        # xDSL checks a literal against its type after parsing the type too, and reports the
        # mismatch at the token after it: the start of the next line. Point at the literal.
        literal = self._current_token.span
        try:
            return super().parse_dense_int_or_fp_elements_attr(type)
        except ParseError as error:
            if not error.msg.startswith("Shape mismatch in dense literal"):
                raise
            start = max(literal.start - len("dense"), 0)
            raise ParseError(Span(start, literal.end, literal.input), error.msg) from None

    def parse_operation(self) -> Operation:
        start = self._current_token.span.get_location()
        location = FileLineColLoc(StringAttr(start.file), IntAttr(start.line + self.line_offset), IntAttr(start.col))
        self.open_operations.append(location)
        op = super().parse_operation()
        self.open_operations.pop()
        if isinstance(op.location, UnknownLoc):
            op.location = location
        return op

    def _get_op_by_name(self, name: str) -> type[Operation]:
        if name.startswith("tosa.") and self.ctx.get_optional_op(name) is None:
            # TOSA that does not come from one of the TFLite operators legalize-tosa rebuilds.
            self.raise_error(f"Operation {name} is not registered: {TOSA_HINT}")
        return super()._get_op_by_name(name)

    def innermost_open_operation(self) -> FileLineColLoc | None:
        """Where the operation that was being parsed when parsing stopped starts."""
        return self.open_operations[-1] if self.open_operations else None


def format_location(location: object) -> str | None:
    """`file:line:col` of a FileLineColLoc, else None."""
    if not isinstance(location, FileLineColLoc):
        return None
    return f"{location.filename.data}:{location.line.data}:{location.column.data}"


def location_name(value: SSAValue) -> str | None:
    """The name location of `value`'s producer (or of the block argument), which the TFLite
    importer gives every tensor, or None."""
    owner = value.owner
    location = owner.location if isinstance(owner, Operation) else getattr(value, "location", None)
    return location.desc.data if isinstance(location, NameLoc) else None


def tensor_name(value: SSAValue) -> str | None:
    """The name of the tensor `value` is: its `location_name`, else its SSA name."""
    return location_name(value) or value.name_hint


def failing_op(module: Operation) -> tuple[Operation, VerifyException] | None:
    """The innermost operation that fails verification on its own, with its error."""
    for op in module.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as error:
            return op, error
    return None


def undefined_use(module: Operation) -> str | None:
    """What is wrong with the first operand (in program order) not defined above its use, or
    None: xDSL's parser accepts a name used on a line before the one defining it, where MLIR
    requires a value to be defined earlier in the same block or in an enclosing one (the
    passes would otherwise fail deep inside, or run an operator on a value not yet computed).
    The returned text starts with the location of the operation that uses it. Regions of
    several blocks (a branching CFG) and the module's own body (a graph region) are not
    ordered and not checked."""
    return _undefined_use_in(module, ())


def _undefined_use_in(op: Operation, visible: tuple[set[SSAValue], ...]) -> str | None:
    for region in op.regions:
        unordered = isinstance(op, ModuleOp) or len(region.blocks) > 1
        defined: set[SSAValue] = set()
        if unordered:
            for block in region.blocks:
                defined.update(block.args)
                for inner in block.ops:
                    defined.update(inner.results)
        scopes = (*visible, defined)
        for block in region.blocks:
            defined.update(block.args)
            for inner in block.ops:
                for index, operand in enumerate(inner.operands):
                    if not any(operand in scope for scope in scopes):
                        return _undefined_use_message(inner, index, operand)
                if (problem := _undefined_use_in(inner, scopes)) is not None:
                    return problem
                defined.update(inner.results)
    return None


def _undefined_use_message(user: Operation, index: int, operand: SSAValue) -> str:
    where = format_location(user.location) or "<unknown>"
    owner = operand.owner
    if isinstance(owner, Operation):
        defined = format_location(owner.location)
        at = f" at {defined}" if defined else ""
        what = f"the result of '{owner.name}'{at}, which does not come before it in this block or an enclosing one"
    else:
        what = "an argument of a block that does not hold this operation"
    return f"{where}: '{user.name}' op operand #{index} is {what}"


def parse_error_line(error: ParseError) -> str:
    """A parse error on one line: `file:line:col: message`."""
    return f"{error.span.get_location()}: {error.msg}"


def parse_mlir(text: str, name: str, ctx: Context | None = None) -> ModuleOp:
    """Parse and verify MLIR text; any failure is a one-line, located `LoadError`."""
    parser = LocatingParser(ctx or make_context(), text, name)
    try:
        module = parser.parse_module()
    except ParseError as error:
        raise LoadError(parse_error_line(error)) from None
    except (VerifyException, ValueError) as error:
        # An attribute or type that fails its own check while being parsed: a verifier
        # (`300 : i8`) or a constructor that raises ValueError (`dense<4294967297> : tensor<i32>`).
        where = format_location(parser.innermost_open_operation()) or name
        raise LoadError(f"{where}: {error}") from None
    try:
        module.verify()
    except VerifyException as error:
        culprit = failing_op(module)
        if culprit is None:
            raise LoadError(f"{name}: {error}") from None
        op, op_error = culprit
        where = format_location(op.location) or name
        raise LoadError(f"{where}: '{op.name}' op {op_error}") from None
    if (problem := undefined_use(module)) is not None:
        raise LoadError(problem)
    return module


def load_module(path: str | Path, ctx: Context | None = None) -> ModuleOp:
    """Import a .tflite model or parse and verify an MLIR file; `-` reads standard input (a
    model there is known by its flatbuffer identifier, `TFL3`)."""
    stdin = str(path) == "-"
    path = Path("<stdin>") if stdin else Path(path)
    try:
        data = sys.stdin.buffer.read() if stdin else path.read_bytes()
    except OSError as error:
        raise LoadError(f"{path}: cannot read: {error.strerror or error}") from None
    if path.suffix == ".tflite" or (stdin and data[4:8] == b"TFL3"):
        # Imported here, not at module level: cascade-opt imports this module for MLIR input,
        # and the TFLite schema bindings would double its start-up time.
        from cascade.frontends.tflite import TFLiteImportError, import_tflite

        try:
            return import_tflite(data)
        except TFLiteImportError as error:
            raise LoadError(f"{path}: {error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise LoadError(f"{path}: not a text MLIR file (and not named .tflite)") from None
    return parse_mlir(text, str(path), ctx)


def _spelling(kind: MLIRTokenKind) -> str:
    """How an error names a token kind: punctuation quoted (`')'`), the rest in words."""
    if isinstance(kind.value, str):
        return f"'{kind.value}'"
    return kind.name.lower().replace("_lit", " literal").replace("_", " ")
