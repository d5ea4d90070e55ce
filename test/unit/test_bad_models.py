"""Bad .tflite files reach the user as one clear line naming the operator and tensor, exit 1.

Each case is written as a file and run through both command-line tools, as a user would.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cascade.frontends.tflite_writer import ModelBuilder, options

MODELS = Path(__file__).parent.parent / "models"
TOOLS = {
    "cascade-opt": [sys.executable, "-m", "cascade.tools.cascade_opt"],
    "cascade-run": [sys.executable, "-m", "cascade.tools.cascade_run"],
}


def conv_model(dtype: str = "int8", quantized: bool = True, opcode: str = "CONV_2D") -> bytes:
    mb = ModelBuilder()
    q = {"scale": 0.5, "zero_point": 0} if quantized else {}
    x = mb.add_tensor("image", [1, 4, 4, 2], dtype, **q)
    w = mb.add_tensor("filter", [3, 1, 1, 2], dtype, scale=0.1, zero_point=0, data=np.ones((3, 1, 1, 2)))
    b = mb.add_tensor("bias", [3], "int32", scale=0.05, zero_point=0, data=np.zeros(3))
    y = mb.add_tensor("features", [1, 4, 4, 3], dtype, **q)
    mb.add_operator(opcode, [x, w, b], [y], options("Conv2DOptions", padding="VALID", stride_w=1, stride_h=1))
    return mb.build([x], [y])


def hard_swish_model() -> bytes:
    mb = ModelBuilder()
    x = mb.add_tensor("image", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    y = mb.add_tensor("swished", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    mb.add_operator("HARD_SWISH", [x], [y])
    return mb.build([x], [y])


def run_tool(tool: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TOOLS[tool], str(path)], capture_output=True, text=True, cwd=path.parent, check=False)


CASES = {
    "float": (lambda: conv_model("float32", quantized=False), "tensor 'image' (#0) is FLOAT32: float models"),
    "int16": (lambda: conv_model("int16"), "tensor 'image' (#0) has type INT16; only INT8 is supported"),
    "unquantized": (lambda: conv_model(quantized=False), "tensor 'image' (#0) has no quantization parameters"),
    "unsupported": (hard_swish_model, "operator #0 HARD_SWISH: unsupported operator"),
    "truncated": (lambda: (MODELS / "resnet8.tflite").read_bytes()[:5000], "malformed TFLite file"),
    "not-tflite": (lambda: b"GIF89a" + bytes(100), "not a TFLite file"),
}


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_model_is_one_clear_line(tmp_path: Path, case: str, tool: str):
    make, expected = CASES[case]
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(make())
    result = run_tool(tool, path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"{case}.tflite" in lines[0]
    assert expected in lines[0]
    if case in ("float", "int16", "unquantized"):
        assert "operator #0 CONV_2D" in lines[0]


def test_good_model_still_imports(tmp_path: Path):
    path = tmp_path / "good.tflite"
    path.write_bytes(conv_model())
    result = run_tool("cascade-opt", path)
    assert result.returncode == 0, result.stderr
    assert "nn.conv2d" in result.stdout
