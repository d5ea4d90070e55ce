"""rolling-buffer: turn cascade intermediates into rolling buffers (planned)."""

from dataclasses import dataclass

from cascade.passes._unimplemented import UnimplementedPass


@dataclass(frozen=True)
class RollingBufferPass(UnimplementedPass):
    """Replace full intermediate tensors inside a cascade by k-row rolling buffers."""

    name = "rolling-buffer"
