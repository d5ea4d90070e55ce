"""The stripe-level executor: run an allocated program stripe by stripe in one flat SRAM.

    from cascade.interpreter.scheduled import run_scheduled, run_any
    run = run_scheduled(module, inputs)        # allocated IR (after allocate-memory)
    run = run_any(module, inputs)              # scheduled IR here, anything else: interpreter.nn

Every feature map, rolling buffer, recompute buffer and SRAM weight buffer lives in ONE
`bytearray` of `cascade.allocated_peak_bytes` bytes at the offset of its
`#cascade.placement`; nothing is computed from a value that is not read back from those bytes.
Only read-only constants (weights streamed from flash, weight operands passed as function
arguments) live outside it, and the full tensors the plan spilled (`#cascade.placement<dram,
...>`), which live the same way in a second flat `bytearray`, the DRAM of
`cascade.allocated_dram_bytes` bytes. Data is stored dense, row-major in the buffer's storage
shape:

* a full tensor (graph input, cascade or lone operator output): its shape;
* a rolling buffer of depth k: the tensor with k entries on the rolling axis; logical row r at
  slot r mod k (the `index_map` of `cascade.rolling_buffer`), so writes wrap and a read of a
  row no longer held returns whatever overwrote it;
* a recompute buffer: its stripe `shape`; the box computed at a stripe is stored from the
  buffer's origin, and the buffer is poisoned before every stripe;
* SRAM weights: the raw bytes of the operator's constant operands, copied in when the buffer
  becomes live (one step early when prefetched); the operator reads them back from SRAM when
  they fit the allocated (encoded-size) buffer, else from flash.

Schedule: steps (top-level `cascade.for_stripes`/`cascade.group`/bare operators) in order; a
stripe loop runs its stripes in lexicographic order and, at each stripe, every operator of its
body computes its *computed box* (`planner.stripes.CascadeGeometry`, rebuilt from the IR by
`cascade_plan.scheduled_geometry`): the operator reads, through its access relation, only the
input cells that box needs, from storage (everything else it sees is poison), and writes the
box to its storage. When a buffer dies (its lifetime recomputed from the IR by
`passes.memory_check`), its bytes are overwritten with `POISON`; so a stale read, a too-shallow
rolling buffer or an overlapping placement changes the outputs, and the tests compare them
bit-exactly with `interpreter.nn.run_program`.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DenseArrayBase, DenseIntOrFPElementsAttr, IntegerType, ModuleOp, TensorType, i64
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from cascade.dialects import nn
from cascade.dialects.access import Region
from cascade.dialects.cascade import (
    BufferMode,
    ForStripesOp,
    GroupOp,
    MemoryRegion,
    PlacementAttr,
    RollingBufferOp,
    StripedRegionOp,
    get_placement,
    get_stripe,
)
from cascade.interpreter.nn import (
    InterpretationError,
    NNFunctions,
    ProgramRun,
    constant_array,
    describe_op,
    main_function,
    run_program,
)
from cascade.passes.memory_check import (
    ALLOCATED_DRAM_ATTR,
    ALLOCATED_PEAK_ATTR,
    WEIGHTS_PLACEMENT_ATTR,
    arg_placement,
    check_memory,
    live_buffers,
    top_level_units,
)
from cascade.passes.planner.from_nn import input_position
from cascade.passes.planner.program import SPATIAL_AXES, STRIPE_AXES, ProgramGraph
from cascade.passes.planner.stripes import CascadeGeometry

POISON = 0xA5
"""The byte written over a buffer when it dies (and over all of SRAM and DRAM at the start)."""


def is_scheduled(module: ModuleOp) -> bool:
    """Whether `@main` is allocated (carries `cascade.allocated_peak_bytes`): run it stripe by stripe."""
    try:
        function = main_function(module)
    except InterpretationError:
        return False
    return ALLOCATED_PEAK_ATTR in function.attributes


def run_any(module: ModuleOp, inputs: Sequence[np.ndarray]) -> ProgramRun:
    """`run_scheduled` on allocated IR; on IR with stripe loops but no allocation (the output
    of `--cascade-plan --rolling-buffer`), `interpreter.nn.run_program` on its planned view
    (whole-tensor semantics); on anything else, `run_program` itself."""
    if any(op.name == "ethosu.command_stream" for op in module.walk()):
        # Lowered IR: Vela serializes each command stream and the functional model runs it.
        from cascade.passes.lower_to_ethosu import execute_lowered

        # Vela's default architecture prints configuration warnings on stdout; keep them out.
        with contextlib.redirect_stdout(io.StringIO()):
            return execute_lowered(module, inputs)
    if is_scheduled(module):
        return run_scheduled(module, inputs).program_run()
    if any(isinstance(op, ForStripesOp) for op in module.walk()):
        from cascade.passes.rolling_buffer import group_view

        function = main_function(module)
        view, _ = group_view(function)
        others = [op.clone() for op in module.ops if op is not function]
        return run_program(ModuleOp([*others, view]), inputs)
    return run_program(module, inputs)


def _dtype(value: SSAValue) -> np.dtype:
    ty = value.type
    assert isinstance(ty, TensorType)
    element = ty.get_element_type()
    if not isinstance(element, IntegerType):
        raise InterpretationError(f"the stripe executor stores integer tensors only, got {ty}")
    return np.dtype(f"<i{element.width.data // 8}")


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _poison(dtype: np.dtype) -> np.generic:
    return np.frombuffer(bytes([POISON]) * dtype.itemsize, dtype=dtype)[0]


@dataclass
class _Store:
    """Where and how a logical tensor's cells are kept in SRAM (or DRAM)."""

    offset: int
    size: int
    shape: tuple[int, ...]
    """Storage shape (elements)."""
    logical: tuple[int, ...]
    dtype: np.dtype
    kind: str
    """`full`, `rolling` or `recompute`."""
    axis: int = -1
    depth: int = 0
    origin: tuple[int, ...] = ()
    """Recompute: the logical coordinate stored at storage index 0 during the current stripe."""
    memory: MemoryRegion = MemoryRegion.SRAM

    def view(self, sram: bytearray) -> np.ndarray:
        if math.prod(self.shape) * self.dtype.itemsize > self.size:
            raise InterpretationError(f"storage {self.shape} does not fit its {self.size}-byte buffer")
        return np.ndarray(self.shape, self.dtype, buffer=sram, offset=self.offset)

    def _index(self, box: Region) -> tuple[object, ...] | None:
        """Storage index of a logical box, None if part of it is not stored here."""
        slices: list[object] = []
        for axis, (lo, size) in enumerate(zip(box.offset, box.shape, strict=True)):
            if self.kind == "rolling" and axis == self.axis:
                if size > self.depth:
                    return None
                slices.append(np.arange(lo, lo + size) % self.depth)
                continue
            start = lo - (self.origin[axis] if self.kind == "recompute" else 0)
            if start < 0 or start + size > self.shape[axis]:
                return None
            slices.append(slice(start, start + size))
        return tuple(slices)

    def write(self, sram: bytearray, box: Region, data: np.ndarray) -> None:
        if self.kind == "rolling" and box.shape[self.axis] > self.depth:
            # Rows written in order into a k-deep ring: all but the last k are overwritten
            # within this very write (a stride larger than the window skips rows the
            # consumer never reads, yet they are computed). Keep what the ring ends up holding.
            drop = box.shape[self.axis] - self.depth
            offset, shape = list(box.offset), list(box.shape)
            offset[self.axis] += drop
            shape[self.axis] = self.depth
            box = Region(tuple(offset), tuple(shape))
            data = np.take(data, range(drop, drop + self.depth), axis=self.axis)
        index = self._index(box)
        if index is None:
            raise InterpretationError(f"a write of {box} falls outside its {self.kind} buffer {self.shape}")
        self.view(sram)[index] = data

    def read(self, sram: bytearray, box: Region | None) -> np.ndarray:
        """The whole logical tensor: `box` read from storage, poison everywhere else."""
        array = np.full(self.logical, _poison(self.dtype), dtype=self.dtype)
        if box is None:
            return array
        index = self._index(box)
        if index is None:
            # The cells are not held: the reader gets poison, as hardware would read garbage.
            return array
        target = tuple(slice(lo, lo + size) for lo, size in zip(box.offset, box.shape, strict=True))
        array[target] = self.view(sram)[index]
        return array


@dataclass
class ScheduledRun:
    """Outputs of a stripe-level run, the final SRAM image and the full tensors computed."""

    outputs: list[np.ndarray]
    sram: bytearray
    values: dict[SSAValue, np.ndarray] = field(default_factory=dict)
    weights_from_sram: int = 0
    """How many operator executions read their weights back from SRAM."""
    function: FuncOp | None = None
    """The function that ran."""
    dram: bytearray = field(default_factory=bytearray)
    """The final DRAM image (empty when nothing is spilled)."""

    def program_run(self) -> ProgramRun:
        return ProgramRun(self.outputs, self.values)


class _Executor:
    def __init__(self, function: FuncOp, inputs: Sequence[np.ndarray], check: bool = True) -> None:
        from cascade.passes.cascade_plan import scheduled_program
        from cascade.passes.rolling_buffer import group_view

        problems = check_memory(function) if check else []
        if problems:
            raise InterpretationError("the allocation is not valid: " + "; ".join(problems[:5]))
        peak = function.attributes[ALLOCATED_PEAK_ATTR]
        dram = function.attributes.get(ALLOCATED_DRAM_ATTR)
        self.function = function
        self.sram = bytearray([POISON]) * peak.value.data  # type: ignore[union-attr]
        self.dram = bytearray([POISON]) * (dram.value.data if dram is not None else 0)  # type: ignore[union-attr]
        self.flash: dict[SSAValue, np.ndarray] = {}
        self.stores: dict[SSAValue, _Store] = {}
        self.values: dict[SSAValue, np.ndarray] = {}
        self.weights_from_sram = 0
        self.buffers, _ = live_buffers(function, None)
        self.interpreter = Interpreter(ModuleOp([]))
        self.interpreter.register_implementations(NNFunctions())
        # The planner's view of the same program: operator indices, access relations, geometry.
        view, origin = group_view(function)
        scheduled = scheduled_program(view)
        self.graph = ProgramGraph.build(scheduled.program)
        self.index = {origin[o]: i for i, o in enumerate(scheduled.nn_ops)}
        self.steps = scheduled.steps
        for index, (arg, value) in enumerate(zip(function.args, inputs, strict=True)):
            placement = arg_placement(function, index)
            if placement is None:
                self.flash[arg] = np.asarray(value)
                continue
            store = self._full_store(arg, placement)
            store.write(self._bytes(store), Region((0,) * len(store.shape), store.shape), np.asarray(value))
        for op in function.body.block.ops:
            if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
                self.flash[op.result] = constant_array(op.value)

    def _memory(self, region: MemoryRegion) -> bytearray:
        if region == MemoryRegion.SRAM:
            return self.sram
        if region == MemoryRegion.DRAM:
            return self.dram
        raise InterpretationError(f"the stripe executor has no {region.value} memory")

    def _bytes(self, store: _Store) -> bytearray:
        return self._memory(store.memory)

    def _full_store(self, value: SSAValue, placement: PlacementAttr) -> _Store:
        offset, size, shape = placement.get_offset(), placement.get_size(), _shape(value)
        store = _Store(offset, size, shape, shape, _dtype(value), "full", memory=placement.get_region())
        self.stores[value] = store
        return store

    # ----------------------------------------------------------------- schedule

    def run(self) -> ScheduledRun:
        units = top_level_units(self.function)
        ret = self.function.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        outputs: list[np.ndarray] = []
        if not units:
            outputs = [self._read_full(v) for v in ret.arguments]
        for step, unit in enumerate(units):
            self._copy_weights(step)
            placement = get_placement(unit)
            if placement is None:
                raise InterpretationError(f"{unit.name} (step {step}) has no placement")
            store = self._full_store(unit.results[0], placement)
            if isinstance(unit, StripedRegionOp):
                self._run_loop(unit)
            else:
                assert isinstance(unit, nn.NNOperation)
                out = self._compute(unit, None)
                store.write(self._bytes(store), Region((0,) * out.ndim, out.shape), out)
            result = unit.results[0]
            self.values[result] = self._read_full(result)
            if isinstance(unit, StripedRegionOp):
                self.values[unit.yield_op.values[0]] = self.values[result]
            if step == len(units) - 1:
                # Read from SRAM only now: an output overwritten by a later step shows.
                outputs = [self._read_full(v) for v in ret.arguments]
            self._poison_dead(step)
        return ScheduledRun(outputs, self.sram, self.values, self.weights_from_sram, self.function, self.dram)

    def _poison_dead(self, step: int) -> None:
        """Poison the bytes of the buffers dying at `step`, except those a buffer still live
        after it holds (an output written in place over a dying input)."""
        surviving = [b for b in self.buffers if b.first <= step < b.last]
        for buffer in self.buffers:
            if buffer.last != step:
                continue
            dead = np.ones(buffer.size, dtype=bool)
            for other in surviving:
                start, end = max(buffer.offset, other.offset), min(buffer.end, other.end)
                if start < end and other.region == buffer.region:
                    dead[start - buffer.offset : end - buffer.offset] = False
            memory = np.frombuffer(self._memory(buffer.region), dtype=np.uint8)
            memory[buffer.offset : buffer.end][dead] = POISON
            del memory  # release the export of the bytearray

    def _read_full(self, value: SSAValue) -> np.ndarray:
        if value in self.flash:
            return self.flash[value].copy()
        store = self.stores[value]
        return store.read(self._bytes(store), Region((0,) * len(store.shape), store.shape))

    def _copy_weights(self, step: int) -> None:
        """Copy the weights of every SRAM weight buffer that becomes live at `step`."""
        for buffer in self.buffers:
            if buffer.kind != "weights" or buffer.first != step or buffer.op is None:
                continue
            raw = b"".join(np.ascontiguousarray(self.flash[v]).tobytes() for v in self._weight_operands(buffer.op))
            # A weight buffer is sized for the encoded stream; raw bytes that do not fit are
            # truncated (the operator then reads its weights from flash, see `_weights`).
            memory = self._memory(buffer.region)
            memory[buffer.offset : buffer.offset + min(len(raw), buffer.size)] = raw[: buffer.size]

    def _weight_operands(self, op: Operation) -> list[SSAValue]:
        return [v for v in op.operands if v in self.flash]

    def _weights(self, op: Operation) -> dict[SSAValue, np.ndarray]:
        """The constant operands of `op`, read back from its SRAM weight buffer if they are there."""
        operands = self._weight_operands(op)
        placement = op.attributes.get(WEIGHTS_PLACEMENT_ATTR)
        total = sum(self.flash[v].nbytes for v in operands)
        if placement is None or total > placement.get_size():  # type: ignore[union-attr]
            return {v: self.flash[v] for v in operands}
        self.weights_from_sram += 1
        result = {}
        cursor = placement.get_offset()  # type: ignore[union-attr]
        memory = self._memory(placement.get_region())  # type: ignore[union-attr]
        for v in operands:
            array = self.flash[v]
            result[v] = np.frombuffer(bytes(memory[cursor : cursor + array.nbytes]), array.dtype).reshape(array.shape)
            cursor += array.nbytes
        return result

    # ----------------------------------------------------------------- stripe loops

    def _run_loop(self, loop: StripedRegionOp) -> None:
        members = [o for o in loop.body.block.ops if isinstance(o, nn.NNOperation)]
        first = self.index[members[0]]
        step = next(s for s in self.steps if s.first == first)
        geometry = CascadeGeometry.build(self.graph, step.first, step.sink, step.config, step.recompute)
        for arg, operand in zip(loop.input_args, loop.inputs, strict=True):
            if operand in self.stores:
                self.stores[arg] = self.stores[operand]
            else:
                self.flash[arg] = self.flash[operand]
        sink_value = loop.yield_op.values[0]
        self.stores[sink_value] = self.stores[loop.results[0]]
        recompute: list[_Store] = []
        for member in members:
            value = member.results[0]
            if value is sink_value:
                continue
            store = self._intermediate_store(member, loop)
            self.stores[value] = store
            for use in value.uses:
                if isinstance(use.operation, RollingBufferOp):
                    self.stores[use.operation.result] = store
            if store.kind == "recompute":
                recompute.append(store)
        for stripe in geometry.stripe_indices():
            for store in recompute:
                # Stripe-local: whatever the previous stripe left must never be read.
                self._bytes(store)[store.offset : store.offset + store.size] = bytes([POISON]) * store.size
            for member in members:
                op_index = self.index[member]
                box = geometry.computed_box(op_index, stripe)
                if box is None:
                    continue
                store = self.stores[member.results[0]]
                if store.kind == "recompute":
                    required = geometry.required_box(op_index, stripe)
                    assert required is not None
                    store.origin = required.offset
                store.write(self._bytes(store), box, self._compute(member, box))

    def _intermediate_store(self, member: nn.NNOperation, loop: StripedRegionOp) -> _Store:
        value = member.results[0]
        buffers = [u.operation for u in value.uses if isinstance(u.operation, RollingBufferOp)]
        stripe = get_stripe(member)
        if stripe is None:
            raise InterpretationError(f"{member.name} in a stripe loop has no cascade.stripe")
        if buffers:
            buffer = buffers[0]
            placement = buffer.placement
            axis, depth = buffer.rolling_axis(), buffer.get_depth()
        else:
            placement = get_placement(member)
            axis, depth = loop.rolling_axis() or -1, 0
            if stripe.get_mode() == BufferMode.ROLLING:
                depth = stripe.get_shape()[axis]
        if placement is None:
            raise InterpretationError(f"the buffer of {member.name} has no placement")
        logical = _shape(value)
        if depth:
            shape = list(logical)
            shape[axis] = depth
            return _Store(
                placement.get_offset(),
                placement.get_size(),
                tuple(shape),
                logical,
                _dtype(value),
                "rolling",
                axis,
                depth,
                memory=placement.get_region(),
            )
        return _Store(
            placement.get_offset(),
            placement.get_size(),
            tuple(stripe.get_shape()),
            logical,
            _dtype(value),
            "recompute",
            origin=(0,) * len(logical),
            memory=placement.get_region(),
        )

    # ----------------------------------------------------------------- one operator

    def _compute(self, op: nn.NNOperation, box: Region | None) -> np.ndarray:
        """`op`'s output over `box` (None: the whole output), from SRAM and flash only."""
        weights = self._weights(op)
        index = self.index[op]
        args: list[np.ndarray] = []
        for position, value in enumerate(op.operands):
            if value in weights:
                args.append(weights[value])
                continue
            store = self.stores.get(value)
            if store is None:
                raise InterpretationError(f"operand {position} of {op.name} is stored nowhere")
            region: Region | None = Region((0,) * len(store.logical), store.logical)
            input_index = input_position(self.graph.ops[index], position)
            if box is not None and input_index is not None:
                region = self._read_box(index, input_index, box, store.logical)
            args.append(store.read(self._bytes(store), region))
        if box is None:
            return np.asarray(self.interpreter.run_op(op, tuple(args))[0])
        return _compute_box(self.interpreter, op, args, box)

    def _read_box(self, index: int, position: int, box: Region, shape: tuple[int, ...]) -> Region | None:
        """The input cells operand `position` of operator `index` reads to compute `box`."""
        operand = self.graph.operands[index][position]
        offset, size = [0] * len(shape), list(shape)
        for axis in STRIPE_AXES:
            axis_map = operand.axis_maps.get(axis)
            if axis_map is None or axis >= len(shape):
                continue
            lo, hi = axis_map.apply(box.offset[axis], box.offset[axis] + box.shape[axis] - 1)
            lo, hi = max(lo, 0), min(hi, shape[axis] - 1)
            if lo > hi:
                return None
            offset[axis], size[axis] = lo, hi - lo + 1
        return Region(tuple(offset), tuple(size))


_ELEMENTWISE = (
    nn.AddOp,
    nn.SubOp,
    nn.MulOp,
    nn.MinimumOp,
    nn.MaximumOp,
    nn.TanhOp,
    nn.SigmoidOp,
    nn.LeakyReluOp,
    nn.HardSwishOp,
    nn.ReluOp,
    nn.RescaleOp,
)


def _compute_box(interpreter: Interpreter, op: nn.NNOperation, args: list[np.ndarray], box: Region) -> np.ndarray:
    """`op` over `box` of its output. Windows and elementwise operators run on the cropped
    inputs (a window with the padding the crop leaves at the tensor's edges), which gives the
    same values as the whole operator; anything else runs whole and is cut."""
    target = tuple(slice(lo, lo + size) for lo, size in zip(box.offset, box.shape, strict=True))
    out_shape = _shape(op.results[0])
    cropped: Operation | None = None
    inputs = list(args)
    if isinstance(op, nn.Conv2DOp | nn.DepthwiseConv2DOp | nn.Pool2DOp):
        cropped, inputs = _crop_window(op, args, box)
    elif isinstance(op, _ELEMENTWISE) and len(out_shape) == 4:
        cropped, inputs = op, []
        for array in args:
            index: list[object] = [slice(None)] * array.ndim
            for axis in SPATIAL_AXES:
                if array.ndim != len(out_shape) or array.shape[axis] == 1:
                    continue
                if array.shape[axis] != out_shape[axis]:
                    cropped = None
                    break
                index[axis] = target[axis]
            inputs.append(array[tuple(index)])
    if cropped is not None:
        result = np.asarray(interpreter.run_op(cropped, tuple(inputs))[0])
        if cropped is not op:
            cropped.erase()  # a detached copy: drop its uses of the program's values
        want = tuple(out_shape[a] if a not in SPATIAL_AXES else box.shape[a] for a in range(len(out_shape)))
        if result.shape == want:
            return result[tuple(slice(None) if a in SPATIAL_AXES else target[a] for a in range(len(want)))]
    return np.asarray(interpreter.run_op(op, tuple(args))[0])[target]


def _crop_window(op: nn.WindowOperation, args: list[np.ndarray], box: Region) -> tuple[Operation | None, list]:
    """A copy of `op` with the padding that the input crop for `box` leaves, and the inputs."""
    x = args[0]
    (kh, kw), stride, dilation = op.kernel_size(), op.strides(), op.dilations()
    top, left, _, _ = op.paddings()
    padding = [0, 0, 0, 0]
    index: list[object] = [slice(None)] * x.ndim
    for position, (axis, k, before) in enumerate(((1, kh, top), (2, kw, left))):
        o0, o1 = box.offset[axis], box.offset[axis] + box.shape[axis] - 1
        r0 = o0 * stride[position] - before
        r1 = o1 * stride[position] - before + (k - 1) * dilation[position]
        c0, c1 = max(r0, 0), min(r1, x.shape[axis] - 1)
        if c0 > c1:
            return None, args
        index[axis] = slice(c0, c1 + 1)
        padding[position] = c0 - r0
        padding[position + 2] = r1 - c1
    cropped = op.clone()
    cropped.padding = DenseArrayBase.from_list(i64, padding)
    return cropped, [x[tuple(index)], *args[1:]]


def run_scheduled(module: ModuleOp, inputs: Sequence[np.ndarray], check: bool = True) -> ScheduledRun:
    """Run the allocated `@main` of `module` stripe by stripe in one flat SRAM (module docstring).

    With `check` (the default) an allocation `passes.memory_check` rejects is refused; without
    it, the run goes ahead and a bad allocation shows as wrong outputs (tests use this to show
    that the executor catches what the checker catches)."""
    function = main_function(module)
    if len(inputs) != len(function.args):
        raise InterpretationError(f"@main takes {len(function.args)} inputs, {len(inputs)} given")
    for unit in top_level_units(function):
        if isinstance(unit, GroupOp | ForStripesOp) or isinstance(unit, nn.NNOperation):
            continue
        raise InterpretationError(f"cannot run {unit.name} stripe by stripe")
    return _Executor(function, inputs, check).run()


def compare_with_nn(original: ModuleOp, scheduled: ScheduledRun, reference: ProgramRun) -> tuple[int, list[str]]:
    """Compare a stripe-level run with an `interpreter.nn` run of the unscheduled `original`:
    the outputs by position, and every full tensor the scheduled run computed with the value
    of the same operator in `original` (`twin_operators`: scheduling may reorder them).
    Returns how many tensors were compared and one line per mismatch."""
    mismatches: list[str] = []
    compared = 0
    for index, (want, got) in enumerate(zip(reference.outputs, scheduled.outputs, strict=True)):
        compared += 1
        if want.shape != got.shape or not np.array_equal(want, got):
            mismatches.append(f"output {index} differs")
    if scheduled.function is None:
        return compared, mismatches
    for position, (op, twin) in enumerate(twin_operators(scheduled.function, main_function(original))):
        if op.results[0] not in scheduled.values or twin.results[0] not in reference.values:
            continue
        want, got = reference.values[twin.results[0]], scheduled.values[op.results[0]]
        compared += 1
        if want.shape != got.shape or not np.array_equal(want, got):
            count = int(np.sum(want != got)) if want.shape == got.shape else -1
            mismatches.append(f"operator {position} ({describe_op(op)}): {count} elements differ")
    return compared, mismatches


def twin_operators(function: FuncOp, original: FuncOp) -> list[tuple[nn.NNOperation, nn.NNOperation]]:
    """Each `nn` operator of `function` (in its order) with the operator of `original` it stands
    for. Scheduling groups operators, wraps buffers and may run them in another order
    (cascade-plan's lean order), but never changes what one computes, so operators are matched
    by what they compute: the operator, its properties (scheduling adds only discardable
    attributes) and what its operands compute, through groups and rolling buffers to function
    arguments and constants. Operators that compute the same are matched in order. Raises
    `InterpretationError` when the two do not have the same operators."""
    numbers: dict[object, int] = {}
    mine, theirs = _operator_keys(function, numbers), _operator_keys(original, numbers)
    unmatched: dict[object, list[nn.NNOperation]] = {}
    for op, key in theirs:
        unmatched.setdefault(key, []).append(op)
    pairs = []
    for op, key in mine:
        candidates = unmatched.get(key)
        if not candidates:
            raise InterpretationError(f"{describe_op(op)} of the scheduled program is not in the original")
        pairs.append((op, candidates.pop(0)))
    if len(pairs) != len(theirs):
        raise InterpretationError("the scheduled program does not have the operators of the original")
    return pairs


def _operator_keys(function: FuncOp, numbers: dict[object, int]) -> list[tuple[nn.NNOperation, int]]:
    """Every nn operator of `function` in walk order, with a number standing for what it
    computes (equal numbers: the same computation; see `twin_operators`), from `numbers`, the
    numbers given so far."""
    known: dict[Operation, int] = {}

    def value_key(value: SSAValue) -> object:
        owner = value.owner
        if isinstance(value, BlockArgument):
            parent = owner.parent_op() if isinstance(owner, Block) else None
            if isinstance(parent, StripedRegionOp):
                return value_key(parent.inputs[parent.input_args.index(value)])
            return ("argument", value.index)
        if isinstance(owner, StripedRegionOp):
            return value_key(owner.yield_op.operands[value.index])
        if isinstance(owner, RollingBufferOp):
            return value_key(owner.source)
        if isinstance(owner, arith.ConstantOp):
            return ("constant", owner.value)
        if isinstance(owner, nn.NNOperation):
            return ("operator", known[owner], value.index)
        return (owner.name, value.index, tuple(value_key(operand) for operand in owner.operands))

    keyed = []
    for op in function.walk():
        if not isinstance(op, nn.NNOperation):
            continue
        properties = tuple(sorted(op.properties.items()))
        key = (op.name, properties, tuple(value_key(operand) for operand in op.operands))
        known[op] = numbers.setdefault(key, len(numbers))
        keyed.append((op, known[op]))
    return keyed


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m cascade.interpreter.scheduled SCHEDULED.mlir ORIGINAL.mlir [--seed N]`: run
    both on the same random int8 inputs (the scheduled one stripe by stripe in flat SRAM) and
    print `bit-exact: K/N tensors`; exit status 0 only if all compared tensors are equal and no
    output holds one value (`interpreter.nn.constant_outputs`)."""
    import argparse

    from cascade.frontends.loader import load_module
    from cascade.interpreter.nn import constant_outputs, input_types

    parser = argparse.ArgumentParser(prog="python -m cascade.interpreter.scheduled")
    parser.add_argument("scheduled")
    parser.add_argument("original")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    scheduled, original = load_module(args.scheduled), load_module(args.original)
    rng = np.random.default_rng(args.seed)
    inputs = [rng.integers(-128, 128, size=t.get_shape(), dtype=np.int8) for t in input_types(original)]
    run = run_scheduled(scheduled, inputs)
    reference = run_program(original, inputs)
    compared, mismatches = compare_with_nn(original, run, reference)
    for line in mismatches:
        print(f"mismatch {line}")
    print(f"sram: {len(run.sram)} bytes")
    if run.dram:
        print(f"dram: {len(run.dram)} bytes")
    print(f"bit-exact: {compared - len(mismatches)}/{compared} tensors")
    if constant := constant_outputs(reference.outputs):
        print(f"degenerate: output {', '.join(map(str, constant))} holds one value; choose another program or seed")
    return 0 if compared and not mismatches and not constant else 1


if __name__ == "__main__":
    raise SystemExit(main())
