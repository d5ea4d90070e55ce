"""legalize-tosa: convert TOSA operations to the nn dialect (planned)."""

from dataclasses import dataclass

from cascade.passes._unimplemented import UnimplementedPass


@dataclass(frozen=True)
class LegalizeTosaPass(UnimplementedPass):
    """Rewrite int8 TOSA operations into their nn equivalents."""

    name = "legalize-tosa"
