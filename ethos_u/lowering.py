"""How each planner operator runs on the Ethos-U: the NPU operations it becomes.

`lower(op, output)` turns one `OpInfo` (an `nn` operator as the planner sees it) and a region
of its output into the `NpuOp`s the NPU executes for that region, mirroring how Vela maps
TFLite operators onto the hardware:

* conv2d, depthwise_conv2d, pool2d, fully_connected: one operation each (transpose_conv2d is a
  convolution over a 2x upscaled IFM);
* add, sub, mul, minimum, maximum: one elementwise operation, the broadcast operand as IFM2;
* mean over height and width: a depthwise convolution with an all-ones kernel producing int32
  sums, then an elementwise multiply by 1 / (H * W) back to int8;
* softmax: Vela's int8 decomposition (max, subtract-and-exponentiate through a table, sum,
  reciprocal by Newton-Raphson on 1x1 scalars, scale), about thirty small operations;
* tanh, sigmoid, leaky_relu, hard_swish, relu: a 1x1 average pool through a 256-entry table;
  rescale, pad, resize and concat: 1x1 average pools copying (and upscaling) into the output;
* reshape: nothing (a view of the same bytes).

Feature maps are described in (height, width, depth): NHWC tensors fold their batch into the
height, 2-D [rows, columns] tensors become (1, rows, columns).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cascade.dialects import ethosu
from cascade.dialects.access import Region
from cascade.ethos_u.performance import Activation, Kernel, Layout, NpuKind, NpuOp, Shape
from cascade.passes.planner.graph import OpInfo, TensorInfo


class UnsupportedOpError(ValueError):
    """An operator the NPU model does not know how to run; Vela would leave it on the CPU."""


@dataclass(frozen=True)
class Operand:
    """A feature map an NPU operation reads or writes.

    `tensor` names a program tensor; None is a temporary inside a decomposed operator (kept in
    SRAM). `constant` marks data that lives with the weights (e.g. softmax's scalar constants).
    """

    tensor: str | None = None
    constant: bool = False


@dataclass(frozen=True)
class LoweredOp:
    """One NPU operation of an operator, with the tensors behind its IFM, IFM2 and OFM."""

    npu: NpuOp
    ifm: Operand
    ofm: Operand
    ifm2: Operand | None = None
    uses_weights: bool = False


def hwc(shape: Sequence[int]) -> Shape:
    """A tensor shape as (height, width, depth): N and H fold together; [rows, cols] is (1, rows, cols)."""
    dims = [int(d) for d in shape] or [1]
    if len(dims) == 1:
        return (1, 1, dims[0])
    if len(dims) == 2:
        return (1, dims[0], dims[1])
    return (math.prod(dims[:-2]), dims[-2], dims[-1])


def refusal(op: OpInfo) -> str | None:
    """Why lower-to-ethosu cannot put `op` in a command stream at all, None if it can.

    These are the operator's own parameters, whatever its stripes; `lower` refuses such an
    operator, so the planner keeps it out of cascades and prices it as CPU work, and the
    lowering (`npu_lowering.lower_op`) refuses it with the same words.
    """
    if op.kind == "reshape":
        return None  # a view of the same bytes: no NPU operation, whatever the shapes
    shapes = [tensor.shape for tensor in (*op.inputs, op.output)]
    if any(len(shape) not in (2, 4) for shape in shapes):
        return "the NPU lowering handles NHWC (rank 4) and [rows, columns] (rank 2) tensors only"
    if any(len(shape) == 4 and shape[0] != 1 for shape in shapes):
        return "the NPU lowering handles batch 1 only"
    check = _REFUSALS.get(op.kind)
    return None if check is None else check(op)


def _window_refusal(op: OpInfo) -> str | None:
    kernel = _kernel(op)
    for what, (y, x), (low, high) in (
        ("stride", (kernel.stride_y, kernel.stride_x), ethosu.STRIDE_RANGE),
        ("dilation", (kernel.dilation_y, kernel.dilation_x), ethosu.DILATION_RANGE),
    ):
        if not (low <= y <= high and low <= x <= high):
            return f"{what} [{y}, {x}] is outside the NPU's range [{low}, {high}]"
    if op.kind == "depthwise_conv2d" and op.attributes.get("depth_multiplier", 1) != 1:
        return "depthwise convolution with a depth multiplier needs a rewrite first"
    height = (kernel.height - 1) * kernel.dilation_y + 1
    width = (kernel.width - 1) * kernel.dilation_x + 1
    if op.kind == "pool2d":
        limits = (ethosu.POOL_MAX_KERNEL_HEIGHT, ethosu.POOL_MAX_KERNEL_AREA)
    else:
        limits = (ethosu.CONV_MAX_DILATED_HEIGHT, ethosu.CONV_MAX_DILATED_AREA)
    if height > limits[0] or height * width > limits[1]:
        return f"a {height}x{width} kernel (dilated) exceeds the NPU's limits (height {limits[0]}, area {limits[1]})"
    return None


def _mean_refusal(op: OpInfo) -> str | None:
    shape = op.inputs[0].shape
    if len(shape) != 4 or tuple(op.attributes.get("axes", ())) != (1, 2):  # type: ignore[arg-type]
        return "only a mean over height and width is lowered"
    _, height, width, _ = shape
    if height > ethosu.CONV_MAX_DILATED_HEIGHT or height * width > ethosu.CONV_MAX_DILATED_AREA:
        return f"a {height}x{width} mean exceeds the depthwise kernel limits"
    return None


def _binary_refusal(op: OpInfo) -> str | None:
    """The NPU broadcasts IFM2 only, from size 1 along H, W or C. A constant operand (one of
    `op.weights`) is read from the constants, or from the command when it is one value."""
    if not op.inputs:
        return "both operands are constants (fold them first)"
    # A one-value constant goes in the command as a scalar, whatever its rank.
    constants = [tensor.shape for tensor in op.weights if math.prod(tensor.shape) != 1]
    shapes = [*(tensor.shape for tensor in op.inputs), *constants]
    if any(len(shape) != len(op.output.shape) for shape in constants):
        return "a constant operand of a lower rank is not lowered (-p canonicalize gives it the output's rank)"
    if any(len(shape) != len(op.output.shape) for shape in shapes):
        return "broadcasting operands of different ranks are not lowered"
    if all(shape != op.output.shape for shape in shapes):
        return "both operands broadcast: not expressible with one IFM2 broadcast"
    return None


# The nn verifier already refuses what else these two could not lower: align_corners, and a
# quantization that changes.
def _resize_refusal(op: OpInfo) -> str | None:
    factors = tuple(op.attributes.get("factors", ()))  # type: ignore[arg-type]
    if op.attributes.get("resize_mode") != "nearest" or factors != (2, 2):
        return "only 2x nearest resize is lowered"
    return None


def _pad_refusal(op: OpInfo) -> str | None:
    pads = tuple(tuple(pair) for pair in op.attributes.get("pads", ()))  # type: ignore[union-attr]
    if len(pads) != 4 or pads[0] != (0, 0) or pads[3] != (0, 0):
        return "only padding of height and width is lowered"
    return None


_REFUSALS = {
    "conv2d": _window_refusal,
    "depthwise_conv2d": _window_refusal,
    "transpose_conv2d": _window_refusal,
    "pool2d": _window_refusal,
    "mean": _mean_refusal,
    **dict.fromkeys(("add", "sub", "mul", "minimum", "maximum"), _binary_refusal),
    "resize": _resize_refusal,
    "pad": _pad_refusal,
}


def _activation(op: OpInfo) -> Activation:
    name = str(op.attributes.get("activation", "none"))
    return Activation.NONE if name == "none" else Activation.CLAMP


def _input_region(op: OpInfo, index: int, output: Region) -> Region:
    """The part of input `index` read for `output`.

    For the whole output the NPU is given the whole input tensor, as Vela does, even where the
    last rows are never read (a 1x1 stride-2 conv on 16 rows reads rows 0..14): the IFM shape
    steers the block choice.
    """
    source = op.inputs[index].shape
    if output == Region.full(op.output.shape):
        return Region.full(source)
    return op.input_relations[index].input_region(output, source)


def _layout(layouts: Mapping[str, Layout], tensor: TensorInfo) -> Layout:
    return layouts.get(tensor.name, Layout.NHCWB16)


def _bits(tensor: TensorInfo) -> int:
    return 8 * tensor.element_bytes


def _pair(value: object, default: tuple[int, int]) -> tuple[int, int]:
    if isinstance(value, tuple | list) and len(value) == 2:
        return int(value[0]), int(value[1])
    return default


def _kernel(op: OpInfo) -> Kernel:
    kh, kw = _pair(op.attributes.get("kernel"), (1, 1))
    sh, sw = _pair(op.attributes.get("stride"), (1, 1))
    dh, dw = _pair(op.attributes.get("dilation"), (1, 1))
    return Kernel(kh, kw, sh, sw, dh, dw)


def lower(
    op: OpInfo,
    output: Region | None = None,
    layouts: Mapping[str, Layout] | None = None,
    weight_bytes: int = 0,
) -> list[LoweredOp]:
    """The NPU operations that compute `output` (default: the whole output) of `op`.

    `weight_bytes` is the encoded weight stream of the whole operator (0: none); a region that
    covers part of the output channels reads the matching part. `layouts` gives the storage
    layout of program tensors (default NHCWB16).
    """
    output = output or Region.full(op.output.shape)
    layouts = layouts or {}
    if output.is_empty:
        return []
    lowering = _LOWERINGS.get(op.kind)
    if lowering is None:
        raise UnsupportedOpError(f"no Ethos-U lowering for nn.{op.kind}")
    if (reason := refusal(op)) is not None:
        raise UnsupportedOpError(reason)
    return lowering(op, output, layouts, weight_bytes)


def _weight_share(op: OpInfo, output: Region, weight_bytes: int) -> tuple[int, int]:
    """Encoded weight and scale bytes for the output channels in `output`."""
    channels = op.output.shape[-1]
    share = output.shape[-1] / channels if channels else 1.0
    return math.ceil(weight_bytes * share), 10 * output.shape[-1]


def _conv(op: OpInfo, output: Region, layouts: Mapping[str, Layout], weight_bytes: int) -> list[LoweredOp]:
    source = op.inputs[0]
    kind = NpuKind.DEPTHWISE if op.kind == "depthwise_conv2d" else NpuKind.CONV2D
    kernel = _kernel(op)
    upscale = 1
    if op.kind == "transpose_conv2d":
        # Vela runs a transposed convolution as a stride-1 convolution over an IFM upscaled by
        # the stride (zeros inserted); Ethos-U upscales by 2 at most.
        upscale = min(kernel.stride_y, 2)
        kernel = Kernel(kernel.height, kernel.width)
    ifm = hwc(_input_region(op, 0, output).shape)
    ofm = hwc(output.shape)
    if kind is NpuKind.DEPTHWISE:
        ifm = (ifm[0], ifm[1], ofm[2])  # the NPU walks input and output channels together
    weights, scales = _weight_share(op, output, weight_bytes)
    npu = NpuOp(
        kind=kind,
        ifm=ifm,
        ofm=ofm,
        kernel=kernel,
        activation=_activation(op),
        ifm_bits=_bits(source),
        ofm_bits=_bits(op.output),
        ifm_layout=_layout(layouts, source),
        ofm_layout=_layout(layouts, op.output),
        upscale=upscale,
        weight_bytes=weights,
        scale_bytes=scales if weights else 0,
    )
    return [LoweredOp(npu, Operand(source.name), Operand(op.output.name), uses_weights=bool(weights))]


def _fully_connected(op: OpInfo, output: Region, layouts: Mapping[str, Layout], weight_bytes: int) -> list[LoweredOp]:
    source = op.inputs[0]
    rows = math.prod(output.shape[:-1]) if len(output.shape) > 1 else 1
    depth = op.weights[0].shape[-1] if op.weights else source.shape[-1]
    weights, scales = _weight_share(op, output, weight_bytes)
    npu = NpuOp(
        kind=NpuKind.VECTOR_PRODUCT,
        ifm=(1, rows, depth),
        ofm=(1, rows, output.shape[-1]),
        activation=_activation(op),
        ifm_bits=_bits(source),
        ofm_bits=_bits(op.output),
        ifm_layout=_layout(layouts, source),
        ofm_layout=_layout(layouts, op.output),
        weight_bytes=weights,
        scale_bytes=scales if weights else 0,
    )
    return [LoweredOp(npu, Operand(source.name), Operand(op.output.name), uses_weights=bool(weights))]


def _pool(op: OpInfo, output: Region, layouts: Mapping[str, Layout], weight_bytes: int) -> list[LoweredOp]:
    source = op.inputs[0]
    npu = NpuOp(
        kind=NpuKind.POOLING,
        ifm=hwc(_input_region(op, 0, output).shape),
        ofm=hwc(output.shape),
        kernel=_kernel(op),
        sub_kind=str(op.attributes.get("pool_kind", "avg")),
        activation=_activation(op),
        ifm_bits=_bits(source),
        ofm_bits=_bits(op.output),
        ifm_layout=_layout(layouts, source),
        ofm_layout=_layout(layouts, op.output),
    )
    return [LoweredOp(npu, Operand(source.name), Operand(op.output.name))]


def _binary(op: OpInfo, output: Region, layouts: Mapping[str, Layout], weight_bytes: int) -> list[LoweredOp]:
    """Elementwise: the operand that is not broadcast is the IFM, the other one IFM2."""
    roles = op.attributes.get("operands", (("input", 0), ("input", 1)))
    operands: list[tuple[TensorInfo, Region, bool]] = []
    for role, index in roles:  # type: ignore[union-attr]
        if role == "input":
            tensor = op.inputs[index]
            region = _input_region(op, index, output)
            operands.append((tensor, region, False))
        else:
            tensor = op.weights[index]
            region = op.weight_relations[index].input_region(output, tensor.shape)
            operands.append((tensor, region, True))
    if len(operands) != 2:
        raise UnsupportedOpError(f"nn.{op.kind} needs two operands")
    first, second = operands
    if first[1].volume < second[1].volume:
        first, second = second, first  # Vela swaps the operands so that IFM2 is the broadcast one
    npu = NpuOp(
        kind=NpuKind.ELEMENTWISE,
        ifm=hwc(first[1].shape),
        ifm2=hwc(second[1].shape),
        ofm=hwc(output.shape),
        sub_kind={"minimum": "min", "maximum": "max"}.get(op.kind, op.kind),
        activation=_activation(op),
        ifm_bits=_bits(first[0]),
        ofm_bits=_bits(op.output),
        ifm_layout=Layout.NHWC if first[2] else _layout(layouts, first[0]),
        ifm2_layout=Layout.NHWC if second[2] else _layout(layouts, second[0]),
        ofm_layout=_layout(layouts, op.output),
    )
    return [
        LoweredOp(
            npu,
            Operand(first[0].name, constant=first[2]),
            Operand(op.output.name),
            ifm2=Operand(second[0].name, constant=second[2]),
        )
    ]


def _mean(op: OpInfo, output: Region, layouts: Mapping[str, Layout], weight_bytes: int) -> list[LoweredOp]:
    """Mean over H and W: an int32 depthwise sum with a ones kernel, then a multiply to rescale.

    The sum of 8x8 positions of 64 channels is a depthwise conv with an 8x8 kernel producing
    1x1x64 int32; the multiply by 1/64 (a scalar) writes the int8 result.
    """
    source = op.inputs[0]
    in_region = _input_region(op, 0, output)
    in_shape = tuple(in_region.shape)
    axes = tuple(int(a) for a in op.attributes.get("axes", ()))  # type: ignore[union-attr]
    rank = len(source.shape)
    if rank == 4 and set(axes) == {1, 2}:
        height, width, depth = in_shape[1], in_shape[2], in_shape[3] * in_shape[0]
        kernel = Kernel(height, width)
    else:
        # Any other reduction: treat the reduced elements of each output as one kernel window.
        reduced = math.prod(in_shape[a] for a in axes) if axes else 1
        height, width, depth = 1, reduced, max(1, math.prod(in_shape) // max(reduced, 1))
        kernel = Kernel(1, reduced)
    ones_bytes = weight_bytes or _ones_kernel_bytes(kernel, depth)
    sums = NpuOp(
        kind=NpuKind.DEPTHWISE,
        ifm=(height, width, depth),
        ofm=(1, 1, depth),
        kernel=kernel,
        ifm_bits=_bits(source),
        ofm_bits=32,
        ifm_layout=_layout(layouts, source),
        ofm_layout=Layout.NHCWB16,
        weight_bytes=ones_bytes,
        scale_bytes=10 * depth,
    )
    scale = NpuOp(
        kind=NpuKind.ELEMENTWISE,
        ifm=(1, 1, depth),
        ifm2=(1, 1, 1),
        ofm=(1, 1, depth),
        sub_kind="mul",
        ifm_bits=32,
        ofm_bits=_bits(op.output),
        ifm_layout=Layout.NHCWB16,
        ifm2_layout=Layout.NHWC,
        ofm_layout=_layout(layouts, op.output),
    )
    return [
        LoweredOp(sums, Operand(source.name), Operand(None), uses_weights=True),
        LoweredOp(scale, Operand(None), Operand(op.output.name), ifm2=Operand(None, constant=True)),
    ]


def _ones_kernel_bytes(kernel: Kernel, depth: int) -> int:
    """Encoded size of an all-ones depthwise kernel: it compresses to about a bit per weight.

    Vela encodes 8x8x64 ones in 528 bytes and 7x7x1024 ones in 6672 (about 0.13 byte per
    weight); we take 1/8 byte per weight plus 16 bytes of stream header per 16 channels.
    """
    return 16 * math.ceil((kernel.area * depth / 8 + depth) / 16)


# Vela's int8 softmax, operation by operation (Regor `ConvertSoftmaxInt8`): max over the row,
# subtract it and exponentiate through a table (int32 out), sum, then a reciprocal by
# count-leading-zeros and three Newton-Raphson steps on 1x1 scalars, and the final scaling.
# Each entry: (kind, sub_kind, ifm, ifm2, ofm) where a shape is "row" (1x1xN), "scalar" (1x1x1),
# "column" (1xNx1, the row seen as a column for the max pool) or None; "c" marks a constant
# operand (kept with the weights); bits are (ifm, ofm); and whether the table is applied.
_SOFTMAX: tuple[tuple[NpuKind, str, str, str | None, str, tuple[int, int], bool], ...] = (
    (NpuKind.POOLING, "max", "column", None, "scalar", (8, 8), False),
    (NpuKind.ELEMENTWISE, "sub", "row", "scalar", "row", (8, 32), True),
    (NpuKind.ELEMENTWISE, "shr", "row", "c:scalar", "row", (32, 32), False),
    (NpuKind.REDUCE_SUM, "", "row", None, "scalar", (32, 32), False),
    (NpuKind.ELEMENTWISE, "clz", "scalar", None, "scalar", (32, 32), False),
    (NpuKind.ELEMENTWISE, "sub", "c:scalar", "scalar", "scalar", (32, 32), False),
    (NpuKind.ELEMENTWISE, "sub", "scalar", "c:scalar", "scalar", (32, 32), False),
    (NpuKind.ELEMENTWISE, "shl", "scalar", "scalar", "scalar", (32, 32), False),
    (NpuKind.ELEMENTWISE, "mul", "scalar", "c:scalar", "scalar", (32, 32), False),
    (NpuKind.ELEMENTWISE, "add", "scalar", "c:scalar", "scalar", (32, 32), False),
    *(
        step
        for _ in range(3)
        for step in (
            (NpuKind.ELEMENTWISE, "mul", "scalar", "scalar", "scalar", (32, 32), False),
            (NpuKind.ELEMENTWISE, "sub", "c:scalar", "scalar", "scalar", (32, 32), False),
            (NpuKind.ELEMENTWISE, "mul", "scalar", "scalar", "scalar", (32, 32), False),
            (NpuKind.ELEMENTWISE, "mul", "scalar", "c:scalar", "scalar", (32, 32), False),
            (NpuKind.ELEMENTWISE, "add", "scalar", "scalar", "scalar", (32, 32), False),
        )
    ),
    (NpuKind.ELEMENTWISE, "mul", "row", "scalar", "row", (32, 32), False),
    (NpuKind.ELEMENTWISE, "add", "c:row", "row", "row", (32, 32), False),
    (NpuKind.ELEMENTWISE, "shr", "row", "scalar", "row", (32, 8), False),
)


@dataclass(frozen=True)
class _SoftmaxContext:
    op: OpInfo
    layouts: Mapping[str, Layout]
    shapes: Mapping[str, Shape]


def _softmax_operand(context: _SoftmaxContext, spec: str | None, role: str) -> tuple[Shape, Operand, Layout] | None:
    """The shape, tensor and layout of one operand of a softmax step.

    `role` is "input" for the steps that read the softmax input (the max and the subtraction),
    "output" for the last step's OFM, "" otherwise (SRAM temporaries and constants).
    """
    if spec is None:
        return None
    shape = context.shapes[spec.removeprefix("c:")]
    if spec.startswith("c:"):
        return shape, Operand(None, constant=True), Layout.NHWC
    if role == "input":
        source = context.op.inputs[0]
        return shape, Operand(source.name), _layout(context.layouts, source)
    if role == "output":
        return shape, Operand(context.op.output.name), _layout(context.layouts, context.op.output)
    return shape, Operand(None), Layout.NHCWB16


def _softmax(op: OpInfo, output: Region, layouts: Mapping[str, Layout], weight_bytes: int) -> list[LoweredOp]:
    depth = output.shape[-1]
    rows = math.prod(output.shape[:-1]) if len(output.shape) > 1 else 1
    context = _SoftmaxContext(
        op, layouts, {"row": (rows, 1, depth), "scalar": (rows, 1, 1), "column": (rows, depth, 1)}
    )
    lowered: list[LoweredOp] = []
    last = len(_SOFTMAX) - 1
    for index, (kind, sub, ifm, ifm2, ofm, bits, table) in enumerate(_SOFTMAX):
        first = _softmax_operand(context, ifm, "input" if index in (0, 1) else "")
        second = _softmax_operand(context, ifm2, "")
        result = _softmax_operand(context, ofm, "output" if index == last else "")
        if first is None or result is None:
            raise AssertionError("every softmax step has an IFM and an OFM")
        npu = NpuOp(
            kind=kind,
            ifm=first[0],
            ifm2=second[0] if second else None,
            ofm=result[0],
            kernel=Kernel(1, depth) if ifm == "column" else Kernel(),
            sub_kind=sub,
            activation=Activation.LUT if table else Activation.NONE,
            ifm_bits=bits[0],
            ofm_bits=bits[1],
            ifm_layout=first[2],
            ifm2_layout=second[2] if second else Layout.NHCWB16,
            ofm_layout=result[2],
        )
        lowered.append(LoweredOp(npu, first[1], result[1], ifm2=second[1] if second else None))
    return lowered


def _copy(
    op: OpInfo,
    output: Region,
    layouts: Mapping[str, Layout],
    activation: Activation = Activation.NONE,
    upscale: int = 1,
    kernel: Kernel | None = None,
) -> list[LoweredOp]:
    """A 1x1 average pool (Vela's "no-op" pooling) from each input to the output."""
    lowered = []
    for index, source in enumerate(op.inputs):
        region = _input_region(op, index, output)
        if region.is_empty:
            continue
        ofm = hwc(region.shape) if upscale == 1 else hwc(output.shape)
        npu = NpuOp(
            kind=NpuKind.POOLING,
            ifm=hwc(region.shape),
            ofm=ofm,
            kernel=kernel or Kernel(),
            sub_kind="avg",
            activation=activation,
            ifm_bits=_bits(source),
            ofm_bits=_bits(op.output),
            ifm_layout=_layout(layouts, source),
            ofm_layout=_layout(layouts, op.output),
            upscale=upscale,
        )
        lowered.append(LoweredOp(npu, Operand(source.name), Operand(op.output.name)))
    return lowered


def _table(op: OpInfo, output: Region, layouts: Mapping[str, Layout], weight_bytes: int) -> list[LoweredOp]:
    return _copy(op, output, layouts, Activation.LUT)


def _plain_copy(op: OpInfo, output: Region, layouts: Mapping[str, Layout], weight_bytes: int) -> list[LoweredOp]:
    return _copy(op, output, layouts)


def _resize(op: OpInfo, output: Region, layouts: Mapping[str, Layout], weight_bytes: int) -> list[LoweredOp]:
    factor = max(_pair(op.attributes.get("factors"), (1, 1)))
    bilinear = op.attributes.get("resize_mode") == "bilinear"
    if factor == 1:
        return _copy(op, output, layouts)
    # Nearest 2x is one upscaling pool; bilinear adds a 2x2 average over the upscaled IFM.
    # Larger factors repeat the 2x step; we price one step at the output size per factor of 2.
    steps = max(1, round(math.log2(factor)))
    return _copy(op, output, layouts, upscale=2, kernel=Kernel(2, 2) if bilinear else None) * steps


def _reshape(op: OpInfo, output: Region, layouts: Mapping[str, Layout], weight_bytes: int) -> list[LoweredOp]:
    return []


_LOWERINGS = {
    "conv2d": _conv,
    "depthwise_conv2d": _conv,
    "transpose_conv2d": _conv,
    "pool2d": _pool,
    "add": _binary,
    "sub": _binary,
    "mul": _binary,
    "minimum": _binary,
    "maximum": _binary,
    "fully_connected": _fully_connected,
    "mean": _mean,
    "softmax": _softmax,
    "tanh": _table,
    "sigmoid": _table,
    "leaky_relu": _table,
    "hard_swish": _table,
    "relu": _table,
    "rescale": _plain_copy,
    "pad": _plain_copy,
    "concat": _plain_copy,
    "resize": _resize,
    "reshape": _reshape,
}
