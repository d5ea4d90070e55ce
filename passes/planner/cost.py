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
        """
        ...

    def weight_buffer_bytes(self, op: OpInfo) -> int:
        """SRAM bytes needed to keep all of op's weights and biases resident (encoded, aligned)."""
        ...

    def buffer_bytes(self, tensor: TensorInfo, region_shape: tuple[int, ...]) -> int:
        """SRAM bytes to hold `region_shape` of `tensor`, with the target's layout and alignment."""
        ...
