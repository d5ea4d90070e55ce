"""Test-only passes that break the IR on purpose, to prove the driver catches it.

Not part of the package: `test_internal_errors.py` runs cascade-opt through `main()` below, in a
subprocess, with these passes added to the registry; nothing ships them.

    python broken_passes.py input.mlir -p 'cascade-plan,corrupt-quantization'
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.passes import ModulePass

from cascade.dialects import nn
from cascade.passes import get_all_passes
from cascade.tools import cascade_opt


@dataclasses.dataclass(frozen=True)
class DropReturnOperandsPass(ModulePass):
    """Drops the operands of every func.return: the function no longer returns its results."""

    name = "drop-return-operands"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for return_op in op.walk():
            if return_op.name == "func.return":
                return_op.operands = ()


@dataclasses.dataclass(frozen=True)
class CorruptQuantizationPass(ModulePass):
    """Gives the first nn operator an output zero point of 300, which no int8 tensor can have."""

    name = "corrupt-quantization"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for nn_op in op.walk():
            if isinstance(nn_op, nn.NNOperation) and "output_quant" in nn_op.properties:
                quant = nn_op.properties["output_quant"]
                assert isinstance(quant, nn.QuantAttr)
                # `new` skips the attribute's own verifier, as a careless pass could: only the
                # operator's verifier, between passes, can catch it.
                zero_point = DenseArrayBase.from_list(i64, [300])
                nn_op.properties["output_quant"] = nn.QuantAttr.new((quant.scale, zero_point, quant.axis))
                return


BROKEN: dict[str, Callable[[], type[ModulePass]]] = {
    DropReturnOperandsPass.name: lambda: DropReturnOperandsPass,
    CorruptQuantizationPass.name: lambda: CorruptQuantizationPass,
}


def main() -> None:
    """cascade-opt with the broken passes registered next to ours."""
    passes = {**get_all_passes(), **BROKEN}
    cascade_opt.get_all_passes = lambda: passes  # type: ignore[assignment]
    cascade_opt.main()


if __name__ == "__main__":
    sys.argv[0] = "cascade-opt"
    main()
