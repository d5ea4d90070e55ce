"""cascade-opt: the xdsl-opt driver with our dialects, our passes and mlir-opt style pass flags.

    cascade-opt input.mlir -p 'cascade-plan{sram-budget=1000},rolling-buffer'
    cascade-opt input.mlir --cascade-plan='sram-budget=1000 accelerator=ethos-u55-128'
    cascade-opt --cascade-plan --rolling-buffer input.mlir

Every xdsl-opt flag is inherited. Pass flags run in command-line order, after the `-p` passes.
Bad input ends in one `error:` line (with file:line:col where known) and exit status 1; an
unexpected exception ends in `cascade-opt: internal error in <stage>: ...` (CASCADE_DEBUG=1 shows
the traceback instead).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import inspect
import io
import os
import sys
import time
import typing
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, Protocol

from xdsl.dialects.builtin import ModuleOp, NameLoc
from xdsl.ir import Operation
from xdsl.passes import ModulePass, get_pass_option_infos
from xdsl.universe import Universe
from xdsl.utils.arg_spec import ArgSpec, PipelineLexer, SpecTokenKind, parse_pipeline
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
    VerifyException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from cascade.frontends.loader import LocatingParser, failing_op, format_location, undefined_use
from cascade.passes import PASSES, get_all_passes
from cascade.universe import get_all_dialects, get_dialect_overrides

if TYPE_CHECKING:
    from cascade.ethos_u.report import PlannedFacts
    from cascade.parallel import Pending

PROG = "cascade-opt"
DEBUG_ENV = "CASCADE_DEBUG"
FLAG_PASSES_DEST = "flag_passes"
PASS_OPTIONS_FLAG = "--pass-options"
OUR_DIALECTS = ("nn", "cascade", "ethosu")
MAX_INPUT_BYTES = 1 << 31
"""The largest input read: a TFLite flatbuffer holds at most 2 GiB (larger models keep their
buffers outside it, which the importer does not support)."""


def _own_version() -> str:
    try:
        return version("cascade-opt")
    except PackageNotFoundError:
        return "unknown"


class UserError(Exception):
    """Bad input from the user: printed as one `error:` line, exit status 1."""


@dataclasses.dataclass
class LocatedDiagnostic:
    """A diagnostic exception and its report, written where the IR it is about was at hand."""

    error: Exception
    report: str


class _AppendPassFlag(argparse.Action):
    """`--<pass>`: appends [pass-name, options] to the flag list, keeping command-line order."""

    def __init__(self, *args: Any, pass_name: str, **kwargs: Any) -> None:
        self.pass_name = pass_name
        super().__init__(*args, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        flags = list(getattr(namespace, self.dest) or [])
        flags.append((self.pass_name, ""))
        setattr(namespace, self.dest, flags)


class _SetPassOptions(argparse.Action):
    """Hidden `--pass-options=OPTS`: the options of the pass flag just before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        flags = list(getattr(namespace, self.dest) or [])
        if not flags:
            parser.error(f"{PASS_OPTIONS_FLAG} must follow a pass flag")
        flags[-1] = (flags[-1][0], values)
        setattr(namespace, self.dest, flags)


def split_pass_flag_options(argv: Sequence[str], pass_names: Sequence[str]) -> list[str]:
    """Rewrite `--<pass>=OPTS` as `--<pass> --pass-options=OPTS`.

    A pass flag cannot take an optional value (`nargs='?'`): in `--cascade-plan input.mlir`,
    argparse would take the input file as the options. So the flags take no value, and an
    explicit `=OPTS` is moved into a hidden option that attaches to the preceding flag.
    """
    flags = {f"--{name}" for name in pass_names}
    expanded: list[str] = []
    for arg in argv:
        flag, eq, options = arg.partition("=")
        if eq and flag in flags:
            expanded += [flag, f"{PASS_OPTIONS_FLAG}={options}"]
        else:
            expanded.append(arg)
    return expanded


def pipeline_spec(passes: str, flag_passes: Sequence[tuple[str, str]]) -> str:
    """The `-p` pipeline followed by the pass flags, in command-line order."""
    specs = [f"{name}{{{options}}}" if options.strip() else name for name, options in flag_passes]
    return ",".join(spec for spec in (passes, *specs) if spec)


def _option_summary(pass_class: type[ModulePass]) -> str:
    infos = get_pass_option_infos(pass_class)
    if not infos:
        return "it takes no options"
    options = ", ".join(f"{info.name.replace('_', '-')}: {info.expected_type}" for info in infos)
    return f"its options are {options}"


def format_pipeline_syntax_error(error: ArgSpecParseError) -> str:
    """`invalid pass pipeline at column C: message`, then the pipeline with a caret."""
    # xDSL's text: a header, "pass-pipeline:1:C", the pipeline, the caret line, the message.
    lines = [line for line in str(error).splitlines()[1:] if line.strip()]
    if len(lines) != 4:
        return f"invalid pass pipeline: {error}"
    location, pipeline, caret, message = lines
    column = location.rsplit(":", 1)[-1]
    message = message.strip()
    hint = _quoting_hint(pipeline, int(column)) if message == "Unknown token" and column.isdigit() else ""
    return f"invalid pass pipeline at column {column}: {message}{hint}\n{pipeline}\n{caret}"


def _quoting_hint(pipeline: str, column: int) -> str:
    """For a character an option's value cannot hold bare, as in a file name (the pipeline
    syntax takes numbers and words bare, so `report=plan.json` stops at the dot): the option
    with its value in double quotes (`'plan.json'` in single quotes too)."""
    index = column - 1
    if index >= len(pipeline) or pipeline[index] in ' }"':
        return ""
    start = max(pipeline.rfind(separator, 0, index) for separator in "{ ,") + 1
    option, equals, _ = pipeline[start:index].partition("=")
    if not equals or not option or '"' in pipeline[start:index]:
        return ""
    ends = [end for end in (pipeline.find(separator, index) for separator in " }") if end >= 0]
    value = pipeline[start + len(option) + 1 : min(ends, default=len(pipeline))]
    if len(value) >= 2 and value[0] == value[-1] == "'":
        value = value[1:-1]
    return f' (quote the value: {option}="{value}")'


def check_pipeline(available_passes: dict[str, Callable[[], type[ModulePass]]], spec: str) -> None:
    """Raise UserError naming the pass when `spec` has an unknown pass or a bad option.

    xDSL raises the same errors later, but without saying which pass or option is wrong.
    """
    try:
        arg_specs = list(parse_pipeline(spec))
    except ArgSpecParseError as error:
        raise UserError(format_pipeline_syntax_error(error)) from None
    for arg_spec in arg_specs:
        if arg_spec.name not in available_passes:
            raise UserError(f"unknown pass '{arg_spec.name}' (`{PROG} --help` lists them)")
        pass_class = available_passes[arg_spec.name]()
        _check_pass_options(pass_class, arg_spec)
    if (repeated := _repeated_option(spec)) is not None:
        raise UserError(f"pass '{repeated[0]}' is given option '{repeated[1]}' twice")


def _repeated_option(spec: str) -> tuple[str, str] | None:
    """(pass, option) of the first option given twice to one pass of a valid `spec`.

    xDSL keeps only the last value, so `cascade-plan{sram-budget=1000 sram-budget=2000}`
    would silently plan for 2000 bytes."""
    lexer = PipelineLexer(spec)
    pass_name, options, previous = "", set[str](), SpecTokenKind.EOF
    while (token := lexer.lex()).kind is not SpecTokenKind.EOF:
        if token.kind is SpecTokenKind.IDENT and previous in (SpecTokenKind.EOF, SpecTokenKind.COMMA) and not options:
            pass_name = token.span.text  # a pass name starts the spec or follows a comma between passes
        elif token.kind is SpecTokenKind.IDENT and previous in (SpecTokenKind.L_BRACE, SpecTokenKind.SPACE):
            option = token.span.text.replace("_", "-")
            if option in options:
                return pass_name, option
            options.add(option)
        elif token.kind is SpecTokenKind.R_BRACE:
            options = set()
        previous = token.kind
    return None


def _check_pass_options(pass_class: type[ModulePass], arg_spec: ArgSpec) -> None:
    known = {info.name for info in get_pass_option_infos(pass_class)}
    given = arg_spec.normalize_parameter_names().parameters
    if unknown := [name.replace("_", "-") for name in given if name not in known]:
        raise UserError(
            f"pass '{arg_spec.name}' has no option {', '.join(map(repr, unknown))}; {_option_summary(pass_class)}"
        )
    _check_option_values(pass_class, arg_spec.name, given)
    try:
        pass_class.from_pass_spec(arg_spec)
    except ValueError as error:
        raise UserError(f"invalid options for pass '{arg_spec.name}': {error}; {_option_summary(pass_class)}") from None


def _scalar_types(annotation: Any) -> set[Any]:
    """The scalar classes an option annotation admits: `int | None` -> {int, NoneType}."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return {annotation}
    return {t for arg in typing.get_args(annotation) if arg is not Ellipsis for t in _scalar_types(arg)}


def _check_option_values(pass_class: type[ModulePass], pass_name: str, given: dict[str, Any]) -> None:
    """Reject an option without a value, and `true`/`false` for a number or string option.

    xDSL's type check accepts them because bool is a subclass of int in Python, so
    `sram-budget=true` would silently become a budget of 1 byte.
    """
    hints = typing.get_type_hints(pass_class)
    for name, values in given.items():
        allowed = _scalar_types(hints.get(name, Any))
        if not values:  # `sram-budget` alone: xDSL would take it as not given
            raise UserError(
                f"invalid options for pass '{pass_name}': option '{name.replace('_', '-')}' needs a value; "
                f"{_option_summary(pass_class)}"
            )
        if Any in allowed:
            continue
        for value in values:
            # A bool is an int to Python: only a bool option takes true or false.
            fits = (
                isinstance(value, bool)
                if bool in allowed
                else not isinstance(value, bool) and any(isinstance(value, t) for t in allowed if t is not type(None))
            )
            if fits:
                continue
            expected = "|".join(
                sorted("true|false" if t is bool else t.__name__ for t in allowed if t is not type(None))
            )
            shown = str(value).lower() if isinstance(value, bool) else str(value)
            raise UserError(
                f"invalid options for pass '{pass_name}': option '{name.replace('_', '-')}' expects {expected}, "
                f"got '{shown}'; {_option_summary(pass_class)}"
            )


CONTEXT_WIDTH = 200
"""Characters of a source line a parse error shows around the span, for a line longer than
`LONG_LINE`: a weight blob's line holds a whole tensor in hex (resnet8's largest: 73,000
characters), where an operation's line with all its attributes is a few hundred."""
LONG_LINE = 1000


def format_parse_error(error: ParseError) -> str:
    """`file:line:col: error: message`, then the source line with carets under the span."""
    context = error.span.print_with_context().splitlines()[1:]
    if len(context) >= 2:
        context[:2] = _clipped(context[0], context[1])
    lines = [f"{error.span.get_location()}: error: {error.msg}", *context]
    if isinstance(error, MultipleSpansParseError):
        lines.append(str(error).split(error.msg, 1)[-1].strip("\n"))
    return "\n".join(lines)


def _clipped(source: str, marks: str) -> list[str]:
    """A source line and the marks under it, cut to `CONTEXT_WIDTH` characters around the
    first mark when longer than `LONG_LINE`, with "..." where the line goes on."""
    if len(source) <= LONG_LINE:
        return [source, marks]
    first = len(marks) - len(marks.lstrip())
    start = max(0, min(first - CONTEXT_WIDTH // 2, len(source) - CONTEXT_WIDTH))
    end = start + CONTEXT_WIDTH
    head, tail = ("..." if start else ""), ("..." if end < len(source) else "")
    return [head + source[start:end] + tail, " " * len(head) + marks[start:end].rstrip()]


def format_verification_failure(module: ModuleOp, error: VerifyException) -> str:
    """`file:line:col: error: 'op.name' op message`, or the plain message when no op is found."""
    culprit = failing_op(module)
    if culprit is None:
        return f"{PROG}: error: IR does not verify: {error}"
    op, op_error = culprit
    message = f"'{op.name}' op {op_error}"
    if (location := format_location(op.location)) is not None:
        return f"{location}: error: {message}"
    return f"{PROG}: error: IR does not verify: {message}"


def describe_op(op: Operation) -> str:
    """An operation for an internal error: its name and where it comes from, if known."""
    if (location := format_location(op.location)) is not None:
        return f"{op.name} at {location}"
    if isinstance(op.location, NameLoc):
        return f"{op.name} '{op.location.desc.data}'"
    return op.name


class InternalPassError(Exception):
    """A pass left IR that does not verify behind: a bug in the pass, never the user's input.

    The input was verified before the first pass, so the pass that ran last is to blame.
    """

    def __init__(self, pass_name: str, op: str, message: str) -> None:
        super().__init__(f"internal error in pass '{pass_name}': {op}: {message}")
        self.pass_name = pass_name

    @classmethod
    def from_verification(cls, pass_name: str, module: ModuleOp, error: VerifyException) -> InternalPassError:
        culprit = failing_op(module)
        if culprit is None:
            return cls(pass_name, "builtin.module", str(error))
        op, op_error = culprit
        return cls(pass_name, describe_op(op), str(op_error))


class CascadeOptMain(xDSLOptMain):
    """xdsl-opt with the cascade dialects and passes, and one `--<pass>` flag per pass."""

    version_format = f"{PROG} {_own_version()} (xDSL {{xdsl_version}})"

    stage: str
    """What the driver is doing, for the internal-error message."""

    located: LocatedDiagnostic | None
    """The report of the last verifier error, with the location of the IR it is about."""

    def __init__(self, args: Sequence[str] | None = None) -> None:
        self.stage = "startup"
        self.located = None
        argv = sys.argv[1:] if args is None else list(args)
        argv = split_pass_flag_options(argv, [entry.name for entry in PASSES])
        super().__init__(
            description="Cascading scheduler and rolling-buffer compiler for the Arm Ethos-U NPU",
            args=argv,
        )

    @functools.cached_property
    def multiverse(self) -> Universe:
        """What every installed xDSL plugin (xDSL itself, us, others) provides. xDSL's driver
        asks for it once for each of dialects, frontends, targets and passes, and each time it
        scans every installed package's entry points (1 to 1.5 ms): one scan serves all four."""
        return Universe.get_multiverse()

    def register_all_dialects(self) -> None:
        # Every plugin's dialects (what super() registers), with our `tosa` in place of xDSL's:
        # a context holds one dialect per name, and xDSL's tosa lacks conv2d.
        overrides = get_dialect_overrides()
        for name, factory in self.multiverse.all_dialects.items():
            self.ctx.register_dialect(name, overrides.get(name, factory))
        # The xdsl.universe entry point normally registers ours already; this covers a source
        # tree used without an install (stale or missing package metadata).
        registered = set(self.ctx.registered_dialect_names)
        for name, factory in {**get_all_dialects(), **overrides}.items():
            if name not in registered:
                self.ctx.register_dialect(name, factory)

    def register_all_frontends(self) -> None:
        """Input formats by file extension: MLIR text, and TFLite flatbuffers imported as `nn`."""
        for name, factory in self.multiverse.all_frontends.items():
            self.available_frontends.setdefault(name, factory)
        self.available_frontends["tflite"] = _parse_tflite

    def register_all_targets(self) -> None:
        """xDSL's output targets plus ours: `-t ethosu-cs` writes the NPU command stream,
        `-t ethosu-tflite` a deployable .tflite (a binary target, see `prepare_output`)."""
        from cascade.ethos_u.targets import get_all_targets

        for name, factory in {**self.multiverse.all_targets, **get_all_targets()}.items():
            self.available_targets.setdefault(name, factory)

    def register_all_passes(self) -> None:
        for name, factory in self.multiverse.all_passes.items():
            self.register_pass(name, factory)
        for name, factory in get_all_passes().items():
            self.available_passes.setdefault(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.prog = PROG
        # A usage error is bad input like any other: one `error:` line and exit status 1, where
        # argparse would print the whole usage and exit 2.
        arg_parser.error = _usage_error  # type: ignore[method-assign]
        group = arg_parser.add_argument_group(
            "cascade passes",
            "Each runs in command-line order after the -p passes. Give options as --<pass>='name=value name=value'.",
        )
        for entry in PASSES:
            group.add_argument(
                f"--{entry.name}",
                action=_AppendPassFlag,
                pass_name=entry.name,
                dest=FLAG_PASSES_DEST,
                default=[],
                help=f"{entry.summary} (options: {entry.options})" if entry.options else entry.summary,
            )
        arg_parser.add_argument(
            PASS_OPTIONS_FLAG, action=_SetPassOptions, dest=FLAG_PASSES_DEST, help=argparse.SUPPRESS
        )
        outputs = arg_parser.add_argument_group("reports and disassembly")
        outputs.add_argument(
            "--report",
            metavar="FILE",
            help="write the compile report (JSON) of a planned or lowered module to FILE and a summary to stderr",
        )
        outputs.add_argument(
            "--disassemble",
            action="store_true",
            help="the input is a command stream (raw words, COP1 payload, `-t ethosu-cs` text) or a .tflite with "
            "ethos-u operators: print it as ethosu IR",
        )
        outputs.add_argument(
            "--accelerator",
            metavar="NAME",
            help="the accelerator of a --disassemble input without a COP1 header (default ethos-u55-128), "
            "or of --report IR whose pipeline names none",
        )

    def run(self) -> None:
        """xdsl-opt's run, or a disassembly; with `--report`, the report after the output."""
        started = time.perf_counter()
        self.keep_plan = self.args.report is not None
        if self.args.disassemble:
            self._disassemble()
            if self.pending_output is not None:
                self.pending_output.commit()
            return
        if self.args.report is not None:
            if self.args.split_input_file:
                # A report is about one compiled module; the chunks would overwrite each other's.
                raise UserError("--report describes one module: compile the chunks of --split-input-file one by one")
            _check_writable(self.args.report, "report")
        super().run()
        if self.args.report is not None:
            self._write_report(time.perf_counter() - started)
        # Only now, the run having succeeded, is `-o FILE` written (it may be the input).
        if self.pending_output is not None:
            self.pending_output.commit()

    keep_plan: bool = False
    """Run ethosu-pipeline as its stages and keep the planned module (for a report)."""

    compiled: tuple[ModuleOp, Pending[PlannedFacts] | None] | None = None
    """With `keep_plan`: the last module compiled, and the facts of its plan as they stood
    before lowering (`report.PlanKeeper`), if it was lowered."""

    def apply_passes(self, prog: ModuleOp) -> None:
        """Run the pipeline; with `keep_plan`, gather what a report needs of the module as
        planned before any lowering."""
        if not self.keep_plan:
            return super().apply_passes(prog)
        from cascade.ethos_u.report import PlanKeeper

        keeper = PlanKeeper(self.pipeline.callback, self._report_accelerator())
        passes = keeper.expand(self.pipeline.passes)
        try:
            dataclasses.replace(self.pipeline, passes=passes, callback=keeper).apply(self.ctx, prog)
        except BaseException:
            keeper.cancel()
            raise
        self.compiled = (prog, keeper.planned)

    def _report_accelerator(self) -> str | None:
        """The accelerator a report prices IR for that records none: the pipeline's, else
        `--accelerator`."""
        from cascade.ethos_u.report import pipeline_accelerator

        return pipeline_accelerator(self.pipeline.passes) or self.args.accelerator

    def _write_report(self, seconds: float) -> None:
        from cascade.ethos_u.report import format_summary, report_json

        self.stage = "writing the report"
        report = self.compile_report(seconds)
        try:
            with open(self.args.report, "w", encoding="utf-8") as handle:
                handle.write(report_json(report))
        except OSError as error:
            raise UserError(f"cannot write report '{self.args.report}': {error.strerror}") from None
        sys.stdout.flush()
        print(format_summary(report), file=sys.stderr)

    def compile_report(self, seconds: float) -> dict[str, Any]:
        """The report (`cascade.ethos_u.report`) of the module compiled last."""
        from cascade.ethos_u.arch import ArchConfigError
        from cascade.ethos_u.report import ReportError, compile_report

        if self.compiled is None:
            raise UserError("--report: no module was compiled")
        module, planned = self.compiled
        try:
            return compile_report(
                module,
                input_name=self.get_input_name(),
                accelerator=self._report_accelerator(),
                planned=planned.result() if planned is not None else None,
                compile_seconds=seconds,
                version=_own_version(),
            )
        except (ReportError, ArchConfigError) as error:
            raise UserError(f"--report: {self.get_input_name()}: {error}") from None

    def _disassemble(self) -> None:
        from cascade.ethos_u.serialize import DisassemblyError, disassemble_file

        self.stage = "disassembling"
        if self.args.input_file is None:
            raise UserError("--disassemble needs an input file")
        ignored = [what for what, given in (("passes", self.args.passes), ("--report", self.args.report)) if given]
        if ignored:
            # Nothing would run them: a disassembly is neither planned nor lowered from nn.
            raise UserError(
                f"--disassemble takes no {' or '.join(ignored)}: it only decodes the stream "
                "(pipe its output into cascade-opt for more)"
            )
        try:
            module = disassemble_file(self.args.input_file, self.args.accelerator)
        except DisassemblyError as error:
            raise UserError(f"{self.args.input_file}: {error}") from None
        output = self.prepare_output()
        try:
            output.write(self.output_resulting_program(module))
        finally:
            if output is not sys.stdout:
                output.close()

    def setup_pipeline(self) -> None:
        self.args.passes = pipeline_spec(self.args.passes, self.args.flag_passes)
        check_pipeline(self.available_passes, self.args.passes)
        super().setup_pipeline()
        self.pipeline = dataclasses.replace(self.pipeline, callback=self._observing(self.pipeline.callback))

    def _observing(
        self, callback: Callable[[ModulePass | None, ModuleOp, ModulePass | None], None] | None
    ) -> Callable[[ModulePass | None, ModuleOp, ModulePass | None], None]:
        """Wrap the pipeline callback to track the running pass and keep verifier failures."""

        def observe(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
            self.stage = "verification"
            try:
                if callback is not None:
                    callback(previous, module, following)
            except VerifyException as error:
                if previous is not None:
                    raise InternalPassError.from_verification(previous.name, module, error) from error
                self.located = LocatedDiagnostic(error, format_verification_failure(module, error))
                raise
            if following is not None:
                self.stage = f"pass '{following.name}'"

        return observe

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """xDSL's, with `-` for stdin, `-f` choosing the format whatever the file is named (as
        its help says), and extensions in any case (`MODEL.TFLITE`)."""
        if self.args.input_file in (None, "-"):
            return sys.stdin.buffer, self.args.frontend or "mlir"
        stream, extension = super().get_input_stream()
        return stream, self.args.frontend or extension.lower()

    def get_input_name(self) -> str:
        return "stdin" if self.args.input_file in (None, "-") else self.args.input_file

    def prepare_input(self) -> tuple[list[tuple[IO[bytes], int]], str]:
        self.stage = "reading input"
        try:
            chunks, extension = super().prepare_input()
            return [(self._bounded(chunk), offset) for chunk, offset in chunks], extension
        except OSError as error:
            raise UserError(f"cannot read '{error.filename}': {error.strerror}") from None
        except ValueError as error:
            known = ", ".join(f".{name}" for name in self.available_frontends)
            raise UserError(f"{self.get_input_name()}: {error}; known input formats: {known} (or -f FORMAT)") from None

    def _bounded(self, stream: IO[bytes]) -> IO[bytes]:
        """`stream` read whole, up to `MAX_INPUT_BYTES`: an endless input (`/dev/zero`) is an
        error, not a hang."""
        with stream:
            data = stream.read(MAX_INPUT_BYTES + 1)
        if len(data) > MAX_INPUT_BYTES:
            limit = f"{MAX_INPUT_BYTES} bytes, the most a TFLite file holds"
            raise UserError(f"{self.get_input_name()}: the input is larger than {limit}")
        return io.BytesIO(data)

    binary_output: BinaryOutput | None = None
    pending_output: PendingOutput | None = None
    """Where a binary target (`-t ethosu-tflite`) writes; None for text targets."""

    def prepare_output(self) -> IO[str]:
        self.stage = "opening output"
        target = self._binary_target()
        if target is not None:
            if self.args.output_file is None and sys.stdout.isatty():
                raise UserError(f"target '{target}' writes binary output: give -o FILE, or redirect stdout")
            self.binary_output = BinaryOutput(target, self.args.output_file)
            self.pending_output = self.binary_output
            return self.binary_output
        if self.args.output_file is None:
            return sys.stdout
        _check_writable(self.args.output_file)
        self.pending_output = PendingText(self.args.output_file)
        return self.pending_output

    def _binary_target(self) -> str | None:
        """The name of the `-t` target when it writes bytes (a `BinaryTarget`), else None."""
        from xdsl.utils.arg_spec import parse_spec

        from cascade.ethos_u.targets import BinaryTarget

        name = parse_spec(self.args.target).name
        factory = self.available_targets.get(name)
        if factory is None or inspect.signature(factory).parameters:
            return None
        try:
            target_class = factory()  # type: ignore[call-arg]
        except ImportError as error:  # an optional dependency of one of xDSL's targets (llvmlite)
            raise UserError(f"-t {name}: the target needs the Python module '{error.name}', not installed") from None
        return name if isinstance(target_class, type) and issubclass(target_class, BinaryTarget) else None

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        self.stage = "parsing"
        if (self.args.frontend or file_extension) != "mlir":
            from cascade.frontends.tflite import TFLiteImportError

            try:
                return super().parse_chunk(chunk, file_extension, start_offset)
            except TFLiteImportError as error:
                raise UserError(f"{self.get_input_name()}: {error}") from None
        try:
            text = chunk.read().decode("utf-8")
        except UnicodeDecodeError as error:
            raise UserError(f"{self.get_input_name()}: input is not UTF-8 text ({error})") from None
        parser = LocatingParser(self.ctx, text, self.get_input_name(), line_offset=start_offset)
        try:
            module = parser.parse_module(not self.args.no_implicit_module)
        except (VerifyException, ValueError) as error:
            # An attribute or type that fails its own check while being parsed: a verifier
            # (`300 : i8`) or a constructor that raises ValueError (`dense<4294967297> : tensor<i32>`).
            location = format_location(parser.innermost_open_operation())
            where = location if location is not None else PROG
            diagnostic = error if isinstance(error, VerifyException) else VerifyException(str(error))
            self.located = LocatedDiagnostic(diagnostic, f"{where}: error: {error}")
            if diagnostic is error:
                raise
            raise diagnostic from error
        if (problem := undefined_use(module)) is not None:
            diagnostic = VerifyException(problem.split(": ", 1)[1])
            self.located = LocatedDiagnostic(diagnostic, problem.replace(": ", ": error: ", 1))
            raise diagnostic
        return module

    def output_resulting_program(self, prog: ModuleOp) -> str:
        self.stage = "printing"
        self._check_foreign_target(prog)
        if self.binary_output is None:
            return super().output_resulting_program(prog)
        # A binary target: its bytes go straight to the binary output, no text is printed.
        from xdsl.utils.arg_spec import parse_spec

        spec = parse_spec(self.args.target)
        target = self.available_targets[spec.name]().from_spec(spec)  # type: ignore[call-arg]
        self.binary_output.write_bytes(target.emit_bytes(self.ctx, prog))  # type: ignore[attr-defined]
        return ""

    def _check_foreign_target(self, prog: ModuleOp) -> None:
        """xDSL's other targets (LLVM, assembly, WebAssembly, ...) print their own dialects and
        fail deep inside, or print nothing, on ours: say so instead."""
        from xdsl.utils.arg_spec import parse_spec

        from cascade.ethos_u.targets import get_all_targets

        name = parse_spec(self.args.target).name
        if name == "mlir" or name in get_all_targets():
            return
        ours = next((op for op in prog.walk() if op.name.split(".", 1)[0] in OUR_DIALECTS), None)
        if ours is not None:
            raise UserError(
                f"-t {name}: xDSL's {name} target does not take {'/'.join(OUR_DIALECTS)} operations "
                f"({describe_op(ours)}); use -t mlir, ethosu-cs or ethosu-tflite"
            )

    def describe(self, error: DiagnosticException) -> str:
        """The report of a diagnostic: located when it is a verifier error on parsed IR."""
        if self.located is not None and self.located.error is error:
            return self.located.report
        return f"{PROG}: error: {_clipped_message(str(error))}"


def _check_writable(path: str, what: str = "") -> None:
    """Fail before compiling when `path` cannot be written: a directory, or in a missing or
    read-only directory."""
    name = f"{what} '{path}'" if what else f"'{path}'"
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    reason = None
    if not path:
        reason = "the file name is empty"
    elif target.is_dir():
        reason = "Is a directory"
    elif not directory.is_dir():
        reason = "No such file or directory"
    elif not os.access(target if target.exists() else directory, os.W_OK):
        reason = "Permission denied"
    if reason is not None:
        raise UserError(f"cannot write {name}: {reason}")


class PendingOutput(Protocol):
    def commit(self) -> None:
        """Write what the run produced to its file."""


class PendingText(io.StringIO):
    """`-o FILE` for text: kept in memory and written by `commit` once the run has succeeded,
    so that a failed run leaves the file (perhaps the input itself) as it was. xDSL opens the
    output before parsing the input, and closes it whether the run succeeded or not."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.text = ""

    def close(self) -> None:
        if not self.closed:
            self.text = self.getvalue()
        super().close()

    def commit(self) -> None:
        _write_file(self.path, self.text if self.closed else self.getvalue(), "w")


def _write_file(path: str, data: str | bytes, mode: str) -> None:
    try:
        with open(path, mode) as file:
            file.write(data)
    except OSError as error:
        raise UserError(f"cannot write '{path}': {error.strerror}") from None


class BinaryOutput(io.TextIOBase):
    """The output stream of a binary target, standing in for the text stream xDSL writes to.

    The bytes go to the binary stdout, or are kept for `path` until `commit` (once the run has
    succeeded, so a failed compilation leaves no file behind). Text is refused: a .tflite holds
    one model, so `--split-input-file` output (chunks separated by text) cannot be written.
    """

    def __init__(self, target: str, path: str | None) -> None:
        super().__init__()
        self.target = target
        self.path = path
        self.data: bytes | None = None

    def write(self, text: str) -> int:
        if text:
            raise UserError(f"target '{self.target}' writes one binary model; it cannot write several chunks")
        return 0

    def write_bytes(self, data: bytes) -> None:
        if self.path is None:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
            return
        self.data = data

    def commit(self) -> None:
        if self.path is not None and self.data is not None:
            _write_file(self.path, self.data, "wb")


def _usage_error(message: str) -> NoReturn:
    raise UserError(message)


def _parse_tflite(stream: IO[bytes]) -> ModuleOp:
    from cascade.frontends.tflite import parse_tflite

    return parse_tflite(stream)


def run(argv: Sequence[str] | None = None) -> int:
    """Run cascade-opt and return its exit status; errors are reported on stderr."""
    driver: CascadeOptMain | None = None
    try:
        driver = CascadeOptMain(args=argv)
        driver.run()
    except Exception as error:
        if os.environ.get(DEBUG_ENV):
            raise
        _print_error(_report(error, driver))
        return 1
    except ArgSpecParseError as error:  # a BaseException in xDSL, so not caught above
        if os.environ.get(DEBUG_ENV):
            raise
        _print_error(f"{PROG}: error: {format_pipeline_syntax_error(error)}")
        return 1
    except KeyboardInterrupt:
        _print_error(f"{PROG}: interrupted")
        return 130  # 128 + SIGINT, as a shell reports it
    return 0


def _print_error(message: str) -> None:
    # Output already printed (earlier chunks, --print-between-passes) must come first in `2>&1`.
    sys.stdout.flush()
    print(message, file=sys.stderr)


def _report(error: Exception, driver: CascadeOptMain | None) -> str:
    if isinstance(error, UserError):
        return f"{PROG}: error: {error}"
    if isinstance(error, InternalPassError):
        return f"{PROG}: {error}"
    if isinstance(error, ParseError):
        return format_parse_error(error)
    if isinstance(error, DiagnosticException):
        return driver.describe(error) if driver is not None else f"{PROG}: error: {_clipped_message(str(error))}"
    stage = driver.stage if driver is not None else "startup"
    if isinstance(error, OSError) and error.strerror:  # a full disk, a closed pipe
        return f"{PROG}: error: {stage}: {error.strerror}"
    message = _clipped_message(str(error), MAX_INTERNAL_MESSAGE)
    return f"{PROG}: internal error in {stage}: {type(error).__name__}: {message} (set {DEBUG_ENV}=1 for the traceback)"


MAX_MESSAGE = 2000
"""Characters of a diagnostic shown, on one line. Some of xDSL's passes and targets put the
whole module in their messages (transform-interpreter on ds_cnn_kws: 60 KB, weights and all)."""
MAX_INTERNAL_MESSAGE = 300
"""Characters of an unexpected exception's message shown."""


def _clipped_message(message: str, limit: int = MAX_MESSAGE) -> str:
    """`message` as it is if it is one line within `limit`, else the start of its first line
    and the end of its last, where the reason usually is."""
    message = message.strip()
    lines = message.splitlines() or [""]
    if len(message) <= limit and len(lines) == 1:
        return message
    if len(lines) == 1:
        return message[:limit] + " ..."
    half = limit // 2
    return f"{lines[0][:half]} ... {lines[-1].strip()[-half:]}"


def main(argv: Sequence[str] | None = None) -> None:
    sys.exit(run(argv))


if __name__ == "__main__":
    main()
