"""The network estimate and the cascade-estimate command."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest

from cascade.benchmarks.calibrate_cost_model import vela_binary
from cascade.ethos_u.arch import arch_config
from cascade.ethos_u.cost_model import EthosUCostModel
from cascade.ethos_u.estimate import estimate_model, estimate_program, place_feature_maps
from cascade.frontends.loader import load_module
from cascade.passes.planner.from_nn import program_from_module
from cascade.tools.cascade_estimate import main

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "test" / "models"
EXAMPLE = ROOT / "test" / "Inputs" / "example_nn.mlir"


def _vela_total(accelerator: str, model: str) -> int:
    """Vela 5.2.0's total cycles for `model` (default options), from the baseline in the repository."""
    family = accelerator.removeprefix("ethos-").replace("-", "_")
    rows = json.loads((ROOT / "benchmarks" / "models" / f"vela_baseline_{family}.json").read_text())
    return next(r["cycles_total"] for r in rows if r["model"] == model and r["config"] == "perf")


@pytest.mark.parametrize("accelerator", ["ethos-u55-128", "ethos-u65-256"])
def test_resnet8_total_close_to_vela(accelerator: str) -> None:
    estimate = estimate_model(MODELS / "resnet8.tflite", accelerator)
    vela = _vela_total(accelerator, "resnet8")
    assert abs(estimate.total_cycles - vela) <= 0.10 * vela
    assert [layer.kind for layer in estimate.layers][:4] == ["conv2d", "conv2d", "conv2d", "add"]
    assert all(layer.target == "NPU" for layer in estimate.layers)
    # MACs are the network's: resnet8 does 12.5 M.
    assert estimate.total_macs == 12_501_632


def test_weights_are_buffered_or_streamed() -> None:
    estimate = estimate_model(MODELS / "resnet8.tflite", "ethos-u55-128")
    modes = {layer.weights for layer in estimate.layers}
    assert "-" in modes  # the adds
    assert "streamed" in modes
    assert modes & {"buffered", "double-buffered"}
    streamed_only = estimate_model(MODELS / "resnet8.tflite", "ethos-u55-128", weight_buffering=False)
    assert {layer.weights for layer in streamed_only.layers} <= {"-", "streamed"}
    # Streaming re-reads weights from 1 B/cycle flash for every block row: slower.
    assert streamed_only.total_cycles > estimate.total_cycles


@pytest.mark.parametrize("model", ["ds_cnn_kws", "mbv2_035_96"])
def test_fully_connected_weights_encoded_as_vela_reads_them(model: str, tmp_path: Path) -> None:
    # Vela runs a fully connected layer on the NPU, so its weights are read as the encoded
    # stream: the estimate's flash bytes for the layer are Vela's own, byte for byte (raw int8
    # would be 896 and 12,912 bytes against Vela's 1,040 and 15,424).
    command = [vela_binary(), str(MODELS / f"{model}.tflite"), "--accelerator-config", "ethos-u55-128"]
    subprocess.run([*command, "--verbose-performance", "--output-dir", str(tmp_path)], capture_output=True, check=True)
    with open(tmp_path / f"{model}_per-layer.csv", encoding="utf-8") as handle:
        vela_fc = next(row for row in csv.DictReader(handle) if row["NNG Operator"] == "FullyConnected")
    estimate = estimate_model(MODELS / f"{model}.tflite", "ethos-u55-128")
    (ours,) = [layer for layer in estimate.layers if layer.kind == "fully_connected"]
    assert ours.target == "NPU"
    assert ours.bytes_by_memory[estimate.arch.const_memory.name] == int(vela_fc["OffFlash AC"]) > 1000


def test_dedicated_sram_places_feature_maps() -> None:
    program = program_from_module(load_module(MODELS / "mbv2_035_96.tflite"))
    arch = arch_config("ethos-u65-256")
    model = EthosUCostModel(arch)
    steps = len(program.ops)
    # With a roomy cache every intermediate moves to SRAM; with none, nothing does.
    everything = place_feature_maps(program, model, [0] * steps, 1 << 30)
    assert len(everything) == len([op for op in program.ops if op.output.name not in program.graph_outputs])
    assert place_feature_maps(program, model, [0] * steps, 0) == set()
    # 48x48x16 int8 maps are 36 KiB: a 40 KiB cache holds some tensors but not all.
    some = place_feature_maps(program, model, [0] * steps, 40 * 1024)
    assert 0 < len(some) < len(everything)


def test_estimate_is_deterministic() -> None:
    program = program_from_module(load_module(MODELS / "ds_cnn_kws.tflite"))
    arch = arch_config("ethos-u65-256")
    first = estimate_program(program, arch)
    second = estimate_program(program, arch)
    assert [(layer.cycles, layer.bytes_by_memory) for layer in first.layers] == [
        (layer.cycles, layer.bytes_by_memory) for layer in second.layers
    ]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


def test_cli_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    table = tmp_path / "layers.csv"
    status, out, err = run_cli([str(EXAMPLE), "--accelerator", "ethos-u55-128", "--csv", str(table)], capsys)
    assert status == 0
    assert err == ""
    lines = out.splitlines()
    assert lines[1] == "accelerator: ethos-u55-128"
    assert lines[2] == "system config: Ethos_U55_High_End_Embedded (500 MHz)"
    assert lines[-1].startswith("total_cycles: ")
    total = int(lines[-1].split()[-1])
    rows = table.read_text().splitlines()
    assert rows[0].startswith("#,operator,target,cycles,npu_cycles,macs,SRAM_bytes,OffFlash_bytes")
    assert len(rows) == 1 + 4  # conv, depthwise, conv, pool
    assert sum(int(row.split(",")[3]) for row in rows[1:]) == total
    # The same command prints the same report.
    assert run_cli([str(EXAMPLE), "--accelerator", "ethos-u55-128"], capsys)[1] == out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--accelerator", "ethos-u99"], "cascade-estimate: error: unknown accelerator 'ethos-u99'"),
        (["--system-config", "Nope"], "cascade-estimate: error: unknown system config 'Nope'"),
        (["--memory-mode", "Nope"], "cascade-estimate: error: unknown memory mode 'Nope'"),
        (["--no-such-flag"], "cascade-estimate: error: unrecognized arguments: --no-such-flag"),
    ],
)
def test_cli_bad_names(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli([str(EXAMPLE), *args], capsys)
    assert status == 1
    assert out == ""
    assert err.startswith(message)
    assert len(err.strip().splitlines()) == 1


def test_cli_unreadable_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "missing.tflite"
    status, _, err = run_cli([str(missing)], capsys)
    assert status == 1
    assert err.strip() == f"cascade-estimate: error: {missing}: cannot read: No such file or directory"
    garbage = tmp_path / "garbage.tflite"
    garbage.write_bytes(b"not a flatbuffer")
    status, _, err = run_cli([str(garbage)], capsys)
    assert status == 1
    assert err.startswith("cascade-estimate: error: ")
    assert len(err.strip().splitlines()) == 1
    broken = tmp_path / "broken.mlir"
    broken.write_text("garbage\n")
    status, _, err = run_cli([str(broken)], capsys)
    assert status == 1
    # The parser's location, source line and caret collapse to `file:line:col: message`.
    assert err.strip() == f"cascade-estimate: error: {broken}:2:1: Operation garbage is not registered"
