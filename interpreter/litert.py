"""TFLite's reference kernels, through LiteRT: the oracle the `nn` interpreter is checked against.

LiteRT runs with `OpResolverType.BUILTIN_REF` (the plain reference kernels, not the
optimized ones) and keeps every tensor, so intermediates can be compared too.
LiteRT is an optional dependency (the `test` extra); without it, `LiteRTUnavailable`
says how to install it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


class LiteRTUnavailable(Exception):
    """ai-edge-litert is not installed."""


@dataclass
class ReferenceRun:
    """Every tensor LiteRT computed, by TFLite tensor name, plus the outputs in order."""

    tensors: dict[str, np.ndarray]
    outputs: list[np.ndarray]


def run_reference(model: bytes, inputs: Sequence[np.ndarray]) -> ReferenceRun:
    """Run `model` on `inputs` (in the model's input order) with the reference kernels."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError as error:
        raise LiteRTUnavailable(
            "comparing against TFLite needs ai-edge-litert: pip install 'cascade-opt[test]'"
        ) from error
    interpreter = Interpreter(
        model_content=model,
        experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
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
        except ValueError:  # tensors without data (e.g. optional, never allocated)
            continue
    outputs = [np.array(interpreter.get_tensor(d["index"])) for d in interpreter.get_output_details()]
    return ReferenceRun(tensors, outputs)
