"""Calibrate the Ethos-U cost model against Vela's own per-layer estimate.

    python benchmarks/calibrate_cost_model.py
    python benchmarks/calibrate_cost_model.py --accelerators ethos-u55-128 --modes default -v

For every model and accelerator, this runs `vela --verbose-performance` (with Vela's default
system configuration and memory mode for that accelerator, passed explicitly) and reads its
per-layer CSV, then runs our network estimate (`cascade.ethos_u.estimate`, what
`cascade-estimate` prints) with the same configuration, and compares them operator by operator.

Vela reports one row per NPU operation it generates (a convolution and its fused ReLU, the ~30
operations of a softmax); its debug database (`--enable-debug-db`) maps each row to the TFLite
operator it came from, so rows are summed per TFLite operator and matched to our layers, which
carry the TFLite output tensor name.

Two comparisons (`--modes`):

* `default`: Vela as users run it. It never cascades on U55 Shared_Sram here, but on U65
  Dedicated_Sram it cascades the first layers of the 224x224 networks; those layers are not
  comparable with an unfused estimate and are reported separately (`cascaded`).
* `no-cascade`: `vela --disable-cascading` (which also turns weight buffering off) against our
  estimate with weights streamed: the per-operator model alone.

Targets (issue #4): network totals within 10 % of Vela's and at least 90 % of layers within
15 %. The table is printed; the numbers go to `benchmarks/results/cost_model_calibration.json`.

A third check takes every NPU operation from Vela's debug database of the `no-cascade` runs
(shapes, kernel, formats, memories as Vela scheduled them), and compares the block config we
choose and the NPU cycles we compute with Vela's, operation by operation.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ethosu.vela.tflite.Model import Model

from cascade.ethos_u.arch import DEFAULT_MEMORY_MODE, DEFAULT_SYSTEM_CONFIG, arch_config
from cascade.ethos_u.estimate import estimate_model
from cascade.ethos_u.performance import (
    Activation,
    Kernel,
    Layout,
    NpuKind,
    NpuOp,
    Placement,
    op_performance,
    select_block_config,
)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MODELS = sorted((ROOT / "test" / "models").glob("*.tflite")) + sorted(
    (ROOT / "benchmarks" / "models").glob("*.tflite")
)
DEFAULT_OUTPUT = ROOT / "benchmarks" / "results" / "cost_model_calibration.json"
LAYER_TOLERANCE = 0.15
TOTAL_TOLERANCE = 0.10
LAYER_SHARE = 0.90


@dataclass
class Layer:
    name: str
    kind: str
    vela: int
    ours: int
    cascaded: bool

    @property
    def error(self) -> float:
        return (self.ours - self.vela) / self.vela if self.vela else 0.0

    @property
    def within(self) -> bool:
        return abs(self.error) <= LAYER_TOLERANCE


@dataclass
class ModelResult:
    model: str
    accelerator: str
    mode: str
    vela_total: int
    ours_total: int
    layers: list[Layer] = field(default_factory=list)

    @property
    def total_error(self) -> float:
        return (self.ours_total - self.vela_total) / self.vela_total

    def comparable(self) -> list[Layer]:
        return [layer for layer in self.layers if not layer.cascaded]


def tflite_output_names(path: Path) -> list[str]:
    """The output tensor name of every operator of the main subgraph, by operator index."""
    model = Model.GetRootAs(path.read_bytes(), 0)
    graph = model.Subgraphs(0)
    return [graph.Tensors(graph.Operators(i).Outputs(0)).Name().decode() for i in range(graph.OperatorsLength())]


def vela_debug_tables(path: Path) -> dict[str, list[dict[str, str]]]:
    """Vela's debug database: XML with one CSV table per element."""
    tables = {}
    for table in ET.parse(path).getroot():
        rows = list(csv.reader(io.StringIO((table.text or "").strip())))
        if rows:
            tables[table.attrib["name"]] = [dict(zip(rows[0], row, strict=False)) for row in rows[1:]]
    return tables


def vela_binary() -> str:
    found = shutil.which("vela") or str(Path(sys.executable).with_name("vela"))
    if not Path(found).exists():
        raise SystemExit("calibrate: cannot find the `vela` command (pip install ethos-u-vela==5.2.0)")
    return found


def vela_command(model: Path, accelerator: str, system: str, memory: str, out: Path, *extra: str) -> list[str]:
    """The `vela` command line for `model` with an explicit system config and memory mode
    (sections of Vela's own Arm/vela.ini), writing into `out`."""
    return [
        vela_binary(),
        str(model),
        "--accelerator-config",
        accelerator,
        "--config",
        "Arm/vela.ini",
        "--system-config",
        system,
        "--memory-mode",
        memory,
        *extra,
        "--output-dir",
        str(out),
    ]


def run_vela(
    model: Path, accelerator: str, system: str, memory: str, mode: str, out: Path
) -> tuple[dict[str, dict], dict[str, list[dict[str, str]]]]:
    """Run Vela; return, per TFLite output tensor name, its summed op cycles and cascade flag,
    and Vela's debug database."""
    command = vela_command(model, accelerator, system, memory, out, "--verbose-performance", "--enable-debug-db")
    if mode == "no-cascade":
        command.append("--disable-cascading")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"vela failed on {model.name}: {done.stderr.strip() or done.stdout[-500:]}")
    per_layer = out / f"{model.stem}_per-layer.csv"
    with open(per_layer, encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    tables = vela_debug_tables(out / f"{model.stem}_debug.xml")
    perf = tables["perf"]
    if len(perf) != len(rows):
        raise RuntimeError(f"{per_layer}: {len(rows)} rows but the debug database has {len(perf)}")
    sources = {row["id"]: row for row in tables["source"]}
    cascade_of = {row["id"]: row.get("cascade", "0") for row in tables.get("perf_debug", [])}
    names = tflite_output_names(model)
    layers: dict[str, dict] = {}
    for csv_row, db_row in zip(rows, perf, strict=True):
        if csv_row["Name"] != db_row["name"]:
            raise RuntimeError(f"{per_layer}: rows out of step with the debug database at {csv_row['Name']}")
        name = names[int(sources[db_row["source_id"]]["ext_key"])]
        entry = layers.setdefault(name, {"cycles": 0, "cascaded": False, "operator": csv_row["Original Operator"]})
        entry["cycles"] += int(csv_row["Op Cycles"])
        entry["cascaded"] |= cascade_of.get(db_row["id"], "0") not in ("0", "")
    return layers, tables


def vela_configuration(accelerator: str) -> tuple[str, str]:
    """Vela's default (system config, memory mode) for `accelerator`, as `ethos_u.arch` has them."""
    family = "u65" if accelerator.startswith("ethos-u65") else "u55"
    return DEFAULT_SYSTEM_CONFIG[family], DEFAULT_MEMORY_MODE[family]


def vela_report(
    model: Path, accelerator: str, mode: str, keep: Path | None
) -> tuple[dict[str, dict], dict[str, list[dict[str, str]]]]:
    system, memory = vela_configuration(accelerator)
    with tempfile.TemporaryDirectory(prefix="vela-") as scratch:
        out = keep / f"{accelerator}-{mode}" / model.stem if keep else Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        return run_vela(model, accelerator, system, memory, mode, out)


def calibrate(model: Path, accelerator: str, mode: str, vela: dict[str, dict]) -> ModelResult:
    system, memory = vela_configuration(accelerator)
    estimate = estimate_model(model, accelerator, system, memory, weight_buffering=(mode == "default"))
    ours = {layer.name: layer for layer in estimate.layers}
    result = ModelResult(model.stem, accelerator, mode, sum(v["cycles"] for v in vela.values()), estimate.total_cycles)
    for name, entry in vela.items():
        layer = ours.get(name)
        result.layers.append(
            Layer(
                name,
                layer.kind if layer else entry["operator"],
                entry["cycles"],
                layer.cycles if layer else 0,
                entry["cascaded"],
            )
        )
    return result


# Vela's operator names in its debug database, as our NPU operation kinds.
_VELA_KINDS = {
    "Conv2D": (NpuKind.CONV2D, ""),
    "DepthwiseConv2D": (NpuKind.DEPTHWISE, ""),
    "FullyConnected": (NpuKind.VECTOR_PRODUCT, ""),
    "MaxPool": (NpuKind.POOLING, "max"),
    "AvgPool": (NpuKind.POOLING, "avg"),
    "ReduceSum": (NpuKind.REDUCE_SUM, ""),
    "Add": (NpuKind.ELEMENTWISE, "add"),
    "Sub": (NpuKind.ELEMENTWISE, "sub"),
    "Mul": (NpuKind.ELEMENTWISE, "mul"),
    "Asr": (NpuKind.ELEMENTWISE, "shr"),
    "SHL": (NpuKind.ELEMENTWISE, "shl"),
    "CLZ": (NpuKind.ELEMENTWISE, "clz"),
    "Minimum": (NpuKind.ELEMENTWISE, "min"),
    "Maximum": (NpuKind.ELEMENTWISE, "max"),
}
_BITS = {"Int8": 8, "UInt8": 8, "Int16": 16, "Int32": 32}


@dataclass
class OperationCheck:
    """Vela's NPU operations (uncascaded, unbuffered) re-priced by our model, one by one."""

    model: str
    accelerator: str
    operations: int = 0
    same_block: int = 0
    same_cycles: int = 0
    mismatches: list[str] = field(default_factory=list)


def check_npu_operations(tables: dict[str, list[dict[str, str]]], accelerator: str, model: str) -> OperationCheck:
    """Rebuild each NPU operation from Vela's debug database (shapes, kernel, formats, memories,
    fused activation), choose its block and count its NPU cycles with our model, and compare
    with the block Vela programmed and the NPU cycles it reported. This checks the per-operation
    model apart from lowering and scheduling policy."""
    arch = arch_config(accelerator, *vela_configuration(accelerator))
    memories = {m.name: m for m in arch.memories()}
    perf = {row["id"]: row for row in tables["perf"]}
    blocks = {row["id"]: row for row in tables["perf_debug_main"]}
    fused = {row["group_id"]: perf[row["id"]]["operator"] for row in tables.get("group", [])}
    check = OperationCheck(model, accelerator)
    for row in tables["perf_debug"]:
        vela_perf = perf[row["id"]]
        if row["id"] not in blocks or vela_perf["operator"] not in _VELA_KINDS:
            continue
        kind, sub_kind = _VELA_KINDS[vela_perf["operator"]]

        def shape(prefix: str, source: dict[str, str] = row) -> tuple[int, int, int]:
            return (int(source[f"{prefix}_h"] or 0), int(source[f"{prefix}_w"] or 0), int(source[f"{prefix}_c"] or 0))

        activation = fused.get(row["id"])
        weights = int(row["weight_total_bytes"] or 0)
        op = NpuOp(
            kind=kind,
            ifm=shape("ifm_shape"),
            ofm=shape("ofm_shape"),
            kernel=Kernel(
                int(row["kernel_size_y"]),
                int(row["kernel_size_x"]),
                int(row["kernel_stride_y"]),
                int(row["kernel_stride_x"]),
                int(row["kernel_dilation_y"]),
                int(row["kernel_dilation_x"]),
            ),
            ifm2=shape("ifm2_shape") if row["ifm2_shape_c"] not in ("", "0") else None,
            sub_kind=sub_kind,
            activation=Activation.NONE
            if activation is None
            else (Activation.LUT if activation in ("LUT", "Sigmoid", "Tanh") else Activation.CLAMP),
            ifm_bits=_BITS.get(row["ifm_dtype"], 8),
            ofm_bits=_BITS.get(row["ofm_dtype"], 8),
            ifm_layout=Layout.NHWC if row["ifm_format"] == "NHWC" else Layout.NHCWB16,
            ifm2_layout=Layout.NHWC if row["ifm2_format"] == "NHWC" else Layout.NHCWB16,
            ofm_layout=Layout.NHWC if row["ofm_format"] == "NHWC" else Layout.NHCWB16,
            weight_bytes=weights,
            scale_bytes=10 * int(row["ofm_shape_c"]) if weights else 0,
        )
        placement = Placement(
            ifm=memories.get(row["ifm_memory"], arch.arena_memory),
            ofm=memories.get(row["ofm_memory"], arch.arena_memory),
            ifm2=memories.get(row["ifm2_memory"]) if row["ifm2_memory"] else None,
            weights=arch.const_memory if weights else None,
            scales=arch.const_memory if weights else None,
        )
        block = select_block_config(op, arch.accelerator)
        vela_block = shape("ofm_block", blocks[row["id"]])
        cycles = op_performance(op, arch.accelerator, placement, block=block).npu_cycles
        check.operations += 1
        check.same_block += block.ofm_block == vela_block
        check.same_cycles += cycles == int(vela_perf["npu_cycles"])
        if cycles != int(vela_perf["npu_cycles"]) or block.ofm_block != vela_block:
            check.mismatches.append(
                f"{vela_perf['operator']} {op.ifm}->{op.ofm}: block {block.ofm_block} vs {vela_block}, "
                f"cycles {cycles} vs {vela_perf['npu_cycles']}"
            )
    return check


def print_table(results: Sequence[ModelResult], verbose: bool) -> None:
    print(
        f"{'model':24} {'accelerator':14} {'mode':10} {'vela cycles':>12} {'ours':>12} {'total':>7}"
        f" {'layers within 15%':>18} {'(all)':>9}"
    )
    for result in results:
        comparable = result.comparable()
        within = sum(layer.within for layer in comparable)
        within_all = sum(layer.within for layer in result.layers)
        print(
            f"{result.model:24} {result.accelerator:14} {result.mode:10} {result.vela_total:12d} "
            f"{result.ours_total:12d} {100 * result.total_error:+6.1f}% {within:>11d}/{len(comparable):<6d}"
            f" {within_all:>4d}/{len(result.layers)}"
        )
        if verbose:
            for index, layer in enumerate(result.layers):
                mark = " cascaded in Vela" if layer.cascaded else ("" if layer.within else "  <-- off")
                print(
                    f"    {index:3d} {layer.kind:18} vela {layer.vela:10d} ours {layer.ours:10d}"
                    f" {100 * layer.error:+7.1f}%{mark}"
                )


def summarize(results: Sequence[ModelResult]) -> dict[str, dict]:
    summary: dict[str, dict] = {}
    for result in results:
        key = f"{result.accelerator}/{result.mode}"
        entry = summary.setdefault(
            key, {"layers": 0, "within": 0, "layers_all": 0, "within_all": 0, "worst_total_error": 0.0, "models": 0}
        )
        comparable = result.comparable()
        entry["models"] += 1
        entry["layers"] += len(comparable)
        entry["within"] += sum(layer.within for layer in comparable)
        entry["layers_all"] += len(result.layers)
        entry["within_all"] += sum(layer.within for layer in result.layers)
        if abs(result.total_error) > abs(entry["worst_total_error"]):
            entry["worst_total_error"] = result.total_error
    for entry in summary.values():
        entry["layer_share"] = entry["within"] / entry["layers"] if entry["layers"] else 0.0
        entry["layer_share_all"] = entry["within_all"] / entry["layers_all"] if entry["layers_all"] else 0.0
        entry["meets_targets"] = (
            abs(entry["worst_total_error"]) <= TOTAL_TOLERANCE and entry["layer_share"] >= LAYER_SHARE
        )
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="*", type=Path, default=DEFAULT_MODELS, help="models (default: all shared)")
    parser.add_argument("--accelerators", default="ethos-u55-128,ethos-u65-256", help="comma-separated")
    parser.add_argument("--modes", default="default,no-cascade", help="default, no-cascade, or both")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="JSON results file")
    parser.add_argument("--keep-vela-output", type=Path, metavar="DIR", help="keep Vela's reports here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every layer")
    parser.add_argument("-j", "--jobs", type=int, default=4, help="Vela runs in parallel")
    args = parser.parse_args(argv)
    accelerators = [a for a in args.accelerators.split(",") if a]
    modes = [m for m in args.modes.split(",") if m]
    for accelerator in accelerators:
        arch_config(accelerator)  # fail early on a bad name
    jobs = [(model, accelerator, mode) for accelerator in accelerators for mode in modes for model in args.models]
    # Vela runs as subprocesses in parallel; our estimates run here, one after another.
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        reports = list(pool.map(lambda job: vela_report(*job, args.keep_vela_output), jobs))
    results = [calibrate(*job, report[0]) for job, report in zip(jobs, reports, strict=True)]
    operations = [
        check_npu_operations(report[1], job[1], job[0].stem)
        for job, report in zip(jobs, reports, strict=True)
        if job[2] == "no-cascade"
    ]
    print_table(results, args.verbose)
    summary = summarize(results)
    print()
    for key, entry in summary.items():
        verdict = "meets" if entry["meets_targets"] else "MISSES"
        print(
            f"{key}: worst total {100 * entry['worst_total_error']:+.1f}%, layers within 15%: "
            f"{entry['within']}/{entry['layers']} ({100 * entry['layer_share']:.1f}%) uncascaded, "
            f"{entry['within_all']}/{entry['layers_all']} ({100 * entry['layer_share_all']:.1f}%) all; "
            f"{verdict} the targets (totals within 10%, 90% of layers within 15%)"
        )
    if operations:
        print()
        print("Vela's NPU operations (no-cascade runs) re-priced one by one: same block, same NPU cycles")
        for accelerator in accelerators:
            mine = [c for c in operations if c.accelerator == accelerator]
            total = sum(c.operations for c in mine)
            print(
                f"{accelerator}: {sum(c.same_block for c in mine)}/{total} blocks, "
                f"{sum(c.same_cycles for c in mine)}/{total} cycles"
            )
            if args.verbose:
                for check in mine:
                    for mismatch in check.mismatches:
                        print(f"    {check.model}: {mismatch}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "targets": {"total_tolerance": TOTAL_TOLERANCE, "layer_tolerance": LAYER_TOLERANCE, "layer_share": LAYER_SHARE},
        "summary": summary,
        "npu_operations": [
            {
                "model": c.model,
                "accelerator": c.accelerator,
                "operations": c.operations,
                "same_block": c.same_block,
                "same_npu_cycles": c.same_cycles,
                "mismatches": c.mismatches,
            }
            for c in operations
        ],
        "results": [
            {
                "model": r.model,
                "accelerator": r.accelerator,
                "mode": r.mode,
                "vela_total_cycles": r.vela_total,
                "ours_total_cycles": r.ours_total,
                "total_error": round(r.total_error, 5),
                "layers": [
                    {
                        "name": layer.name,
                        "kind": layer.kind,
                        "vela_cycles": layer.vela,
                        "ours_cycles": layer.ours,
                        "error": round(layer.error, 5),
                        "cascaded_in_vela": layer.cascaded,
                    }
                    for layer in r.layers
                ],
            }
            for r in results
        ],
    }
    args.output.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0 if all(entry["meets_targets"] for entry in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
