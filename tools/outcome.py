"""How cascade-run and cascade-estimate end: an expected error as one line on stderr and exit
status 1, Ctrl-C as 130 without a traceback, anything else as an internal error
(`CASCADE_DEBUG=1` re-raises it, traceback and all)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

DEBUG_ENV = "CASCADE_DEBUG"


def exit_status(
    prog: str,
    run: Callable[[], int],
    expected: tuple[type[Exception], ...],
    describe: Callable[[Exception], str] = str,
) -> int:
    """`run()`'s status, or 1 after reporting the error it raised (`describe`: how an
    `expected` error reads)."""
    try:
        return run()
    except KeyboardInterrupt:
        return _report(prog, "interrupted", 130)  # 128 + SIGINT, as a shell reports it
    except expected as error:
        return _report(prog, f"error: {describe(error)}", 1)
    except OSError as error:  # a full disk, an unreadable file
        if os.environ.get(DEBUG_ENV) or not error.strerror:
            raise
        where = f": '{error.filename}'" if error.filename else ""
        return _report(prog, f"error: {error.strerror}{where}", 1)
    except Exception as error:
        if os.environ.get(DEBUG_ENV):
            raise
        return _report(prog, f"internal error: {type(error).__name__}: {error}", 1)


def _report(prog: str, message: str, status: int) -> int:
    sys.stdout.flush()  # what was printed before the error comes first in `2>&1`
    print(f"{prog}: {message}", file=sys.stderr)
    return status
