"""lower-to-ethosu: lower allocated, scheduled nn/cascade IR to Ethos-U command streams.

    cascade-opt net.tflite --cascade-plan='accelerator=ethos-u55-128 sram-budget=N' --rolling-buffer \\
        --allocate-memory='accelerator=ethos-u55-128' -p 'lower-to-ethosu{accelerator=ethos-u55-128}'

Input: the output of allocate-memory (every buffer has a `#cascade.placement`). Output: the same
function where every maximal run of NPU steps (top-level `cascade.for_stripes` loops and bare
operators, in schedule order) is replaced by ONE `ethosu.command_stream`, and the remaining
steps stay `nn` operators that run on the CPU (as Vela leaves unsupported operators to TFLite
Micro). Representation (the data flow goes through memory, as on the device):

* `ethosu.command_stream "<accelerator>" {ethosu.flash = array<i8: ...>} { commands }`: the
  commands of the segment; the stream reads its constants (bias records, MLW weights, LUTs)
  from region 0 (flash), whose image is the stream's `ethosu.flash` attribute, and its feature
  maps from region 1, the SRAM of `cascade.allocated_peak_bytes` bytes in which every tensor
  lives at its allocated offset (NHCWB16 or dense NHWC, see below), unless the function spills;
* regions follow Vela and the ethos-u driver: region 1 is the `scratch` tensor (the tensor
  arena) and region 2 `scratch_fast` (the driver points it at its fast memory). A function
  with spilled tensors (`#cascade.placement<dram, ...>`, the DRAM arena of Dedicated_Sram)
  addresses them in region 1, the DRAM of `cascade.allocated_dram_bytes` bytes, and
  everything in SRAM (feature maps, rolling and recompute buffers, weight buffers and their
  DMAs) in region 2 (`NpuRegions`); without spilled tensors region 2 is unused.
* a value computed by a command stream and used later by a CPU operator or `func.return` is
  read back from memory by `builtin.unrealized_conversion_cast` with no operand and a
  `cascade.placement` attribute (a "load" of the tensor from its placement); the load and every
  function argument also carry the tensor's `nn.quant`, which the lowered `nn` operators held
  (the deployable .tflite needs it), and the load the location of the operator it stands for
  (the TFLite tensor name);
* a CPU operator keeps its `cascade.placement`: its result is stored there (dense NHWC) for
  the command streams after it; function arguments are written to their placements first.

`execute_lowered` executes this form: command streams are serialized with Vela
(`npu_generate_register_command_stream`) and run by the functional model
(`interpreter.ethosu.EthosUMachine.run_register_stream`) on the shared SRAM (and DRAM) image;
CPU operators run with the `nn` interpreter. `compare_lowered` checks a run against the `nn`
program's: the outputs and every tensor the CPU reads from the NPU, which stays informative
where a saturated softmax output holds one value.

Stripes: every operator of a stripe loop computes, at every stripe (lexicographic order), its
*computed box* (`planner.stripes.CascadeGeometry`, exactly what `interpreter.scheduled` runs),
lowered with `ethos_u.npu_lowering.lower_op`; commands are interleaved across operators in the
schedule's order. The NPU executes kernel commands in stream order, so the order that makes
the scheduled executor bit-exact (rolling rows consumed before they are overwritten) is kept.
A box taller than its rolling buffer keeps its last k rows (the others would be overwritten
within the same write, as in the scheduled executor).

Choices and limits of this version:

* Feature maps between NPU operators are stored NHCWB16 (16-channel bricks), as Vela stores
  them and as the cost model prices them (`estimate.choose_layouts`, which also sized their
  buffers); graph inputs and outputs, whatever a CPU operator reads or writes, and the tensors
  the cost model keeps linear are dense NHWC. A bare operator that falls back to the CPU
  turns its tensors NHWC and the function is lowered again.
* Every kernel command runs the OFM block the cost model priced it with
  (`npu_lowering.cost_model_block`, Vela's own choice), so the streams are the ones whose
  cycles `cascade-plan` and `--report` estimate.
* `fully_connected` stays on the CPU by default (`fc-on-npu=false`, here and in cascade-plan,
  whose choice this pass follows unless given its own): the NPU's fixed-point FC differs from
  TFLite's reference by up to 1 LSB. Softmax and anything `lower_op` rejects as a
  bare operator also stay on the CPU; an unsupported operator inside a stripe loop is an error.
* Constants (bias records, MLW weights, LUTs, elementwise constant operands) are placed one
  after the other in the stream's flash image. An operator with SRAM weights
  (`cascade.weights_placement`) is lowered to read them at that SRAM placement, and an
  `ethosu.dma` from flash to SRAM precedes its first command; when the plan prefetches them
  (`cascade.prefetch`, the buffer then lives during the previous step too) the DMA moves before
  the previous step's commands, in the same stream, so that it overlaps them as the plan's
  cycles assume. Weights double-buffered in slices (`cascade.weight_slice_depth`) run one
  command per output-channel slice, each slice's constants copied into alternate halves of the
  buffer one slice ahead (`_Segment._lower_sliced`). If our encoding (block depth chosen per
  stripe by `lower_op`) is larger than the buffer the allocator sized with the cost model, or
  the operator is lowered stripe by stripe (it touches a recompute buffer), its constants stay
  in flash.
* A recompute intermediate (a stripe-shaped buffer holding, at each stripe, the box its
  consumers require, from that box's origin) is addressed per stripe: its producer and
  consumers are lowered one stripe at a time with the placement shifted by the origin, and
  the constants of consecutive stripes are shared when their encodings are equal.
* Rolling buffers along the width, batch > 1 and 16-bit feature maps in stripe loops are not
  handled; one LUT slot per LUT operator (round-robin over the 8 slots, DMA not hoisted).
* WAR on rolling buffers needs no extra waits here: kernel commands run in stream order on the
  NPU and the stream order is the scheduled executor's, which consumes rows before they wrap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    UnrealizedConversionCastOp,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from cascade.dialects import ethosu, nn
from cascade.dialects.cascade import (
    PLACEMENT_ATTR,
    BufferMode,
    GroupOp,
    MemoryRegion,
    PlacementAttr,
    RollingBufferOp,
    StripedRegionOp,
    get_placement,
    get_stripe,
    set_arg_attrs,
)

if TYPE_CHECKING:
    from cascade.ethos_u.npu_lowering import Box, LoweredOp, LoweredStripe, Placement
    from cascade.interpreter.nn import ProgramRun
    from cascade.passes.planner.program import ProgramGraph


FLASH_REGION = 0
"""Base-pointer region of a stream's constants (the `read_only` tensor)."""
SCRATCH_REGION = 1
"""Region of the tensor arena (Vela's `scratch`): SRAM, or DRAM when the function spills."""
SCRATCH_FAST_REGION = 2
"""Region of Vela's `scratch_fast`: the SRAM of a function that spills (Dedicated_Sram)."""


@dataclass(frozen=True)
class NpuRegions:
    """The base-pointer region each memory is addressed in (module docstring): DRAM in region
    1, SRAM in region 1, or in region 2 when the function has DRAM placements."""

    spilling: bool

    @staticmethod
    def of_function(function: FuncOp) -> NpuRegions:
        """The regions of an allocated (or lowered) function: allocate-memory gives the function
        `cascade.allocated_dram_bytes` exactly when it places something in DRAM."""
        from cascade.passes.memory_check import ALLOCATED_DRAM_ATTR

        return NpuRegions(ALLOCATED_DRAM_ATTR in function.attributes)

    @property
    def sram(self) -> int:
        return SCRATCH_FAST_REGION if self.spilling else SCRATCH_REGION

    def of(self, attr: PlacementAttr) -> int:
        """The region of a placement (`sram` or `dram`)."""
        memory = attr.get_region()
        if memory == MemoryRegion.SRAM:
            return self.sram
        if memory == MemoryRegion.DRAM:
            return SCRATCH_REGION
        raise ValueError(f"no NPU region for a buffer placed in {memory.value}")


@dataclass(frozen=True)
class LowerToEthosUPass(ModulePass):
    """Replace the NPU steps of allocated IR by `ethosu.command_stream`s (see the module doc).

    Options: `accelerator` (Vela accelerator name; default: the one cascade-plan used, which it
    must be if given), `fc-on-npu` (lower fully_connected too; by default as cascade-plan's
    `fc-on-npu` planned them, off unless that was given, see the module doc),
    `check-allocation` (default true: first check the placements as allocate-memory does,
    `memory_check`; ethosu-pipeline, which has just allocated and checked them, says false).
    The streams record the plan's accelerator, system config and memory mode.
    """

    name = "lower-to-ethosu"

    accelerator: str | None = None
    fc_on_npu: bool | None = None
    check_allocation: bool = True
    """The streams address memory where the placements say: two live buffers placed over each
    other, or a buffer past the SRAM, would make a stream that computes garbage (placements
    edited by hand, or from another tool)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from cascade.ethos_u.npu_lowering import forget_costing_views
        from cascade.passes.cascade_plan import planned_fc_on_npu, planned_target
        from cascade.passes.memory_check import ALLOCATED_PEAK_ATTR, check_memory

        try:
            for function in [f for f in op.ops if isinstance(f, FuncOp) and f.body.blocks]:
                accelerator, system_config, memory_mode = planned_target(function, self.accelerator, self.name)
                allocated = ALLOCATED_PEAK_ATTR in function.attributes  # else lower_function says so
                if self.check_allocation and allocated and (problems := check_memory(function)):
                    raise DiagnosticException(
                        f"lower-to-ethosu: @{function.sym_name.data}: the allocation is not valid: "
                        + "; ".join(problems[:5])
                    )
                try:
                    fc_on_npu = planned_fc_on_npu(function) if self.fc_on_npu is None else self.fc_on_npu
                    streams = lower_function(function, accelerator, fc_on_npu=fc_on_npu, memory_mode=memory_mode)
                except ValueError as error:  # NpuLoweringError and allocation problems
                    raise DiagnosticException(f"lower-to-ethosu: @{function.sym_name.data}: {error}") from error
                for stream in streams:
                    if system_config is not None:
                        stream.system_config = StringAttr(system_config)
                    if memory_mode is not None:
                        stream.memory_mode = StringAttr(memory_mode)
        finally:
            # The lowered operators are gone; so is any need for their views (and the copies of
            # their weights the views hold, which cascade-opt, running without the cyclic
            # garbage collector, would otherwise keep to the end).
            forget_costing_views()


# --------------------------------------------------------------------------- #
# Lowering
# --------------------------------------------------------------------------- #


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _data_type(value: SSAValue) -> ethosu.DataType:
    assert isinstance(value.type, TensorType)
    element = value.type.get_element_type()
    types = {8: ethosu.DataType.INT8, 16: ethosu.DataType.INT16, 32: ethosu.DataType.INT32}
    if not isinstance(element, IntegerType) or element.width.data not in types:
        raise ValueError(f"no NPU data type for {value.type}")
    return types[element.width.data]


def _placement(
    value: SSAValue, attr: PlacementAttr, layouts: _Layouts, regions: NpuRegions, rolling: RollingBufferOp | None = None
) -> Placement:
    """Where `value` lives: at `attr`, in `rolling` when it is held in a rolling buffer (along
    rows or along columns)."""
    from cascade.ethos_u.npu_lowering import Placement, hwc_shape

    axis, depth = (None, None) if rolling is None else (rolling.rolling_axis(), rolling.get_depth())
    return Placement(
        regions.of(attr),
        attr.get_offset(),
        hwc_shape(_shape(value)),
        layouts.of(value),
        depth if axis == 1 else None,
        _data_type(value),
        depth if axis == 2 else None,
    )


@dataclass
class _Layouts:
    """The storage layout of each value: NHCWB16 (16-channel bricks, what Vela stores between
    NPU operators and what the cost model prices) for the values in `bricked`, NHWC for all
    others: graph inputs and outputs, what a CPU operator reads or writes, and whatever the
    cost model stores as NHWC (`estimate.choose_layouts`, which the allocator sized it for)."""

    bricked: set[SSAValue]
    aliases: dict[SSAValue, SSAValue]
    """Block arguments of stripe loops and rolling-buffer results: the value they stand for."""

    def of(self, value: SSAValue) -> ethosu.Layout:
        value = self.aliases.get(value, value)
        return ethosu.Layout.NHCWB16 if value in self.bricked else ethosu.Layout.NHWC

    def unbrick(self, values: Sequence[SSAValue]) -> bool:
        """Store `values` as NHWC; whether any was bricked."""
        found = {self.aliases.get(v, v) for v in values} & self.bricked
        self.bricked -= found
        return bool(found)


def describe_op(op: Operation) -> str:
    """An operator for a diagnostic: its name and where it is written (`file:line:col`), or its
    TFLite tensor name."""
    from cascade.frontends.loader import format_location

    if (location := format_location(op.location)) is not None:
        return f"{op.name} at {location}"
    if isinstance(op.location, NameLoc):
        return f"{op.name} '{op.location.desc.data}'"
    return op.name


def _cpu_reason(op: Operation, fc_on_npu: bool, constants: dict[SSAValue, np.ndarray]) -> str | None:
    """Why `op` runs on the CPU wherever its operands live, None if the NPU may run it."""
    from cascade.ethos_u.npu_lowering import SUPPORTED_OPS, operator_refusal

    if isinstance(op, nn.FullyConnectedOp) and not fc_on_npu:
        return "fully_connected runs on the CPU unless fc-on-npu (the NPU's rounding differs from TFLite's by 1 LSB)"
    if not isinstance(op, SUPPORTED_OPS):
        return f"the NPU lowering has no {op.name}"
    weighted = isinstance(op, nn.ConvolutionOperation | nn.FullyConnectedOp)
    if weighted and any(v not in constants for v in op.operands[1:]):
        return WEIGHTS_NOT_CONSTANT
    return operator_refusal(op)


class _Segment:
    """Commands and flash image of one NPU segment under construction."""

    def __init__(self, accelerator: str, regions: NpuRegions) -> None:
        self.accelerator = accelerator
        self.regions = regions
        self.commands: list[Operation] = []
        self.flash = bytearray()
        self.luts: dict[Operation, int] = {}
        self.sram_weight_ops = 0
        self.weight_copies: set[Operation] = set()
        """The DMAs that copy an operator's weights from flash into its SRAM buffer and may run
        during the step before (for weights in slices: the first two)."""
        self.last: dict[Operation, tuple[int, bytes, tuple[tuple[int, int], ...] | None]] = {}
        """Per operator lowered stripe by stripe: the flash address and bytes of its last
        stripe's constants, and the channels (first, count) of its boxes."""
        self.shared_across_channels: dict[Operation, bool] = {}
        """Whether an operator's stripes of other channels reused the previous constants."""

    def lower(
        self,
        op: Operation,
        placements: Sequence[Placement],
        boxes: Sequence[Box] | None,
        constants: dict,
        reuse: bool = False,
        sram_weights: PlacementAttr | None = None,
        slice_depth: int = 0,
    ) -> list[LoweredStripe]:
        """`lower_op` of `op` over `boxes`; its constants go to the end of the flash image.
        With `slice_depth`, the whole operator in output-channel slices whose weights take turns
        in the two halves of `sram_weights` (see `_lower_sliced`)."""
        from cascade.ethos_u.npu_lowering import LUT_OPS, NpuLoweringError, lower_op

        lut_index = 0
        if isinstance(op, LUT_OPS):
            if op not in self.luts:
                self.luts[op] = len(self.luts) % 8
            lut_index = self.luts[op]

        def lower(address: int, region: int = FLASH_REGION, stripes: Sequence[Box] | None = boxes) -> LoweredOp:
            try:
                return lower_op(
                    op,
                    placements,
                    stripes,
                    accelerator=self.accelerator,
                    constant_region=region,
                    constant_address=address,
                    constants=constants,
                    lut_index=lut_index,
                )
            except NpuLoweringError as error:
                raise NpuLoweringError(f"{describe_op(op)}: {error}") from None

        if sram_weights is not None and slice_depth and boxes is None and not reuse:
            sliced = self._lower_sliced(op, placements, lower, sram_weights, slice_depth)
            if sliced is not None:
                return sliced
        elif sram_weights is not None and not reuse:
            # SRAM weights: lowered to read the constants at their SRAM placement, which a DMA
            # from flash fills before the operator's first command (when the encoding fits
            # the buffer the allocator sized with the cost model; else they stay in flash).
            lowered = lower(sram_weights.get_offset(), self.regions.of(sram_weights))
            if 0 < lowered.constant_size <= sram_weights.get_size():
                dma = self._weight_copy(lowered, sram_weights)
                lowered.stripes[0].commands.insert(0, dma)
                self.weight_copies.add(dma)
                self.sram_weight_ops += 1
                return lowered.stripes
        channels = tuple((box.c, box.depth) for box in boxes) if boxes is not None else None
        previous = self.last.get(op) if reuse else None
        other_channels = previous is not None and previous[2] != channels
        if previous is not None and (not other_channels or self.shared_across_channels.get(op, True)):
            # Stripes lowered one by one: reuse the constants of the previous stripe when they
            # are the same bytes (the encoding does not depend on the address). Stripes of
            # other channels usually read other weights: once that failed for an operator,
            # its next channel stripes are not tried (each would be lowered twice); a mean's
            # constants are the same for every slice.
            lowered = lower(previous[0])
            if other_channels:
                self.shared_across_channels[op] = lowered.constant_data == previous[1]
            if lowered.constant_data == previous[1]:
                return lowered.stripes
        address = len(self.flash)
        lowered = lower(address)
        self.flash += lowered.constant_data
        self.last[op] = (address, lowered.constant_data, channels)
        return lowered.stripes

    def _lower_sliced(
        self,
        op: Operation,
        placements: Sequence[Placement],
        lower: Callable[..., LoweredOp],
        sram_weights: PlacementAttr,
        depth: int,
    ) -> list[LoweredStripe] | None:
        """The operator in slices of `depth` output channels, its weights double-buffered: slice
        k reads its constants from half k % 2 of the buffer, which a DMA fills while slice k - 1
        computes (and, for the first two, during the previous step when hoisted). Vela's stream
        generator makes the copy into a half wait for the kernel still reading it. None (the
        weights then stay in flash) when a slice's encoding outgrows its half; the planner
        sizes halves for the largest slice (`EthosUCostModel.weight_slice_bytes`), so only an
        operator it did not size (a hand-written plan) can."""
        from cascade.ethos_u.npu_lowering import Box, LoweredStripe, hwc_shape

        height, width, channels = hwc_shape(_shape(op.results[0]))
        half = sram_weights.get_size() // 2
        slices = []
        for index, first in enumerate(range(0, channels, depth)):
            box = Box(0, 0, first, height, width, min(depth, channels - first))
            address = sram_weights.get_offset() + (index % 2) * half
            lowered = lower(address, self.regions.of(sram_weights), [box])
            if not 0 < lowered.constant_size <= half or len(lowered.stripes) != 1:
                return None
            slices.append((address, lowered))
        copies = [self._weight_copy(lowered, sram_weights, address) for address, lowered in slices]
        # copy 0, copy 1, slice 0, copy 2, slice 1, ...: each copy one slice ahead.
        commands: list[Operation] = [*copies[:2]]
        for index, (_, lowered) in enumerate(slices):
            commands.extend(lowered.stripes[0].commands)
            if index + 2 < len(copies):
                commands.append(copies[index + 2])
        self.weight_copies.update(copies[:2])
        self.sram_weight_ops += 1
        return [LoweredStripe(Box.full((height, width, channels)), commands)]

    def _weight_copy(self, lowered: LoweredOp, buffer: PlacementAttr, address: int | None = None) -> ethosu.DmaOp:
        """A DMA of `lowered`'s constants, appended to the flash image, into the weight buffer
        `buffer` (at `address`, by default its start)."""
        size = lowered.constant_size
        source = ethosu.AddressRangeAttr(FLASH_REGION, len(self.flash), size)
        self.flash += lowered.constant_data
        address = buffer.get_offset() if address is None else address
        return ethosu.DmaOp(source, ethosu.AddressRangeAttr(self.regions.of(buffer), address, size))

    def build(self) -> ethosu.CommandStreamOp:
        stream = ethosu.CommandStreamOp(self.accelerator, self.commands)
        stream.set_flash_image(bytes(self.flash))
        return stream


def _spills(accelerator: str, memory_mode: str | None = None) -> bool:
    """Whether `accelerator`'s `memory_mode` (default: Vela's) has a DRAM arena apart from its SRAM."""
    from cascade.ethos_u.arch import arch_config

    return arch_config(accelerator, memory_mode_name=memory_mode).spilling


def lower_function(
    function: FuncOp, accelerator: str, *, fc_on_npu: bool = False, memory_mode: str | None = None
) -> list[ethosu.CommandStreamOp]:
    """Lower the allocated `function` in place (planned for `accelerator` in `memory_mode`);
    returns its command streams in order."""
    from cascade.passes.memory_check import (
        ALLOCATED_DRAM_ATTR,
        ALLOCATED_PEAK_ATTR,
        arg_placement,
        live_buffers,
        top_level_units,
    )

    units = top_level_units(function)
    if not units:
        return []  # nothing to lower (a function without nn operators is left unchanged)
    if ALLOCATED_PEAK_ATTR not in function.attributes:
        raise ValueError("the function is not allocated (run allocate-memory first)")
    if live_buffers(function, MemoryRegion.DRAM)[0]:
        if ALLOCATED_DRAM_ATTR not in function.attributes:
            # Its DRAM placements would otherwise share region 1 with SRAM.
            raise ValueError(f"the function has DRAM placements but no {ALLOCATED_DRAM_ATTR} (run allocate-memory)")
        if not _spills(accelerator, memory_mode):
            mode = f"memory mode {memory_mode}" if memory_mode is not None else "its default memory mode"
            raise ValueError(
                f"the function keeps tensors in DRAM, which '{accelerator}' in {mode} has not "
                "(was it planned for another accelerator?)"
            )
    for unit in units:
        if isinstance(unit, GroupOp):
            raise ValueError("cascade.group is not lowered: run rolling-buffer first")
    # Where each value lives (function arguments, step results).
    stores: dict[SSAValue, PlacementAttr] = {}
    for index, arg in enumerate(function.args):
        attr = arg_placement(function, index)
        if attr is not None:
            stores[arg] = attr
    constants: dict[SSAValue, np.ndarray] = {}
    from cascade.interpreter.constants import constant_array

    for op in function.body.block.ops:
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
            constants[op.result] = constant_array(op.value)

    context = _LoopContext.build(function)
    # Graph edges and CPU operators see dense NHWC tensors.
    ret = function.body.block.last_op
    context.layouts.unbrick([*function.args, *(ret.operands if ret is not None else ())])
    for unit in units:
        if isinstance(unit, nn.NNOperation) and _cpu_reason(unit, fc_on_npu, constants) is not None:
            context.layouts.unbrick([*unit.operands, *unit.results])
    while True:
        try:
            segments, stores = _segments(units, dict(stores), constants, context, accelerator, fc_on_npu)
            break
        except _Relower:
            continue  # a bare operator fell back to the CPU: its tensors are NHWC now

    # The quantization of what crosses the NPU/CPU boundary, while the nn operators that carry
    # it still exist (a .tflite needs it for every tensor it exposes).
    _record_argument_quantization(function)
    boundary_quant = {m.results[0]: _value_quant(m.results[0]) for members, _ in segments for m in members}

    streams = []
    for members, segment in segments:
        stream = segment.build()
        streams.append(stream)
        block = function.body.block
        block.insert_op_before(stream, members[0])
        for member in members:
            result = member.results[0]
            outside = [u for u in result.uses if u.operation not in members]
            if outside:
                load = UnrealizedConversionCastOp.build(operands=[[]], result_types=[[result.type]])
                load.attributes[PLACEMENT_ATTR] = stores[result]
                if (quant := boundary_quant.get(result)) is not None:
                    load.attributes[QUANT_ATTR] = quant
                load.results[0].name_hint = result.name_hint
                load.location = _tensor_location(result)  # the tensor's name (a TFLite one) for checkers
                block.insert_op_before(load, members[-1])
                result.replace_uses_with_if(load.results[0], lambda use, ms=members: use.operation not in ms)
        for member in reversed(members):  # users before producers
            member.detach()
            member.erase(safe_erase=False)
    # Constants only the command streams used are dead now.
    for op in list(function.body.block.ops):
        if isinstance(op, arith.ConstantOp) and not op.result.uses:
            op.detach()
            op.erase()
    return streams


QUANT_ATTR = "nn.quant"
"""Discardable attribute of a load (and argument attribute of a function argument): the
quantization of the tensor, recorded because the nn operators that carried it are lowered."""
ON_CPU_ATTR = "cascade.on_cpu"
"""Discardable attribute of an `nn` operator lower-to-ethosu left to the CPU: why, in words."""
WEIGHTS_NOT_CONSTANT = "its weights or bias are not constants, which the NPU needs encoded at compile time"
"""Why an operator whose weights are function arguments runs on the CPU (as in Vela)."""


def _value_quant(value: SSAValue) -> nn.QuantAttr | None:
    """The quantization of `value`: what its nn producer writes, else what an nn reader reads
    (through stripe loops, to the operator inside)."""
    owner = value.owner
    if isinstance(owner, StripedRegionOp):
        return _value_quant(owner.yield_op.values[0])
    if isinstance(owner, nn.NNOperation) and (quant := owner.result_quant()) is not None:
        return quant
    for use in value.uses:
        reader = use.operation
        if isinstance(reader, StripedRegionOp):
            for arg, operand in zip(reader.input_args, reader.inputs, strict=True):
                if operand is value and (quant := _value_quant(arg)) is not None:
                    return quant
        elif isinstance(reader, nn.NNOperation):
            for operand, quant, _ in reader.quantized_operands():
                if operand is value:
                    return quant
    return None


def _record_argument_quantization(function: FuncOp) -> None:
    """Give every function argument an `nn.quant` argument attribute when its readers say it."""
    quants = {index: quant for index, arg in enumerate(function.args) if (quant := _value_quant(arg)) is not None}
    set_arg_attrs(function, QUANT_ATTR, quants)


class _Relower(Exception):
    """A bare operator with bricked tensors fell back to the CPU: lower again with them NHWC."""


def _segments(
    units: Sequence[Operation],
    stores: dict[SSAValue, PlacementAttr],
    constants: dict[SSAValue, np.ndarray],
    context: _LoopContext,
    accelerator: str,
    fc_on_npu: bool,
) -> tuple[list[tuple[list[Operation], _Segment]], dict[SSAValue, PlacementAttr]]:
    """The NPU segments of `units` (maximal runs of NPU steps) with their commands, and where
    every step's result lives."""
    from cascade.passes.memory_check import PREFETCH_ATTR

    segments: list[tuple[list[Operation], _Segment]] = []
    current: tuple[list[Operation], _Segment] | None = None
    previous_start: int | None = None  # where the previous step's commands begin, same segment
    for unit in units:
        placement = get_placement(unit)
        if placement is None:
            raise ValueError(f"{unit.name} has no placement")
        cpu_reason = _cpu_reason(unit, fc_on_npu, constants) if isinstance(unit, nn.NNOperation) else None
        if isinstance(unit, StripedRegionOp):
            for member in unit.body.block.ops:
                if isinstance(member, nn.NNOperation) and (why := _cpu_reason(member, fc_on_npu, constants)):
                    raise ValueError(f"{describe_op(member)} inside a stripe loop has no NPU lowering: {why}")
        lone_stripes = None
        if cpu_reason is None and isinstance(unit, nn.NNOperation):
            segment = current[1] if current is not None else _Segment(accelerator, context.regions)
            lowered = _lower_lone(unit, placement, stores, constants, segment, context.layouts)
            if isinstance(lowered, str):
                cpu_reason = lowered
                if context.layouts.unbrick([*unit.operands, *unit.results]):
                    raise _Relower
            else:
                lone_stripes = lowered
        if cpu_reason is not None:
            # The report and a reader of the IR see why it was not lowered.
            unit.attributes[ON_CPU_ATTR] = StringAttr(cpu_reason)
            current, previous_start = None, None
            stores[unit.results[0]] = placement
            continue
        if current is None:
            current = ([], segment if lone_stripes is not None else _Segment(accelerator, context.regions))
            segments.append(current)
        current[0].append(unit)
        segment = current[1]
        start = len(segment.commands)
        if isinstance(unit, StripedRegionOp):
            _lower_loop(unit, placement, stores, constants, segment, context)
        else:
            for stripe in lone_stripes or []:
                segment.commands.extend(stripe.commands)
        if PREFETCH_ATTR in unit.attributes and previous_start is not None:
            # The hoisted copies now precede the previous step: this step starts after them.
            start += _hoist_weight_copies(segment, start, previous_start)
        previous_start = start
        stores[unit.results[0]] = placement
    return segments, stores


def _hoist_weight_copies(segment: _Segment, start: int, previous_start: int) -> int:
    """Move the weight copies among the step's commands (from `start` on) to the start of the
    previous step's, so that the DMA runs while the previous step computes, as the plan
    counted (`cascade.prefetch`). The allocator kept the weight buffer out of every buffer of
    the previous step; Vela's stream generator makes the kernels that read the weights wait
    for the copy, and the copy wait for any kernel still using that SRAM. Returns how many
    copies moved."""
    commands = segment.commands
    step = commands[start:]
    copies = [c for c in step if c in segment.weight_copies]
    rest = [c for c in step if c not in segment.weight_copies]
    commands[previous_start:] = copies + commands[previous_start:start] + rest
    return len(copies)


def _activations(op: Operation, constants: dict[SSAValue, np.ndarray]) -> list[SSAValue]:
    return [v for v in op.operands if v not in constants]


def _lower_lone(
    op: nn.NNOperation,
    placement: PlacementAttr,
    stores: dict[SSAValue, PlacementAttr],
    constants: dict[SSAValue, np.ndarray],
    segment: _Segment,
    layouts: _Layouts,
) -> list[LoweredStripe] | str:
    """The stripes of a bare operator (its whole output), or why it has no NPU lowering (it
    then runs on the CPU)."""
    from cascade.ethos_u.npu_lowering import NpuLoweringError

    activations = _activations(op, constants)
    for value in activations:
        if value not in stores:
            return f"operand #{op.operands.index(value)} has no placement the NPU can read"
    placements = [_placement(v, stores[v], layouts, segment.regions) for v in activations]
    placements.append(_placement(op.results[0], placement, layouts, segment.regions))
    try:
        return segment.lower(
            op, placements, None, constants, sram_weights=_weights_placement(op), slice_depth=_slice_depth(op)
        )
    except NpuLoweringError as error:
        return str(error).removeprefix(f"{describe_op(op)}: ")


@dataclass
class _LoopContext:
    """The planner's view of the function: operator indices and step geometry."""

    graph: ProgramGraph
    index: dict[Operation, int]
    steps: list
    layouts: _Layouts
    regions: NpuRegions

    @staticmethod
    def build(function: FuncOp) -> _LoopContext:
        from cascade.ethos_u.estimate import choose_layouts
        from cascade.ethos_u.performance import Layout
        from cascade.passes.cascade_plan import scheduled_program
        from cascade.passes.planner.program import ProgramGraph
        from cascade.passes.rolling_buffer import group_view

        view, origin = group_view(function)
        scheduled = scheduled_program(view)
        graph = ProgramGraph.build(scheduled.program)
        index = {origin[o]: i for i, o in enumerate(scheduled.nn_ops)}
        linear = {name for name, layout in choose_layouts(scheduled.program).items() if layout == Layout.NHWC}
        bricked: set[SSAValue] = set()
        for op, i in index.items():
            value = op.results[0]
            if graph.ops[i].output.name in linear or len(_shape(value)) != 4:
                continue
            if _data_type(value) == ethosu.DataType.INT8:
                bricked.add(value)
        aliases: dict[SSAValue, SSAValue] = {}
        for loop in function.body.block.ops:
            if isinstance(loop, StripedRegionOp):
                aliases.update(zip(loop.input_args, loop.inputs, strict=True))
                aliases[loop.results[0]] = loop.yield_op.values[0]
                for member in loop.body.block.ops:
                    if isinstance(member, RollingBufferOp):
                        aliases[member.result] = member.operands[0]
        return _LoopContext(
            graph, index, list(scheduled.steps), _Layouts(bricked, aliases), NpuRegions.of_function(function)
        )


def _lower_loop(
    loop: StripedRegionOp,
    placement: PlacementAttr,
    stores: dict[SSAValue, PlacementAttr],
    constants: dict[SSAValue, np.ndarray],
    segment: _Segment,
    context: _LoopContext,
) -> None:
    """Commands of every stripe of `loop`, interleaved in the schedule's order."""
    from cascade.ethos_u.npu_lowering import Box, NpuLoweringError
    from cascade.passes.planner.stripes import CascadeGeometry

    members = [o for o in loop.body.block.ops if isinstance(o, nn.NNOperation)]
    first = context.index[members[0]]
    step = next(s for s in context.steps if s.first == first)
    geometry = CascadeGeometry.build(context.graph, step.first, step.sink, step.config, step.recompute)
    local: dict[SSAValue, Placement] = {}
    loop_constants = dict(constants)
    for arg, operand in zip(loop.input_args, loop.inputs, strict=True):
        if operand in constants:
            loop_constants[arg] = constants[operand]
        else:
            local[arg] = _placement(operand, stores[operand], context.layouts, context.regions)
    sink = loop.yield_op.values[0]
    recompute: dict[SSAValue, tuple[Operation, PlacementAttr, tuple[int, ...]]] = {}
    for member in members:
        value = member.results[0]
        if value is sink:
            local[value] = _placement(value, placement, context.layouts, context.regions)
            continue
        stripe = get_stripe(member)
        buffers = [u.operation for u in value.uses if isinstance(u.operation, RollingBufferOp)]
        if stripe is None:
            raise NpuLoweringError(f"{member.name} in a stripe loop has no cascade.stripe")
        if stripe.get_mode() != BufferMode.ROLLING:
            attr = get_placement(member)
            if attr is None:
                raise NpuLoweringError(f"the recompute buffer of {member.name} has no placement")
            recompute[value] = (member, attr, tuple(stripe.get_shape()))
            continue
        if not buffers:
            raise NpuLoweringError(f"{member.name}: a rolling intermediate without cascade.rolling_buffer")
        buffer = buffers[0]
        if buffer.rolling_axis() not in (1, 2):
            raise NpuLoweringError(
                f"{describe_op(member)}: its result rolls along axis {buffer.rolling_axis()}; the NPU's tiles wrap "
                "rows (axis 1) or columns (axis 2)"
            )
        if buffer.placement is None:
            raise NpuLoweringError(f"the rolling buffer of {member.name} has no placement")
        local[value] = _placement(value, buffer.placement, context.layouts, context.regions, buffer)
        local[buffer.result] = local[value]

    def placements_at(member: Operation, stripe_index: tuple[int, ...]) -> list[Placement]:
        """The placements `member` sees at a stripe: a recompute buffer holds the box its
        consumers require at that stripe from its origin (`interpreter.scheduled`), expressed
        as a placement of the stripe-shaped storage shifted by that origin."""
        result = []
        for value in [*_activations(member, loop_constants), member.results[0]]:
            if value not in recompute:
                result.append(local[value])
                continue
            producer, attr, shape = recompute[value]
            required = geometry.required_box(context.index[producer], stripe_index)
            if required is None:
                raise NpuLoweringError(f"{producer.name}: no required box at stripe {stripe_index}")
            origin = required.offset
            stored = _placement_shape(value, attr, shape, context.layouts, context.regions)
            # The origin's byte offset as the buffer's layout lays it out: in NHCWB16 a channel
            # stripe starts on a 16-channel brick (channel 32 of a 7-wide buffer: 2 bricks of
            # 7 x 16 bytes), which `column_offset` checks.
            y, x, c = (origin[1], origin[2], origin[3]) if len(origin) == 4 else (origin[0], 0, origin[1])
            try:
                column = stored.column_offset(x, c)
            except NpuLoweringError as error:
                raise NpuLoweringError(f"{describe_op(producer)}: its stripe at {list(origin)}: {error}") from None
            result.append(_shifted(stored, -(y * stored.strides[0] + column)))
        return result

    # Boxes per member, in stripe order; the order of (stripe, member) pairs is the schedule.
    boxes: dict[Operation, list[Box]] = {m: [] for m in members}
    views: dict[Operation, list[list[Placement]]] = {m: [] for m in members}
    order: list[Operation] = []
    for stripe_index in geometry.stripe_indices():
        for member in members:
            region = geometry.computed_box(context.index[member], stripe_index)
            if region is None:
                continue
            box = _kept_in(local.get(member.results[0]), Box.from_region(region))
            boxes[member].append(box)
            views[member].append(placements_at(member, stripe_index))
            order.append(member)
    lowered = {}
    for member in members:
        if all(v == views[member][0] for v in views[member]):
            lowered[member] = iter(
                segment.lower(
                    member, views[member][0], boxes[member], loop_constants, sram_weights=_weights_placement(member)
                )
            )
            continue
        stripes = []
        for box, view in zip(boxes[member], views[member], strict=True):
            stripes.extend(segment.lower(member, view, [box], loop_constants, reuse=True))
        lowered[member] = iter(stripes)
    for member in order:
        segment.commands.extend(next(lowered[member]).commands)


def _weights_placement(op: Operation) -> PlacementAttr | None:
    """The SRAM placement of `op`'s weights (`cascade.weights_placement`), if any."""
    from cascade.passes.memory_check import WEIGHTS_PLACEMENT_ATTR

    attr = op.attributes.get(WEIGHTS_PLACEMENT_ATTR)
    return attr if isinstance(attr, PlacementAttr) else None


def _slice_depth(op: Operation) -> int:
    """Output channels per weight slice of an operator planned alone with double-buffered
    weights (`cascade.weight_slice_depth`), 0 if its weights are not sliced."""
    from cascade.passes.cascade_plan import SLICE_DEPTH_ATTR

    attr = op.attributes.get(SLICE_DEPTH_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else 0


def _kept_in(placement: Placement | None, box: Box) -> Box:
    """The part of `box` a rolling `placement` ends up holding: a box longer than the ring
    along its rolling axis (a stride larger than the window computes rows or columns the
    consumer never reads) keeps its last k, as `interpreter.scheduled` does."""
    from cascade.ethos_u.npu_lowering import Box

    if placement is None:
        return box
    rows, columns = placement.rolling_rows, placement.rolling_columns
    if rows is not None and box.height > rows:
        return Box(box.y + box.height - rows, box.x, box.c, rows, box.width, box.depth)
    if columns is not None and box.width > columns:
        return Box(box.y, box.x + box.width - columns, box.c, box.height, columns, box.depth)
    return box


def _placement_shape(
    value: SSAValue, attr: PlacementAttr, shape: Sequence[int], layouts: _Layouts, regions: NpuRegions
) -> Placement:
    """A placement of `value` stored in a buffer of (storage) `shape`."""
    from cascade.ethos_u.npu_lowering import Placement, hwc_shape

    return Placement(regions.of(attr), attr.get_offset(), hwc_shape(shape), layouts.of(value), None, _data_type(value))


def _shifted(placement: Placement, delta: int) -> Placement:
    import dataclasses

    return dataclasses.replace(placement, address=placement.address + delta)


# --------------------------------------------------------------------------- #
# Execution of the lowered form
# --------------------------------------------------------------------------- #


def _dtype(value: SSAValue) -> np.dtype:
    from cascade.interpreter.constants import InterpretationError

    element = value.type.get_element_type() if isinstance(value.type, TensorType) else None
    if not isinstance(element, IntegerType) or element.width.data not in (8, 16, 32):
        raise InterpretationError(f"lowered IR holds int8, int16 and int32 tensors in memory, not {value.type}")
    return np.dtype(f"<i{element.width.data // 8}")


def _int_attr(function: FuncOp, name: str) -> int:
    from cascade.interpreter.constants import InterpretationError

    attr = function.attributes.get(name)
    if not isinstance(attr, IntegerAttr):
        raise InterpretationError(f"@{function.sym_name.data} has no integer {name} (lowered by lower-to-ethosu?)")
    return attr.value.data


def _tensor_location(value: SSAValue) -> LocationAttr:
    """The location of the operator computing `value` (through a stripe loop, its sink's)."""
    owner = value.owner
    if isinstance(owner, StripedRegionOp):
        return _tensor_location(owner.yield_op.values[0])
    assert isinstance(owner, Operation)
    return owner.location


def run_lowered(module: ModuleOp, inputs: Sequence[np.ndarray], poison: int = 0xA5) -> list[np.ndarray]:
    """The outputs of `execute_lowered`."""
    return execute_lowered(module, inputs, poison).outputs


def execute_lowered(module: ModuleOp, inputs: Sequence[np.ndarray], poison: int = 0xA5) -> ProgramRun:
    """Execute the lowered `@main` (module doc): command streams serialized by Vela and run by
    the functional model over one SRAM image (and one DRAM image, region 1, when the function
    spills: SRAM is then region 2), CPU operators with the `nn` interpreter. The run's values
    are the arguments, the tensors the CPU reads from the NPU's memory (`read_from_npu`) and
    what the CPU operators compute."""
    from xdsl.interpreter import Interpreter

    from cascade.ethos_u.serialize import command_stream_words
    from cascade.interpreter.constants import InterpretationError
    from cascade.interpreter.ethosu import EthosUMachine, FunctionalModelError
    from cascade.interpreter.nn import NNFunctions, ProgramRun, constant_array, main_function
    from cascade.passes.memory_check import ALLOCATED_DRAM_ATTR, ALLOCATED_PEAK_ATTR, arg_placement

    function = main_function(module)
    regions = NpuRegions.of_function(function)
    memories = {MemoryRegion.SRAM: np.full(_int_attr(function, ALLOCATED_PEAK_ATTR), poison, dtype=np.uint8)}
    npu_memories = {regions.sram: memories[MemoryRegion.SRAM]}
    if regions.spilling:
        memories[MemoryRegion.DRAM] = np.full(_int_attr(function, ALLOCATED_DRAM_ATTR), poison, dtype=np.uint8)
        npu_memories[SCRATCH_REGION] = memories[MemoryRegion.DRAM]
    values: dict[SSAValue, np.ndarray] = {}

    def placed(value: SSAValue, attr: PlacementAttr, size: int) -> slice:
        memory = memories.get(attr.get_region())
        start = attr.get_offset()
        if memory is None or start + size > memory.size:
            where = f"{attr.get_region().name} of {memory.size} bytes" if memory is not None else "no memory"
            raise InterpretationError(f"{value.type} placed at [{start}, {start + size}) lies outside the {where}")
        return slice(start, start + size)

    def store(value: SSAValue, attr: PlacementAttr, array: np.ndarray) -> None:
        data = np.ascontiguousarray(array, dtype=_dtype(value)).view(np.uint8).reshape(-1)
        memories[attr.get_region()][placed(value, attr, data.size)] = data

    def load(value: SSAValue, attr: PlacementAttr) -> np.ndarray:
        dtype = _dtype(value)
        count = int(np.prod(_shape(value))) * dtype.itemsize
        raw = memories[attr.get_region()][placed(value, attr, count)]
        return raw.view(dtype).reshape(_shape(value)).copy()

    for index, (arg, array) in enumerate(zip(function.args, inputs, strict=True)):
        values[arg] = np.asarray(array)
        attr = arg_placement(function, index)
        if attr is not None:
            store(arg, attr, values[arg])
    interpreter = Interpreter(ModuleOp([]))
    interpreter.register_implementations(NNFunctions())
    for op in function.body.block.ops:
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
            values[op.result] = constant_array(op.value)
        elif isinstance(op, ethosu.CommandStreamOp):
            machine = EthosUMachine(op.accelerator.data, {FLASH_REGION: op.flash_image(), **npu_memories})
            try:
                machine.run_register_stream(command_stream_words(op))
            except FunctionalModelError as error:  # hand-edited streams: addresses outside memory
                raise InterpretationError(f"{_describe(op)}: the NPU cannot run it: {error}") from None
        elif isinstance(op, UnrealizedConversionCastOp):
            attr = op.attributes.get(PLACEMENT_ATTR)
            if not isinstance(attr, PlacementAttr):
                raise InterpretationError(f"{_describe(op)} loads from memory but has no {PLACEMENT_ATTR}")
            values[op.results[0]] = load(op.results[0], attr)
        elif isinstance(op, nn.NNOperation):
            result = np.asarray(interpreter.run_op(op, tuple(values[v] for v in op.operands))[0])
            values[op.results[0]] = result
            attr = get_placement(op)
            if attr is not None:
                store(op.results[0], attr, result)
        elif isinstance(op, func.ReturnOp):
            computed = {v: a for v, a in values.items() if not isinstance(v.owner, arith.ConstantOp)}
            return ProgramRun([values[v] for v in op.arguments], computed)
        else:
            raise InterpretationError(f"{_describe(op)}: lowered IR runs command streams and nn operators only")
    raise InterpretationError("@main has no return")


def _describe(op: Operation) -> str:
    """`op` for a message: its name and location (the driver's `describe_op`, without the
    tools package)."""
    from cascade.frontends.loader import format_location

    location = format_location(op.location)
    return f"{op.name} at {location}" if location else op.name


def read_from_npu(module: ModuleOp) -> list[SSAValue]:
    """The tensors the CPU reads from the NPU's memory in lowered `module` (the loads after its
    command streams): on a model whose last layers run on the CPU, they are what the NPU
    computed, and they stay informative where a saturated softmax output holds one value."""
    from cascade.interpreter.nn import main_function

    return [
        op.results[0]
        for op in main_function(module).body.block.ops
        if isinstance(op, UnrealizedConversionCastOp) and PLACEMENT_ATTR in op.attributes
    ]


def compare_lowered(original: ModuleOp, lowered: ModuleOp, inputs: Sequence[np.ndarray]) -> LoweredComparison:
    """Run `lowered` (`execute_lowered`) and `original` (`interpreter.nn`) on `inputs` and compare
    the outputs, by position, and each tensor the CPU reads from the NPU with the tensor of that
    name in `original` (its location's, `loader.tensor_name`, or its SSA name; a name two
    tensors of `original` share is not compared)."""
    from cascade.frontends.loader import tensor_name
    from cascade.interpreter.nn import run_program

    run = execute_lowered(lowered, inputs)
    reference = run_program(original, inputs)

    def names(value: SSAValue) -> list[str]:
        # IR printed without locations keeps only the SSA name, which the importer derives
        # from the TFLite name: match on either.
        return [name for name in dict.fromkeys((tensor_name(value), value.name_hint)) if name is not None]

    holders: dict[str, list[np.ndarray]] = {}
    for value, array in reference.values.items():
        for name in names(value):
            holders.setdefault(name, []).append(array)
    comparison = LoweredComparison()
    for index, (got, want) in enumerate(zip(run.outputs, reference.outputs, strict=True)):
        comparison.add(f"output {index}", got, want)
    for value in read_from_npu(lowered):
        name = next((n for n in names(value) if len(holders.get(n, ())) == 1), None)
        if name is not None:
            comparison.add(f"'{name}'", run.values[value], holders[name][0], from_npu=True)
    return comparison


@dataclass
class LoweredComparison:
    """What `compare_lowered` compared: (label, equal, informative) per tensor, outputs first."""

    outputs: list[tuple[str, bool, bool]] = field(default_factory=list)
    read: list[tuple[str, bool, bool]] = field(default_factory=list)
    """The tensors the CPU read from the NPU."""

    def add(self, label: str, got: np.ndarray, want: np.ndarray, from_npu: bool = False) -> None:
        equal = got.shape == want.shape and bool(np.array_equal(got, want))
        # One value everywhere (a saturated layer) shows little when equal.
        informative = np.unique(want).size > 1
        (self.read if from_npu else self.outputs).append((label, equal, informative))

    @property
    def mismatches(self) -> list[str]:
        return [label for label, equal, _ in self.outputs + self.read if not equal]

    @property
    def informative(self) -> int:
        """How many compared tensors hold more than one value."""
        return sum(informative for _, _, informative in self.outputs + self.read)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m cascade.passes.lower_to_ethosu LOWERED.mlir ORIGINAL.mlir [--seed N]`: run the
    lowered program (`execute_lowered`: Vela register streams on the functional model, CPU ops
    with the `nn` interpreter) and the original with `interpreter.nn` on the same random int8
    inputs (`compare_lowered`); print `npu commands: N`, `bit-exact: K/N outputs` and, when the
    CPU reads tensors from the NPU, `bit-exact: K/M tensors read from the NPU`; exit 0 only if
    all are equal and at least one of them holds more than one value."""
    import argparse

    from cascade.frontends.loader import load_module
    from cascade.interpreter.nn import input_types

    parser = argparse.ArgumentParser(prog="python -m cascade.passes.lower_to_ethosu")
    parser.add_argument("lowered")
    parser.add_argument("original")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    lowered, original = load_module(args.lowered), load_module(args.original)
    rng = np.random.default_rng(args.seed)
    inputs = [rng.integers(-128, 128, size=t.get_shape(), dtype=np.int8) for t in input_types(original)]
    comparison = compare_lowered(original, lowered, inputs)
    streams = [op for op in lowered.walk() if isinstance(op, ethosu.CommandStreamOp)]
    print(f"npu commands: {sum(len(list(s.commands)) for s in streams)} in {len(streams)} streams")
    for what, compared in (("outputs", comparison.outputs), ("tensors read from the NPU", comparison.read)):
        if compared:
            print(f"bit-exact: {sum(equal for _, equal, _ in compared)}/{len(compared)} {what}")
    for label in comparison.mismatches:
        print(f"mismatch: {label}")
    if not comparison.informative:
        print("degenerate: every tensor compared holds one value; choose another program or seed")
    return 0 if comparison.outputs and not comparison.mismatches and comparison.informative else 1


if __name__ == "__main__":
    raise SystemExit(main())
