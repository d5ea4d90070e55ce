"""Prints the structure of a .tflite for the ethosu_tflite lit tests: operators (custom code or
builtin name) with their input and output tensors, tensor roles, the offline allocation."""

import sys

import numpy as np
from ethosu.vela.tflite.BuiltinOperator import BuiltinOperator
from ethosu.vela.tflite.Model import Model

BUILTIN_NAMES = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
TYPE_NAMES = {3: "uint8", 9: "int8", 2: "int32"}

data = open(sys.argv[1], "rb").read()
model = Model.GetRootAsModel(data, 0)
subgraph = model.Subgraphs(0)
offsets = {}
for m in range(model.MetadataLength()):
    entry = model.Metadata(m)
    words = np.frombuffer(model.Buffers(entry.Buffer()).DataAsNumpy().tobytes(), "<i4")
    print(f"metadata {entry.Name().decode()}: version {words[0]}, subgraphs {words[1]}, tensors {words[2]}")
    offsets = dict(enumerate(int(w) for w in words[3:]))


def tensor(index: int) -> str:
    if index < 0:
        return "none"
    t = subgraph.Tensors(index)
    content = model.Buffers(t.Buffer()).DataAsNumpy()
    kind = "const" if not isinstance(content, int) else f"at {offsets.get(index)}"
    quant = t.Quantization()
    q = ""
    if quant is not None and quant.ScaleLength() == 1:
        q = f" quant {quant.ScaleAsNumpy()[0]:.6g}:{quant.ZeroPointAsNumpy()[0]}"
    head = ""
    if kind == "const" and t.Type() == 3:
        head = " " + bytes(content[:4].tobytes()).decode("latin-1").replace("\0", ".")
    shape = "x".join(str(d) for d in t.ShapeAsNumpy())
    return f"'{t.Name().decode()}' {TYPE_NAMES.get(t.Type(), t.Type())}[{shape}] {kind}{q}{head}"


for o in range(subgraph.OperatorsLength()):
    op = subgraph.Operators(o)
    code = model.OperatorCodes(op.OpcodeIndex())
    builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
    name = code.CustomCode().decode() if builtin == BuiltinOperator.CUSTOM else BUILTIN_NAMES[builtin]
    options = op.CustomOptionsAsNumpy().tobytes().hex() if op.CustomOptionsLength() else ""
    print(f"operator {o}: {name} {options}".rstrip())
    for i in op.InputsAsNumpy():
        print(f"  in  {tensor(int(i))}")
    for i in op.OutputsAsNumpy():
        print(f"  out {tensor(int(i))}")
print("inputs", ", ".join(tensor(int(i)) for i in subgraph.InputsAsNumpy()))
print("outputs", ", ".join(tensor(int(i)) for i in subgraph.OutputsAsNumpy()))
