"""Placement of buffers with step lifetimes at byte offsets in one memory.

The input is a list of `Buffer`s, each live over an inclusive range of steps; the output gives
every buffer an offset such that buffers live at the same step never overlap. The planner
calls `place` to predict the peak of a plan and the allocator (allocate-memory) calls it again
on the same buffer list, so the predicted peak is the allocated peak by construction.

A buffer may take over the storage of another (`Buffer.alias_of`): an output written in place
over an input that dies there, at the same offset (`lead` 0) or starting `lead` bytes below it
(a cascade writing output rows over input rows it is done with). Such a chain is one
*storage*: its members at fixed displacements from the storage's offset, placed together, each
occupying its own bytes over its own steps. At a step, a storage counts the bytes its live
members cover (a member and the one it aliases overlap at the step they share).

The heuristic, deterministic throughout (ties broken by buffer name):

1. Buffers live over several steps (full tensors crossing cascade boundaries) are placed
   first, one at a time, each at the lowest offset where it overlaps no already placed buffer
   with a common step. Four orders are tried (size descending; lifetime length descending;
   start ascending; size x length descending) and the one with the lowest final peak is kept.
2. Buffers live in a single step (rolling buffers, recompute buffers, weight buffers, and
   tensors read by one step only) never meet buffers of other steps, so each step is filled
   on its own: by decreasing size, each into the smallest free gap of that step that holds
   it (lowest offset on ties), else on top.

Every size must be a multiple of `ALIGNMENT`; offsets then are too (16-byte aligned).

Pure Python: no IR types, no target.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

ALIGNMENT = 16
"""Byte alignment of every buffer offset and size (Ethos-U feature-map base addresses)."""


@dataclass(frozen=True)
class Buffer:
    """A buffer to place: a unique name, a size in bytes, and the steps it is live in."""

    name: str
    size: int
    first_step: int
    last_step: int
    kind: str = "tensor"
    alias_of: str | None = None
    """The name of a buffer whose storage this one takes over (an operator writing its output
    in place over an input that dies at this buffer's first step)."""
    lead: int = 0
    """With `alias_of`: how many bytes below the aliased buffer this one starts (0: at the same
    offset)."""

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.first_step <= other.last_step and other.first_step <= self.last_step


@dataclass(frozen=True)
class Placement:
    """Offsets by buffer name and the resulting peak (highest end offset)."""

    offsets: dict[str, int]
    peak: int
    order: str
    """Which phase-1 order produced it (for diagnostics)."""


def align(size: int) -> int:
    """`size` rounded up to a multiple of `ALIGNMENT`."""
    return -(-size // ALIGNMENT) * ALIGNMENT


def max_live(buffers: Sequence[Buffer]) -> int:
    """The largest total size live at one step: a lower bound of any placement's peak."""
    return max(step_totals(buffers).values(), default=0)


def step_totals(buffers: Sequence[Buffer]) -> dict[int, int]:
    """Total size live at each step, each storage's bytes (a buffer and its aliases) counted
    once: 32 bytes at displacement 16 and 32 at 0 live at one step cover 48."""
    storages, displacements = storage_layout(buffers)
    # Per storage and step, the byte intervals its live members cover; a storage of one buffer
    # is its size over its steps (most buffers: kept to running sums).
    bytes_change: dict[int, int] = {}
    covered: dict[str, dict[int, list[tuple[int, int]]]] = {}
    for buffer in buffers:
        if buffer.first_step > buffer.last_step:
            continue
        storage = storages[buffer.name]
        if storage is buffer:
            bytes_change[buffer.first_step] = bytes_change.get(buffer.first_step, 0) + buffer.size
            bytes_change[buffer.last_step + 1] = bytes_change.get(buffer.last_step + 1, 0) - buffer.size
            continue
        start = displacements[buffer.name]
        for step in range(buffer.first_step, buffer.last_step + 1):
            covered.setdefault(storage.name, {}).setdefault(step, []).append((start, start + buffer.size))
    totals: dict[int, int] = {}
    total = 0
    changes = sorted(bytes_change)
    for index, step in enumerate(changes[:-1]):
        total += bytes_change[step]
        totals.update(dict.fromkeys(range(step, changes[index + 1]), total))
    for per_step in covered.values():
        for step, intervals in per_step.items():
            totals[step] = totals.get(step, 0) + _covered_bytes(intervals)
    live = {step for b in buffers if b.first_step <= b.last_step for step in range(b.first_step, b.last_step + 1)}
    return {step: totals.get(step, 0) for step in sorted(live)}


def _covered_bytes(intervals: list[tuple[int, int]]) -> int:
    """Bytes covered by half-open intervals: [0, 32) and [16, 48) cover 48."""
    total = 0
    end = None
    for lo, hi in sorted(intervals):
        if end is None or lo > end:
            total += hi - lo
            end = hi
        elif hi > end:
            total += hi - end
            end = hi
    return total


def storage_layout(buffers: Sequence[Buffer]) -> tuple[dict[str, Buffer], dict[str, int]]:
    """For every buffer, the storage it lives in and its displacement in it.

    A buffer that aliases nothing and that nothing aliases is its own storage, displacement 0.
    A chain of aliases is one storage named after its first buffer (the one aliasing nothing),
    spanning its members (each `lead` bytes below the one it aliases, the lowest at
    displacement 0), live from the first member's first step to the last member's last step.
    """
    by_name = {b.name: b for b in buffers}
    if len(by_name) == len(buffers) and all(b.alias_of is None for b in buffers):
        return by_name, dict.fromkeys(by_name, 0)  # no chains: every buffer is its own storage
    root: dict[str, str] = {}
    relative: dict[str, int] = {}  # position relative to the chain's first buffer
    for buffer in buffers:
        chain = [buffer]
        while chain[-1].alias_of is not None:
            current = chain[-1]
            target = by_name.get(current.alias_of)  # type: ignore[arg-type]
            if target is None:
                raise ValueError(f"buffer {current.name} aliases {current.alias_of}, which is not in the list")
            if current.lead < 0 or current.lead % ALIGNMENT:
                raise ValueError(f"buffer {current.name}: lead {current.lead} is not a multiple of {ALIGNMENT}")
            if target in chain:
                raise ValueError(f"buffer {buffer.name}: aliases form a cycle")
            chain.append(target)
        root[buffer.name] = chain[-1].name
        relative[buffer.name] = -sum(member.lead for member in chain[:-1])
    members: dict[str, list[Buffer]] = {}
    for buffer in buffers:
        members.setdefault(root[buffer.name], []).append(buffer)
    storages: dict[str, Buffer] = {}
    displacements: dict[str, int] = {}
    for name, group in members.items():
        if len(group) == 1:  # its own storage: it aliases nothing, nothing aliases it
            storages[name], displacements[name] = group[0], 0
            continue
        low = min(relative[b.name] for b in group)
        span = max(relative[b.name] - low + b.size for b in group)
        first = min(b.first_step for b in group)
        last = max(b.last_step for b in group)
        storage = Buffer(name, span, first, last, by_name[name].kind)
        for b in group:
            storages[b.name], displacements[b.name] = storage, relative[b.name] - low
    return storages, displacements


_ORDERS: tuple[tuple[str, Callable[[Buffer], tuple[object, ...]]], ...] = (
    ("size", lambda b: (-b.size, b.first_step, b.name)),
    ("lifetime", lambda b: (-(b.last_step - b.first_step), -b.size, b.name)),
    ("start", lambda b: (b.first_step, -b.size, b.name)),
    ("area", lambda b: (-b.size * (b.last_step - b.first_step + 1), b.first_step, b.name)),
)


DEFAULT_EFFORT = 400
"""Hill-climbing iterations of `place` after the quick heuristics (0: quick heuristics only)."""


def place(buffers: Sequence[Buffer], effort: int = DEFAULT_EFFORT) -> Placement:
    """Offsets for `buffers` (see the module docstring). Sizes must be multiples of 16.

    Deterministic: the same buffers and `effort` always give the same placement. The planner
    and the allocator must use the same `effort` (the default) to agree on the peak.
    """
    names = [b.name for b in buffers]
    if len(set(names)) != len(names):
        raise ValueError("buffer names must be unique")
    for buffer in buffers:
        if buffer.first_step > buffer.last_step:
            raise ValueError(f"buffer {buffer.name} ends before it starts")
    storages, displacements = storage_layout(buffers)
    distinct = list({storage.name: storage for storage in storages.values()}.values())
    parts: dict[str, list[Part]] = {}
    for buffer in buffers:
        storage = storages[buffer.name]
        if storage is not buffer and buffer.size:
            parts.setdefault(storage.name, []).append(
                Part(displacements[buffer.name], buffer.size, buffer.first_step, buffer.last_step)
            )
    placement = _place_distinct(distinct, effort, {name: tuple(p) for name, p in parts.items()}, max_live(buffers))
    offsets = {name: placement.offsets[storage.name] + displacements[name] for name, storage in storages.items()}
    return Placement(offsets, placement.peak, placement.order)


def fits(buffers: Sequence[Buffer], capacity: int) -> bool:
    """Whether `place(buffers)` (the default effort, as the allocator places) peaks within
    `capacity`. The quick heuristics alone decide when they fit: the hill climb after them
    only ever lowers their peak."""
    return place(buffers, effort=0).peak <= capacity or place(buffers).peak <= capacity


@dataclass(frozen=True)
class Part:
    """A member of a storage of several buffers: its bytes [displacement, displacement + size)
    from the storage's offset, over steps first..last."""

    displacement: int
    size: int
    first: int
    last: int


def _place_distinct(
    buffers: Sequence[Buffer], effort: int, parts: dict[str, tuple[Part, ...]], lower_bound: int
) -> Placement:
    """`place` for buffers that share no storage; `parts` gives the members of the storages
    of several buffers (the others occupy their size over their steps)."""
    for buffer in buffers:
        if buffer.size % ALIGNMENT or buffer.size < 0:
            raise ValueError(f"buffer {buffer.name} size {buffer.size} is not a multiple of {ALIGNMENT}")
    long_lived = [b for b in buffers if (b.first_step < b.last_step or b.name in parts) and b.size]
    single = [b for b in buffers if b.first_step == b.last_step and b.name not in parts and b.size]
    empty = {b.name: 0 for b in buffers if not b.size}
    together = _Problem([*long_lived, *_step_blocks(single)], parts)
    apart = _Problem(long_lived, parts)
    best: Placement | None = None
    best_order: list[int] = []
    for order_name, key in _ORDERS:
        for problem in (together, apart):
            order = problem.order(key)
            offsets = problem.first_fit(order)
            if problem is together:
                # Each step's single-step buffers as one block, placed with the long-lived ones.
                named = _expand_blocks(problem.named(offsets), single)
            else:
                named = problem.named(offsets)
                named.update(_fill_steps(apart, named, single))
            peak = max((named[b.name] + b.size for b in buffers if b.size), default=0)
            if best is None or peak < best.peak:
                best = Placement({**named, **empty}, peak, f"{order_name}{'+blocks' if problem is together else ''}")
                if problem is together:
                    best_order = order
            if peak == lower_bound:
                return best
    assert best is not None
    if effort > 0 and together.items:
        start_order = best_order or together.order(_ORDERS[0][1])
        peak, offsets = together.hill_climb(start_order, lower_bound, effort)
        if peak < best.peak:
            named = _expand_blocks(together.named(offsets), single)
            best = Placement({**named, **empty}, peak, "hill-climb")
    return best


class _Problem:
    """Buffers to place, with the pairs that are live at a common step precomputed."""

    def __init__(self, items: list[Buffer], parts: dict[str, tuple[Part, ...]] | None = None) -> None:
        self.items = items
        self.sizes = [b.size for b in items]
        parts = parts or {}
        self.parts = [parts.get(b.name) or (Part(0, b.size, b.first_step, b.last_step),) for b in items]
        by_start = sorted(range(len(items)), key=lambda i: items[i].first_step)
        self.overlaps: list[list[int]] = [[] for _ in items]
        for position, i in enumerate(by_start):
            for j in by_start[position + 1 :]:
                if items[j].first_step > items[i].last_step:
                    break
                self.overlaps[i].append(j)
                self.overlaps[j].append(i)
        # A storage of several buffers shows its parts to the buffers of their own it meets:
        # each part is a virtual item after the real ones (offset: the storage's plus the
        # part's displacement, set when the storage is placed), so that first fit places
        # those buffers as usual, and only the storages themselves take `_lowest_fit`.
        self.compound = [len(p) > 1 for p in self.parts]
        self.virtual_parts: list[list[tuple[int, int]]] = [[] for _ in items]
        """For a storage of several buffers, (virtual item, displacement) of each part."""
        for c in (c for c in range(len(items)) if self.compound[c]):
            for part in self.parts[c]:
                self.virtual_parts[c].append((len(self.sizes), part.displacement))
                self.sizes.append(part.size)
        for i, item in enumerate(items):
            if self.compound[i] or not any(self.compound[j] for j in self.overlaps[i]):
                continue
            neighbours = [j for j in self.overlaps[i] if not self.compound[j]]
            for j in (j for j in self.overlaps[i] if self.compound[j]):
                for (virtual, _), part in zip(self.virtual_parts[j], self.parts[j], strict=True):
                    if part.first <= item.last_step and item.first_step <= part.last:
                        neighbours.append(virtual)
            self.overlaps[i] = neighbours

    def order(self, key: Callable[[Buffer], tuple[object, ...]]) -> list[int]:
        return sorted(range(len(self.items)), key=lambda i: key(self.items[i]))

    def named(self, offsets: list[int]) -> dict[str, int]:
        return {b.name: offsets[i] for i, b in enumerate(self.items)}

    def first_fit(self, order: Sequence[int], placed: int = 0, previous: Sequence[int] = ()) -> list[int]:
        """Each buffer, in `order`, at the lowest offset free over its whole lifetime.

        With `placed` > 0, `previous` must be the offsets first fit gave an order that starts
        with the same `placed` buffers: those stay where they were (first fit places each buffer
        by those before it alone), and only the rest are placed again."""
        sizes, overlaps, compound, virtual_parts = self.sizes, self.overlaps, self.compound, self.virtual_parts
        if placed:
            offsets = list(previous)
            for i in order[placed:]:
                offsets[i] = -1
                for virtual, _ in virtual_parts[i]:
                    offsets[virtual] = -1
        else:
            offsets = [-1] * len(sizes)
        offset_of = offsets.__getitem__
        for i in order[placed:]:
            if compound[i]:
                offset = offsets[i] = self._lowest_fit(i, offsets)
                for virtual, displacement in virtual_parts[i]:
                    offsets[virtual] = offset + displacement
                continue
            size = sizes[i]
            # The placed buffers it overlaps in time, lowest first (the planner's hottest loop:
            # sorting indices by offset beats sorting (start, end) pairs; ties cannot matter,
            # each interval ending above its start).
            conflicts = [j for j in overlaps[i] if offsets[j] >= 0]
            conflicts.sort(key=offset_of)
            offset = 0
            for j in conflicts:
                start = offsets[j]
                if start >= offset + size:
                    break
                end = start + sizes[j]
                if end > offset:
                    offset = end
            offsets[i] = offset
        return offsets

    def _lowest_fit(self, i: int, offsets: list[int]) -> int:
        """`first_fit`'s offset for item `i`, a storage of several buffers: the lowest offset
        at which none of its parts meets a placed part live at a common step."""
        blocked = []  # offsets x with low < x < high put a part of i on a placed part
        for j in self.overlaps[i]:
            if offsets[j] < 0:
                continue
            for mine in self.parts[i]:
                for theirs in self.parts[j]:
                    if mine.first <= theirs.last and theirs.first <= mine.last:
                        start = offsets[j] + theirs.displacement - mine.displacement
                        blocked.append((start - mine.size, start + theirs.size))
        blocked.sort()
        offset = 0
        for low, high in blocked:
            if low >= offset:
                break
            if high > offset:
                offset = high
        return offset

    def occupied(self, i: int, offset: int, step: int) -> list[tuple[int, int]]:
        """The bytes item `i` placed at `offset` occupies at `step`."""
        return [
            (offset + part.displacement, offset + part.displacement + part.size)
            for part in self.parts[i]
            if part.first <= step <= part.last
        ]

    def peak(self, offsets: list[int]) -> int:
        count = len(self.items)  # the virtual parts after them are inside their storages
        return max((o + s for o, s in zip(offsets[:count], self.sizes[:count], strict=True)), default=0)

    def hill_climb(self, order: list[int], lower_bound: int, effort: int) -> tuple[int, list[int]]:
        """Improve the order by moving the buffer that sets the peak earlier (Vela's HillClimb
        allocator does the same), keeping any order that is no worse. A fixed seed makes it
        deterministic."""
        rng = random.Random(20240917)
        offsets = self.first_fit(order)
        best = (self.peak(offsets), list(order), offsets)
        top = self._top(best[1], best[2])
        for _ in range(effort):
            if best[0] <= lower_bound:
                break
            current, current_offsets = best[1], best[2]
            candidate = list(current)
            if top > 0 and rng.random() < 0.7:
                item = candidate.pop(top)
                moved = rng.randrange(0, top)
                candidate.insert(moved, item)
            else:
                a, b = rng.randrange(len(candidate)), rng.randrange(len(candidate))
                candidate[a], candidate[b] = candidate[b], candidate[a]
                moved = min(a, b)
            # The buffers before the first moved one keep their offsets.
            candidate_offsets = self.first_fit(candidate, moved, current_offsets)
            candidate_peak = self.peak(candidate_offsets)
            if candidate_peak <= best[0]:
                best = (candidate_peak, candidate, candidate_offsets)
                top = self._top(candidate, candidate_offsets)
        return best[0], best[2]

    def _top(self, order: list[int], offsets: list[int]) -> int:
        """The position in `order` of the buffer that ends highest (the first on ties)."""
        sizes = self.sizes
        return max(range(len(order)), key=lambda k: (offsets[order[k]] + sizes[order[k]], -k))


_BLOCK_PREFIX = "\0step-block:"


def _step_blocks(single: Sequence[Buffer]) -> list[Buffer]:
    totals: dict[int, int] = {}
    for buffer in single:
        totals[buffer.first_step] = totals.get(buffer.first_step, 0) + buffer.size
    return [Buffer(f"{_BLOCK_PREFIX}{step}", size, step, step) for step, size in sorted(totals.items())]


def _expand_blocks(offsets: dict[str, int], single: Sequence[Buffer]) -> dict[str, int]:
    """Replace each step block by its buffers, laid out from its offset by decreasing size."""
    by_step: dict[int, list[Buffer]] = {}
    for buffer in single:
        by_step.setdefault(buffer.first_step, []).append(buffer)
    result = {name: offset for name, offset in offsets.items() if not name.startswith(_BLOCK_PREFIX)}
    for step, members in by_step.items():
        cursor = offsets[f"{_BLOCK_PREFIX}{step}"]
        for buffer in sorted(members, key=lambda b: (-b.size, b.name)):
            result[buffer.name] = cursor
            cursor += buffer.size
    return result


def _fill_steps(long_lived: _Problem, offsets: dict[str, int], single: Sequence[Buffer]) -> dict[str, int]:
    """Place single-step buffers step by step into the gaps the long-lived buffers leave."""
    by_step: dict[int, list[Buffer]] = {}
    for buffer in single:
        by_step.setdefault(buffer.first_step, []).append(buffer)
    result: dict[str, int] = {}
    for step in sorted(by_step):
        occupied = sorted(
            interval
            for i, b in enumerate(long_lived.items)
            if b.first_step <= step <= b.last_step
            for interval in long_lived.occupied(i, offsets[b.name], step)
        )
        gaps: list[list[int]] = []  # [start, end) free intervals below the top
        cursor = 0
        for start, end in occupied:
            if start > cursor:
                gaps.append([cursor, start])
            cursor = max(cursor, end)
        top = cursor
        for buffer in sorted(by_step[step], key=lambda b: (-b.size, b.name)):
            fitting = [g for g in gaps if g[1] - g[0] >= buffer.size]
            if fitting:
                gap = min(fitting, key=lambda g: (g[1] - g[0], g[0]))
                result[buffer.name] = gap[0]
                gap[0] += buffer.size
            else:
                result[buffer.name] = top
                top += buffer.size
    return result
