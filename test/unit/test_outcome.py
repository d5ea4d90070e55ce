"""How the command-line tools end: one line on stderr and an exit status, never a traceback."""

from __future__ import annotations

import errno

import pytest

from cascade.tools.cascade_run import main as cascade_run
from cascade.tools.outcome import DEBUG_ENV, exit_status


def _raising(error: BaseException):
    def run() -> int:
        raise error

    return run


@pytest.mark.parametrize(
    ("error", "status", "line"),
    [
        (KeyboardInterrupt(), 130, "tool: interrupted"),
        (LookupError("no such model"), 1, "tool: error: no such model"),
        (OSError(errno.ENOSPC, "No space left on device"), 1, "tool: error: No space left on device"),
        (
            OSError(errno.ENOENT, "No such file or directory", "in.npz"),
            1,
            "tool: error: No such file or directory: 'in.npz'",
        ),
        (ZeroDivisionError("division by zero"), 1, "tool: internal error: ZeroDivisionError: division by zero"),
    ],
)
def test_each_ending_is_one_line(error, status, line, capsys, monkeypatch):
    monkeypatch.delenv(DEBUG_ENV, raising=False)
    assert exit_status("tool", _raising(error), (LookupError,)) == status
    assert capsys.readouterr().err == line + "\n"


def test_debug_shows_the_traceback_of_an_internal_error(monkeypatch):
    monkeypatch.setenv(DEBUG_ENV, "1")
    with pytest.raises(ZeroDivisionError):
        exit_status("tool", _raising(ZeroDivisionError()), (LookupError,))


def test_a_status_passes_through():
    assert exit_status("tool", lambda: 3, (LookupError,)) == 3


def test_a_negative_seed_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cascade_run(["model.tflite", "--seed", "-1"])
    assert exit_info.value.code == 1  # usage errors are bad input too
    assert "argument --seed: expected a non-negative integer, got '-1'" in capsys.readouterr().err
