"""How a target prices a plan: the interface between the generic planner and a cost model."""

from __future__ import annotations

from typing import Protocol

from cascade.dialects.access import Region
from cascade.passes.planner.graph import OpInfo, TensorInfo


class CostModel(Protocol):
    """Cycles and bytes as a particular accelerator sees them."""

    def stripe_cycles(self, op: OpInfo, output: Region, weights_in_sram: bool) -> int:
        """Cycles to compute `output` (a region of op.output), with its inputs already in SRAM.

        Includes reading the inputs and writing the output; weights are read from SRAM when
        `weights_in_sram`, otherwise streamed from their home memory (flash/DRAM) for this stripe.
        A cost model that can spill (`can_spill`) also takes the keyword `spilled`: the names of
        op's inputs and output that live in its spill memory instead of SRAM (so does
        `pipelined_stripe_cycles`).
        """
        ...

    def weight_buffer_bytes(self, op: OpInfo) -> int:
        """SRAM bytes needed to keep all of op's weights and biases resident (encoded, aligned)."""
        ...

    def buffer_bytes(self, tensor: TensorInfo, region_shape: tuple[int, ...]) -> int:
        """SRAM bytes to hold `region_shape` of `tensor`, with the target's layout and alignment."""
        ...

    # Optional (found with getattr):
    #
    # def weight_transfer_cycles(self, op: OpInfo) -> int:
    #     """Cycles of one DMA of op's weights from their home memory into SRAM."""
    #
    # def pipelined_stripe_cycles(self, op: OpInfo, output: Region, weights_in_sram: bool) -> int:
    #     """Cycles of `output` as one of many stripes of `op` run in a cascade, without what
    #     the operator pays once however it is striped (pipeline fill and drain, first fetch,
    #     last write). The planner prices a cascaded operator as the sum of its stripes'
    #     pipelined cycles plus, once, `stripe_cycles - pipelined_stripe_cycles` of the whole
    #     operator. Without it, every stripe costs `stripe_cycles`."""
    #
    # def can_cascade(self, op: OpInfo) -> bool:
    #     """Whether the target can run `op` stripe by stripe inside a cascade. Without it, every
    #     operator the access relations allow may be cascaded."""
    #
    # def sram_capacity(self) -> int:
    #     """Bytes of SRAM the target has for the plan's buffers. Every plan must fit: it caps
    #     the budget, and without a budget it is the only limit. Without it, no limit."""
    #
    # def sram_name(self) -> str:
    #     """What that SRAM is, for messages (default: "the target's SRAM")."""
    #
    # def runs_on_npu(self, op: OpInfo) -> bool:
    #     """Whether the target runs `op` itself rather than leaving it to the CPU (what the
    #     CPU reads and writes is never kept out of the spill memory). Default: `can_cascade`."""
    #
    # def can_spill(self) -> bool:
    #     """Whether full tensors may live in a second, larger and slower memory instead of
    #     SRAM (Ethos-U's DRAM arena in Dedicated_Sram; `planner.spill`). Without it, no."""
    #
    # def weight_slice_bytes(self, op: OpInfo, depth: int) -> int:
    #     """SRAM bytes of the largest slice of `depth` output channels of op's weights and
    #     biases, for weights double-buffered in slices (each half of the buffer holds one).
    #     Without it, a slice is sized in proportion to `weight_buffer_bytes`."""
    #
    # def size_weights(self, ops: Sequence[OpInfo]) -> None:
    #     """Called once, before the search asks `weight_buffer_bytes` of each of `ops`: a model
    #     whose weight sizes are slow to compute (encoded streams) may compute them all at once."""
    #
    # def size_weight_slices(self, op: OpInfo, depths: Sequence[int]) -> None:
    #     """Called before the search asks `weight_slice_bytes` of `op` for each of `depths`:
    #     likewise, to compute them all at once."""


def runs_on_target(cost: CostModel, op: OpInfo) -> bool:
    """Whether the target runs `op` itself: `cost.runs_on_npu`, else `cost.can_cascade`, else
    yes (both optional)."""
    ask = getattr(cost, "runs_on_npu", None) or getattr(cost, "can_cascade", None)
    return not callable(ask) or bool(ask(op))
