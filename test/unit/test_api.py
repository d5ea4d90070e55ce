"""cascade.api embedded in an upstream MLIR flow.

A two-convolution int8 network goes TFLite -> TOSA (`tosa-converter-for-tflite`), is parsed by
upstream MLIR's Python bindings (`iree.compiler.ir`) and printed generic, compiled by our API
(legalize-tosa, cascade-plan, rolling-buffer, allocate-memory), and our generic output is parsed
and verified by upstream again. The schedule it returns still computes, bit for bit, what the
nn program computes.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from cascade.api import CompileError, compile
from cascade.frontends.tflite_writer import ModelBuilder, options
from cascade.frontends.tosa import tflite_to_tosa, tosa_tools_available

if os.environ.get("CASCADE_REQUIRE_INTEROP") == "1":
    # As in test/lit.cfg: CI must not pass by skipping the upstream-embedding test.
    import iree.compiler.ir as ir
else:
    ir = pytest.importorskip("iree.compiler.ir")

MODELS = Path(__file__).parents[1] / "models"
ACCELERATOR = "accelerator=ethos-u55-128"
PIPELINE = f"legalize-tosa,cascade-plan{{{ACCELERATOR}}},rolling-buffer,allocate-memory{{{ACCELERATOR}}}"


CONVERTER = tosa_tools_available()
if not CONVERTER and os.environ.get("CASCADE_REQUIRE_INTEROP") == "1":
    raise RuntimeError("CASCADE_REQUIRE_INTEROP=1 but tosa-converter-for-tflite or tosa-opt is missing")
requires_converter = pytest.mark.skipif(not CONVERTER, reason="needs tosa-converter-for-tflite, tosa-opt")


def two_conv_model() -> bytes:
    """x[1,16,16,4] -> conv 3x3 (8) relu -> conv 3x3 (8): small enough for a unit test, and the
    second convolution can consume the first one's rows as they come (a cascade)."""
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, 16, 16, 4], "int8", scale=0.05, zero_point=-3)
    tensors = x
    scale_in = 0.05
    for index, cout in enumerate((8, 8)):
        cin = 4 if index == 0 else 8
        w_scales = [0.004 + 0.001 * c for c in range(cout)]
        weights = rng.integers(-127, 128, (cout, 3, 3, cin))
        w = mb.add_tensor(f"w{index}", weights.shape, "int8", scale=w_scales, zero_point=0, data=weights)
        b = mb.add_tensor(
            f"b{index}",
            [cout],
            "int32",
            scale=[scale_in * s for s in w_scales],
            zero_point=0,
            data=rng.integers(-500, 500, cout),
        )
        y = mb.add_tensor(f"y{index}", [1, 16, 16, cout], "int8", scale=0.08, zero_point=-10)
        activation = "RELU" if index == 0 else "NONE"
        mb.add_operator(
            "CONV_2D",
            [tensors, w, b],
            [y],
            options("Conv2DOptions", padding="SAME", stride_h=1, stride_w=1, fused_activation_function=activation),
            version=3,
        )
        tensors, scale_in = y, 0.08
    return mb.build([x], [tensors])


def upstream_generic(text: str) -> str:
    """`text` parsed by upstream MLIR (unregistered dialects allowed), verified, printed generic."""
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        assert module.operation.verify()
        return module.operation.get_asm(print_generic_op_form=True)


@requires_converter
def test_upstream_tosa_through_api_and_back():
    from cascade.interpreter.nn import run_program
    from cascade.interpreter.scheduled import run_any
    from cascade.tools.cascade_run import random_inputs

    tosa = upstream_generic(tflite_to_tosa(two_conv_model()))
    assert '"tosa.conv2d"' in tosa

    result = compile(tosa, PIPELINE, generic=True)
    # Upstream parses and verifies what we return.
    back = upstream_generic(result.text)
    assert '"cascade.for_stripes"' in back or '"nn.conv2d"' in back
    assert result.command_streams == []
    assert result.report is not None
    # Two 16x16x8 int8 feature maps cannot both be whole in the schedule's peak if cascaded;
    # at least one must be live: 16*16*8 = 2048 bytes is a floor for the peak.
    assert result.report["peak_sram_bytes"] >= 16 * 16 * 8
    assert [entry["op"] for entry in result.report["per_op"]] == ["nn.conv2d", "nn.conv2d"]

    # Our output is still correct: the scheduled IR (flat SRAM, rolling buffers) computes what
    # the plain nn program computes, bit for bit.
    program = compile(tosa, "legalize-tosa").module
    for seed in range(3):
        inputs = random_inputs(program, seed)
        expected = run_program(program, inputs).outputs
        actual = run_any(result.module, inputs).outputs
        assert len(expected) == len(actual) == 1
        np.testing.assert_array_equal(actual[0], expected[0], err_msg=f"seed {seed}")


def test_module_source_is_not_changed():
    nn_text = compile(MODELS / "resnet8.tflite").text
    module = compile(nn_text).module
    before = str(module)
    result = compile(module, "cascade-plan{accelerator=ethos-u55-128}")
    assert str(module) == before
    assert "cascade.group" in result.text
    assert result.report is not None
    assert result.report["accelerator"] == "ethos-u55-128"


def test_lowering_returns_command_streams():
    result = compile(MODELS / "resnet8.tflite", "ethosu-pipeline{accelerator=ethos-u55-128}")
    assert len(result.command_streams) == result.report["command_streams"] == 1
    stream = result.command_streams[0]
    # Whole little-endian words ending in NPU_OP_STOP (cmd0 opcode 0, no payload flag).
    assert len(stream) % 4 == 0
    assert int.from_bytes(stream[-4:], "little") & 0xFFFF == 0


@pytest.mark.parametrize(
    ("source", "pipeline", "message"),
    [
        ("builtin.module {}", "no-such-pass", "unknown pass 'no-such-pass' (`cascade-opt --help` lists them)"),
        ('"foo.bar"(', "", "<source>:1:10: error: Operation foo.bar is not registered"),
        (b"not a flatbuffer", "", "<source>: "),
        ("builtin.module {}", "cascade-plan{sram-budget=true}", "option 'sram-budget' expects int, got 'true'"),
        (None, "", "source is NoneType: give MLIR text (str), .tflite bytes, a Path or an xDSL ModuleOp"),
    ],
)
def test_errors_are_the_cli_messages(source: str | bytes | None, pipeline: str, message: str):
    with pytest.raises(CompileError) as caught:
        compile(source, pipeline)
    assert message in str(caught.value)
    assert "Traceback" not in str(caught.value)
