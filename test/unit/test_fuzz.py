"""Fuzzing: mutated .tflite and .mlir inputs never crash the compiler and never compile wrongly.

Seeded and deterministic (hypothesis with a fixed seed, no example database). Each mutant is
compiled by a worker process (`fuzz_worker.py`) through import, verification, a print/parse
round trip, execution, LiteRT's reference kernels (TFLite inputs) and every stage of
`fuzz_worker.STAGES`, each under a wall-clock bound. The outcome must be one of:

* rejected with an expected diagnostic class (TFLiteImportError, LoadError, a pass's
  DiagnosticException, an interpreter refusal);
* accepted, with every named tensor bit-exact against LiteRT and every stage's result equal to
  the `nn` program's; or LiteRT itself refuses the model (counted as LiteRT-rejected, with its
  reason: our compiler cannot be proven right or wrong on a model TFLite does not run).

The stages are those of `ethosu-pipeline`: cascade-plan, rolling-buffer, allocate-memory (whose
result the independent checker `passes.memory_check` must accept) and lower-to-ethosu (the
lowered program runs through Vela's command stream and the NPU functional model, as cascade-run
does). A pass may refuse a valid program it cannot handle, with one line that starts with its
name; lowering refusals of valid programs are counted on their own (`lowering_rejected`, by
reason, with an example input each).

Anything else fails: an unexpected exception, a crash of the worker outside LiteRT, a hang, a
mismatch, IR that does not verify or does not print and parse back, a diagnostic that is not one
line naming its pass, an allocation the checker refuses.

Environment: CASCADE_FUZZ_INPUTS (total number of inputs, default 2000: 60 % TFLite, 40 % MLIR),
CASCADE_FUZZ_SEED (default 0), CASCADE_FUZZ_TIMEOUT (seconds per input, default 60),
CASCADE_FUZZ_REPORT (write the statistics as JSON to this path), CASCADE_FUZZ_REAL_INPUTS
(mutants of the test models through import only, default 200, on top of the total),
CASCADE_FUZZ_LARGE=1 (the test models, MobileNets included, through every stage too).
"""

from __future__ import annotations

import json
import math
import os
import pickle
import re
import select
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ethosu.vela.tflite.Model import Model
from hypothesis import HealthCheck, Phase, example, given, seed, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.passes import PassPipeline
from xdsl.printer import Printer

from cascade.dialects.cascade import PLACEMENT_ATTR, MemoryRegion, PlacementAttr, get_placement
from cascade.frontends.loader import make_context
from cascade.frontends.tflite import import_tflite
from cascade.frontends.tflite_writer import ModelBuilder, options
from cascade.interpreter.nn import main_function
from cascade.passes import get_all_passes
from cascade.passes.cascade_plan import PEAK_ATTR
from cascade.passes.memory_check import ALLOCATED_PEAK_ATTR, arg_placement, check_memory

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "test" / "models"
WORKER = Path(__file__).with_name("fuzz_worker.py")

TOTAL_INPUTS = int(os.environ.get("CASCADE_FUZZ_INPUTS", "2000"))
FUZZ_SEED = int(os.environ.get("CASCADE_FUZZ_SEED", "0"))
TIMEOUT = float(os.environ.get("CASCADE_FUZZ_TIMEOUT", "60"))
REPORT = os.environ.get("CASCADE_FUZZ_REPORT")
TFLITE_SHARDS = 2
"""The TFLite inputs are split over this many tests (each with its own seed), the MLIR ones
over MLIR_SHARDS, so that `pytest -n 2` keeps both workers busy until the end."""
TFLITE_INPUTS = math.ceil(TOTAL_INPUTS * 0.6 / TFLITE_SHARDS)
MLIR_SHARDS = 2
MLIR_INPUTS = math.ceil((TOTAL_INPUTS - TFLITE_INPUTS * TFLITE_SHARDS) / MLIR_SHARDS)


# --------------------------------------------------------------------------- #
# Seeds: small models, so that thousands of mutants compile in minutes
# --------------------------------------------------------------------------- #


def _weights(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-127, 128, size=shape).astype(np.int8)


def _bias(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(-2000, 2000, size=n).astype(np.int32)


def chain_model() -> bytes:
    """conv 3x3/2 SAME relu6 -> depthwise 3x3 x2 -> avg pool -> reshape -> fully connected -> softmax."""
    rng = np.random.default_rng(1)
    mb = ModelBuilder()
    x = mb.add_tensor("image", [1, 8, 8, 3], "int8", scale=0.02, zero_point=-5)
    w0 = mb.add_tensor(
        "conv/w",
        [4, 3, 3, 3],
        "int8",
        scale=[0.01, 0.02, 0.015, 0.03],
        zero_point=0,
        quantized_dimension=0,
        data=_weights(rng, (4, 3, 3, 3)),
    )
    b0 = mb.add_tensor("conv/b", [4], "int32", scale=0.0002, zero_point=0, data=_bias(rng, 4))
    y0 = mb.add_tensor("conv", [1, 4, 4, 4], "int8", scale=6 / 255, zero_point=-128)
    conv = options("Conv2DOptions", padding="SAME", stride_w=2, stride_h=2, fused_activation_function="RELU6")
    mb.add_operator("CONV_2D", [x, w0, b0], [y0], conv, version=3)
    w1 = mb.add_tensor("dw/w", [1, 3, 3, 8], "int8", scale=0.02, zero_point=0, data=_weights(rng, (1, 3, 3, 8)))
    b1 = mb.add_tensor("dw/b", [8], "int32", scale=0.0005, zero_point=0, data=_bias(rng, 8))
    y1 = mb.add_tensor("dw", [1, 4, 4, 8], "int8", scale=0.05, zero_point=3)
    depthwise = options("DepthwiseConv2DOptions", padding="SAME", stride_w=1, stride_h=1, depth_multiplier=2)
    mb.add_operator("DEPTHWISE_CONV_2D", [y0, w1, b1], [y1], depthwise, version=3)
    y2 = mb.add_tensor("pool", [1, 2, 2, 8], "int8", scale=0.05, zero_point=3)
    pool = options("Pool2DOptions", padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2)
    mb.add_operator("AVERAGE_POOL_2D", [y1], [y2], pool, version=2)
    shape = mb.add_tensor("flat/shape", [2], "int32", data=np.array([1, 32]))
    y3 = mb.add_tensor("flat", [1, 32], "int8", scale=0.05, zero_point=3)
    mb.add_operator("RESHAPE", [y2, shape], [y3], options("ReshapeOptions", new_shape=[1, 32]))
    w4 = mb.add_tensor("fc/w", [10, 32], "int8", scale=0.01, zero_point=0, data=_weights(rng, (10, 32)))
    b4 = mb.add_tensor("fc/b", [10], "int32", scale=0.0005, zero_point=0, data=_bias(rng, 10))
    y4 = mb.add_tensor("fc", [1, 10], "int8", scale=0.1, zero_point=-10)
    mb.add_operator("FULLY_CONNECTED", [y3, w4, b4], [y4], options("FullyConnectedOptions"), version=5)
    y5 = mb.add_tensor("softmax", [1, 10], "int8", scale=1 / 256, zero_point=-128)
    mb.add_operator("SOFTMAX", [y4], [y5], options("SoftmaxOptions", beta=1.0), version=2)
    return mb.build([x], [y5])


def residual_model() -> bytes:
    """conv 1x1 -> add(input) relu -> mul -> max pool 2x2 -> mean over H and W."""
    rng = np.random.default_rng(2)
    mb = ModelBuilder()
    x = mb.add_tensor("input", [1, 6, 6, 4], "int8", scale=0.01, zero_point=2)
    w = mb.add_tensor("pw/w", [4, 1, 1, 4], "int8", scale=0.02, zero_point=0, data=_weights(rng, (4, 1, 1, 4)))
    b = mb.add_tensor("pw/b", [4], "int32", scale=0.0006, zero_point=0, data=_bias(rng, 4))
    y0 = mb.add_tensor("pw", [1, 6, 6, 4], "int8", scale=0.04, zero_point=-1)
    conv = options("Conv2DOptions", padding="VALID", stride_w=1, stride_h=1)
    mb.add_operator("CONV_2D", [x, w, b], [y0], conv, version=3)
    y1 = mb.add_tensor("sum", [1, 6, 6, 4], "int8", scale=0.05, zero_point=-128)
    mb.add_operator("ADD", [y0, x], [y1], options("AddOptions", fused_activation_function="RELU"), version=2)
    y2 = mb.add_tensor("product", [1, 6, 6, 4], "int8", scale=0.08, zero_point=-20)
    mb.add_operator("MUL", [y1, y0], [y2], options("MulOptions"), version=2)
    y3 = mb.add_tensor("maxpool", [1, 3, 3, 4], "int8", scale=0.08, zero_point=-20)
    pool = options("Pool2DOptions", padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2)
    mb.add_operator("MAX_POOL_2D", [y2], [y3], pool, version=2)
    axes = mb.add_tensor("mean/axes", [2], "int32", data=np.array([1, 2]))
    y4 = mb.add_tensor("mean", [1, 1, 1, 4], "int8", scale=0.03, zero_point=-100)
    mb.add_operator("MEAN", [y3, axes], [y4], options("ReducerOptions", keep_dims=True), version=2)
    return mb.build([x], [y4])


def misc_model() -> bytes:
    """Two inputs: pad, concat, resize x2, tanh, logistic, sub, leaky relu, quantize, maximum."""
    mb = ModelBuilder()
    a = mb.add_tensor("a", [1, 4, 4, 2], "int8", scale=0.06, zero_point=1)
    c = mb.add_tensor("c", [1, 6, 6, 2], "int8", scale=0.06, zero_point=1)
    pads = mb.add_tensor("pad/amounts", [4, 2], "int32", data=np.array([[0, 0], [1, 1], [1, 1], [0, 0]]))
    p = mb.add_tensor("padded", [1, 6, 6, 2], "int8", scale=0.06, zero_point=1)
    mb.add_operator("PAD", [a, pads], [p], options("PadOptions"), version=2)
    cat = mb.add_tensor("concat", [1, 6, 6, 4], "int8", scale=0.06, zero_point=1)
    mb.add_operator("CONCATENATION", [p, c], [cat], options("ConcatenationOptions", axis=3), version=2)
    size = mb.add_tensor("resize/size", [2], "int32", data=np.array([12, 12]))
    r = mb.add_tensor("resized", [1, 12, 12, 4], "int8", scale=0.06, zero_point=1)
    mb.add_operator("RESIZE_NEAREST_NEIGHBOR", [cat, size], [r], options("ResizeNearestNeighborOptions"), version=3)
    t = mb.add_tensor("tanh", [1, 12, 12, 4], "int8", scale=1 / 128, zero_point=0)
    mb.add_operator("TANH", [r], [t], version=2)
    s = mb.add_tensor("sigmoid", [1, 12, 12, 4], "int8", scale=1 / 256, zero_point=-128)
    mb.add_operator("LOGISTIC", [r], [s], version=2)
    d = mb.add_tensor("difference", [1, 12, 12, 4], "int8", scale=0.01, zero_point=3)
    mb.add_operator("SUB", [t, s], [d], options("SubOptions"), version=2)
    leaky = mb.add_tensor("leaky", [1, 12, 12, 4], "int8", scale=0.01, zero_point=3)
    mb.add_operator("LEAKY_RELU", [d], [leaky], options("LeakyReluOptions", alpha=0.2), version=2)
    q = mb.add_tensor("requantized", [1, 12, 12, 4], "int8", scale=0.02, zero_point=-7)
    mb.add_operator("QUANTIZE", [leaky], [q], version=2)
    m = mb.add_tensor("maximum", [1, 12, 12, 4], "int8", scale=0.02, zero_point=-7)
    mb.add_operator("MAXIMUM", [q, q], [m], version=2)
    return mb.build([a, c], [m])


SYNTHETIC: dict[str, Callable[[], bytes]] = {"chain": chain_model, "residual": residual_model, "misc": misc_model}
SMALL_MODELS = ("ds_cnn_kws", "resnet8", "ds_cnn_kws_nosoftmax", "resnet8_nosoftmax")
LARGE_MODELS = ("mbv1_025_96", "mbv2_035_96")
# Seeds of the mutants that go through every stage. An accepted mutant of a synthetic model
# does so in about 0.3 s, one of ds_cnn or resnet8 in 1 to 3 s (Vela encodes their weights), one
# of a MobileNet in 5 s and more: those join only when CASCADE_FUZZ_LARGE=1 (longer than CI).
# The test models, as the TF converter wrote them, are mutated for import in CI all the same
# (test_fuzz_tflite_real_models: import, execution, LiteRT; no planning or lowering).
TFLITE_DRAWS: tuple[str, ...] = tuple(SYNTHETIC)
if os.environ.get("CASCADE_FUZZ_LARGE") == "1":
    TFLITE_DRAWS += (*SMALL_MODELS, *LARGE_MODELS)
REAL_INPUTS = int(os.environ.get("CASCADE_FUZZ_REAL_INPUTS", "200"))


@cache
def tflite_seed(name: str) -> bytes:
    if name in SYNTHETIC:
        return SYNTHETIC[name]()
    return (MODELS / f"{name}.tflite").read_bytes()


def _printed(data: bytes) -> str:
    stream = StringIO()
    Printer(stream=stream).print_op(import_tflite(data))
    return stream.getvalue()


@cache
def mlir_seeds() -> dict[str, str]:
    """nn programs: the example network, every chunk of the nn dialect tests, the synthetic models."""
    seeds = {"example_nn": (ROOT / "test" / "Inputs" / "example_nn.mlir").read_text()}
    ops = (ROOT / "test" / "dialects" / "nn" / "ops.mlir").read_text()
    for index, chunk in enumerate(ops.split("// -----")):
        code = "\n".join(line for line in chunk.splitlines() if not line.lstrip().startswith("//"))
        seeds[f"nn_ops_{index}"] = code
    for name in SYNTHETIC:
        seeds[f"tflite_{name}"] = _printed(tflite_seed(name))
    return seeds


# --------------------------------------------------------------------------- #
# TFLite mutations: bytes, and fields found through the flatbuffer schema
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Field:
    """A scalar in the flatbuffer: what it is, where it is, its struct format."""

    kind: str
    offset: int
    fmt: str


def _scalar(table: Any, slot: int, kind: str, fmt: str, fields: list[Field]) -> None:
    offset = table._tab.Offset(slot)
    if offset:
        fields.append(Field(kind, table._tab.Pos + offset, fmt))


def _vector(table: Any, slot: int, kind: str, fmt: str, fields: list[Field]) -> None:
    offset = table._tab.Offset(slot)
    if not offset:
        return
    start, length = table._tab.Vector(offset), table._tab.VectorLen(offset)
    fields.append(Field(f"{kind}.length", start - 4, "<I"))
    size = struct.calcsize(fmt)
    fields.extend(Field(kind, start + i * size, fmt) for i in range(min(length, 8)))


def _options(table: Any, fields: list[Field]) -> None:
    """Every present field of a builtin options table, as its low byte (strides, padding, ...)."""
    tab = table  # op.BuiltinOptions() is a bare flatbuffers Table
    vtable = tab.Pos - struct.unpack_from("<i", tab.Bytes, tab.Pos)[0]
    vtable_size = struct.unpack_from("<H", tab.Bytes, vtable)[0]
    for slot in range(4, vtable_size, 2):
        if offset := tab.Offset(slot):
            fields.append(Field("options", tab.Pos + offset, "<B"))


@cache
def tflite_fields(name: str) -> tuple[Field, ...]:
    """Shapes, types, quantization, opcodes, operator inputs and outputs, options of a seed model."""
    model = Model.GetRootAs(tflite_seed(name), 0)
    fields: list[Field] = []
    for index in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(index)
        _scalar(code, 4, "opcode.deprecated_builtin_code", "<b", fields)
        _scalar(code, 10, "opcode.builtin_code", "<i", fields)
    graph = model.Subgraphs(0)
    _vector(graph, 6, "subgraph.inputs", "<i", fields)
    _vector(graph, 8, "subgraph.outputs", "<i", fields)
    for index in range(graph.TensorsLength()):
        tensor = graph.Tensors(index)
        _vector(tensor, 4, "tensor.shape", "<i", fields)
        _scalar(tensor, 6, "tensor.type", "<b", fields)
        _scalar(tensor, 8, "tensor.buffer", "<I", fields)
        if (quant := tensor.Quantization()) is not None:
            _vector(quant, 8, "quant.scale", "<f", fields)
            _vector(quant, 10, "quant.zero_point", "<q", fields)
            _scalar(quant, 16, "quant.dimension", "<i", fields)
    for index in range(graph.OperatorsLength()):
        op = graph.Operators(index)
        _scalar(op, 4, "operator.opcode_index", "<I", fields)
        _vector(op, 6, "operator.inputs", "<i", fields)
        _vector(op, 8, "operator.outputs", "<i", fields)
        _scalar(op, 10, "operator.options_type", "<B", fields)
        if (table := op.BuiltinOptions()) is not None:
            _options(table, fields)
    for index in range(model.BuffersLength()):
        buffer = model.Buffers(index)
        if (offset := buffer._tab.Offset(4)) and (length := buffer._tab.VectorLen(offset)):
            start = buffer._tab.Vector(offset)
            fields.extend(Field("buffer.data", start + i * length // 8, "<b") for i in range(min(length, 8)))
    return tuple(fields)


@cache
def tflite_field_kinds(name: str) -> tuple[tuple[Field, ...], ...]:
    """The fields of a seed grouped by kind, so that a draw picks a kind first: a model has
    thousands of weight bytes but few opcodes, and both are worth changing."""
    kinds: dict[str, list[Field]] = {}
    for spot in tflite_fields(name):
        kinds.setdefault(spot.kind, []).append(spot)
    return tuple(tuple(group) for _, group in sorted(kinds.items()))


_INTERESTING: dict[str, tuple[int, ...]] = {
    "<i": (0, 1, 2, 3, 4, 7, 8, 16, 17, 100, 127, 128, 255, 65536, -1, -2, 2**31 - 1, -(2**31)),
    "<I": (0, 1, 2, 3, 4, 7, 16, 255, 65536, 2**31, 2**32 - 1),
    "<b": (0, 1, 2, 3, 9, 10, 17, 31, 127, -1, -128),
    "<B": (0, 1, 2, 3, 4, 5, 6, 9, 17, 127, 128, 255),
    "<q": (0, 1, -1, 3, 127, -128, 128, -129, 300, 2**40, -(2**63)),
}
_SCALE_FACTORS = (0.0, -1.0, 0.5, 2.0, 3.0, 0.1, 10.0, 1.0001, 1e-30, 1e30, math.inf, math.nan)


def _set_field(data: bytearray, spot: Field, choice: int) -> None:
    if spot.offset + struct.calcsize(spot.fmt) > len(data):
        return
    if spot.fmt == "<f":
        (current,) = struct.unpack_from("<f", data, spot.offset)
        value = current * _SCALE_FACTORS[choice % len(_SCALE_FACTORS)]
        with np.errstate(over="ignore"):
            struct.pack_into("<f", data, spot.offset, float(np.float32(value)) if math.isfinite(value) else value)
        return
    candidates = _INTERESTING[spot.fmt]
    struct.pack_into(spot.fmt, data, spot.offset, candidates[choice % len(candidates)])


def mutate_tflite(name: str, edits: Sequence[tuple[Any, ...]]) -> bytes:
    """Apply edits in order: ("field", kind, index, choice), ("flip", position, byte), ("truncate", length),
    ("splice", source, destination, length), ("delete", position, length), ("insert", position, bytes)."""
    data = bytearray(tflite_seed(name))
    kinds = tflite_field_kinds(name)
    for edit in edits:
        size = max(len(data), 1)
        match edit:
            case ("field", kind, index, choice):
                group = kinds[kind % len(kinds)]
                _set_field(data, group[index % len(group)], choice)
            case ("flip", position, value):
                if data:
                    data[position % size] = value
            case ("truncate", length):
                del data[length % size :]
            case ("splice", source, destination, length):
                chunk = data[source % size : source % size + length]
                data[destination % size : destination % size + len(chunk)] = chunk
            case ("delete", position, length):
                del data[position % size : position % size + length]
            case ("insert", position, value):
                data[position % size : position % size] = value
    return bytes(data)


@st.composite
def tflite_mutants(
    draw: st.DrawFn, seeds: Sequence[str] = TFLITE_DRAWS
) -> tuple[str, tuple[tuple[Any, ...], ...], int]:
    """(seed model, edits, input seed)."""
    name = draw(st.sampled_from(seeds))
    length = len(tflite_seed(name))
    position = st.integers(0, length - 1)
    field_edit = st.tuples(st.just("field"), st.integers(0, 63), st.integers(0, 10**6), st.integers(0, 31))
    # Edits of single fields keep most of the file valid and reach the compiler's checks; the
    # byte-level ones mostly test that a corrupt file is refused cleanly.
    edit = st.one_of(
        *[field_edit] * 8,
        st.tuples(st.just("flip"), position, st.integers(0, 255)),
        st.tuples(st.just("flip"), position, st.integers(0, 255)),
        st.tuples(st.just("truncate"), position),
        st.tuples(st.just("splice"), position, position, st.integers(1, 64)),
        st.tuples(st.just("delete"), position, st.integers(1, 16)),
        st.tuples(st.just("insert"), position, st.binary(min_size=1, max_size=8)),
    )
    edits = tuple(draw(st.lists(edit, min_size=1, max_size=2)))
    return name, edits, draw(st.integers(0, 2**16))


# --------------------------------------------------------------------------- #
# MLIR mutations: tokens of the text
# --------------------------------------------------------------------------- #

_TOKEN = re.compile(
    r'"(?:[^"\\\n]|\\.)*"'  # string
    r"|0x[0-9A-Fa-f]+"  # hex blob
    r"|\d+(?:x\d+)*x(?:[if]\d+|index|bf16)\b"  # shape of a tensor type: 1x8x8x3xi8
    r"|-?\d+\.\d*(?:[eE][-+]?\d+)?"  # float
    r"|-?\d+"  # integer
    r"|[%@#^!]?[A-Za-z_][\w.$-]*"  # identifier, SSA name, symbol, attribute alias
    r"|\s+"
    r"|."
)
_NUMBERS = ("0", "1", "-1", "2", "3", "7", "8", "16", "127", "128", "-128", "-129", "255", "256", "65536")
_NUMBERS += ("2147483648", "4294967297", "0.0", "-0.5", "1.0e30", "1.0e-30", "0.5", "3.5")
_DIMS = (0, 1, 2, 3, 5, 8, 9, 16, 17, 65536, 2**31)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _mutate_shape(token: str, position: int, choice: int) -> str:
    *dims, element = token.split("x")
    dims[position % len(dims)] = str(_DIMS[choice % len(_DIMS)])
    return "x".join([*dims, element])


def mutate_mlir(name: str, edits: Sequence[tuple[Any, ...]]) -> str:
    """Apply edits to the tokens of a seed program: ("number", i, choice), ("ident", i, j),
    ("shape", i, dim, choice), ("delete", i), ("duplicate", i), ("swap", i, j),
    ("line", i, "delete" | "duplicate"), ("truncate", i)."""
    parts = tokens(mlir_seeds()[name])
    for edit in edits:
        size = len(parts)
        if size == 0:
            break
        match edit:
            case ("number", index, choice):
                numbers = [i for i, t in enumerate(parts) if re.fullmatch(r"-?\d+(\.\d*)?([eE][-+]?\d+)?", t)]
                if numbers:
                    parts[numbers[index % len(numbers)]] = _NUMBERS[choice % len(_NUMBERS)]
            case ("ident", index, other):
                # Another identifier of the same kind: an SSA name for an SSA name, a keyword
                # (relu6, avg, true...) for a keyword.
                names = [i for i, t in enumerate(parts) if re.fullmatch(r"[%@#^!]?[A-Za-z_][\w.$-]*", t)]
                if names:
                    target = names[index % len(names)]
                    sigil = parts[target][0] if parts[target][0] in "%@#^!" else ""
                    same = [i for i in names if (parts[i][0] if parts[i][0] in "%@#^!" else "") == sigil]
                    parts[target] = parts[same[other % len(same)]]
            case ("shape", index, dim, choice):
                shapes = [i for i, t in enumerate(parts) if re.fullmatch(r"\d+(x\d+)*x\w+", t)]
                if shapes:
                    where = shapes[index % len(shapes)]
                    parts[where] = _mutate_shape(parts[where], dim, choice)
            case ("delete", index):
                del parts[index % size]
            case ("duplicate", index):
                parts.insert(index % size, parts[index % size])
            case ("swap", first, second):
                a, b = first % size, second % size
                parts[a], parts[b] = parts[b], parts[a]
            case ("line", index, action):
                lines = "".join(parts).splitlines(keepends=True)
                line = index % len(lines)
                lines[line : line + 1] = [] if action == "delete" else [lines[line], lines[line]]
                parts = tokens("".join(lines))
            case ("truncate", index):
                del parts[index % size :]
    return "".join(parts)


@st.composite
def mlir_mutants(draw: st.DrawFn) -> tuple[str, tuple[tuple[Any, ...], ...], int]:
    """(seed program, edits, input seed)."""
    name = draw(st.sampled_from(sorted(mlir_seeds())))
    index = st.integers(0, 10**6)
    edit = st.one_of(
        st.tuples(st.just("number"), index, st.integers(0, len(_NUMBERS) - 1)),
        st.tuples(st.just("number"), index, st.integers(0, len(_NUMBERS) - 1)),
        st.tuples(st.just("number"), index, st.integers(0, len(_NUMBERS) - 1)),
        st.tuples(st.just("ident"), index, index),
        st.tuples(st.just("ident"), index, index),
        st.tuples(st.just("shape"), index, st.integers(0, 5), st.integers(0, len(_DIMS) - 1)),
        st.tuples(st.just("shape"), index, st.integers(0, 5), st.integers(0, len(_DIMS) - 1)),
        st.tuples(st.just("delete"), index),
        st.tuples(st.just("duplicate"), index),
        st.tuples(st.just("swap"), index, index),
        st.tuples(st.just("line"), index, st.sampled_from(["delete", "duplicate"])),
        st.tuples(st.just("truncate"), index),
    )
    edits = tuple(draw(st.lists(edit, min_size=1, max_size=2)))
    return name, edits, draw(st.integers(0, 2**16))


# --------------------------------------------------------------------------- #
# The worker process
# --------------------------------------------------------------------------- #


class FuzzWorker:
    """Runs `fuzz_worker.py` and sends it one input at a time, with a wall-clock bound.

    A worker that dies or overruns is killed and restarted; the outcome then names the stage
    it was in (the worker announces each stage before entering it).
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.stderr: Any = None
        self.restarts = 0

    def start(self) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr
        )
        ready = self._receive(time.monotonic() + 120)
        if not (isinstance(ready, tuple) and ready[0] == "ready"):
            raise RuntimeError(f"the fuzz worker did not start: {ready!r} {self._stderr_tail()}")

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.process is None or self.process.poll() is not None:
            self.start()
        assert self.process is not None
        assert self.process.stdin is not None
        payload = pickle.dumps(request)
        self.process.stdin.write(struct.pack(">I", len(payload)) + payload)
        self.process.stdin.flush()
        deadline = time.monotonic() + self.timeout
        stage = "start"
        while True:
            message = self._receive(deadline)
            if message == "timeout":
                self._restart()
                return {"status": "hang", "stage": stage, "message": f"no answer within {self.timeout:g} s"}
            if message == "eof":
                code = self.process.wait()
                tail = self._stderr_tail()
                self._restart()
                return {"status": "crash", "stage": stage, "message": f"exit status {code}: {tail}"}
            kind, body = message
            if kind == "stage":
                stage = body
                continue
            return body

    def _restart(self) -> None:
        self.close()
        self.restarts += 1

    def _stderr_tail(self) -> str:
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace")
        self.stderr.seek(0)
        self.stderr.truncate()
        return " ".join(text.split())[-300:]

    def _receive(self, deadline: float) -> Any:
        header = self._read(4, deadline)
        if not isinstance(header, bytes):
            return header
        body = self._read(struct.unpack(">I", header)[0], deadline)
        return pickle.loads(body) if isinstance(body, bytes) else body

    def _read(self, count: int, deadline: float) -> bytes | str:
        assert self.process is not None
        assert self.process.stdout is not None
        stream = self.process.stdout
        chunks = b""
        while len(chunks) < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            ready, _, _ = select.select([stream], [], [], remaining)
            if not ready:
                return "timeout"
            chunk = os.read(stream.fileno(), count - len(chunks))
            if not chunk:
                return "eof"
            chunks += chunk
        return chunks


@pytest.fixture(scope="module")
def worker() -> Any:
    fuzz = FuzzWorker(TIMEOUT)
    fuzz.start()
    yield fuzz
    fuzz.close()


# --------------------------------------------------------------------------- #
# Known issues: bugs found by this fuzzer in code it does not own, each with a regression test
# below marked xfail(strict=True). A mutant that hits one is counted under `known_issues`,
# not failed, so that the fuzzer keeps looking for new bugs; when the fix lands, its regression
# test passes, xfail(strict) fails it, and the entry here and the marker go.
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class KnownIssue:
    name: str
    stage: str
    message: str
    """A regular expression the failure message matches."""


KNOWN_ISSUES: tuple[KnownIssue, ...] = ()
"""None open. Fixed so far (each with its regression test below): a returned function argument
sharing SRAM with a later result (allocate-memory), a dilation the NPU cannot encode copied into
an ethosu command (lower-to-ethosu)."""


def known_issue(outcome: dict[str, Any]) -> KnownIssue | None:
    if outcome["status"] != "failure":
        return None
    return next(
        (
            issue
            for issue in KNOWN_ISSUES
            if outcome["stage"] == issue.stage and re.search(issue.message, outcome.get("message", ""))
        ),
        None,
    )


# --------------------------------------------------------------------------- #
# Statistics and the tests
# --------------------------------------------------------------------------- #


@dataclass
class FuzzStats:
    """Counts over one fuzz run: what was accepted, rejected (by stage and class), compared."""

    kind: str
    inputs: int = 0
    accepted: int = 0
    executed: int = 0
    bit_exact: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    reference_rejected: Counter[str] = field(default_factory=Counter)
    reference_examples: dict[str, str] = field(default_factory=dict)
    """The first input LiteRT refused for each reason, to reproduce it."""
    stages: Counter[str] = field(default_factory=Counter)
    lowering_rejected: Counter[str] = field(default_factory=Counter)
    """Valid programs lower-to-ethosu refuses with a diagnostic (unsupported on the NPU), by reason."""
    lowering_examples: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    known_issues: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def add(self, outcome: dict[str, Any], label: str) -> str | None:
        """Count one outcome; return a failure message, or None."""
        self.inputs += 1
        status = outcome["status"]
        self.stages.update(outcome.get("stages_run", ()))
        self.executed += bool(outcome.get("executed"))
        reference = outcome.get("reference", "")
        if reference == "ok":
            self.bit_exact += 1
        elif reference.startswith("rejected"):
            self.reference_rejected[_reason(reference)] += 1
            self.reference_examples.setdefault(_reason(reference), label)
        if status == "crash" and outcome["stage"] == "reference":
            self.reference_rejected["LiteRT aborted the process"] += 1
            self.reference_examples.setdefault("LiteRT aborted the process", f"{label}: {outcome['message']}")
            return None
        if status == "accepted":
            self.accepted += 1
            return None
        if (issue := known_issue(outcome)) is not None:
            self.known_issues[issue.name] += 1
            return None
        if status == "rejected":
            self.rejected[f"{outcome['stage']}: {outcome['error_class']}"] += 1
            if outcome["stage"] == "lower-to-ethosu":
                reason = _lowering_reason(outcome.get("message", ""))
                self.lowering_rejected[reason] += 1
                self.lowering_examples.setdefault(reason, label)
            return None
        failure = f"{label}: {status} in stage {outcome['stage']}: {outcome.get('message', '')}"
        self.failures.append(failure)
        return failure

    def summary(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "seed": FUZZ_SEED,
            "inputs": self.inputs,
            "accepted": self.accepted,
            "executed": self.executed,
            "bit_exact_against_litert": self.bit_exact,
            "litert_rejected": dict(self.reference_rejected.most_common()),
            "litert_rejected_examples": self.reference_examples,
            "rejected": dict(self.rejected.most_common()),
            "stages_passed": dict(self.stages),
            "lowering_rejected": dict(self.lowering_rejected.most_common()),
            "lowering_rejected_examples": self.lowering_examples,
            "failures": self.failures,
            "known_issues": dict(self.known_issues),
            "seconds": round(self.seconds, 1),
        }


def _reason(reference: str) -> str:
    """A LiteRT refusal without its numbers, so that similar ones are counted together."""
    return re.sub(r"\d+", "N", reference.removeprefix("rejected: "))[:120]


def _lowering_reason(message: str) -> str:
    """A lowering refusal without the function, operator location and numbers."""
    reason = re.sub(r"^lower-to-ethosu: @[^:]*: ", "", message)
    reason = re.sub(r" at [^ :]+:\d+:\d+", "", reason)
    return re.sub(r"\d+", "N", reason)[:120]


def _report(stats: FuzzStats) -> None:
    summary = stats.summary()
    print(json.dumps(summary, indent=1))
    if REPORT:
        path = Path(REPORT)
        existing = json.loads(path.read_text()) if path.exists() else {}
        existing[stats.kind] = summary
        path.write_text(json.dumps(existing, indent=1) + "\n")


def _fuzz_settings(count: int, shard: int = 0) -> Callable[[Any], Any]:
    def apply(test: Any) -> Any:
        configured = settings(
            max_examples=count,
            deadline=None,  # each input has its own wall-clock bound in the worker
            database=None,
            phases=[Phase.explicit, Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
        )(test)
        return seed(FUZZ_SEED * 1000 + shard)(configured)

    return apply


@pytest.mark.parametrize("shard", range(TFLITE_SHARDS))
def test_fuzz_tflite(worker: FuzzWorker, shard: int) -> None:
    stats = FuzzStats(f"tflite-{shard}")
    started = time.monotonic()

    @_fuzz_settings(TFLITE_INPUTS, shard)
    @given(tflite_mutants())
    def one(mutant: tuple[str, tuple[tuple[Any, ...], ...], int]) -> None:
        name, edits, input_seed = mutant
        outcome = worker.run({"kind": "tflite", "data": mutate_tflite(name, edits), "seed": input_seed})
        failure = stats.add(outcome, f"mutate_tflite({name!r}, {edits!r})")
        assert failure is None, failure

    one()
    stats.seconds = time.monotonic() - started
    _report(stats)
    assert stats.inputs >= TFLITE_INPUTS
    assert stats.bit_exact > 0, "no mutant was compared with LiteRT: the fuzzer tests nothing"


def test_fuzz_tflite_real_models(worker: FuzzWorker) -> None:
    """Mutants of the test models as the TF converter wrote them (metadata, signatures, names):
    import, execution and LiteRT, without planning and lowering, which take seconds on them."""
    stats = FuzzStats("tflite-real")
    started = time.monotonic()

    @_fuzz_settings(REAL_INPUTS, shard=100)
    @given(tflite_mutants(SMALL_MODELS))
    def one(mutant: tuple[str, tuple[tuple[Any, ...], ...], int]) -> None:
        name, edits, input_seed = mutant
        request = {"kind": "tflite", "data": mutate_tflite(name, edits), "seed": input_seed, "stages": False}
        outcome = worker.run(request)
        failure = stats.add(outcome, f"mutate_tflite({name!r}, {edits!r})")
        assert failure is None, failure

    one()
    stats.seconds = time.monotonic() - started
    _report(stats)
    assert stats.inputs >= REAL_INPUTS
    assert stats.bit_exact > 0, "no mutant was compared with LiteRT: the fuzzer tests nothing"


@pytest.mark.parametrize("shard", range(MLIR_SHARDS))
def test_fuzz_mlir(worker: FuzzWorker, shard: int) -> None:
    stats = FuzzStats(f"mlir-{shard}")
    started = time.monotonic()

    @_fuzz_settings(MLIR_INPUTS, shard=200 + shard)
    @given(mlir_mutants())
    # Found by CI: cut before its body, a function is a declaration, which cannot be run.
    @example(("nn_ops_3", (("truncate", 104),), 0))
    def one(mutant: tuple[str, tuple[tuple[Any, ...], ...], int]) -> None:
        name, edits, input_seed = mutant
        outcome = worker.run({"kind": "mlir", "data": mutate_mlir(name, edits), "seed": input_seed})
        failure = stats.add(outcome, f"mutate_mlir({name!r}, {edits!r})")
        assert failure is None, failure

    one()
    stats.seconds = time.monotonic() - started
    _report(stats)
    assert stats.inputs >= MLIR_INPUTS
    assert stats.executed > 0, "no mutant was executed: the fuzzer tests nothing"


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_synthetic_seed_models_are_bit_exact(worker: FuzzWorker, name: str) -> None:
    """The unmutated seeds compile and match LiteRT, or the fuzzer would compare nothing."""
    outcome = worker.run({"kind": "tflite", "data": tflite_seed(name), "seed": 0})
    assert outcome["status"] == "accepted", outcome
    assert outcome["reference"] == "ok", outcome


# --------------------------------------------------------------------------- #
# Regression tests of bugs the fuzzer found (formerly known issues)
# --------------------------------------------------------------------------- #


def _returns_its_input(also_result: bool = False) -> bytes:
    """conv -> depthwise, but the model's output is its input (found by the fuzzer); with
    `also_result`, the input is returned next to the depthwise result."""
    rng = np.random.default_rng(1)
    mb = ModelBuilder()
    x = mb.add_tensor("image", [1, 8, 8, 3], "int8", scale=0.02, zero_point=-5)
    w0 = mb.add_tensor("conv/w", [4, 3, 3, 3], "int8", scale=0.01, zero_point=0, data=_weights(rng, (4, 3, 3, 3)))
    b0 = mb.add_tensor("conv/b", [4], "int32", scale=0.0002, zero_point=0, data=np.zeros(4))
    y0 = mb.add_tensor("conv", [1, 4, 4, 4], "int8", scale=6 / 255, zero_point=-128)
    conv = options("Conv2DOptions", padding="SAME", stride_w=2, stride_h=2)
    mb.add_operator("CONV_2D", [x, w0, b0], [y0], conv, version=3)
    w1 = mb.add_tensor("dw/w", [1, 3, 3, 8], "int8", scale=0.02, zero_point=0, data=_weights(rng, (1, 3, 3, 8)))
    b1 = mb.add_tensor("dw/b", [8], "int32", scale=0.0005, zero_point=0, data=np.zeros(8))
    y1 = mb.add_tensor("dw", [1, 4, 4, 8], "int8", scale=0.05, zero_point=3)
    depthwise = options("DepthwiseConv2DOptions", padding="SAME", stride_w=1, stride_h=1, depth_multiplier=2)
    mb.add_operator("DEPTHWISE_CONV_2D", [y0, w1, b1], [y1], depthwise, version=3)
    return mb.build([x], [y1, x] if also_result else [x])


def _wide_dilation() -> str:
    """The residual seed with a dilation of 2^31 on its 1x1 convolution, where any dilation is
    the same computation (found by the fuzzer)."""
    seed_text = mlir_seeds()["tflite_residual"]
    assert "nn.conv2d" in seed_text.split("dilation = array<i64: 1, 1>")[0]
    return seed_text.replace("dilation = array<i64: 1, 1>", "dilation = array<i64: 1, 2147483648>", 1)


@pytest.mark.parametrize("also_result", [False, True], ids=["only-output", "next-to-a-result"])
def test_a_returned_argument_keeps_its_sram_to_the_end(worker: FuzzWorker, also_result: bool) -> None:
    """Formerly allocate-memory let the depthwise result reuse the bytes of the returned input,
    which the stripe executor then returned overwritten."""
    outcome = worker.run({"kind": "tflite", "data": _returns_its_input(also_result), "seed": 0})
    assert outcome["status"] == "accepted", outcome
    assert outcome["reference"] == "ok", outcome
    assert "lower-to-ethosu" in outcome["stages_run"], outcome


def _allocated(data: bytes) -> ModuleOp:
    module = import_tflite(data)
    PassPipeline.parse_spec(get_all_passes(), "cascade-plan,rolling-buffer,allocate-memory").apply(
        make_context(), module
    )
    return module


def test_a_returned_argument_is_live_to_the_last_step_for_planner_and_checker() -> None:
    """The planner's prediction and the allocation agree, and the independent checker catches the
    old bug when it is put back by hand: the argument moved onto the depthwise result's bytes."""
    module = _allocated(_returns_its_input())
    function = main_function(module)
    assert function.attributes[PEAK_ATTR] == function.attributes[ALLOCATED_PEAK_ATTR]
    assert check_memory(function) == []
    argument = arg_placement(function, 0)
    depthwise = next(op for op in function.walk() if op.name == "nn.depthwise_conv2d")
    result = get_placement(depthwise)
    assert argument is not None
    assert result is not None
    # Both are live at the last step (the depthwise runs there; the argument is returned), so
    # the two ranges must be disjoint.
    assert argument.get_offset() + argument.get_size() <= result.get_offset() or (
        result.get_offset() + result.get_size() <= argument.get_offset()
    )
    moved = PlacementAttr(MemoryRegion.SRAM, result.get_offset(), argument.get_size())
    function.arg_attrs = ArrayAttr([DictionaryAttr({PLACEMENT_ATTR: moved})])
    problems = check_memory(function)
    assert any(re.search(r"argument 0 .*overlap while both are live", p) for p in problems), problems


def test_a_dilation_the_npu_cannot_encode_is_not_copied_into_a_command(worker: FuzzWorker) -> None:
    """Formerly lower-to-ethosu emitted an ethosu.conv2d with dilation [1, 2^31], which does not
    verify; now the operator runs on the CPU, and the planner keeps it out of cascades
    (test/passes/lower_to_ethosu/outside_npu_range.mlir)."""
    outcome = worker.run({"kind": "mlir", "data": _wide_dilation(), "seed": 0})
    assert outcome["status"] == "accepted", outcome
    assert outcome["executed"], outcome
    assert "lower-to-ethosu" in outcome["stages_run"], outcome


def test_a_cascade_of_cpu_operators_still_lowers(worker: FuzzWorker) -> None:
    """Found by the fuzzer: the nn dialect test's whole-tensor chunk (pad -> resize -> concat)
    was planned as one cascade, which lower-to-ethosu refused (`nn.concat at ...: inside a
    stripe loop has no NPU lowering`). The Ethos-U cost model now tells the planner which
    operators can run stripe by stripe (`can_cascade`); the concat runs alone, on the CPU."""
    outcome = worker.run({"kind": "mlir", "data": mlir_seeds()["nn_ops_2"], "seed": 0})
    assert outcome["status"] == "accepted", outcome


# --------------------------------------------------------------------------- #
# The harness itself: a hang and a crash are caught, and the worker comes back
# --------------------------------------------------------------------------- #


def test_a_hang_is_stopped_at_the_time_bound_and_the_worker_restarts() -> None:
    fuzz = FuzzWorker(timeout=2)
    try:
        started = time.monotonic()
        outcome = fuzz.run({"kind": "selftest", "action": "sleep"})
        assert outcome["status"] == "hang", outcome
        assert outcome["stage"] == "selftest"
        assert time.monotonic() - started < 10
        crash = fuzz.run({"kind": "selftest", "action": "abort"})
        assert crash["status"] == "crash", crash
        assert crash["stage"] == "selftest"
        after = fuzz.run({"kind": "tflite", "data": tflite_seed("residual"), "seed": 0})
        assert after["status"] == "accepted", after
        assert fuzz.restarts == 2
    finally:
        fuzz.close()
