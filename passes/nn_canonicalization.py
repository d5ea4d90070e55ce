"""Canonicalization patterns of the `nn` dialect (`-p canonicalize` runs them; the TFLite importer
applies them to what it imports).

A reshape keeps the element order, so a chain of reshapes is one reshape of the first input,
and a reshape to its input's own shape is that input. TFLite writes a 1-D convolution as a 2-D
one between two reshapes (EXPAND_DIMS `[1, T, C]` to `[1, 1, T, C]`, SQUEEZE back): folded, the
convolutions of a 1-D network read each other's outputs and can run as one cascade.
"""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from cascade.dialects import nn


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
