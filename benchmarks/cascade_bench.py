"""cascade-bench: our whole pipeline against Vela 5.2.0, side by side, with tables and pictures.

    cascade-bench --accelerator ethos-u55-128                      # every repository model
    cascade-bench test/models/resnet8.tflite --accelerator ethos-u65-256 --out /tmp/bench
    python benchmarks/cascade_bench.py --accelerator ethos-u55-128  # the same, from a checkout

For every model, in one run and on one machine (ratios, not seconds, are what compare):

* Vela twice, as a subprocess each (whole-process time): default (`--optimise Performance`)
  and `--optimise Size`, with the accelerator's default system config and memory mode passed
  explicitly (`ethos_u.arch`); its summary CSV gives peak SRAM, cycles and traffic, and an
  untimed run of each with `--enable-debug-db` gives its number of cascades.
* Ours twice, `cascade-opt M -p 'ethosu-pipeline{...}'` as a subprocess each (whole-process
  time, to a deployable .tflite and `--report` when cascade-opt has them, else to `-t
  ethosu-cs`): with no budget (our default objective) and with `sram-budget` = Vela Size's
  peak, the row the goals are judged on. When cascade-opt writes no report, the report
  numbers come from the same plan made here (untimed) through the same schema.

Every timed compile runs `--repeat` times (default 3) and its fastest time counts, for both
compilers alike (as `timeit` does): on a shared machine, a slower run measures the neighbours.
The four timed compiles of a model run in turn, round after round, so that a slow spell slows
both compilers alike. Outputs are deterministic, so the runs differ in time only.

Goals (issue #8): at Vela Size's budget, peak SRAM <= Vela Size and total cycles <= 1.05 x
Vela default; compile time <= 3 x Vela's (ours without a budget against Vela default, ours at
the Size budget against Vela Size).

Start-up: after the models, both compilers compile a one-operator model (`write_startup_model`,
a 1x1 convolution on 8x8x8 int8) in turn, the fastest of `--repeat` runs each. What that takes
is the floor under every compile of the table: starting Python, importing what a compile needs
(for Vela its own modules and its C++ core, for us xDSL, numpy and Vela's API besides ours),
reading the model and writing the output. The tables give it under the goals line.

Written to `--out` (default `benchmarks/results`): `bench_<accelerator>.json` and `.md`, and
per model three SVGs: `_occupancy` (the SRAM buffers of the allocated plan at Vela Size's
budget, as rectangles at their offsets over the schedule's steps, from `passes.memory_check`),
`_pareto` (our front of placed peak against cycles, our two plans, Vela's two points, the
lower bound) and `_stripes` (for each multi-operator cascade, the rows each operator computes
at each stripe). SVGs are byte-identical across runs.

Our traffic, per the cost model: every computed box of the plan priced with its operands in
SRAM (or in the DRAM arena where the plan spills them, on U65 Dedicated_Sram) and weights read
from SRAM or their home memory, plus one copy of SRAM-resident weights. `flash_bytes_read`
counts the off-chip memory (flash on U55 Shared_Sram; DRAM on U65 Dedicated_Sram, spilled
feature maps included), as Vela's `off_chip_flash_total_bytes + dram_total_bytes`.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cascade.benchmarks.calibrate_cost_model import vela_command, vela_configuration, vela_debug_tables

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MODELS = (
    "test/models/ds_cnn_kws.tflite",
    "test/models/ds_cnn_kws_nosoftmax.tflite",
    "test/models/mbv1_025_96.tflite",
    "test/models/mbv2_035_96.tflite",
    "test/models/resnet8.tflite",
    "test/models/resnet8_nosoftmax.tflite",
    "benchmarks/models/mbv1_100_224.tflite",
    "benchmarks/models/mbv2_100_224.tflite",
)
DEFAULT_OUT = ROOT / "benchmarks" / "results"
CYCLES_TOLERANCE = 0.05
COMPILE_TIME_FACTOR = 3.0
SVG_SALT = "cascade-bench"


class BenchError(Exception):
    """A step of the benchmark failed; the message is one line naming the model and tool."""


# --------------------------------------------------------------------------- #
# Vela
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class VelaRun:
    """One Vela compile, as its summary CSV reports it."""

    peak_sram_bytes: int
    total_cycles: int
    npu_cycles: int
    flash_bytes_read: int
    sram_bytes_accessed: int
    compile_seconds: float
    summary_csv: str

    def as_json(self) -> dict[str, Any]:
        return {
            "peak_sram_bytes": self.peak_sram_bytes,
            "total_cycles": self.total_cycles,
            "npu_cycles": self.npu_cycles,
            "flash_bytes_read": self.flash_bytes_read,
            "sram_bytes_accessed": self.sram_bytes_accessed,
            "compile_seconds": round(self.compile_seconds, 3),
            "summary_csv": self.summary_csv,
        }


def read_vela_summary(path: Path) -> dict[str, str]:
    """The single row of a Vela `*_summary_*.csv`."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if len(rows) != 1:
        raise BenchError(f"{path}: expected one summary row, found {len(rows)}")
    return rows[0]


def _summary_run(summary: dict[str, str], seconds: float, path: Path) -> VelaRun:
    def number(key: str) -> float:
        return float(summary.get(key) or 0)

    return VelaRun(
        peak_sram_bytes=round(number("sram_memory_used") * 1024),
        total_cycles=round(number("cycles_total")),
        npu_cycles=round(number("cycles_npu")),
        flash_bytes_read=round(number("off_chip_flash_total_bytes") + number("dram_total_bytes")),
        sram_bytes_accessed=round(number("sram_total_bytes")),
        compile_seconds=seconds,
        summary_csv=path.name,
    )


def _run(command: Sequence[str], what: str, environment: dict[str, str] | None = None) -> float:
    """Run `command` (in `environment`, default this one's); its whole-process wall time in
    seconds. Failure: a BenchError."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=environment)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        reason = next((line for line in lines if line.startswith("error:")), lines[-1] if lines else "no output")
        raise BenchError(f"{what}: {reason.removeprefix('error: ')}")
    return seconds


def run_vela(model: Path, accelerator: str, optimise: str, out: Path) -> VelaRun:
    """Compile `model` with Vela (`optimise`: Performance or Size) into `out`, timed."""
    system, memory = vela_configuration(accelerator)
    out.mkdir(parents=True, exist_ok=True)
    command = vela_command(model, accelerator, system, memory, out, "--optimise", optimise)
    seconds = _run(command, f"{model.name}: vela --optimise {optimise}")
    summaries = sorted(out.glob(f"{model.stem}_summary_*.csv"))
    if not summaries:
        raise BenchError(f"{model.name}: vela wrote no summary CSV in {out}")
    return _summary_run(read_vela_summary(summaries[0]), seconds, summaries[0])


def vela_cascades(model: Path, accelerator: str, optimise: str, out: Path) -> int:
    """Vela's cascades of two or more operations (untimed run with its debug database)."""
    system, memory = vela_configuration(accelerator)
    out.mkdir(parents=True, exist_ok=True)
    command = vela_command(model, accelerator, system, memory, out, "--optimise", optimise, "--enable-debug-db")
    _run(command, f"{model.name}: vela --enable-debug-db")
    tables = vela_debug_tables(out / f"{model.stem}_debug.xml")
    members: dict[str, int] = {}
    for row in tables.get("perf_debug", []):
        cascade = row.get("cascade", "0")
        if cascade not in ("", "0"):
            members[cascade] = members.get(cascade, 0) + 1
    return sum(1 for count in members.values() if count > 1)


# --------------------------------------------------------------------------- #
# Ours
# --------------------------------------------------------------------------- #


def cascade_opt_features() -> tuple[bool, bool]:
    """(has the `ethosu-tflite` target, has `--report`), from `cascade-opt --help`."""
    done = subprocess.run([_cascade_opt(), "--help"], capture_output=True, text=True, check=False)
    text = done.stdout
    return "ethosu-tflite" in text, "--report" in text


def _cascade_opt() -> str:
    found = shutil.which("cascade-opt") or str(Path(sys.executable).with_name("cascade-opt"))
    if not Path(found).exists():
        raise BenchError("cannot find the `cascade-opt` command (pip install -e .)")
    return found


def compile_ours(
    model: Path,
    accelerator: str,
    budget: int | None,
    out: Path,
    features: tuple[bool, bool],
    environment: dict[str, str] | None = None,
) -> tuple[float, dict[str, Any] | None]:
    """Compile `model` with `cascade-opt`'s whole pipeline in a subprocess (in `environment`,
    default this one's): its wall time, and its report when cascade-opt writes one."""
    system, memory = vela_configuration(accelerator)
    options = f"accelerator={accelerator} system-config={system} memory-mode={memory}"
    if budget is not None:
        options += f" sram-budget={budget}"
    out.mkdir(parents=True, exist_ok=True)
    has_tflite, has_report = features
    command = [_cascade_opt(), str(model), "-p", f"ethosu-pipeline{{{options}}}"]
    command += ["-t", "ethosu-tflite", "-o", str(out / "out.tflite")] if has_tflite else []
    command += [] if has_tflite else ["-t", "ethosu-cs", "-o", str(out / "out.txt")]
    report_path = out / "report.json"
    command += ["--report", str(report_path)] if has_report else []
    budget_text = "no budget" if budget is None else f"sram-budget={budget}"
    seconds = _run(command, f"{model.name}: cascade-opt ({budget_text})", environment)
    report = json.loads(report_path.read_text()) if has_report and report_path.exists() else None
    return seconds, report


@dataclass
class PlanArtifacts:
    """What the pictures need from one of our plans."""

    report: dict[str, Any]
    front: list[dict[str, int]]
    buffers: list[dict[str, Any]]
    """Allocated SRAM buffers: kind, offset, size, first and last step."""
    steps: int
    cascades: list[dict[str, Any]]
    """Multi-operator cascades: per operator its kind, mode and computed rows per stripe."""


def plan_ours(model: Path, accelerator: str, budget: int | None) -> PlanArtifacts:
    """Plan, buffer, allocate and lower `model` here (as ethosu-pipeline does), and gather the
    report numbers and the pictures' data. Untimed."""
    from xdsl.utils.exceptions import DiagnosticException

    from cascade.dialects import ethosu, nn
    from cascade.frontends.loader import LoadError, load_module, make_context
    from cascade.passes.allocate_memory import AllocateMemoryPass
    from cascade.passes.cascade_plan import CascadePlanPass, emit_plan, planner_cost_model, scheduled_program
    from cascade.passes.ethosu_pipeline import EthosUPipelinePass
    from cascade.passes.lower_to_ethosu import LowerToEthosUPass
    from cascade.passes.memory_check import ALLOCATED_PEAK_ATTR, live_buffers
    from cascade.passes.planner.plan import PlanningError, plan_program
    from cascade.passes.rolling_buffer import RollingBufferPass

    try:
        module = load_module(model)
    except LoadError as error:
        raise BenchError(str(error)) from None
    ctx = make_context()
    function = next(op for op in module.ops if getattr(op, "sym_name", None) is not None)
    scheduled = scheduled_program(function)  # type: ignore[arg-type]
    system, memory = vela_configuration(accelerator)
    # The options of the plan the compile makes; the whole front, for the Pareto picture.
    pipeline = EthosUPipelinePass(accelerator=accelerator, sram_budget=budget, system_config=system, memory_mode=memory)
    planning = next(stage for stage in pipeline.stages() if isinstance(stage, CascadePlanPass))
    options = replace(planning.plan_options(), whole_front=True)
    cost = planner_cost_model(accelerator, scheduled.program, system_config=system, memory_mode=memory)
    try:
        result = plan_program(scheduled.program, cost, options)
    except PlanningError as error:
        raise BenchError(f"{model.name}: cascade-plan: {error}") from None
    emit_plan(function, scheduled.nn_ops, result)  # type: ignore[arg-type]
    RollingBufferPass().apply(ctx, module)
    AllocateMemoryPass(accelerator=accelerator).apply(ctx, module)
    buffers, _ = live_buffers(function)  # type: ignore[arg-type]
    peak = function.attributes[ALLOCATED_PEAK_ATTR].value.data  # type: ignore[union-attr]
    steps = 1 + max((b.last for b in buffers), default=0)
    try:
        LowerToEthosUPass(accelerator=accelerator).apply(ctx, module)
        streams = [op for op in module.walk() if isinstance(op, ethosu.CommandStreamOp)]
        npu_ops: int | None = sum(1 for s in streams for op in s.body.block.ops if not isinstance(op, ethosu.DmaOp))
        cpu_ops: int | None = sum(1 for op in module.walk() if isinstance(op, nn.NNOperation))
        stream_count: int | None = len(streams)
    except DiagnosticException:  # the subprocess reports the same failure
        npu_ops = cpu_ops = stream_count = None
    traffic, npu_cycles, per_op = _plan_costs(result, cost)
    report = {
        "tool": "cascade-opt",
        "version": _own_version(),
        "input": str(_display(model)),
        "accelerator": accelerator,
        "system_config": system,
        "memory_mode": memory,
        "peak_sram_bytes": peak,
        "lower_bound_bytes": result.lower_bound,
        "total_cycles": result.cycles,
        "npu_cycles": npu_cycles,
        "cpu_ops": cpu_ops,
        "flash_bytes_read": traffic["flash"],
        "sram_bytes_accessed": traffic["sram"],
        "cascades": result.multi_op_cascades,
        "npu_ops": npu_ops,
        "command_streams": stream_count,
        "per_op": per_op,
        "compile_seconds": None,
    }
    occupancy = [
        {"kind": b.kind, "offset": b.offset, "size": b.size, "first": b.first, "last": b.last} for b in buffers
    ]
    return PlanArtifacts(report, [p.as_json() for p in result.front], occupancy, steps, _stripe_rows(result))


def _own_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cascade-opt")
    except PackageNotFoundError:
        return "unknown"


def _display(path: Path) -> Path:
    resolved = path.resolve()
    return resolved.relative_to(ROOT) if resolved.is_relative_to(ROOT) else path


def _plan_costs(result: Any, cost: Any) -> tuple[dict[str, int], int, list[dict[str, Any]]]:
    """Traffic (off-chip, SRAM) and NPU cycles of the plan per the cost model, and the cycles
    of each operator as the plan counts it (exact stripe boxes, pipelined, fill and drain once)."""
    from cascade.dialects.access import Region
    from cascade.ethos_u.lowering import UnsupportedOpError
    from cascade.passes.planner.plan import describe_op
    from cascade.passes.planner.search import Pricer

    model = cost.inner
    arch = model.arch
    sram = arch.staging_memory
    pricer = Pricer(result.graph, cost, exact=True)
    traffic = {"flash": 0, "sram": 0}
    npu_cycles = 0
    per_op = []
    for index, cascade in enumerate(result.cascades):
        geometry = result.geometry(cascade) if cascade.size > 1 else None
        for op in range(cascade.first, cascade.sink + 1):
            info = result.graph.ops[op]
            spilled = result.spilled_operands(cascade, op)
            memories = model.memory_map(spilled)
            if geometry is None:  # alone: one box, the cycles the plan counted (slices included)
                boxes = [(Region.full(info.output.shape), 1)]
                cycles = float(cascade.cycles)
            else:
                boxes = geometry.price_boxes(op)
                cycles = float(pricer.once(op, cascade.weights_in_sram, spilled))
                cycles += sum(
                    count * pricer.box(op, r, cascade.weights_in_sram, pipelined=True, spilled=spilled)
                    for r, count in boxes
                )
            for region, count in boxes:
                try:
                    priced = model.region_cost(info, region, memories, cascade.weights_in_sram)
                except UnsupportedOpError:
                    continue
                npu_cycles += count * priced.npu_cycles
                for memory, amount in priced.bytes_by_memory().items():
                    traffic["sram" if memory == sram.name else "flash"] += count * amount
            if cascade.weights_in_sram:
                copied = model.weight_buffer_bytes(info)
                traffic["flash"] += copied
                traffic["sram"] += copied
            per_op.append(
                {"name": describe_op(result.graph, op), "op": info.kind, "cycles": round(cycles), "cascade": index}
            )
    return traffic, npu_cycles, per_op


def _stripe_rows(result: Any) -> list[dict[str, Any]]:
    """For each multi-operator cascade, each operator's computed rows (outer striped axis:
    rows, columns or channels; rows when unstriped) at every stripe, in execution order."""
    cascades = []
    for index, cascade in enumerate(result.cascades):
        if cascade.size < 2:
            continue
        geometry = result.geometry(cascade)
        axis = geometry.config.outer_axis or 1
        stripes = list(geometry.stripe_indices())
        ops = []
        for op in geometry.ops:
            rows = []
            for stripe in stripes:
                box = geometry.computed_box(op, stripe)
                rows.append(None if box is None else [box.offset[axis], box.offset[axis] + box.shape[axis] - 1])
            mode = "sink" if op == geometry.sink else "rolling" if geometry.is_rolling(op) else "recompute"
            ops.append(
                {
                    "kind": result.graph.ops[op].kind,
                    "mode": mode,
                    "extent": geometry.graph.output_shape(op)[axis],
                    "rows": rows,
                }
            )
        cascades.append(
            {
                "index": index,
                "stripes": geometry.config.describe(),
                "axis": {1: "rows", 2: "columns"}.get(axis, "channels"),
                "ops": ops,
            }
        )
    return cascades


# --------------------------------------------------------------------------- #
# One model
# --------------------------------------------------------------------------- #


def _our_variants(vela: dict[str, VelaRun]) -> tuple[tuple[str, int | None], ...]:
    """Our two compiles: (variant, SRAM budget), with no budget and at Vela Size's peak."""
    return (("default", None), ("at_vela_size", vela["size"].peak_sram_bytes))


def _timed_compiles(
    model: Path, accelerator: str, work: Path, features: tuple[bool, bool], repeat: int
) -> tuple[dict[str, VelaRun], dict[str, tuple[float, dict[str, Any] | None]], dict[str, str]]:
    """Vela's two compiles and our two, each the fastest of `repeat` runs: Vela's runs by
    option, ours by variant (seconds and report), and our variants' failures (a failed compile
    is not run again). The four run in turn, round after round, so that a slow spell of a
    shared machine (runs here slow down by a third to a half for seconds at a time) slows both
    compilers alike instead of all the runs of one of them."""
    vela: dict[str, VelaRun] = {}
    timed: dict[str, tuple[float, dict[str, Any] | None]] = {}
    failures: dict[str, str] = {}
    for _ in range(repeat):
        for name, optimise in (("default", "Performance"), ("size", "Size")):
            run = run_vela(model, accelerator, optimise, work / f"vela-{name}")
            if name in vela:
                run = replace(run, compile_seconds=min(run.compile_seconds, vela[name].compile_seconds))
            vela[name] = run
        for variant, budget in _our_variants(vela):
            if variant in failures:
                continue
            try:
                seconds, report = compile_ours(model, accelerator, budget, work / f"ours-{variant}", features)
            except BenchError as error:  # recorded: a compile that fails misses the goals
                failures[variant] = str(error)
                continue
            if variant in timed:
                seconds = min(seconds, timed[variant][0])
            timed[variant] = (seconds, report)
    return vela, timed, failures


def bench_model(
    model: Path,
    accelerator: str,
    scratch: Path,
    features: tuple[bool, bool],
    tick: Callable[[str], None],
    repeat: int = 1,
) -> tuple[dict[str, Any], dict[str, PlanArtifacts]]:
    """Both compilers on `model` (each compile timed as the fastest of `repeat` runs): the
    JSON row, and our plans' artifacts by variant."""
    work = scratch / model.stem
    tick(f"{model.stem}: timed compiles")
    vela, timed, failures = _timed_compiles(model, accelerator, work, features, repeat)
    vela_casc = {
        "default": vela_cascades(model, accelerator, "Performance", work / "vela-debug-default"),
        "size": vela_cascades(model, accelerator, "Size", work / "vela-debug-size"),
    }
    ours: dict[str, dict[str, Any]] = {}
    artifacts: dict[str, PlanArtifacts] = {}
    for variant, budget in _our_variants(vela):
        tick(f"{model.stem}: ours ({variant})")
        seconds, report = timed.get(variant, (None, None))
        failure = failures.get(variant)
        try:
            plan = plan_ours(model, accelerator, budget)
        except BenchError as error:  # no plan fits the budget
            ours[variant] = {"error": failure or str(error), "sram_budget": budget}
            continue
        report = dict(report or plan.report)
        report["compile_seconds"] = None if seconds is None else round(seconds, 3)
        report["sram_budget"] = budget
        if failure is not None:
            report["error"] = failure
        ours[variant] = report
        artifacts[variant] = plan
    if "default" not in artifacts:  # not even planned without a budget: a bad model
        raise BenchError(ours["default"]["error"])
    row = {
        "model": model.stem,
        "input": str(_display(model)),
        "vela": {name: run.as_json() for name, run in vela.items()},
        "vela_cascades": vela_casc,
        "ours": ours,
    }
    row["ratios"], row["goals"] = _judge(ours, vela)
    return row, artifacts


def _judge(
    ours: dict[str, dict[str, Any]], vela: dict[str, VelaRun]
) -> tuple[dict[str, float | None], dict[str, bool]]:
    def ratio(numerator: float | None, denominator: float) -> float | None:
        return None if numerator is None or not denominator else round(numerator / denominator, 4)

    default, at_size = ours["default"], ours.get("at_vela_size", {})
    ratios = {
        "default_sram_vs_vela_default": ratio(default.get("peak_sram_bytes"), vela["default"].peak_sram_bytes),
        "default_cycles_vs_vela_default": ratio(default.get("total_cycles"), vela["default"].total_cycles),
        "default_compile_vs_vela_default": ratio(default.get("compile_seconds"), vela["default"].compile_seconds),
        "at_size_sram_vs_vela_size": ratio(at_size.get("peak_sram_bytes"), vela["size"].peak_sram_bytes),
        "at_size_cycles_vs_vela_default": ratio(at_size.get("total_cycles"), vela["default"].total_cycles),
        "at_size_compile_vs_vela_size": ratio(at_size.get("compile_seconds"), vela["size"].compile_seconds),
    }

    def within(key: str, limit: float) -> bool:
        value = ratios[key]
        return value is not None and value <= limit

    goals = {
        "sram_and_cycles": "error" not in at_size
        and within("at_size_sram_vs_vela_size", 1.0)
        and within("at_size_cycles_vs_vela_default", 1 + CYCLES_TOLERANCE),
        "compile_time": within("default_compile_vs_vela_default", COMPILE_TIME_FACTOR)
        and within("at_size_compile_vs_vela_size", COMPILE_TIME_FACTOR),
    }
    return ratios, goals


# --------------------------------------------------------------------------- #
# Tables
# --------------------------------------------------------------------------- #


def _kib(value: float | None) -> str:
    return "-" if value is None else f"{value / 1024:.1f}"


def _mcycles(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e6:.3f}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def table_rows(rows: Sequence[dict[str, Any]]) -> list[list[str]]:
    """One line per model and our variant: header first."""
    header = [
        "model",
        "ours",
        "peak KiB ours",
        "Vela default",
        "Vela Size",
        "lower bound",
        "ours/Vela",
        "Mcycles ours",
        "Vela default",
        "ours/Vela",
        "flash KiB ours/Vela",
        "SRAM traffic KiB ours/Vela",
        "cascades ours/Vela",
        "compile s ours/Vela",
        "ours/Vela",
        "goals",
    ]
    lines = [header]
    # Per our variant: the Vela run it is compared with, and the ratio keys of its row.
    variants = (
        ("default", "no budget", "default", "default_sram_vs_vela_default", "default_cycles_vs_vela_default"),
        ("at_vela_size", "@ Vela Size", "size", "at_size_sram_vs_vela_size", "at_size_cycles_vs_vela_default"),
    )
    for row in rows:
        vela_default, vela_size = row["vela"]["default"], row["vela"]["size"]
        for variant, label, config, sram_key, cycles_key in variants:
            ours, vela = row["ours"].get(variant, {}), row["vela"][config]
            sram_ratio, cycles_ratio = row["ratios"][sram_key], row["ratios"][cycles_key]
            time_key = "default_compile_vs_vela_default" if config == "default" else "at_size_compile_vs_vela_size"
            time_ratio = row["ratios"][time_key]
            goals = "-"
            if variant == "at_vela_size":
                goals = " ".join(
                    f"{name} {'met' if row['goals'][key] else 'MISSED'}"
                    for key, name in (("sram_and_cycles", "SRAM+cycles"), ("compile_time", "time"))
                )
            if "error" in ours:
                failed = "compile failed" if "peak_sram_bytes" in ours else "no plan fits"
                goals = failed if variant == "default" else f"{failed}; {goals}"
            lines.append(
                [
                    row["model"] if variant == "default" else "",
                    label,
                    _kib(ours.get("peak_sram_bytes")),
                    _kib(vela_default["peak_sram_bytes"]),
                    _kib(vela_size["peak_sram_bytes"]),
                    _kib(ours.get("lower_bound_bytes")),
                    _ratio(sram_ratio),
                    _mcycles(ours.get("total_cycles")),
                    _mcycles(vela_default["total_cycles"]),
                    _ratio(cycles_ratio),
                    f"{_kib(ours.get('flash_bytes_read'))}/{_kib(vela['flash_bytes_read'])}",
                    f"{_kib(ours.get('sram_bytes_accessed'))}/{_kib(vela['sram_bytes_accessed'])}",
                    f"{ours.get('cascades', '-')}/{row['vela_cascades'][config]}",
                    f"{_seconds(ours.get('compile_seconds'))}/{_seconds(vela['compile_seconds'])}",
                    _ratio(time_ratio),
                    goals,
                ]
            )
    return lines


def markdown_table(rows: Sequence[dict[str, Any]], accelerator: str, startup: dict[str, Any] | None = None) -> str:
    """The table of `rows` with its goals line, and the start-up line when `startup` is given."""
    lines = table_rows(rows)
    system, memory = vela_configuration(accelerator)
    met = sum(row["goals"]["sram_and_cycles"] for row in rows)
    fast = sum(row["goals"]["compile_time"] for row in rows)
    text = [
        f"**{accelerator}** ({system}, {memory}); Vela 5.2.0. Ratios are ours / Vela; the compile ratio of "
        "the no-budget row is against Vela default, of the @ Vela Size row against Vela Size.",
        "",
        "| " + " | ".join(lines[0]) + " |",
        "|" + "|".join("---" if i < 2 else "---:" for i in range(len(lines[0]))) + "|",
    ]
    text += ["| " + " | ".join(line) + " |" for line in lines[1:]]
    text += [
        "",
        f"Goals: peak SRAM <= Vela Size with cycles <= {1 + CYCLES_TOLERANCE:.2f} x Vela default (at Vela Size's "
        f"budget): {met}/{len(rows)} models; compile time <= {COMPILE_TIME_FACTOR:g} x Vela: {fast}/{len(rows)}.",
    ]
    if startup is not None:
        text += ["", startup_line(startup, rows)]
    return "\n".join(text) + "\n"


def print_table(rows: Sequence[dict[str, Any]]) -> None:
    lines = table_rows(rows)
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for line in lines:
        print(
            "  ".join(
                cell.ljust(width) if i < 2 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(line, widths, strict=True))
            )
        )


# --------------------------------------------------------------------------- #
# Pictures
# --------------------------------------------------------------------------- #

_KIND_COLORS = {
    "input": "#8c8c8c",
    "tensor": "#4c72b0",
    "rolling": "#55a868",
    "recompute": "#dd8452",
    "weights": "#c44e52",
}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = SVG_SALT
    matplotlib.rcParams["svg.fonttype"] = "none"
    import matplotlib.pyplot as plt

    return plt


def _save(figure: Any, path: Path) -> None:
    figure.savefig(path, format="svg", metadata={"Date": None, "Creator": "cascade-bench"}, bbox_inches="tight")
    _pyplot().close(figure)


def occupancy_svg(plan: PlanArtifacts, title: str, vela_size: int, path: Path) -> None:
    """Buffers as rectangles: x the steps they live in, y their SRAM offsets."""
    plt = _pyplot()
    from matplotlib.patches import Patch, Rectangle

    figure, axes = plt.subplots(figsize=(10, 4.5))
    for buffer in sorted(plan.buffers, key=lambda b: (b["first"], b["offset"], b["kind"])):
        axes.add_patch(
            Rectangle(
                (buffer["first"], buffer["offset"] / 1024),
                buffer["last"] - buffer["first"] + 1,
                buffer["size"] / 1024,
                facecolor=_KIND_COLORS.get(buffer["kind"], "#999999"),
                edgecolor="black",
                linewidth=0.3,
                alpha=0.85,
            )
        )
    peak = plan.report["peak_sram_bytes"]
    axes.axhline(peak / 1024, color="black", linestyle="--", linewidth=0.8)
    axes.axhline(vela_size / 1024, color="#8172b3", linestyle=":", linewidth=1.2)
    axes.set_xlim(0, max(plan.steps, 1))
    axes.set_ylim(0, max(peak, vela_size) / 1024 * 1.08 or 1)
    axes.set_xlabel("step of the schedule (cascade or operator)")
    axes.set_ylabel("SRAM offset (KiB)")
    axes.set_title(title, fontsize=10)
    handles = [Patch(facecolor=color, label=kind) for kind, color in _KIND_COLORS.items()]
    handles += [
        plt.Line2D([], [], color="black", linestyle="--", label=f"our peak {peak / 1024:.1f} KiB"),
        plt.Line2D([], [], color="#8172b3", linestyle=":", label=f"Vela Size {vela_size / 1024:.1f} KiB"),
    ]
    axes.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(figure, path)


def pareto_svg(row: dict[str, Any], front: list[dict[str, int]], title: str, path: Path) -> None:
    """Our front (placed peak, cycles), our two plans, Vela's two points, the lower bound."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.5))
    points = sorted(front, key=lambda p: p["peak_sram_bytes"])
    axes.step(
        [p["peak_sram_bytes"] / 1024 for p in points],
        [p["cycles"] / 1e6 for p in points],
        where="post",
        color="#4c72b0",
        marker="o",
        markersize=3,
        linewidth=1,
        label="our Pareto front",
    )
    # (point, marker, size, colour, label): our two compiles, then Vela's two.
    singles = [
        (row["ours"].get("default", {}), "s", 50, "#55a868", "ours, no budget"),
        (row["ours"].get("at_vela_size", {}), "D", 50, "#55a868", "ours @ Vela Size budget"),
        (row["vela"]["default"], "^", 60, "#c44e52", "Vela default"),
        (row["vela"]["size"], "v", 60, "#c44e52", "Vela size"),
    ]
    for point, marker, size, colour, label in singles:
        if "peak_sram_bytes" in point:
            axes.scatter(
                point["peak_sram_bytes"] / 1024,
                point["total_cycles"] / 1e6,
                marker=marker,
                s=size,
                color=colour,
                label=label,
                zorder=3,
            )
    bound = row["ours"]["default"].get("lower_bound_bytes")
    if bound:
        axes.axvline(bound / 1024, color="gray", linestyle=":", linewidth=1, label="row-striping lower bound")
    axes.set_xlabel("peak SRAM (KiB)")
    axes.set_ylabel("total cycles (millions)")
    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=7)
    _save(figure, path)


def stripes_svg(plan: PlanArtifacts, title: str, path: Path) -> None:
    """Per multi-operator cascade: one lane per operator, the rows it computes at each stripe
    (rows as a fraction of its height, so operators of different sizes line up)."""
    plt = _pyplot()
    from matplotlib.patches import Rectangle

    cascades = plan.cascades
    if not cascades:
        figure, axes = plt.subplots(figsize=(6, 1.5))
        axes.axis("off")
        axes.text(0.5, 0.5, f"{title}\nno multi-operator cascades", ha="center", va="center")
        _save(figure, path)
        return
    columns = min(3, len(cascades))
    lines = math.ceil(len(cascades) / columns)
    figure, grid = plt.subplots(lines, columns, figsize=(5 * columns, 3.2 * lines), squeeze=False)
    colormap = plt.get_cmap("viridis")
    for axes, cascade in zip(grid.flat, cascades, strict=False):
        ops = cascade["ops"]
        count = max(len(op["rows"]) for op in ops)
        for lane, op in enumerate(reversed(ops)):
            for stripe, rows in enumerate(op["rows"]):
                if rows is None:
                    continue
                low, high = rows[0] / op["extent"], (rows[1] + 1) / op["extent"]
                axes.add_patch(
                    Rectangle(
                        (stripe, lane + 0.05 + 0.9 * low),
                        1,
                        0.9 * (high - low),
                        facecolor=colormap(stripe / max(count - 1, 1)),
                        edgecolor="black",
                        linewidth=0.2,
                    )
                )
        axes.set_xlim(0, count)
        axes.set_ylim(0, len(ops))
        axes.set_yticks([lane + 0.5 for lane in range(len(ops))])
        axes.set_yticklabels([f"{op['kind']} ({op['mode']})" for op in reversed(ops)], fontsize=6)
        axes.set_xlabel(f"stripe ({cascade['stripes']})", fontsize=7)
        axes.set_title(f"cascade {cascade['index']}: {cascade['axis']} computed per stripe", fontsize=8)
        axes.tick_params(axis="x", labelsize=6)
    for axes in list(grid.flat)[len(cascades) :]:
        axes.axis("off")
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    _save(figure, path)


# --------------------------------------------------------------------------- #
# Start-up
# --------------------------------------------------------------------------- #

STARTUP_MODEL = "a 1x1 convolution on 8x8x8 int8"


def write_startup_model(path: Path) -> None:
    """Write `path`: a .tflite of one operator (`STARTUP_MODEL`), so small that compiling it is
    all start-up: planning, lowering and encoding one 8x8 convolution take either compiler
    about a millisecond."""
    import numpy as np

    from cascade.frontends.tflite_writer import ModelBuilder, options

    rng = np.random.default_rng(8)
    builder = ModelBuilder()
    image = builder.add_tensor("image", [1, 8, 8, 8], "int8", scale=0.05, zero_point=-3)
    weights = rng.integers(-127, 128, size=(8, 1, 1, 8), dtype=np.int8)
    kernel = builder.add_tensor("conv/weights", [8, 1, 1, 8], "int8", scale=0.02, zero_point=0, data=weights)
    bias = rng.integers(-500, 500, size=8, dtype=np.int32)
    offsets = builder.add_tensor("conv/bias", [8], "int32", scale=0.001, zero_point=0, data=bias)
    result = builder.add_tensor("conv", [1, 8, 8, 8], "int8", scale=0.1, zero_point=2)
    builder.add_operator(
        "CONV_2D",
        [image, kernel, offsets],
        [result],
        options("Conv2DOptions", padding="VALID", stride_w=1, stride_h=1),
        version=3,
    )
    path.write_bytes(builder.build([image], [result], description="cascade-bench start-up model"))


def startup_seconds(accelerator: str, work: Path, features: tuple[bool, bool], repeat: int) -> dict[str, Any]:
    """Both compilers on the start-up model (Vela default, ours without a budget), in turn
    round after round as `_timed_compiles` runs them, each the fastest of `repeat` runs."""
    work.mkdir(parents=True, exist_ok=True)
    model = work / "startup.tflite"
    write_startup_model(model)
    vela = ours = math.inf
    for _ in range(repeat):
        vela = min(vela, run_vela(model, accelerator, "Performance", work / "vela").compile_seconds)
        ours = min(ours, compile_ours(model, accelerator, None, work / "ours", features)[0])
    return {"model": STARTUP_MODEL, "vela_seconds": round(vela, 3), "ours_seconds": round(ours, 3)}


def startup_line(startup: dict[str, Any], rows: Sequence[dict[str, Any]]) -> str:
    """The start-up floor in one sentence, beside the range of Vela's compiles in `rows`."""
    vela = [run["compile_seconds"] for row in rows for run in row["vela"].values()]
    return (
        f"Start-up: on a one-operator model ({startup['model']}) Vela takes {startup['vela_seconds']:.2f} s and "
        f"ours {startup['ours_seconds']:.2f} s; Vela's compiles above take {min(vela):.2f} to {max(vela):.2f} s."
    )


# --------------------------------------------------------------------------- #
# Driver
# --------------------------------------------------------------------------- #


@contextmanager
def _progress(total: int) -> Iterator[Callable[[str], None]]:
    """A tqdm bar over the benchmark's stages on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield lambda _: None
        return
    from tqdm import tqdm

    with tqdm(total=total, unit="stage", leave=False, file=sys.stderr) as bar:

        def tick(stage: str) -> None:
            bar.set_description(stage)
            bar.update(1)

        yield tick


def _model_path(text: str) -> Path:
    path = Path(text)
    if path.suffix != ".tflite":
        for candidate in (
            ROOT / "test" / "models" / f"{text}.tflite",
            ROOT / "benchmarks" / "models" / f"{text}.tflite",
        ):
            if candidate.exists():
                return candidate
    if not path.exists():
        raise BenchError(f"{text}: no such model (give a .tflite path or a repository model name)")
    return path


def _warm_up(model: Path, accelerator: str, features: tuple[bool, bool]) -> None:
    """One untimed compile with each tool, so that the first timed one does not pay for cold
    caches (files not yet in the page cache, Python byte code missing or stale after an edit).

    The warm-up may write byte code even where PYTHONDONTWRITEBYTECODE is set: Vela runs from
    the byte code pip compiled when it installed the wheel, and without ours every timed
    cascade-opt would compile our modules from source again (0.15 s of a 0.55 s compile of
    ds_cnn_kws)."""
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="cascade-bench-warm-") as scratch:
        system, memory = vela_configuration(accelerator)
        subprocess.run(
            vela_command(model, accelerator, system, memory, Path(scratch)),
            capture_output=True,
            check=False,
            env=environment,
        )
        # The options the timed compiles use, so that the same modules are imported. A failure
        # shows in the timed compile.
        with suppress(BenchError):
            compile_ours(model, accelerator, None, Path(scratch) / "ours", features, environment)


def run_bench(
    models: Sequence[Path], accelerator: str, out: Path, vela_output: Path | None, repeat: int = 3
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Benchmark `models` on `accelerator` (every compile timed as the fastest of `repeat`
    runs), then both compilers' start-up (`startup_seconds`); write the JSON, the Markdown and
    the SVGs to `out`. The rows and the start-up."""
    from cascade.ethos_u.arch import ACCELERATOR_NAMES

    if repeat < 1:
        raise BenchError(f"--repeat must be at least 1, not {repeat}")

    if accelerator not in ACCELERATOR_NAMES:
        raise BenchError(f"unknown accelerator '{accelerator}'; expected one of: {', '.join(ACCELERATOR_NAMES)}")
    features = cascade_opt_features()
    _warm_up(models[0], accelerator, features)
    out.mkdir(parents=True, exist_ok=True)
    tag = accelerator.replace("-", "_")
    rows = []
    with tempfile.TemporaryDirectory(prefix="cascade-bench-") as scratch, _progress(3 * len(models) + 1) as tick:
        work = vela_output / accelerator if vela_output else Path(scratch)
        for model in models:
            row, artifacts = bench_model(model, accelerator, work, features, tick, repeat)
            rows.append(row)
            stem = f"bench_{tag}_{model.stem}"
            size = row["vela"]["size"]["peak_sram_bytes"]
            plan = artifacts.get("at_vela_size") or artifacts["default"]
            which = "Vela Size's budget" if "at_vela_size" in artifacts else "no budget"
            occupancy_svg(
                plan, f"{model.stem} on {accelerator}: SRAM occupancy at {which}", size, out / f"{stem}_occupancy.svg"
            )
            pareto_svg(
                row,
                artifacts["default"].front,
                f"{model.stem} on {accelerator}: ours vs Vela",
                out / f"{stem}_pareto.svg",
            )
            stripes_svg(plan, f"{model.stem} on {accelerator}: stripes at {which}", out / f"{stem}_stripes.svg")
            row["svg"] = {kind: f"{stem}_{kind}.svg" for kind in ("occupancy", "pareto", "stripes")}
        tick("start-up")
        startup = startup_seconds(accelerator, work / "startup", features, repeat)
    system, memory = vela_configuration(accelerator)
    document = {
        "tool": "cascade-bench",
        "accelerator": accelerator,
        "system_config": system,
        "memory_mode": memory,
        "report_source": "cascade-opt --report"
        if features[1]
        else "computed by cascade-bench (same plan, same schema)",
        "goals": {"cycles_tolerance": CYCLES_TOLERANCE, "compile_time_factor": COMPILE_TIME_FACTOR},
        "models": rows,
        "startup": startup,
    }
    (out / f"bench_{tag}.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    (out / f"bench_{tag}.md").write_text(markdown_table(rows, accelerator, startup), encoding="utf-8")
    return rows, startup


def _readme_markers(path: Path, accelerator: str) -> tuple[str, str, str]:
    """`path`'s text and its begin and end markers for `accelerator` (checked)."""
    begin, end = f"<!-- cascade-bench {accelerator} -->", f"<!-- /cascade-bench {accelerator} -->"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise BenchError(f"{path}: cannot read: {error.strerror or error}") from None
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise BenchError(f"{path}: needs one '{begin}' line and one '{end}' line after it")
    return text, begin, end


def update_readme(path: Path, accelerator: str, table: str) -> None:
    """Replace the text between the `<!-- cascade-bench ACCELERATOR -->` and
    `<!-- /cascade-bench ACCELERATOR -->` lines of `path` by `table`; nothing else changes."""
    text, begin, end = _readme_markers(path, accelerator)
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    path.write_text(f"{head}{begin}\n{table}{end}{tail}", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cascade-bench", description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="models (.tflite paths or repository model names; default: all 8)")
    parser.add_argument(
        "--accelerator", default="ethos-u55-128", help="Vela accelerator name, or several separated by commas"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: benchmarks/results)")
    parser.add_argument("--vela-output", type=Path, metavar="DIR", help="keep Vela's and our compile outputs here")
    parser.add_argument("--readme", type=Path, metavar="FILE", help="also put each table between FILE's markers")
    parser.add_argument(
        "--repeat", type=int, default=3, metavar="N", help="time every compile N times, keep the fastest (default 3)"
    )
    args = parser.parse_args(argv)
    accelerators = [name for name in args.accelerator.split(",") if name]
    try:
        models = [_model_path(m) for m in args.models] or [ROOT / m for m in DEFAULT_MODELS]
        missing = [m for m in models if not m.exists()]
        if missing:
            raise BenchError(f"{missing[0]}: no such model (the default list needs a repository checkout)")
        for accelerator in accelerators if args.readme is not None else ():
            _readme_markers(args.readme, accelerator)  # fail now, not after minutes of compiling
        for accelerator in accelerators:
            rows, startup = run_bench(models, accelerator, args.out, args.vela_output, args.repeat)
            if args.readme is not None:
                update_readme(args.readme, accelerator, markdown_table(rows, accelerator, startup))
            print_table(rows)
            print(f"\n{startup_line(startup, rows)}")
            written = _display(args.out / f"bench_{accelerator.replace('-', '_')}.md")
            print(f"\nwritten {written} and .json, SVGs\n")
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except Exception as error:
        if os.environ.get("CASCADE_DEBUG"):
            raise
        print(f"error: cascade-bench: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
