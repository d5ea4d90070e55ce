"""Internal invariants: a pass that leaves invalid IR behind is an internal error naming the pass
and the operation, never silent wrong output.

cascade-opt verifies the module before the first pass (bad input: a located `error:`) and after
every pass (xdsl-opt's pipeline callback, on unless `--disable-verify`): IR that stops verifying
after a pass is that pass's bug, reported as

    cascade-opt: internal error in pass '<pass>': <op> at <file:line:col>: <verifier message>

The passes used here break the IR on purpose and live in `broken_passes.py`, which registers
them and runs the real driver in a subprocess: nothing broken ships in the package.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from cascade.frontends.loader import make_context, parse_mlir
from cascade.passes import allocate_memory
from cascade.passes.planner.from_nn import ProgramInfo, program_from_module
from cascade.passes.planner.placement import Buffer, Placement
from cascade.tools import cascade_opt

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "test" / "Inputs" / "example_nn.mlir"
BROKEN = Path(__file__).with_name("broken_passes.py")


def run_broken(*args: str, debug: bool = False) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "CASCADE_DEBUG"}
    if debug:
        env["CASCADE_DEBUG"] = "1"
    return subprocess.run([sys.executable, str(BROKEN), *args], capture_output=True, text=True, check=False, env=env)


def test_invalid_ir_after_a_pass_names_the_pass_and_the_op() -> None:
    result = run_broken(str(EXAMPLE), "-p", "drop-return-operands")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"cascade-opt: internal error in pass 'drop-return-operands': func.return at {EXAMPLE}:11:3: Expected"
        " arguments to have the same types as the function output types: expected [tensor<1x4x4x16xi8>], got []\n"
    )


def test_the_pass_that_broke_the_ir_is_blamed_not_the_ones_before() -> None:
    """cascade-plan and rolling-buffer run and verify first; the corruption after them is
    attributed to the pass that made it, on the operator it made invalid."""
    result = run_broken(str(EXAMPLE), "-p", "cascade-plan,rolling-buffer,corrupt-quantization")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"cascade-opt: internal error in pass 'corrupt-quantization': nn.conv2d at {EXAMPLE}:7:3: output zero"
        " point must be in [-128, 127], got [300]\n"
    )


def test_an_input_that_does_not_verify_is_the_users_error_not_an_internal_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%a: i32) -> i32 {\n  func.return\n}\n")
    result = run_broken(str(bad), "-p", "drop-return-operands")
    assert result.returncode == 1
    assert result.stderr == (
        f"{bad}:2:3: error: 'func.return' op Expected arguments to have the same types as the function output"
        " types: expected [i32], got []\n"
    )


def test_debug_mode_shows_the_traceback_of_the_internal_error() -> None:
    result = run_broken(str(EXAMPLE), "-p", "drop-return-operands", debug=True)
    assert result.returncode != 0
    assert "Traceback" in result.stderr
    assert "InternalPassError: internal error in pass 'drop-return-operands'" in result.stderr


# --------------------------------------------------------------------------- #
# The planner's view of a module skips function declarations (formerly a crash)
# --------------------------------------------------------------------------- #

_POOL = (
    "  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>,"
    " dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>,"
    " input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>}"
    " : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>\n"
)
_DECLARATION = "func.func private @{name}(tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>\n"
_DEFINITION = (
    "func.func @{name}(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {{\n"
    + _POOL.replace("{", "{{").replace("}", "}}")
    + "  func.return %0 : tensor<1x2x2x2xi8>\n}}\n"
)


def _program(text: str) -> ProgramInfo:
    return program_from_module(parse_mlir(text, "declarations.mlir", make_context()))


@pytest.mark.parametrize("declared", ["helper", "main"])
def test_the_planner_view_skips_declarations_for_the_first_defined_function(declared: str) -> None:
    program = _program(_DECLARATION.format(name=declared) + _DEFINITION.format(name="net"))
    assert [op.kind for op in program.ops] == ["pool2d"]
    assert program.graph_inputs == ("x",)


def test_a_module_of_declarations_only_has_no_program() -> None:
    with pytest.raises(ValueError, match=r"^@helper is a declaration without a body$"):
        _program(_DECLARATION.format(name="helper"))


# --------------------------------------------------------------------------- #
# allocate-memory checks its own result: a broken placement is an internal error, never output
# --------------------------------------------------------------------------- #


def test_an_allocation_the_checker_refuses_is_an_internal_error_of_allocate_memory(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every buffer at offset 0 (a placement bug put in by hand): the pass stops with the
    checker's finding instead of printing IR whose buffers overwrite each other."""

    def everything_at_zero(buffers: Sequence[Buffer], effort: int = 0) -> Placement:
        return Placement({b.name: 0 for b in buffers}, max(b.size for b in buffers), "broken")

    monkeypatch.delenv("CASCADE_DEBUG", raising=False)
    monkeypatch.setattr(allocate_memory, "place", everything_at_zero)
    status = cascade_opt.run([str(EXAMPLE), "--allocate-memory"])
    captured = capsys.readouterr()
    assert status == 1
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(
        "cascade-opt: internal error in pass 'allocate-memory': AllocationError: @block: "
        "the allocation fails its check: "
    )
    # The image (argument 0) is read by the first convolution, whose result lands on it.
    assert re.search(r"argument 0 \[0, \d+\) and result of nn.conv2d #0 .* overlap while both are live", lines[0])
