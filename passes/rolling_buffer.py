"""rolling-buffer: make the stripe loop of every planned cascade explicit.

    cascade-opt net.mlir --cascade-plan --rolling-buffer

Every top-level `cascade.group` (planned by cascade-plan) becomes a `cascade.for_stripes` with
the same operands, results, tiling and annotations, whose body starts with the stripe index
(one `index` block argument per striped axis, outer first). Every operator keeps its
`cascade.stripe` (its region as an affine map of the stripe index; intermediates with their
buffer mode). Every *rolling* intermediate is stored in an explicit `cascade.rolling_buffer`
of `depth` k entries along the rolling (outer striped) axis, with the index map
`(d0, d1, d2, d3) -> (d0, d1 mod k, d2, d3)` (rows); its consumers in the body read the
buffer. *Recompute* intermediates keep their stripe-sized buffer (the `shape` of their stripe
map) and recompute the overlap at every stripe, as the plan says. `k` is the exact depth of
`planner.stripes.CascadeGeometry` (the planner's), so the buffer sizes are the planner's.

The pass adds no new semantics: `group_view` turns the result back into the planned form, and
`cascade.passes.cascade_plan.scheduled_program` / `scheduled_geometries` / `scheduled_buffers`
applied to that view give the same steps, stripe boxes and buffer list as before the pass.
Operators outside groups are left unchanged. Running the pass twice is an error-free no-op.
A group not as cascade-plan writes it (without nn operators, with an operator missing its
`cascade.stripe`, or with another op making tensors) is an error (`cascade_plan.check_cascades`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, Region
from xdsl.passes import ModulePass

from cascade.dialects import nn
from cascade.dialects.cascade import (
    BufferMode,
    ForStripesOp,
    GroupOp,
    RollingBufferOp,
    StripedRegionOp,
    get_stripe,
)


@dataclass(frozen=True)
class RollingBufferPass(ModulePass):
    """Replace full intermediate tensors inside a cascade by k-row rolling buffers (see module doc)."""

    name = "rolling-buffer"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from cascade.passes.cascade_plan import check_cascades, scheduled_geometries

        for function in [f for f in op.ops if isinstance(f, FuncOp) and f.body.blocks]:
            groups = [g for g in function.body.block.ops if isinstance(g, GroupOp)]
            if not groups:
                continue
            check_cascades(function, self.name)
            # Depths first: the geometry is read from the planned form, before any rewrite.
            depths = {}
            geometries = scheduled_geometries(function)
            for group in groups:
                geometry = geometries[group]
                outer = geometry.config.outer_axis
                members = [m for m in group.body.block.ops if isinstance(m, nn.NNOperation)]
                for index, member in enumerate(members):
                    stripe = get_stripe(member)
                    if outer is None or stripe is None or stripe.get_mode() != BufferMode.ROLLING:
                        continue
                    depths[member] = (geometry.tracks[outer][geometry.first + index].depth, outer)
            for group in groups:
                _to_loop(group, depths)


_AXIS_NAMES = {1: "row", 2: "col"}
"""Names of the stripe-index block arguments, by the NHWC axis they stripe."""


def _to_loop(group: GroupOp, depths: dict[Operation, tuple[int, int]]) -> ForStripesOp:
    """Replace `group` by the equivalent `cascade.for_stripes` with explicit rolling buffers."""
    loop = ForStripesOp.build_loop(
        list(group.inputs),
        list(group.result_types),
        stripe_shape=group.get_stripe_shape(),
        stripe_order=group.get_stripe_order(),
        weights=group.get_weights_mode(),
        peak_sram_bytes=group.get_peak_sram_bytes(),
        cycles=group.get_cycles(),
    )
    loop.attributes.update(group.attributes)
    # Name the stripe index after the axis it walks, so the loop reads `(%row, %col)` (`%chan`
    # for the last axis: the channels of a feature map or of a global mean's `[N, C]`).
    rank = len(group.get_stripe_shape())
    for arg, axis in zip(loop.stripe_index_args, group.get_stripe_order(), strict=True):
        arg.name_hint = "chan" if axis == rank - 1 else _AXIS_NAMES.get(axis, f"axis{axis}")
    _move_body(group, loop, len(group.get_stripe_order()))
    block = loop.body.block
    for member in list(block.ops):
        if member not in depths:
            continue
        depth, axis = depths[member]
        buffer = RollingBufferOp(member.results[0], depth, axis)
        hint = member.results[0].name_hint
        buffer.result.name_hint = f"{hint}_rolling" if hint else "rolling"
        block.insert_op_after(buffer, member)
        # Every reader in the body reads the buffer; the buffer itself keeps reading the op.
        member.results[0].replace_uses_with_if(buffer.result, lambda use, keep=buffer: use.operation is not keep)
    _replace(group, loop)
    return loop


def _move_body(source: StripedRegionOp, target: StripedRegionOp, target_index_args: int) -> None:
    """Move the ops of `source`'s body into `target`'s (empty) body, rebinding the input args."""
    block = target.body.block
    for old, new in zip(source.input_args, block.args[target_index_args:], strict=True):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    for member in list(source.body.block.ops):
        member.detach()
        block.add_op(member)


def _replace(old: Operation, new: Operation) -> None:
    parent = old.parent_block()
    assert parent is not None
    parent.insert_op_before(new, old)
    for old_result, new_result in zip(old.results, new.results, strict=True):
        old_result.replace_all_uses_with(new_result)
    old.detach()
    old.erase()


def group_view(function: FuncOp) -> tuple[FuncOp, dict[Operation, Operation]]:
    """A planned-form copy of `function`: every `cascade.for_stripes` back as a `cascade.group`
    without its `cascade.rolling_buffer`s (readers read the producer again).

    Returns the copy and a map from each op of the copy (nn operators, groups, constants) to
    the op of `function` it came from, so that facts computed on the planned form (steps,
    geometry, buffer names) can be attached to the scheduled IR.
    """
    copy = function.clone()
    origin = dict(zip(copy.walk(), function.walk(), strict=True))
    for loop in [o for o in copy.body.block.ops if isinstance(o, ForStripesOp)]:
        for buffer in [o for o in loop.body.block.ops if isinstance(o, RollingBufferOp)]:
            # xDSL hands the buffer's name ("rolling") to an unnamed source: keep the source's.
            hint = buffer.source.name_hint
            buffer.result.replace_all_uses_with(buffer.source)
            buffer.source.name_hint = hint
            buffer.detach()
            buffer.erase()
        group = GroupOp(
            list(loop.inputs),
            list(loop.result_types),
            Region(Block(arg_types=[v.type for v in loop.inputs])),
            stripe_shape=loop.get_stripe_shape(),
            stripe_order=loop.get_stripe_order(),
            num_stripes=loop.get_num_stripes(),
            weights=loop.get_weights_mode(),
            peak_sram_bytes=loop.get_peak_sram_bytes(),
            cycles=loop.get_cycles(),
        )
        group.attributes.update(loop.attributes)
        _move_body(loop, group, 0)
        origin[group] = origin[loop]
        _replace(loop, group)
    return copy, origin
