"""A memory-lean operator order: a topological order of the program chosen for the full tensors
it keeps live, which the planner searches alongside the program's own order.

The planner cascades contiguous ranges of one order, so the order decides which full tensors
live side by side. A converter lists the two branches of a residual block in whatever order
it met them. In resnet8's second block the input (16 KiB) feeds a 1x1 shortcut and a 3x3
convolution, each with an 8 KiB output. On U55-128, run the shortcut first and the
convolution's 5,728 bytes of encoded weights join three full tensors: 16 + 8 + 8 KiB + 5,728
= 38,496 bytes; run the convolution first and the worst step of the block holds 34,128 bytes
(the next convolution's).

`lean_order` scores an order by its steps, one operator each: a step holds the full tensors
live while it runs, the operator's output (none when it may write it over an input read for
the last time, as `memory.in_place_source` allows) and its weights. Orders compare by their
step memories sorted largest first, lexicographically (the largest step, then the next
largest, ...): the largest alone ties most orders, one step elsewhere in the program usually
deciding it. Ties go to the order nearest the program's (the smallest sequence of program
positions).

The search is exact, by dynamic programming over the sets of operators run so far: two orders
that ran the same set leave the same tensors live, and adding the same step memories to two
sorted lists keeps which one compares smaller, so each set keeps only its best order. A chain
has one set per length; parallel branches multiply them, and when the search would score more
than `MAX_STEPS` steps the program's order stands.

Pure Python: no IR types, no target.
"""

from __future__ import annotations

from cascade.passes.planner.cost import CostModel
from cascade.passes.planner.memory import full_bytes, may_overwrite, weight_bytes
from cascade.passes.planner.program import ProgramGraph

MAX_STEPS = 50_000
"""Most steps the search scores, about 0.2 s of work (2 to 5 us a step). resnet8 needs 23,
mbv2_100_224 65; ten inception-like blocks of five parallel branches of three operators
40,960, of six 197,120."""

Score = tuple[int, ...]
"""Step memories of an order, largest first."""


def lean_order(graph: ProgramGraph, cost: CostModel) -> tuple[int, ...] | None:
    """The best topological order of `graph`'s operators (indices into `graph.ops`) by the
    module's score, or None when that is the program's own order or the search is too wide."""
    best = _best_order(graph, cost)
    if best is None or best[1] == tuple(range(graph.size)):
        return None
    return best[1]


def order_score(graph: ProgramGraph, cost: CostModel, order: tuple[int, ...]) -> Score:
    """The score of `order`, a topological order of `graph`'s operators (module docstring)."""
    facts = _Facts(graph, cost)
    done, live, steps = 0, facts.initial_live, []
    for op in order:
        step, live = facts.run(op, done, live)
        steps.append(step)
        done |= 1 << op
    return tuple(sorted(steps, reverse=True))


def _best_order(graph: ProgramGraph, cost: CostModel) -> tuple[Score, tuple[int, ...]] | None:
    facts = _Facts(graph, cost)
    ready = sum(1 << op for op in range(graph.size) if not facts.needs[op])
    # Per set of operators run (a bit mask): (score, order, bytes live after it, operators
    # ready to run).
    states: dict[int, tuple[Score, tuple[int, ...], int, int]] = {0: ((), (), facts.initial_live, ready)}
    steps = 0
    for _ in range(graph.size):
        following: dict[int, tuple[Score, tuple[int, ...], int, int]] = {}
        for done, (score, order, live, ready) in states.items():
            steps += ready.bit_count()
            if steps > MAX_STEPS:
                return None
            for op in _bits(ready):
                step, after = facts.run(op, done, live)
                key = done | 1 << op
                candidate = (tuple(sorted((*score, step), reverse=True)), (*order, op))
                known = following.get(key)
                if known is None or candidate < known[:2]:
                    following[key] = (*candidate, after, facts.now_ready(op, key, ready))
        states = following
    [(score, order, _, _)] = states.values()
    return score, order


def _bits(mask: int) -> list[int]:
    """The positions of the set bits of `mask`, ascending."""
    found = []
    while mask:
        low = mask & -mask
        found.append(low.bit_length() - 1)
        mask ^= low
    return found


class _Facts:
    """What scoring needs of each operator and tensor, by index: tensors 0..n-1 are the
    operators' outputs, n.. the graph inputs."""

    def __init__(self, graph: ProgramGraph, cost: CostModel) -> None:
        size = graph.size
        self.graph = graph
        self.cost = cost
        externals = {tensor.name: size + index for index, tensor in enumerate(graph.external_inputs)}
        tensors = [op.output for op in graph.ops] + list(graph.external_inputs)
        self.bytes = [full_bytes(cost, tensor) for tensor in tensors]
        self.kept = [tensor.name in graph.outputs for tensor in tensors]
        """Returned: live to the end."""
        self.readers = [0] * len(tensors)
        self.reads: list[tuple[int, ...]] = []
        self.needs = [0] * size
        """Per operator, the operators it reads (a bit mask)."""
        for op, operands in enumerate(graph.operands):
            read = []
            for operand in operands:
                tensor = operand.producer if operand.producer >= 0 else externals[operand.tensor.name]
                if operand.producer >= 0:
                    self.needs[op] |= 1 << operand.producer
                self.readers[tensor] |= 1 << op
                if tensor not in read:
                    read.append(tensor)
            self.reads.append(tuple(read))
        self.weights = [weight_bytes(cost, graph, op) for op in range(size)]
        self.initial_live = sum(self.bytes[size:])
        self.overwritable = [
            frozenset(t for t in self.reads[op] if t < size and may_overwrite(cost, info, graph.ops[t].output))
            for op, info in enumerate(graph.ops)
        ]
        """Per operator, the operator outputs it may write its own over (`memory.may_overwrite`)."""
        self.consumers = [tuple(sorted({c for c, _ in graph.consumers[op]})) for op in range(size)]

    def run(self, op: int, done: int, live: int) -> tuple[int, int]:
        """(memory of the step running `op` after the operators in `done`, with `live` bytes of
        full tensors live before it; the bytes live after it)."""
        dying = [t for t in self.reads[op] if not self.kept[t] and self.readers[t] & ~done == 1 << op]
        in_place = not self.overwritable[op].isdisjoint(dying)
        output = self.bytes[op]
        step = live + (0 if in_place else output) + self.weights[op]
        stays = self.readers[op] or self.kept[op]
        return step, live - sum(self.bytes[t] for t in dying) + (output if stays else 0)

    def now_ready(self, op: int, done: int, ready: int) -> int:
        """The operators ready once `op` has run (`done` includes it), from those ready before."""
        ready &= ~(1 << op)
        for consumer in self.consumers[op]:
            if not self.needs[consumer] & ~done:
                ready |= 1 << consumer
        return ready
