"""The first operators of a program as a program of their own, for checks that compare tensors.

The benchmark models have random weights, and their deep layers saturate whatever the input
(mbv1_025_96 on random int8 inputs ends in a pooled vector of one value): a compiled model whose
only observable tensors are such outputs can be wrong and still compare equal. `prefix_program`
cuts `@main` after an operator and returns every tensor live past the cut, so the compiled cut
exposes them; `informative_prefix` finds the longest cut whose returned tensors all vary.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Operation, SSAValue

from cascade.dialects import nn
from cascade.interpreter.nn import InterpretationError, main_function, run_program


def _operators(function: func.FuncOp) -> list[Operation]:
    return [op for op in function.body.block.ops if isinstance(op, nn.NNOperation)]


def _live_after(operators: Sequence[Operation], count: int) -> list[SSAValue]:
    """The results of the first `count` operators read after them: by a later operator or by
    the return, and the last one's result in any case (in program order)."""
    later = set(operators[count:])
    live = []
    for index, op in enumerate(operators[:count]):
        for result in op.results:
            read = any(use.operation in later or isinstance(use.operation, func.ReturnOp) for use in result.uses)
            if read or index == count - 1:
                live.append(result)
    return live


def prefix_program(module: ModuleOp, count: int) -> ModuleOp:
    """A copy of `module` whose `@main` runs its first `count` `nn` operators and returns every
    tensor live after them (`_live_after`); constants left unused are dropped."""
    clone = module.clone()
    function = main_function(clone)
    operators = _operators(function)
    if not 1 <= count <= len(operators):
        raise ValueError(f"@{function.sym_name.data} has {len(operators)} operators: cannot keep {count}")
    live = _live_after(operators, count)
    block = function.body.block
    old_return = block.last_op
    assert isinstance(old_return, func.ReturnOp)
    block.insert_op_before(func.ReturnOp(*live), old_return)
    old_return.detach()
    old_return.erase()
    for op in reversed(operators[count:]):  # readers before what they read
        op.detach()
        op.erase()
    for op in list(block.ops):
        if isinstance(op, arith.ConstantOp) and not op.result.uses:
            op.detach()
            op.erase()
    inputs = function.function_type.inputs.data
    function.function_type = FunctionType.from_lists(list(inputs), [value.type for value in live])
    function.res_attrs = None
    return clone


def informative_prefix(module: ModuleOp, inputs: Sequence[np.ndarray], min_distinct: int = 4) -> ModuleOp:
    """`prefix_program` of the most operators whose returned tensors each take at least
    `min_distinct` values on `inputs` (the whole program when its outputs do)."""
    run = run_program(module, inputs)
    operators = _operators(main_function(module))
    for count in range(len(operators), 0, -1):
        live = _live_after(operators, count)
        if all(np.unique(run.values[value]).size >= min_distinct for value in live):
            return prefix_program(module, count)
    raise InterpretationError(f"no operator's result takes {min_distinct} values on these inputs")
