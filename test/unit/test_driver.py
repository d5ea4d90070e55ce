"""cascade-opt driver: pass flags become a pipeline in command-line order; errors exit 1 cleanly."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import BytesAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass, get_pass_option_infos

from cascade.frontends.loader import parse_mlir
from cascade.passes import PASSES, get_all_passes
from cascade.tools import cascade_opt
from cascade.tools.cascade_opt import (
    CONTEXT_WIDTH,
    LONG_LINE,
    CascadeOptMain,
    _clipped,
    pipeline_spec,
    run,
    split_pass_flag_options,
)
from cascade.universe import CASCADE_UNIVERSE

VALID = "func.func @f(%a: i32) -> i32 {\n  func.return %a : i32\n}\n"


@pytest.fixture
def valid_input(tmp_path: Path) -> str:
    path = tmp_path / "valid.mlir"
    path.write_text(VALID)
    return str(path)


def pass_names(args: list[str]) -> list[str]:
    return [p.name for p in CascadeOptMain(args=args).pipeline.passes]


def run_and_capture(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = run(argv)
    return status, capsys.readouterr().err


def test_explicit_flag_options_move_to_hidden_option_and_nothing_else_changes():
    argv = ["--cascade-plan=sram-budget=1000 striping=h", "--rolling-buffer", "x.mlir", "-o=y"]
    assert split_pass_flag_options(argv, ["cascade-plan", "rolling-buffer"]) == [
        "--cascade-plan",
        "--pass-options=sram-budget=1000 striping=h",
        "--rolling-buffer",
        "x.mlir",
        "-o=y",
    ]


def test_pipeline_spec_puts_p_passes_first_then_flags_in_order():
    flags = [("rolling-buffer", ""), ("cascade-plan", "sram-budget=1 "), ("allocate-memory", " ")]
    assert pipeline_spec("canonicalize", flags) == (
        "canonicalize,rolling-buffer,cascade-plan{sram-budget=1 },allocate-memory"
    )
    assert pipeline_spec("", [("cascade-plan", "")]) == "cascade-plan"


def test_flags_run_in_command_line_order_after_p_passes(valid_input: str):
    args = ["--lower-to-ethosu", valid_input, "--cascade-plan", "-p", "canonicalize,cse"]
    assert pass_names(args) == ["canonicalize", "cse", "lower-to-ethosu", "cascade-plan"]


def test_flag_options_reach_the_pass_and_the_input_file_is_not_swallowed(valid_input: str):
    driver = CascadeOptMain(args=["--cascade-plan=sram-budget=1000 accelerator=ethos-u55-128", valid_input])
    (plan,) = driver.pipeline.passes
    assert driver.args.input_file == valid_input
    assert (plan.sram_budget, plan.accelerator, plan.striping) == (1000, "ethos-u55-128", "hwc")


def test_flag_without_options_before_input_file_keeps_the_input_file(valid_input: str):
    driver = CascadeOptMain(args=["--ethosu-pipeline", valid_input])
    assert driver.args.input_file == valid_input
    assert [p.name for p in driver.pipeline.passes] == ["ethosu-pipeline"]


def test_p_options_reach_the_pass(valid_input: str):
    driver = CascadeOptMain(args=[valid_input, "-p", "ethosu-pipeline{memory-mode=Shared_Sram}"])
    assert driver.pipeline.passes[0].memory_mode == "Shared_Sram"


@pytest.mark.parametrize("entry", PASSES, ids=lambda entry: entry.name)
def test_registry_entry_loads_a_pass_of_that_name(entry):
    pass_class = get_all_passes()[entry.name]()
    assert issubclass(pass_class, ModulePass)
    assert pass_class.name == entry.name
    assert CASCADE_UNIVERSE.all_passes[entry.name]() is pass_class


def test_universe_names_our_three_dialects():
    assert set(CASCADE_UNIVERSE.all_dialects) == {"nn", "cascade", "ethosu"}


def test_another_plugins_dialect_pass_target_and_frontend_register_from_one_scan(monkeypatch, valid_input):
    """A third-party xDSL plugin's four kinds of entry all reach the driver, and the installed
    plugins are scanned once for them all (xDSL's driver scans once per kind)."""
    from xdsl.ir import Dialect
    from xdsl.universe import Universe

    installed = Universe.get_multiverse()
    pass_, target, frontend = object(), object(), object()
    scans = []

    def multiverse() -> Universe:
        scans.append(1)
        return Universe(
            all_dialects={**installed.all_dialects, "plugin": lambda: Dialect("plugin", [], [])},
            all_passes={**installed.all_passes, "plugin-pass": lambda: pass_},  # type: ignore[dict-item]
            all_targets={**installed.all_targets, "plugin-target": lambda: target},  # type: ignore[dict-item]
            all_frontends={**installed.all_frontends, "plugin-format": lambda: frontend},  # type: ignore[dict-item]
        )

    monkeypatch.setattr(Universe, "get_multiverse", staticmethod(multiverse))
    main = CascadeOptMain(args=[valid_input])
    assert len(scans) == 1
    assert "plugin" in main.ctx.registered_dialect_names
    assert main.available_passes["plugin-pass"]() is pass_
    assert main.available_targets["plugin-target"]() is target
    assert main.available_frontends["plugin-format"]() is frontend
    # Ours stay as registered over the plugins' (our tosa over xDSL's, our `tflite` format).
    assert main.available_frontends["tflite"] is cascade_opt._parse_tflite
    assert set(get_all_passes()) <= set(main.available_passes)


def test_help_lists_every_pass_flag_with_its_summary(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run(["--help"])
    assert exit_info.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    for entry in PASSES:
        assert f"--{entry.name} {entry.summary}" in help_text


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        (["-p", "cascade-plan{nonsense=1}"], "pass 'cascade-plan' has no option 'nonsense'"),
        (["--cascade-plan=sram-budget=abc"], "invalid options for pass 'cascade-plan'"),
        (["-p", "no-such-pass"], "unknown pass 'no-such-pass'"),
        (["-p", "cascade-plan{"], "invalid pass pipeline at column 14"),
        (
            ["-p", "cascade-plan{report=out/plan.json}"],
            'invalid pass pipeline at column 24: Unknown token (quote the value: report="out/plan.json")',
        ),
        (["-p", "cascade-plan{report=plan.json}"], 'Unknown token (quote the value: report="plan.json")\n'),
        (["-p", "cascade-plan{report='plan.json'}"], 'Unknown token (quote the value: report="plan.json")\n'),
        # No hint where quoting is not the fix: a missing brace, a missing value.
        (["-p", "cascade-plan{sram-budget=40000"], "expected either a space or `}` here\n"),
        (["-p", "cascade-plan{sram-budget=}"], "wrap argument in quotes to pass arbitrary string values\n"),
        (["-p", "cascade-plan{sram-budget}"], "option 'sram-budget' needs a value;"),
        (["--cascade-plan=report"], "option 'report' needs a value;"),
        (["-p", "cascade-plan{reorder}"], "option 'reorder' needs a value;"),
    ],
)
def test_bad_pipeline_is_one_error_line(pipeline, message, valid_input, capsys):
    status, err = run_and_capture([valid_input, *pipeline], capsys)
    assert status == 1
    assert err.startswith("cascade-opt: error: ")
    assert message in err.splitlines(keepends=True)[0]
    assert "Traceback" not in err


def test_missing_input_is_one_error_line(tmp_path, capsys):
    missing = tmp_path / "nope.mlir"
    status, err = run_and_capture([str(missing)], capsys)
    assert status == 1
    assert err == f"cascade-opt: error: cannot read '{missing}': No such file or directory\n"


@pytest.mark.parametrize("fmt", ["mlir", "tflite"])
def test_an_input_past_the_limit_is_one_error_line_not_a_hang(tmp_path, capsys, monkeypatch, fmt):
    """`-f tflite /dev/zero` read forever; the input is read up to 2 GiB (here 100 bytes)."""
    monkeypatch.setattr(cascade_opt, "MAX_INPUT_BYTES", 100)
    big = tmp_path / "big.bin"
    big.write_bytes(b"\0" * 101)
    status, err = run_and_capture(["-f", fmt, str(big)], capsys)
    assert status == 1
    assert err == f"cascade-opt: error: {big}: the input is larger than 100 bytes, the most a TFLite file holds\n"
    big.write_text(VALID + " " * (100 - len(VALID)))  # exactly the limit: read and parsed
    assert run_and_capture(["-f", "mlir", str(big)], capsys)[0] == 0


@pytest.mark.parametrize("flag", ["-o", "--report"])
def test_an_empty_output_name_says_so(valid_input, capsys, flag):
    status, err = run_and_capture([valid_input, flag, ""], capsys)
    assert status == 1
    what = "report " if flag == "--report" else ""
    assert err == f"cascade-opt: error: cannot write {what}'': the file name is empty\n"


def test_parse_error_is_located(tmp_path, capsys):
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @f() {\n  %0 = arith.addi %x, %x : i32\n  func.return\n}\n")
    status, err = run_and_capture([str(path)], capsys)
    assert status == 1
    first_line = err.splitlines()[0]
    assert first_line.startswith(f"{path}:")
    assert ": error: " in first_line
    assert "%x" in first_line


def test_verifier_error_names_op_and_source_line(tmp_path, capsys):
    path = tmp_path / "invalid.mlir"
    path.write_text("func.func @f(%a: i32) -> i32 {\n  func.return\n}\n")
    status, err = run_and_capture([str(path)], capsys)
    assert status == 1
    assert err.startswith(f"{path}:2:3: error: 'func.return' op Expected arguments")
    assert len(err.splitlines()) == 1


def test_attribute_verifier_error_while_parsing_is_located_at_its_operation(tmp_path, capsys):
    path = tmp_path / "constant.mlir"
    path.write_text("func.func @f() -> i8 {\n  %0 = arith.constant 300 : i8\n  func.return %0 : i8\n}\n")
    status, err = run_and_capture([str(path)], capsys)
    assert status == 1
    assert err.startswith(f"{path}:2:3: error: Integer value 300 is out of range for type i8")


def test_verifier_error_after_a_pass_is_an_internal_error_naming_the_pass_and_op(tmp_path, capsys, monkeypatch):
    path = tmp_path / "valid.mlir"
    path.write_text(VALID)
    passes = {**get_all_passes(), BreakingPass.name: lambda: BreakingPass}
    monkeypatch.setattr(cascade_opt, "get_all_passes", lambda: passes)
    status, err = run_and_capture([str(path), "-p", "break-return"], capsys)
    assert status == 1
    assert err.startswith(
        f"cascade-opt: internal error in pass 'break-return': func.return at {path}:2:3: Expected arguments"
    )


def test_verify_diagnostics_prints_the_message_and_exits_0(tmp_path, capsys):
    path = tmp_path / "invalid.mlir"
    path.write_text("func.func @f(%a: i32) -> i32 {\n  func.return\n}\n")
    assert run([str(path), "--verify-diagnostics"]) == 0
    assert "Expected arguments to have the same types" in capsys.readouterr().out


@dataclasses.dataclass(frozen=True)
class BreakingPass(ModulePass):
    """Leaves invalid IR behind: drops the operands of every func.return."""

    name = "break-return"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for return_op in op.walk():
            if return_op.name == "func.return":
                return_op.operands = ()


@dataclasses.dataclass(frozen=True)
class ExplodingPass(ModulePass):
    name = "explode"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise ZeroDivisionError("boom")


@pytest.fixture
def with_exploding_pass(monkeypatch):
    passes = {**get_all_passes(), ExplodingPass.name: lambda: ExplodingPass}
    monkeypatch.setattr(cascade_opt, "get_all_passes", lambda: passes)


@pytest.mark.usefixtures("with_exploding_pass")
def test_unexpected_exception_is_an_internal_error_naming_the_pass(valid_input, capsys, monkeypatch):
    monkeypatch.delenv("CASCADE_DEBUG", raising=False)
    status, err = run_and_capture([valid_input, "-p", "explode"], capsys)
    assert status == 1
    assert err.startswith("cascade-opt: internal error in pass 'explode': ZeroDivisionError: boom")
    assert "Traceback" not in err


@pytest.mark.usefixtures("with_exploding_pass")
def test_cascade_debug_shows_the_exception(valid_input, monkeypatch):
    monkeypatch.setenv("CASCADE_DEBUG", "1")
    with pytest.raises(ZeroDivisionError, match="boom"):
        run([valid_input, "-p", "explode"])


def test_entry_point_exits_1_with_one_line_and_no_traceback(tmp_path):
    missing = tmp_path / "nope.mlir"
    result = subprocess.run(
        [sys.executable, "-m", "cascade.tools.cascade_opt", str(missing)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"cascade-opt: error: cannot read '{missing}': No such file or directory"]


def test_a_quoted_path_is_a_pass_option(valid_input, tmp_path, capsys):
    # What the hint above suggests works: a path with directories, quoted.
    report = tmp_path / "plans" / "plan.json"
    report.parent.mkdir()
    status, err = run_and_capture([valid_input, "-p", f'cascade-plan{{report="{report}"}}'], capsys)
    assert status == 0, err
    assert json.loads(report.read_text()) == {"functions": {}}  # a module without nn functions


def test_a_long_source_line_is_cut_around_the_error():
    # A parse error in a weight blob shows CONTEXT_WIDTH characters of its line around the
    # span, the carets still under the same characters.
    line = 'x = dense<"0x' + "0123456789ABCDEF" * 100 + '">'
    for column in (5, 700, len(line) - 1):
        shown, marks = _clipped(line, " " * (column - 1) + "^^")
        at = marks.index("^")
        assert shown[at : at + 2] == line[column - 1 : column + 1]
        assert len(shown) <= CONTEXT_WIDTH + 6
    assert _clipped(line, "    ^")[0].endswith("...")
    assert _clipped(line, " " * (len(line) - 2) + "^")[0].startswith("...")
    assert _clipped("short", "  ^") == ["short", "  ^"]
    operation = "%0 = nn.conv2d " + "x" * (LONG_LINE - 15)  # an operation's line stays whole
    assert _clipped(operation, "^") == [operation, "^"]


MODEL = Path(__file__).parents[1] / "models" / "ds_cnn_kws.tflite"


def test_a_failed_run_leaves_the_output_file_as_it_was(tmp_path, capsys):
    # xDSL opens -o before it reads the input; the file is written only once the run succeeded.
    text, model = tmp_path / "out.mlir", tmp_path / "out.tflite"
    text.write_text("earlier output\n")
    model.write_bytes(b"earlier model")
    impossible = "ethosu-pipeline{sram-budget=100}"
    status, err = run_and_capture([str(MODEL), "-p", impossible, "-o", str(text)], capsys)
    assert status == 1
    assert "sram-budget of 100 bytes is too small" in err
    status, _ = run_and_capture([str(MODEL), "-p", impossible, "-t", "ethosu-tflite", "-o", str(model)], capsys)
    assert status == 1
    assert text.read_text() == "earlier output\n"
    assert model.read_bytes() == b"earlier model"


def test_the_output_may_be_the_input(tmp_path, capsys):
    program = tmp_path / "program.mlir"
    assert run_and_capture([str(MODEL), "-o", str(program)], capsys)[0] == 0
    imported = program.read_text()
    assert run_and_capture([str(program), "--cascade-plan", "-o", str(program)], capsys)[0] == 0
    planned = program.read_text()
    assert "nn.conv2d" in imported
    assert "nn.conv2d" in planned
    assert "cascade.peak_sram_bytes" in planned
    assert "cascade.peak_sram_bytes" not in imported


def test_an_unwritable_report_fails_before_compiling(tmp_path, capsys):
    model = tmp_path / "out.tflite"
    argv = [str(MODEL), "-p", "ethosu-pipeline", "-t", "ethosu-tflite", "-o", str(model)]
    status, err = run_and_capture([*argv, "--report", str(tmp_path / "missing" / "report.json")], capsys)
    assert status == 1
    assert err.startswith("cascade-opt: error: cannot write report ")
    assert err.endswith(": No such file or directory\n")
    assert not model.exists()


def test_ctrl_c_is_one_line_and_status_130(monkeypatch, valid_input, capsys):
    def interrupted(self: CascadeOptMain) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(CascadeOptMain, "run", interrupted)
    assert run_and_capture([valid_input], capsys) == (130, "cascade-opt: interrupted\n")


def test_the_format_comes_from_f_then_the_extension_in_any_case(tmp_path, monkeypatch, capsys):
    renamed, shouting = tmp_path / "model.bin", tmp_path / "MODEL.TFLITE"
    renamed.write_bytes(MODEL.read_bytes())
    shouting.write_bytes(MODEL.read_bytes())
    status, err = run_and_capture([str(renamed)], capsys)
    assert status == 1
    assert err == (
        f"cascade-opt: error: {renamed}: Unrecognized file extension 'bin'; "
        "known input formats: .mlir, .tflite (or -f FORMAT)\n"
    )
    for argv in (["-f", "tflite", str(renamed)], [str(shouting)]):
        assert run_and_capture([*argv, "-o", str(tmp_path / "out.mlir")], capsys)[0] == 0
        assert "nn.conv2d" in (tmp_path / "out.mlir").read_text()


def test_a_dash_reads_stdin(tmp_path, monkeypatch, capsys):
    class Stdin:
        buffer = io.BytesIO(MODEL.read_bytes())

    monkeypatch.setattr(sys, "stdin", Stdin)
    assert run_and_capture(["-f", "tflite", "-", "-o", str(tmp_path / "out.mlir")], capsys)[0] == 0
    assert "nn.conv2d" in (tmp_path / "out.mlir").read_text()


def test_the_options_help_lists_are_the_passes_own():
    for entry in PASSES:
        listed = {token.split("=")[0] for token in entry.options.split() if "=" in token}
        actual = {info.name.replace("_", "-") for info in get_pass_option_infos(entry.load())}
        assert listed == actual, entry.name


@pytest.mark.parametrize(
    ("literal", "kind", "value"),
    [('"caf\\C3\\A9"', StringAttr, "café"), ('"\\FF\\00"', BytesAttr, b"\xff\x00"), ('"a\\22b"', StringAttr, 'a"b')],
)
def test_a_literal_of_utf8_bytes_is_a_string(literal, kind, value):
    # Escaped bytes that spell UTF-8 are a string (xDSL 0.75 made them bytes); others stay bytes.
    module = parse_mlir(f"builtin.module attributes {{test.a = {literal}}} {{\n}}\n", "t.mlir")
    attribute = module.attributes["test.a"]
    assert isinstance(attribute, kind)
    assert attribute.data == value
