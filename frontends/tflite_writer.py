"""A small TFLite flatbuffer writer for building test models without TensorFlow.

It uses the generated schema bindings shipped with Vela (``ethosu.vela.tflite``) on top of
``flatbuffers.Builder``.  Typical use::

    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, 8, 8, 3], "int8", scale=0.05, zero_point=-3)
    w = mb.add_tensor("w", [4, 3, 3, 3], "int8", scale=[0.01, 0.02, 0.01, 0.03],
                      zero_point=0, quantized_dimension=0, data=weights)
    b = mb.add_tensor("b", [4], "int32", scale=[...], zero_point=0, data=bias)
    y = mb.add_tensor("y", [1, 8, 8, 4], "int8", scale=0.1, zero_point=5)
    mb.add_operator("CONV_2D", [x, w, b], [y],
                    options("Conv2DOptions", padding="SAME", stride_w=1, stride_h=1,
                            fused_activation_function="RELU"))
    model_bytes = mb.build(inputs=[x], outputs=[y])

Custom operators (``add_operator("CUSTOM", ..., custom_code="ethos-u", custom_options=b"...")``)
and model metadata (``add_metadata(name, data)``) are written too, for the Ethos-U output.

``extract_operator(model_bytes, k)`` turns operator ``k`` of an existing model into a single-op
model (tensors, quantisation, constant data and options copied).

Options are given generically: ``options(<TableName>, **fields)`` with snake_case field names
matching the schema (``stride_w``, ``fused_activation_function``, ``depth_multiplier``,
``new_shape``...).  Enum-valued fields accept the enum member name as a string.  List values are
written as int32 vectors.  Tensor inputs may be ``-1`` for an omitted optional input.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

import flatbuffers
import numpy as np
from ethosu.vela.tflite import (
    Buffer,
    BuiltinOperator,
    BuiltinOptions,
    Metadata,
    Model,
    Operator,
    OperatorCode,
    QuantizationParameters,
    SubGraph,
    Tensor,
    TensorType,
)

__all__ = ["DTYPES", "ModelBuilder", "OpOptions", "extract_operator", "options", "read_options"]

# name -> (TensorType enum value, numpy dtype)
DTYPES: dict[str, tuple[int, Any]] = {
    "float32": (TensorType.TensorType.FLOAT32, np.float32),
    "int32": (TensorType.TensorType.INT32, np.int32),
    "uint8": (TensorType.TensorType.UINT8, np.uint8),
    "int64": (TensorType.TensorType.INT64, np.int64),
    "int16": (TensorType.TensorType.INT16, np.int16),
    "int8": (TensorType.TensorType.INT8, np.int8),
    "bool": (TensorType.TensorType.BOOL, np.bool_),
}

_ENUM_FIELDS = {
    "padding": ("Padding", {"SAME": 0, "VALID": 1}),
    "fused_activation_function": (
        "ActivationFunctionType",
        {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3, "TANH": 4, "SIGN_BIT": 5},
    ),
}


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


@dataclass
class OpOptions:
    """Builtin options of an operator: the schema table name and its (snake_case) fields."""

    table: str
    fields: dict[str, Any] = field(default_factory=dict)


def options(table: str, **fields: Any) -> OpOptions:
    """Make an :class:`OpOptions`, e.g. ``options("Pool2DOptions", filter_width=2, ...)``."""
    return OpOptions(table, fields)


@dataclass
class _TensorSpec:
    name: str
    shape: list[int]
    type: int
    buffer: int
    scale: list[float] | None
    zero_point: list[int] | None
    quantized_dimension: int


@dataclass
class _OpSpec:
    opcode_index: int
    inputs: list[int]
    outputs: list[int]
    options: OpOptions | None
    custom_options: bytes | None = None


class ModelBuilder:
    """Accumulates tensors, constant buffers and operators of a single-subgraph model."""

    def __init__(self) -> None:
        self._buffers: list[bytes] = [b""]  # buffer 0 is the conventional empty sentinel
        self._tensors: list[_TensorSpec] = []
        self._opcodes: list[tuple[int, int, str | None]] = []  # (builtin code, version, custom code)
        self._ops: list[_OpSpec] = []
        self._metadata: list[tuple[str, int]] = []  # (name, buffer index)

    # -- tensors -----------------------------------------------------------------------------
    def add_tensor(
        self,
        name: str,
        shape: list[int] | tuple[int, ...],
        dtype: str = "int8",
        *,
        scale: float | list[float] | None = None,
        zero_point: int | list[int] | None = None,
        quantized_dimension: int = 0,
        data: np.ndarray | bytes | None = None,
    ) -> int:
        """Add a tensor and return its index.

        ``scale``/``zero_point`` may be scalars (per-tensor) or lists (per-channel along
        ``quantized_dimension``; a scalar zero point is broadcast to the scale count).  ``data``
        makes the tensor a constant: a numpy array is cast to ``dtype`` and must have ``shape``.
        """
        if dtype not in DTYPES:
            raise ValueError(f"unsupported dtype {dtype!r}")
        ttype, np_dtype = DTYPES[dtype]
        buffer_index = 0
        if data is not None:
            if isinstance(data, np.ndarray):
                arr = np.asarray(data)
                if tuple(arr.shape) != tuple(shape) and arr.size != int(np.prod(shape)):
                    raise ValueError(f"data shape {arr.shape} does not match {tuple(shape)}")
                raw = np.ascontiguousarray(arr.astype(np_dtype, copy=False)).tobytes()
            else:
                raw = bytes(data)
            buffer_index = len(self._buffers)
            self._buffers.append(raw)
        scales: list[float] | None = None
        zps: list[int] | None = None
        if scale is not None:
            scales = [float(s) for s in np.atleast_1d(np.asarray(scale, dtype=np.float64))]
            if zero_point is None:
                zero_point = 0
            zp_arr = np.atleast_1d(np.asarray(zero_point, dtype=np.int64))
            if zp_arr.size == 1 and len(scales) > 1:
                zp_arr = np.repeat(zp_arr, len(scales))
            zps = [int(z) for z in zp_arr]
        self._tensors.append(
            _TensorSpec(name, [int(d) for d in shape], ttype, buffer_index, scales, zps,
                        quantized_dimension)
        )
        return len(self._tensors) - 1

    # -- operators ---------------------------------------------------------------------------
    def add_operator(
        self,
        opcode: str | int,
        inputs: list[int],
        outputs: list[int],
        opts: OpOptions | None = None,
        *,
        version: int = 1,
        custom_code: str | None = None,
        custom_options: bytes | None = None,
    ) -> int:
        """Add an operator (``opcode`` as a BuiltinOperator name or number); returns its index.

        A ``CUSTOM`` operator names its ``custom_code``; ``custom_options`` are its raw option
        bytes (written with the default, flexbuffer, format)."""
        code = getattr(BuiltinOperator.BuiltinOperator, opcode) if isinstance(opcode, str) \
            else int(opcode)
        key = (code, version, custom_code)
        if key not in self._opcodes:
            self._opcodes.append(key)
        self._ops.append(_OpSpec(self._opcodes.index(key), list(inputs), list(outputs), opts,
                                 custom_options))
        return len(self._ops) - 1

    def add_metadata(self, name: str, data: bytes) -> None:
        """Add a named metadata entry whose buffer holds ``data``."""
        self._buffers.append(bytes(data))
        self._metadata.append((name, len(self._buffers) - 1))

    # -- serialisation -----------------------------------------------------------------------
    def build(self, inputs: list[int], outputs: list[int],
              description: str = "cascade test model") -> bytes:
        """Serialise the model with the given subgraph input and output tensor indices."""
        b = flatbuffers.Builder(1024)

        def int_vector(start_fn, values: list[int]) -> int:
            start_fn(b, len(values))
            for v in reversed(values):
                b.PrependInt32(int(v))
            return b.EndVector()

        # Buffers.
        buffer_offsets = []
        for raw in self._buffers:
            data_off = None
            if raw:
                b.StartVector(1, len(raw), 16)
                b.head = b.head - len(raw)
                b.Bytes[b.head : b.head + len(raw)] = raw
                data_off = b.EndVector()
            Buffer.BufferStart(b)
            if data_off is not None:
                Buffer.BufferAddData(b, data_off)
            buffer_offsets.append(Buffer.BufferEnd(b))

        # Tensors.
        tensor_offsets = []
        for t in self._tensors:
            name_off = b.CreateString(t.name)
            shape_off = int_vector(Tensor.TensorStartShapeVector, t.shape)
            q_off = None
            if t.scale is not None:
                QuantizationParameters.QuantizationParametersStartScaleVector(b, len(t.scale))
                for s in reversed(t.scale):
                    b.PrependFloat32(s)
                scale_off = b.EndVector()
                QuantizationParameters.QuantizationParametersStartZeroPointVector(
                    b, len(t.zero_point))
                for z in reversed(t.zero_point):
                    b.PrependInt64(z)
                zp_off = b.EndVector()
                QuantizationParameters.QuantizationParametersStart(b)
                QuantizationParameters.QuantizationParametersAddScale(b, scale_off)
                QuantizationParameters.QuantizationParametersAddZeroPoint(b, zp_off)
                QuantizationParameters.QuantizationParametersAddQuantizedDimension(
                    b, t.quantized_dimension)
                q_off = QuantizationParameters.QuantizationParametersEnd(b)
            Tensor.TensorStart(b)
            Tensor.TensorAddShape(b, shape_off)
            Tensor.TensorAddType(b, t.type)
            Tensor.TensorAddBuffer(b, t.buffer)
            Tensor.TensorAddName(b, name_off)
            if q_off is not None:
                Tensor.TensorAddQuantization(b, q_off)
            tensor_offsets.append(Tensor.TensorEnd(b))

        # Operators.
        op_offsets = []
        for op in self._ops:
            in_off = int_vector(Operator.OperatorStartInputsVector, op.inputs)
            out_off = int_vector(Operator.OperatorStartOutputsVector, op.outputs)
            opt_type, opt_off = 0, None
            if op.options is not None:
                opt_type = getattr(BuiltinOptions.BuiltinOptions, op.options.table)
                opt_off = self._write_options(b, op.options)
            custom_off = None
            if op.custom_options is not None:
                custom_off = b.CreateByteVector(op.custom_options)
            Operator.OperatorStart(b)
            Operator.OperatorAddOpcodeIndex(b, op.opcode_index)
            Operator.OperatorAddInputs(b, in_off)
            Operator.OperatorAddOutputs(b, out_off)
            if opt_off is not None:
                Operator.OperatorAddBuiltinOptionsType(b, opt_type)
                Operator.OperatorAddBuiltinOptions(b, opt_off)
            if custom_off is not None:
                Operator.OperatorAddCustomOptions(b, custom_off)
            op_offsets.append(Operator.OperatorEnd(b))

        def table_vector(start_fn, offsets: list[int]) -> int:
            start_fn(b, len(offsets))
            for off in reversed(offsets):
                b.PrependUOffsetTRelative(off)
            return b.EndVector()

        # Subgraph.
        tensors_vec = table_vector(SubGraph.SubGraphStartTensorsVector, tensor_offsets)
        ops_vec = table_vector(SubGraph.SubGraphStartOperatorsVector, op_offsets)
        sg_in = int_vector(SubGraph.SubGraphStartInputsVector, inputs)
        sg_out = int_vector(SubGraph.SubGraphStartOutputsVector, outputs)
        sg_name = b.CreateString("main")
        SubGraph.SubGraphStart(b)
        SubGraph.SubGraphAddTensors(b, tensors_vec)
        SubGraph.SubGraphAddInputs(b, sg_in)
        SubGraph.SubGraphAddOutputs(b, sg_out)
        SubGraph.SubGraphAddOperators(b, ops_vec)
        SubGraph.SubGraphAddName(b, sg_name)
        subgraph_off = SubGraph.SubGraphEnd(b)

        # Operator codes.
        code_offsets = []
        for code, version, custom_code in self._opcodes:
            custom_off = b.CreateString(custom_code) if custom_code is not None else None
            OperatorCode.OperatorCodeStart(b)
            OperatorCode.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
            OperatorCode.OperatorCodeAddBuiltinCode(b, code)
            OperatorCode.OperatorCodeAddVersion(b, version)
            if custom_off is not None:
                OperatorCode.OperatorCodeAddCustomCode(b, custom_off)
            code_offsets.append(OperatorCode.OperatorCodeEnd(b))

        codes_vec = table_vector(Model.ModelStartOperatorCodesVector, code_offsets)
        subgraphs_vec = table_vector(Model.ModelStartSubgraphsVector, [subgraph_off])
        buffers_vec = table_vector(Model.ModelStartBuffersVector, buffer_offsets)
        metadata_offsets = []
        for name, buffer_index in self._metadata:
            name_off = b.CreateString(name)
            Metadata.MetadataStart(b)
            Metadata.MetadataAddName(b, name_off)
            Metadata.MetadataAddBuffer(b, buffer_index)
            metadata_offsets.append(Metadata.MetadataEnd(b))
        metadata_vec = table_vector(Model.ModelStartMetadataVector, metadata_offsets) \
            if metadata_offsets else None
        desc = b.CreateString(description)
        Model.ModelStart(b)
        Model.ModelAddVersion(b, 3)
        Model.ModelAddOperatorCodes(b, codes_vec)
        Model.ModelAddSubgraphs(b, subgraphs_vec)
        Model.ModelAddDescription(b, desc)
        Model.ModelAddBuffers(b, buffers_vec)
        if metadata_vec is not None:
            Model.ModelAddMetadata(b, metadata_vec)
        b.Finish(Model.ModelEnd(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    @staticmethod
    def _write_options(b: flatbuffers.Builder, opts: OpOptions) -> int:
        mod = importlib.import_module(f"ethosu.vela.tflite.{opts.table}")
        vectors: dict[str, int] = {}
        scalars: dict[str, Any] = {}
        for key, value in opts.fields.items():
            camel = _camel(key)
            if isinstance(value, (list, tuple, np.ndarray)):
                getattr(mod, f"{opts.table}Start{camel}Vector")(b, len(value))
                for v in reversed(list(value)):
                    b.PrependInt32(int(v))
                vectors[camel] = b.EndVector()
            else:
                if key in _ENUM_FIELDS and isinstance(value, str):
                    value = _ENUM_FIELDS[key][1][value]
                scalars[camel] = value
        getattr(mod, f"{opts.table}Start")(b)
        for camel, value in {**scalars, **vectors}.items():
            getattr(mod, f"{opts.table}Add{camel}")(b, value)
        return getattr(mod, f"{opts.table}End")(b)


# -------------------------------------------------------------------------------------------------
# Reading existing models
# -------------------------------------------------------------------------------------------------

_TYPE_NAMES = {code: name for name, (code, _np) in DTYPES.items()}


def read_options(op: Any) -> OpOptions | None:
    """The builtin options of a parsed ``ethosu.vela.tflite.Operator`` as :class:`OpOptions`
    (CamelCase field names, accepted by :meth:`ModelBuilder.add_operator` as well)."""
    type_code = op.BuiltinOptionsType()
    if type_code == 0:
        return None
    table_name = {v: k for k, v in vars(BuiltinOptions.BuiltinOptions).items()
                  if not k.startswith("_")}[type_code]
    mod = importlib.import_module(f"ethosu.vela.tflite.{table_name}")
    obj = getattr(mod, table_name)()
    table = op.BuiltinOptions()
    obj.Init(table.Bytes, table.Pos)
    prefix = f"{table_name}Add"
    fields: dict[str, Any] = {}
    for fn_name in dir(mod):
        if not fn_name.startswith(prefix):
            continue
        name = fn_name[len(prefix):]
        if hasattr(mod, f"{table_name}Start{name}Vector"):
            fields[name] = [int(v) for v in getattr(obj, f"{name}AsNumpy")()] \
                if getattr(obj, f"{name}Length")() else []
        else:
            fields[name] = getattr(obj, name)()
    return OpOptions(table_name, fields)


def extract_operator(model: bytes, op_index: int, subgraph: int = 0
                     ) -> tuple[bytes, list[int], list[int]]:
    """Copy operator ``op_index`` of ``model`` into a single-operator model.

    Its tensors keep shapes, types, names, quantisation and constant buffers; non-constant
    inputs become the model inputs (in operator-input order), the operator outputs the model
    outputs.  Returns ``(model_bytes, original input tensor indices, original output indices)``.
    """
    fb = Model.Model.GetRootAs(model, 0)
    sg = fb.Subgraphs(subgraph)
    op = sg.Operators(op_index)
    code = fb.OperatorCodes(op.OpcodeIndex())
    builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
    mb = ModelBuilder()
    new_index: dict[int, int] = {-1: -1}
    graph_inputs: list[int] = []
    original_inputs: list[int] = []
    op_inputs = [int(i) for i in op.InputsAsNumpy()]
    op_outputs = [int(i) for i in op.OutputsAsNumpy()]
    for t in op_inputs + op_outputs:
        if t in new_index:
            continue
        tensor = sg.Tensors(t)
        data = None
        buf = fb.Buffers(tensor.Buffer())
        if tensor.Buffer() > 0 and buf is not None and buf.DataLength() > 0:
            data = buf.DataAsNumpy().tobytes()
        quant = tensor.Quantization()
        scale = zero_point = None
        qdim = 0
        if quant is not None and quant.ScaleLength() > 0:
            scale = [float(v) for v in quant.ScaleAsNumpy()]
            zero_point = [int(v) for v in quant.ZeroPointAsNumpy()] if quant.ZeroPointLength() \
                else 0
            qdim = quant.QuantizedDimension()
        name = tensor.Name().decode() if tensor.Name() else f"t{t}"
        new_index[t] = mb.add_tensor(name, [int(d) for d in tensor.ShapeAsNumpy()],
                                     _TYPE_NAMES[tensor.Type()], scale=scale,
                                     zero_point=zero_point, quantized_dimension=qdim, data=data)
        if data is None and t in op_inputs:
            graph_inputs.append(new_index[t])
            original_inputs.append(t)
    mb.add_operator(builtin, [new_index[i] for i in op_inputs],
                    [new_index[i] for i in op_outputs], read_options(op),
                    version=code.Version())
    return mb.build(graph_inputs, [new_index[i] for i in op_outputs]), original_inputs, op_outputs
