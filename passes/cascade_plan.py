"""cascade-plan: group operator chains into cascades executed stripe by stripe (planned)."""

from dataclasses import dataclass

from cascade.passes._unimplemented import UnimplementedPass


@dataclass(frozen=True)
class CascadePlanPass(UnimplementedPass):
    """Choose cascades and stripe shapes under an SRAM budget.

    Options: `sram-budget` (bytes, hard limit; None = the accelerator's SRAM), `accelerator`
    (Vela accelerator name), `objective` (what to minimise), `striping` (`hw`: height and width),
    `report` (path of a JSON plan report).
    """

    name = "cascade-plan"
    tracking = "see issue #5"

    sram_budget: int | None = None
    accelerator: str = "ethos-u55-256"
    objective: str | None = None
    striping: str = "hw"
    report: str | None = None
