"""lower-to-ethosu: lower scheduled nn/cascade IR to ethosu commands (planned)."""

from dataclasses import dataclass

from cascade.passes._unimplemented import UnimplementedPass


@dataclass(frozen=True)
class LowerToEthosUPass(UnimplementedPass):
    """Replace scheduled operations by ethosu NPU operations inside a command stream."""

    name = "lower-to-ethosu"
