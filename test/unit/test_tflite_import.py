"""TFLite import: every test model imports, its operators map one to one, bad files fail clearly."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest
from ethosu.vela.tflite.BuiltinOperator import BuiltinOperator
from ethosu.vela.tflite.Model import Model
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from cascade.frontends.loader import LoadError, load_module, make_context
from cascade.frontends.tflite import TFLiteImportError, import_tflite, tensor_names

MODELS = sorted((Path(__file__).parent.parent / "models").glob("*.tflite"))

# TFLite builtin operator -> the nn operator it imports as.
EXPECTED_OP = {
    "CONV_2D": "nn.conv2d",
    "DEPTHWISE_CONV_2D": "nn.depthwise_conv2d",
    "ADD": "nn.add",
    "MEAN": "nn.mean",
    "FULLY_CONNECTED": "nn.fully_connected",
    "SOFTMAX": "nn.softmax",
}


def tflite_operator_names(data: bytes) -> list[str]:
    names = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
    model = Model.GetRootAs(data, 0)
    graph = model.Subgraphs(0)
    result = []
    for i in range(graph.OperatorsLength()):
        code = model.OperatorCodes(graph.Operators(i).OpcodeIndex())
        result.append(names[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())])
    return result


def nn_op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("nn.")]


def test_there_are_models():
    assert len(MODELS) >= 6


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_model_imports_operator_for_operator(path: Path):
    data = path.read_bytes()
    module = import_tflite(data)
    module.verify()
    expected = [EXPECTED_OP[name] for name in tflite_operator_names(data)]
    assert nn_op_names(module) == expected


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_every_operator_output_keeps_its_tflite_name(path: Path):
    data = path.read_bytes()
    module = import_tflite(data)
    names = tensor_names(module)
    model = Model.GetRootAs(data, 0)
    graph = model.Subgraphs(0)
    for i in range(graph.OperatorsLength()):
        output = graph.Tensors(graph.Operators(i).Outputs(0)).Name().decode()
        assert output in names
        assert names[output].owner.name.startswith("nn.")


@pytest.mark.parametrize("path", MODELS[:2], ids=lambda p: p.stem)
def test_printed_module_parses_back_identically(path: Path):
    module = import_tflite(path.read_bytes())
    text = _print(module)
    reparsed = load_module_from_text(text)
    assert _print(reparsed) == text
    # Weights travel as hex blobs that upstream MLIR reads too.
    assert 'dense<"0x' in text


def test_weights_are_constants_with_the_model_bytes():
    path = next(p for p in MODELS if p.stem == "resnet8")
    module = import_tflite(path.read_bytes())
    constants = [op for op in module.walk() if isinstance(op, ConstantOp)]
    # resnet8: 9 conv weights + 9 biases, FC weights, MEAN axes are not materialized.
    assert len(constants) == 19


def load_module_from_text(text: str) -> ModuleOp:
    from xdsl.parser import Parser

    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def _print(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def test_truncated_file_is_a_clear_error():
    data = MODELS[0].read_bytes()[:1000]
    with pytest.raises(TFLiteImportError, match="malformed TFLite file"):
        import_tflite(data)


def test_not_a_tflite_file():
    with pytest.raises(TFLiteImportError, match="flatbuffer identifier 'TFL3' is missing"):
        import_tflite(b"this is not a model at all")


def test_corrupted_operator_table_is_a_clear_error():
    data = bytearray(MODELS[0].read_bytes())
    # Overwrite the root table offset so every table lookup lands in garbage.
    data[0:4] = (len(data) - 2).to_bytes(4, "little")
    with pytest.raises(TFLiteImportError):
        import_tflite(bytes(data))


def test_loader_reports_missing_file(tmp_path: Path):
    with pytest.raises(LoadError, match="cannot read"):
        load_module(tmp_path / "missing.tflite")


def test_loader_names_file_on_import_error(tmp_path: Path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\0" * 64)
    with pytest.raises(LoadError, match=r"bad\.tflite: not a TFLite file"):
        load_module(bad)


def test_operator_census_of_models():
    census = Counter()
    for path in MODELS:
        census.update(nn_op_names(import_tflite(path.read_bytes())))
    assert set(census) == set(EXPECTED_OP.values())
