"""Runs a .tflite in Vela's format as TFLite Micro would (`interpreter.litert.run_ethosu_tflite`:
ethos-u operators on the NPU's functional model, builtins on LiteRT's reference kernels) and the
nn program it was compiled from (`interpreter.nn`), on the same random int8 inputs; prints
`bit-exact: K/N outputs` and exits 1 unless all are equal and none is constant.

    python ethosu_tflite_run.py MODEL.tflite PROGRAM.mlir [SEED]
"""

import sys

import numpy as np

from cascade.frontends.loader import load_module
from cascade.interpreter.litert import run_ethosu_tflite
from cascade.interpreter.nn import input_types, run_program

model, program = open(sys.argv[1], "rb").read(), load_module(sys.argv[2])
rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
inputs = [rng.integers(-128, 128, size=t.get_shape(), dtype=np.int8) for t in input_types(program)]
expected = run_program(program, inputs).outputs
actual = run_ethosu_tflite(model, inputs).outputs
equal = sum(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(actual, expected, strict=True))
constant = [i for i, e in enumerate(expected) if len(np.unique(e)) < 2]
print(f"bit-exact: {equal}/{len(expected)} outputs")
if constant:
    print(f"degenerate: outputs {constant} are constant")
sys.exit(0 if expected and equal == len(expected) and not constant else 1)
