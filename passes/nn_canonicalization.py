"""Canonicalization patterns of the `nn` dialect (`-p canonicalize` runs them; the TFLite importer
applies them to what it imports).

A reshape keeps the element order, so a chain of reshapes is one reshape of the first input,
and a reshape to its input's own shape is that input. TFLite writes a 1-D convolution as a 2-D
one between two reshapes (EXPAND_DIMS `[1, T, C]` to `[1, 1, T, C]`, SQUEEZE back): folded, the
convolutions of a 1-D network read each other's outputs and can run as one cascade.

An elementwise operator commutes with a reshape applied to every operand alike, so reshapes move
below elementwise operators that read them, towards the higher-rank form: a residual ADD
between two 1-D convolutions then adds their `[1, 1, T, C]` outputs (which the NPU runs) instead
of the `[1, T, C]` squeezes of them, and the SQUEEZE below it meets the next EXPAND_DIMS.

Broadcasting aligns trailing axes, so a constant operand of a lower rank than its operator's
output reads the same with leading 1s: a per-channel `[C]` beside an NHWC operand becomes
`[1, 1, 1, C]`, which the NPU reads as a feature map broadcast along height and width.
"""

from __future__ import annotations

import math

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, NameLoc, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from cascade.dialects import nn


def fold_reshapes(module: ModuleOp) -> None:
    """What the frontends (TFLite, legalize-tosa) do to what they import: the reshape patterns
    and the elementwise ones, to a fixed point. Dead operators stay: an import keeps every
    operator the model has (test_fuzz)."""
    patterns = [
        *nn.ReshapeHasCanonicalizationPatterns.get_canonicalization_patterns(),
        *nn.ElementwiseHasCanonicalizationPatterns.get_canonicalization_patterns(),
    ]
    walker = PatternRewriteWalker(GreedyRewritePatternApplier(patterns, dce_enabled=False), apply_recursively=True)
    walker.rewrite_module(module)


class FoldReshapeOfReshape(RewritePattern):
    """`reshape(reshape(x))` -> `reshape(x)`; the inner reshape goes when nothing else reads it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, nn.ReshapeOp):
            return
        op.operands[0] = inner.input
        rewriter.handle_operation_modification(op)
        if not inner.output.uses:
            rewriter.erase(inner)


class RemoveIdentityReshape(RewritePattern):
    """`reshape(x)` to the shape of `x` -> `x` (a reshape keeps its input's quantization)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ReshapeOp, rewriter: PatternRewriter) -> None:
        if op.input.type != op.output.type:
            return
        rewriter.replace(op, [], [op.input])


class SinkReshapeBelowElementwise(RewritePattern):
    """`f(reshape(a), reshape(b))` -> `reshape(f(a, b))` for an elementwise `f` (binary or
    unary), where the reshapes take `a` and `b` from one shape of a higher rank, at most 4, to
    the operator's output shape (the NPU runs NHWC operators; each rewrite raises a rank, so
    they end). An operand of the output shape that is not such a reshape may still take part if a
    reshape of it to the wider shape precedes the operator (a residual input that also feeds
    the next EXPAND_DIMS): the operator reads that reshape instead. A smaller operand stays as
    it is where it broadcasts alike over either shape (`_broadcasts_alike`: a scalar, a
    per-channel constant). The reshapes left unread go."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.BinaryOperation | nn.ElementwiseUnaryOperation):
            return
        result_type = op.results[0].type
        if not isinstance(result_type, TensorType):
            return
        narrow = result_type.get_shape()
        wide = _wider_source_shape(op.operands, narrow)
        if wide is None:
            return
        operands = [_wide_operand(operand, op, narrow, wide) for operand in op.operands]
        if any(operand is None for operand in operands):
            return
        lifted = type(op).create(
            operands=operands,
            result_types=[TensorType(result_type.element_type, wide)],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        quant = op.properties["output_quant"]
        back = nn.ReshapeOp.create(
            operands=[lifted.results[0]],
            result_types=[result_type],
            properties={"input_quant": quant, "output_quant": quant},
        )
        # The reshape is the model's tensor and keeps its name; the operator's result is named
        # after it, with its rank (`r2` and `r2/4d`).
        back.location, back.results[0].name_hint = op.location, op.results[0].name_hint
        if isinstance(op.location, NameLoc):
            lifted.location = NameLoc(StringAttr(f"{op.location.desc.data}/{len(wide)}d"), op.location.location)
        if op.results[0].name_hint is not None:
            lifted.results[0].name_hint = f"{op.results[0].name_hint}_{len(wide)}d"
        readers = {operand.owner for operand in op.operands if isinstance(operand.owner, nn.ReshapeOp)}
        rewriter.replace(op, [lifted, back], [back.results[0]])
        for reshape in readers:
            if not reshape.output.uses:
                rewriter.erase(reshape)


class RaiseConstantOperandRank(RewritePattern):
    """`f(x, c)` for a binary elementwise `f` and a constant `c` of a lower rank than `f`'s
    output -> `f(x, c')`, `c'` the same values with leading 1s up to that rank (a `[16]`
    beside `[1, 8, 8, 16]`: `[1, 1, 1, 16]`). One value is left as it is: it broadcasts from
    any rank, and the NPU takes it as a scalar. Every such operator of that rank reading `c`
    reads the one `c'`; the old constant goes when nothing reads it."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.BinaryOperation):
            return
        rank = len(_shape(op.results[0]))
        for operand in op.operands:
            constant = operand.owner
            shape = _shape(operand)
            if not isinstance(constant, ConstantOp) or len(shape) >= rank or math.prod(shape) == 1:
                continue
            if not isinstance(operand.type, TensorType) or not isinstance(constant.value, DenseIntOrFPElementsAttr):
                continue
            raised_type = TensorType(operand.type.element_type, (1,) * (rank - len(shape)) + shape)
            raised = ConstantOp(DenseIntOrFPElementsAttr(raised_type, constant.value.data))
            raised.results[0].name_hint = operand.name_hint
            raised.location = constant.location
            rewriter.insert_op(raised, InsertPoint.after(constant))
            for use in list(operand.uses):
                reader = use.operation
                if isinstance(reader, nn.BinaryOperation) and len(_shape(reader.results[0])) == rank:
                    reader.operands[use.index] = raised.results[0]
                    rewriter.handle_operation_modification(reader)
            if not constant.result.uses:
                rewriter.erase(constant)


MAX_RANK = 4
"""The highest rank an operator is raised to: NHWC, which the NPU runs."""


def _wider_source_shape(operands: tuple[SSAValue, ...], narrow: tuple[int, ...]) -> tuple[int, ...] | None:
    """The input shape of the first operand that is a reshape to `narrow` from more
    dimensions, up to `MAX_RANK`, or None."""
    for operand in operands:
        owner = operand.owner
        if isinstance(owner, nn.ReshapeOp) and _shape(owner.output) == narrow:
            source = _shape(owner.input)
            if len(narrow) < len(source) <= MAX_RANK:
                return source
    return None


def _wide_operand(operand: SSAValue, op: Operation, narrow: tuple[int, ...], wide: tuple[int, ...]) -> SSAValue | None:
    """What the operator reads in place of `operand` once it runs on `wide`: the input of a
    reshape from `wide`, an earlier reshape of `operand` to `wide`, a smaller operand that
    broadcasts alike as it is; None if there is none of these."""
    shape = _shape(operand)
    owner = operand.owner
    if shape == narrow and isinstance(owner, nn.ReshapeOp) and _shape(owner.input) == wide:
        return owner.input
    if shape != narrow:
        return operand if _broadcasts_alike(shape, narrow, wide) else None
    for use in operand.uses:
        user = use.operation
        if isinstance(user, nn.ReshapeOp) and _shape(user.output) == wide and _precedes(user, op):
            return user.output
    return None


def _broadcasts_alike(shape: tuple[int, ...], narrow: tuple[int, ...], wide: tuple[int, ...]) -> bool:
    """Whether an operand of `shape` gives every element the same value broadcast over `narrow`
    as over `wide`: its extents other than 1, aligned right, fall in the trailing dimensions the
    two shapes share. A per-channel [C] or [1, 1, C] over [1, T, C] and [1, 1, T, C]: yes, its
    value depends on the element's channel alone, the same in both."""
    if len(shape) > len(wide):
        return False
    shared = 0
    while shared < min(len(narrow), len(wide)) and narrow[-1 - shared] == wide[-1 - shared]:
        shared += 1
    return all(extent == 1 for extent in shape[: max(0, len(shape) - shared)])


def _precedes(earlier: Operation, later: Operation) -> bool:
    """Whether `earlier` comes before `later` in the same block."""
    if earlier.parent is not later.parent:
        return False
    op = earlier.next_op
    while op is not None:
        if op is later:
            return True
        op = op.next_op
    return False


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape()) if isinstance(value.type, TensorType) else ()
