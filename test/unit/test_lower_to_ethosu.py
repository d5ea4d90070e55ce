"""lower-to-ethosu: the allocated test models lowered to command streams, serialized by Vela,
run by the functional model over SRAM images built from the allocation, bit-exact with the nn
interpreter (the outputs, the tensors the CPU reads from the NPU, and, where the random-weight
models saturate, every tensor live after the last operator whose result varies); the streams
disassemble to the same commands; the ethosu-cs target."""

from __future__ import annotations

import functools
import io
import os
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, UnrealizedConversionCastOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.utils.exceptions import DiagnosticException

from cascade.dialects import ethosu, nn
from cascade.dialects.cascade import ForStripesOp
from cascade.ethos_u import serialize
from cascade.ethos_u.targets import EthosUCommandStreamTarget, command_stream_text, get_all_targets
from cascade.frontends.loader import load_module
from cascade.interpreter.nn import input_types, main_function, run_program
from cascade.interpreter.prefix import informative_prefix
from cascade.passes.allocate_memory import AllocateMemoryPass
from cascade.passes.cascade_plan import CascadePlanPass
from cascade.passes.lower_to_ethosu import LowerToEthosUPass, NpuRegions, compare_lowered, run_lowered
from cascade.passes.rolling_buffer import RollingBufferPass

MODELS = Path(__file__).parents[1] / "models"
ACCELERATOR = "ethos-u55-128"

CASES = [
    ("resnet8_nosoftmax", 30000),
    ("ds_cnn_kws_nosoftmax", 20000),
    ("mbv1_025_96", 60000),
    ("ds_cnn_kws", 100000),
    ("mbv2_035_96", 60000),
]


@functools.cache
def _original(model: str) -> ModuleOp:
    return load_module(str(MODELS / f"{model}.tflite"))


def _allocated(model: str, budget: int, accelerator: str = ACCELERATOR, striping: str = "hwc") -> ModuleOp:
    return _allocate(_original(model).clone(), budget, accelerator, striping)


def _allocate(module: ModuleOp, budget: int, accelerator: str = ACCELERATOR, striping: str = "hwc") -> ModuleOp:
    ctx = Context()
    CascadePlanPass(accelerator=accelerator, sram_budget=budget, striping=striping).apply(ctx, module)
    RollingBufferPass().apply(ctx, module)
    AllocateMemoryPass(accelerator=accelerator).apply(ctx, module)
    return module


@functools.cache
def _lowered(
    model: str, budget: int, fc_on_npu: bool = False, accelerator: str = ACCELERATOR, striping: str = "hwc"
) -> tuple[ModuleOp, int]:
    """The lowered module and how many stripe loops the allocated one had."""
    module = _allocated(model, budget, accelerator, striping)
    loops = sum(isinstance(op, ForStripesOp) for op in module.walk())
    LowerToEthosUPass(accelerator=accelerator, fc_on_npu=fc_on_npu).apply(Context(), module)
    return module, loops


def _inputs(model: str, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=t.get_shape(), dtype=np.int8) for t in input_types(_original(model))]


def _streams(module: ModuleOp) -> list[ethosu.CommandStreamOp]:
    return [op for op in module.walk() if isinstance(op, ethosu.CommandStreamOp)]


@pytest.mark.parametrize(("model", "budget"), CASES, ids=[f"{m}@{b}" for m, b in CASES])
def test_model_runs_bit_exact_on_the_functional_model(model: str, budget: int) -> None:
    module, _ = _lowered(model, budget)
    module.verify()
    streams = _streams(module)
    assert len(streams) == 1
    kernels = [c for c in streams[0].commands if not isinstance(c, ethosu.DmaOp)]
    assert kernels
    # Only fully_connected and softmax stay on the CPU.
    cpu = {op.name for op in module.walk() if isinstance(op, nn.NNOperation)}
    assert cpu <= {"nn.fully_connected", "nn.softmax"}
    for seed in (0, 1):
        # The outputs, and the tensors the CPU reads from the NPU (the pooled features).
        comparison = compare_lowered(_original(model), module, _inputs(model, seed))
        assert len(comparison.outputs) == len(main_function(module).function_type.outputs)
        assert not comparison.mismatches
        # Every model here ends in a fully connected layer on the CPU, reading the NPU's result.
        assert len(comparison.read) == 1


@functools.cache
def _varied(model: str) -> ModuleOp:
    """The model up to its last operator whose result, and every tensor live past it, takes
    several values on the test's inputs (`informative_prefix`)."""
    return informative_prefix(_original(model), _inputs(model, 0))


@pytest.mark.parametrize(("model", "budget"), CASES, ids=[f"{m}@{b}" for m, b in CASES])
def test_model_runs_bit_exact_up_to_its_last_varied_tensor(model: str, budget: int) -> None:
    """The random-weight models saturate deep down: mbv1_025_96's pooled features hold one
    value on these inputs, so its whole run compares little. Cut after the last operator whose
    result varies (15 of its 30 operators), the lowered cascades are compared on tensors that
    do, on both seeds."""
    program = _varied(model)
    module = _allocate(program.clone(), budget)
    assert any(isinstance(op, ForStripesOp) for op in module.walk())
    LowerToEthosUPass(accelerator=ACCELERATOR).apply(Context(), module)
    kept = [op for op in main_function(program).body.block.ops if isinstance(op, nn.NNOperation)]
    assert len(kept) >= 10
    for seed in (0, 1):
        comparison = compare_lowered(program, module, _inputs(model, seed))
        assert not comparison.mismatches
        assert comparison.outputs
        assert all(informative for _, _, informative in comparison.outputs), comparison.outputs


def test_resnet8_stripe_loops_become_interleaved_stripes_with_rolling_tiles() -> None:
    module, loops = _lowered("resnet8_nosoftmax", 30000)
    assert loops >= 2
    assert not any(isinstance(op, ForStripesOp) for op in module.walk())
    (stream,) = _streams(module)
    fms = [c.ifm for c in stream.commands if not isinstance(c, ethosu.DmaOp)]
    # Some stripe reads a rolling buffer across its wrap (a second tile).
    assert any(fm.tiles.addresses[2] for fm in fms)
    # SRAM weights are DMA'd from flash into their allocated placement (all of it, or one half
    # for weights double-buffered in slices) before use.
    dmas = [c for c in stream.commands if isinstance(c, ethosu.DmaOp) and c.dest.region == 1]
    assert dmas
    placements = [
        op.attributes["cascade.weights_placement"]
        for op in _allocated("resnet8_nosoftmax", 30000).walk()
        if "cascade.weights_placement" in op.attributes
    ]
    for dma in dmas:
        start, end = dma.dest.address, dma.dest.address + dma.dest.length
        assert any(p.get_offset() <= start and end <= p.get_offset() + p.get_size() for p in placements)  # type: ignore[union-attr]


def test_dropping_a_command_changes_the_outputs() -> None:
    """The check is not vacuous: the outputs depend on every command (SRAM starts poisoned)."""
    module, _ = _lowered("ds_cnn_kws_nosoftmax", 20000)
    module = module.clone()
    (stream,) = _streams(module)
    commands = list(stream.commands)
    commands[len(commands) // 2].detach()
    inputs = _inputs("ds_cnn_kws_nosoftmax")
    want = run_program(_original("ds_cnn_kws_nosoftmax"), inputs).outputs
    assert not np.array_equal(run_lowered(module, inputs)[0], want[0])


@pytest.mark.parametrize(("model", "budget"), CASES[:2], ids=[f"{m}@{b}" for m, b in CASES[:2]])
def test_streams_disassemble_to_the_same_commands(model: str, budget: int) -> None:
    module, _ = _lowered(model, budget)
    for stream in _streams(module):
        words = serialize.command_stream_words(stream)
        back = serialize.disassemble(words, ACCELERATOR)
        assert serialize.stream_signature(back.commands) == serialize.stream_signature(stream.commands)
        payload = serialize.driver_payload(stream)
        again = serialize.disassemble(payload)
        assert serialize.stream_signature(again.commands) == serialize.stream_signature(stream.commands)


def test_cpu_operators_read_npu_results_through_placed_loads() -> None:
    module, _ = _lowered("ds_cnn_kws", 100000)
    (function,) = [op for op in module.ops if isinstance(op, FuncOp)]
    ops = list(function.body.block.ops)
    stream = next(i for i, op in enumerate(ops) if isinstance(op, ethosu.CommandStreamOp))
    load = next(i for i, op in enumerate(ops) if isinstance(op, UnrealizedConversionCastOp))
    fc = next(i for i, op in enumerate(ops) if isinstance(op, nn.FullyConnectedOp))
    assert stream < load < fc
    assert ops[fc].operands[0] is ops[load].results[0]
    assert "cascade.placement" in ops[load].attributes
    # Constants: region 0 is the stream's own flash image; every range lies inside it.
    image = ops[stream].flash_image()
    ranges = [
        attr
        for command in ops[stream].commands
        for attr in (*getattr(command, "weights", ()), *getattr(command, "biases", ()))
    ]
    flash = [attr for attr in ranges if attr.region == 0]
    assert flash
    assert {attr.region for attr in ranges} <= {0, 1}  # 1: SRAM weights, DMA'd from flash
    assert max(attr.address + attr.length for attr in flash) <= len(image)


def test_fully_connected_on_the_npu_is_within_one_lsb() -> None:
    """The NPU's fixed-point FC may differ from TFLite's reference by 1 LSB: that is why it
    stays on the CPU by default."""
    module, _ = _lowered("ds_cnn_kws_nosoftmax", 20000, fc_on_npu=True)
    assert not any(isinstance(op, nn.NNOperation) for op in module.walk())
    inputs = _inputs("ds_cnn_kws_nosoftmax")
    want = run_program(_original("ds_cnn_kws_nosoftmax"), inputs).outputs[0].astype(np.int64)
    got = run_lowered(module, inputs)[0].astype(np.int64)
    assert np.abs(got - want).max() <= 1


def test_unallocated_ir_is_rejected_and_empty_functions_are_unchanged() -> None:
    module = _original("ds_cnn_kws_nosoftmax").clone()
    with pytest.raises(DiagnosticException, match="not allocated"):
        LowerToEthosUPass(accelerator=ACCELERATOR).apply(Context(), module)
    function = FuncOp("f", ((), ()))
    function.body.block.add_op(ReturnOp())
    empty = ModuleOp([function])
    before = str(empty)
    LowerToEthosUPass().apply(Context(), empty)
    assert str(empty) == before


def test_ethosu_cs_target_writes_the_command_stream_words() -> None:
    module, _ = _lowered("ds_cnn_kws_nosoftmax", 20000)
    (stream,) = _streams(module)
    words = serialize.command_stream_words(stream)
    lines = command_stream_text(module).splitlines()
    assert lines[0] == f"// ethosu.command_stream 0 ({ACCELERATOR}): command stream, {len(words)} words"
    assert [int(line, 16) for line in lines[1:]] == words
    payload = command_stream_text(module, payload=True).splitlines()
    data = b"".join(int(line, 16).to_bytes(4, "little") for line in payload[1:])
    assert data == serialize.driver_payload(stream)
    assert get_all_targets()["ethosu-cs"]() is EthosUCommandStreamTarget
    out = io.StringIO()
    EthosUCommandStreamTarget(payload=False).emit(Context(), module, out)
    assert out.getvalue() == command_stream_text(module)


def test_ethosu_pipeline_is_the_four_passes_and_records_the_system_config() -> None:
    from cascade.passes.ethosu_pipeline import EthosUPipelinePass

    module = _original("ds_cnn_kws_nosoftmax").clone()
    EthosUPipelinePass(accelerator=ACCELERATOR, sram_budget=20000, system_config="Ethos_U55_High_End_Embedded").apply(
        Context(), module
    )
    (stream,) = _streams(module)
    assert stream.system_config is not None
    assert stream.system_config.data == "Ethos_U55_High_End_Embedded"
    stream.system_config = None
    # The plan records the system config it was given too (the passes alone were given none).
    (function,) = [op for op in module.ops if isinstance(op, FuncOp)]
    assert function.attributes.pop("cascade.system_config") == StringAttr("Ethos_U55_High_End_Embedded")
    assert str(module) == str(_lowered("ds_cnn_kws_nosoftmax", 20000)[0])


def test_ethosu_pipeline_checks_names_first() -> None:
    from cascade.passes.ethosu_pipeline import EthosUPipelinePass

    module = _original("ds_cnn_kws_nosoftmax").clone()
    before = str(module)
    with pytest.raises(DiagnosticException, match="unknown memory mode 'Nope'"):
        EthosUPipelinePass(memory_mode="Nope").apply(Context(), module)
    assert str(module) == before


Triple = tuple[int, int, int]


def _kernel_blocks(module: ModuleOp) -> list[tuple[str, Triple, Triple, Triple]]:
    """(command, IFM shape, OFM shape, block) of every convolution, depthwise and pooling command."""
    kinds = (ethosu.Conv2DOp, ethosu.DepthwiseConv2DOp, ethosu.PoolingOp)

    def triple(shape: ethosu.Shape3DAttr) -> Triple:
        return (shape.height, shape.width, shape.depth)

    return [
        (op.name, triple(op.ifm.shape), triple(op.ofm.shape), triple(op.block_config))
        for op in module.walk()
        if isinstance(op, kinds)
    ]


@pytest.mark.parametrize(
    ("model", "accelerator"),
    [
        ("mbv2_035_96", "ethos-u55-128"),
        ("resnet8", "ethos-u65-256"),
        ("mbv1_025_96", "ethos-u55-64"),
        ("ds_cnn_kws", "ethos-u55-256"),
    ],
)
def test_operators_run_the_block_configs_vela_chooses(tmp_path: Path, model: str, accelerator: str) -> None:
    """Unstriped, every kernel command uses the OFM block Vela itself programs for that operator
    (read back from Vela's own output with the disassembler), so the cycles the cost model
    estimates with Vela's block choice are those of the stream. Vela splits some operators into
    several commands and runs softmax on the NPU: commands are matched by kind and IFM/OFM
    shapes, in order, and most of ours must find their match."""
    import subprocess

    subprocess.run(
        ["vela", "--accelerator-config", accelerator, "--output-dir", str(tmp_path), str(MODELS / f"{model}.tflite")],
        check=True,
        capture_output=True,
    )
    theirs = _kernel_blocks(serialize.disassemble_file(tmp_path / f"{model}_vela.tflite"))
    ours_module = load_module(MODELS / f"{model}.tflite")
    ctx = Context()
    CascadePlanPass(accelerator=accelerator, striping="none").apply(ctx, ours_module)
    RollingBufferPass().apply(ctx, ours_module)
    AllocateMemoryPass(accelerator=accelerator).apply(ctx, ours_module)
    # Whole operators only: weights double-buffered in slices run one command per slice.
    for op in ours_module.walk():
        op.attributes.pop("cascade.weight_slice_depth", None)
    LowerToEthosUPass(accelerator=accelerator).apply(ctx, ours_module)
    ours = _kernel_blocks(ours_module)
    matched = 0
    position = 0
    for kind, ifm, ofm, block in ours:
        found = next((i for i in range(position, len(theirs)) if theirs[i][:3] == (kind, ifm, ofm)), None)
        if found is None:
            continue
        assert theirs[found][3] == block, f"{kind} {ifm} -> {ofm}: Vela's block {theirs[found][3]}, ours {block}"
        matched, position = matched + 1, found + 1
    assert matched >= 0.6 * len(ours), f"only {matched} of {len(ours)} commands matched Vela's"


def test_intermediates_are_bricked_and_graph_edges_linear() -> None:
    """Between NPU operators feature maps are NHCWB16, as the cost model prices them; the graph
    input and what the CPU reads back (the pooled features for the FC) stay dense NHWC."""
    module, _ = _lowered("resnet8", 60000)
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    (stream,) = _streams(module)
    maps = [fm for op in stream.commands for fm in (getattr(op, "ifm", None), getattr(op, "ofm", None)) if fm]
    layouts = {fm.layout.data for fm in maps}
    assert layouts == {ethosu.Layout.NHWC, ethosu.Layout.NHCWB16}
    # The stream's first kernel reads the graph input; its last writes what the CPU loads.
    (load,) = [op for op in function.walk() if isinstance(op, UnrealizedConversionCastOp)]
    kernels = [op for op in stream.commands if getattr(op, "ofm", None) is not None]
    assert kernels[-1].ofm.tiles.addresses[0] == load.attributes["cascade.placement"].get_offset()
    assert kernels[-1].ofm.layout.data == ethosu.Layout.NHWC
    first = kernels[0]
    assert first.ifm.layout.data == ethosu.Layout.NHWC
    assert first.ofm.layout.data == ethosu.Layout.NHCWB16


@pytest.mark.parametrize("model", ["resnet8_nosoftmax", "ds_cnn_kws_nosoftmax"])
def test_two_core_u65_512_streams_run_bit_exact(model: str) -> None:
    """On the two-core Ethos-U65-512 every weighted command carries one weight stream and one
    set of bias records per core; the functional model runs the serialized stream bit-exact."""
    from cascade.passes.ethosu_pipeline import EthosUPipelinePass

    accelerator = "ethos-u65-512"
    module = _original(model).clone()
    ctx = Context()
    for stage in EthosUPipelinePass(accelerator=accelerator).stages():
        stage.apply(ctx, module)
    weighted = [
        op for op in module.walk() if isinstance(op, ethosu.Conv2DOp | ethosu.DepthwiseConv2DOp) and op.weight_ranges
    ]
    assert weighted
    assert any(len(op.weight_ranges) == 2 and len(op.bias_ranges) == 2 for op in weighted)
    inputs = _inputs(model)
    want = run_program(_original(model), inputs).outputs
    got = run_lowered(module, inputs)
    assert len(np.unique(want[0])) > 1
    assert all(np.array_equal(w, g) for w, g in zip(want, got, strict=True))


def test_vela_splits_u65_512_weights_into_even_and_odd_channels(tmp_path: Path) -> None:
    """The rule our two-core lowering and functional model follow, checked on Vela's own output:
    decoding core k's stream of a Vela-compiled U65-512 convolution (at block depth
    ceil((d - k) / 2)) gives exactly the model's output channels k, k + 2, ..."""
    import subprocess

    from cascade.interpreter.ethosu import decode_weights
    from cascade.interpreter.nn import constant_array

    model = "mbv1_025_96"
    subprocess.run(
        [
            "vela",
            "--accelerator-config",
            "ethos-u65-512",
            "--output-dir",
            str(tmp_path),
            str(MODELS / f"{model}.tflite"),
        ],
        check=True,
        capture_output=True,
    )
    (stream,) = serialize.disassemble_file(tmp_path / f"{model}_vela.tflite").ops
    flash = stream.flash_image()
    convs = [op for op in _original(model).walk() if isinstance(op, nn.Conv2DOp | nn.DepthwiseConv2DOp)]
    copies: list[ethosu.DmaOp] = []  # Vela copies weights into SRAM first: follow the DMAs back
    checked = 0
    for command in stream.commands:
        if isinstance(command, ethosu.DmaOp):
            copies.append(command)
            continue
        if not isinstance(command, ethosu.Conv2DOp | ethosu.DepthwiseConv2DOp) or checked >= len(convs):
            continue
        op = convs[checked]
        depthwise = isinstance(command, ethosu.DepthwiseConv2DOp)
        weights = constant_array(op.weight.owner.value)
        if depthwise:
            weights = weights.transpose(3, 1, 2, 0)  # TFLite 1HWC -> C HW 1
        depth = command.ofm.shape.depth
        if depthwise != isinstance(op, nn.DepthwiseConv2DOp) or weights.shape[0] != depth:
            break  # Vela's own decomposition from here on (mean, FC)
        assert len(command.weight_ranges) == 2
        for core, where in enumerate(command.weight_ranges):
            copy = next(
                c
                for c in reversed(copies)
                if c.dest.region == where.region
                and c.dest.address <= where.address
                and where.address + where.length <= c.dest.address + c.dest.length
            )
            start = copy.src.address + where.address - copy.dest.address
            decoded = decode_weights(
                flash[start : start + where.length],
                "ethos-u65-512",
                (len(range(core, depth, 2)), command.kernel.height, command.kernel.width, weights.shape[3]),
                (command.kernel.dilation_y, command.kernel.dilation_x),
                (command.block_config.depth + 1 - core) // 2,
                depthwise,
                ethosu.BlockTraversal.DEPTH_FIRST if depthwise else command.block_traversal.data,
            )
            assert np.array_equal(decoded, weights[core::2]), f"{command.name} #{checked}, core {core}"
        checked += 1
    assert checked >= 20, f"only {checked} convolutions compared"


def _byte_ranges(command: ethosu.EthosUCommand) -> list[tuple[int, int, int]]:
    """(region, first byte, end) of everything a kernel command reads or writes."""
    from cascade.interpreter.ethosu import feature_map_addresses

    ranges = []
    for name in ("ifm", "ifm2", "ofm"):
        fm = getattr(command, name, None)
        if isinstance(fm, ethosu.FeatureMapAttr):
            addresses = feature_map_addresses(fm)
            ranges.append((fm.region.data, int(addresses.min()), int(addresses.max()) + fm.element_size))
    for attr in (*getattr(command, "weight_ranges", ()), *getattr(command, "bias_ranges", ())):
        ranges.append((attr.region, attr.address, attr.address + attr.length))
    return ranges


@pytest.mark.parametrize(
    ("model", "budget", "executes"),
    [("resnet8_nosoftmax", 60000, True), ("ds_cnn_kws_nosoftmax", 60000, True), ("mbv1_025_96", 60000, False)],
)
def test_prefetched_weight_copies_overlap_the_step_before_without_touching_its_buffers(
    model: str, budget: int, executes: bool
) -> None:
    # A step whose weights the plan prefetches (`cascade.prefetch`) has its weight DMA moved
    # before the previous step's commands. Between the copy and the first kernel that reads
    # its destination, no kernel may read or write those bytes; and some copies must now run
    # alongside other kernels (the plan prefetches). The stream stays bit-exact on outputs
    # of several values (mbv1_025_96's random weights give a single value: only the byte
    # ranges are checked there).
    planned = _allocated(model, budget)
    assert sum("cascade.prefetch" in op.attributes for op in planned.walk()) >= 2
    module, _ = _lowered(model, budget)
    (stream,) = _streams(module)
    commands = list(stream.commands)
    overlapped = 0
    for index, dma in enumerate(commands):
        if not isinstance(dma, ethosu.DmaOp) or dma.dest.region != 1:
            continue
        dest = (dma.dest.address, dma.dest.address + dma.dest.length)
        between = 0
        for command in commands[index + 1 :]:
            if isinstance(command, ethosu.DmaOp):
                continue
            touched = [r for r in _byte_ranges(command) if r[0] == 1 and r[1] < dest[1] and dest[0] < r[2]]
            constants = (*command.weight_ranges, *command.bias_ranges)
            if any(a.region == 1 and dest[0] <= a.address < dest[1] for a in constants):
                break  # the first reader of the copied weights
            assert not touched, f"{command.name} touches the weights copied by DMA #{index} before they are read"
            between += 1
        overlapped += between > 0
    assert overlapped >= 2
    if executes:
        inputs = _inputs(model)
        want = run_program(_original(model), inputs).outputs
        assert np.unique(want[0]).size > 1
        assert all(np.array_equal(g, w) for g, w in zip(run_lowered(module, inputs), want, strict=True))


def test_weights_double_buffered_in_slices_take_turns_in_the_two_halves() -> None:
    # resnet8 under 30000 bytes runs two convolutions alone with their weights in slices of 16
    # and 32 output channels (`cascade.weight_slice_depth`). Each becomes one kernel command per
    # slice; slice k reads its weights from half k % 2 of the buffer, which a DMA filled before
    # it, one slice ahead of the kernels (copy 0, copy 1, slice 0, copy 2, slice 1, ...).
    planned = _allocated("resnet8_nosoftmax", 30000)
    sliced = [op for op in planned.walk() if "cascade.weight_slice_depth" in op.attributes]
    assert len(sliced) == 2
    module, _ = _lowered("resnet8_nosoftmax", 30000)
    (stream,) = _streams(module)
    commands = list(stream.commands)
    for op in sliced:
        depth = op.attributes["cascade.weight_slice_depth"].value.data  # type: ignore[union-attr]
        channels = op.results[0].type.get_shape()[-1]  # type: ignore[union-attr]
        buffer = op.attributes["cascade.weights_placement"]
        base, half = buffer.get_offset(), buffer.get_size() // 2  # type: ignore[union-attr]
        copies = [
            i
            for i, c in enumerate(commands)
            if isinstance(c, ethosu.DmaOp) and base <= c.dest.address < base + 2 * half
        ]
        # Other operators' weights may use the same SRAM at other times: the readers are the
        # kernels after the first copy.
        readers = [
            i
            for i, c in enumerate(commands)
            if i > copies[0]
            and not isinstance(c, ethosu.DmaOp)
            and any(base <= r.address < base + 2 * half for r in c.weight_ranges)
        ]
        slices = -(-channels // depth)
        readers = readers[:slices]
        assert len(copies) == len(readers) == slices >= 2
        for k, (copy, reader) in enumerate(zip(copies, readers, strict=True)):
            assert commands[copy].dest.address == base + (k % 2) * half
            assert commands[reader].ofm.shape.depth == min(depth, channels - k * depth)
            assert all(
                base + (k % 2) * half <= r.address < base + (k % 2 + 1) * half for r in commands[reader].weight_ranges
            )
            assert copy < reader
            if k >= 2:
                assert readers[k - 2] < copy  # the half is free again
    inputs = _inputs("resnet8_nosoftmax", 1)
    want = run_program(_original("resnet8_nosoftmax"), inputs).outputs
    assert np.unique(want[0]).size > 1
    assert all(np.array_equal(a, b) for a, b in zip(run_lowered(module, inputs), want, strict=True))


@pytest.mark.parametrize(
    ("model", "budget", "accelerator"),
    [
        ("resnet8_nosoftmax", 30000, ACCELERATOR),
        ("mbv1_025_96", 60000, ACCELERATOR),
        ("mbv1_025_96", 60000, "ethos-u65-512"),
    ],
)
def test_every_slice_fits_its_half_of_the_buffer(model: str, budget: int, accelerator: str) -> None:
    # Each slice is its own encoded stream: mbv1_025_96's 16-channel depthwise slices encode to
    # more than 1/8 of the whole, and a two-core U65-512 keeps one stream and one set of
    # records per core. The planner sizes each half for the largest slice, so no operator
    # falls back to reading its weights from flash: every SRAM weight buffer is filled by one
    # DMA (all cores' constants together), or one per slice. Rows and columns only: in channel
    # stripes mbv1_025_96 runs its large-weight operators in cascades that stream the weights.
    planned = _allocated(model, budget, accelerator, "hw")
    expected = 0
    for op in planned.walk():
        if "cascade.weights_placement" not in op.attributes or isinstance(op, nn.FullyConnectedOp):
            continue  # fully_connected runs on the CPU (`fc-on-npu=false`)
        depth = op.attributes.get("cascade.weight_slice_depth")
        channels = op.results[0].type.get_shape()[-1]  # type: ignore[union-attr]
        expected += -(-channels // depth.value.data) if depth is not None else 1  # type: ignore[union-attr]
    assert any("cascade.weight_slice_depth" in op.attributes for op in planned.walk())
    module, _ = _lowered(model, budget, accelerator=accelerator, striping="hw")
    function = next(f for f in module.ops if isinstance(f, FuncOp))
    sram = NpuRegions.of_function(function).sram  # region 2 on U65, where the plan spills graph I/O
    copies = [c for s in _streams(module) for c in s.commands if isinstance(c, ethosu.DmaOp) and c.dest.region == sram]
    assert len(copies) == expected


def test_a_buffer_rolling_along_channels_is_refused() -> None:
    """The NPU's tiles wrap rows or columns (test_scheduled, rolling_columns.mlir), not
    channels: hand-written IR rolling along axis 3 gets an error naming the operator. The
    allocated resnet8's first rolling buffer, turned to roll channels."""
    from xdsl.dialects.builtin import AffineMapAttr

    from cascade.dialects.cascade import RollingBufferOp, rolling_index_map

    module = _allocated("resnet8_nosoftmax", 30000)
    buffer = next(op for op in module.walk() if isinstance(op, RollingBufferOp))
    buffer.index_map = AffineMapAttr(rolling_index_map(4, 3, buffer.get_depth()))
    assert buffer.rolling_axis() == 3
    # The allocation check would stop it first (its placement holds rows, not channels).
    with pytest.raises(DiagnosticException, match=r"the allocation is not valid: rolling buffer"):
        LowerToEthosUPass(accelerator=ACCELERATOR).apply(Context(), module)
    with pytest.raises(
        DiagnosticException,
        match=r"nn\.\w+ .*rolls along axis 3; the NPU's tiles wrap rows \(axis 1\) or columns \(axis 2\)",
    ):
        LowerToEthosUPass(accelerator=ACCELERATOR, check_allocation=False).apply(Context(), module)


LARGE = Path(__file__).parents[2] / "benchmarks" / "models"
SMALLEST_MBV2 = 200 * 1024
"""The planner's target for MobileNetV2 1.0 (224x224): a peak of at most 200 KiB."""


def _two_seeds(module: ModuleOp) -> list[list[np.ndarray]]:
    """Random int8 inputs of `module`, two draws."""
    rng = np.random.default_rng(0)
    return [[rng.integers(-128, 128, size=t.get_shape(), dtype=np.int8) for t in input_types(module)] for _ in range(2)]


def _compiled_within(program: ModuleOp, budget: int) -> ModuleOp:
    """`program` through ethosu-pipeline for U55-128 under `budget`, rows and columns striped;
    its allocated peak checked against the budget."""
    from cascade.passes.ethosu_pipeline import EthosUPipelinePass
    from cascade.passes.memory_check import ALLOCATED_PEAK_ATTR

    module = program.clone()
    EthosUPipelinePass(accelerator=ACCELERATOR, sram_budget=budget, striping="hw").apply(Context(), module)
    peak = main_function(module).attributes[ALLOCATED_PEAK_ATTR]
    assert isinstance(peak, IntegerAttr)
    assert peak.value.data <= budget
    return module


@pytest.mark.skipif(
    not os.environ.get("CASCADE_LARGE_MODELS"), reason="about a minute: set CASCADE_LARGE_MODELS=1 to run"
)
def test_mbv2_100_224_in_200_kib_runs_bit_exact_on_the_npu() -> None:
    """MobileNetV2 1.0 compiled for U55-128 within 200 KiB (rows and columns striped, cascades
    that recompute): the command streams run on the functional model bit-exact with the nn
    program, the whole model and, since its random weights saturate the features it pools, the
    model cut after its last operator whose result varies (`informative_prefix`)."""
    original = load_module(LARGE / "mbv2_100_224.tflite")
    inputs = _two_seeds(original)
    programs = {"whole": original, "cut": informative_prefix(original, inputs[0])}
    for what, program in programs.items():
        module = _compiled_within(program, SMALLEST_MBV2)
        for seed_inputs in inputs if what == "cut" else inputs[:1]:
            comparison = compare_lowered(program, module, seed_inputs)
            assert not comparison.mismatches, what
            if what == "cut":
                assert all(informative for _, _, informative in comparison.outputs), comparison.outputs
    kept = [op for op in main_function(programs["cut"]).body.block.ops if isinstance(op, nn.NNOperation)]
    assert len(kept) >= 40  # of 65: past the largest activations, where the peak is


@pytest.mark.skipif(
    not os.environ.get("CASCADE_LARGE_MODELS"), reason="about a minute: set CASCADE_LARGE_MODELS=1 to run"
)
def test_mbv2_100_224_cut_in_224_912_bytes_runs_bit_exact_on_the_npu() -> None:
    """The same cut of MobileNetV2 1.0 under 224,912 bytes, rows and columns striped: its first
    cascade runs in tiles of two rows by one column there, and the cut takes 22.7 M cycles. It
    took 23.9 M in tiles of one row by two columns before the planner sampled prices just past
    the powers of two (`search._grid`), and 37.7 M in one-pixel tiles before each cascade kept
    23 points (`search.MAX_POINTS`) and inner counts went to 16. Its streams run bit-exact."""
    original = load_module(LARGE / "mbv2_100_224.tflite")
    inputs = _two_seeds(original)
    cut = informative_prefix(original, inputs[0])
    module = _compiled_within(cut, 224_912)
    for seed_inputs in inputs:
        comparison = compare_lowered(cut, module, seed_inputs)
        assert not comparison.mismatches
        assert all(informative for _, _, informative in comparison.outputs), comparison.outputs


@pytest.mark.parametrize(
    ("model", "budget", "accelerator"),
    [("mbv2_035_96", 60000, ACCELERATOR), ("ds_cnn_kws_nosoftmax", 20000, "ethos-u65-256")],
)
def test_channel_cascades_run_bit_exact_on_the_functional_model(model: str, budget: int, accelerator: str) -> None:
    """Cascades cut into stripes of channels, lowered: each stripe's slice of an intermediate
    lands at channel 0 of its recompute buffer (in 16-channel bricks), and the operators after
    it read it there, with their own slice of weights from flash. mbv2_035_96 is cut after its
    last varied tensor (its deeper ones saturate); ds_cnn_kws's head (a pointwise convolution
    and the global mean) runs in channel stripes on U65-256."""
    program = _varied(model) if model == "mbv2_035_96" else _original(model)
    module = _allocate(program.clone(), budget, accelerator)
    loops = [op for op in module.walk() if isinstance(op, ForStripesOp)]
    rank = [len(loop.results[0].type.get_shape()) for loop in loops]  # type: ignore[union-attr]
    along_channels = [loop for loop, r in zip(loops, rank, strict=True) if loop.rolling_axis() == r - 1]
    assert along_channels
    LowerToEthosUPass(accelerator=accelerator).apply(Context(), module)
    for seed in (0, 1):
        comparison = compare_lowered(program, module, _inputs(model, seed))
        assert not comparison.mismatches
        assert comparison.informative == len(comparison.outputs) + len(comparison.read)
