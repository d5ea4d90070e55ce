"""The ethosu dialect from Python: builders, typed accessors, verifiers, and the bridge to
Vela's external API (`to_vela` / `from_vela`), checked against
`npu_generate_register_command_stream`."""

from __future__ import annotations

import enum
import math
import os
import shutil
import subprocess
import sys
from io import StringIO

import pytest
from ethosu.vela import api
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from cascade.dialects import ethosu
from cascade.dialects.ethosu import (
    ACCELERATORS,
    AccumulatorType,
    ActivationAttr,
    ActivationKind,
    AddressRangeAttr,
    BlockTraversal,
    CommandStreamOp,
    Conv2DOp,
    DataType,
    DepthwiseConv2DOp,
    DmaOp,
    ElementwiseKind,
    ElementwiseOp,
    EthosU,
    FeatureMapAttr,
    KernelAttr,
    Layout,
    PaddingAttr,
    PoolingKind,
    PoolingOp,
    QuantizationAttr,
    ResamplingMode,
    RoundingMode,
    ScalarAttr,
    Shape3DAttr,
    TileBoxAttr,
    op_from_vela,
)
from cascade.ethos_u.testing import vela_fields

ACCELERATOR = api.NpuAccelerator.Ethos_U55_128
H, W, C = 16, 16, 8
ROW = W * C

# --------------------------------------------------------------------------- #
# Vela operations, built the way reference/vela_api_example.py builds them
# --------------------------------------------------------------------------- #


def vela_fm(
    shape: tuple[int, int, int],
    address: int,
    quant: api.NpuQuantization | None = None,
    name: str | None = None,
    tiles: api.NpuTileBox | None = None,
    data_type: api.NpuDataType = api.NpuDataType.INT8,
) -> api.NpuFeatureMap:
    fm = api.NpuFeatureMap()
    fm.data_type = data_type
    fm.region = 1
    fm.shape = api.NpuShape3D(*shape)
    fm.tiles = tiles or api.NpuTileBox(shape[0], shape[0], shape[1], [address, 0, 0, 0])
    fm.quantization = quant
    fm.layout = api.NpuLayout.NHWC
    fm.strides = api.NpuShape3D(ROW, C, 1)
    fm.name = name
    return fm


def vela_conv(
    name: str,
    ifm: api.NpuFeatureMap,
    ofm: api.NpuFeatureMap,
    padding: api.NpuPadding,
    weights: api.NpuAddressRange,
    biases: api.NpuAddressRange,
) -> api.NpuConv2DOperation:
    op = api.NpuConv2DOperation()
    op.name = name
    op.ifm, op.ofm = ifm, ofm
    op.kernel = api.NpuKernel(3, 3)
    op.padding = padding
    op.weights, op.biases = [weights], [biases]
    relu = api.NpuActivation(api.NpuActivationOp.NONE_OR_RELU)
    relu.min = 0.0
    op.activation = relu
    op.block_traversal = api.NpuBlockTraversal.DEPTH_FIRST
    op.block_config = api.NpuShape3D(8, 16, 8)
    return op


def block_config(op: api.NpuBlockOperation) -> api.NpuShape3D:
    """The largest block config Vela accepts for `op`."""
    configs = api.npu_find_block_configs(op, ACCELERATOR)
    return max(configs, key=lambda b: (b.height * b.width * b.depth, b))


def example_ops() -> list[api.NpuOperation]:
    """The cascade of the reference example (a DMA and two convs in two stripes each, with a
    10-row rolling buffer), followed by one op of every other kind."""
    q_a = api.NpuQuantization(scale_f32=0.05, zero_point=-3)
    q_b = api.NpuQuantization(scale_f32=0.08, zero_point=1)
    q_c = api.NpuQuantization(scale_f32=0.1, zero_point=2)
    a, b, c, w2_sram = 0x0, 0x800, 0xD00, 0x1500
    w1 = api.NpuAddressRange(0, 0x50, 928)
    b1 = api.NpuAddressRange(0, 0, 80)
    w2 = api.NpuAddressRange(1, w2_sram + 80, 928)
    b2 = api.NpuAddressRange(1, w2_sram, 80)

    def b_rows(first: int, count: int) -> api.NpuTileBox:
        start = first % 10
        height_0 = min(count, 10 - start)
        bottom = b if count > height_0 else 0
        return api.NpuTileBox(height_0, height_0, W, [b + start * ROW, 0, bottom, 0])

    dma = api.NpuDmaOperation(api.NpuAddressRange(0, 0x3F0, 1008), api.NpuAddressRange(1, w2_sram, 1008))
    dma.name = "dma_w2"
    ops: list[api.NpuOperation] = [
        dma,
        vela_conv(
            "conv1_s0",
            vela_fm((9, W, C), a, q_a, "A"),
            vela_fm((8, W, C), b, q_b, "B", b_rows(0, 8)),
            api.NpuPadding(1, 1, 0, 1),
            w1,
            b1,
        ),
        vela_conv(
            "conv2_s0",
            vela_fm((8, W, C), b, q_b, "B", b_rows(0, 8)),
            vela_fm((7, W, C), c, q_c, "C"),
            api.NpuPadding(1, 1, 0, 1),
            w2,
            b2,
        ),
        vela_conv(
            "conv1_s1",
            vela_fm((9, W, C), a + 7 * ROW, q_a, "A"),
            vela_fm((8, W, C), b, q_b, "B", b_rows(8, 8)),
            api.NpuPadding(0, 1, 1, 1),
            w1,
            b1,
        ),
        vela_conv(
            "conv2_s1",
            vela_fm((10, W, C), b, q_b, "B", b_rows(6, 10)),
            vela_fm((9, W, C), c + 7 * ROW, q_c, "C"),
            api.NpuPadding(0, 1, 1, 1),
            w2,
            b2,
        ),
    ]

    depthwise = api.NpuConvDepthWiseOperation()
    depthwise.ifm = vela_fm((H, W, C), c, q_c)
    depthwise.ofm = vela_fm((H, W, C), 0x2000, q_c)
    depthwise.kernel = api.NpuKernel(3, 3, dilation_x=2, dilation_y=2)
    depthwise.padding = api.NpuPadding(2, 2, 2, 2)
    depthwise.weights = [api.NpuAddressRange(0, 0x500, 96)]
    depthwise.biases = [api.NpuAddressRange(0, 0x560, 80)]
    depthwise.rounding_mode = api.NpuRoundingMode.NATURAL
    depthwise.name = "depthwise"

    pool = api.NpuPoolingOperation(api.NpuPoolingOp.AVERAGE)
    pool.ifm = vela_fm((H, W, C), 0x2000, q_c)
    pool.ofm = vela_fm((H // 2, W // 2, C), 0x3000, q_a)
    pool.kernel = api.NpuKernel(2, 2, 2, 2)
    pool.padding = api.NpuPadding(0, 0, 0, 0)
    pool.rescale = 0.5
    pool.accumulator_type = api.NpuAccumulatorType.Int32

    add = api.NpuElementWiseOperation(api.NpuElementWiseOp.ADD)
    add.ifm = vela_fm((H, W, C), 0x2000, q_c)
    add.ifm2 = vela_fm((H, W, C), c, q_c)
    add.ofm = vela_fm((H, W, C), 0x4000, q_b)
    add.reversed_operands = True
    tanh = api.NpuActivation(api.NpuActivationOp.TANH)
    add.activation = tanh
    add.fused_quantize = True

    mul = api.NpuElementWiseOperation(api.NpuElementWiseOp.MUL)
    mul.ifm = vela_fm((H, W, C), 0x4000, q_b)
    mul.ifm2 = api.NpuFeatureMap()  # a scalar operand: Vela reads only type and quantization
    mul.ifm2.data_type = api.NpuDataType.INT8
    mul.ifm2.quantization = api.NpuQuantization(0.25, 0)
    mul.ifm2_scalar = 3.0
    mul.ofm = vela_fm((H, W, C), 0x5000, q_b)
    mul.rescale = (1 << 30, 31)

    abs_op = api.NpuElementWiseOperation(api.NpuElementWiseOp.ABS)
    abs_op.ifm = vela_fm((H, W, C), 0x5000, q_b)
    abs_op.ofm = vela_fm((H, W, C), 0x6000, q_b)
    lut = api.NpuActivation(api.NpuActivationOp.TABLE_LOOKUP)
    lut.lookup_table_index = 3
    lut.min, lut.max = -1.0, 1.0
    abs_op.activation = lut

    lut_dma = api.NpuDmaOperation(api.NpuAddressRange(0, 0x600, 2048), api.NpuAddressRange(0x103, 0, 2048))
    for op in (depthwise, pool, add, mul, abs_op):
        op.block_config = block_config(op)
    return [*ops, depthwise, pool, add, mul, lut_dma, abs_op]


def print_op(op: Operation, generic: bool = False) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(op)
    return stream.getvalue()


def parse_module(text: str) -> ModuleOp:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(EthosU)
    return Parser(ctx, text).parse_module()


@pytest.fixture(scope="module")
def vela_ops() -> list[api.NpuOperation]:
    return example_ops()


@pytest.fixture(scope="module")
def vela_words(vela_ops: list[api.NpuOperation]) -> list[int]:
    return api.npu_generate_register_command_stream(vela_ops, ACCELERATOR)


# --------------------------------------------------------------------------- #
# The Vela bridge
# --------------------------------------------------------------------------- #


def test_from_vela_to_vela_keeps_every_field(vela_ops: list[api.NpuOperation]) -> None:
    for npu_op in vela_ops:
        op = op_from_vela(npu_op)
        op.verify()
        assert vela_fields(op.to_vela()) == vela_fields(npu_op), type(npu_op).__name__


def test_from_vela_builds_the_matching_ops(vela_ops: list[api.NpuOperation]) -> None:
    kinds = [type(op_from_vela(npu_op)) for npu_op in vela_ops]
    assert kinds == [
        DmaOp,
        *[Conv2DOp] * 4,
        DepthwiseConv2DOp,
        PoolingOp,
        *[ElementwiseOp] * 2,
        DmaOp,
        ElementwiseOp,
    ]


def test_register_stream_is_unchanged_by_the_round_trip(
    vela_ops: list[api.NpuOperation], vela_words: list[int]
) -> None:
    stream = CommandStreamOp.from_vela(vela_ops, ACCELERATOR)
    stream.verify()
    assert stream.accelerator.data == "ethos-u55-128"
    assert stream.vela_accelerator is ACCELERATOR
    words = api.npu_generate_register_command_stream(stream.to_vela(), stream.vela_accelerator)
    assert words == vela_words
    assert words[-1] & 0xFFFF == 0x0000
    assert (words[-1] >> 16) == 0xFFFF


@pytest.mark.parametrize("generic", [False, True])
def test_text_round_trip_keeps_every_field(
    vela_ops: list[api.NpuOperation], vela_words: list[int], generic: bool
) -> None:
    text = print_op(ModuleOp([CommandStreamOp.from_vela(vela_ops, ACCELERATOR)]), generic)
    module = parse_module(text)
    module.verify()
    (stream,) = module.ops
    assert isinstance(stream, CommandStreamOp)
    assert [vela_fields(op) for op in stream.to_vela()] == [vela_fields(op) for op in vela_ops]
    assert api.npu_generate_register_command_stream(stream.to_vela(), ACCELERATOR) == vela_words


def test_floats_survive_printing_exactly() -> None:
    awkward = [0.1, 1e-05, 1.0 / 3.0, 2.5e-17, 123456789.0, -0.0, float(1 << 60)]
    for value in awkward:
        quant = QuantizationAttr(value, 0)
        module = parse_module(print_op(ModuleOp([CommandStreamOp("ethos-u55-64", [pool_op(quant)])])))
        (stream,) = module.ops
        (pool,) = stream.body.block.ops
        assert isinstance(pool, PoolingOp)
        parsed = pool.ifm.quantization_or_none
        assert parsed is not None
        assert parsed.scale_value is not None
        assert math.copysign(1.0, parsed.scale_value) == math.copysign(1.0, value)
        assert parsed.scale_value == value


def test_accelerator_names_cover_vela() -> None:
    assert sorted(ACCELERATORS.values()) == sorted(m.name for m in api.NpuAccelerator)
    for name in ACCELERATORS:
        assert CommandStreamOp(name).vela_accelerator.name == ACCELERATORS[name]
    assert CommandStreamOp.from_vela([], api.NpuAccelerator.Ethos_U65_512).accelerator.data == ("ethos-u65-512")


@pytest.mark.parametrize(
    ("ours", "vela_enum"),
    [
        (DataType, api.NpuDataType),
        (Layout, api.NpuLayout),
        (RoundingMode, api.NpuRoundingMode),
        (BlockTraversal, api.NpuBlockTraversal),
        (ResamplingMode, api.NpuResamplingMode),
        (AccumulatorType, api.NpuAccumulatorType),
        (PoolingKind, api.NpuPoolingOp),
        (ElementwiseKind, api.NpuElementWiseOp),
        (ActivationKind, api.NpuActivationOp),
    ],
)
def test_enums_mirror_vela(ours: type[enum.Enum], vela_enum: type[enum.Enum]) -> None:
    assert [m.name for m in ours] == [m.name for m in vela_enum]


def test_unary_elementwise_kinds_match_vela() -> None:
    from ethosu.vela.register_command_stream_util import UNARY_ELEMWISE_OPS

    unary = {k.name for k in ElementwiseKind if k.is_unary}
    assert unary == {op.name for op in UNARY_ELEMWISE_OPS}


def test_data_type_sizes_match_vela() -> None:
    for data_type in DataType:
        assert data_type.size_in_bytes == api.NpuDataType[data_type.name].size_in_bytes()


def test_unknown_vela_operation_is_rejected() -> None:
    with pytest.raises(ValueError, match="unsupported Vela operation NpuOperation"):
        op_from_vela(api.NpuOperation(api.NpuOperationType.Dma))


def test_missing_padding_becomes_zero_padding(vela_ops: list[api.NpuOperation]) -> None:
    conv = vela_ops[1]
    assert isinstance(conv, api.NpuConv2DOperation)
    conv_without_padding = api.NpuConv2DOperation()
    vars(conv_without_padding).update(vars(conv) | {"padding": None})
    op = op_from_vela(conv_without_padding)
    assert isinstance(op, Conv2DOp)
    assert op.padding.as_tuple() == (0, 0, 0, 0)


# --------------------------------------------------------------------------- #
# Builders and typed accessors
# --------------------------------------------------------------------------- #


def fm(address: int = 0, shape: tuple[int, int, int] = (8, 8, 16), **kwargs: object) -> FeatureMapAttr:
    return FeatureMapAttr(DataType.INT8, 1, shape, address, **kwargs)  # type: ignore[arg-type]


def pool_op(quant: QuantizationAttr | None = None) -> PoolingOp:
    return PoolingOp(
        PoolingKind.MAX,
        ifm=fm(0, quantization=quant),
        ofm=fm(0x800, (4, 4, 16)),
        kernel=KernelAttr(2, 2, 2, 2),
        padding=PaddingAttr(0, 0, 0, 0),
        block_config=(4, 4, 16),
    )


def conv_op(**kwargs: object) -> Conv2DOp:
    settings: dict[str, object] = {
        "ifm": fm(0, (10, 10, 16)),
        "ofm": fm(0x800),
        "kernel": KernelAttr(3, 3),
        "padding": PaddingAttr(0, 0, 0, 0),
        "weights": [AddressRangeAttr(0, 0x100, 256)],
        "biases": [AddressRangeAttr(0, 0, 160)],
        "block_config": (8, 8, 16),
    }
    return Conv2DOp(**(settings | kwargs))  # type: ignore[arg-type]


def test_int_tuple_attributes_expose_named_ints() -> None:
    kernel = KernelAttr(3, 5, stride_y=2, stride_x=1, dilation_y=1, dilation_x=2)
    assert (kernel.height, kernel.width, kernel.stride_y, kernel.stride_x) == (3, 5, 2, 1)
    assert (kernel.dilated_height, kernel.dilated_width) == (3, 9)
    vela_kernel = kernel.to_vela()
    assert (vela_kernel.width, vela_kernel.height, vela_kernel.dilation_x) == (5, 3, 2)
    padding = PaddingAttr(1, 2, 3, 4)
    assert (padding.top, padding.left, padding.bottom, padding.right) == (1, 2, 3, 4)
    assert padding.to_vela() == api.NpuPadding(top=1, left=2, bottom=3, right=4)
    address_range = AddressRangeAttr(ethosu.SHRAM_REGION, 0x10, 32)
    assert (address_range.region, address_range.address, address_range.length) == (0x103, 16, 32)
    shape = Shape3DAttr(1, 2, 3)
    assert (shape.height, shape.width, shape.depth) == (1, 2, 3)
    tiles = TileBoxAttr(2, 2, 16, [0x100, 0, 0x40, 0])
    assert (tiles.height_0, tiles.height_1, tiles.width_0) == (2, 2, 16)
    assert tiles.addresses == (0x100, 0, 0x40, 0)


def test_feature_map_builder() -> None:
    single = FeatureMapAttr(DataType.INT16, 2, (4, 5, 6), 0x40, quantization=(0.5, -3))
    assert single.is_single_tile
    assert single.tiles.addresses == (0x40, 0, 0, 0)
    assert single.element_size == 2
    assert single.region.data == 2
    assert single.data_type.data is DataType.INT16
    assert single.layout.data is Layout.NHWC
    quant = single.quantization_or_none
    assert quant is not None
    assert (quant.scale_value, quant.zero_point.data) == (0.5, -3)
    assert single.strides_or_none is None
    assert single.debug_name_or_none is None
    wrapped = FeatureMapAttr(
        DataType.INT8,
        1,
        (8, 16, 8),
        TileBoxAttr(2, 2, 16, [0xC00, 0, 0x800, 0]),
        Layout.NHCWB16,
        strides=(256, 16, 128),
        debug_name="B",
    )
    assert not wrapped.is_single_tile
    vela = wrapped.to_vela()
    assert vela.tiles == api.NpuTileBox(2, 2, 16, [0xC00, 0, 0x800, 0])
    assert vela.strides == api.NpuShape3D(256, 16, 128)
    assert vela.name == "B"
    assert vela.quantization is None
    assert vela.layout is api.NpuLayout.NHCWB16
    assert FeatureMapAttr.from_vela(vela) == wrapped


def test_block_op_defaults_are_left_out_of_the_properties() -> None:
    conv = conv_op()
    assert conv.rounding_mode.data is RoundingMode.TFL
    assert conv.ifm_upscale.data is ResamplingMode.NONE
    assert conv.accumulator_type.data is AccumulatorType.Default
    assert conv.block_traversal.data is BlockTraversal.DEPTH_FIRST
    assert conv.fused_quantize is None
    assert conv.activation is None
    assert set(conv.properties) == {
        "ifm",
        "ofm",
        "kernel",
        "padding",
        "weights",
        "biases",
        "block_config",
        "block_traversal",
    }
    explicit = conv_op(
        rounding_mode=RoundingMode.NATURAL,
        ifm_upscale=ResamplingMode.NEAREST,
        accumulator_type=AccumulatorType.Int40,
        fused_quantize=True,
        activation=ActivationAttr(ActivationKind.NONE_OR_RELU, 0.0, 6.0),
        block_traversal=BlockTraversal.PART_KERNEL_FIRST,
        debug_name="c",
    )
    vela = explicit.to_vela()
    assert vela.rounding_mode is api.NpuRoundingMode.NATURAL
    assert vela.ifm_upscale is api.NpuResamplingMode.NEAREST
    assert vela.accumulator_type is api.NpuAccumulatorType.Int40
    assert vela.fused_quantize
    assert vela.name == "c"
    assert vela.block_traversal is api.NpuBlockTraversal.PART_KERNEL_FIRST
    assert (vela.activation.min, vela.activation.max) == (0.0, 6.0)
    assert [r.address for r in explicit.weight_ranges] == [0x100]


def test_depthwise_traversal_is_optional() -> None:
    settings = {
        "ifm": fm(0, (10, 10, 16)),
        "ofm": fm(0x800),
        "kernel": KernelAttr(3, 3),
        "padding": PaddingAttr(0, 0, 0, 0),
        "weights": [AddressRangeAttr(0, 0x100, 160)],
        "biases": [AddressRangeAttr(0, 0, 160)],
        "block_config": (8, 8, 16),
    }
    depthwise = DepthwiseConv2DOp(**settings)  # type: ignore[arg-type]
    assert "block_traversal" not in depthwise.properties
    assert depthwise.block_traversal.data is BlockTraversal.DEPTH_FIRST
    assert not hasattr(depthwise.to_vela(), "block_traversal")
    wrong = DepthwiseConv2DOp(block_traversal=BlockTraversal.PART_KERNEL_FIRST, **settings)  # type: ignore[arg-type]
    with pytest.raises(VerifyException, match="requires depth_first block traversal"):
        wrong.verify()


def test_elementwise_builder_takes_a_feature_map_or_a_scalar() -> None:
    with_fm = ElementwiseOp(ElementwiseKind.SUB, ifm=fm(0), ofm=fm(0x800), block_config=(8, 8, 16), ifm2=fm(0x400))
    assert with_fm.ifm2 == fm(0x400)
    assert with_fm.ifm2_scalar is None
    scalar = ScalarAttr(-1.5, DataType.INT8, (0.5, 0))
    with_scalar = ElementwiseOp(
        ElementwiseKind.MUL,
        ifm=fm(0),
        ofm=fm(0x800),
        block_config=(8, 8, 16),
        ifm2=scalar,
        rescale=(3, 4),
        reversed_operands=True,
    )
    assert with_scalar.ifm2 is None
    assert with_scalar.ifm2_scalar == scalar
    vela = with_scalar.to_vela()
    assert vela.ifm2_scalar == -1.5
    assert vela.ifm2.data_type is api.NpuDataType.INT8
    assert vela.ifm2.quantization == api.NpuQuantization(0.5, 0)
    assert vela.rescale == (3, 4)
    assert vela.reversed_operands
    assert ElementwiseOp.from_vela(vela).ifm2_scalar == scalar


def test_dma_builder() -> None:
    dma = DmaOp(AddressRangeAttr(0, 0x100, 64), AddressRangeAttr(1, 0x200, 64), channel=1)
    assert dma.channel.value.data == 1
    assert dma.mode.value.data == 0
    assert "mode" not in dma.properties
    vela = dma.to_vela()
    assert (vela.src, vela.dest, vela.channel, vela.mode) == (
        api.NpuAddressRange(0, 0x100, 64),
        api.NpuAddressRange(1, 0x200, 64),
        1,
        0,
    )


def test_command_stream_builder() -> None:
    dma = DmaOp(AddressRangeAttr(0, 0, 16), AddressRangeAttr(1, 0, 16))
    stream = CommandStreamOp("ethos-u55-256", [dma, pool_op()], system_config="Ethos_U55_High_End")
    stream.verify()
    assert stream.commands == [dma, stream.commands[1]]
    assert isinstance(stream.commands[1], PoolingOp)
    assert stream.system_config is not None
    assert stream.memory_mode is None
    empty = CommandStreamOp("ethos-u55-32")
    assert empty.commands == []
    assert len(empty.body.blocks) == 1
    assert parse_module(print_op(ModuleOp([empty]))).ops.first is not None


# --------------------------------------------------------------------------- #
# Verifiers that text cannot reach, and a few that Python users hit first
# --------------------------------------------------------------------------- #


def test_attributes_verify_on_construction() -> None:
    with pytest.raises(VerifyException, match="feature map region must be 0-7, got 9"):
        FeatureMapAttr(DataType.INT8, 9, (1, 1, 1), 0)
    with pytest.raises(VerifyException, match=r"kernel stride must be in \[1, 3\], got \[1, 4\]"):
        KernelAttr(1, 1, 1, 4)
    with pytest.raises(VerifyException, match="quantization scale must be finite, got inf"):
        QuantizationAttr(math.inf, 0)
    with pytest.raises(VerifyException, match="activation min must be finite, got nan"):
        ActivationAttr(ActivationKind.NONE_OR_RELU, math.nan)
    with pytest.raises(VerifyException, match="scalar value must be finite, got -inf"):
        ScalarAttr(-math.inf, DataType.INT8)
    with pytest.raises(VerifyException, match=r"ethosu.padding needs 4 values .* got 3"):
        PaddingAttr.new([Shape3DAttr(1, 2, 3).values])


def test_ops_verify_only_inside_a_command_stream() -> None:
    conv = conv_op()
    conv.verify()  # detached: the parent is not checked
    module = ModuleOp([conv])
    with pytest.raises(VerifyException, match=r"expects parent op 'ethosu\.command_stream'"):
        module.verify()


def test_conv_verifier_messages() -> None:
    with pytest.raises(VerifyException, match=r"'ethosu.conv2d' needs 1-2 weight ranges"):
        conv_op(weights=[]).verify()
    with pytest.raises(VerifyException, match="weight and bias range counts differ"):
        conv_op(weights=[AddressRangeAttr(0, 0x100, 256), AddressRangeAttr(0, 0x200, 256)]).verify()
    with pytest.raises(VerifyException, match=r"kernel area 4160 .* exceeds 4096"):
        conv_op(kernel=KernelAttr(64, 65)).verify()


# --------------------------------------------------------------------------- #
# Upstream MLIR reads the generic form
# --------------------------------------------------------------------------- #


# iree-opt comes with the `interop` extra; look beside this Python too (an unactivated venv).
IREE_OPT = shutil.which("iree-opt") or shutil.which("iree-opt", path=os.path.dirname(sys.executable))


# CI installs the interop extra and sets CASCADE_REQUIRE_INTEROP: there a missing tool fails.
@pytest.mark.skipif(
    IREE_OPT is None and not os.environ.get("CASCADE_REQUIRE_INTEROP"),
    reason="iree-opt (upstream MLIR, `interop` extra) missing",
)
def test_generic_form_survives_upstream_mlir(vela_ops: list[api.NpuOperation], vela_words: list[int]) -> None:
    module = ModuleOp(
        [
            CommandStreamOp.from_vela(vela_ops, ACCELERATOR),
            CommandStreamOp("ethos-u65-256", system_config="cfg", memory_mode="mode"),
        ]
    )
    upstream = subprocess.run(
        [IREE_OPT, "--allow-unregistered-dialect", "--mlir-print-op-generic", "-"],  # type: ignore[list-item]
        input=print_op(module, generic=True),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stream, empty = parse_module(upstream).ops
    assert isinstance(stream, CommandStreamOp)
    assert isinstance(empty, CommandStreamOp)
    assert api.npu_generate_register_command_stream(stream.to_vela(), ACCELERATOR) == vela_words
    assert empty.commands == []
    assert empty.memory_mode is not None


def test_tuple_attributes_compare_by_value() -> None:
    """Attributes sharing the integer-tuple base compare and hash by their values."""
    from cascade.dialects.ethosu import AddressRangeAttr, Shape3DAttr

    assert Shape3DAttr(1, 2, 3) == Shape3DAttr(1, 2, 3)
    assert Shape3DAttr(1, 2, 3) != Shape3DAttr(1, 2, 4)
    assert hash(Shape3DAttr(1, 2, 3)) == hash(Shape3DAttr(1, 2, 3))
    assert AddressRangeAttr(1, 0x100, 16) != AddressRangeAttr(1, 0x110, 16)
