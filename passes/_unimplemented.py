"""Shared behaviour of passes whose implementation has not landed yet.

A planned pass must fail loudly: a silent no-op would let a pipeline "pass" while doing nothing.
"""

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException


@dataclass(frozen=True)
class UnimplementedPass(ModulePass):
    """Base of a registered pass that is planned but not implemented.

    Subclasses set `name`, `tracking` (where the work is planned) and their option fields, so the
    command line already parses and type-checks options exactly as the real pass will.
    """

    tracking: ClassVar[str] = "planned"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise PassFailedException(f"{self.name}: not yet implemented ({self.tracking})")
