"""The .tflite half of the bad-input corpus (the .mlir half is test/errors/*.mlir, run by lit).

Every case is a small model built here (or a cut or patched test model), written to a file and
given to each tool that reads .tflite: cascade-opt, cascade-run and cascade-estimate. Each must
print exactly one line, `<tool>: error: <file>: <reason>`, with the reason asserted in full
(it names the operator and the tensor), nothing on stdout, exit status 1, and no traceback.

The tools run in this process (their `main`), which is fast; `test_entry_points_*` checks one
case through the installed console scripts as a user runs them.
"""

from __future__ import annotations

import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from ethosu.vela.tflite.Model import Model

from cascade.frontends.tflite_writer import ModelBuilder, OpOptions, options
from cascade.tools import cascade_estimate, cascade_opt, cascade_run

MODELS = Path(__file__).resolve().parents[1] / "models"
CONV = options("Conv2DOptions", padding="VALID", stride_w=1, stride_h=1)


def conv_model(
    *,
    dtype: str = "int8",
    quantized: bool = True,
    image: tuple[int, ...] = (1, 4, 4, 2),
    features: tuple[int, ...] = (1, 4, 4, 3),
    image_quant: dict | None = None,
    filter_quant: dict | None = None,
    conv_options: OpOptions | None = CONV,
    inputs: list[int] | None = None,
    name: str = "image",
) -> bytes:
    """image -> CONV_2D 1x1 (3 filters) -> features: a valid model unless told otherwise."""
    mb = ModelBuilder()
    quant = {"scale": 0.5, "zero_point": 0} if quantized else {}
    x = mb.add_tensor(name, list(image), dtype, **(image_quant or quant))
    w = mb.add_tensor(
        "filter", [3, 1, 1, 2], "int8", **(filter_quant or {"scale": 0.1, "zero_point": 0}), data=np.ones((3, 1, 1, 2))
    )
    b = mb.add_tensor("bias", [3], "int32", scale=0.05, zero_point=0, data=np.zeros(3))
    y = mb.add_tensor("features", list(features), dtype, **quant)
    mb.add_operator("CONV_2D", inputs if inputs is not None else [x, w, b], [y], conv_options)
    return mb.build([x], [y])


def unary_model(opcode: str | int, opts: OpOptions | None = None, output_scale: float = 0.5) -> bytes:
    mb = ModelBuilder()
    x = mb.add_tensor("image", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    y = mb.add_tensor("result", [1, 4, 4, 2], "int8", scale=output_scale, zero_point=0)
    mb.add_operator(opcode, [x], [y], opts)
    return mb.build([x], [y])


def resize_model(size: tuple[int, int]) -> bytes:
    mb = ModelBuilder()
    x = mb.add_tensor("image", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    s = mb.add_tensor("size", [2], "int32", data=np.array(size))
    y = mb.add_tensor("resized", [1, 8, 8, 2], "int8", scale=0.5, zero_point=0)
    mb.add_operator("RESIZE_NEAREST_NEIGHBOR", [x, s], [y], options("ResizeNearestNeighborOptions"), version=3)
    return mb.build([x], [y])


def reshape_model(shape: tuple[int, ...]) -> bytes:
    mb = ModelBuilder()
    x = mb.add_tensor("image", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    s = mb.add_tensor("shape", [len(shape)], "int32", data=np.array(shape))
    y = mb.add_tensor("flat", [1, 32], "int8", scale=0.5, zero_point=0)
    mb.add_operator("RESHAPE", [x, s], [y], options("ReshapeOptions", new_shape=list(shape)))
    return mb.build([x], [y])


def concat_model(activation: str) -> bytes:
    mb = ModelBuilder()
    a = mb.add_tensor("a", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    b = mb.add_tensor("b", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    y = mb.add_tensor("joined", [1, 4, 4, 4], "int8", scale=0.5, zero_point=0)
    opts = options("ConcatenationOptions", axis=3, fused_activation_function=activation)
    mb.add_operator("CONCATENATION", [a, b], [y], opts, version=2)
    return mb.build([a, b], [y])


def no_operator_model() -> bytes:
    mb = ModelBuilder()
    x = mb.add_tensor("image", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    y = mb.add_tensor("never", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    return mb.build([x], [y])


def patched(data: bytes, locate: Callable[[Model], int], fmt: str, value: int) -> bytes:
    """`data` with the scalar at the position `locate` finds overwritten."""
    out = bytearray(data)
    struct.pack_into(fmt, out, locate(Model.GetRootAs(data, 0)), value)
    return bytes(out)


def _version(model: Model) -> int:
    return model._tab.Pos + model._tab.Offset(4)


def _subgraph_count(model: Model) -> int:
    return model._tab.Vector(model._tab.Offset(8)) - 4


def _name_byte(model: Model) -> int:
    tensor = model.Subgraphs(0).Tensors(0)
    offset = tensor._tab.Offset(10)
    return tensor._tab.Vector(offset)  # first byte of the name string


def _model_inputs_count(model: Model) -> int:
    graph = model.Subgraphs(0)
    return graph._tab.Vector(graph._tab.Offset(6)) - 4


def _output_is_input() -> bytes:
    """A convolution that writes its own input, the model's input."""
    mb = ModelBuilder()
    x = mb.add_tensor("image", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    w = mb.add_tensor("filter", [2, 1, 1, 2], "int8", scale=0.1, zero_point=0, data=np.ones((2, 1, 1, 2)))
    b = mb.add_tensor("bias", [2], "int32", scale=0.05, zero_point=0, data=np.zeros(2))
    mb.add_operator("CONV_2D", [x, w, b], [x], CONV)
    return mb.build([x], [x])


RESNET8 = (MODELS / "resnet8.tflite").read_bytes()
CONV_OP = "operator #0 CONV_2D"

# case -> (model bytes, the reason printed after `<tool>: error: <file>: `)
CASES: dict[str, tuple[Callable[[], bytes], str]] = {
    # Unsupported data types.
    "float32": (
        lambda: conv_model(dtype="float32", quantized=False),
        f"{CONV_OP}: model input tensor 'image' (#0) is FLOAT32: float models are not supported, quantize to int8",
    ),
    "int16": (
        lambda: conv_model(dtype="int16"),
        f"{CONV_OP}: model input tensor 'image' (#0) has type INT16; only INT8 is supported",
    ),
    "uint8": (
        lambda: conv_model(dtype="uint8"),
        f"{CONV_OP}: model input tensor 'image' (#0) has type UINT8; only INT8 is supported",
    ),
    # Missing or invalid quantization.
    "unquantized": (
        lambda: conv_model(quantized=False),
        f"{CONV_OP}: model input tensor 'image' (#0) has no quantization parameters",
    ),
    "zero-scale": (
        lambda: conv_model(image_quant={"scale": 0.0, "zero_point": 0}),
        f"{CONV_OP}: tensor 'image' (#0) has quantization scale 0.0; scales must be positive and finite",
    ),
    "zero-point-range": (
        lambda: conv_model(image_quant={"scale": 0.5, "zero_point": 300}),
        f"{CONV_OP}: input zero point must be in [-128, 127], got [300]",
    ),
    "per-channel-activation": (
        lambda: conv_model(image_quant={"scale": [0.5, 0.25], "zero_point": 0, "quantized_dimension": 3}),
        f"{CONV_OP}: input must be per-tensor quantized",
    ),
    "asymmetric-weights": (
        lambda: conv_model(filter_quant={"scale": 0.1, "zero_point": 3}),
        f"{CONV_OP}: weights tensor 'filter' (#1) have a non-zero zero point",
    ),
    "rescale-overflow": (
        lambda: conv_model(image_quant={"scale": 1e30, "zero_point": 0}),
        f"{CONV_OP}: rescale multiplier 2e+29 (input scale x weight scale / output scale) is too large for"
        " TFLite's 32-bit fixed-point arithmetic (it must be below 2^30)",
    ),
    # 0.5 / 128 / 0.001 = 3.9: TFLite refuses a hard swish whose output multiplier is 1 or more.
    "hard-swish-output-scale": (
        lambda: unary_model("HARD_SWISH", output_scale=0.001),
        "operator #0 HARD_SWISH: hard_swish needs an output scale above input scale / 128"
        " (TFLite's output multiplier is below 1)",
    ),
    # Unsupported operators.
    "unsupported-op": (lambda: unary_model("ELU"), "operator #0 ELU: unsupported operator"),
    "unknown-opcode": (lambda: unary_model(250), "operator #0 opcode 250: unsupported operator"),
    "custom-op": (lambda: unary_model("CUSTOM"), "operator #0 CUSTOM '': unsupported operator"),
    "fused-activation": (
        lambda: conv_model(
            conv_options=options(
                "Conv2DOptions", padding="VALID", stride_w=1, stride_h=1, fused_activation_function="TANH"
            )
        ),
        f"{CONV_OP}: unsupported fused activation TANH (supported: NONE, RELU, RELU6, RELU_N1_TO_1)",
    ),
    "logistic-quantization": (
        lambda: unary_model("LOGISTIC"),
        "operator #0 LOGISTIC: int8 LOGISTIC needs the output quantization 1/256:-128, as TFLite requires;"
        " got #nn.quant<0.5:0>",
    ),
    "softmax-quantization": (
        lambda: unary_model("SOFTMAX", options("SoftmaxOptions", beta=1.0)),
        "operator #0 SOFTMAX: int8 SOFTMAX needs the output quantization 1/256:-128, as TFLite requires;"
        " got #nn.quant<0.5:0>",
    ),
    "concat-activation": (
        lambda: concat_model("RELU"),
        "operator #0 CONCATENATION: a fused activation on CONCATENATION is not supported",
    ),
    # Inconsistent shapes and options.
    "output-shape": (
        lambda: conv_model(features=(1, 5, 4, 3)),
        f"{CONV_OP}: output height must be 4 for input height 4, kernel 1, stride 1, dilation 1, padding 0; got 5",
    ),
    "resize-size": (
        lambda: resize_model((8, 6)),
        "operator #0 RESIZE_NEAREST_NEIGHBOR: size tensor 'size' (#1) is [8, 6], but the output tensor is"
        " declared with [8, 8]",
    ),
    "reshape-shape": (
        lambda: reshape_model((1, 16, 2)),
        "operator #0 RESHAPE: shape tensor 'shape' (#1) is [1, 16, 2], but the output tensor is declared with [1, 32]",
    ),
    "options-type": (
        lambda: conv_model(conv_options=options("Pool2DOptions", padding="VALID", stride_w=1, stride_h=1)),
        f"{CONV_OP}: builtin options are Pool2DOptions, expected Conv2DOptions",
    ),
    "missing-options": (lambda: conv_model(conv_options=None), f"{CONV_OP}: missing builtin options"),
    "zero-stride": (
        lambda: conv_model(conv_options=options("Conv2DOptions", padding="VALID", stride_w=1, stride_h=0)),
        f"{CONV_OP}: stride [0, 1] and dilation [1, 1] must be positive",
    ),
    "padding-kind": (
        lambda: conv_model(conv_options=options("Conv2DOptions", padding=7, stride_w=1, stride_h=1)),
        f"{CONV_OP}: unknown padding kind 7",
    ),
    "no-static-shape": (
        lambda: conv_model(image=(1, -1, 4, 2)),
        f"{CONV_OP}: model input tensor 'image' (#0) has no static shape: [1, -1, 4, 2]",
    ),
    # Tensors too large for the address space (2^32 bytes).
    "too-large": (
        lambda: conv_model(image=(1, 70000, 70000, 2), features=(1, 70000, 70000, 3)),
        f"{CONV_OP}: tensor 'image' (#0) of shape [1, 70000, 70000, 2] has 9800000000 bytes, more than the"
        " 4294967296 (2^32) a 32-bit address space can hold",
    ),
    # Broken graphs.
    "tensor-index": (
        lambda: conv_model(inputs=[0, 99, 2]),
        f"{CONV_OP}: input 1 has tensor index 99, out of range for 4 tensors",
    ),
    "optional-index": (
        lambda: conv_model(inputs=[0, 1, -2]),
        f"{CONV_OP}: input 2 has tensor index -2, out of range for 4 tensors",
    ),
    "never-computed": (no_operator_model, "model output tensor 'never' (#1) is never computed"),
    "output-is-input": (_output_is_input, f"{CONV_OP}: output tensor 'image' (#0) is already a model input"),
    # Names that would break the one-line message or cannot be matched with TFLite's.
    "name-with-newline": (
        lambda: conv_model(quantized=False, name="im\nage"),
        f"{CONV_OP}: model input tensor 'im\\nage' (#0) has no quantization parameters",
    ),
    "name-not-utf8": (
        lambda: patched(conv_model(), _name_byte, "<B", 0xFF),
        f"{CONV_OP}: tensor '\ufffdmage' (#0) has a name that is not UTF-8",
    ),
    # Truncated and corrupted files.
    "empty": (lambda: b"", "not a TFLite file: the flatbuffer identifier 'TFL3' is missing"),
    "not-tflite": (lambda: b"GIF89a" + bytes(100), "not a TFLite file: the flatbuffer identifier 'TFL3' is missing"),
    "truncated-header": (lambda: RESNET8[:7], "not a TFLite file: the flatbuffer identifier 'TFL3' is missing"),
    "truncated": (
        lambda: RESNET8[:5000],
        "malformed TFLite file: the model header: the flatbuffer is corrupt (struct.error: unpack_from requires a"
        " buffer of at least 78684 bytes for unpacking 4 bytes at offset 78680 (actual buffer size is 5000))",
    ),
    "root-offset": (
        lambda: struct.pack("<I", 0x7FFFFF00) + RESNET8[4:],
        "malformed TFLite file: the model header: the flatbuffer is corrupt (struct.error: unpack_from requires a"
        " buffer of at least 2147483396 bytes for unpacking 4 bytes at offset 2147483392 (actual buffer size is"
        f" {len(RESNET8)}))",
    ),
    "schema-version": (
        lambda: patched(conv_model(), _version, "<I", 2),
        "TFLite schema version 2 is not supported (only 3)",
    ),
    "no-subgraph": (lambda: patched(conv_model(), _subgraph_count, "<I", 0), "TFLite file has no subgraph"),
    "no-inputs": (
        lambda: patched(conv_model(), _model_inputs_count, "<I", 0),
        "the main subgraph has no inputs or no outputs",
    ),
}


def run_in_process(tool: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """A tool's exit status, stdout and stderr, run through its `main` in this process."""
    if tool == "cascade-opt":
        status = cascade_opt.run(argv)
    else:
        main = {"cascade-run": cascade_run.main, "cascade-estimate": cascade_estimate.main}[tool]
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        status = int(exit_info.value.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("tool", ["cascade-opt", "cascade-run", "cascade-estimate"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_tflite_is_one_exact_error_line(
    case: str, tool: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASCADE_DEBUG", raising=False)
    make, reason = CASES[case]
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(make())
    status, out, err = run_in_process(tool, [str(path)], capsys)
    assert "Traceback" not in out + err
    assert err == f"{tool}: error: {path}: {reason}\n"
    assert out == ""
    assert status == 1


@pytest.mark.parametrize("tool", ["cascade-opt", "cascade-run", "cascade-estimate"])
def test_entry_points_print_one_line_and_exit_1(tool: str, tmp_path: Path) -> None:
    path = tmp_path / "int16.tflite"
    path.write_bytes(conv_model(dtype="int16"))
    result = subprocess.run([tool, str(path)], capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"{tool}: error: {path}: {CASES['int16'][1]}\n"


def test_the_corpus_model_is_valid_when_nothing_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The cases break one thing each in a model that is otherwise accepted."""
    path = tmp_path / "good.tflite"
    path.write_bytes(conv_model())
    status, out, err = run_in_process("cascade-opt", [str(path)], capsys)
    assert (status, err) == (0, "")
    assert "nn.conv2d" in out
