"""allocate-memory: place every buffer at an SRAM offset (planned)."""

from dataclasses import dataclass

from cascade.passes._unimplemented import UnimplementedPass


@dataclass(frozen=True)
class AllocateMemoryPass(UnimplementedPass):
    """Assign each live buffer a region, offset and size."""

    name = "allocate-memory"
