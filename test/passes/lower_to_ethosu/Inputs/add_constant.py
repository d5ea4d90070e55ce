"""Writes a model whose elementwise operators have a constant operand (argv[1]: the .tflite
path; argv[2]: which constant, default `channel`):

* `channel`: ADD of a per-channel [1, 1, 1, 3] constant (the NPU broadcasts it as IFM2);
* `scalar`: ADD of a rank-0 constant, then SUB with that constant as the first operand (the
  NPU takes it in the command, the SUB with its operands reversed);
* `full`: MUL with an [1, 8, 8, 3] constant as the first operand (the NPU reads it as IFM);
* `rank`: ADD of a per-channel [3] constant, then MUL by a per-row [8, 1, 3] one (lower ranks
  than the operators': the importer gives them leading 1s, and the NPU broadcasts them).
"""

import sys

import numpy as np

from cascade.frontends.tflite_writer import ModelBuilder, options

variant = sys.argv[2] if len(sys.argv) > 2 else "channel"
builder = ModelBuilder()
x = builder.add_tensor("x", [1, 8, 8, 3], "int8", scale=0.1, zero_point=0)
y = builder.add_tensor("y", [1, 8, 8, 3], "int8", scale=0.15, zero_point=-1)
output = y
if variant == "channel":
    c = builder.add_tensor("c", [1, 1, 1, 3], "int8", scale=0.05, zero_point=2, data=np.array([1, 2, 3]))
    builder.add_operator("ADD", [x, c], [y], options("AddOptions"))
elif variant == "scalar":
    c = builder.add_tensor("c", [], "int8", scale=0.05, zero_point=2, data=np.array(37))
    output = builder.add_tensor("z", [1, 8, 8, 3], "int8", scale=0.2, zero_point=3)
    builder.add_operator("ADD", [x, c], [y], options("AddOptions"))
    builder.add_operator("SUB", [c, y], [output], options("SubOptions"))
elif variant == "full":
    values = (np.arange(192) % 53 - 26).reshape(1, 8, 8, 3)
    c = builder.add_tensor("c", [1, 8, 8, 3], "int8", scale=0.03125, zero_point=-3, data=values)
    builder.add_operator("MUL", [c, x], [y], options("MulOptions"))
elif variant == "rank":
    c = builder.add_tensor("c", [3], "int8", scale=0.05, zero_point=2, data=np.array([-40, 7, 90]))
    builder.add_operator("ADD", [x, c], [y], options("AddOptions"))
    rows = (np.arange(24) * 11 % 61 - 30).reshape(8, 1, 3)
    d = builder.add_tensor("d", [8, 1, 3], "int8", scale=0.02, zero_point=1, data=rows)
    output = builder.add_tensor("z", [1, 8, 8, 3], "int8", scale=0.1, zero_point=-2)
    builder.add_operator("MUL", [y, d], [output], options("MulOptions"))
else:
    sys.exit(f"unknown variant {variant}")
with open(sys.argv[1], "wb") as file:
    file.write(builder.build([x], [output]))
