"""ethosu-pipeline: the whole nn-to-ethosu pipeline as one pass (planned)."""

from dataclasses import dataclass

from cascade.passes._unimplemented import UnimplementedPass


@dataclass(frozen=True)
class EthosUPipelinePass(UnimplementedPass):
    """Run cascade-plan, rolling-buffer, allocate-memory and lower-to-ethosu in order.

    Options: `accelerator` (Vela accelerator name), `sram-budget` (bytes), `system-config` and
    `memory-mode` (Vela system configuration and memory mode names).
    """

    name = "ethosu-pipeline"

    accelerator: str = "ethos-u55-256"
    sram_budget: int | None = None
    system_config: str | None = None
    memory_mode: str | None = None
