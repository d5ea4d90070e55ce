"""Spilling: which full tensors of a plan stay in SRAM when the target has a second memory.

A target whose cost model answers `can_spill()` (Ethos-U in Dedicated_Sram: the tensor arena is
DRAM and the SRAM a cache of `arena_cache_size` bytes) may keep the full tensors of a plan (the
`input:` and `tensor:` buffers of `memory`) in that slower memory: they take no SRAM, and the
operators reading or writing them pay for the slower traffic. Rolling, recompute and weight
buffers always stay in SRAM.

The planner then searches a second candidate set (`search.Candidates.spilling`) that counts
no full tensor in SRAM and estimates the traffic (`Candidates.spill_penalty`). For each plan of
its front, `promote` brings full tensors back into SRAM while they fit the cap, those that save
the most cycles per byte first, as Vela moves feature maps into its SRAM cache; the plan is then
priced exactly with what remains spilled (`Candidates.exact_path`).

Some tensors never leave the spill memory, in any plan of such a target (`pinned_tensors`; the
planner's first search takes them spilled and every other full tensor in SRAM): graph inputs
and outputs and what an operator the target does not run (`CostModel.runs_on_npu`, else
`can_cascade`: the CPU's) reads or writes, or what is live across one, because everything
outside the NPU's command streams sees the tensor arena only.

Pure Python: no IR types, no target.
"""

from __future__ import annotations

from cascade.passes.planner.cost import CostModel, runs_on_target
from cascade.passes.planner.memory import Step, plan_buffers, spilled_buffers
from cascade.passes.planner.placement import fits, step_totals
from cascade.passes.planner.program import ProgramGraph
from cascade.passes.planner.search import Candidates


def can_spill(cost: CostModel) -> bool:
    """Whether the cost model's target may keep full tensors out of SRAM."""
    answer = getattr(cost, "can_spill", None)
    return bool(answer()) if callable(answer) else False


def full_tensors(graph: ProgramGraph, steps: list[Step]) -> frozenset[str]:
    """The names of a plan's full tensors: graph inputs read by operators and step outputs."""
    names = {tensor.name for tensor in graph.external_inputs}
    names.update(graph.ops[step.sink].output.name for step in steps)
    return frozenset(names)


def pinned_tensors(graph: ProgramGraph, cost: CostModel) -> frozenset[str]:
    """Full tensors that stay spilled in every spilling plan (see the module docstring)."""
    pinned = {tensor.name for tensor in graph.external_inputs} | set(graph.outputs)
    cpu = [op for op in range(graph.size) if not runs_on_target(cost, graph.ops[op])]
    for op in cpu:
        pinned.update(operand.tensor.name for operand in graph.operands[op])
        pinned.add(graph.ops[op].output.name)
    for producer in range(graph.size):
        if any(producer < op < graph.last_use[producer] for op in cpu):
            pinned.add(graph.ops[producer].output.name)
    for tensor, last in zip(graph.external_inputs, graph.external_last_use, strict=True):
        if any(op < last for op in cpu):
            pinned.add(tensor.name)
    return frozenset(pinned)


def promote(candidates: Candidates, steps: list[Step], cap: int, pinned: frozenset[str]) -> frozenset[str]:
    """The tensors of the plan of `steps` left spilled after moving the others into SRAM,
    greedily by estimated cycles saved per byte, while the placed SRAM peak stays within `cap`."""
    graph, cost = candidates.graph, candidates.cost
    spilled = full_tensors(graph, steps)
    totals = step_totals(plan_buffers(graph, steps, cost, spilled))

    def penalty(index: int, names: frozenset[str]) -> int:
        step = steps[index]
        return candidates.spill_penalty(step.first, step.sink, step.weights_in_sram, names)

    choices = []
    for buffer in spilled_buffers(graph, steps, cost, spilled):
        name = buffer.name.partition(":")[2]
        if name in pinned:
            continue
        kept = spilled - {name}
        saved = sum(
            penalty(index, spilled) - penalty(index, kept) for index in range(buffer.first_step, buffer.last_step + 1)
        )
        if saved > 0:
            choices.append((-saved / buffer.size, buffer.name, name, buffer))
    promoted: list[str] = []
    for _, _, name, buffer in sorted(choices):
        span = range(buffer.first_step, buffer.last_step + 1)
        if any(totals.get(step, 0) + buffer.size > cap for step in span):
            continue
        for step in span:
            totals[step] = totals.get(step, 0) + buffer.size
        promoted.append(name)
    # The totals are a lower bound of the placed peak: undo the last promotions until it fits.
    while promoted and not fits(plan_buffers(graph, steps, cost, spilled - frozenset(promoted)), cap):
        promoted.pop()
    return spilled - frozenset(promoted)
