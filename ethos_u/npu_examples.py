"""Single-operator `nn` programs for testing the NPU lowering against the `nn` interpreter.

`single_op_module(kind, ...)` builds `@main` with one `nn` operator whose weights and biases
are `arith.constant`s, so the same module runs in the `nn` interpreter and lowers to `ethosu`
commands. Random parameters come from a numpy generator, so tests stay deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    ModuleOp,
    TensorType,
    f32,
    i8,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue

from cascade.dialects import ethosu, nn
from cascade.ethos_u.npu_lowering import Box, LoweredOp, Placement, hwc_shape, lower_op

__all__ = ["NpuRun", "SingleOp", "row_stripes", "run_on_npu", "single_op_module"]


@dataclass
class SingleOp:
    """A module with one `nn` operator, its inputs' shapes and the operator itself."""

    module: ModuleOp
    op: Operation
    input_shapes: list[tuple[int, ...]]


def _constant(values: np.ndarray, element: object) -> arith.ConstantOp:
    ty = TensorType(element, values.shape)  # type: ignore[arg-type]
    return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(ty, [int(v) for v in values.ravel()]))


def _array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def _quant(rng: np.random.Generator, low: float = 0.005, high: float = 0.1) -> nn.QuantAttr:
    return nn.QuantAttr(float(rng.uniform(low, high)), int(rng.integers(-20, 21)))


def _window_out(size: int, kernel: int, stride: int, dilation: int, pad: int) -> int:
    return (size + pad - ((kernel - 1) * dilation + 1)) // stride + 1


def single_op_module(
    kind: str,
    rng: np.random.Generator,
    *,
    shape: tuple[int, int, int] = (8, 8, 8),
    out_channels: int = 8,
    kernel: tuple[int, int] = (3, 3),
    stride: tuple[int, int] = (1, 1),
    dilation: tuple[int, int] = (1, 1),
    padding: tuple[int, int, int, int] = (1, 1, 1, 1),
    activation: str = "none",
    per_channel: bool = True,
    broadcast: str | None = None,
) -> SingleOp:
    """One operator of `kind` (conv2d, depthwise_conv2d, max_pool, avg_pool, add, sub, mul,
    minimum, maximum, fully_connected, rescale, tanh, sigmoid, leaky_relu, hard_swish, relu, mean,
    pad, resize_nearest) on a `[1, *shape]` int8 input. `broadcast` makes one input of a binary op
    smaller (see the binary branch)."""
    height, width, depth = shape
    in_shapes: list[tuple[int, ...]] = [(1, height, width, depth)]
    in_quant = _quant(rng)
    out_quant = _quant(rng, 0.02, 0.2)
    act = nn.ActivationAttr(nn.Activation(activation))
    constants: list[Operation] = []
    props: dict[str, object]
    window = {
        "stride": _array(stride),
        "dilation": _array(dilation),
        "padding": _array(padding),
        "activation": act,
    }
    if kind in ("conv2d", "depthwise_conv2d"):
        kh, kw = kernel
        cout = depth if kind == "depthwise_conv2d" else out_channels
        w_shape = (1, kh, kw, depth) if kind == "depthwise_conv2d" else (cout, kh, kw, depth)
        weights = rng.integers(-127, 128, size=w_shape)
        bias = rng.integers(-2000, 2000, size=(cout,))
        scales = rng.uniform(0.002, 0.02, size=cout) if per_channel else [float(rng.uniform(0.002, 0.02))]
        axis = (3 if kind == "depthwise_conv2d" else 0) if per_channel else -1
        w_quant = nn.QuantAttr([float(s) for s in scales], [0] * len(scales), axis)
        constants = [_constant(weights, i8), _constant(bias, i32)]
        oh = _window_out(height, kh, stride[0], dilation[0], padding[0] + padding[2])
        ow = _window_out(width, kw, stride[1], dilation[1], padding[1] + padding[3])
        out_shape: tuple[int, ...] = (1, oh, ow, cout)
        cls = nn.Conv2DOp if kind == "conv2d" else nn.DepthwiseConv2DOp
        props = {**window, "input_quant": in_quant, "weight_quant": w_quant, "output_quant": out_quant}
    elif kind in ("max_pool", "avg_pool"):
        kh, kw = kernel
        oh = _window_out(height, kh, stride[0], 1, padding[0] + padding[2])
        ow = _window_out(width, kw, stride[1], 1, padding[1] + padding[3])
        out_shape = (1, oh, ow, depth)
        cls = nn.Pool2DOp
        pool = nn.PoolKind.MAX if kind == "max_pool" else nn.PoolKind.AVG
        props = {
            **window,
            "kind": nn.PoolKindAttr(pool),
            "kernel": _array(kernel),
            "input_quant": in_quant,
            "output_quant": in_quant,
        }
    elif kind in ("add", "sub", "mul", "minimum", "maximum"):
        # `broadcast`: "c", "h", "w" or "hw" gives the second input size 1 along those axes;
        # a leading "first:" broadcasts the first input instead.
        axes = (broadcast or "").removeprefix("first:")
        small = tuple(1 if name in axes else size for name, size in zip("nhwc", in_shapes[0], strict=True))
        out_shape = in_shapes[0]
        in_shapes = [small, in_shapes[0]] if (broadcast or "").startswith("first:") else [in_shapes[0], small]
        cls = {"add": nn.AddOp, "sub": nn.SubOp, "mul": nn.MulOp, "minimum": nn.MinimumOp, "maximum": nn.MaximumOp}[
            kind
        ]
        if kind in ("minimum", "maximum"):
            props = {"activation": act, "input_quant": in_quant, "input2_quant": in_quant, "output_quant": in_quant}
        else:
            in2_quant = _quant(rng)
            if kind in ("add", "sub"):  # keep the output multiplier below 1, as TFLite requires
                out_quant = nn.QuantAttr(
                    2.5 * max(in_quant.scales[0], in2_quant.scales[0]) * float(rng.uniform(1.0, 4.0)),
                    int(rng.integers(-20, 21)),
                )
            else:
                out_quant = nn.QuantAttr(
                    in_quant.scales[0] * in2_quant.scales[0] * float(rng.uniform(20.0, 200.0)),
                    int(rng.integers(-20, 21)),
                )
            props = {"activation": act, "input_quant": in_quant, "input2_quant": in2_quant, "output_quant": out_quant}
    elif kind == "fully_connected":
        in_shapes = [(height, depth)]
        weights = rng.integers(-127, 128, size=(out_channels, depth))
        bias = rng.integers(-2000, 2000, size=(out_channels,))
        w_quant = nn.QuantAttr(float(rng.uniform(0.002, 0.02)), 0)
        constants = [_constant(weights, i8), _constant(bias, i32)]
        out_shape = (height, out_channels)
        cls = nn.FullyConnectedOp
        props = {"activation": act, "input_quant": in_quant, "weight_quant": w_quant, "output_quant": out_quant}
    elif kind == "rescale":
        out_shape = in_shapes[0]
        cls = nn.RescaleOp
        props = {"input_quant": in_quant, "output_quant": out_quant}
    elif kind == "mean":
        out_shape = (1, 1, 1, depth)
        cls = nn.MeanOp
        props = {
            "axes": _array((1, 2)),
            "keep_dims": BoolAttr.from_bool(True),
            "input_quant": in_quant,
            "output_quant": out_quant,
        }
    elif kind == "pad":
        top, left, bottom, right = padding
        out_shape = (1, height + top + bottom, width + left + right, depth)
        cls = nn.PadOp
        props = {
            "padding": _array((0, 0, top, bottom, left, right, 0, 0)),
            "input_quant": in_quant,
            "output_quant": in_quant,
        }
    elif kind == "resize_nearest":
        out_shape = (1, 2 * height, 2 * width, depth)
        cls = nn.ResizeOp
        props = {
            "mode": nn.ResizeModeAttr(nn.ResizeMode.NEAREST),
            "align_corners": BoolAttr.from_bool(False),
            "half_pixel_centers": BoolAttr.from_bool(bool(rng.integers(0, 2))),
            "input_quant": in_quant,
            "output_quant": in_quant,
        }
    elif kind in ("tanh", "sigmoid", "leaky_relu", "hard_swish", "relu"):
        out_shape = in_shapes[0]
        cls = {
            "tanh": nn.TanhOp,
            "sigmoid": nn.SigmoidOp,
            "leaky_relu": nn.LeakyReluOp,
            "hard_swish": nn.HardSwishOp,
            "relu": nn.ReluOp,
        }[kind]
        if kind == "tanh":
            out_quant = nn.QuantAttr(1.0 / 128, 0)
        elif kind == "sigmoid":
            out_quant = nn.QuantAttr(1.0 / 256, -128)
        props = {"input_quant": in_quant, "output_quant": out_quant}
        if kind == "leaky_relu":
            props["alpha"] = FloatAttr(float(rng.uniform(0.05, 0.5)), f32)
        if kind == "relu":
            clamps = (nn.Activation.RELU, nn.Activation.RELU6, nn.Activation.RELU_N1_TO_1)
            props["activation"] = nn.ActivationAttr(clamps[int(rng.integers(0, 3))])
    else:
        raise ValueError(f"unknown kind {kind!r}")

    block = Block(arg_types=[TensorType(i8, s) for s in in_shapes])
    operands: list[SSAValue] = [*block.args, *(c.results[0] for c in constants)]
    op = cls.create(operands=operands, result_types=[TensorType(i8, out_shape)], properties=props)  # type: ignore[arg-type]
    block.add_ops([*constants, op, func.ReturnOp(op.results[0])])
    function = func.FuncOp("main", ([TensorType(i8, s) for s in in_shapes], [TensorType(i8, out_shape)]), Region(block))
    module = ModuleOp([function])
    module.verify()
    return SingleOp(module, op, in_shapes)


@dataclass
class NpuRun:
    """The result of `run_on_npu`: the output, the lowering and the command stream run."""

    output: np.ndarray
    lowered: LoweredOp
    stream: ethosu.CommandStreamOp
    placements: list[Placement]


def row_stripes(shape: Sequence[int], rows: int) -> list[Box]:
    """Full-width, full-depth stripes of `rows` output rows of an `[h, w, c]` output."""
    height, width, depth = shape
    return [Box(y, 0, 0, min(rows, height - y), width, depth) for y in range(0, height, rows)]


def run_on_npu(
    single: SingleOp,
    inputs: Sequence[np.ndarray],
    *,
    stripes: Sequence[Box] | None = None,
    layouts: Sequence[ethosu.Layout] | None = None,
    rolling_input_rows: int | None = None,
    rolling_output_rows: int | None = None,
    accelerator: str = "ethos-u55-128",
) -> NpuRun:
    """Lowers `single.op` and runs it on the functional model, stripe by stripe.

    Activations live in region 1 (SRAM), constants in region 0. With `rolling_input_rows`
    the first input is held in a rolling buffer that a simulated producer fills with just the
    rows each stripe reads before the stripe runs; with `rolling_output_rows` the output goes
    to a rolling buffer whose rows are copied out after each stripe (the consumer's view).
    """
    from cascade.interpreter.ethosu import EthosUMachine, read_feature_map, write_feature_map

    op = single.op
    out_type = op.results[0].type
    assert isinstance(out_type, TensorType)
    out_full_shape = tuple(out_type.get_shape())
    shapes = [hwc_shape(s) for s in single.input_shapes] + [hwc_shape(out_full_shape)]
    layouts = list(layouts) if layouts is not None else [ethosu.Layout.NHWC] * len(shapes)
    placements: list[Placement] = []
    address = 0
    for index, (shape, layout) in enumerate(zip(shapes, layouts, strict=True)):
        rolling = rolling_input_rows if index == 0 else None
        if index == len(shapes) - 1:
            rolling = rolling_output_rows
        placement = Placement(1, address, shape, layout, rolling)
        placements.append(placement)
        address += -(-placement.size // 16) * 16
    stripes = list(stripes) if stripes is not None else [Box.full(shapes[-1])]
    lowered = lower_op(op, placements, stripes, accelerator=accelerator)
    flash = lowered.constant_data
    sram = np.zeros(address + 16, dtype=np.uint8)
    machine = EthosUMachine(accelerator, {0: flash or bytes(16), 1: sram})
    for index, (placement, value) in enumerate(zip(placements, inputs, strict=False)):
        if placement.rolling_rows is None or index != 0:
            write_feature_map(
                sram, placement.feature_map(Box.full(placement.shape), None), value.reshape(placement.shape)
            )
    output = np.zeros(shapes[-1], dtype=np.int64)
    out_placement = placements[-1]
    rank = len(out_full_shape)
    stream = ethosu.CommandStreamOp(accelerator, [command.clone() for command in lowered.commands])
    commands = iter(stream.commands)
    for stripe in lowered.stripes:
        if placements[0].rolling_rows is not None:
            region = op.input_regions(stripe.output.to_region(rank))[0]  # type: ignore[attr-defined]
            rows = Box.from_region(region)
            rows = Box(rows.y, 0, 0, rows.height, placements[0].shape[1], placements[0].shape[2])
            source = inputs[0].reshape(placements[0].shape)[rows.y : rows.y + rows.height]
            write_feature_map(machine.memory[1], placements[0].feature_map(rows, None), source)
        for _ in stripe.commands:
            machine.execute(next(commands))
        if out_placement.rolling_rows is not None:
            box = stripe.output
            values = read_feature_map(machine.memory[1], out_placement.feature_map(box, None))
            output[box.y : box.y + box.height, box.x : box.x + box.width, box.c : box.c + box.depth] = values
    if out_placement.rolling_rows is None:
        output = read_feature_map(machine.memory[1], out_placement.feature_map(Box.full(shapes[-1]), None))
    return NpuRun(output.reshape(out_full_shape).astype(np.int8), lowered, stream, placements)
