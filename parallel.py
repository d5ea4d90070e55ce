"""`split_map`: a pure function over a list, shared between this process and one forked child.

A compile is one Python process, and the GIL keeps C extensions that do not release it (Vela's
weight encoder) on one core. Where the machine has a second core and Linux can fork, the child
takes about half of the work (by the caller's size of each item) while the parent does the rest;
the child sends its results back pickled through a pipe. The results are exactly those of
`[function(item) for item in items]`: if the child cannot run or fails, the parent computes its
share too, so an item that raises raises in the parent. A process with other threads never
forks.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

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
    if len(items) < 2 or sum(sizes) < least or available_cores() < 2 or not _can_fork():
        return [function(item) for item in items]
    mine, theirs = _halves(sizes)
    results: dict[int, Result] = {}
    child = _Child.start(function, [items[index] for index in theirs])
    try:
        for index in mine:
            results[index] = function(items[index])
    finally:
        received = child.join() if child is not None else None
    if received is None:
        received = [function(items[index]) for index in theirs]
    results.update(zip(theirs, received, strict=True))
    return [results[index] for index in range(len(items))]


def _can_fork() -> bool:
    """Whether forking is safe: on Linux (macOS system libraries may start threads of their own,
    which is why Python's multiprocessing spawns there), with this process running one thread
    (a child forked from several could wait forever on a lock another thread held, as in an
    embedding host)."""
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


class _Child:
    """A forked process computing `function` over its items and writing the pickled results."""

    def __init__(self, pid: int, read_fd: int) -> None:
        self.pid = pid
        self.read_fd = read_fd

    @classmethod
    def start(cls, function: Callable[[Item], Result], items: list[Item]) -> _Child | None:
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return None
        if pid == 0:  # the child: never returns, never runs the parent's exit handlers
            status = 1
            try:
                os.close(read_fd)
                payload = pickle.dumps([function(item) for item in items], pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_fd, "wb") as pipe:
                    pipe.write(payload)
                status = 0
            finally:
                os._exit(status)
        os.close(write_fd)
        return cls(pid, read_fd)

    def join(self) -> list | None:
        """The child's results, or None if it failed."""
        with os.fdopen(self.read_fd, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(self.pid, 0)
        if status != 0 or not payload:
            return None
        return pickle.loads(payload)
