"""`nn` operators as the TFLite builtin operators they stand for: the importer's inverse.

`write_operator(sink, op)` adds one operator to a model under construction (`sink.builder`, a
`tflite_writer.ModelBuilder`), its operands and result as the sink's tensors. The `ethosu-tflite`
writer uses it for the operators lower-to-ethosu leaves on the CPU, so that a model whose
operators the NPU cannot run (a concatenation, a stride-4 convolution, batch 2) is still a
.tflite that TFLite Micro runs. Each operator is written as `frontends.tflite` imports it back:

* conv2d, depthwise_conv2d and pool2d take TFLite's SAME or VALID padding, whichever equals the
  explicit one; a convolution padded otherwise is a PAD (with the input's zero point, the real
  0 a convolution pads with) before a VALID convolution, a pooling cannot be written;
* transpose_conv2d is TRANSPOSE_CONV with its output-shape input, SAME or VALID as imported;
* rescale is QUANTIZE (int8 to int8), sigmoid LOGISTIC, mean MEAN with its axes as a tensor;
* concat is CONCATENATION, of inputs quantized as its output only (TFLite's int8 kernel copies);
* weights keep their per-channel scales (`Quantization`: one constant tensor per quantization
  its readers read it with); the int32 bias gets input scale x weight scale per channel, as
  TFLite expects.

An operator TFLite cannot express raises `TFLiteExportError` naming it and why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from ethosu.vela.tflite.Padding import Padding
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from cascade.dialects import nn
from cascade.frontends.tflite import ACTIVATIONS, window_padding
from cascade.frontends.tflite_writer import ModelBuilder, OpOptions, options

__all__ = ["Quantization", "TFLiteExportError", "TensorSink", "write_operator"]


class TFLiteExportError(ValueError):
    """An `nn` operator with no TFLite builtin form (say, pooling with a padding that is
    neither SAME nor VALID)."""


class TensorSink(Protocol):
    """The tensors of the model under construction."""

    builder: ModelBuilder

    def value(self, value: SSAValue) -> int:
        """The tensor of an activation, made on first use."""
        ...

    def constant(self, value: SSAValue, quantization: Quantization | None) -> int:
        """The tensor of an `arith.constant` quantized so, made on first use."""
        ...

    def tensor(
        self,
        name: str,
        shape: Sequence[int],
        dtype: str,
        *,
        quant: nn.QuantAttr | None = None,
        data: bytes | None = None,
    ) -> int:
        """A new tensor named after `name` (made unique): a constant with `data`, else an
        intermediate the model's operators compute."""
        ...


_ACTIVATIONS = {activation: code for code, activation in ACTIVATIONS.items()}
"""The TFLite fused activation code of each nn activation (the importer's table, inverted)."""


@dataclass(frozen=True)
class Quantization:
    """How a constant tensor is quantized for the operator that reads it."""

    scales: tuple[float, ...]
    zero_points: tuple[int, ...]
    axis: int = 0


def _operand_quantization(op: nn.NNOperation, value: SSAValue) -> Quantization | None:
    """The quantization TFLite declares for `value` as `op` reads it: the weight quantization
    for weights, input scale x weight scale for an int32 bias (zero points 0), the operand's own
    for an activation operand; None if `op` does not read it."""
    if isinstance(op, nn.ConvolutionOperation | nn.FullyConnectedOp) and value is not op.input:
        quant = op.weight_quant
        if value is op.weight:
            return Quantization(tuple(quant.scales), tuple(quant.zero_points), max(quant.channel_axis, 0))
        channels = _shape(value)[0]
        weight_scales = list(quant.scales) if quant.is_per_channel else [quant.scales[0]] * channels
        input_scale = np.float32(op.input_quant.scales[0])
        scales = tuple(float(input_scale * np.float32(s)) for s in weight_scales)
        return Quantization(scales, (0,) * len(scales))
    for operand, quant, _ in op.quantized_operands():
        if operand is value:
            return Quantization(tuple(quant.scales), tuple(quant.zero_points), max(quant.channel_axis, 0))
    return None


def _operand(sink: TensorSink, op: nn.NNOperation, value: SSAValue) -> int:
    """The tensor `op` reads `value` from: a constant is written quantized as `op` reads it (one
    tensor per quantization: two operators may read the same constant with different scales)."""
    if isinstance(value.owner, ConstantOp):
        return sink.constant(value, _operand_quantization(op, value))
    return sink.value(value)


def write_operator(sink: TensorSink, op: nn.NNOperation) -> None:
    """Add `op` to `sink.builder` as its TFLite builtin operator (module docstring)."""
    writer = _WRITERS.get(type(op))
    if writer is None:
        raise TFLiteExportError(f"{op.name} has no TFLite builtin operator")
    writer(sink, op)


# --------------------------------------------------------------------------- #
# Windows: convolutions and pooling
# --------------------------------------------------------------------------- #


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _int32_constant(sink: TensorSink, name: str, values: Sequence[int] | Sequence[Sequence[int]]) -> int:
    """A constant int32 tensor of `values` (a shape, paddings, axes: the operands TFLite takes
    as tensors where nn has attributes)."""
    array = np.asarray(values, dtype="<i4")
    return sink.tensor(name, list(array.shape), "int32", data=array.tobytes())


def _padding_kind(
    rows_columns: Sequence[int],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
    paddings: tuple[int, int, int, int],
) -> str | None:
    """SAME or VALID, whichever pads a window over `rows_columns` by `paddings` (top, left,
    bottom, right); None if neither does."""
    top, left, bottom, right = paddings
    for name, kind in (("VALID", Padding.VALID), ("SAME", Padding.SAME)):
        rows = window_padding(kind, rows_columns[0], kernel[0], strides[0], dilations[0])
        columns = window_padding(kind, rows_columns[1], kernel[1], strides[1], dilations[1])
        if (rows, columns) == ((top, bottom), (left, right)):
            return name
    return None


def _window_options(op: nn.WindowOperation, padding: str) -> dict[str, object]:
    (sh, sw) = op.strides()
    return {
        "padding": padding,
        "stride_h": sh,
        "stride_w": sw,
        "fused_activation_function": _ACTIVATIONS[op.activation.data],
    }


def _padded_input(sink: TensorSink, op: nn.ConvolutionOperation) -> int:
    """A PAD of the input by `op`'s explicit padding, for a VALID convolution to read."""
    top, left, bottom, right = op.paddings()
    batch, height, width, depth = _shape(op.input)
    padded = (batch, height + top + bottom, width + left + right, depth)
    name = op.input.name_hint or "input"
    paddings = _int32_constant(sink, f"{name}_paddings", [[0, 0], [top, bottom], [left, right], [0, 0]])
    result = sink.tensor(f"{name}_padded", padded, "int8", quant=op.input_quant)
    sink.builder.add_operator("PAD", [_operand(sink, op, op.input), paddings], [result], version=2)
    return result


def _convolution(sink: TensorSink, op: nn.ConvolutionOperation) -> None:
    kernel = op.kernel_size()
    padding = _padding_kind(_shape(op.input)[1:3], kernel, op.strides(), op.dilations(), op.paddings())
    source = _operand(sink, op, op.input) if padding is not None else _padded_input(sink, op)
    fields = _window_options(op, padding or "VALID")
    dh, dw = op.dilations()
    fields.update(dilation_h_factor=dh, dilation_w_factor=dw)
    if isinstance(op, nn.DepthwiseConv2DOp):
        opcode, table = "DEPTHWISE_CONV_2D", "DepthwiseConv2DOptions"
        fields["depth_multiplier"] = op.depth_multiplier()
    else:
        opcode, table = "CONV_2D", "Conv2DOptions"
    inputs = [source, _operand(sink, op, op.weight), _operand(sink, op, op.bias)]
    sink.builder.add_operator(opcode, inputs, [sink.value(op.output)], options(table, **fields), version=3)


def _transpose_convolution(sink: TensorSink, op: nn.TransposeConv2DOp) -> None:
    out_shape = _shape(op.output)
    # As imported: padded as the convolution from the output back to the input.
    padding = _padding_kind(out_shape[1:3], op.kernel_size(), op.strides(), (1, 1), op.paddings())
    if padding is None or op.dilations() != (1, 1):
        raise TFLiteExportError(f"{op.name}: TRANSPOSE_CONV pads only as SAME or VALID, without dilation")
    shape = _int32_constant(sink, f"{op.output.name_hint or 'output'}_shape", out_shape)
    inputs = [shape, _operand(sink, op, op.weight), _operand(sink, op, op.input), _operand(sink, op, op.bias)]
    fields = _window_options(op, padding)
    sink.builder.add_operator(
        "TRANSPOSE_CONV", inputs, [sink.value(op.output)], options("TransposeConvOptions", **fields), version=3
    )


def _pool(sink: TensorSink, op: nn.Pool2DOp) -> None:
    kernel = op.kernel_size()
    padding = _padding_kind(_shape(op.input)[1:3], kernel, op.strides(), op.dilations(), op.paddings())
    if padding is None or op.dilations() != (1, 1):
        # A PAD before would change what an average counts, and max pooling pads with -inf.
        raise TFLiteExportError(f"{op.name}: TFLite pools only with SAME or VALID padding, without dilation")
    opcode = "MAX_POOL_2D" if op.kind.data == nn.PoolKind.MAX else "AVERAGE_POOL_2D"
    fields = _window_options(op, padding)
    fields.update(filter_height=kernel[0], filter_width=kernel[1])
    sink.builder.add_operator(
        opcode, [_operand(sink, op, op.input)], [sink.value(op.output)], options("Pool2DOptions", **fields), version=2
    )


# --------------------------------------------------------------------------- #
# Everything else
# --------------------------------------------------------------------------- #


_BINARY_OPCODES: dict[type[Operation], str] = {
    nn.AddOp: "ADD",
    nn.SubOp: "SUB",
    nn.MulOp: "MUL",
    nn.MinimumOp: "MINIMUM",
    nn.MaximumOp: "MAXIMUM",
}


def _binary(sink: TensorSink, op: nn.BinaryOperation) -> None:
    opcode = _BINARY_OPCODES[type(op)]
    activation = op.activation.data
    table: OpOptions | None = None
    if opcode in ("ADD", "SUB", "MUL"):
        table = options(f"{opcode.title()}Options", fused_activation_function=_ACTIVATIONS[activation])
    elif activation != nn.Activation.NONE:
        raise TFLiteExportError(f"{op.name}: {opcode} has no fused activation")
    inputs = [_operand(sink, op, op.input), _operand(sink, op, op.input2)]
    sink.builder.add_operator(opcode, inputs, [sink.value(op.output)], table, version=2)


def _fully_connected(sink: TensorSink, op: nn.FullyConnectedOp) -> None:
    inputs = [
        _operand(sink, op, op.input),
        _operand(sink, op, op.weight),
        _operand(sink, op, op.bias) if op.bias is not None else -1,
    ]
    table = options("FullyConnectedOptions", fused_activation_function=_ACTIVATIONS[op.activation.data])
    sink.builder.add_operator("FULLY_CONNECTED", inputs, [sink.value(op.output)], table, version=4)


def _mean(sink: TensorSink, op: nn.MeanOp) -> None:
    axis = _int32_constant(sink, f"{op.output.name_hint or 'mean'}_axes", op.reduced_axes())
    table = options("ReducerOptions", keep_dims=bool(op.keep_dims.value.data))
    sink.builder.add_operator("MEAN", [_operand(sink, op, op.input), axis], [sink.value(op.output)], table, version=2)


def _probability_output(op: nn.UnaryOperation, opcode: str) -> None:
    """TFLite's int8 SOFTMAX and LOGISTIC take only the output quantization 1/256:-128."""
    quant = op.output_quant
    if (quant.scales[0], quant.zero_points[0]) != (1 / 256, -128):
        raise TFLiteExportError(f"{op.name}: TFLite's int8 {opcode} needs the output quantization 1/256:-128")


def _softmax(sink: TensorSink, op: nn.SoftmaxOp) -> None:
    _probability_output(op, "SOFTMAX")
    table = options("SoftmaxOptions", beta=op.beta.value.data)
    sink.builder.add_operator("SOFTMAX", [_operand(sink, op, op.input)], [sink.value(op.output)], table, version=2)


def _unary(opcode: str, version: int = 2) -> Callable[[TensorSink, nn.UnaryOperation], None]:
    def write(sink: TensorSink, op: nn.UnaryOperation) -> None:
        if opcode == "LOGISTIC":
            _probability_output(op, opcode)
        sink.builder.add_operator(opcode, [_operand(sink, op, op.input)], [sink.value(op.output)], version=version)

    return write


def _leaky_relu(sink: TensorSink, op: nn.LeakyReluOp) -> None:
    table = options("LeakyReluOptions", alpha=op.alpha.value.data)
    sink.builder.add_operator("LEAKY_RELU", [_operand(sink, op, op.input)], [sink.value(op.output)], table, version=2)


def _relu(sink: TensorSink, op: nn.ReluOp) -> None:
    # The versions TFLite's converter writes for int8: LiteRT has no RELU_N1_TO_1 but version 1.
    opcode, version = {"relu": ("RELU", 2), "relu6": ("RELU6", 2), "relu_n1_to_1": ("RELU_N1_TO_1", 1)}[
        op.activation.data.value
    ]
    sink.builder.add_operator(opcode, [_operand(sink, op, op.input)], [sink.value(op.output)], version=version)


def _pad(sink: TensorSink, op: nn.PadOp) -> None:
    paddings = _int32_constant(sink, f"{op.output.name_hint or 'pad'}_paddings", op.pads())
    sink.builder.add_operator("PAD", [_operand(sink, op, op.input), paddings], [sink.value(op.output)], version=2)


def _reshape(sink: TensorSink, op: nn.ReshapeOp) -> None:
    shape = list(_shape(op.output))
    target = _int32_constant(sink, f"{op.output.name_hint or 'reshape'}_shape", shape)
    table = options("ReshapeOptions", new_shape=shape)
    sink.builder.add_operator("RESHAPE", [_operand(sink, op, op.input), target], [sink.value(op.output)], table)


def _concat(sink: TensorSink, op: nn.ConcatOp) -> None:
    # TFLite's int8 CONCATENATION copies bytes: it needs every input quantized as its output
    # (LiteRT refuses others), and a QUANTIZE before it rounds otherwise than nn.concat does.
    if any(quant != op.output_quant for quant in op.input_quants.data):
        raise TFLiteExportError(f"{op.name}: TFLite concatenates only inputs quantized as its output")
    inputs = [_operand(sink, op, value) for value in op.inputs]
    table = options("ConcatenationOptions", axis=op.concat_axis(), fused_activation_function="NONE")
    sink.builder.add_operator("CONCATENATION", inputs, [sink.value(op.output)], table, version=2)


def _resize(sink: TensorSink, op: nn.ResizeOp) -> None:
    nearest = op.mode.data == nn.ResizeMode.NEAREST
    opcode, table = (
        ("RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighborOptions")
        if nearest
        else ("RESIZE_BILINEAR", "ResizeBilinearOptions")
    )
    target = _int32_constant(sink, f"{op.output.name_hint or 'resize'}_size", _shape(op.output)[1:3])
    fields = options(
        table,
        align_corners=bool(op.align_corners.value.data),
        half_pixel_centers=bool(op.half_pixel_centers.value.data),
    )
    sink.builder.add_operator(
        opcode, [_operand(sink, op, op.input), target], [sink.value(op.output)], fields, version=2
    )


_WRITERS: dict[type[Operation], Callable[[TensorSink, nn.NNOperation], None]] = {  # type: ignore[dict-item]
    nn.Conv2DOp: _convolution,
    nn.DepthwiseConv2DOp: _convolution,
    nn.TransposeConv2DOp: _transpose_convolution,
    nn.Pool2DOp: _pool,
    **dict.fromkeys(_BINARY_OPCODES, _binary),
    nn.FullyConnectedOp: _fully_connected,
    nn.MeanOp: _mean,
    nn.SoftmaxOp: _softmax,
    nn.TanhOp: _unary("TANH"),
    nn.SigmoidOp: _unary("LOGISTIC"),
    nn.RescaleOp: _unary("QUANTIZE"),
    nn.LeakyReluOp: _leaky_relu,
    nn.HardSwishOp: _unary("HARD_SWISH", version=1),
    nn.ReluOp: _relu,
    nn.PadOp: _pad,
    nn.ReshapeOp: _reshape,
    nn.ConcatOp: _concat,
    nn.ResizeOp: _resize,
}
