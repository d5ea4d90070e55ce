"""Executes `nn` programs with TFLite's exact integer arithmetic (see `kernels`).

Built on xDSL's interpreter: each `nn` operator has an implementation that calls
the matching kernel with the operator's quantization and attributes. `run_program`
runs `@main` and also returns every value computed, so callers can compare
intermediates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    ModuleOp,
    NameLoc,
    TensorType,
)
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Operation, SSAValue

from cascade.dialects import nn
from cascade.interpreter import kernels
from cascade.interpreter.cascade import CascadeFunctions
from cascade.interpreter.constants import InterpretationError, constant_array


def _activation(op: Operation) -> str:
    attr = getattr(op, "activation", None)
    return "NONE" if attr is None else attr.data.upper()


def _scale(quant: nn.QuantAttr) -> float:
    return quant.scales[0]


def _zero_point(quant: nn.QuantAttr) -> int:
    return quant.zero_points[0]


def _io_quant(op: Any) -> dict[str, Any]:
    return {
        "input_scale": _scale(op.input_quant),
        "input_zero_point": _zero_point(op.input_quant),
        "output_scale": _scale(op.output_quant),
        "output_zero_point": _zero_point(op.output_quant),
    }


def _weight_scales(quant: nn.QuantAttr) -> float | Sequence[float]:
    return list(quant.scales) if quant.is_per_channel else quant.scales[0]


@register_impls
class NNFunctions(InterpreterFunctions):
    """numpy semantics of every `nn` operator, plus `arith.constant` for weights."""

    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues) -> PythonValues:
        if not isinstance(op.value, DenseIntOrFPElementsAttr):
            raise InterpretationError(f"unsupported constant {op.value}")
        return (constant_array(op.value),)

    @impl(nn.Conv2DOp)
    def run_conv2d(self, interpreter: Interpreter, op: nn.Conv2DOp, args: PythonValues) -> PythonValues:
        x, w, b = args
        return (
            kernels.conv2d(
                x,
                w,
                b,
                weight_scales=_weight_scales(op.weight_quant),
                stride=op.strides(),
                dilation=op.dilations(),
                padding=op.paddings(),
                activation=_activation(op),
                **_io_quant(op),
            ),
        )

    @impl(nn.DepthwiseConv2DOp)
    def run_depthwise(self, interpreter: Interpreter, op: nn.DepthwiseConv2DOp, args: PythonValues) -> PythonValues:
        x, w, b = args
        return (
            kernels.depthwise_conv2d(
                x,
                w,
                b,
                weight_scales=_weight_scales(op.weight_quant),
                stride=op.strides(),
                dilation=op.dilations(),
                padding=op.paddings(),
                depth_multiplier=op.depth_multiplier(),
                activation=_activation(op),
                **_io_quant(op),
            ),
        )

    @impl(nn.TransposeConv2DOp)
    def run_transpose_conv(
        self, interpreter: Interpreter, op: nn.TransposeConv2DOp, args: PythonValues
    ) -> PythonValues:
        x, w, b = args
        top, left, _, _ = op.paddings()
        out_type = op.output.type
        assert isinstance(out_type, TensorType)
        return (
            kernels.transpose_conv(
                x,
                w,
                b,
                output_shape=out_type.get_shape(),
                weight_scales=_weight_scales(op.weight_quant),
                stride=op.strides(),
                padding=(top, left),
                activation=_activation(op),
                **_io_quant(op),
            ),
        )

    @impl(nn.Pool2DOp)
    def run_pool(self, interpreter: Interpreter, op: nn.Pool2DOp, args: PythonValues) -> PythonValues:
        pool = kernels.max_pool2d if op.kind.data == nn.PoolKind.MAX else kernels.avg_pool2d
        return (
            pool(
                args[0],
                op.kernel_size(),
                op.strides(),
                padding=op.paddings(),
                activation=_activation(op),
                output_scale=_scale(op.output_quant),
                output_zero_point=_zero_point(op.output_quant),
            ),
        )

    @impl(nn.AddOp)
    def run_add(self, interpreter: Interpreter, op: nn.AddOp, args: PythonValues) -> PythonValues:
        return (kernels.add(*args, **_binary_quant(op)),)

    @impl(nn.SubOp)
    def run_sub(self, interpreter: Interpreter, op: nn.SubOp, args: PythonValues) -> PythonValues:
        return (kernels.sub(*args, **_binary_quant(op)),)

    @impl(nn.MulOp)
    def run_mul(self, interpreter: Interpreter, op: nn.MulOp, args: PythonValues) -> PythonValues:
        return (kernels.mul(*args, **_binary_quant(op)),)

    @impl(nn.MinimumOp)
    def run_minimum(self, interpreter: Interpreter, op: nn.MinimumOp, args: PythonValues) -> PythonValues:
        return (kernels.minimum(*args),)

    @impl(nn.MaximumOp)
    def run_maximum(self, interpreter: Interpreter, op: nn.MaximumOp, args: PythonValues) -> PythonValues:
        return (kernels.maximum(*args),)

    @impl(nn.FullyConnectedOp)
    def run_fully_connected(
        self, interpreter: Interpreter, op: nn.FullyConnectedOp, args: PythonValues
    ) -> PythonValues:
        x, w, *bias = args
        return (
            kernels.fully_connected(
                x,
                w,
                bias[0] if bias else None,
                weight_scales=_weight_scales(op.weight_quant),
                activation=_activation(op),
                **_io_quant(op),
            ),
        )

    @impl(nn.MeanOp)
    def run_mean(self, interpreter: Interpreter, op: nn.MeanOp, args: PythonValues) -> PythonValues:
        if op.reduced_axes() != (1, 2) or len(args[0].shape) != 4:
            raise InterpretationError(f"nn.mean is supported over axes [1, 2] of NHWC, got {list(op.reduced_axes())}")
        return (kernels.mean_hw(args[0], keep_dims=op.keep_dims.value.data != 0, **_io_quant(op)),)

    @impl(nn.SoftmaxOp)
    def run_softmax(self, interpreter: Interpreter, op: nn.SoftmaxOp, args: PythonValues) -> PythonValues:
        out = op.output_quant
        if (_scale(out), _zero_point(out)) != (1 / 256, -128):
            raise InterpretationError("int8 softmax needs the output quantization 1/256:-128, as TFLite requires")
        scale, beta = _scale(op.input_quant), op.beta.value.data
        if not kernels.softmax_reference_supported(scale, beta):
            # TFLite's reference kernel aborts for beta * scale * 2^26 <= 1; its default kernel
            # (a lookup table) is what TFLite itself computes there.
            return (kernels.softmax_lut(args[0], input_scale=scale, beta=beta),)
        return (kernels.softmax(args[0], input_scale=scale, beta=beta),)

    @impl(nn.PadOp)
    def run_pad(self, interpreter: Interpreter, op: nn.PadOp, args: PythonValues) -> PythonValues:
        return (kernels.pad(args[0], op.pads(), output_zero_point=_zero_point(op.output_quant)),)

    @impl(nn.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: nn.ReshapeOp, args: PythonValues) -> PythonValues:
        out_type = op.output.type
        assert isinstance(out_type, TensorType)
        return (kernels.reshape(args[0], out_type.get_shape()),)

    @impl(nn.ResizeOp)
    def run_resize(self, interpreter: Interpreter, op: nn.ResizeOp, args: PythonValues) -> PythonValues:
        out_type = op.output.type
        assert isinstance(out_type, TensorType)
        size = out_type.get_shape()[1:3]
        resize = kernels.resize_nearest_neighbor if op.mode.data == nn.ResizeMode.NEAREST else kernels.resize_bilinear
        return (
            resize(
                args[0],
                size,
                align_corners=op.align_corners.value.data != 0,
                half_pixel_centers=op.half_pixel_centers.value.data != 0,
            ),
        )

    @impl(nn.ConcatOp)
    def run_concat(self, interpreter: Interpreter, op: nn.ConcatOp, args: PythonValues) -> PythonValues:
        quants = list(op.input_quants.data)
        return (
            kernels.concatenation(
                list(args),
                axis=op.concat_axis(),
                input_scales=[_scale(q) for q in quants],
                input_zero_points=[_zero_point(q) for q in quants],
                output_scale=_scale(op.output_quant),
                output_zero_point=_zero_point(op.output_quant),
            ),
        )

    @impl(nn.TanhOp)
    def run_tanh(self, interpreter: Interpreter, op: nn.TanhOp, args: PythonValues) -> PythonValues:
        return (kernels.tanh(args[0], **_io_quant(op)),)

    @impl(nn.SigmoidOp)
    def run_sigmoid(self, interpreter: Interpreter, op: nn.SigmoidOp, args: PythonValues) -> PythonValues:
        return (kernels.sigmoid(args[0], **_io_quant(op)),)

    @impl(nn.ReluOp)
    def run_relu(self, interpreter: Interpreter, op: nn.ReluOp, args: PythonValues) -> PythonValues:
        return (kernels.relu(args[0], activation=_activation(op), **_io_quant(op)),)

    @impl(nn.HardSwishOp)
    def run_hard_swish(self, interpreter: Interpreter, op: nn.HardSwishOp, args: PythonValues) -> PythonValues:
        return (kernels.hard_swish(args[0], **_io_quant(op)),)

    @impl(nn.LeakyReluOp)
    def run_leaky_relu(self, interpreter: Interpreter, op: nn.LeakyReluOp, args: PythonValues) -> PythonValues:
        return (kernels.leaky_relu(args[0], alpha=op.alpha.value.data, **_io_quant(op)),)

    @impl(nn.RescaleOp)
    def run_rescale(self, interpreter: Interpreter, op: nn.RescaleOp, args: PythonValues) -> PythonValues:
        return (kernels.quantize(args[0], **_io_quant(op)),)


def _binary_quant(op: Any) -> dict[str, Any]:
    return {
        "input1_scale": _scale(op.input_quant),
        "input1_zero_point": _zero_point(op.input_quant),
        "input2_scale": _scale(op.input2_quant),
        "input2_zero_point": _zero_point(op.input2_quant),
        "output_scale": _scale(op.output_quant),
        "output_zero_point": _zero_point(op.output_quant),
        "activation": _activation(op),
    }


@dataclass
class _Recorder(Interpreter.Listener):
    values: dict[SSAValue, np.ndarray] = field(default_factory=dict)
    current: Operation | None = None

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        self.current = op

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        for value, result in zip(op.results, results, strict=True):
            self.values[value] = result


@dataclass
class ProgramRun:
    outputs: list[np.ndarray]
    values: dict[SSAValue, np.ndarray]


def describe_op(op: Operation | None) -> str:
    """An operator's name and, where it has one, its source tensor name."""
    if op is None:
        return "<no operation>"
    if isinstance(op.location, NameLoc):
        return f"{op.name} '{op.location.desc.data}'"
    if isinstance(op.location, FileLineColLoc):
        return f"{op.name} at {op.location.filename.data}:{op.location.line.data}:{op.location.column.data}"
    return op.name


def main_function(module: ModuleOp) -> func.FuncOp:
    """@main, or the only function of the module; never a declaration (it has nothing to run)."""
    function = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"), None)
    if function is None:
        functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
        if len(functions) != 1:
            raise InterpretationError("the module has no function @main to run")
        function = functions[0]
    if function.is_declaration:
        raise InterpretationError(f"@{function.sym_name.data} is a declaration without a body: nothing to run")
    return function


def input_types(module: ModuleOp) -> list[TensorType]:
    types = []
    for index, arg in enumerate(main_function(module).args):
        if not isinstance(arg.type, TensorType):
            raise InterpretationError(f"argument {index} of @main is not a tensor: {arg.type}")
        types.append(arg.type)
    return types


def check_tensor_sizes(module: ModuleOp) -> None:
    """Raise InterpretationError naming the first function argument or result over `nn.MAX_TENSOR_BYTES`.

    Checked before anything is allocated: numpy would otherwise fail with a MemoryError, or
    the operating system kill the process, on a tensor no target can hold anyway.
    """
    values: list[tuple[str, SSAValue]] = []
    for op in module.walk():
        if isinstance(op, func.FuncOp) and not op.is_declaration:
            values += [(f"argument {i} of @{op.sym_name.data}", arg) for i, arg in enumerate(op.args)]
        values += [(describe_op(op), result) for result in op.results]
    for what, value in values:
        if isinstance(value.type, TensorType) and (size := nn.tensor_bytes(value.type)) > nn.MAX_TENSOR_BYTES:
            raise InterpretationError(
                f"{what}: {value.type} has {size} bytes, more than the {nn.MAX_TENSOR_BYTES} (2^32) "
                "a 32-bit address space can hold"
            )


def run_program(module: ModuleOp, inputs: Sequence[np.ndarray]) -> ProgramRun:
    """Run `@main` on `inputs`; return its results and every value computed on the way."""
    function = main_function(module)
    check_tensor_sizes(module)
    types = input_types(module)
    if len(inputs) != len(types):
        raise InterpretationError(f"@main takes {len(types)} inputs, {len(inputs)} given")
    for index, (value, ty) in enumerate(zip(inputs, types, strict=True)):
        if tuple(value.shape) != ty.get_shape():
            raise InterpretationError(f"input {index} has shape {list(value.shape)}, @main expects {ty}")
    recorder = _Recorder()
    interpreter = Interpreter(module, listeners=(recorder,))
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(NNFunctions())
    interpreter.register_implementations(CascadeFunctions())
    for arg, value in zip(function.args, inputs, strict=True):
        recorder.values[arg] = value
    try:
        outputs = interpreter.call_op(function, tuple(inputs))
    except Exception as error:
        # xDSL wraps a failing implementation in a diagnostic that prints the whole module;
        # report the operator and the original reason instead.
        cause = error.__cause__ or error
        raise InterpretationError(f"{describe_op(recorder.current)}: {cause}") from error
    return ProgramRun([np.asarray(o) for o in outputs], recorder.values)


def constant_outputs(outputs: Sequence[np.ndarray]) -> list[int]:
    """The indices of the outputs that hold one value everywhere: equal to another program's
    on such an output shows little (a saturated layer, an all-zero result), so the checkers
    that compare two programs refuse to call it bit-exact."""
    return [index for index, output in enumerate(outputs) if np.asarray(output).size and np.unique(output).size < 2]
