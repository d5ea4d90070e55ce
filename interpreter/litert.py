"""TFLite's reference kernels, through LiteRT: the oracle the `nn` interpreter is checked against.

LiteRT runs with `OpResolverType.BUILTIN_REF` (the plain reference kernels, not the
optimized ones) and keeps every tensor, so intermediates can be compared too.

One exception: TFLite's int8 reference SOFTMAX aborts the whole process (not an exception)
when beta * input_scale * 2^26 <= 1, as in both MobileNets here (input scale 7.8e-9). For a
model with such a softmax the oracle replays the graph one operator at a time, each operator
extracted into its own model and fed the oracle's own earlier results: the reference kernel
for every operator, and TFLite's default kernel for those softmaxes (the `nn` interpreter
does the same, see `kernels.softmax_lut`).

LiteRT is an optional dependency (the `test` extra); without it, `LiteRTUnavailable` says
how to install it.

`run_ethosu_tflite` runs a file in Vela's output format (`-t ethosu-tflite`, or Vela's own) as
TFLite Micro would, one operator after the other in one tensor arena laid out by the file's
`OfflineMemoryAllocation` metadata: every `ethos-u` operator on the functional model of the NPU
(`interpreter.ethosu`) with its inputs after the command stream, then its outputs, bound to
base-pointer regions 0, 1, 2, ... (read-only, scratch, fast scratch, IFMs, OFMs), as the
TFLite Micro kernel binds them; every builtin operator with LiteRT's reference kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from ethosu.vela.tflite.BuiltinOperator import BuiltinOperator
from ethosu.vela.tflite.Model import Model
from ethosu.vela.tflite.SoftmaxOptions import SoftmaxOptions

from cascade.interpreter.kernels import softmax_reference_supported

REFERENCE = "BUILTIN_REF"
DEFAULT = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"


class LiteRTUnavailable(Exception):
    """ai-edge-litert is not installed."""


@dataclass
class ReferenceRun:
    """Every tensor LiteRT computed, by TFLite tensor name (a name two tensors share is left
    out), plus the outputs in order."""

    tensors: dict[str, np.ndarray]
    outputs: list[np.ndarray]


def invoke(model: bytes, inputs: Sequence[np.ndarray], resolver: str = REFERENCE) -> ReferenceRun:
    """Run `model` once on `inputs` (in the model's input order) and keep every tensor."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError as error:
        raise LiteRTUnavailable(
            "comparing against TFLite needs ai-edge-litert: pip install 'cascade-opt[test]'"
        ) from error
    interpreter = Interpreter(
        model_content=model,
        experimental_op_resolver_type=getattr(OpResolverType, resolver),
        experimental_preserve_all_tensors=True,
    )
    interpreter.allocate_tensors()
    input_details = interpreter.get_input_details()
    if len(input_details) != len(inputs):
        raise ValueError(f"the model has {len(input_details)} inputs, {len(inputs)} given")
    for detail, value in zip(input_details, inputs, strict=True):
        interpreter.set_tensor(detail["index"], np.asarray(value, dtype=detail["dtype"]))
    interpreter.invoke()
    named: list[tuple[str, np.ndarray]] = []
    for detail in interpreter.get_tensor_details():
        try:
            named.append((detail["name"], np.array(interpreter.get_tensor(detail["index"]))))
        except ValueError:  # tensors without data (optional inputs, never allocated)
            continue
    outputs = [np.array(interpreter.get_tensor(d["index"])) for d in interpreter.get_output_details()]
    return ReferenceRun(_unambiguous(named), outputs)


def _unambiguous(named: Sequence[tuple[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The tensors by name, without the names two tensors share: such a name identifies neither."""
    counts: dict[str, int] = {}
    for name, _ in named:
        counts[name] = counts.get(name, 0) + 1
    return {name: value for name, value in named if counts[name] == 1}


def run_reference(model: bytes, inputs: Sequence[np.ndarray]) -> ReferenceRun:
    """The reference result of `model` on `inputs`, every tensor included."""
    if not _rejected_softmaxes(model):
        return invoke(model, inputs)
    return _replay(model, inputs)


def _operators(model: bytes) -> tuple[Any, Any]:
    root = Model.GetRootAs(model, 0)
    return root, root.Subgraphs(0)


def _opcode(root: Any, op: Any) -> int:
    code = root.OperatorCodes(op.OpcodeIndex())
    return max(code.BuiltinCode(), code.DeprecatedBuiltinCode())


def _rejected_softmaxes(model: bytes) -> set[int]:
    """Indices of SOFTMAX operators that TFLite's reference kernel would abort on."""
    root, graph = _operators(model)
    rejected = set()
    for index in range(graph.OperatorsLength()):
        op = graph.Operators(index)
        if _opcode(root, op) != BuiltinOperator.SOFTMAX:
            continue
        quant = graph.Tensors(op.Inputs(0)).Quantization()
        beta = 1.0
        if (table := op.BuiltinOptions()) is not None:
            options = SoftmaxOptions()
            options.Init(table.Bytes, table.Pos)
            beta = options.Beta()
        if quant is not None and quant.ScaleLength() and not softmax_reference_supported(quant.Scale(0), beta):
            rejected.add(index)
    return rejected


def _replay(model: bytes, inputs: Sequence[np.ndarray]) -> ReferenceRun:
    from cascade.frontends.tflite_writer import extract_operator

    _, graph = _operators(model)
    names = {i: graph.Tensors(i).Name().decode() for i in range(graph.TensorsLength())}
    values: dict[int, np.ndarray] = {}
    for index, value in zip(graph.InputsAsNumpy(), inputs, strict=True):
        values[int(index)] = np.asarray(value)
    rejected = _rejected_softmaxes(model)
    for index in range(graph.OperatorsLength()):
        single, original_inputs, original_outputs = extract_operator(model, index)
        run = invoke(single, [values[i] for i in original_inputs], DEFAULT if index in rejected else REFERENCE)
        for tensor, output in zip(original_outputs, run.outputs, strict=True):
            values[tensor] = output
    tensors = _unambiguous([(names[i], v) for i, v in values.items()])
    outputs = [values[int(i)] for i in graph.OutputsAsNumpy()]
    return ReferenceRun(tensors, outputs)


# --------------------------------------------------------------------------- #
# Vela-format files: the ethos-u custom operator on the functional model
# --------------------------------------------------------------------------- #

_NUMPY_TYPES = {0: "<f4", 2: "<i4", 3: "<u1", 4: "<i8", 7: "<i2", 9: "<i1"}
"""numpy dtypes of the TFLite tensor types a Vela-format file holds."""
ETHOS_U = b"ethos-u"


@dataclass
class EthosURun:
    """The outputs of a Vela-format file, in order, and its arena after the run."""

    outputs: list[np.ndarray]
    arena: np.ndarray


def run_ethosu_tflite(
    model: bytes, inputs: Sequence[np.ndarray], *, fast_memory: bool = False, poison: int = 0xA5
) -> EthosURun:
    """Run a Vela-format `model` on `inputs` (module docstring). The arena starts as `poison`.

    `fast_memory` gives region 2 its own memory of the fast scratch tensor's size, as the
    ethos-u driver does when it has a fast memory (Ethos-U65's SRAM); without it region 2 is the
    fast scratch tensor's bytes in the arena. A tensor the file does not place (offset -1, or
    no `OfflineMemoryAllocation` at all: a model all on the CPU) gets memory of its own, as
    TFLite Micro would plan it apart from the others.
    """
    from cascade.ethos_u.serialize import command_words, payload_accelerator
    from cascade.interpreter.ethosu import EthosUMachine

    root, graph = _operators(model)
    metadata = {root.Metadata(i).Name().decode(): root.Metadata(i).Buffer() for i in range(root.MetadataLength())}
    offsets = [-1] * graph.TensorsLength()
    if "OfflineMemoryAllocation" in metadata:
        words = np.frombuffer(_buffer(root, metadata["OfflineMemoryAllocation"]), dtype="<i4")
        offsets = [int(w) for w in words[3:]]
    if len(offsets) != graph.TensorsLength():
        raise ValueError(f"OfflineMemoryAllocation places {len(offsets)} tensors of {graph.TensorsLength()}")

    def dtype(index: int) -> np.dtype:
        return np.dtype(_NUMPY_TYPES[graph.Tensors(index).Type()])

    def shape(index: int) -> tuple[int, ...]:
        return tuple(int(d) for d in graph.Tensors(index).ShapeAsNumpy())

    def nbytes(index: int) -> int:
        return int(np.prod(shape(index))) * dtype(index).itemsize

    constants = {i: _buffer(root, graph.Tensors(i).Buffer()) for i in range(graph.TensorsLength())}
    constants = {i: data for i, data in constants.items() if data}
    size = max((offsets[i] + nbytes(i) for i in range(len(offsets)) if offsets[i] >= 0), default=0)
    arena = np.full(size, poison, dtype=np.uint8)
    unplaced: dict[int, np.ndarray] = {}

    def raw(index: int) -> np.ndarray:
        """The bytes of tensor `index`: its constant data, else its place in the arena, else
        memory of its own."""
        if index in constants:
            return np.frombuffer(constants[index], dtype=np.uint8)
        if offsets[index] < 0:
            return unplaced.setdefault(index, np.full(nbytes(index), poison, dtype=np.uint8))
        return arena[offsets[index] : offsets[index] + nbytes(index)]

    def value(index: int) -> np.ndarray:
        return raw(index).view(dtype(index)).reshape(shape(index)).copy()

    for index, array in zip(graph.InputsAsNumpy(), inputs, strict=True):
        raw(int(index))[:] = np.ascontiguousarray(array, dtype=dtype(int(index))).view(np.uint8).reshape(-1)
    for position in range(graph.OperatorsLength()):
        op = graph.Operators(position)
        op_inputs, op_outputs = [int(i) for i in op.InputsAsNumpy()], [int(i) for i in op.OutputsAsNumpy()]
        if root.OperatorCodes(op.OpcodeIndex()).CustomCode() == ETHOS_U:
            payload = constants[op_inputs[0]]
            accelerator = payload_accelerator(payload)
            if accelerator is None:
                raise ValueError(f"operator {position}: the command stream names no accelerator")
            # Regions in TFLite Micro's order: the inputs after the command stream, then the outputs.
            regions = {region: raw(t) for region, t in enumerate([*op_inputs[1:], *op_outputs])}
            if fast_memory:
                regions[2] = np.full(regions[2].size, poison, dtype=np.uint8)
            EthosUMachine(accelerator, regions).run_register_stream(command_words(payload))
            continue
        single, used, produced = _extract(model, position)
        resolver = DEFAULT if _rejected_softmaxes(single) else REFERENCE
        run = invoke(single, [value(i) for i in used], resolver)
        for index, result in zip(produced, run.outputs, strict=True):
            raw(index)[:] = np.ascontiguousarray(result, dtype=dtype(index)).view(np.uint8).reshape(-1)
    return EthosURun([value(int(i)) for i in graph.OutputsAsNumpy()], arena)


def _buffer(root: Any, index: int) -> bytes:
    content = root.Buffers(index).DataAsNumpy()
    return b"" if isinstance(content, int) else content.tobytes()


def _extract(model: bytes, index: int) -> tuple[bytes, list[int], list[int]]:
    from cascade.frontends.tflite_writer import extract_operator

    return extract_operator(model, index)
