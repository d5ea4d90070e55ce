"""Build the planner's view (`OpInfo`, `TensorInfo`) from `nn` IR.

This is the one place where the planner side touches IR. Every `nn` operator becomes an
`OpInfo` whose `attributes` carry its parameters as plain Python values, enough for any target's
cost model to price it without looking at IR:

* all ops: `operands` (for each nn operand in order, `("input", i)` or `("weight", j)` into
  `inputs`/`weights`), `macs`, `location` (the TFLite output tensor name when imported),
  `source` (`file:line:col` of the operation when parsed from MLIR text);
* windows (conv, depthwise, transpose conv, pool): `kernel` (kh, kw), `stride`, `dilation`,
  `padding` (top, left, bottom, right);
* `activation` ("none", "relu", "relu6", "relu_n1_to_1"), `pool_kind`, `depth_multiplier`,
  `axes` and `keep_dims` (mean), `axis` (concat), `resize_mode` and `factors`, `alpha`, `beta`;
* constants: `weight_values` (the weight tensor as a numpy array, OHWI / 1HWC / [O, K]) and
  `weight_zero_points`, so a target can size its encoded weight stream.

The weight and bias operands of convolutions and fully connected layers, and any operand
produced by `arith.constant`, are `weights`; everything else is an input.
Tensor names are the values' locations (TFLite tensor names) made unique.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FileLineColLoc, IntegerType, ModuleOp, NameLoc, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from cascade.dialects import nn
from cascade.dialects.access import AccessRelation
from cascade.interpreter.constants import InterpretationError, constant_array
from cascade.passes.planner.graph import OpInfo, TensorInfo
from cascade.passes.planner.program import ProgramLike


@dataclass(frozen=True)
class ProgramInfo:
    """A whole program as the planner sees it: operators in program order and the graph edges."""

    ops: tuple[OpInfo, ...]
    graph_inputs: tuple[str, ...]
    graph_outputs: tuple[str, ...]

    def producers(self) -> dict[str, OpInfo]:
        return {op.output.name: op for op in self.ops}

    def consumers(self) -> dict[str, list[OpInfo]]:
        users: dict[str, list[OpInfo]] = {}
        for op in self.ops:
            for tensor in op.inputs:
                users.setdefault(tensor.name, []).append(op)
        return users


class ValueNames:
    """Unique, stable names for SSA values: their location, else their name hint, else a number.

    `aliases` maps a value to the one it stands for (a block argument of a `cascade.group` to
    the group's operand), which then shares its name: planned IR names its tensors exactly as
    the IR before planning.
    """

    def __init__(self) -> None:
        self._by_value: dict[SSAValue, str] = {}
        self._used: set[str] = set()
        self.aliases: dict[SSAValue, SSAValue] = {}

    def resolve(self, value: SSAValue) -> SSAValue:
        while value in self.aliases:
            value = self.aliases[value]
        return value

    def __call__(self, value: SSAValue) -> str:
        value = self.resolve(value)
        if value in self._by_value:
            return self._by_value[value]
        base = None
        location = value.owner.location if isinstance(value.owner, Operation) else None
        if isinstance(value, BlockArgument):
            location = getattr(value, "location", None)
        if isinstance(location, NameLoc):
            base = location.desc.data
        if not base:
            base = value.name_hint or f"v{len(self._by_value)}"
        name = base
        suffix = 1
        while name in self._used:
            suffix += 1
            name = f"{base}#{suffix}"
        self._used.add(name)
        self._by_value[value] = name
        return name


def _element_bytes(value: SSAValue) -> int:
    ty = value.type
    if isinstance(ty, TensorType) and isinstance(ty.element_type, IntegerType):
        return max(1, ty.element_type.width.data // 8)
    return 1


def _shape(value: SSAValue) -> tuple[int, ...]:
    ty = value.type
    assert isinstance(ty, TensorType)
    return tuple(ty.get_shape())


def _constant_values(value: SSAValue) -> np.ndarray | None:
    owner = value.owner
    if not isinstance(owner, ConstantOp) or not isinstance(owner.value, DenseIntOrFPElementsAttr):
        return None
    try:
        return constant_array(owner.value)
    except (InterpretationError, TypeError, ValueError):  # float, odd-width or misshapen data
        return None


def _window_attributes(op: nn.WindowOperation) -> dict[str, object]:
    return {
        "kernel": op.kernel_size(),
        "stride": op.strides(),
        "dilation": op.dilations(),
        "padding": op.paddings(),
        "activation": str(op.activation.data.value),
    }


def _macs(op: Operation) -> int:
    """Multiply-accumulates of the whole op (0 for ops without weights)."""
    out = _shape(op.results[0])
    volume = int(np.prod(out)) if out else 1
    if isinstance(op, nn.Conv2DOp | nn.TransposeConv2DOp):
        kh, kw = op.kernel_size()
        return volume * kh * kw * _shape(op.input)[3]
    if isinstance(op, nn.DepthwiseConv2DOp):
        kh, kw = op.kernel_size()
        return volume * kh * kw
    if isinstance(op, nn.FullyConnectedOp):
        return volume * _shape(op.weight)[1]
    return 0


def _attributes(op: Operation) -> dict[str, object]:
    attributes: dict[str, object] = {}
    if isinstance(op, nn.WindowOperation):
        attributes.update(_window_attributes(op))
    if isinstance(op, nn.DepthwiseConv2DOp):
        attributes["depth_multiplier"] = op.depth_multiplier()
    if isinstance(op, nn.Pool2DOp):
        attributes["pool_kind"] = str(op.kind.data.value)
    if isinstance(op, nn.BinaryOperation | nn.FullyConnectedOp):
        attributes["activation"] = str(op.activation.data.value)
    if isinstance(op, nn.MeanOp):
        attributes["axes"] = op.reduced_axes()
        attributes["keep_dims"] = bool(op.keep_dims.value.data)
    if isinstance(op, nn.ConcatOp):
        attributes["axis"] = op.concat_axis()
    if isinstance(op, nn.ResizeOp):
        attributes["resize_mode"] = str(op.mode.data.value)
        attributes["factors"] = op.factors()
    if isinstance(op, nn.PadOp):
        attributes["pads"] = op.pads()
    if isinstance(op, nn.LeakyReluOp):
        attributes["alpha"] = float(op.alpha.value.data)
    if isinstance(op, nn.SoftmaxOp):
        attributes["beta"] = float(op.beta.value.data)
    if isinstance(op, nn.ConvolutionOperation | nn.FullyConnectedOp):
        values = _constant_values(op.weight)
        if values is not None:
            attributes["weight_values"] = values
        attributes["weight_zero_points"] = tuple(int(z) for z in op.weight_quant.zero_points)
    attributes["macs"] = _macs(op)
    if isinstance(op.location, NameLoc):
        attributes["location"] = op.location.desc.data
    if isinstance(op.location, FileLineColLoc):
        where = op.location
        attributes["source"] = f"{where.filename.data}:{where.line.data}:{where.column.data}"
    return attributes


_WEIGHTED = (nn.ConvolutionOperation, nn.FullyConnectedOp)


def op_info_from_nn(op: nn.NNOperation, names: Callable[[SSAValue], str] | None = None) -> OpInfo:
    """The planner's view of one `nn` operator.

    `names` gives each SSA value its tensor name; pass the same callable for every operator of
    a program so that names stay unique and consistent (default: a fresh `ValueNames`).
    """
    names = names or ValueNames()
    parts = _parts(op)
    tensors = [
        TensorInfo(names(operand), shape, element_bytes)
        for operand, (shape, element_bytes) in zip(op.operands, parts.operands, strict=True)
    ]
    result = op.results[0]
    output_name = names(result)
    return OpInfo(
        name=output_name,
        kind=parts.kind,
        output=TensorInfo(output_name, *parts.output),
        inputs=tuple(tensors[i] for i, (role, _) in enumerate(parts.roles) if role == "input"),
        input_relations=parts.input_relations,
        weights=tuple(tensors[i] for i, (role, _) in enumerate(parts.roles) if role == "weight"),
        weight_relations=parts.weight_relations,
        attributes=parts.attributes,
    )


@dataclass(frozen=True)
class _OpParts:
    """What `op_info_from_nn` derives from an operator, all but the tensor names."""

    pinned: tuple[object, ...]
    """The IR objects whose identities key these parts (`_parts_key`), kept alive with them."""
    kind: str
    operands: tuple[tuple[tuple[int, ...], int], ...]
    """Shape and element size of each operand, in operand order."""
    output: tuple[tuple[int, ...], int]
    roles: tuple[tuple[str, int], ...]
    input_relations: tuple[AccessRelation, ...]
    weight_relations: tuple[AccessRelation, ...]
    attributes: dict[str, object]


PARTS_MEMO_SIZE = 4096
"""Operators whose `_OpParts` are kept, the least recently used dropped first."""

_PARTS: OrderedDict[tuple[object, ...], _OpParts] = OrderedDict()
"""`_OpParts` by `_parts_key`. A compile reads its program about six times (cascade-plan,
rolling-buffer, allocate-memory, lower-to-ethosu, the report), most of them from copies of
the function: a copied operator shares its attributes, types and location with the original
(xDSL's are immutable), so it finds the parts built for it (mbv2_035_96: 65 operators, about
10 ms per reading of which 8 ms are parts)."""


def _parts(op: nn.NNOperation) -> _OpParts:
    key, pinned = _parts_key(op)
    parts = _PARTS.get(key)
    if parts is None:
        parts = _build_parts(op, pinned)
        _PARTS[key] = parts
        if len(_PARTS) > PARTS_MEMO_SIZE:
            _PARTS.popitem(last=False)
    else:
        _PARTS.move_to_end(key)
    return parts


def _parts_key(op: nn.NNOperation) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """Everything `_build_parts` reads of `op`, and the objects it names by identity (to keep
    alive with the parts). The operator's parameters are its properties, by identity; its
    attributes are marks of the passes (`cascade.stripe`, `cascade.placement`), which they read
    and set as they go, and no part depends on them (`nn` defines no attribute of its own). The
    operand and result types count by value, as passes build equal types anew; an operand made
    by `arith.constant` also counts by the constant's value, which decides its role and weight
    values."""
    constants = tuple(operand.owner.value if isinstance(operand.owner, ConstantOp) else None for operand in op.operands)
    pinned = (type(op), op.location, *op.properties.values(), *constants)
    types = (*(operand.type for operand in op.operands), *(result.type for result in op.results))
    return (tuple(op.properties), types, tuple(map(id, pinned))), pinned


def _build_parts(op: nn.NNOperation, pinned: tuple[object, ...]) -> _OpParts:
    relations = op.access_relations()
    input_relations = []
    weight_relations = []
    roles: list[tuple[str, int]] = []
    # The weights and biases of convolutions and fully connected layers are weights even when
    # they arrive as function arguments; other operators' constant operands are weights too.
    parameters = {id(v) for v in op.operands[1:]} if isinstance(op, _WEIGHTED) else set()
    for operand, relation in zip(op.operands, relations, strict=True):
        if id(operand) in parameters or isinstance(operand.owner, ConstantOp):
            roles.append(("weight", len(weight_relations)))
            weight_relations.append(relation)
        else:
            roles.append(("input", len(input_relations)))
            input_relations.append(relation)
    attributes = _attributes(op)
    attributes["operands"] = tuple(roles)
    result = op.results[0]
    return _OpParts(
        pinned,
        op.name.removeprefix("nn."),
        tuple((_shape(operand), _element_bytes(operand)) for operand in op.operands),
        (_shape(result), _element_bytes(result)),
        tuple(roles),
        tuple(input_relations),
        tuple(weight_relations),
        attributes,
    )


def input_position(info: OpInfo, operand: int) -> int | None:
    """Which of `info.inputs` operand `operand` of the `nn` operator it came from is (None: a
    weight). The roles come from `op_info_from_nn`; an OpInfo built otherwise keeps positions."""
    roles = info.attributes.get("operands", ())
    kind, position = roles[operand] if operand < len(roles) else ("input", operand)  # type: ignore[misc]
    return position if kind == "input" else None


def _functions(module: ModuleOp) -> Iterable[FuncOp]:
    return (op for op in module.walk() if isinstance(op, FuncOp))


def program_from_module(module: ModuleOp, function: str = "main") -> ProgramInfo:
    """All `nn` operators of `function` (default @main, else the first function with a body), in
    program order. Declarations (`func.func private @f(...) -> ...`) have no operators to plan:
    they are skipped, and a ValueError names the one asked for if it is a declaration."""
    functions = list(_functions(module))
    if not functions:
        raise ValueError("the module has no function")
    named = next((f for f in functions if f.sym_name.data == function), None)
    defined = [f for f in functions if not f.is_declaration]
    if named is not None and named.is_declaration and not defined:
        raise ValueError(f"@{function} is a declaration without a body")
    if not defined:
        raise ValueError(f"@{functions[0].sym_name.data} is a declaration without a body")
    func = named if named is not None and not named.is_declaration else defined[0]
    names = ValueNames()
    graph_inputs = tuple(names(arg) for arg in func.args)
    ops: list[OpInfo] = []
    outputs: tuple[str, ...] = ()
    for op in func.body.walk():
        if isinstance(op, nn.NNOperation):
            ops.append(op_info_from_nn(op, names))
        elif op.name == "func.return":
            outputs = tuple(names(v) for v in op.operands)
    return ProgramInfo(tuple(ops), graph_inputs, outputs)


def describe(op: OpInfo) -> str:
    """An operator for a diagnostic: its kind, then where it is written (`file:line:col`) or
    its TFLite tensor name, else its value name."""
    source, location = op.attributes.get("source"), op.attributes.get("location")
    if isinstance(source, str):
        return f"nn.{op.kind} at {source}"
    return f"nn.{op.kind} '{location if isinstance(location, str) else op.name}'"


def check_tensor_sizes(program: ProgramLike) -> None:
    """Raise ValueError naming the first operator with a tensor over `nn.MAX_TENSOR_BYTES`: no
    32-bit address can reach its end, so nothing may plan, place or lower it."""
    for op in program.ops:
        for tensor in (*op.inputs, *op.weights, op.output):
            if (size := tensor.bytes) > nn.MAX_TENSOR_BYTES:
                raise ValueError(
                    f"{describe(op)}: tensor '{tensor.name}' has {size} bytes, more than the "
                    f"{nn.MAX_TENSOR_BYTES} (2^32) a 32-bit address space can hold"
                )
