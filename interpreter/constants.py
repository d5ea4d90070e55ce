"""Constant tensors as numpy arrays, without the interpreter.

The compiler reads weights and biases out of `arith.constant` attributes while planning and
lowering; this module keeps that path free of xDSL's interpreter framework (whose import alone
takes about 0.2 s, a fifth of compiling a small model).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType


class InterpretationError(Exception):
    """The program cannot be executed (unsupported operator or attribute, bad inputs)."""


def constant_array(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The contents of an integer dense constant, as numpy (bytes are little-endian)."""
    element = attr.get_element_type()
    if not isinstance(element, IntegerType):
        raise InterpretationError(f"only integer constants are supported, got {element}")
    dtype = np.dtype(f"<i{element.width.data // 8}")
    shape = attr.get_shape()
    data = np.frombuffer(attr.data.data, dtype=dtype)
    if data.size == 1 and int(np.prod(shape)) != 1:  # a splat: dense<5> : tensor<4xi8>
        return np.full(shape, data[0], dtype=dtype.newbyteorder("="))
    return data.reshape(shape).astype(dtype.newbyteorder("="))
