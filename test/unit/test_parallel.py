"""`split_map`: the same results as a plain map, however the work is shared out."""

from __future__ import annotations

import os
import sys

import pytest

from cascade import parallel
from cascade.parallel import _halves, split_map

needs_fork = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the child is forked on Linux only")


def _digits(n: int) -> bytes:
    # Results differ item by item and are not all the same length.
    return str(n * 7919).encode() * (n % 5 + 1)


def test_halves_balance_the_sizes_and_keep_the_order() -> None:
    # Largest first, each to the lighter side: 5 here, 4 there, 3 there (4 < 5), 2 here (5 < 7).
    assert _halves([2, 5, 3, 4]) == ([0, 1], [2, 3])
    assert _halves([7]) == ([0], [])


@needs_fork
def test_results_are_those_of_a_plain_map(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    forks = []
    real_fork = os.fork

    def counting_fork() -> int:
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", counting_fork)
    items = list(range(40))
    assert split_map(_digits, items, [n + 1 for n in items], min_size=0) == [_digits(n) for n in items]
    assert forks == [1]


def test_small_work_or_one_core_stays_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork, raising=False)
    items = list(range(10))
    expected = [_digits(n) for n in items]
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    assert split_map(_digits, items, [1] * 10, min_size=11) == expected
    monkeypatch.setattr(parallel, "available_cores", lambda: 1)
    assert split_map(_digits, items, [1] * 10, min_size=0) == expected


@needs_fork
def test_an_item_that_raises_in_the_child_raises_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    parent = os.getpid()
    calls = []

    def fails_on_three(n: int) -> int:
        if os.getpid() == parent:
            calls.append(n)
        if n == 3:
            raise ValueError("three")
        return n

    sizes = [1, 1, 9, 5]
    assert _halves(sizes) == ([2], [0, 1, 3])  # item 3 is the child's
    with pytest.raises(ValueError, match="three"):
        split_map(fails_on_three, [0, 1, 2, 3], sizes, min_size=0)
    # The parent did its own share, then the child's again once the child had failed.
    assert calls == [2, 0, 1, 3]


def test_fork_failure_falls_back_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_fork() -> int:
        raise OSError("no more processes")

    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    monkeypatch.setattr(os, "fork", failing_fork, raising=False)
    items = list(range(12))
    assert split_map(_digits, items, [5] * 12, min_size=0) == [_digits(n) for n in items]


def test_a_process_with_other_threads_does_not_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    monkeypatch.setattr(os, "fork", no_fork, raising=False)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        items = list(range(6))
        assert split_map(_digits, items, [1] * 6, min_size=0) == [_digits(n) for n in items]
    finally:
        release.set()
        other.join()
