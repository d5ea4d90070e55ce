"""The program as the planner indexes it: operators in program order and who uses what.

`ProgramGraph` wraps the operators (`OpInfo`, in program order, which is a topological order)
with the graph facts every other planner module needs: the producer and the consumers of each
tensor, the last use of each tensor, which tensors are graph inputs and outputs, and which
operators may sit inside a multi-operator cascade (`stripable`). `reordered` builds the same
facts for another topological order of the same operators (`order.lean_order`); such a graph
remembers where each operator stood (`ProgramGraph.order`).

A *cascade* is a contiguous range `[first, last]` of operators with a single sink: only the
output of `last` is used after `last` (or returned). Every other operator of the range has all
its consumers inside the range, which also makes the range connected. `range_start_limit`
gives, for a sink, the smallest `first` for which this holds.

Pure Python: no IR types, no target.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Protocol

from cascade.dialects.access import AccessRelation
from cascade.passes.planner.graph import OpInfo, TensorInfo

SPATIAL_AXES = (1, 2)
"""The axes row and column stripes cut: rows and columns of an NHWC feature map."""

CHANNELS = -1
"""The channel axis, which channel stripes cut: the last axis of every tensor (of an NHWC
feature map and of the `[N, C]` result of a global mean alike), so it is named by its Python
index from the end."""

STRIPE_AXES = (*SPATIAL_AXES, CHANNELS)
"""Every axis a stripe may cut."""


def axes_of(shape: Sequence[int]) -> tuple[int, ...]:
    """The stripe axes a tensor of `shape` has: rows, columns and channels of a feature map,
    channels alone of anything else (an `[N, C]` tensor has no rows or columns to cut)."""
    return STRIPE_AXES if len(shape) == 4 else (CHANNELS,)


class ProgramLike(Protocol):
    """What the planner needs of a program (`from_nn.ProgramInfo` satisfies it)."""

    @property
    def ops(self) -> tuple[OpInfo, ...]: ...

    @property
    def graph_inputs(self) -> tuple[str, ...]: ...

    @property
    def graph_outputs(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class _Program:
    ops: tuple[OpInfo, ...]
    graph_inputs: tuple[str, ...]
    graph_outputs: tuple[str, ...]


@dataclass(frozen=True)
class AxisMap:
    """One axis of an access relation in integer form: output interval -> input interval.

    `first_in = (scale * first_out + first) // denominator` and likewise for the last element.
    A 3x3 window with stride 2 and top padding 1 is scale 2, first -1, last 1, denominator 1:
    output rows 0..3 read input rows -1..7. A 2x nearest upscale is scale 1, denominator 2.
    Scale 0 reads a constant interval (a broadcast or a whole-axis read).
    """

    scale: int
    first: int
    last: int
    denominator: int

    def apply(self, lo: int, hi: int) -> tuple[int, int]:
        """The unclipped input interval read by output interval [lo, hi]."""
        return (self.scale * lo + self.first) // self.denominator, (self.scale * hi + self.last) // self.denominator


def _axis_map(relation: AccessRelation, input_axis: int, output_axis: int) -> AxisMap:
    row = relation.matrix[input_axis]
    scale = Fraction(row[output_axis]) if output_axis < len(row) else Fraction(0)
    first = Fraction(relation.first_offset[input_axis])
    last = Fraction(relation.last_offset[input_axis])
    denominator = 1
    for value in (scale, first, last):
        denominator = denominator * value.denominator // _gcd(denominator, value.denominator)
    return AxisMap(int(scale * denominator), int(first * denominator), int(last * denominator), denominator)


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


@dataclass(frozen=True)
class Operand:
    """An activation input of an operator: the tensor, its producer and the per-axis maps.

    `producer` is the index of the producing operator, or -1 for a graph input (or any tensor
    that no operator produces). `axis_maps[x]` maps output axis x (a spatial axis) to the same
    axis of the input; None when the input has no such axis or the operator is not stripable.
    `axis_maps[CHANNELS]` is the identity when output channel c reads input channel c alone
    (a depthwise convolution's, a pooling's, an elementwise operator's or a mean's input),
    else None (a convolution reads every input channel for each output channel).
    """

    tensor: TensorInfo
    producer: int
    relation: AccessRelation
    axis_maps: dict[int, AxisMap | None]


@dataclass(frozen=True)
class ProgramGraph:
    """Operators in program order with the graph facts the planner needs (see module doc)."""

    ops: tuple[OpInfo, ...]
    operands: tuple[tuple[Operand, ...], ...]
    """Per operator, its activation inputs."""
    consumers: tuple[tuple[tuple[int, int], ...], ...]
    """Per operator, the (consumer index, operand position) pairs reading its output, sorted."""
    last_use: tuple[int, ...]
    """Per operator, the index of the last consumer; `len(ops)` for a graph output."""
    external_inputs: tuple[TensorInfo, ...]
    """Tensors read by operators but produced by none (graph inputs), in first-use order."""
    external_last_use: tuple[int, ...]
    """For each external input, the index of its last consumer (`len(ops)` if also returned)."""
    stripable: tuple[bool, ...]
    """Per operator, whether it may be part of a multi-operator cascade striped on rows and
    columns."""
    channel_stripable: tuple[bool, ...]
    """Per operator, whether it may be part of a multi-operator cascade striped on channels:
    it can compute a slice of its output channels without reading more rows or columns."""
    outputs: frozenset[str]
    order: tuple[int, ...] | None = None
    """Where each operator stands in the program it was built from, when built in another
    order (`reordered`); None: in the program's order."""
    memo: dict[tuple[object, ...], object] = field(default_factory=dict, init=False, compare=False, repr=False)
    """Results of pure functions of this graph, kept by the planner modules computing them
    (`stripes.simulate_axis`): the search, the memory count and the report ask for the same
    cascades many times."""

    @property
    def size(self) -> int:
        return len(self.ops)

    @staticmethod
    def build(program: ProgramLike) -> ProgramGraph:
        ops = tuple(program.ops)
        outputs = frozenset(program.graph_outputs)
        producer = {op.output.name: index for index, op in enumerate(ops)}
        n = len(ops)
        consumers: list[list[tuple[int, int]]] = [[] for _ in ops]
        externals: dict[str, TensorInfo] = {}
        external_last: dict[str, int] = {}
        operands: list[tuple[Operand, ...]] = []
        stripable: list[bool] = []
        for index, op in enumerate(ops):
            is_stripable = _is_stripable(op)
            stripable.append(is_stripable)
            entries = []
            for position, (tensor, relation) in enumerate(zip(op.inputs, op.input_relations, strict=True)):
                source = producer.get(tensor.name, -1)
                if source >= index:
                    raise ValueError(f"operator {op.name} reads {tensor.name} before it is produced")
                if source >= 0:
                    consumers[source].append((index, position))
                else:
                    externals.setdefault(tensor.name, tensor)
                    external_last[tensor.name] = index
                maps = {
                    axis: _axis_map(relation, axis, axis) if is_stripable and axis < len(tensor.shape) else None
                    for axis in SPATIAL_AXES
                }
                maps[CHANNELS] = _channel_map(relation, tensor.shape, op.output.shape)
                entries.append(Operand(tensor, source, relation, maps))
            operands.append(tuple(entries))
        last_use = []
        for index, op in enumerate(ops):
            uses = [c for c, _ in consumers[index]]
            last = n if op.output.name in outputs else max(uses, default=index)
            last_use.append(last)
        external_inputs = tuple(externals.values())
        external_last_use = tuple(
            n if tensor.name in outputs else external_last[tensor.name] for tensor in external_inputs
        )
        return ProgramGraph(
            ops=ops,
            operands=tuple(operands),
            consumers=tuple(tuple(sorted(c)) for c in consumers),
            last_use=tuple(last_use),
            external_inputs=external_inputs,
            external_last_use=external_last_use,
            stripable=tuple(stripable),
            channel_stripable=tuple(_is_channel_stripable(op) for op in ops),
            outputs=outputs,
        )

    def reordered(self, order: Sequence[int]) -> ProgramGraph:
        """The program with its operator `order[k]` run k-th (`order`: a topological order of
        this graph's operators), each operator as stripable as here."""
        ops = tuple(self.ops[op] for op in order)
        built = ProgramGraph.build(_Program(ops, (), tuple(sorted(self.outputs))))
        stripable = tuple(self.stripable[op] for op in order)
        channel_stripable = tuple(self.channel_stripable[op] for op in order)
        return replace(
            built,
            stripable=stripable,
            channel_stripable=channel_stripable,
            order=tuple(self.position(op) for op in order),
        )

    def position(self, op: int) -> int:
        """Where operator `op` stands in the program this graph was built from."""
        return op if self.order is None else self.order[op]

    def range_start_limit(self, sink: int, max_length: int) -> int:
        """The smallest `first` such that `[first, sink]` is a cascade of at most `max_length` ops.

        Walking down from the sink, the range stops before an operator whose output is used
        after the sink (or returned), one that is not stripable, or one that nobody uses.
        A non-stripable sink only forms the singleton `[sink, sink]`.
        """
        return self._start_limit(sink, max_length, lambda op: self.stripable[op])

    def channel_range_start_limit(self, sink: int, max_length: int) -> int:
        """The smallest `first` such that `[first, sink]` is a cascade of at most `max_length`
        ops that can run in channel stripes: every operator computes a slice of its output
        channels, and every one but `first` reads each input channel inside the cascade from
        the same channel alone. So a convolution may open such a cascade but not continue it:
        each of its output channels reads every channel of its input.
        """

        def joins(op: int) -> bool:
            readers = self.consumers[op]
            return self.channel_stripable[op] and all(
                self.operands[reader][position].axis_maps[CHANNELS] is not None for reader, position in readers
            )

        return self._start_limit(sink, max_length, lambda op: self.channel_stripable[op], joins)

    def _start_limit(
        self, sink: int, max_length: int, can_end: Callable[[int], bool], joins: Callable[[int], bool] | None = None
    ) -> int:
        """Walk down from `sink` while the operator below `joins` (default: `can_end`), is used
        and is used by the range alone."""
        if not can_end(sink):
            return sink
        joins = joins or can_end
        first = sink
        while first - 1 >= 0 and sink - (first - 1) < max_length:
            candidate = first - 1
            if not joins(candidate) or self.last_use[candidate] > sink or not self.consumers[candidate]:
                break
            first = candidate
        return first

    def stripe_problem(
        self, first: int, sink: int, order: Sequence[int], recompute: frozenset[int] = frozenset()
    ) -> tuple[int, str] | None:
        """Why cascade `[first, sink]` cannot run in stripes cut along `order` (planner axes:
        `SPATIAL_AXES` or `CHANNELS`) with the intermediates in `recompute` recomputed and the
        others rolling, as the operator at fault and the reason; None if it can. A hand-written
        cascade may ask for what the planner never plans."""
        if first == sink or not order:
            return None
        if any(axis not in STRIPE_AXES for axis in order):
            return sink, f"stripes cut rows (axis 1), columns (axis 2) or channels (the last axis), not {list(order)}"
        if CHANNELS in order and len(order) > 1:
            return sink, "a cascade is cut along channels or along rows and columns, not both"
        channels = CHANNELS in order
        rolling = [op for op in range(first, sink) if op not in recompute]
        if channels and rolling:
            return rolling[0], (
                "its result is marked rolling, but channel stripes do not overlap: a cascade striped on "
                "channels recomputes every intermediate"
            )
        flags = self.channel_stripable if channels else self.stripable
        for op in range(first, sink + 1):
            if not flags[op]:
                what = "channels" if channels else "rows and columns"
                return op, f"it cannot compute a stripe of {what} alone, so it cannot be part of such a cascade"
            for operand in self.operands[op]:
                if operand.producer >= first and any(operand.axis_maps[axis] is None for axis in order):
                    return op, (
                        f"each of its output channels reads every channel of {operand.tensor.name}, which the "
                        "cascade computes: a cascade striped on channels may start with such an operator, not "
                        "continue with it"
                        if channels
                        else f"it cannot read {operand.tensor.name} stripe by stripe"
                    )
        return None

    def output_shape(self, index: int) -> tuple[int, ...]:
        return self.ops[index].output.shape


def _is_stripable(op: OpInfo) -> bool:
    """Whether an operator's output may be cut into row/column stripes inside a cascade.

    The output is an NHWC feature map, and every access relation is separable on the spatial
    axes: input axis x (x = 1 rows, 2 columns) depends on output axis x alone, with a
    non-negative scale, and no other input axis depends on a spatial output axis. Weights must
    not depend on spatial axes. Whole-tensor operators (fully connected, mean, softmax of a
    rank-2 tensor, reshape) fail the test and run alone.
    """
    if len(op.output.shape) != 4:
        return False
    for tensor, relation in zip(op.inputs, op.input_relations, strict=True):
        if not _separable(relation, len(tensor.shape), inputs_spatial=len(tensor.shape) == 4):
            return False
    for relation in op.weight_relations:
        for row in relation.matrix:
            if any(row[axis] != 0 for axis in SPATIAL_AXES if axis < len(row)):
                return False
    return True


def _is_channel_stripable(op: OpInfo) -> bool:
    """Whether an operator can compute a slice of its output channels (the last axis) reading
    the same rows and columns as for all of them: no input axis but the last depends on the
    output channels, and each input's last axis reads either the same channels
    (`_channel_map`) or all of them (a convolution's or a fully connected layer's reduction).
    Its weights may depend on the output channels: a slice reads the matching weights. The
    output is a feature map, or the `[N, C]` reduction of feature maps (a global mean).
    """
    rank = len(op.output.shape)
    if rank not in (2, 4) or (rank == 2 and any(len(tensor.shape) != 4 for tensor in op.inputs)):
        return False
    out_channels = rank - 1
    for tensor, relation in zip(op.inputs, op.input_relations, strict=True):
        if not tensor.shape:
            continue  # a scalar: the same for every channel
        channels = len(tensor.shape) - 1
        for input_axis, row in enumerate(relation.matrix):
            reads_output_channels = out_channels < len(row) and row[out_channels] != 0
            if reads_output_channels and input_axis != channels:
                return False
        if _channel_map(relation, tensor.shape, op.output.shape) is None and any(relation.matrix[channels]):
            return False
    return True


def _channel_map(relation: AccessRelation, input_shape: Sequence[int], output_shape: Sequence[int]) -> AxisMap | None:
    """The identity along channels when output channel c reads input channel c alone (and the
    two tensors have as many channels), else None."""
    if not input_shape or not output_shape or input_shape[-1] != output_shape[-1]:
        return None
    channels, out_channels = len(input_shape) - 1, len(output_shape) - 1
    row = relation.matrix[channels]
    if any(m != 0 for j, m in enumerate(row) if j != out_channels) or out_channels >= len(row):
        return None
    if row[out_channels] != 1 or relation.first_offset[channels] != 0 or relation.last_offset[channels] != 0:
        return None
    return AxisMap(1, 0, 0, 1)


def _separable(relation: AccessRelation, input_rank: int, inputs_spatial: bool) -> bool:
    for input_axis, row in enumerate(relation.matrix):
        depends = [j for j, m in enumerate(row) if m != 0]
        spatial = [j for j in depends if j in SPATIAL_AXES]
        if not spatial:
            continue
        if not inputs_spatial or depends != [input_axis] or Fraction(row[input_axis]) < 0:
            return False
    if input_rank == 4 and inputs_spatial:
        # The spatial input axes must not depend on non-spatial output axes.
        for axis in SPATIAL_AXES:
            if any(m != 0 for j, m in enumerate(relation.matrix[axis]) if j != axis):
                return False
    return True
