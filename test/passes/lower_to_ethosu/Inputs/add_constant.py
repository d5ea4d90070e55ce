"""Writes a model whose ADD has a constant second operand (argv[1]: the .tflite path)."""

import sys

import numpy as np

from cascade.frontends.tflite_writer import ModelBuilder, options

builder = ModelBuilder()
x = builder.add_tensor("x", [1, 8, 8, 3], "int8", scale=0.1, zero_point=0)
c = builder.add_tensor("c", [1, 1, 1, 3], "int8", scale=0.05, zero_point=2, data=np.array([1, 2, 3]))
y = builder.add_tensor("y", [1, 8, 8, 3], "int8", scale=0.15, zero_point=-1)
builder.add_operator("ADD", [x, c], [y], options("AddOptions"))
with open(sys.argv[1], "wb") as file:
    file.write(builder.build([x], [y]))
