"""`-t ethosu-tflite`: lowered IR as a deployable .tflite in Vela's output format.

    cascade-opt model.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128}' -t ethosu-tflite -o out.tflite

The input is the output of `lower-to-ethosu` (see its module docstring): one function whose
NPU work is in `ethosu.command_stream`s, with the CPU operators left as `nn` operators. The
file has one subgraph, in the order of the function's body:

* every command stream becomes one `ethos-u` CUSTOM operator (custom options `01 04 01`, the
  flexbuffer Vela writes for an NPU operator) with the inputs
  `[command stream, read-only, scratch, fast scratch, IFMs...]` and the outputs `[OFMs...]`;
  the command-stream tensor holds the COP1 driver payload (`npu_create_driver_payload`), the
  read-only tensor the stream's flash image (`ethosu.flash`; 16 zero bytes when it is empty);
* every CPU operator becomes the builtin TFLite operator it stands for
  (`frontends.tflite_export`: FULLY_CONNECTED, SOFTMAX, CONCATENATION, a convolution the NPU
  cannot take, ...), with its constants as buffers;
* the model's inputs are the function's arguments, its outputs the returned values, in order.

A function lowering left wholly to the CPU (batch 2, say) has no custom operator and no scratch
tensor: its builtins only, as Vela writes such a model, each tensor at its allocated offset (or
placed by TFLite Micro, in a function that was never allocated because it has no operator).

Regions. The TFLite Micro Ethos-U kernel binds the operator's inputs after the command stream,
then its outputs, to consecutive base-pointer regions: region 0 = read-only (flash), region 1 =
scratch, region 2 = fast scratch, regions 3... = the IFMs then the OFMs. Unless the function
spills (below), our streams address only region 0 (their own flash image) and region 1 (the
SRAM image of `cascade.allocated_peak_bytes` bytes in which every tensor lives at its allocated
offset), as Vela's do in its Shared_Sram mode. So:

* one `scratch` tensor of exactly `cascade.allocated_peak_bytes` bytes is region 1 of every
  custom operator, and also its fast scratch (Vela passes the same tensor twice on Ethos-U55;
  on Ethos-U65 in Dedicated_Sram the planner always spills the tensors TFLite sees, so the
  form below applies there);
* each custom operator has its own read-only tensor (region-0 addresses start at 0 in every
  stream; Vela shares one and offsets the addresses);
* nothing is copied in or out: the `OfflineMemoryAllocation` metadata (Vela's format: version
  0, 1 subgraph, the tensor count, then one arena offset per tensor, -1 for TFLite Micro to
  plan) places the scratch tensor at arena offset 0 and every tensor with a
  `cascade.placement` (model inputs and outputs, values crossing between CPU and NPU
  operators, CPU operator results) at its placement offset, that is inside the scratch tensor
  exactly where the streams read and write it. The IFMs and OFMs a custom operator lists are
  therefore the same bytes region 1 addresses; regions 3+ are bound but unused.

Spilled tensors (a function with `cascade.allocated_dram_bytes`, Ethos-U65's Dedicated_Sram):
the streams address the DRAM arena as region 1 and the SRAM as region 2 (`lower_to_ethosu`).
Then `scratch` is the DRAM arena, exactly `cascade.allocated_dram_bytes` bytes at arena offset
0, in which every tensor TFLite sees (model inputs and outputs, values crossing between CPU and
NPU operators) lies at its DRAM placement (the planner spills all of them: one in SRAM is an
error), and a separate `scratch_fast` tensor of `cascade.allocated_peak_bytes` bytes is region
2. The ethos-u driver points region 2 at its fast memory (the SRAM) when it has one; for the
file to run without one too, `scratch_fast` gets its own bytes of the arena, right after
`scratch` (Vela places it at offset 0 and relies on the driver).

IFMs of a stream: the values (arguments, CPU results, values an earlier stream left in SRAM)
whose bytes the stream reads before it writes them, found by replaying its commands' feature
map addresses. OFMs: the values `lower-to-ethosu` loads back from SRAM after the stream.

Quantization is taken from the `nn` operators where one reads or produces the value, else from
the stream commands whose feature-map quantization is the tensor's own (convolutions,
elementwise operations without a table lookup, fused-quantize pooling); the lowering programs
other commands (plain pooling, pad copies, resizes) with zero point 0, so they are not used.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Operation, SSAValue

from cascade.dialects import ethosu, nn
from cascade.dialects.cascade import MemoryRegion, PlacementAttr, get_placement
from cascade.frontends.loader import tensor_name
from cascade.frontends.tflite_export import Quantization
from cascade.passes.planner.placement import align

__all__ = ["NPU_CUSTOM_OPTIONS", "OFFLINE_ALLOCATION", "TFLiteOutputError", "lowered_tflite"]

CUSTOM_CODE = "ethos-u"
NPU_CUSTOM_OPTIONS = bytes([0x01, 0x04, 0x01])
"""The custom options of an `ethos-u` operator: the flexbuffer of the unsigned integer 1."""

OFFLINE_ALLOCATION = "OfflineMemoryAllocation"
DESCRIPTION = "cascade-opt Ethos-U"
EMPTY_FLASH = bytes(16)

_DTYPES = {8: "int8", 16: "int16", 32: "int32"}


class TFLiteOutputError(ValueError):
    """The IR cannot be written as an Ethos-U .tflite (not lowered, unsupported CPU operator)."""


# --------------------------------------------------------------------------- #
# The program: steps of the lowered function
# --------------------------------------------------------------------------- #


@dataclass
class _NpuCall:
    """One command stream: the values it reads from and leaves in SRAM."""

    stream: ethosu.CommandStreamOp
    inputs: list[SSAValue] = field(default_factory=list)
    outputs: list[SSAValue] = field(default_factory=list)


@dataclass
class _Program:
    function: func.FuncOp
    peak: int
    """SRAM bytes: the scratch (region 1), or the fast scratch (region 2) when `dram` is set."""
    steps: list[_NpuCall | nn.NNOperation]
    placements: dict[SSAValue, PlacementAttr]
    results: list[SSAValue]
    quant_sources: dict[SSAValue, list[ethosu.QuantizationAttr]] = field(default_factory=dict)
    dram: int | None = None
    """DRAM arena bytes of a function that spills (region 1), else None."""

    @property
    def arena(self) -> MemoryRegion:
        """The memory of the tensor arena, where every tensor TFLite sees lives."""
        return MemoryRegion.SRAM if self.dram is None else MemoryRegion.DRAM

    @property
    def scratch(self) -> int:
        """Bytes of the scratch tensor (region 1)."""
        return self.peak if self.dram is None else self.dram

    def region_sizes(self) -> dict[int, int]:
        """Bytes of each scratch region the streams may address."""
        from cascade.passes.lower_to_ethosu import SCRATCH_FAST_REGION, SCRATCH_REGION

        sizes = {SCRATCH_REGION: self.scratch}
        if self.dram is not None:
            sizes[SCRATCH_FAST_REGION] = self.peak
        return sizes


def _lowered_function(module: ModuleOp) -> func.FuncOp:
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    if len(functions) != 1:
        raise TFLiteOutputError(f"expected one function with a body, found {len(functions)}")
    return functions[0]


def _describe(op: Operation) -> str:
    from cascade.passes.lower_to_ethosu import describe_op

    return describe_op(op)


def _weight_reader(function: func.FuncOp, index: int) -> tuple[str, Operation] | None:
    """("weights" or "bias", the operator) when argument `index` is an operator's parameter."""
    for use in function.args[index].uses:
        reader = use.operation
        if isinstance(reader, nn.ConvolutionOperation | nn.FullyConnectedOp) and use.index > 0:
            return ("weights" if use.index == 1 else "bias"), reader
    return None


def _unplaced_argument(function: func.FuncOp, index: int) -> str:
    """Why argument `index` has no placement, as far as its readers tell."""
    if (reader := _weight_reader(function, index)) is not None:
        role, op = reader
        return (
            f"argument #{index} is the {role} of {_describe(op)}: a .tflite needs an operator's "
            "weights and bias as constants (arith.constant)"
        )
    return f"argument #{index} has no cascade.placement"


def _lowered_or_empty(function: func.FuncOp) -> bool:
    """Whether every `nn` operator of `function` is one lower-to-ethosu left on the CPU (none
    at all for a function that only returns its arguments)."""
    from cascade.passes.lower_to_ethosu import ON_CPU_ATTR

    return all(ON_CPU_ATTR in op.attributes for op in function.body.block.ops if isinstance(op, nn.NNOperation))


def _program(module: ModuleOp) -> _Program:
    """The steps of the lowered function, checking it is the output of lower-to-ethosu."""
    from cascade.passes.memory_check import ALLOCATED_DRAM_ATTR, ALLOCATED_PEAK_ATTR, arg_placement

    function = _lowered_function(module)
    name = f"@{function.sym_name.data}"
    peak_attr = function.attributes.get(ALLOCATED_PEAK_ATTR)
    streams = any(isinstance(op, ethosu.CommandStreamOp) for op in function.body.block.ops)
    if peak_attr is None and (streams or not _lowered_or_empty(function)):
        raise TFLiteOutputError(f"{name} is not allocated: run ethosu-pipeline (or lower-to-ethosu) first")
    # Without a command stream, TFLite Micro may place every tensor itself: no scratch, and
    # only the offsets the allocation gave.
    peak = int(peak_attr.value.data) if peak_attr is not None else 0  # type: ignore[attr-defined]
    dram_attr = function.attributes.get(ALLOCATED_DRAM_ATTR)
    dram = int(dram_attr.value.data) if dram_attr is not None else None  # type: ignore[attr-defined]
    arena = MemoryRegion.SRAM if dram is None else MemoryRegion.DRAM
    placements: dict[SSAValue, PlacementAttr] = {}
    for index, arg in enumerate(function.args):
        attr = arg_placement(function, index)
        if attr is None and (streams or _weight_reader(function, index) is not None):
            raise TFLiteOutputError(f"{name}: {_unplaced_argument(function, index)}")
        if attr is not None:
            placements[arg] = _in_arena(attr, arena, f"{name}: argument #{index}")
    steps: list[_NpuCall | nn.NNOperation] = []
    results: list[SSAValue] = []
    for op in function.body.block.ops:
        if isinstance(op, ethosu.CommandStreamOp):
            steps.append(_NpuCall(op))
        elif isinstance(op, UnrealizedConversionCastOp) and not op.operands:
            if not steps or not isinstance(steps[-1], _NpuCall):
                raise TFLiteOutputError(f"{name}: a load from memory does not follow a command stream")
            placements[op.results[0]] = _placement_of(op, name, arena)
            steps[-1].outputs.append(op.results[0])
        elif isinstance(op, nn.NNOperation):
            if streams or get_placement(op) is not None:
                placements[op.results[0]] = _placement_of(op, name, arena)
            steps.append(op)
        elif isinstance(op, func.ReturnOp):
            results = list(op.operands)
        elif not isinstance(op, arith.ConstantOp):
            raise TFLiteOutputError(
                f"{name}: {_describe(op)} is not lowered: run ethosu-pipeline (or lower-to-ethosu) first"
            )
    program = _Program(function, peak, steps, placements, results, dram=dram)
    for value, attr in placements.items():
        if attr.get_offset() + _byte_size(value) > program.scratch:
            raise TFLiteOutputError(
                f"{name}: '{_value_name(value)}' lies outside the {program.scratch}-byte {arena.value.upper()} image"
            )
    return program


def _placement_of(op: Operation, function_name: str, arena: MemoryRegion) -> PlacementAttr:
    attr = get_placement(op)
    if attr is None:
        raise TFLiteOutputError(
            f"{function_name}: {_describe(op)} has no cascade.placement: run ethosu-pipeline (or lower-to-ethosu) first"
        )
    # A load has no name of its own: name the value it loads.
    what = (
        f"the load of '{_value_name(op.results[0])}'" if isinstance(op, UnrealizedConversionCastOp) else _describe(op)
    )
    return _in_arena(attr, arena, f"{function_name}: {what}")


def _in_arena(attr: PlacementAttr, arena: MemoryRegion, what: str) -> PlacementAttr:
    """`attr`, if it lies in the tensor arena: SRAM, or DRAM for a function that spills (TFLite
    and the CPU see only the arena; the fast scratch is the NPU's)."""
    if attr.get_region() != arena:
        spills = " (the function spills: TFLite sees only the DRAM arena)" if arena == MemoryRegion.DRAM else ""
        raise TFLiteOutputError(f"{what} is placed in {attr.get_region().value}, not {arena.value.upper()}{spills}")
    return attr


def _tensor_type(value: SSAValue) -> TensorType:
    if not isinstance(value.type, TensorType):
        raise TFLiteOutputError(f"'{_value_name(value)}' is not a tensor")
    return value.type


def _element_bits(value: SSAValue) -> int:
    element = _tensor_type(value).get_element_type()
    if not isinstance(element, IntegerType) or element.width.data not in _DTYPES:
        raise TFLiteOutputError(f"'{_value_name(value)}' has element type {element}; expected i8, i16 or i32")
    return element.width.data


def _byte_size(value: SSAValue) -> int:
    return int(np.prod(_tensor_type(value).get_shape())) * _element_bits(value) // 8


def _value_name(value: SSAValue) -> str:
    """The TFLite tensor name: the location the importer gave it, else the IR name."""
    return tensor_name(value) or "tensor"


# --------------------------------------------------------------------------- #
# What each stream reads and writes in the scratch (region 1, where TFLite's tensors are)
# --------------------------------------------------------------------------- #


Bytes = slice | np.ndarray
"""Bytes of the scratch as an index into a byte array: a slice where they are one range (most
feature maps: on mbv2_100_224, 86 % of the bytes traced), else every address."""


def _fm_bytes(fm: ethosu.FeatureMapAttr) -> Bytes:
    from cascade.interpreter.ethosu import feature_map_addresses, feature_map_span

    if (span := feature_map_span(fm)) is not None:
        return slice(*span)
    first = feature_map_addresses(fm).reshape(-1)
    size = fm.element_size
    if size == 1:
        return first
    return (first[:, None] + np.arange(size)[None, :]).reshape(-1)


def _range_bytes(attr: ethosu.AddressRangeAttr) -> Bytes:
    return slice(attr.address, attr.address + attr.length)


def _is_fill(command: ethosu.EthosUCommand) -> bool:
    """A multiplication by the scalar 0: the result does not depend on the IFM's bytes."""
    return (
        isinstance(command, ethosu.ElementwiseOp)
        and command.kind.data == ethosu.ElementwiseKind.MUL
        and command.ifm2_scalar is not None
        and command.ifm2_scalar.value.data == 0.0
    )


def _reads(command: ethosu.EthosUCommand) -> list[tuple[Bytes, str | None]]:
    """The scratch bytes `command` reads, each with the name of its feature map when that
    map has a quantization and it is the tensor's own."""
    if isinstance(command, ethosu.DmaOp):
        return [(_range_bytes(command.src), None)] if command.src.region == ethosu_scratch() else []
    reads: list[tuple[Bytes, str | None]] = []
    exact = isinstance(command, ethosu.Conv2DOp | ethosu.DepthwiseConv2DOp | ethosu.ElementwiseOp) or (
        isinstance(command, ethosu.PoolingOp) and command.fused_quantize is not None
    )
    maps = [("ifm", command.ifm)]
    if isinstance(command, ethosu.ElementwiseOp) and command.ifm2 is not None:
        maps.append(("ifm2", command.ifm2))
    if not _is_fill(command):
        for name, fm in maps:
            if fm.region.data == ethosu_scratch():
                given = exact and fm.quantization_or_none is not None
                reads.append((_fm_bytes(fm), name if given else None))
    for attr in [*command.weight_ranges, *command.bias_ranges]:
        if attr.region == ethosu_scratch():
            reads.append((_range_bytes(attr), None))
    return reads


def _write(command: ethosu.EthosUCommand) -> tuple[Bytes, str | None] | None:
    """The scratch bytes `command` writes, with "ofm" when the OFM has a quantization and it
    is the tensor's own."""
    if isinstance(command, ethosu.DmaOp):
        return (_range_bytes(command.dest), None) if command.dest.region == ethosu_scratch() else None
    if command.ofm.region.data != ethosu_scratch():
        return None
    exact = isinstance(command, ethosu.Conv2DOp | ethosu.DepthwiseConv2DOp) or (
        isinstance(command, ethosu.PoolingOp) and command.fused_quantize is not None
    )
    if isinstance(command, ethosu.ElementwiseOp):
        activation = command.activation
        exact = activation is None or activation.kind.data != ethosu.ActivationKind.TABLE_LOOKUP
    given = exact and command.ofm.quantization_or_none is not None
    return _fm_bytes(command.ofm), "ofm" if given else None


def ethosu_scratch() -> int:
    """The region of the tensor arena in lowered streams (`lower_to_ethosu.SCRATCH_REGION`)."""
    from cascade.passes.lower_to_ethosu import SCRATCH_REGION

    return SCRATCH_REGION


def _accessed(command: ethosu.EthosUCommand) -> list[tuple[int, int, int]]:
    """(region, first byte, end) of every feature map and address range `command` touches."""
    from cascade.interpreter.ethosu import feature_map_extent

    ranges: list[tuple[int, int, int]] = []
    if isinstance(command, ethosu.DmaOp):
        attrs = [command.src, command.dest]
    else:
        attrs = [*command.weight_ranges, *command.bias_ranges]
        for fm in (command.ifm, getattr(command, "ifm2", None), command.ofm):
            if isinstance(fm, ethosu.FeatureMapAttr):
                # The first bytes of the elements are enough: the last byte is the last
                # element's first plus its size less one.
                first, last = feature_map_extent(fm)
                ranges.append((fm.region.data, first, last + fm.element_size))
    ranges += [(a.region, a.address, a.address + a.length) for a in attrs]
    return ranges


def _check_regions(program: _Program, call: _NpuCall) -> None:
    """Every scratch address of the stream lies in its region's tensor; no other region but
    the read-only one and the SHRAM is addressed."""
    from cascade.passes.lower_to_ethosu import FLASH_REGION

    sizes = program.region_sizes()
    for command in call.stream.commands:
        for region, start, end in _accessed(command):
            if region in (FLASH_REGION, ethosu.SHRAM_REGION):
                continue
            if region not in sizes:
                raise TFLiteOutputError(f"a command stream addresses region {region}, which the file does not bind")
            if start < 0 or end > sizes[region]:
                raise TFLiteOutputError(
                    f"a command stream addresses byte {end - 1:#x} of region {region}, outside its "
                    f"{sizes[region]}-byte scratch"
                )


@dataclass
class _MemoryTrace:
    """What `_traced_memory` finds, in plain numbers (a forked child sends it back pickled).
    Values are numbered as `_stored_values` lists them."""

    inputs: list[list[int]] = field(default_factory=list)
    """Per NPU call: the values it reads, ascending."""
    quantizations: list[tuple[int, int, int, str]] = field(default_factory=list)
    """Each quantization a command gives a value, in order: (value, NPU call, command index,
    feature map)."""


def _stored_values(program: _Program) -> list[SSAValue]:
    """The values in the scratch, in the order they are stored: the arguments, then what each
    step leaves."""
    values = list(program.function.args)
    for step in program.steps:
        values += step.outputs if isinstance(step, _NpuCall) else [step.results[0]]
    return values


def _trace_memory(program: _Program) -> None:
    """Fill in the IFMs of every stream and the quantizations the commands give (module doc)."""
    _apply_trace(program, _traced_memory(program))


def _apply_trace(program: _Program, trace: _MemoryTrace) -> None:
    values = _stored_values(program)
    calls = [step for step in program.steps if isinstance(step, _NpuCall)]
    for call, inputs in zip(calls, trace.inputs, strict=True):
        call.inputs = [values[index] for index in inputs]
    commands = [list(call.stream.commands) for call in calls]
    for value, call, command, name in trace.quantizations:
        quant = getattr(commands[call][command], name).quantization_or_none
        program.quant_sources.setdefault(values[value], []).append(quant)


def _traced_memory(program: _Program) -> _MemoryTrace:
    """Which values each stream reads and which quantizations its commands give them."""
    trace = _MemoryTrace()
    owner = np.full(program.scratch, -1, dtype=np.int64)
    stored = 0

    def store(value: SSAValue) -> None:
        nonlocal stored
        attr = program.placements[value]
        owner[attr.get_offset() : attr.get_offset() + _byte_size(value)] = stored
        stored += 1

    for arg in program.function.args:
        store(arg)
    for step in program.steps:
        if isinstance(step, _NpuCall):
            _check_regions(program, step)
            _trace_stream(program, step, owner, stored, trace)
            for value in step.outputs:
                store(value)
        else:
            store(step.results[0])
    return trace


def _owners(owned: np.ndarray, count: int) -> list[int]:
    """The distinct owners (0 to `count - 1`) in `owned`, ascending, ignoring -1 (no owner).
    One counting pass rather than a Python loop over every byte: a stream's first read of the
    model input alone is 150,528 bytes on mbv2_100_224."""
    return np.flatnonzero(np.bincount(owned + 1, minlength=count + 1)[1:]).tolist()


def _trace_stream(program: _Program, call: _NpuCall, owner: np.ndarray, stored: int, trace: _MemoryTrace) -> None:
    """Trace one stream: `stored` values are in the scratch before it, the next ones are its
    outputs."""
    number = len(trace.inputs)
    written = np.zeros(program.scratch, dtype=bool)
    read_ids: set[int] = set()
    writes: list[tuple[Bytes, int, str]] = []
    for index, command in enumerate(call.stream.commands):
        for addresses, name in _reads(command):
            # The owners of the bytes not written by this stream before.
            for value in _owners(owner[addresses][~written[addresses]], stored):
                read_ids.add(value)
                if name is not None:
                    trace.quantizations.append((value, number, index, name))
        if (write := _write(command)) is not None:
            addresses, name = write
            written[addresses] = True
            if name is not None:
                writes.append((addresses, index, name))
    trace.inputs.append(sorted(read_ids))
    owner[written] = -1
    for output, value in enumerate(call.outputs):
        start = program.placements[value].get_offset()
        span = np.zeros(program.scratch, dtype=bool)
        span[start : start + _byte_size(value)] = True
        # The last write that gives a quantization is the value's producer.
        for addresses, index, name in reversed(writes):
            if span[addresses].any():
                trace.quantizations.append((stored + output, number, index, name))
                break


# --------------------------------------------------------------------------- #
# Quantization
# --------------------------------------------------------------------------- #


def _quantization(program: _Program, value: SSAValue) -> nn.QuantAttr:
    """The value's quantization: from an `nn` operator or what lower-to-ethosu recorded on a
    load or argument (`nn.quant`), else from the stream commands."""
    from xdsl.dialects.builtin import DictionaryAttr
    from xdsl.ir import Block, BlockArgument

    from cascade.passes.lower_to_ethosu import QUANT_ATTR

    owner = value.owner
    if isinstance(owner, nn.NNOperation) and (quant := owner.result_quant()) is not None:
        return quant
    if isinstance(owner, Operation) and isinstance(recorded := owner.attributes.get(QUANT_ATTR), nn.QuantAttr):
        return recorded
    function = owner.parent_op() if isinstance(value, BlockArgument) and isinstance(owner, Block) else None
    arg_attrs = getattr(function, "arg_attrs", None)
    if arg_attrs is not None and isinstance(value, BlockArgument):
        attrs = arg_attrs.data[value.index]
        if isinstance(attrs, DictionaryAttr) and isinstance(recorded := attrs.data.get(QUANT_ATTR), nn.QuantAttr):
            return recorded
    for use in value.uses:
        if isinstance(use.operation, nn.NNOperation):
            for operand, quant, _ in use.operation.quantized_operands():
                if operand is value:
                    return quant
    for source in program.quant_sources.get(value, []):
        if source.scale_value is not None:
            return nn.QuantAttr(source.scale_value, source.zero_point.data)
    raise TFLiteOutputError(
        f"cannot recover the quantization of '{_value_name(value)}': no nn operator or NPU command "
        "that carries it reads or writes it"
    )


# --------------------------------------------------------------------------- #
# Writing
# --------------------------------------------------------------------------- #


class _Writer:
    """Tensors and operators of the output model, through `ModelBuilder`."""

    def __init__(self, program: _Program) -> None:
        from cascade.frontends.tflite_writer import ModelBuilder

        self.program = program
        self.builder = ModelBuilder()
        self.tensors: dict[SSAValue, int] = {}
        self.constants: dict[tuple[SSAValue, Quantization | None], int] = {}
        self.names: set[str] = set()
        self.offsets: list[int] = []

    def tensor(
        self,
        name: str,
        shape: Sequence[int],
        dtype: str,
        *,
        quant: nn.QuantAttr | None = None,
        data: bytes | None = None,
        offset: int = -1,
        constant_quant: Quantization | None = None,
    ) -> int:
        unique = name
        suffix = 1
        while unique in self.names:
            unique, suffix = f"{name}_{suffix}", suffix + 1
        self.names.add(unique)
        scale = zero_point = None
        axis = 0
        if constant_quant is not None:
            scale, zero_point = list(constant_quant.scales), list(constant_quant.zero_points)
            axis = constant_quant.axis
        elif quant is not None:
            scale, zero_point = list(quant.scales), list(quant.zero_points)
            axis = max(quant.channel_axis, 0)
        index = self.builder.add_tensor(
            unique, list(shape), dtype, scale=scale, zero_point=zero_point, quantized_dimension=axis, data=data
        )
        self.offsets.append(offset)
        return index

    def value(self, value: SSAValue) -> int:
        if value in self.tensors:
            return self.tensors[value]
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            return self.constant(value, None)
        index = self.tensor(
            _value_name(value),
            _tensor_type(value).get_shape(),
            _DTYPES[_element_bits(value)],
            quant=_quantization(self.program, value),
            offset=attr.get_offset() if (attr := self.program.placements.get(value)) is not None else -1,
        )
        self.tensors[value] = index
        return index

    def constant(self, value: SSAValue, quantization: Quantization | None) -> int:
        """The tensor of a constant quantized so: one per quantization (two operators may read the
        same weights with different scales)."""
        from cascade.interpreter.constants import constant_array

        key = (value, quantization)
        if key in self.constants:
            return self.constants[key]
        op = value.owner
        if not isinstance(op, arith.ConstantOp) or not isinstance(op.value, DenseIntOrFPElementsAttr):
            raise TFLiteOutputError(f"constant '{_value_name(value)}' is not a dense integer tensor")
        array = constant_array(op.value)
        index = self.tensor(
            _value_name(value),
            array.shape,
            _DTYPES[_element_bits(value)],
            constant_quant=quantization,
            data=array.astype(array.dtype.newbyteorder("<")).tobytes(),
        )
        self.constants[key] = index
        return index


def _payloads(calls: Sequence[_NpuCall]) -> list[bytes]:
    """The COP1 driver payload of every call's command stream."""
    from cascade.ethos_u.serialize import driver_payload

    # Vela prints configuration warnings on stdout; keep them out of the written file.
    with contextlib.redirect_stdout(io.StringIO()):
        return [driver_payload(call.stream) for call in calls]


MIN_COMMANDS_BESIDE = 128
"""Commands in all streams from which a forked child traces the memory while this process
generates their payloads (`parallel.beside`). Each takes 0.1 to 0.3 ms a command (Vela's register
stream generator; our tracing of the bytes each command touches); a fork costs 5 to 8 ms."""


def _traced_payloads(program: _Program) -> list[bytes]:
    """`_trace_memory(program)`, and the payloads of its calls' streams (`_payloads`), the two
    side by side on two cores when the streams are long enough to pay for a fork. Errors
    come as without the fork: the trace's (an address outside the scratch) first."""
    from cascade.parallel import beside

    calls = [step for step in program.steps if isinstance(step, _NpuCall)]
    if sum(len(call.stream.commands) for call in calls) < MIN_COMMANDS_BESIDE:
        _trace_memory(program)
        return _payloads(calls)
    # The child traces, the shorter job: a forked child runs 10 to 70 % slower than the
    # parent, copying the pages of the parent's objects it touches.
    payloads: list[bytes] = []
    failures: list[Exception] = []

    def generate() -> None:
        try:
            payloads.extend(_payloads(calls))
        except Exception as error:  # after the trace's own errors, as without the fork
            failures.append(error)

    trace = beside(lambda: _traced_memory(program), generate)
    if failures:
        raise failures[0]
    _apply_trace(program, trace)
    return payloads


def _write_npu_call(
    writer: _Writer, call: _NpuCall, index: int, scratch: int, fast_scratch: int, payload: bytes
) -> None:
    suffix = "" if index == 0 else f"_{index}"
    flash = call.stream.flash_image() or EMPTY_FLASH
    command_stream = writer.tensor(f"ethos_u_command_stream{suffix}", [len(payload)], "uint8", data=payload)
    read_only = writer.tensor(f"read_only{suffix}", [len(flash)], "uint8", data=flash)
    inputs = [command_stream, read_only, scratch, fast_scratch, *(writer.value(v) for v in call.inputs)]
    outputs = [writer.value(v) for v in call.outputs]
    writer.builder.add_operator("CUSTOM", inputs, outputs, custom_code=CUSTOM_CODE, custom_options=NPU_CUSTOM_OPTIONS)


def _write_cpu_operator(writer: _Writer, op: nn.NNOperation) -> None:
    from cascade.frontends.tflite_export import TFLiteExportError, write_operator

    try:
        write_operator(writer, op)
    except TFLiteExportError as error:
        raise TFLiteOutputError(f"{_describe(op)} runs on the CPU, and TFLite cannot express it: {error}") from None


def lowered_tflite(module: ModuleOp) -> bytes:
    """The .tflite of lowered IR (module docstring). Raises `TFLiteOutputError` on IR that is
    not the output of lower-to-ethosu or has a CPU operator the writer cannot export."""
    program = _program(module)
    calls = [step for step in program.steps if isinstance(step, _NpuCall)]
    payloads = _traced_payloads(program) if calls else []
    writer = _Writer(program)
    inputs = [writer.value(arg) for arg in program.function.args]
    # All on the CPU (as Vela writes such a model), there is no scratch: builtin operators
    # only, placed where the allocation put them, or by TFLite Micro.
    scratch = writer.tensor("scratch", [program.scratch], "uint8", offset=0) if calls else -1
    fast_scratch = scratch
    if calls and program.dram is not None:
        # Its own arena bytes after the DRAM arena: the file runs even when the driver does not
        # substitute a fast memory for region 2 (module docstring).
        fast_scratch = writer.tensor("scratch_fast", [program.peak], "uint8", offset=align(program.scratch))
    npu_calls = 0
    for step in program.steps:
        if isinstance(step, _NpuCall):
            _write_npu_call(writer, step, npu_calls, scratch, fast_scratch, payloads[npu_calls])
            npu_calls += 1
        else:
            _write_cpu_operator(writer, step)
    outputs = [writer.value(v) for v in program.results]
    if any(offset >= 0 for offset in writer.offsets):
        # Vela's format: version 0, one subgraph, the tensor count, then the offsets.
        allocation = np.asarray([0, 1, len(writer.offsets), *writer.offsets], dtype="<i4")
        writer.builder.add_metadata(OFFLINE_ALLOCATION, allocation.tobytes())
    return writer.builder.build(inputs, outputs, description=DESCRIPTION)
