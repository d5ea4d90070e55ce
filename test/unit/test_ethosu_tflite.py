"""`-t ethosu-tflite`: the .tflite we write, checked against the file Vela writes for the same
model (structure, tensor roles, model inputs and outputs), against LiteRT (it loads both files
the same way), against the `ethosu-cs` target (the same command stream inside), and against
the IR it comes from (scratch = allocated peak, read-only = the flash image, offsets =
placements)."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ethosu.vela.tflite.Model import Model
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, NameLoc, UnrealizedConversionCastOp
from xdsl.dialects.func import FuncOp

from cascade.dialects import ethosu, nn
from cascade.ethos_u import serialize
from cascade.ethos_u.targets import command_stream_text
from cascade.ethos_u.tflite_output import TFLiteOutputError, lowered_tflite
from cascade.frontends.loader import load_module
from cascade.frontends.tflite_writer import ModelBuilder, options
from cascade.passes.ethosu_pipeline import EthosUPipelinePass
from cascade.passes.memory_check import ALLOCATED_DRAM_ATTR, ALLOCATED_PEAK_ATTR, arg_placement

MODELS = Path(__file__).parents[1] / "models"
CASES = [("resnet8", "ethos-u55-128"), ("ds_cnn_kws", "ethos-u55-128"), ("resnet8", "ethos-u65-256")]
UINT8, INT8 = 3, 9  # TFLite TensorType values
CUSTOM = 32  # BuiltinOperator.CUSTOM


# --------------------------------------------------------------------------- #
# An independent reader (Vela's flatbuffer bindings), and the two files
# --------------------------------------------------------------------------- #


@dataclass
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    type: int
    data: bytes
    scales: tuple[float, ...]
    zero_points: tuple[int, ...]


@dataclass
class OperatorInfo:
    code: str  # the custom code, or the builtin number
    inputs: list[int]
    outputs: list[int]
    custom_options: bytes


@dataclass
class ModelInfo:
    tensors: list[TensorInfo]
    operators: list[OperatorInfo]
    inputs: list[int]
    outputs: list[int]
    metadata: dict[str, bytes]

    def offline_offsets(self) -> list[int]:
        words = list(np.frombuffer(self.metadata["OfflineMemoryAllocation"], dtype="<i4"))
        version, subgraphs, count = words[:3]
        assert (version, subgraphs, count) == (0, 1, len(self.tensors))
        return [int(w) for w in words[3:]]

    def custom_ops(self) -> list[OperatorInfo]:
        return [op for op in self.operators if op.code == "ethos-u"]


def read_model(data: bytes) -> ModelInfo:
    model = Model.GetRootAsModel(data, 0)
    subgraph = model.Subgraphs(0)
    assert model.SubgraphsLength() == 1

    def buffer(index: int) -> bytes:
        content = model.Buffers(index).DataAsNumpy()
        return b"" if isinstance(content, int) else content.tobytes()

    tensors = []
    for t in range(subgraph.TensorsLength()):
        tensor = subgraph.Tensors(t)
        quant = tensor.Quantization()
        scales = tuple(float(s) for s in quant.ScaleAsNumpy()) if quant is not None and quant.ScaleLength() else ()
        zps = tuple(int(z) for z in quant.ZeroPointAsNumpy()) if quant is not None and quant.ZeroPointLength() else ()
        tensors.append(
            TensorInfo(
                tensor.Name().decode(),
                tuple(int(d) for d in tensor.ShapeAsNumpy()),
                tensor.Type(),
                buffer(tensor.Buffer()),
                scales,
                zps,
            )
        )
    operators = []
    for o in range(subgraph.OperatorsLength()):
        op = subgraph.Operators(o)
        code = model.OperatorCodes(op.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        name = code.CustomCode().decode() if builtin == CUSTOM else str(builtin)
        custom = op.CustomOptionsAsNumpy().tobytes() if op.CustomOptionsLength() else b""
        operators.append(
            OperatorInfo(name, [int(i) for i in op.InputsAsNumpy()], [int(i) for i in op.OutputsAsNumpy()], custom)
        )
    metadata = {}
    for m in range(model.MetadataLength()):
        entry = model.Metadata(m)
        metadata[entry.Name().decode()] = buffer(entry.Buffer())
    return ModelInfo(
        tensors,
        operators,
        [int(i) for i in subgraph.InputsAsNumpy()],
        [int(i) for i in subgraph.OutputsAsNumpy()],
        metadata,
    )


@functools.cache
def lowered(model: str, accelerator: str) -> ModuleOp:
    module = load_module(str(MODELS / f"{model}.tflite"))
    EthosUPipelinePass(accelerator=accelerator).apply(Context(), module)
    return module


@functools.cache
def ours(model: str, accelerator: str) -> bytes:
    return lowered_tflite(lowered(model, accelerator))


@functools.cache
def vela_file(model: str, accelerator: str, directory: Path) -> bytes:
    from ethosu.vela.vela import main as vela

    out = directory / f"{model}-{accelerator}"
    with contextlib.redirect_stdout(io.StringIO()):
        status = vela(["--accelerator-config", accelerator, "--output-dir", str(out), str(MODELS / f"{model}.tflite")])
    assert status == 0
    return (out / f"{model}_vela.tflite").read_bytes()


@pytest.fixture(scope="module")
def vela_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("vela")


def _function(module: ModuleOp) -> FuncOp:
    return next(op for op in module.ops if isinstance(op, FuncOp))


def _streams(module: ModuleOp) -> list[ethosu.CommandStreamOp]:
    return [op for op in module.walk() if isinstance(op, ethosu.CommandStreamOp)]


def _io_signature(model: ModelInfo, index: int) -> tuple[Any, ...]:
    tensor = model.tensors[index]
    return (tensor.name, tensor.shape, tensor.type, np.float32(tensor.scales).tolist(), tensor.zero_points)


# --------------------------------------------------------------------------- #
# (1) structure against Vela's file
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(("model", "accelerator"), CASES)
def test_structure_matches_vela(model: str, accelerator: str, vela_dir: Path) -> None:
    mine, theirs = read_model(ours(model, accelerator)), read_model(vela_file(model, accelerator, vela_dir))
    assert len(mine.custom_ops()) == len(theirs.custom_ops()) == 1
    # The model's inputs and outputs: same names, shapes, types and quantization.
    assert [_io_signature(mine, i) for i in mine.inputs] == [_io_signature(theirs, i) for i in theirs.inputs]
    assert [_io_signature(mine, i) for i in mine.outputs] == [_io_signature(theirs, i) for i in theirs.outputs]
    for info in (mine, theirs):
        (op,) = info.custom_ops()
        assert op.custom_options == bytes([1, 4, 1])  # the flexbuffer of 1, as Vela writes
        command_stream, read_only, scratch, fast_scratch, *ifms = (info.tensors[i] for i in op.inputs)
        # Roles: payload and flash are uint8 constants, scratch a uint8 arena tensor.
        assert command_stream.type == read_only.type == scratch.type == UINT8
        assert command_stream.data[:4] == b"COP1"
        assert read_only.data
        assert not scratch.data
        assert fast_scratch.type == UINT8
        assert not fast_scratch.data
        # The IFMs and OFMs are int8 feature maps in the arena, none of them constant.
        for tensor in [*ifms, *(info.tensors[i] for i in op.outputs)]:
            assert tensor.type == INT8
            assert not tensor.data
            assert len(tensor.scales) == 1
        # The IFMs are the model's input here (the first operator reads it).
        assert [info.tensors[i].name for i in op.inputs[4:]] == [info.tensors[i].name for i in info.inputs]
        # Offline allocation: scratch at 0, the feature maps inside it, constants left to TFLM.
        offsets = info.offline_offsets()
        assert offsets[op.inputs[2]] == 0
        assert offsets[op.inputs[0]] == offsets[op.inputs[1]] == -1
        for index in [*op.inputs[4:], *op.outputs]:
            size = int(np.prod(info.tensors[index].shape))
            assert 0 <= offsets[index]
            assert offsets[index] + size <= scratch.shape[0]
    # Vela passes the scratch tensor twice on Ethos-U55 (Shared_Sram), and on Ethos-U65
    # (Dedicated_Sram) a DRAM arena and a separate fast scratch for the SRAM: so do we.
    (op,) = mine.custom_ops()
    (vela_op,) = theirs.custom_ops()
    shared = accelerator.startswith("ethos-u55")
    assert (op.inputs[2] == op.inputs[3]) == (vela_op.inputs[2] == vela_op.inputs[3]) == shared
    # The COP1 header (magic, version, configuration of the accelerator) is Vela's.
    (vela_op,) = theirs.custom_ops()
    header = struct.unpack("<3I", mine.tensors[op.inputs[0]].data[:12])
    assert header == struct.unpack("<3I", theirs.tensors[vela_op.inputs[0]].data[:12])


@pytest.mark.parametrize(("model", "accelerator"), CASES)
def test_sizes_and_offsets_follow_the_memory_map(model: str, accelerator: str) -> None:
    module = lowered(model, accelerator)
    function = _function(module)
    info = read_model(ours(model, accelerator))
    (op,) = info.custom_ops()
    (stream,) = _streams(module)
    # The arena (scratch) holds what the streams address in region 1: the SRAM image, or the
    # DRAM arena when the function spills (U65); the fast scratch is the SRAM image.
    sram = function.attributes[ALLOCATED_PEAK_ATTR].value.data  # type: ignore[union-attr]
    dram = function.attributes.get(ALLOCATED_DRAM_ATTR)
    arena = sram if dram is None else dram.value.data  # type: ignore[union-attr]
    assert info.tensors[op.inputs[2]].shape == (arena,)
    assert info.tensors[op.inputs[3]].shape == (sram,)
    assert info.tensors[op.inputs[1]].data == stream.flash_image()
    offsets = info.offline_offsets()
    names = [t.name for t in info.tensors]
    # Every placed value of the IR sits at its placement.
    for index, _arg in enumerate(function.args):
        placement = arg_placement(function, index)
        assert placement is not None
        assert offsets[info.inputs[index]] == placement.get_offset()
    for ir_op in function.body.block.ops:
        if isinstance(ir_op, UnrealizedConversionCastOp | nn.NNOperation):
            placement = ir_op.attributes["cascade.placement"]
            # The TFLite name is the importer's location, else (loads) the IR name.
            location = ir_op.location
            name = location.desc.data if isinstance(location, NameLoc) else ir_op.results[0].name_hint
            assert offsets[names.index(name)] == placement.get_offset(), name
    # The custom operator's output is what the CPU part reads: the FC input, a real tensor.
    fc = next(o for o in info.operators if o.code == "9")
    assert fc.inputs[0] in op.outputs


# --------------------------------------------------------------------------- #
# (2) LiteRT loads it as it loads Vela's
# --------------------------------------------------------------------------- #


def _litert_view(path: Path) -> tuple[Any, ...]:
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(path))

    def details(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(d["name"], d["shape"].tolist(), d["dtype"], d["quantization"]) for d in items]

    inputs, outputs = details(interpreter.get_input_details()), details(interpreter.get_output_details())
    # LiteRT has no ethos-u kernel: preparing stops at the custom operator.
    with pytest.raises(RuntimeError, match=r"unresolved custom op: ethos-u") as error:
        interpreter.allocate_tensors()
    return inputs, outputs, "Node number 0 (ethos-u) failed to prepare" in str(error.value)


@pytest.mark.parametrize(("model", "accelerator"), CASES[:2])
def test_litert_loads_it_like_vela_output(model: str, accelerator: str, vela_dir: Path, tmp_path: Path) -> None:
    mine, theirs = tmp_path / "ours.tflite", tmp_path / "vela.tflite"
    mine.write_bytes(ours(model, accelerator))
    theirs.write_bytes(vela_file(model, accelerator, vela_dir))
    assert _litert_view(mine) == _litert_view(theirs)


# --------------------------------------------------------------------------- #
# (3) the same command stream as -t ethosu-cs, (4) determinism
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(("model", "accelerator"), CASES)
def test_command_stream_is_the_ethosu_cs_one(model: str, accelerator: str, tmp_path: Path) -> None:
    module = lowered(model, accelerator)
    text = command_stream_text(module)
    words = [int(line, 16) for line in text.splitlines() if line.startswith("0x")]
    path = tmp_path / "ours.tflite"
    path.write_bytes(ours(model, accelerator))
    info = read_model(path.read_bytes())
    (op,) = info.custom_ops()
    assert serialize.command_words(info.tensors[op.inputs[0]].data) == words
    from_file = serialize.disassemble(path)
    from_words = serialize.disassemble(words, accelerator)
    assert from_file.accelerator.data == accelerator
    assert serialize.stream_signature(from_file.commands) == serialize.stream_signature(from_words.commands)
    assert len(from_file.commands) == len(_streams(module)[0].commands)


def test_output_is_deterministic() -> None:
    first = ours("ds_cnn_kws", "ethos-u55-128")
    again = lowered_tflite(lowered("ds_cnn_kws", "ethos-u55-128").clone())
    assert first == again


def test_payloads_made_beside_the_tracing_are_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    # mbv2_035_96 lowers to more than MIN_COMMANDS_BESIDE commands: a forked child (made to
    # fork here whatever the machine) traces memory while the parent generates its stream.
    from cascade import parallel
    from cascade.ethos_u import tflite_output

    module = lowered("mbv2_035_96", "ethos-u55-128")
    assert sum(len(s.commands) for s in _streams(module)) >= tflite_output.MIN_COMMANDS_BESIDE
    forks: list[int] = []
    real_fork = os.fork

    def counting_fork() -> int:
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    monkeypatch.setattr(parallel, "_can_fork", lambda: sys.platform.startswith("linux"))
    monkeypatch.setattr(os, "fork", counting_fork)
    beside = lowered_tflite(module.clone())
    monkeypatch.setattr(tflite_output, "MIN_COMMANDS_BESIDE", 10**9)
    serial = lowered_tflite(module.clone())
    assert beside == serial
    assert forks == ([1] if sys.platform.startswith("linux") else [])


@pytest.mark.parametrize("fork", [True, False], ids=["beside", "serial"])
def test_an_address_outside_the_scratch_is_refused_with_or_without_the_fork(
    monkeypatch: pytest.MonkeyPatch, fork: bool
) -> None:
    # The last convolution of mbv2_035_96 made to write 16 MiB past its place: the trace's
    # check names the byte, also when a forked child traces (its failure is raised here).
    from cascade import parallel
    from cascade.ethos_u import tflite_output

    module = lowered("mbv2_035_96", "ethos-u55-128").clone()
    conv = [c for c in _streams(module)[0].commands if isinstance(c, ethosu.Conv2DOp)][-1]
    fm = conv.ofm
    moved = ethosu.TileBoxAttr(
        fm.tiles.height_0, fm.tiles.height_1, fm.tiles.width_0, [a + (1 << 24) for a in fm.tiles.addresses]
    )
    conv.properties["ofm"] = ethosu.FeatureMapAttr.new([moved if p is fm.tiles else p for p in fm.parameters])
    if fork:
        monkeypatch.setattr(parallel, "available_cores", lambda: 2)
        monkeypatch.setattr(parallel, "_can_fork", lambda: sys.platform.startswith("linux"))
    else:
        monkeypatch.setattr(tflite_output, "MIN_COMMANDS_BESIDE", 10**9)
    with pytest.raises(TFLiteOutputError, match=r"a command stream addresses byte 0x[0-9a-f]+ of region 1, outside"):
        lowered_tflite(module)


# --------------------------------------------------------------------------- #
# Several command streams: a CPU operator between two NPU segments
# --------------------------------------------------------------------------- #


def _split_model() -> bytes:
    """conv -> fully connected and reshape (CPU) -> conv, plus an add of the first conv's
    output: a tensor that crosses from the first NPU segment to the second around the CPU
    operators."""
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, 1, 1, 16], scale=0.05, zero_point=-3)
    conv = options("Conv2DOptions", padding="SAME", stride_w=1, stride_h=1, fused_activation_function="NONE")

    def conv_layer(name: str, source: int, out_scale: float, out_zp: int) -> int:
        w = mb.add_tensor(
            f"{name}_w",
            [16, 1, 1, 16],
            scale=[0.02] * 16,
            zero_point=0,
            quantized_dimension=0,
            data=rng.integers(-60, 60, (16, 1, 1, 16)),
        )
        b = mb.add_tensor(
            f"{name}_b", [16], "int32", scale=[0.001] * 16, zero_point=0, data=rng.integers(-100, 100, 16)
        )
        y = mb.add_tensor(name, [1, 1, 1, 16], scale=out_scale, zero_point=out_zp)
        mb.add_operator("CONV_2D", [source, w, b], [y], conv, version=3)
        return y

    first = conv_layer("first", x, 0.04, 2)
    w = mb.add_tensor(
        "dense_w",
        [16, 16],
        scale=[0.01] * 16,
        zero_point=0,
        quantized_dimension=0,
        data=rng.integers(-90, 90, (16, 16)),
    )
    dense = mb.add_tensor("dense", [1, 16], scale=0.07, zero_point=-5)
    mb.add_operator(
        "FULLY_CONNECTED",
        [first, w, -1],
        [dense],
        options("FullyConnectedOptions", fused_activation_function="RELU"),
        version=4,
    )
    shape = mb.add_tensor("shape", [4], "int32", data=np.asarray([1, 1, 1, 16]))
    image = mb.add_tensor("image", [1, 1, 1, 16], scale=0.07, zero_point=-5)
    mb.add_operator("RESHAPE", [dense, shape], [image], options("ReshapeOptions", new_shape=[1, 1, 1, 16]))
    second = conv_layer("second", image, 0.03, -1)
    total = mb.add_tensor("total", [1, 1, 1, 16], scale=0.06, zero_point=1)
    mb.add_operator("ADD", [second, first], [total], options("AddOptions", fused_activation_function="NONE"))
    return mb.build([x], [total])


def test_cpu_operator_between_two_streams(tmp_path: Path) -> None:
    source = tmp_path / "split.tflite"
    source.write_bytes(_split_model())
    module = load_module(str(source))
    EthosUPipelinePass(accelerator="ethos-u55-128").apply(Context(), module)
    assert len(_streams(module)) == 2
    info = read_model(lowered_tflite(module))
    assert [op.code for op in info.operators] == ["ethos-u", "9", "22", "ethos-u"]
    first_call, dense, reshape, second_call = info.operators
    names = [t.name for t in info.tensors]
    # Each custom operator has its own command stream and read-only tensor; the scratch is shared.
    assert first_call.inputs[2] == first_call.inputs[3] == second_call.inputs[2] == second_call.inputs[3]
    assert first_call.inputs[:2] != second_call.inputs[:2]
    # The first segment reads the model input and leaves 'first' for the CPU and the add.
    assert [names[i] for i in first_call.inputs[4:]] == ["x"]
    assert [names[i] for i in first_call.outputs] == ["first"]
    assert dense.inputs[0] == first_call.outputs[0]
    assert reshape.inputs[0] == dense.outputs[0]
    assert sorted(names[i] for i in second_call.inputs[4:]) == ["first", "image"]
    assert [names[i] for i in second_call.outputs] == ["total"]
    assert info.outputs == second_call.outputs
    # Crossing tensors keep the model's quantization; the CPU operators keep their constants.
    by_name = {t.name: t for t in info.tensors}
    for name, scale, zero_point in [("first", 0.04, 2), ("dense", 0.07, -5), ("image", 0.07, -5), ("total", 0.06, 1)]:
        assert by_name[name].scales == (float(np.float32(scale)),)
        assert by_name[name].zero_points == (zero_point,)
    weights = info.tensors[dense.inputs[1]]
    assert weights.shape == (16, 16)
    assert len(weights.scales) == 16
    assert dense.inputs[2] == -1
    assert np.frombuffer(info.tensors[reshape.inputs[1]].data, "<i4").tolist() == [1, 1, 1, 16]
    # The two IFMs of the second segment are live together: disjoint ranges of the scratch.
    offsets = info.offline_offsets()
    scratch = info.tensors[first_call.inputs[2]].shape[0]
    spans = sorted((offsets[names.index(n)], offsets[names.index(n)] + 16) for n in ("first", "image"))
    assert spans[0][1] <= spans[1][0]
    assert spans[1][1] <= scratch


# --------------------------------------------------------------------------- #
# (5) bad input
# --------------------------------------------------------------------------- #


def test_unlowered_ir_is_refused() -> None:
    module = load_module(str(MODELS / "ds_cnn_kws.tflite"))
    with pytest.raises(TFLiteOutputError, match="not allocated"):
        lowered_tflite(module)


POOL_FIRST = """
func.func @main(%x: tensor<1x8x8x16xi8>) -> tensor<1x4x4x16xi8> {
  %p = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>,
    dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>,
    input_quant = #nn.quant<0.05:3>, output_quant = #nn.quant<0.05:3>} : (tensor<1x8x8x16xi8>) -> tensor<1x4x4x16xi8>
  func.return %p : tensor<1x4x4x16xi8>
}
"""


def test_quantization_of_tensors_only_plain_pooling_touches() -> None:
    """A max pool's commands carry no quantization of their own (zero point 0 in the stream): the
    graph input and output get theirs from what lower-to-ethosu recorded (`nn.quant` on the
    argument and on the load), 0.05 and zero point 3 as the program says."""
    from xdsl.parser import Parser

    from cascade.frontends.loader import make_context

    module = Parser(make_context(), POOL_FIRST).parse_module()
    EthosUPipelinePass(accelerator="ethos-u55-128").apply(Context(), module)
    model = Model.GetRootAsModel(lowered_tflite(module), 0)
    graph = model.Subgraphs(0)
    for index in (graph.Inputs(0), graph.Outputs(0)):
        quant = graph.Tensors(index).Quantization()
        assert quant.ScaleAsNumpy().tolist() == pytest.approx([0.05])
        assert quant.ZeroPointAsNumpy().tolist() == [3]
