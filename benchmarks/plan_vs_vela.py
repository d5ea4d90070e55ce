"""Our cascading planner against Vela 5.2.0: peak SRAM and cycles on every benchmark model.

    python benchmarks/plan_vs_vela.py
    python benchmarks/plan_vs_vela.py --accelerator ethos-u55-128 --models mbv2_100_224 -v

For every model of the Vela baseline (`benchmarks/models/vela_baseline_u55_128.json`: Vela's
default `perf` run and its `--optimise Size` run), this plans the model with `cascade-plan`'s
planner and the Ethos-U cost model of the accelerator (no budget, default objective: the
smallest peak within 5 % of the fastest plan found), and prints, next to Vela's figures:

* our chosen plan: placed peak SRAM (KiB), cycles, multi-operator cascades;
* our smallest plan on the front (`objective=min-sram`): peak and cycles;
* the row-striping lower bound (KiB);
* our fastest plan under a budget of Vela's Size figure (`sram-budget=`), and its cycles
  against Vela's default: the target is met when they are within 5 %;
* the planning time (CPU seconds, one core).

With `--bound`, for every model whose target is missed, a lower bound of the cycles of any plan
of our search space under Vela's Size figure (`size_budget_lower_bound`): the DP over a much
wider search (every stripe count, 2 to 64 weight slices, 20 buffer-mode sets, no thinning,
exact pricing) with every prefetched weight copy hidden entirely (unlimited slack; the copy's
buffers still count in the step before, and slices beyond the first two still wait for
their slot). Above 1.05 x Vela's default cycles, the target cannot be met by this planner
under the calibrated cost model.

The table is printed; everything goes to `benchmarks/results/plan_vs_vela_<accelerator>.json`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from cascade.frontends.loader import load_module
from cascade.passes.cascade_plan import planner_cost_model, scheduled_program
from cascade.passes.planner import search
from cascade.passes.planner.plan import CachedCost, PlanningError, PlanOptions, plan_program
from cascade.passes.planner.program import ProgramGraph

ROOT = Path(__file__).resolve().parents[1]
MODEL_DIRS = (ROOT / "test" / "models", ROOT / "benchmarks" / "models")
RESULTS = ROOT / "benchmarks" / "results"
CYCLES_TOLERANCE = 0.05


def _model_path(name: str) -> Path:
    for directory in MODEL_DIRS:
        path = directory / f"{name}.tflite"
        if path.exists():
            return path
    raise FileNotFoundError(f"no {name}.tflite in {', '.join(str(d) for d in MODEL_DIRS)}")


def _baseline(accelerator: str) -> dict[str, dict[str, dict[str, float]]]:
    tag = accelerator.removeprefix("ethos-").replace("-", "_")
    rows = json.loads((ROOT / "benchmarks" / "models" / f"vela_baseline_{tag}.json").read_text())
    baseline: dict[str, dict[str, dict[str, float]]] = {}
    for row in rows:
        if row.get("config") in ("perf", "size") and row.get("rc", 0) == 0:
            baseline.setdefault(row["model"], {})[row["config"]] = {
                "sram_bytes": round(row["sram_kib"] * 1024),
                "cycles": row["cycles_total"],
            }
    return {model: configs for model, configs in baseline.items() if {"perf", "size"} <= set(configs)}


def plan_model(name: str, accelerator: str, size_budget: int | None) -> dict[str, object]:
    module = load_module(_model_path(name))
    function = next(op for op in module.ops if getattr(op, "sym_name", None) is not None)
    program = scheduled_program(function).program  # type: ignore[arg-type]
    cost = planner_cost_model(accelerator, program)
    started_cpu, started_wall = time.process_time(), time.perf_counter()
    result = plan_program(program, cost, PlanOptions())
    cpu, wall = time.process_time() - started_cpu, time.perf_counter() - started_wall
    smallest = min(result.front, key=lambda p: (p.peak_sram_bytes, p.cycles))
    at_size: dict[str, int] | None = None
    if size_budget is not None:
        try:
            options = PlanOptions(sram_budget=size_budget)
            budgeted = plan_program(program, planner_cost_model(accelerator, program), options)
            at_size = {
                "peak_sram_bytes": budgeted.peak,
                "cycles": budgeted.cycles,
                "cascades": budgeted.multi_op_cascades,
            }
        except PlanningError:
            at_size = None
    return {
        "at_vela_size_budget": at_size,
        "peak_sram_bytes": result.peak,
        "cycles": result.cycles,
        "cascades": result.multi_op_cascades,
        "operators": result.graph.size,
        "min_sram": {"peak_sram_bytes": smallest.peak_sram_bytes, "cycles": smallest.cycles},
        "lower_bound_bytes": result.lower_bound,
        "front": [p.as_json() for p in result.front],
        "plan_cpu_seconds": round(cpu, 2),
        "plan_wall_seconds": round(wall, 2),
        "stats": result.stats,
    }


@contextlib.contextmanager
def _wide_search() -> Iterator[None]:
    """The search's sampling widened to (nearly) everything, and unlimited prefetch slack."""
    names = ("STRIPE_COUNTS", "OUTER_COUNTS", "INNER_COUNTS", "MAX_MODE_SETS", "SLICE_COUNTS")
    saved = {name: getattr(search, name) for name in names}
    previous_slack = search.Candidates.previous_slack
    search.STRIPE_COUNTS = tuple(range(2, 257))
    search.OUTER_COUNTS = tuple(range(2, 129))
    search.INNER_COUNTS = (2, 3, 4, 6, 8, 16)
    search.MAX_MODE_SETS = 20
    search.SLICE_COUNTS = tuple(range(2, 65))
    search.Candidates.previous_slack = lambda self, first: 10**15 if first > 0 else 0  # type: ignore[method-assign]
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(search, name, value)
        search.Candidates.previous_slack = previous_slack  # type: ignore[method-assign]


def size_budget_lower_bound(name: str, accelerator: str, budget: int) -> int | None:
    """A lower bound of the cycles of any plan of our search space within `budget` (see the
    module docstring); None if nothing fits."""
    module = load_module(_model_path(name))
    function = next(op for op in module.ops if getattr(op, "sym_name", None) is not None)
    program = scheduled_program(function).program  # type: ignore[arg-type]
    graph = ProgramGraph.build(program)
    with _wide_search():
        cost = CachedCost(planner_cost_model(accelerator, program))
        options = search.SearchOptions(max_points=1_000_000, exact_pricing=True)
        edges = search.Candidates(graph, cost, options).edges()
        path = search.PartitionDP(graph.size, edges).fastest_under(budget)
    return None if path is None else path.cycles


def _kib(value: float) -> str:
    return f"{value / 1024:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accelerator", default="ethos-u55-128")
    parser.add_argument("--models", nargs="*", help="model names (default: every model of the baseline)")
    parser.add_argument("--output", type=Path, help="JSON output (default: benchmarks/results/...)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each front")
    parser.add_argument("--bound", action="store_true", help="lower-bound the cycles where the target is missed")
    args = parser.parse_args(argv)

    baseline = _baseline(args.accelerator)
    names = args.models or sorted(baseline)
    rows = []
    for name in names:
        vela = baseline.get(name)
        ours = plan_model(name, args.accelerator, vela["size"]["sram_bytes"] if vela else None)
        row: dict[str, object] = {"model": name, "ours": ours, "vela": vela}
        if vela is not None:
            size_limit = vela["size"]["sram_bytes"]
            cycles_limit = vela["perf"]["cycles"] * (1 + CYCLES_TOLERANCE)
            meeting = [p for p in ours["front"] if p["peak_sram_bytes"] <= size_limit and p["cycles"] <= cycles_limit]
            row["chosen_meets_target"] = ours["peak_sram_bytes"] <= size_limit and ours["cycles"] <= cycles_limit
            at_size = ours["at_vela_size_budget"]
            row["size_budget_meets_target"] = at_size is not None and at_size["cycles"] <= cycles_limit
            row["front_point_meeting_target"] = (
                min(meeting, key=lambda p: (p["peak_sram_bytes"], p["cycles"])) if meeting else None
            )
            if args.bound and not row["size_budget_meets_target"]:
                bound = size_budget_lower_bound(name, args.accelerator, size_limit)
                row["size_budget_lower_bound_cycles"] = bound
        rows.append(row)
        if args.verbose:
            print(name, json.dumps(ours["front"]), file=sys.stderr)

    header = (
        f"{'model':22} {'ours KiB':>9} {'ours Mcyc':>10} {'casc':>4} {'min KiB':>8} {'min Mcyc':>9} "
        f"{'LB KiB':>7} {'Vela perf KiB/Mcyc':>19} {'Vela size KiB/Mcyc':>19} {'@size KiB/Mcyc':>15} "
        f"{'vs perf':>8} {'target':>6} {'plan s':>7}"
    )
    print(f"Planner vs Vela 5.2.0 on {args.accelerator} (target: SRAM <= Vela Size, cycles <= 1.05 x Vela default)")
    print(header)
    print("-" * len(header))
    for row in rows:
        ours, vela = row["ours"], row["vela"]
        vela_perf = f"{_kib(vela['perf']['sram_bytes'])}/{vela['perf']['cycles'] / 1e6:.3f}" if vela else "-"
        vela_size = f"{_kib(vela['size']['sram_bytes'])}/{vela['size']['cycles'] / 1e6:.3f}" if vela else "-"
        at_size = ours["at_vela_size_budget"]
        at_size_text = f"{_kib(at_size['peak_sram_bytes'])}/{at_size['cycles'] / 1e6:.3f}" if at_size else "-"
        versus = f"{(at_size['cycles'] / vela['perf']['cycles'] - 1) * 100:+.1f}%" if at_size and vela else "-"
        target = "-" if vela is None else "met" if row["size_budget_meets_target"] else "missed"
        print(
            f"{row['model']:22} {_kib(ours['peak_sram_bytes']):>9} {ours['cycles'] / 1e6:>10.3f} "
            f"{ours['cascades']:>4} {_kib(ours['min_sram']['peak_sram_bytes']):>8} "
            f"{ours['min_sram']['cycles'] / 1e6:>9.3f} {_kib(ours['lower_bound_bytes']):>7} {vela_perf:>19} "
            f"{vela_size:>19} {at_size_text:>15} {versus:>8} {target:>6} {ours['plan_cpu_seconds']:>7.2f}"
        )
    for row in rows:
        if row.get("size_budget_lower_bound_cycles") is not None:
            bound, vela = row["size_budget_lower_bound_cycles"], row["vela"]
            print(
                f"{row['model']}: no plan within {vela['size']['sram_bytes']} B runs under {bound} cycles "
                f"({(bound / vela['perf']['cycles'] - 1) * 100:+.1f}% vs Vela default; target "
                f"{CYCLES_TOLERANCE * 100:+.0f}%)"
            )
    output = args.output or RESULTS / f"plan_vs_vela_{args.accelerator.replace('-', '_')}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"accelerator": args.accelerator, "rows": rows}, indent=1) + "\n")
    print(f"\nwritten {output.relative_to(ROOT) if output.is_relative_to(ROOT) else output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
