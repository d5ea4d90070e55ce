"""Whole-tensor semantics of `cascade.group`: run the body once, as if it were inlined.

A cascade computes exactly what its operators compute one after another; striping only
changes the order of the work and where it is stored. So at tensor level a group binds its
block arguments to its operands, runs its body, and returns what `cascade.yield` yields.
(The stripe-level executor, which follows stripes and rolling buffers, is separate.)

Register with `interpreter.register_implementations(CascadeFunctions())` next to the `nn` and
`func` implementations.
"""

from __future__ import annotations

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)

from cascade.dialects.cascade import GroupOp, YieldOp


@register_impls
class CascadeFunctions(InterpreterFunctions):
    """`cascade.group` runs its body on its operands; `cascade.yield` returns its values."""

    @impl(GroupOp)
    def run_group(self, interpreter: Interpreter, op: GroupOp, args: PythonValues) -> PythonValues:
        return interpreter.run_ssacfg_region(op.body, args, "cascade.group")

    @impl_terminator(YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()
