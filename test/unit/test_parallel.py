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


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fork whatever the machine and the other tests' threads (the guards have their own tests)."""
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    monkeypatch.setattr(parallel, "_can_fork", lambda: True)


@needs_fork
def test_results_are_those_of_a_plain_map(monkeypatch: pytest.MonkeyPatch, forking: None) -> None:
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
def test_an_item_that_raises_in_the_child_raises_here(forking: None) -> None:
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


@needs_fork
def test_fork_failure_falls_back_to_this_process(monkeypatch: pytest.MonkeyPatch, forking: None) -> None:
    def failing_fork() -> int:
        raise OSError("no more processes")

    monkeypatch.setattr(os, "fork", failing_fork, raising=False)
    items = list(range(12))
    assert split_map(_digits, items, [5] * 12, min_size=0) == [_digits(n) for n in items]


@needs_fork
def test_a_child_does_not_fork_again(forking: None) -> None:
    # The parent keeps the other core busy: a child's own split_map or beside runs in place.
    parent = os.getpid()

    def may_fork_here(_: int) -> tuple[bool, bool]:
        return os.getpid() == parent, parallel.may_fork()

    assert split_map(may_fork_here, [0, 1], [1, 1], min_size=0) == [(True, True), (False, False)]
    assert parallel.may_fork()


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


@needs_fork
def test_a_failure_here_kills_the_child_at_once(monkeypatch: pytest.MonkeyPatch, forking: None) -> None:
    import time

    children = []
    real_fork = os.fork

    def recording_fork() -> int:
        pid = real_fork()
        if pid:
            children.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recording_fork)

    def slow_there(n: int) -> int:
        if n == 0:
            raise ValueError("here")
        time.sleep(30)  # the child's item: it must not be waited for
        return n

    started = time.perf_counter()
    with pytest.raises(ValueError, match="here"):
        split_map(slow_there, [0, 1], [2, 1], min_size=0)
    assert time.perf_counter() - started < 10
    assert len(children) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(children[0], os.WNOHANG)  # reaped: no zombie left behind


@needs_fork
def test_a_child_reaped_by_the_host_still_counts(monkeypatch: pytest.MonkeyPatch, forking: None) -> None:
    # A host that ignores SIGCHLD has its children reaped by the kernel: waitpid finds none.
    import signal

    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        items = list(range(8))
        assert split_map(_digits, items, [n + 1 for n in items], min_size=0) == [_digits(n) for n in items]
    finally:
        signal.signal(signal.SIGCHLD, previous)


@needs_fork
def test_beside_computes_in_a_child_while_this_process_works(forking: None) -> None:
    # The child's pid shows where the background ran; what the foreground changes stays here,
    # what the background changes stays in the child.
    seen: list[str] = []

    def background() -> tuple[int, bytes]:
        seen.append("background")
        return os.getpid(), _digits(12)

    pid, digits = parallel.beside(background, lambda: seen.append("foreground"))
    assert pid != os.getpid()
    assert digits == _digits(12)
    assert seen == ["foreground"]


@needs_fork
def test_beside_recomputes_here_when_the_child_fails_and_stops_it_when_this_side_fails(forking: None) -> None:
    def failing() -> int:
        raise ValueError("from the background")

    with pytest.raises(ValueError, match="from the background"):
        parallel.beside(failing, lambda: None)
    # A foreground that raises: the child is killed and reaped, the error goes on.
    pids_before = _children()
    with pytest.raises(KeyError):
        parallel.beside(lambda: sum(range(10**7)), lambda: {}["missing"])
    assert _children() == pids_before


def test_beside_without_a_second_core_runs_both_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork, raising=False)
    monkeypatch.setattr(parallel, "available_cores", lambda: 1)
    order: list[str] = []
    assert parallel.beside(lambda: order.append("background") or 7, lambda: order.append("foreground")) == 7
    assert order == ["foreground", "background"]


def _children() -> set[int]:
    """Pids of this process's living children (Linux)."""
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as children:
        return {int(pid) for pid in children.read().split()}


@needs_fork
def test_ahead_computes_from_the_state_at_the_call_while_this_process_changes_it(forking: None) -> None:
    state = [3, 4]
    pending = parallel.ahead(lambda: (os.getpid(), sum(state), _digits(sum(state))))
    state.append(100)  # after the fork: the child's copy has not seen it
    pid, total, digits = pending.result()
    assert pid != os.getpid()
    assert (total, digits) == (7, _digits(7))
    assert pending.result()[1] == 7  # collected once, kept


@needs_fork
def test_ahead_raises_the_childs_exception_here_and_a_dead_child_is_a_clear_failure(forking: None) -> None:
    def failing() -> int:
        raise ValueError("from the child")

    with pytest.raises(ValueError, match="from the child"):
        parallel.ahead(failing).result()
    # A child that dies without a result: what it computed from is gone, so it is an error.
    with pytest.raises(parallel.ChildFailed, match="died"):
        parallel.ahead(lambda: os._exit(3)).result()


@needs_fork
def test_a_cancelled_ahead_leaves_no_child(forking: None) -> None:
    pids_before = _children()
    pending = parallel.ahead(lambda: sum(range(10**9)))
    assert _children() - pids_before, "no child was forked"
    pending.cancel()
    assert _children() == pids_before


def test_ahead_without_a_second_core_computes_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork, raising=False)
    monkeypatch.setattr(parallel, "available_cores", lambda: 1)
    state = [3, 4]
    pending = parallel.ahead(lambda: sum(state))
    state.append(100)
    assert pending.result() == 7
    failing = parallel.ahead(lambda: {}["missing"])
    with pytest.raises(KeyError):
        failing.result()
