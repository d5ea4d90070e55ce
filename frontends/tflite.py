"""TFLite import: an int8 .tflite flatbuffer becomes an `nn` program.

The flatbuffer is read with the generated schema bindings that Vela ships
(`ethosu.vela.tflite`). The result is one `func.func @main` whose arguments and
results are the model's inputs and outputs in order; weights and biases become
`arith.constant` dense tensors (printed as hex blobs, which upstream MLIR reads).
Every operator carries its output tensor's name as a `loc("...")` location, and
every argument its input tensor's name, so results can be matched to TFLite's
tensors later.

RESHAPE, EXPAND_DIMS and SQUEEZE are `nn.reshape`; chains of them are folded and moved
below elementwise operators (`passes.nn_canonicalization`), so that the 2-D convolutions
TFLite writes for 1-D ones between EXPAND_DIMS and SQUEEZE read each other's outputs.

Anything that cannot be imported raises `TFLiteImportError` naming the operator
(its index and TFLite name) and the tensor concerned.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
from ethosu.vela.tflite import (
    ActivationFunctionType,
    AddOptions,
    ConcatenationOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    LeakyReluOptions,
    MulOptions,
    Pool2DOptions,
    ReducerOptions,
    ReshapeOptions,
    ResizeBilinearOptions,
    ResizeNearestNeighborOptions,
    SoftmaxOptions,
    SqueezeOptions,
    SubOptions,
    TransposeConvOptions,
)
from ethosu.vela.tflite.BuiltinOperator import BuiltinOperator
from ethosu.vela.tflite.BuiltinOptions import BuiltinOptions
from ethosu.vela.tflite.Model import Model
from ethosu.vela.tflite.Padding import Padding
from ethosu.vela.tflite.TensorType import TensorType as TFLiteType
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from cascade.dialects import nn
from cascade.passes.nn_canonicalization import fold_reshapes

_OPCODE_NAMES = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
_TYPE_NAMES = {v: k for k, v in vars(TFLiteType).items() if not k.startswith("_")}
_OPTIONS_NAMES = {v: k for k, v in vars(BuiltinOptions).items() if not k.startswith("_")}
_NUMPY_TYPES = {TFLiteType.INT8: np.int8, TFLiteType.INT32: np.int32, TFLiteType.INT64: np.int64}
_ELEMENT_BYTES = {
    TFLiteType.FLOAT64: 8,
    TFLiteType.INT64: 8,
    TFLiteType.UINT64: 8,
    TFLiteType.COMPLEX64: 8,
    TFLiteType.COMPLEX128: 16,
    TFLiteType.FLOAT32: 4,
    TFLiteType.INT32: 4,
    TFLiteType.UINT32: 4,
    TFLiteType.FLOAT16: 2,
    TFLiteType.INT16: 2,
    TFLiteType.UINT16: 2,
}
"""Bytes per element of the types wider than one byte (the rest, int8 included, take one)."""

ACTIVATIONS = {
    ActivationFunctionType.ActivationFunctionType.NONE: nn.Activation.NONE,
    ActivationFunctionType.ActivationFunctionType.RELU: nn.Activation.RELU,
    ActivationFunctionType.ActivationFunctionType.RELU6: nn.Activation.RELU6,
    ActivationFunctionType.ActivationFunctionType.RELU_N1_TO_1: nn.Activation.RELU_N1_TO_1,
}


class TFLiteImportError(Exception):
    """A model that cannot be imported; the message names the operator and tensor."""


@dataclass
class TFLiteTensor:
    index: int
    name: str
    shape: tuple[int, ...]
    type: int
    quant: nn.QuantAttr | None
    data: np.ndarray | None

    @property
    def type_name(self) -> str:
        return _TYPE_NAMES.get(self.type, f"type {self.type}")

    def describe(self) -> str:
        return f"tensor '{_printable(self.name)}' (#{self.index})"


def _printable(text: str) -> str:
    """A name from the file as it can appear in a one-line message: unprintable characters escaped."""
    if text.isprintable():  # nearly every name: each tensor's is prepared for its messages
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def import_tflite(data: bytes) -> ModuleOp:
    """Import a .tflite model's main subgraph as an `nn` program."""
    importer: _Importer | None = None
    try:
        model = _read_model(data)
        importer = _Importer(model)
        return importer.run()
    except TFLiteImportError:
        raise
    except Exception as error:
        # The generated flatbuffer readers trust every offset and length in the file, so a
        # corrupt file surfaces as whatever exception reading out of range raised (struct.error,
        # ValueError, IndexError, TypeError...). Say where we were reading and keep the detail.
        where = importer.reading if importer is not None else "the model header"
        kind = type(error).__qualname__
        if type(error).__module__ != "builtins":
            kind = f"{type(error).__module__}.{kind}"  # struct.error, not a bare "error"
        raise TFLiteImportError(
            f"malformed TFLite file: {where}: the flatbuffer is corrupt ({kind}: {error})"
        ) from error


def parse_tflite(stream: IO[bytes]) -> ModuleOp:
    """The xDSL frontend entry point: `cascade-opt model.tflite`."""
    return import_tflite(stream.read())


def tensor_names(module: ModuleOp) -> dict[str, SSAValue]:
    """The values that carry a TFLite tensor name as their location."""
    names: dict[str, SSAValue] = {}
    for op in module.walk():
        if isinstance(op, FuncOp):
            for arg in op.args:
                if isinstance(arg.location, NameLoc):
                    names[arg.location.desc.data] = arg
        elif isinstance(op.location, NameLoc) and len(op.results) == 1:
            names[op.location.desc.data] = op.results[0]
    return names


def _name_loc(name: str) -> NameLoc:
    return NameLoc(StringAttr(name), NoneAttr())


def _read_model(data: bytes) -> Model:
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise TFLiteImportError("not a TFLite file: the flatbuffer identifier 'TFL3' is missing")
    model = Model.GetRootAs(data, 0)
    if model.Version() != SCHEMA_VERSION:
        raise TFLiteImportError(f"TFLite schema version {model.Version()} is not supported (only {SCHEMA_VERSION})")
    if model.SubgraphsLength() < 1:
        raise TFLiteImportError("TFLite file has no subgraph")
    return model


SCHEMA_VERSION = 3
"""The TFLite schema version this importer reads, the only one TFLite itself loads."""


def window_padding(kind: int, in_size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """TFLite SAME padding: out = ceil(in / stride), the extra row goes after.

    E.g. 224 rows, 3x3, stride 2: out 112, total (112-1)*2 + 3 - 224 = 1: (0, 1).
    """
    if kind == Padding.VALID:
        return 0, 0
    if kind != Padding.SAME:
        raise TFLiteImportError(f"unknown padding kind {kind}")
    span = (kernel - 1) * dilation + 1
    out = -(-in_size // stride)
    total = max((out - 1) * stride + span - in_size, 0)
    return total // 2, total - total // 2


def _sanitize(name: str) -> str | None:
    """A readable SSA name from a TFLite tensor name: 'model/conv_1/Relu;...' -> 'conv_1_Relu'."""
    head = name.split(";")[0]
    parts = [p for p in head.split("/") if p][-2:]
    text = re.sub(r"[^A-Za-z0-9_$.-]", "_", "_".join(parts))
    text = re.sub(r"_\d+$", "", text)  # xDSL treats a trailing _N as a uniquing suffix
    if not text or text[0].isdigit():
        text = f"t_{text}"
    return text or None


class _Importer:
    def __init__(self, model: Model):
        self.model = model
        self.reading = "the main subgraph"
        """What is being read, for the message about a corrupt file."""
        self.graph = model.Subgraphs(0)
        self.tensors: dict[int, TFLiteTensor] = {}
        self.values: dict[int, SSAValue] = {}
        self.constants: list[Operation] = []
        self.computed: list[Operation] = []
        self.inputs: set[int] = set()

    # ----------------------------------------------------------------- tensors
    def tensor(self, index: int) -> TFLiteTensor:
        if index in self.tensors:
            return self.tensors[index]
        if not 0 <= index < self.graph.TensorsLength():
            raise TFLiteImportError(f"tensor index {index} out of range")
        raw = self.graph.Tensors(index)
        try:
            name = (raw.Name() or b"").decode("utf-8") or f"tensor_{index}"
        except UnicodeDecodeError:
            # Flatbuffer strings are UTF-8; another name could not be matched with TFLite's.
            shown = (raw.Name() or b"").decode("utf-8", errors="replace")
            raise TFLiteImportError(f"tensor '{_printable(shown)}' (#{index}) has a name that is not UTF-8") from None
        shape = tuple(int(d) for d in raw.ShapeAsNumpy()) if raw.ShapeLength() else ()
        described = f"tensor '{_printable(name)}' (#{index})"
        size = math.prod(shape) * _ELEMENT_BYTES.get(raw.Type(), 1)
        if min(shape, default=1) >= 0 and size > nn.MAX_TENSOR_BYTES:
            raise TFLiteImportError(
                f"{described} of shape {list(shape)} has {size} bytes, more than the "
                f"{nn.MAX_TENSOR_BYTES} (2^32) a 32-bit address space can hold"
            )
        quant = self._quant(raw, described)
        tensor = TFLiteTensor(index, name, shape, raw.Type(), quant, self._data(raw, described, shape))
        self.tensors[index] = tensor
        return tensor

    def _quant(self, raw: Any, described: str) -> nn.QuantAttr | None:
        quant = raw.Quantization()
        if quant is None or quant.ScaleLength() == 0:
            return None
        scales = [float(s) for s in quant.ScaleAsNumpy()]
        zero_points = [int(z) for z in quant.ZeroPointAsNumpy()] if quant.ZeroPointLength() else []
        if len(zero_points) != len(scales):
            raise TFLiteImportError(f"{described} has {len(scales)} scales but {len(zero_points)} zero points")
        if bad := [s for s in scales if not (math.isfinite(s) and s > 0)]:
            raise TFLiteImportError(f"{described} has quantization scale {bad[0]}; scales must be positive and finite")
        try:
            if len(scales) == 1:
                return nn.QuantAttr(scales, zero_points)
            return nn.QuantAttr(scales, zero_points, int(quant.QuantizedDimension()))
        except VerifyException as error:
            raise TFLiteImportError(f"{described} has invalid quantization: {error}") from None

    def _data(self, raw: Any, described: str, shape: tuple[int, ...]) -> np.ndarray | None:
        buffer_index = raw.Buffer()
        if buffer_index <= 0 or buffer_index >= self.model.BuffersLength():
            return None
        buffer = self.model.Buffers(buffer_index)
        if buffer.Offset() > 1:
            raise TFLiteImportError("TFLite files with external buffers (over 2 GB) are not supported")
        if buffer.DataLength() == 0:
            return None
        dtype = _NUMPY_TYPES.get(raw.Type())
        if dtype is None:
            return None
        raw_bytes = buffer.DataAsNumpy()
        if raw_bytes.size % np.dtype(dtype).itemsize:
            raise TFLiteImportError(
                f"{described} has a buffer of {raw_bytes.size} bytes, not a whole number of {np.dtype(dtype).name}"
            )
        flat = raw_bytes.view(dtype)
        # math.prod, not np.prod: numpy's int64 product wraps around for a corrupt huge shape.
        if flat.size != math.prod(shape):
            raise TFLiteImportError(
                f"{described} has a buffer of {flat.size} elements that does not fill shape {list(shape)}"
            )
        return flat.reshape(shape)

    # ------------------------------------------------------------------ import
    def run(self) -> ModuleOp:
        arg_types = []
        inputs = [int(i) for i in self.graph.InputsAsNumpy()] if self.graph.InputsLength() else []
        outputs = [int(i) for i in self.graph.OutputsAsNumpy()] if self.graph.OutputsLength() else []
        if not inputs or not outputs:
            raise TFLiteImportError("the main subgraph has no inputs or no outputs")
        self.reading = "the model inputs"
        if len(set(inputs)) != len(inputs):
            raise TFLiteImportError(f"the main subgraph lists an input tensor twice: {inputs}")
        for index in inputs:
            try:
                tensor = self.activation(index, "model input")
                if tensor.data is not None:
                    # TFLite would read the buffer, we the caller's values: two meanings.
                    raise TFLiteImportError(f"model input {tensor.describe()} has constant data")
            except TFLiteImportError as error:
                raise TFLiteImportError(f"{self.first_reader(index)}{error}") from None
            arg_types.append(TensorType(IntegerType(8), tensor.shape))
        body = Block(arg_types=arg_types)
        self.inputs = set(inputs)
        for arg, index in zip(body.args, inputs, strict=True):
            tensor = self.tensors[index]
            arg.name_hint = _sanitize(tensor.name)
            arg.location = _name_loc(tensor.name)
            self.values[index] = arg
        for op_index in range(self.graph.OperatorsLength()):
            self.reading = f"operator #{op_index}"
            self.operator(op_index)
        self.reading = "the model outputs"
        results = []
        for index in outputs:
            if index not in self.values:
                raise TFLiteImportError(f"model output {self.tensor(index).describe()} is never computed")
            results.append(self.values[index])
        # Constants first, so the computation reads top to bottom in TFLite's operator order.
        body.add_ops([*self.constants, *self.computed, ReturnOp(*results)])
        func = FuncOp("main", FunctionType.from_lists(arg_types, [r.type for r in results]), Region(body))
        module = ModuleOp([func])
        fold_reshapes(module)
        return module

    def first_reader(self, index: int) -> str:
        """'operator #k NAME: ' for the first operator reading tensor `index`, or ''."""
        for op_index in range(self.graph.OperatorsLength()):
            op = self.graph.Operators(op_index)
            if op.InputsLength() and index in op.InputsAsNumpy():
                return f"{self.operator_name(op_index)}: "
        return ""

    def operator_name(self, op_index: int) -> str:
        op = self.graph.Operators(op_index)
        if not 0 <= op.OpcodeIndex() < self.model.OperatorCodesLength():
            raise TFLiteImportError(f"operator #{op_index} has an invalid opcode index {op.OpcodeIndex()}")
        code = self.model.OperatorCodes(op.OpcodeIndex())
        opcode = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if opcode == BuiltinOperator.CUSTOM:
            return f"operator #{op_index} CUSTOM '{_printable((code.CustomCode() or b'').decode(errors='replace'))}'"
        return f"operator #{op_index} {_OPCODE_NAMES.get(opcode, f'opcode {opcode}')}"

    def activation(self, index: int, role: str, scalar_constant: bool = False) -> TFLiteTensor:
        """An int8 activation tensor, checked to be per-tensor quantized; of rank 0 only if
        `scalar_constant` and it is a constant."""
        tensor = self.tensor(index)
        if tensor.type == TFLiteType.FLOAT32:
            raise TFLiteImportError(
                f"{role} {tensor.describe()} is FLOAT32: float models are not supported, quantize to int8"
            )
        if tensor.type != TFLiteType.INT8:
            raise TFLiteImportError(f"{role} {tensor.describe()} has type {tensor.type_name}; only INT8 is supported")
        if tensor.quant is None:
            raise TFLiteImportError(f"{role} {tensor.describe()} has no quantization parameters")
        # A scalar (rank 0) is a static shape only for a constant operand of an elementwise
        # operator: an activation without dimensions is one whose shape the model leaves unknown.
        scalar = scalar_constant and tensor.data is not None
        if any(d <= 0 for d in tensor.shape) or (not tensor.shape and not scalar):
            raise TFLiteImportError(f"{role} {tensor.describe()} has no static shape: {list(tensor.shape)}")
        return tensor

    def operator(self, op_index: int) -> None:
        where = self.operator_name(op_index)
        self.reading = where
        op = self.graph.Operators(op_index)
        code = self.model.OperatorCodes(op.OpcodeIndex())
        handler = _HANDLERS.get(max(code.BuiltinCode(), code.DeprecatedBuiltinCode()))
        if handler is None:
            raise TFLiteImportError(f"{where}: unsupported operator")
        inputs = [int(i) for i in op.InputsAsNumpy()] if op.InputsLength() else []
        outputs = [int(i) for i in op.OutputsAsNumpy()] if op.OutputsLength() else []
        if len(outputs) != 1:
            raise TFLiteImportError(f"{where}: expected one output, got {len(outputs)}")
        # Every index, even of an input a handler never reads: TFLite refuses the whole model
        # otherwise, and -1 is the only "no tensor" it knows.
        count = self.graph.TensorsLength()
        for position, index in [*enumerate(inputs), (len(inputs), outputs[0])]:
            if not (-1 if position < len(inputs) else 0) <= index < count:
                role = f"input {position}" if position < len(inputs) else "output"
                raise TFLiteImportError(f"{where}: {role} has tensor index {index}, out of range for {count} tensors")
        if outputs[0] in self.values:
            # A tensor has one value: written twice, TFLite's and our tensors of that name differ.
            origin = "a model input" if outputs[0] in self.inputs else "written by an earlier operator"
            raise TFLiteImportError(f"{where}: output {self.tensor(outputs[0]).describe()} is already {origin}")
        context = _OpContext(self, where, op, inputs, outputs[0])
        try:
            new_op = handler(context)
            new_op.verify()
        except TFLiteImportError as error:
            raise TFLiteImportError(f"{where}: {error}") from None
        except VerifyException as error:
            raise TFLiteImportError(f"{where}: {error}") from None
        output = self.tensor(outputs[0])
        new_op.location = _name_loc(output.name)
        new_op.results[0].name_hint = _sanitize(output.name)
        self.computed.append(new_op)
        self.values[outputs[0]] = new_op.results[0]

    def value(self, index: int, role: str) -> SSAValue:
        """The SSA value of a tensor: computed earlier, or a constant made now."""
        if index in self.values:
            return self.values[index]
        tensor = self.tensor(index)
        if tensor.data is None:
            raise TFLiteImportError(f"{role} {tensor.describe()} is neither computed earlier nor constant")
        element = IntegerType(tensor.data.dtype.itemsize * 8)
        ty = TensorType(element, tensor.shape)
        data = np.ascontiguousarray(tensor.data.astype(tensor.data.dtype.newbyteorder("<")))
        constant = ConstantOp(DenseIntOrFPElementsAttr(ty, BytesAttr(data.tobytes())))
        constant.result.name_hint = _sanitize(tensor.name)
        constant.location = _name_loc(tensor.name)
        self.constants.append(constant)
        self.values[index] = constant.result
        return constant.result


@dataclass
class _OpContext:
    importer: _Importer
    where: str
    op: Any
    inputs: list[int]
    output_index: int

    def input(self, position: int, role: str) -> int:
        if position >= len(self.inputs) or self.inputs[position] < 0:
            raise TFLiteImportError(f"missing {role} (input {position})")
        return self.inputs[position]

    def optional_input(self, position: int) -> int | None:
        if position >= len(self.inputs) or self.inputs[position] < 0:
            return None
        return self.inputs[position]

    def activation_in(
        self, position: int, role: str = "input", scalar_constant: bool = False
    ) -> tuple[SSAValue, nn.QuantAttr]:
        index = self.input(position, role)
        tensor = self.importer.activation(index, role, scalar_constant)
        assert tensor.quant is not None
        return self.importer.value(index, role), tensor.quant

    def output(self) -> tuple[TensorType, nn.QuantAttr]:
        tensor = self.importer.activation(self.output_index, "output")
        assert tensor.quant is not None
        return TensorType(IntegerType(8), tensor.shape), tensor.quant

    def constant(self, position: int, role: str, dtype: type = np.int8) -> TFLiteTensor:
        tensor = self.importer.tensor(self.input(position, role))
        if tensor.data is None:
            raise TFLiteImportError(f"{role} {tensor.describe()} must be a constant")
        if tensor.data.dtype != dtype:
            raise TFLiteImportError(
                f"{role} {tensor.describe()} has type {tensor.type_name}, expected {np.dtype(dtype).name}"
            )
        return tensor

    def weights(self, position: int) -> tuple[SSAValue, nn.QuantAttr]:
        tensor = self.constant(position, "weights")
        if tensor.quant is None:
            raise TFLiteImportError(f"weights {tensor.describe()} have no quantization parameters")
        if any(z != 0 for z in tensor.quant.zero_points):
            raise TFLiteImportError(f"weights {tensor.describe()} have a non-zero zero point")
        return self.importer.value(tensor.index, "weights"), tensor.quant

    def bias(self, position: int, channels: int) -> SSAValue:
        index = self.optional_input(position)
        if index is None:
            zeros = np.zeros((channels,), np.int32)
            ty = TensorType(IntegerType(32), (channels,))
            constant = ConstantOp(DenseIntOrFPElementsAttr(ty, BytesAttr(zeros.tobytes())))
            constant.result.name_hint = "zero_bias"
            self.importer.constants.append(constant)
            return constant.result
        tensor = self.constant(position, "bias", np.int32)
        return self.importer.value(tensor.index, "bias")

    def has_options(self) -> bool:
        """Whether the operator says it has builtin options (a union of type NONE has none)."""
        return self.op.BuiltinOptionsType() != BuiltinOptions.NONE and self.op.BuiltinOptions() is not None

    def options(self, options_class: type) -> Any:
        table = self.op.BuiltinOptions()
        if table is None or self.op.BuiltinOptionsType() == BuiltinOptions.NONE:
            raise TFLiteImportError("missing builtin options")
        # The table must be read as the type the union names: TFLite would not read it at all
        # if the type is not the operator's, and reading it as another table gives garbage.
        expected = getattr(BuiltinOptions, options_class.__name__)
        if self.op.BuiltinOptionsType() != expected:
            actual = _OPTIONS_NAMES.get(self.op.BuiltinOptionsType(), f"type {self.op.BuiltinOptionsType()}")
            raise TFLiteImportError(f"builtin options are {actual}, expected {options_class.__name__}")
        options = options_class()
        options.Init(table.Bytes, table.Pos)
        return options

    def activation_attr(self, code: int) -> nn.ActivationAttr:
        if code not in ACTIVATIONS:
            names = {v: k for k, v in vars(ActivationFunctionType.ActivationFunctionType).items() if k.isupper()}
            supported = ", ".join(names[c] for c in ACTIVATIONS)
            raise TFLiteImportError(f"unsupported fused activation {names.get(code, code)} (supported: {supported})")
        return nn.ActivationAttr(ACTIVATIONS[code])

    def make(self, op_type: type[Operation], operands: Sequence[SSAValue], **properties: Attribute) -> Operation:
        result_type, quant = self.output()
        properties.setdefault("output_quant", quant)
        return op_type.create(operands=list(operands), result_types=[result_type], properties=properties)


def _array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def _window_props(
    ctx: _OpContext, options: Any, in_shape: Sequence[int], kernel: tuple[int, int], dilation: tuple[int, int]
) -> dict[str, Attribute]:
    stride = (options.StrideH(), options.StrideW())
    if min(stride) < 1 or min(dilation) < 1:
        raise TFLiteImportError(f"stride {list(stride)} and dilation {list(dilation)} must be positive")
    top, bottom = window_padding(options.Padding(), in_shape[1], kernel[0], stride[0], dilation[0])
    left, right = window_padding(options.Padding(), in_shape[2], kernel[1], stride[1], dilation[1])
    return {
        "stride": _array(stride),
        "dilation": _array(dilation),
        "padding": _array((top, left, bottom, right)),
        "activation": ctx.activation_attr(options.FusedActivationFunction()),
    }


def _convolution(ctx: _OpContext, op_type: type[Operation], options_class: type) -> Operation:
    options = ctx.options(options_class)
    x, x_quant = ctx.activation_in(0)
    w, w_quant = ctx.weights(1)
    weight_shape = ctx.importer.tensor(ctx.inputs[1]).shape
    if len(weight_shape) != 4:
        raise TFLiteImportError(f"weights must be 4-D, got shape {list(weight_shape)}")
    out_channels = weight_shape[3] if op_type is nn.DepthwiseConv2DOp else weight_shape[0]
    bias = ctx.bias(2, out_channels)
    dilation = (options.DilationHFactor(), options.DilationWFactor())
    props = _window_props(ctx, options, _shape_of(x), (weight_shape[1], weight_shape[2]), dilation)
    return ctx.make(op_type, [x, w, bias], input_quant=x_quant, weight_quant=w_quant, **props)


def _shape_of(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return value.type.get_shape()


def _conv2d(ctx: _OpContext) -> Operation:
    return _convolution(ctx, nn.Conv2DOp, Conv2DOptions.Conv2DOptions)


def _depthwise(ctx: _OpContext) -> Operation:
    return _convolution(ctx, nn.DepthwiseConv2DOp, DepthwiseConv2DOptions.DepthwiseConv2DOptions)


def _check_shape_input(ctx: _OpContext, position: int, role: str, expected: Sequence[int]) -> None:
    """TFLite computes an output's shape from a constant input (RESIZE's size, TRANSPOSE_CONV's
    output shape); the declared output shape, which the import uses, must be that shape, or the
    program would compute something else than TFLite."""
    tensor = ctx.constant(position, role, np.int32)
    assert tensor.data is not None
    values = [int(v) for v in tensor.data.reshape(-1)]
    if values != list(expected):
        raise TFLiteImportError(
            f"{role} {tensor.describe()} is {values}, but the output tensor is declared with {list(expected)}"
        )


def _transpose_conv(ctx: _OpContext) -> Operation:
    options = ctx.options(TransposeConvOptions.TransposeConvOptions)
    x, x_quant = ctx.activation_in(2)
    w, w_quant = ctx.weights(1)
    weight_shape = ctx.importer.tensor(ctx.inputs[1]).shape
    out_type, _ = ctx.output()
    out_shape = out_type.get_shape()
    _check_shape_input(ctx, 0, "output shape", out_shape)
    bias = ctx.bias(3, weight_shape[0])
    stride = (options.StrideH(), options.StrideW())
    # TFLite pads a transposed convolution as if it were the convolution from output to input.
    top, bottom = window_padding(options.Padding(), out_shape[1], weight_shape[1], stride[0], 1)
    left, right = window_padding(options.Padding(), out_shape[2], weight_shape[2], stride[1], 1)
    return ctx.make(
        nn.TransposeConv2DOp,
        [x, w, bias],
        input_quant=x_quant,
        weight_quant=w_quant,
        stride=_array(stride),
        dilation=_array((1, 1)),
        padding=_array((top, left, bottom, right)),
        activation=ctx.activation_attr(options.FusedActivationFunction()),
    )


def _pool(kind: nn.PoolKind) -> Callable[[_OpContext], Operation]:
    def convert(ctx: _OpContext) -> Operation:
        options = ctx.options(Pool2DOptions.Pool2DOptions)
        x, x_quant = ctx.activation_in(0)
        kernel = (options.FilterHeight(), options.FilterWidth())
        props = _window_props(ctx, options, _shape_of(x), kernel, (1, 1))
        return ctx.make(
            nn.Pool2DOp, [x], input_quant=x_quant, kind=nn.PoolKindAttr(kind), kernel=_array(kernel), **props
        )

    return convert


def _binary(op_type: type[Operation], options_class: type | None) -> Callable[[_OpContext], Operation]:
    def convert(ctx: _OpContext) -> Operation:
        a, a_quant = ctx.activation_in(0, scalar_constant=True)
        b, b_quant = ctx.activation_in(1, "input2", scalar_constant=True)
        activation = nn.ActivationAttr(nn.Activation.NONE)
        if options_class is not None and ctx.has_options():
            activation = ctx.activation_attr(ctx.options(options_class).FusedActivationFunction())
        return ctx.make(op_type, [a, b], input_quant=a_quant, input2_quant=b_quant, activation=activation)

    return convert


def _fully_connected(ctx: _OpContext) -> Operation:
    options = ctx.options(FullyConnectedOptions.FullyConnectedOptions)
    if options.WeightsFormat() != 0:
        raise TFLiteImportError("only the default weights format is supported")
    x, x_quant = ctx.activation_in(0)
    w, w_quant = ctx.weights(1)
    operands = [x, w]
    if ctx.optional_input(2) is not None:
        operands.append(ctx.bias(2, ctx.importer.tensor(ctx.inputs[1]).shape[0]))
    out_type, _ = ctx.output()
    if len(out_type.get_shape()) != 2:
        raise TFLiteImportError(f"only 2-D outputs are supported (keep_num_dims), got {list(out_type.get_shape())}")
    return ctx.make(
        nn.FullyConnectedOp,
        operands,
        input_quant=x_quant,
        weight_quant=w_quant,
        activation=ctx.activation_attr(options.FusedActivationFunction()),
    )


def _mean(ctx: _OpContext) -> Operation:
    options = ctx.options(ReducerOptions.ReducerOptions)
    x, x_quant = ctx.activation_in(0)
    axes = ctx.constant(1, "axis", np.int32).data
    assert axes is not None
    return ctx.make(
        nn.MeanOp,
        [x],
        input_quant=x_quant,
        axes=_array(axes.reshape(-1)),
        keep_dims=BoolAttr.from_bool(bool(options.KeepDims())),
    )


def _probability_output(ctx: _OpContext, operator: str) -> None:
    """TFLite's int8 SOFTMAX and LOGISTIC refuse any output quantization but 1/256:-128."""
    _, quant = ctx.output()
    if (quant.scales[0], quant.zero_points[0]) != (1 / 256, -128):
        raise TFLiteImportError(
            f"int8 {operator} needs the output quantization 1/256:-128, as TFLite requires; got {quant}"
        )


def _softmax(ctx: _OpContext) -> Operation:
    options = ctx.options(SoftmaxOptions.SoftmaxOptions)
    x, x_quant = ctx.activation_in(0)
    _probability_output(ctx, "SOFTMAX")
    return ctx.make(nn.SoftmaxOp, [x], input_quant=x_quant, beta=FloatAttr(float(options.Beta()), f32))


def _logistic(ctx: _OpContext) -> Operation:
    x, x_quant = ctx.activation_in(0)
    _probability_output(ctx, "LOGISTIC")
    return ctx.make(nn.SigmoidOp, [x], input_quant=x_quant)


def _pad(ctx: _OpContext) -> Operation:
    x, x_quant = ctx.activation_in(0)
    paddings = ctx.importer.tensor(ctx.input(1, "paddings"))
    if paddings.data is None or paddings.data.dtype not in (np.int32, np.int64):
        raise TFLiteImportError(f"paddings {paddings.describe()} must be a constant integer tensor")
    value_index = ctx.optional_input(2)
    if value_index is not None:
        value = ctx.importer.tensor(value_index).data
        if value is None or int(value.reshape(-1)[0]) != x_quant.zero_points[0]:
            raise TFLiteImportError("PADV2 with a pad value other than the zero point is not supported")
    return ctx.make(nn.PadOp, [x], input_quant=x_quant, padding=_array(paddings.data.reshape(-1)))


def _reshape(ctx: _OpContext) -> Operation:
    x, x_quant = ctx.activation_in(0)
    out_type, _ = ctx.output()
    # As TFLite: the shape input when it is a 1-D int32 tensor, else the new_shape option.
    index = ctx.optional_input(1)
    shape_tensor = ctx.importer.tensor(index) if index is not None else None
    if shape_tensor is not None and shape_tensor.type == TFLiteType.INT32 and len(shape_tensor.shape) == 1:
        if shape_tensor.data is None:
            raise TFLiteImportError(f"shape {shape_tensor.describe()} must be a constant")
        source, requested = f"shape {shape_tensor.describe()}", [int(v) for v in shape_tensor.data]
    elif ctx.op.BuiltinOptions() is not None:
        options = ctx.options(ReshapeOptions.ReshapeOptions)
        source = "new_shape option"
        requested = [int(v) for v in options.NewShapeAsNumpy()] if options.NewShapeLength() else []
    else:
        raise TFLiteImportError("RESHAPE has neither a shape input nor a new_shape option")
    resolved = _resolve_reshape(requested, _volume(_shape_of(x)))
    if resolved != list(out_type.get_shape()):
        raise TFLiteImportError(
            f"{source} is {requested}, but the output tensor is declared with {list(out_type.get_shape())}"
        )
    return ctx.make(nn.ReshapeOp, [x], input_quant=x_quant)


def _expand_dims(ctx: _OpContext) -> Operation:
    """EXPAND_DIMS: a reshape inserting a 1 at the axis its second input names (a 1-D
    convolution's `[1, T, C]` to `[1, 1, T, C]`)."""
    x, x_quant = ctx.activation_in(0)
    shape = list(_shape_of(x))
    axis_tensor = ctx.importer.tensor(ctx.input(1, "axis"))
    if axis_tensor.data is None or axis_tensor.data.size != 1 or axis_tensor.type != TFLiteType.INT32:
        raise TFLiteImportError(f"axis {axis_tensor.describe()} must be one constant int32")
    axis = int(axis_tensor.data.reshape(-1)[0])
    if not -len(shape) - 1 <= axis <= len(shape):
        raise TFLiteImportError(f"axis {axis} is out of range for a rank-{len(shape)} input")
    shape.insert(axis if axis >= 0 else axis + len(shape) + 1, 1)
    return _reshape_to(ctx, x, x_quant, shape, f"axis {axis}")


def _squeeze(ctx: _OpContext) -> Operation:
    """SQUEEZE: a reshape dropping the size-1 dimensions its option lists (all of them when it
    lists none)."""
    x, x_quant = ctx.activation_in(0)
    shape = list(_shape_of(x))
    options = ctx.options(SqueezeOptions.SqueezeOptions)
    listed = [int(d) for d in options.SqueezeDimsAsNumpy()] if options.SqueezeDimsLength() else []
    if any(not -len(shape) <= d < len(shape) for d in listed):
        raise TFLiteImportError(f"squeeze_dims {listed} are out of range for a rank-{len(shape)} input")
    dims = {d % len(shape) for d in listed} if listed else {d for d, size in enumerate(shape) if size == 1}
    if any(shape[d] != 1 for d in dims):
        raise TFLiteImportError(f"squeeze_dims {listed} name a dimension of {shape} that is not 1")
    kept = [size for d, size in enumerate(shape) if d not in dims]
    return _reshape_to(ctx, x, x_quant, kept, f"squeeze_dims {listed}")


def _reshape_to(ctx: _OpContext, x: SSAValue, x_quant: nn.QuantAttr, shape: list[int], source: str) -> Operation:
    """An `nn.reshape` of `x` to `shape`, which the output tensor must be declared with."""
    out_type, _ = ctx.output()
    if shape != list(out_type.get_shape()):
        declared = list(out_type.get_shape())
        raise TFLiteImportError(f"{source} gives {shape}, but the output tensor is declared with {declared}")
    return ctx.make(nn.ReshapeOp, [x], input_quant=x_quant)


def _volume(shape: Sequence[int]) -> int:
    return math.prod(shape)


def _resolve_reshape(requested: Sequence[int], volume: int) -> list[int]:
    """A RESHAPE shape with its one -1 (if any) replaced as TFLite does: [2, -1] of 8 elements is [2, 4]."""
    known = math.prod(d for d in requested if d != -1)
    if list(requested).count(-1) == 1 and known > 0 and volume % known == 0:
        return [volume // known if d == -1 else d for d in requested]
    return list(requested)


def _concat(ctx: _OpContext) -> Operation:
    options = ctx.options(ConcatenationOptions.ConcatenationOptions)
    if options.FusedActivationFunction() != ActivationFunctionType.ActivationFunctionType.NONE:
        raise TFLiteImportError("a fused activation on CONCATENATION is not supported")
    pairs = [ctx.activation_in(i, f"input {i}") for i in range(len(ctx.inputs))]
    return ctx.make(
        nn.ConcatOp,
        [v for v, _ in pairs],
        input_quants=ArrayAttr([q for _, q in pairs]),
        axis=IntegerAttr(options.Axis(), i64),
    )


def _resize(mode: nn.ResizeMode, options_class: type) -> Callable[[_OpContext], Operation]:
    def convert(ctx: _OpContext) -> Operation:
        options = ctx.options(options_class)
        x, x_quant = ctx.activation_in(0)
        out_type, _ = ctx.output()
        _check_shape_input(ctx, 1, "size", out_type.get_shape()[1:3])
        return ctx.make(
            nn.ResizeOp,
            [x],
            input_quant=x_quant,
            mode=nn.ResizeModeAttr(mode),
            align_corners=BoolAttr.from_bool(bool(options.AlignCorners())),
            half_pixel_centers=BoolAttr.from_bool(bool(options.HalfPixelCenters())),
        )

    return convert


def _unary(op_type: type[Operation]) -> Callable[[_OpContext], Operation]:
    def convert(ctx: _OpContext) -> Operation:
        x, x_quant = ctx.activation_in(0)
        return ctx.make(op_type, [x], input_quant=x_quant)

    return convert


def _relu(activation: nn.Activation) -> Callable[[_OpContext], Operation]:
    def convert(ctx: _OpContext) -> Operation:
        x, x_quant = ctx.activation_in(0)
        return ctx.make(nn.ReluOp, [x], input_quant=x_quant, activation=nn.ActivationAttr(activation))

    return convert


def _leaky_relu(ctx: _OpContext) -> Operation:
    options = ctx.options(LeakyReluOptions.LeakyReluOptions)
    x, x_quant = ctx.activation_in(0)
    return ctx.make(nn.LeakyReluOp, [x], input_quant=x_quant, alpha=FloatAttr(float(options.Alpha()), f32))


_HANDLERS: dict[int, Callable[[_OpContext], Operation]] = {
    BuiltinOperator.CONV_2D: _conv2d,
    BuiltinOperator.DEPTHWISE_CONV_2D: _depthwise,
    BuiltinOperator.TRANSPOSE_CONV: _transpose_conv,
    BuiltinOperator.MAX_POOL_2D: _pool(nn.PoolKind.MAX),
    BuiltinOperator.AVERAGE_POOL_2D: _pool(nn.PoolKind.AVG),
    BuiltinOperator.ADD: _binary(nn.AddOp, AddOptions.AddOptions),
    BuiltinOperator.SUB: _binary(nn.SubOp, SubOptions.SubOptions),
    BuiltinOperator.MUL: _binary(nn.MulOp, MulOptions.MulOptions),
    BuiltinOperator.MINIMUM: _binary(nn.MinimumOp, None),
    BuiltinOperator.MAXIMUM: _binary(nn.MaximumOp, None),
    BuiltinOperator.FULLY_CONNECTED: _fully_connected,
    BuiltinOperator.MEAN: _mean,
    BuiltinOperator.SOFTMAX: _softmax,
    BuiltinOperator.PAD: _pad,
    BuiltinOperator.PADV2: _pad,
    BuiltinOperator.RESHAPE: _reshape,
    BuiltinOperator.EXPAND_DIMS: _expand_dims,
    BuiltinOperator.SQUEEZE: _squeeze,
    BuiltinOperator.CONCATENATION: _concat,
    BuiltinOperator.RESIZE_NEAREST_NEIGHBOR: _resize(
        nn.ResizeMode.NEAREST, ResizeNearestNeighborOptions.ResizeNearestNeighborOptions
    ),
    BuiltinOperator.RESIZE_BILINEAR: _resize(nn.ResizeMode.BILINEAR, ResizeBilinearOptions.ResizeBilinearOptions),
    BuiltinOperator.TANH: _unary(nn.TanhOp),
    BuiltinOperator.HARD_SWISH: _unary(nn.HardSwishOp),
    BuiltinOperator.RELU: _relu(nn.Activation.RELU),
    BuiltinOperator.RELU6: _relu(nn.Activation.RELU6),
    BuiltinOperator.RELU_N1_TO_1: _relu(nn.Activation.RELU_N1_TO_1),
    BuiltinOperator.LOGISTIC: _logistic,
    BuiltinOperator.QUANTIZE: _unary(nn.RescaleOp),
    BuiltinOperator.LEAKY_RELU: _leaky_relu,
}
