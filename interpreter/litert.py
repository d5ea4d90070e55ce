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
    """Every tensor LiteRT computed, by TFLite tensor name, plus the outputs in order."""

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
    tensors: dict[str, np.ndarray] = {}
    for detail in interpreter.get_tensor_details():
        try:
            tensors[detail["name"]] = np.array(interpreter.get_tensor(detail["index"]))
        except ValueError:  # tensors without data (optional inputs, never allocated)
            continue
    outputs = [np.array(interpreter.get_tensor(d["index"])) for d in interpreter.get_output_details()]
    return ReferenceRun(tensors, outputs)


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
    tensors = {names[i]: v for i, v in values.items()}
    outputs = [values[int(i)] for i in graph.OutputsAsNumpy()]
    return ReferenceRun(tensors, outputs)
