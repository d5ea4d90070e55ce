"""The planner's view of nn programs and the Ethos-U cost model behind the CostModel protocol."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from ethosu.vela.api import NpuAccelerator, NpuBlockTraversal, npu_encode_weights

from cascade.dialects.access import Region
from cascade.ethos_u.arch import arch_config
from cascade.ethos_u.cost_model import EthosUCostModel, MemoryMap
from cascade.ethos_u.lowering import UnsupportedOpError, hwc, lower
from cascade.ethos_u.performance import Activation, Layout, NpuKind, select_block_config
from cascade.frontends.loader import load_module
from cascade.passes.planner.cost import CostModel
from cascade.passes.planner.from_nn import program_from_module
from cascade.passes.planner.graph import OpInfo, TensorInfo

TEST = Path(__file__).resolve().parents[1]
EXAMPLE = TEST / "Inputs" / "example_nn.mlir"
RESNET8 = TEST / "models" / "resnet8.tflite"
ARCH = arch_config("ethos-u55-128")


@pytest.fixture(scope="module")
def example() -> list[OpInfo]:
    return list(program_from_module(load_module(EXAMPLE)).ops)


@pytest.fixture(scope="module")
def resnet8() -> list[OpInfo]:
    return list(program_from_module(load_module(RESNET8)).ops)


@dataclass(frozen=True)
class _Chain:
    """A program of `ops` in order, from the first one's input to the last one's output."""

    ops: tuple[OpInfo, ...]

    @property
    def graph_inputs(self) -> tuple[str, ...]:
        return (self.ops[0].inputs[0].name,)

    @property
    def graph_outputs(self) -> tuple[str, ...]:
        return (self.ops[-1].output.name,)


def test_op_info_of_a_strided_conv(example: list[OpInfo]) -> None:
    conv = example[0]
    assert conv.kind == "conv2d"
    assert conv.output.shape == (1, 8, 8, 8)
    assert conv.attributes["kernel"] == (3, 3)
    assert conv.attributes["stride"] == (2, 2)
    assert conv.attributes["padding"] == (0, 0, 1, 1)
    assert conv.attributes["activation"] == "relu6"
    # Weights and bias arrive as function arguments here, but they are still the conv's weights.
    assert [t.shape for t in conv.inputs] == [(1, 16, 16, 3)]
    assert [t.shape for t in conv.weights] == [(8, 3, 3, 3), (8,)]
    assert conv.weights[1].element_bytes == 4
    # 8x8 outputs x 8 channels x 3x3 kernel x 3 input channels.
    assert conv.macs == 8 * 8 * 8 * 27
    # TFLite SAME padding of a stride-2 3x3 conv on 16 rows pads only the bottom (and right):
    # output row 0 reads input rows 0..2, row 7 reads rows 14..16 where row 16 is padding.
    first_row = Region((0, 0, 0, 0), (1, 1, 8, 8))
    assert conv.input_relations[0].input_region(first_row, conv.inputs[0].shape) == Region((0, 0, 0, 0), (1, 3, 16, 3))
    last_row = Region((0, 7, 0, 0), (1, 1, 8, 8))
    assert conv.input_relations[0].input_region(last_row, conv.inputs[0].shape) == Region((0, 14, 0, 0), (1, 2, 16, 3))


def test_program_order_and_names(resnet8: list[OpInfo]) -> None:
    program = program_from_module(load_module(RESNET8))
    assert [op.kind for op in program.ops][-3:] == ["mean", "fully_connected", "softmax"]
    assert program.graph_outputs == ("StatefulPartitionedCall_1:0",)
    assert program.ops[-1].output.name == "StatefulPartitionedCall_1:0"
    # Imported weights carry their values for the target to encode.
    assert isinstance(resnet8[0].attributes["weight_values"], np.ndarray)
    assert len({op.output.name for op in program.ops}) == len(program.ops)


def test_cost_model_implements_the_protocol() -> None:
    model: CostModel = EthosUCostModel(ARCH)
    assert model.buffer_bytes(TensorInfo("t", (1, 5, 16, 24)), (1, 5, 16, 24)) == 2560


def test_buffer_bytes_in_brick_layout() -> None:
    model = EthosUCostModel(ARCH)
    tensor = TensorInfo("t", (1, 32, 32, 24))
    # NHCWB16 rounds 24 channels up to 32: a 5-row stripe is 5 * 32 * 32 = 5120 bytes.
    assert model.buffer_bytes(tensor, (1, 5, 32, 24)) == 5120
    # 3 rows of a 3-channel NHWC tensor: 3 * 7 * 3 = 63 bytes, aligned to 64.
    linear = EthosUCostModel(ARCH, layouts={"x": Layout.NHWC})
    assert linear.buffer_bytes(TensorInfo("x", (1, 9, 7, 3)), (1, 3, 7, 3)) == 64


def test_weight_buffer_is_vela_encoding_plus_scales(resnet8: list[OpInfo]) -> None:
    model = EthosUCostModel(ARCH)
    conv = resnet8[1]  # 3x3, 16 -> 16 channels
    npu = lower(conv, None, weight_bytes=1)[0].npu
    block = select_block_config(npu, ARCH.accelerator)
    weights = conv.attributes["weight_values"].astype(np.int16)
    stream = npu_encode_weights(
        NpuAccelerator.Ethos_U55_128, weights, (1, 1), 8, block.ofm_block[2], False, NpuBlockTraversal.PART_KERNEL_FIRST
    )
    encoded = -(-len(stream) // 16) * 16
    assert model.encoded_weight_bytes(conv) == encoded
    # 16 scale records of 10 bytes = 160, already a multiple of 16.
    assert model.weight_buffer_bytes(conv) == encoded + 160
    assert model.weight_buffer_bytes(resnet8[3]) == 0  # the add has no weights


def test_the_weights_of_a_cpu_operator_are_raw_and_never_encoded(
    resnet8: list[OpInfo], monkeypatch: pytest.MonkeyPatch
) -> None:
    # resnet8's classifier, 64 -> 10: lower-to-ethosu leaves it on the CPU, which reads its
    # 640 weights as TFLite stores them (640 bytes, a multiple of 16), plus 10 scale records.
    from cascade.ethos_u import cost_model, npu_lowering

    fc = resnet8[-2]
    assert fc.kind == "fully_connected"
    model = EthosUCostModel(ARCH)
    assert not model.runs_on_npu(fc)

    def refuse(streams: object = (), *options: object) -> None:
        if streams:  # what to encode: the requests ahead, or one stream's arguments
            raise AssertionError("a CPU operator's weights were encoded")

    monkeypatch.setattr(npu_lowering, "encode_weights", refuse)
    monkeypatch.setattr(npu_lowering, "encode_weights_ahead", refuse)
    monkeypatch.setattr(cost_model, "npu_encode_weights", refuse)
    model.size_weights([fc])
    assert model.encoded_weight_bytes(fc) == 640
    assert model.weight_buffer_bytes(fc) == 640 + 112  # 100 bytes of records, aligned
    assert model.weight_slice_bytes(fc, 8) == 512 + 80  # the larger slice, channels 0-7: 8 * 64 bytes, 80 of records


def test_stripes_cost_more_than_the_whole(resnet8: list[OpInfo]) -> None:
    model = EthosUCostModel(ARCH)
    conv = resnet8[1]  # 32x32x16 output
    whole = model.stripe_cycles(conv, Region.full(conv.output.shape), True)
    stripes = [Region((0, row, 0, 0), (1, 8, 32, 16)) for row in range(0, 32, 8)]
    parts = [model.stripe_cycles(conv, stripe, True) for stripe in stripes]
    assert all(part < whole for part in parts)
    # Every stripe pays its own first IFM block and last OFM block, and edge stripes their halo.
    assert sum(parts) > whole


def test_pipelined_stripes_pay_fill_and_drain_once(resnet8: list[OpInfo]) -> None:
    # Vela prices a cascaded operator as the whole operator with its stripe's block config: the
    # stripes pipeline, and the first IFM fetch, last OFM write, fill and drain are paid once.
    model = EthosUCostModel(ARCH)
    conv = resnet8[1]  # 32x32x16 output
    full = Region.full(conv.output.shape)
    stripes = [Region((0, row, 0, 0), (1, 8, 32, 16)) for row in range(0, 32, 8)]
    alone = [model.stripe_cycles(conv, stripe, True) for stripe in stripes]
    pipelined = [model.pipelined_stripe_cycles(conv, stripe, True) for stripe in stripes]
    assert all(p < a for p, a in zip(pipelined, alone, strict=True))
    once = model.stripe_cycles(conv, full, True) - model.pipelined_stripe_cycles(conv, full, True)
    assert once > 0
    # The whole operator run in 8-row blocks, priced once: within a few % of the whole (the
    # stripes' blocks are at most 8 rows, the whole's may be taller).
    whole = model.stripe_cycles(conv, full, True)
    assert abs(sum(pipelined) + once - whole) <= 0.05 * whole


def test_weights_in_sram_pay_off_when_they_are_refetched(resnet8: list[OpInfo]) -> None:
    model = EthosUCostModel(ARCH)
    conv = resnet8[1]
    full = Region.full(conv.output.shape)
    # The 32x32 output is computed in several block rows; each re-reads the weights: from flash
    # at 1 B/cycle that dominates, from SRAM it is hidden under the MACs.
    assert model.stripe_cycles(conv, full, True) < model.stripe_cycles(conv, full, False)
    # Copying them in costs one pass over flash plus its latency.
    assert model.weight_transfer_cycles(conv) == model.weight_buffer_bytes(conv) + 64


def test_region_cost_follows_the_memory_map(resnet8: list[OpInfo]) -> None:
    model = EthosUCostModel(ARCH)
    add = resnet8[3]
    full = Region.full(add.output.shape)
    in_sram = model.region_cost(
        add, full, MemoryMap(ARCH.staging_memory, ARCH.staging_memory, ARCH.const_memory), False
    )
    assert set(in_sram.bytes_by_memory()) == {"Sram"}
    # 32x32x16 int8 inputs twice and one output: 3 * 16384 bytes.
    assert in_sram.bytes_by_memory()["Sram"] == 3 * 16384


BROADCAST_ADD = """
func.func @main(%small: tensor<1x1x1x16xi8>, %big: tensor<1x8x8x16xi8>) -> tensor<1x8x8x16xi8> {
  %0 = nn.add %small, %big {activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>,
    input2_quant = #nn.quant<0.75:3>, output_quant = #nn.quant<1.0:0>}
    : (tensor<1x1x1x16xi8>, tensor<1x8x8x16xi8>) -> tensor<1x8x8x16xi8>
  func.return %0 : tensor<1x8x8x16xi8>
}
"""


def test_lowering_swaps_a_broadcast_first_operand(tmp_path: Path) -> None:
    source = tmp_path / "add.mlir"
    source.write_text(BROADCAST_ADD)
    add = program_from_module(load_module(source)).ops[0]
    (step,) = lower(add)
    assert step.npu.kind is NpuKind.ELEMENTWISE
    assert step.npu.ifm == (8, 8, 16)
    assert step.npu.ifm2 == (1, 1, 16)
    assert step.ifm2 is not None
    assert step.ifm2.tensor == add.inputs[0].name


def test_lowering_of_mean_and_softmax(resnet8: list[OpInfo]) -> None:
    mean, softmax = resnet8[-3], resnet8[-1]
    sums, scale = lower(mean, None, weight_bytes=528)
    # Mean over 8x8 of 64 channels: a depthwise 8x8 sum to int32, then a multiply to int8.
    assert sums.npu.kind is NpuKind.DEPTHWISE
    assert (sums.npu.kernel.height, sums.npu.kernel.width) == (8, 8)
    assert sums.npu.ofm == (1, 1, 64)
    assert sums.npu.ofm_bits == 32
    assert scale.npu.sub_kind == "mul"
    assert scale.npu.ifm2 == (1, 1, 1)
    steps = lower(softmax)
    # Max, exponent table, sum, reciprocal (10 + 3 x 5 scalar steps) and the final scaling.
    assert len(steps) == 28
    assert steps[0].npu.kind is NpuKind.POOLING
    assert steps[0].npu.ifm == (1, 10, 1)
    assert steps[1].npu.activation is Activation.LUT
    assert steps[-1].ofm.tensor == softmax.output.name


def test_unsupported_and_free_operators() -> None:
    reshape = OpInfo("r", "reshape", TensorInfo("r", (1, 64)), (TensorInfo("x", (1, 8, 8)),), ())
    assert lower(reshape) == []
    unknown = OpInfo("u", "gather", TensorInfo("u", (4,)), (), ())
    with pytest.raises(UnsupportedOpError, match=r"nn\.gather"):
        lower(unknown)


def test_hwc_folds_shapes() -> None:
    assert hwc((1, 7, 7, 32)) == (7, 7, 32)
    assert hwc((2, 7, 7, 32)) == (14, 7, 32)
    assert hwc((1, 1000)) == (1, 1, 1000)
    assert hwc((10,)) == (1, 1, 10)


def test_the_planners_interpolated_prices_are_exact_on_sampled_2d_boxes(resnet8: list[OpInfo]) -> None:
    # The planner prices boxes from samples at heights and widths in {1, 2, 3, 4, 5, 8, 9, ...,
    # extent} (powers of two and one more); on those sizes its price must be the cost model's
    # own, also for boxes narrower than the tensor on both axes (a 1x2 stripe pays whole
    # blocks: far more than 1/512 of the operator).
    from cascade.passes.planner.program import ProgramGraph
    from cascade.passes.planner.search import Pricer

    graph = ProgramGraph.build(_Chain(tuple(resnet8)))
    cost = EthosUCostModel(arch_config("ethos-u55-128"))
    sampled, exact = Pricer(graph, cost), Pricer(graph, cost, exact=True)
    conv = next(i for i, op in enumerate(resnet8) if op.kind == "conv2d" and op.output.shape[1] == 32)
    for height, width in ((1, 2), (2, 4), (4, 1), (8, 16), (9, 5), (3, 17)):
        box = Region((0, 12, 12, 0), (1, height, width, 16))
        for pipelined in (False, True):
            assert sampled.box(conv, box, True, pipelined) == exact.box(conv, box, True, pipelined)
    # And a 1x2 stripe costs more than its share of the whole operator's MACs.
    tiny = Region((0, 12, 12, 0), (1, 1, 2, 16))
    assert sampled.box(conv, tiny, True, True) > 4 * sampled.whole(conv, True, True) / (32 * 16)


@pytest.mark.parametrize("budget", [None, 35_840])
def test_a_plans_cycles_are_counted_on_its_exact_stripe_boxes(resnet8: list[OpInfo], budget: int | None) -> None:
    # The search interpolates box prices between sampled sizes; the cycles of the plan it
    # returns are recounted box by box with the cost model (`Candidates.exact_path`). Recount
    # here, independently, each striped cascade's compute cycles from its geometry.
    from cascade.passes.planner.plan import PlanOptions, plan_program
    from cascade.passes.planner.search import Pricer

    cost = EthosUCostModel(ARCH)
    result = plan_program(_Chain(tuple(resnet8)), cost, PlanOptions(sram_budget=budget, objective="min-sram"))
    exact, sampled = Pricer(result.graph, cost, exact=True), Pricer(result.graph, cost)
    striped = interpolation_off = 0
    for cascade in result.cascades:
        if cascade.sink == cascade.first:
            continue
        striped += 1
        geometry = result.geometry(cascade)
        counts = []
        for pricer in (exact, sampled):
            total = 0
            for op in range(cascade.first, cascade.sink + 1):
                boxes = geometry.price_boxes(op)
                op_cycles = pricer.once(op, cascade.weights_in_sram) + sum(
                    count * pricer.box(op, box, cascade.weights_in_sram, pipelined=True) for box, count in boxes
                )
                total += round(op_cycles)
            counts.append(total)
        compute, interpolated = counts
        interpolation_off += compute != interpolated
        ops = range(cascade.first, cascade.sink + 1)
        transfer = sum(cost.weight_transfer_cycles(result.graph.ops[op]) for op in ops)
        if cascade.weights_in_sram:
            # The one weight copy adds at most its own cycles (less when it is prefetched).
            assert compute <= cascade.cycles <= compute + transfer
        else:
            assert cascade.cycles == compute
    assert striped >= 1
    # The recount matters: interpolation is off on some cascade of the smallest plan.
    assert budget is not None or interpolation_off >= 1


def test_memoised_views_are_those_computed_afresh(resnet8: list[OpInfo]) -> None:
    # The cost model memoises each region's lowering and each operator's encoder-ready
    # weights; both must be what a fresh computation gives, and `Pricer.add_stripes` (the
    # search's inlined sum of stripe prices) must add exactly what `Pricer.stripe` prices.
    import pickle
    from itertools import product

    from cascade.ethos_u.performance import NpuOp
    from cascade.passes.planner.program import ProgramGraph
    from cascade.passes.planner.search import Pricer

    graph = ProgramGraph.build(_Chain(tuple(resnet8)))
    cost = EthosUCostModel(arch_config("ethos-u55-128"))
    checked = 0
    for op in resnet8:
        if len(op.output.shape) != 4:
            continue
        full = Region.full(op.output.shape)
        for rows in (1, 3, op.output.shape[1]):
            region = Region((0, op.output.shape[1] - rows, 0, 0), (1, rows, *op.output.shape[2:]))
            for output in (region, full, None):
                fresh = lower(op, output, cost.layouts, cost.encoded_weight_bytes(op))
                assert list(cost.lower(op, output)) == fresh
                assert cost.lower(op, output) is cost.lower(op, output)  # memoised
                for step in fresh:
                    npu = step.npu
                    assert hash(npu) == hash(tuple(getattr(npu, name) for name in npu.__dataclass_fields__))
                    copy = pickle.loads(pickle.dumps(npu))
                    assert isinstance(copy, NpuOp)
                    assert copy == npu
                    assert "_hash" not in copy.__dict__
                    assert hash(copy) == hash(npu)
                    checked += 1
        if op.kind in ("conv2d", "depthwise_conv2d"):
            npu = cost.lower(op)[0].npu
            args = (op, npu.kernel.height, npu.kernel.width, npu.ofm[2])
            kept = cost._encoder_weights(*args)
            assert np.array_equal(kept, EthosUCostModel._ohwi_weights(*args))
            assert not kept.flags.writeable
    assert checked > 50
    pricer = Pricer(graph, cost)
    for index, op in enumerate(resnet8):
        shape = op.output.shape
        if len(shape) != 4:
            continue
        heights, widths = sorted({1, 3, shape[1]}), sorted({2, shape[2]})
        rows = tuple(((h, h == shape[1], False), count, 0) for h, count in zip(heights, (3, 1, 2), strict=False))
        columns = tuple(((w, True, w == shape[2]), count, 0) for w, count in zip(widths, (2, 1), strict=False))
        for weights_in_sram in (True, False):
            expected = 7.0
            for ((h, _, _), rc, _), ((w, _, _), cc, _) in product(rows, columns):
                expected += rc * cc * pricer.stripe(index, h, w, weights_in_sram, True)
            assert pricer.add_stripes(7.0, index, rows, columns, weights_in_sram) == expected


def _count_encoding(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """The weight streams this process encodes from now on, from empty memos, with two cores
    and forking allowed. A forked child's calls land in the child's copy of the list."""
    from cascade import parallel
    from cascade.ethos_u import cost_model, npu_lowering

    npu_lowering._STREAMS.clear()
    cost_model._ENCODED_SIZES.clear()
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    monkeypatch.setattr(parallel, "_can_fork", lambda: True)
    real_encode = npu_lowering._encode
    calls: list[tuple[object, ...]] = []

    def counting_encode(*key: object) -> bytes:
        calls.append(key)
        return real_encode(*key)

    monkeypatch.setattr(npu_lowering, "_encode", counting_encode)
    return calls


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the encoder's child is forked on Linux only")
def test_weights_sized_ahead_in_two_processes_are_those_sized_one_by_one(
    resnet8: list[OpInfo], monkeypatch: pytest.MonkeyPatch
) -> None:
    from cascade import parallel

    weighted = [op for op in resnet8 if op.weights]
    one_by_one = EthosUCostModel(ARCH)
    expected = [one_by_one.weight_buffer_bytes(op) for op in weighted]
    assert len(set(expected)) > 3

    encoded_here = _count_encoding(monkeypatch)
    monkeypatch.setattr(parallel, "MIN_SIZE", 0)
    ahead = EthosUCostModel(ARCH)
    ahead.size_weights(weighted)
    # This process encoded its share only: the child encoded the rest, and nothing twice.
    assert 0 < len(encoded_here) < len(weighted)
    assert [ahead.weight_buffer_bytes(op) for op in weighted] == expected
    assert [ahead.weight_slice_bytes(op, 16) for op in weighted[:3]] == [
        one_by_one.weight_slice_bytes(op, 16) for op in weighted[:3]
    ]
    encoded = len(encoded_here)
    ahead.size_weight_slices(weighted[3], [16, 32])
    assert [ahead.weight_slice_bytes(weighted[3], depth) for depth in (16, 32)] == [
        one_by_one.weight_slice_bytes(weighted[3], depth) for depth in (16, 32)
    ]
    assert 0 < len(encoded_here) - encoded < (weighted[3].output.shape[-1] // 16) + (weighted[3].output.shape[-1] // 32)
    # A second model in the same process finds every stream memoised: nothing is encoded again.
    encoded = len(encoded_here)
    again = EthosUCostModel(ARCH)
    again.size_weights(weighted)
    assert [again.weight_buffer_bytes(op) for op in weighted] == expected
    assert len(encoded_here) == encoded


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the encoder's child is forked on Linux only")
def test_only_the_upfront_sizing_forks_below_the_usual_share(
    resnet8: list[OpInfo], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole streams sized before the search share the encoder from `UPFRONT_SHARE`; the
    slices sized during it, each call a few streams, keep `parallel.MIN_SIZE`."""
    from cascade.ethos_u import cost_model

    weighted = [op for op in resnet8 if op.weights]
    encoded_here = _count_encoding(monkeypatch)
    monkeypatch.setattr(cost_model, "UPFRONT_SHARE", 0)
    model = EthosUCostModel(ARCH)
    model.size_weights(weighted)
    assert 0 < len(encoded_here) < len(weighted)
    encoded = len(encoded_here)
    model.size_weight_slices(weighted[3], [16])
    assert len(encoded_here) - encoded == weighted[3].output.shape[-1] // 16  # every slice, here


def _count_encodings(monkeypatch: pytest.MonkeyPatch) -> list[OpInfo]:
    """The operators whose weights any cost model lowers and encodes from now on."""
    encoded: list[OpInfo] = []
    real_encoding = EthosUCostModel._encoding

    def counting_encoding(self: EthosUCostModel, op: OpInfo, channels: tuple[int, int] | None) -> object:
        encoded.append(op)
        return real_encoding(self, op, channels)

    monkeypatch.setattr(EthosUCostModel, "_encoding", counting_encoding)
    return encoded


def test_a_second_cost_model_finds_the_sizes_the_first_encoded(
    resnet8: list[OpInfo], monkeypatch: pytest.MonkeyPatch
) -> None:
    """allocate-memory builds its own cost model for the program cascade-plan sized: the sizes
    are shared, not lowered and encoded again, and are those a model encoding afresh finds."""
    from cascade.ethos_u import cost_model

    weighted = [op for op in resnet8 if op.weights]
    first = EthosUCostModel(ARCH)
    wholes = [first.weight_buffer_bytes(op) for op in weighted]
    slices = [first.weight_slice_bytes(op, 16) for op in weighted]
    # The ops rebuilt from the same IR, as the next pass reads them: equal, not the same objects.
    rebuilt = list(program_from_module(load_module(RESNET8)).ops)
    rebuilt_weighted = [op for op in rebuilt if op.weights]
    assert rebuilt_weighted == weighted
    assert rebuilt_weighted[0] is not weighted[0]
    encoded = _count_encodings(monkeypatch)
    second = EthosUCostModel(ARCH)
    assert [second.weight_buffer_bytes(op) for op in rebuilt_weighted] == wholes
    assert [second.weight_slice_bytes(op, 16) for op in rebuilt_weighted] == slices
    assert encoded == []
    cost_model._ENCODED_SIZES.clear()
    fresh = EthosUCostModel(ARCH)
    assert [fresh.weight_buffer_bytes(op) for op in rebuilt_weighted] == wholes
    on_npu = [op for op in rebuilt_weighted if fresh.runs_on_npu(op)]  # the CPU's are raw
    assert len(on_npu) > 5
    assert encoded == on_npu


@pytest.mark.parametrize(
    "change",
    ["stride", "dilation", "layout", "accelerator"],
)
def test_shared_sizes_follow_what_the_encoding_depends_on(
    resnet8: list[OpInfo], monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """An operator of the same name and weights but another stride, dilation, tensor layout or
    accelerator is encoded again: the shared sizes never answer for another encoding."""
    from collections import OrderedDict
    from dataclasses import replace

    from cascade.ethos_u import cost_model

    # Sizes other tests of this process shared would answer for the changed operator too.
    monkeypatch.setattr(cost_model, "_ENCODED_SIZES", OrderedDict())

    op = next(op for op in resnet8 if op.kind == "conv2d" and op.attributes["kernel"] == (3, 3))
    EthosUCostModel(ARCH).weight_buffer_bytes(op)
    arch, layouts, changed = ARCH, None, op
    if change in ("stride", "dilation"):
        attributes = dict(op.attributes)
        attributes[change] = (2, 2) if attributes[change] == (1, 1) else (1, 1)
        changed = replace(op, attributes=attributes)
    elif change == "layout":
        layouts = {op.inputs[0].name: Layout.NHWC}
    else:
        arch = arch_config("ethos-u65-256")
    encoded = _count_encodings(monkeypatch)
    EthosUCostModel(arch, layouts).weight_buffer_bytes(changed)
    assert encoded == [changed]


class _BatchingCost(EthosUCostModel):
    """Records when the planner sizes weights: all at once first, then one by one."""

    def __init__(self) -> None:
        super().__init__(ARCH)
        self.calls: list[tuple[object, ...]] = []

    def size_weights(self, ops: Sequence[OpInfo]) -> None:
        self.calls.append(("size_weights", tuple(op.name for op in ops)))
        super().size_weights(ops)

    def size_weight_slices(self, op: OpInfo, depths: Sequence[int]) -> None:
        self.calls.append(("size_weight_slices", op.name, tuple(depths)))
        super().size_weight_slices(op, depths)

    def weight_buffer_bytes(self, op: OpInfo) -> int:
        self.calls.append(("weight_buffer_bytes", op.name))
        return super().weight_buffer_bytes(op)

    def weight_slice_bytes(self, op: OpInfo, depth: int) -> int:
        self.calls.append(("weight_slice_bytes", op.name, depth))
        return super().weight_slice_bytes(op, depth)


def test_the_planner_sizes_weights_in_batches_before_it_asks_for_them() -> None:
    # The planner tells the cost model every operator with weights before it asks for any, and
    # each operator's kept slice depths before it asks for their slices: the batches
    # `EthosUCostModel` shares out over two processes. resnet8 under 30000 bytes keeps slices.
    from cascade.passes.planner.plan import PlanOptions, plan_program

    program = program_from_module(load_module(TEST / "models" / "resnet8_nosoftmax.tflite"))
    cost = _BatchingCost()
    plan_program(program, cost, PlanOptions(sram_budget=30000))
    weighted = tuple(op.name for op in program.ops if op.weights)
    assert cost.calls[0] == ("size_weights", weighted)
    assert [call for call in cost.calls if call[0] == "size_weights"] == [cost.calls[0]]
    announced: set[tuple[object, object]] = set()
    sliced = 0
    for call in cost.calls:
        if call[0] == "size_weight_slices":
            announced.update((call[1], depth) for depth in call[2])  # type: ignore[union-attr]
        elif call[0] == "weight_slice_bytes":
            assert (call[1], call[2]) in announced, call
            sliced += 1
    assert sliced > 0
