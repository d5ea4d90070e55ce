"""cascade-bench on resnet8 (ethos-u55-128): its files exist and parse, and its numbers agree
with sources it does not compute: Vela's own summary CSVs, the stored Vela baseline, and the
allocated IR that `cascade-opt` prints."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "test" / "models" / "resnet8.tflite"
ACCELERATOR = "ethos-u55-128"
TAG = "ethos_u55_128"
BASELINE = ROOT / "benchmarks" / "models" / "vela_baseline_u55_128.json"
SCRIPT = ROOT / "benchmarks" / "cascade_bench.py"


def _bench(out: Path, kept: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPT), str(MODEL), "--accelerator", ACCELERATOR, "--out", str(out)]
    command += ["--repeat", "1"]  # timing is not what these tests check
    return subprocess.run([*command, "--vela-output", str(kept)], capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("bench")
    kept = tmp_path_factory.mktemp("kept")
    done = _bench(out, kept)
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr
    document = json.loads((out / f"bench_{TAG}.json").read_text())
    return out, kept, document


def _row(document: dict[str, Any]) -> dict[str, Any]:
    (row,) = document["models"]
    assert row["model"] == "resnet8"
    return row


def test_files_exist_and_parse(bench: tuple[Path, Path, dict[str, Any]]) -> None:
    out, _, document = bench
    assert document["accelerator"] == ACCELERATOR
    markdown = (out / f"bench_{TAG}.md").read_text()
    table = [line for line in markdown.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 2  # header, rule, two rows for one model
    assert all(line.count("|") == table[0].count("|") for line in table)
    assert "| resnet8 |" in markdown
    for kind in ("occupancy", "pareto", "stripes"):
        root = ET.parse(out / f"bench_{TAG}_resnet8_{kind}.svg").getroot()
        assert root.tag.endswith("svg")
        # Shapes were drawn, not just axes.
        assert len(list(root.iter("{http://www.w3.org/2000/svg}path"))) > 10


def test_startup_is_both_compilers_on_the_one_operator_model(bench: tuple[Path, Path, dict[str, Any]]) -> None:
    from cascade.benchmarks.cascade_bench import STARTUP_MODEL

    out, kept, document = bench
    startup = document["startup"]
    assert startup["model"] == STARTUP_MODEL
    assert startup["vela_seconds"] > 0
    assert startup["ours_seconds"] > 0
    # Vela compiled the start-up model itself: its summary is of a one-convolution network.
    (path,) = (kept / ACCELERATOR / "startup" / "vela").glob("startup_summary_*.csv")
    assert float(_summary(path)["nn_macs"]) == 8 * 8 * 8 * 8
    assert (kept / ACCELERATOR / "startup" / "ours" / "out.tflite").stat().st_size > 0
    # The Markdown's start-up line gives both times, then the range of Vela's compiles of the models.
    (line,) = [line for line in (out / f"bench_{TAG}.md").read_text().splitlines() if line.startswith("Start-up:")]
    assert STARTUP_MODEL in line
    seconds = [float(value) for value in re.findall(r"\d+\.\d+", line)]
    vela = [run["compile_seconds"] for run in _row(document)["vela"].values()]
    expected = [startup["vela_seconds"], startup["ours_seconds"], min(vela), max(vela)]
    assert seconds == pytest.approx(expected, abs=0.0051)  # shown to two decimals


def test_the_startup_model_is_one_convolution_that_runs_as_tflite_runs_it(tmp_path: Path) -> None:
    pytest.importorskip("ai_edge_litert")
    import numpy as np

    from cascade.benchmarks.cascade_bench import write_startup_model
    from cascade.dialects import nn
    from cascade.frontends.tflite import import_tflite
    from cascade.interpreter.litert import invoke
    from cascade.interpreter.nn import run_program

    path = tmp_path / "startup.tflite"
    write_startup_model(path)
    module = import_tflite(path.read_bytes())
    (conv,) = [op for op in module.walk() if isinstance(op, nn.NNOperation)]
    assert isinstance(conv, nn.Conv2DOp)
    image = np.random.default_rng(3).integers(-128, 128, size=(1, 8, 8, 8), dtype=np.int8)
    (ours,) = run_program(module, [image]).outputs
    (theirs,) = invoke(path.read_bytes(), [image]).outputs
    assert len(np.unique(ours)) > 16
    np.testing.assert_array_equal(ours, theirs)


def _summary(path: Path) -> dict[str, str]:
    with open(path, encoding="utf-8", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    return row


def test_vela_figures_are_vela_s(bench: tuple[Path, Path, dict[str, Any]]) -> None:
    _, kept, document = bench
    row = _row(document)
    baseline = {
        entry["config"]: entry
        for entry in json.loads(BASELINE.read_text())
        if entry["model"] == "resnet8" and entry["acc"] == ACCELERATOR
    }
    for config, directory, stored in (("default", "vela-default", "perf"), ("size", "vela-size", "size")):
        vela = row["vela"][config]
        (path,) = (kept / ACCELERATOR / "resnet8" / directory).glob("resnet8_summary_*.csv")
        summary = _summary(path)
        assert vela["peak_sram_bytes"] == round(float(summary["sram_memory_used"]) * 1024)
        assert vela["total_cycles"] == round(float(summary["cycles_total"]))
        assert vela["sram_bytes_accessed"] == round(float(summary["sram_total_bytes"]))
        # The stored baseline was made with the same Vela and configuration: within 1 %.
        assert vela["peak_sram_bytes"] == pytest.approx(baseline[stored]["sram_kib"] * 1024, rel=0.01)
        assert vela["total_cycles"] == pytest.approx(baseline[stored]["cycles_total"], rel=0.01)
        assert vela["compile_seconds"] > 0


def _allocated_peak(budget: int | None) -> int:
    options = f"accelerator={ACCELERATOR}" + (f" sram-budget={budget}" if budget is not None else "")
    pipeline = f"cascade-plan{{{options}}},rolling-buffer,allocate-memory{{accelerator={ACCELERATOR}}}"
    command = [str(Path(sys.executable).with_name("cascade-opt")), str(MODEL), "-p", pipeline]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    (peak,) = re.findall(r"cascade\.allocated_peak_bytes = (\d+)", done.stdout)
    return int(peak)


def test_our_peaks_are_the_allocated_ir_s(bench: tuple[Path, Path, dict[str, Any]]) -> None:
    row = _row(bench[2])
    size_budget = row["vela"]["size"]["peak_sram_bytes"]
    assert row["ours"]["at_vela_size"]["sram_budget"] == size_budget
    assert row["ours"]["default"]["peak_sram_bytes"] == _allocated_peak(None)
    assert row["ours"]["at_vela_size"]["peak_sram_bytes"] == _allocated_peak(size_budget)
    assert row["ours"]["at_vela_size"]["peak_sram_bytes"] <= size_budget


def test_ratios_and_goals(bench: tuple[Path, Path, dict[str, Any]]) -> None:
    row = _row(bench[2])
    ours, vela = row["ours"]["at_vela_size"], row["vela"]
    sram = ours["peak_sram_bytes"] / vela["size"]["peak_sram_bytes"]
    cycles = ours["total_cycles"] / vela["default"]["total_cycles"]
    assert row["ratios"]["at_size_sram_vs_vela_size"] == pytest.approx(sram, abs=1e-4)
    assert row["ratios"]["at_size_cycles_vs_vela_default"] == pytest.approx(cycles, abs=1e-4)
    assert row["goals"]["sram_and_cycles"] == (sram <= 1 and cycles <= 1.05)
    compile_ratio = ours["compile_seconds"] / vela["size"]["compile_seconds"]
    assert row["ratios"]["at_size_compile_vs_vela_size"] == pytest.approx(compile_ratio, rel=0.01)


def test_svgs_are_deterministic(bench: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    out = bench[0]
    assert _bench(tmp_path / "again", tmp_path / "kept").returncode == 0
    for kind in ("occupancy", "pareto", "stripes"):
        name = f"bench_{TAG}_resnet8_{kind}.svg"
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes(), name


def test_bad_model_is_one_error_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "missing.tflite"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: ")
    assert "missing.tflite" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_timed_compiles_run_in_turn_and_count_their_fastest_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cascade.benchmarks.cascade_bench as bench

    # Scripted wall times: the second round is Vela's slow spell, the first ours. Our compile
    # without a budget fails.
    seconds = {
        "vela Performance": [0.3, 0.9, 0.4],
        "vela Size": [0.2, 0.8, 0.25],
        "ours 4096": [3.0, 1.2, 1.1],
    }
    order = []

    def run_vela(model: Path, accelerator: str, optimise: str, out: Path) -> bench.VelaRun:
        order.append(f"vela {optimise}")
        return bench.VelaRun(4096, 100, 90, 10, 20, seconds[f"vela {optimise}"].pop(0), "summary.csv")

    def compile_ours(model, accelerator, budget, out, features):
        order.append(f"ours {budget}")
        if budget is None:
            raise bench.BenchError("resnet8.tflite: cascade-opt (no budget): it broke")
        return seconds[f"ours {budget}"].pop(0), {"round": 3 - len(seconds[f"ours {budget}"])}

    monkeypatch.setattr(bench, "run_vela", run_vela)
    monkeypatch.setattr(bench, "compile_ours", compile_ours)
    vela, timed, failures = bench._timed_compiles(tmp_path / "m.tflite", "ethos-u55-128", tmp_path, (True, True), 3)
    one_round = ["vela Performance", "vela Size", "ours None", "ours 4096"]
    # A failed compile is not run again; the others run in turn, round after round.
    without_failed = [name for name in one_round if name != "ours None"]
    assert order == one_round + without_failed + without_failed
    assert vela["default"].compile_seconds == 0.3
    assert vela["size"].compile_seconds == 0.2
    assert timed == {"at_vela_size": (1.1, {"round": 3})}
    assert failures == {"default": "resnet8.tflite: cascade-opt (no budget): it broke"}


def test_repeat_must_be_positive(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(MODEL), "--out", str(tmp_path), "--repeat", "0"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == "error: --repeat must be at least 1, not 0"
