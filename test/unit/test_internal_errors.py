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
import subprocess
import sys
from pathlib import Path

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
