"""Determinism: compiling the same model twice gives byte-identical output.

Each tool runs twice as a separate process (so nothing cached in one process hides an
iteration order that depends on hashing or addresses) on every shared model, and the two
outputs must be equal byte for byte: the printed IR, every file a pass writes (plan reports,
with timing fields removed), the cycle estimate and its CSV.

To cover a new pipeline (rolling-buffer, lowering, the command stream...), add one `Pipeline`
to `PIPELINES`: its cascade-opt arguments, the files it writes (named by `{out}` in the
arguments) and, if it is too slow for the ImageNet-size models, `large_models=False`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted([*(ROOT / "test" / "models").glob("*.tflite"), *(ROOT / "benchmarks" / "models").glob("*.tflite")])
LARGE = {path for path in MODELS if path.parent.name == "models" and path.parent.parent.name == "benchmarks"}

TIMING_KEYS = ("seconds", "time", "elapsed", "duration")
"""A key of a JSON report containing one of these is a measurement of this run, not output."""


@dataclass(frozen=True)
class Pipeline:
    """A cascade-opt command: extra arguments, and the files (`{out}/<name>`) it writes."""

    name: str
    args: tuple[str, ...]
    files: tuple[str, ...] = ()
    large_models: bool = True
    summary: bool = False
    """It prints a compile summary on stderr (with its time), which is not compared."""


PIPELINES = (
    Pipeline("import", ()),
    # Both printer options in one run: generic form with every location (custom form with
    # locations is what the plan pipeline prints).
    Pipeline("import-generic-debuginfo", ("--print-op-generic", "--print-debuginfo")),
    # Planning the ImageNet-size models takes 10 s and more each: the test models cover it.
    Pipeline("plan", ("--print-debuginfo", '--cascade-plan=report="{out}/plan.json"'), ("plan.json",), False),
    # The NPU command stream (Vela's register words). Row striping: the default plan of
    # mbv2_035_96 has rolling buffers along the width, which lower-to-ethosu does not lower yet.
    Pipeline(
        "command-stream",
        ("-p", "cascade-plan{striping=h},rolling-buffer,allocate-memory,lower-to-ethosu", "-t", "ethosu-cs"),
        large_models=False,
    ),
    # The deployable .tflite (written to stdout, which is not a terminal) and the compile report.
    Pipeline(
        "tflite-and-report",
        ("-p", "ethosu-pipeline{accelerator=ethos-u55-128}", "-t", "ethosu-tflite", "--report", "{out}/report.json"),
        ("report.json",),
        large_models=False,
        summary=True,
    ),
)


def _run(tool: str, args: list[str]) -> subprocess.CompletedProcess[bytes]:
    module = {"cascade-opt": "cascade_opt", "cascade-estimate": "cascade_estimate"}[tool]
    return subprocess.run(
        [sys.executable, "-m", f"cascade.tools.{module}", *args], capture_output=True, check=False, cwd=ROOT
    )


def _without_timings(document: Any) -> Any:
    if isinstance(document, dict):
        return {
            key: _without_timings(value)
            for key, value in document.items()
            if not any(word in key.lower() for word in TIMING_KEYS)
        }
    if isinstance(document, list):
        return [_without_timings(value) for value in document]
    return document


def _written(path: Path) -> bytes:
    if path.suffix == ".json":
        return json.dumps(_without_timings(json.loads(path.read_text())), sort_keys=False).encode()
    return path.read_bytes()


def _cases() -> list[Any]:
    return [
        pytest.param(model, pipeline, id=f"{pipeline.name}-{model.stem}")
        for pipeline in PIPELINES
        for model in MODELS
        if pipeline.large_models or model not in LARGE
    ]


@pytest.mark.parametrize(("model", "pipeline"), _cases())
def test_cascade_opt_twice_gives_identical_bytes(model: Path, pipeline: Pipeline, tmp_path: Path) -> None:
    outputs = []
    for run in ("first", "second"):
        out = tmp_path / run
        out.mkdir()
        args = [str(model), *(arg.replace("{out}", str(out)) for arg in pipeline.args)]
        result = _run("cascade-opt", args)
        assert result.returncode == 0, result.stderr.decode()
        assert pipeline.summary or result.stderr == b""
        outputs.append((result.stdout, [_written(out / name) for name in pipeline.files]))
    (first_ir, first_files), (second_ir, second_files) = outputs
    assert first_ir, "no IR printed"
    assert first_ir == second_ir, f"{pipeline.name} of {model.name}: the printed IR differs between two runs"
    for name, first, second in zip(pipeline.files, first_files, second_files, strict=True):
        assert first == second, f"{pipeline.name} of {model.name}: {name} differs between two runs"


@pytest.mark.parametrize("model", MODELS, ids=lambda path: path.stem)
def test_cascade_estimate_twice_gives_identical_bytes(model: Path, tmp_path: Path) -> None:
    runs = []
    for run in ("first", "second"):
        table = tmp_path / f"{run}.csv"
        result = _run("cascade-estimate", [str(model), "--csv", str(table)])
        assert result.returncode == 0, result.stderr.decode()
        runs.append((result.stdout, table.read_bytes()))
    assert runs[0][0] == runs[1][0], f"the report of {model.name} differs between two runs"
    assert runs[0][1] == runs[1][1], f"the CSV of {model.name} differs between two runs"
