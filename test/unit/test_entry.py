"""The console script's start-up and exit shortcuts (`tools/entry.py`, `tools/lazy_formats.py`):
what it prints, parses, writes and returns is what the library does without them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cascade.tools.cascade_opt import run
from cascade.tools.lazy_formats import _DeferredProgram

MODEL = Path(__file__).parents[1] / "models" / "resnet8.tflite"
SCRIPT = Path(sys.executable).with_name("cascade-opt")

# The IR of every dialect the compiler prints: nn (and arith constants) from the importer,
# cascade groups from the planner, ethosu command streams from the lowering.
PIPELINES = {
    "nn": [],
    "cascade": ["-p", "cascade-plan{accelerator=ethos-u55-128},rolling-buffer"],
    "ethosu": ["-p", "ethosu-pipeline{accelerator=ethos-u55-128}"],
}


def _console(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], input=stdin, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("dialect", PIPELINES)
def test_the_console_script_prints_and_parses_as_the_library_does(
    dialect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The library compiles every assembly format at import; the console script on first use.
    assert run([str(MODEL), *PIPELINES[dialect]]) == 0
    printed = capsys.readouterr().out
    console = _console(str(MODEL), *PIPELINES[dialect])
    assert console.returncode == 0, console.stderr
    assert console.stdout == printed
    assert f"{dialect}." in printed
    # The console script parses its own output back (custom formats included) to the same text.
    reparsed = _console(stdin=console.stdout)
    assert reparsed.returncode == 0, reparsed.stderr
    assert reparsed.stdout == printed


def test_a_deferred_format_compiles_once_on_first_use() -> None:
    compiled: list[tuple[str, object]] = []

    class Program:
        def parse(self, parser: object, op_type: object) -> tuple[str, object, object]:
            return ("parsed", parser, op_type)

        def print(self, printer: list[str], op: object) -> None:
            printer.append(f"printed {op}")

    def compile_format(text: str, op_def: object) -> Program:
        compiled.append((text, op_def))
        return Program()

    deferred = _DeferredProgram(compile_format, "$lhs `,` $rhs attr-dict", "op-def")
    assert compiled == []
    assert deferred.parse("parser", "AddOp") == ("parsed", "parser", "AddOp")
    printer: list[str] = []
    deferred.print(printer, "%0")
    assert printer == ["printed %0"]
    assert compiled == [("$lhs `,` $rhs attr-dict", "op-def")]


# The console script's entry point, with xDSL's format compiler counted before the entry point
# defers it: the count is reported by an exit handler, after the compile.
_COUNTING = textwrap.dedent(
    """
    import atexit, sys
    from xdsl.irdl.declarative_assembly_format import FormatProgram
    from cascade.tools import entry

    compiled = []
    original = FormatProgram.from_str
    FormatProgram.from_str = lambda text, op_def: compiled.append(text) or original(text, op_def)
    atexit.register(lambda: print(f"compiled {len(compiled)}", file=sys.stderr))
    sys.argv = ["cascade-opt", *sys.argv[1:]]
    entry.cascade_opt()
    """
)


def test_the_console_script_compiles_only_the_formats_it_uses(tmp_path: Path) -> None:
    def compiled(*args: str) -> int:
        done = subprocess.run([sys.executable, "-c", _COUNTING, *args], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        return int(done.stderr.split()[-1])

    pipeline = ["-p", "ethosu-pipeline{accelerator=ethos-u55-128}"]
    assert compiled(str(MODEL), *pipeline, "-t", "ethosu-tflite", "-o", str(tmp_path / "net.tflite")) == 0
    # Printing the lowered IR compiles the formats of the operations printed, not all 76.
    assert 0 < compiled(str(MODEL), *pipeline, "-o", str(tmp_path / "net.mlir")) < 40


_LEAVING = textwrap.dedent(
    """
    import atexit, io, sys
    from cascade.tools.entry import leave

    atexit.register(lambda: print("exit handler ran", file=sys.stderr))
    if sys.argv[1] == "unflushable":
        class Unflushable(io.StringIO):
            def flush(self):
                raise BrokenPipeError(32, "Broken pipe")
        sys.stdout = Unflushable()
    sys.stdout.write("x" * 100000)  # buffered, no newline: only a flush writes it
    leave(int(sys.argv[2]))
    """
)


@pytest.mark.parametrize("status", [0, 1, 3])
def test_leave_runs_the_exit_handlers_flushes_and_keeps_the_status(status: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _LEAVING, "pipe", str(status)], capture_output=True, text=True, check=False
    )
    assert done.returncode == status
    assert done.stdout == "x" * 100000
    assert done.stderr == "exit handler ran\n"


def test_a_stream_that_cannot_be_flushed_fails_a_successful_run_only() -> None:
    for status, expected in ((0, 120), (1, 1)):
        done = subprocess.run(
            [sys.executable, "-c", _LEAVING, "unflushable", str(status)], capture_output=True, text=True, check=False
        )
        assert done.returncode == expected
        assert done.stderr == "exit handler ran\n"


def test_the_console_script_exit_status_and_output_file(tmp_path: Path) -> None:
    output = tmp_path / "net.mlir"
    done = _console(str(MODEL), "-o", str(output))
    assert (done.returncode, done.stderr) == (0, "")
    assert output.read_text().startswith("builtin.module {")
    assert os.path.getsize(output) > 1000
    missing = _console(str(tmp_path / "absent.tflite"))
    assert missing.returncode == 1
    assert "absent.tflite" in missing.stderr
