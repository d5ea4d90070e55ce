"""`split_map`: a pure function over a list, shared between this process and one forked child;
`beside`: a pure function computed by a forked child while this process does something else;
`ahead`: a function of the state as it is now, computed by a forked child while this process
goes on and changes that state.

A compile is one Python process, and the GIL keeps C extensions that do not release it (Vela's
weight encoder) on one core. Where the machine has a second core and Linux can fork, the child
takes about half of the work (by the caller's size of each item) while the parent does the rest;
the child sends its results back pickled through a pipe. The results are those of
`[function(item) for item in items]`: if the child cannot run or fails, the parent computes its
share too, so an item that raises raises in the parent (the parent's share first, so with two
failing items it may not be the first in order). A process with other Python threads never
forks.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Generic, NoReturn, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MIN_SIZE = 1 << 20
"""Work below this total size (the caller's unit) is not worth a fork: forking a compile of
mbv1_100_224 and copying the pages both processes then write costs 5 to 8 ms, while 1 MiB of
weights to encode (512 Ki int16 values) takes the encoder 35 to 50 ms."""


def available_cores() -> int:
    """Cores this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def split_map(
    function: Callable[[Item], Result], items: Sequence[Item], sizes: Sequence[int], min_size: int | None = None
) -> list[Result]:
    """`[function(item) for item in items]`, the items shared out by `sizes` between this process
    and a forked child when that pays (two cores, fork, at least `min_size` in all, default
    `MIN_SIZE`). Side effects of `function` in the child stay there."""
    least = MIN_SIZE if min_size is None else min_size
    mine, theirs = _halves(sizes)
    if not mine or not theirs or sum(sizes) < least or not may_fork():
        return [function(item) for item in items]
    results: dict[int, Result] = {}
    with _child(function, [items[index] for index in theirs]) as child:
        for index in mine:
            results[index] = function(items[index])
        computed = child.results() if child is not None else None
    if computed is None or len(computed) != len(theirs):
        computed = [function(items[index]) for index in theirs]
    results.update(zip(theirs, computed, strict=True))  # type: ignore[arg-type]
    return [results[index] for index in range(len(items))]


def beside(background: Callable[[], Result], foreground: Callable[[], object]) -> Result:
    """`background()`, computed by a forked child while this process runs `foreground()`, when
    `split_map` would fork (two cores, Linux, one thread); else, or if the child fails, here
    after `foreground()`. `background` must be a pure function of the state both share: what
    it changes stays in the child. If `foreground` raises, the child is killed first."""
    if not may_fork():
        foreground()
        return background()
    with _child(lambda _: background(), [None]) as child:
        foreground()
        computed = child.results() if child is not None else None
    if computed is None or len(computed) != 1:
        return background()
    return computed[0]  # type: ignore[return-value]


class ChildFailed(RuntimeError):
    """The forked child of `ahead` died without a result (killed, out of memory): what it
    computed from cannot be had again."""


class Pending(Generic[Result]):
    """The result of `ahead`: computed already, or being computed by a forked child."""

    def __init__(self, child: _Child | None, outcome: tuple[bool, object] | None = None) -> None:
        self._child = child
        self._outcome = outcome

    def result(self) -> Result:
        """The function's value (waiting for the child), or its exception raised here."""
        if self._outcome is None:
            assert self._child is not None
            computed = self._child.results()
            self._child = None
            if computed is None or len(computed) != 1:
                raise ChildFailed("a forked child died before it sent its result")
            self._outcome = computed[0]  # type: ignore[assignment]
        assert self._outcome is not None
        succeeded, value = self._outcome
        if not succeeded:
            raise value  # type: ignore[misc]
        return value  # type: ignore[return-value]

    def cancel(self) -> None:
        """Stop the child, if there is one still computing."""
        if self._child is not None:
            self._child.kill()
            self._child = None


def ahead(function: Callable[[], Result]) -> Pending[Result]:
    """`function()` of the state as it is at this call, computed by a forked child while this
    process goes on and changes that state (when `split_map` would fork), else here and now.
    The child starts from a copy of every page as it stands (the fork), so the caller need not
    copy what `function` reads. An exception `function` raises is raised by `Pending.result`
    (it must pickle, as the value must). A process that will not collect the result cancels it."""
    if not may_fork():
        return Pending(None, _outcome(function))
    child = _fork(lambda _: _outcome(function), [None])
    return Pending(child) if child is not None else Pending(None, _outcome(function))


def _outcome(function: Callable[[], Result]) -> tuple[bool, object]:
    try:
        return True, function()
    except Exception as error:
        return False, error


def may_fork() -> bool:
    """Whether `split_map` and `beside` would fork: two cores, Linux, one Python thread, and not
    in a child of theirs already (its parent keeps the other core busy)."""
    return not _in_child and available_cores() >= 2 and _can_fork()


_in_child = False


def _can_fork() -> bool:
    """Whether forking is safe: on Linux (macOS system libraries may start threads of their own,
    which is why Python's multiprocessing spawns there), with this process running one Python
    thread (a child forked from several could wait forever on a lock another thread held, as in
    an embedding host). Native threads, such as a BLAS pool, install fork handlers, and the
    child runs no BLAS."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def _halves(sizes: Sequence[int]) -> tuple[list[int], list[int]]:
    """Indices split into two lists of about equal total size: largest first, each to the lighter
    side (sizes 5, 4, 3, 2: 5 + 2 and 4 + 3). Each list keeps the input order."""
    sides: tuple[list[int], list[int]] = ([], [])
    totals = [0, 0]
    for index in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        side = 0 if totals[0] <= totals[1] else 1
        sides[side].append(index)
        totals[side] += sizes[index]
    return sorted(sides[0]), sorted(sides[1])


@contextmanager
def _child(function: Callable[[Item], Result], items: list[Item]) -> Iterator[_Child | None]:
    """A forked child computing `function` over `items` (None if it could not be forked). If the
    body raises (the parent's own share fails, or Ctrl-C), the child is killed and reaped before
    the exception goes on."""
    child = _fork(function, items)
    try:
        yield child
    except BaseException:
        if child is not None:
            child.kill()
        raise


def _fork(function: Callable[[Item], Result], items: list[Item]) -> _Child | None:
    """A forked child computing `function` over `items`, or None if it could not be forked."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # else the child's copy of a buffer could be written twice
    read_fd, write_fd = os.pipe()
    # SIGINT waits until both sides are ready for it: the child dies of it, the parent raises.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        os.close(read_fd)
        os.close(write_fd)
        return None
    if pid == 0:
        _run_child(function, items, read_fd, write_fd, blocked)
    os.close(write_fd)
    child = _Child(pid, read_fd)
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)  # a pending Ctrl-C raises here
    except BaseException:
        child.kill()
        raise
    return child


def _run_child(
    function: Callable[[Item], Result], items: list[Item], read_fd: int, write_fd: int, blocked: set[signal.Signals]
) -> NoReturn:
    """The child's whole life: compute, write the pickled results, exit without running the
    parent's exit handlers or finalizers."""
    global _in_child
    status = 1
    _in_child = True
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        gc.disable()  # garbage the parent left would be finalised here too
        os.close(read_fd)
        payload = pickle.dumps([function(item) for item in items], pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(payload)
        status = 0
    finally:
        os._exit(status)


class _Child:
    """The parent's end of a forked child: its pipe, and its exit status once reaped."""

    def __init__(self, pid: int, read_fd: int) -> None:
        self.pid = pid
        self.pipe = os.fdopen(read_fd, "rb")
        self.status: int | None = None

    def results(self) -> list[object] | None:
        """The child's results once it has exited, or None if it failed. A child that wrote a
        whole pickle succeeded, even if a host that ignores SIGCHLD reaped it before us."""
        payload = self.pipe.read()
        self.pipe.close()
        if self._reap() != 0 or not payload:
            return None
        try:
            results = pickle.loads(payload)
        except Exception:  # a truncated payload: the child died while writing
            return None
        return results if isinstance(results, list) else None

    def kill(self) -> None:
        """Stop the child and reap it."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.pipe.close()
        self._reap()

    def _reap(self) -> int:
        if self.status is None:
            try:
                _, self.status = os.waitpid(self.pid, 0)
            except ChildProcessError:  # already reaped by a host that ignores SIGCHLD
                self.status = 0
        return self.status
