"""cascade-estimate: per-layer Ethos-U cycle estimate of a model, every operator run alone.

    cascade-estimate model.tflite
    cascade-estimate model.tflite --accelerator ethos-u65-256 --csv layers.csv
    cascade-estimate model.tflite --system-config Ethos_U55_Deep_Embedded --memory-mode Sram_Only

Like `vela --verbose-performance`: one row per operator with its cycles, NPU cycles, MACs and
the bytes it moves in each memory, then the totals. Operators are not cascaded; weights are
buffered in SRAM when that is faster, and in Dedicated_Sram feature maps use the SRAM cache as
Vela would place them (see `cascade.ethos_u.estimate`). System configurations and memory modes
are those of Vela's vela.ini, with Vela's defaults. The last line is `total_cycles: N`.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from xdsl.dialects.func import FuncOp

from cascade.ethos_u.arch import (
    ACCELERATOR_NAMES,
    DEFAULT_ACCELERATOR,
    ArchConfigError,
    arch_config,
    unknown_config_name,
)
from cascade.ethos_u.estimate import NetworkEstimate, estimate_program, memory_label
from cascade.frontends.loader import LoadError, load_module
from cascade.interpreter.nn import InterpretationError, check_tensor_sizes
from cascade.passes.planner.from_nn import program_from_module
from cascade.tools.outcome import exit_status

PROG = "cascade-estimate"


class EstimateError(Exception):
    """Bad input to cascade-estimate; printed as one line, exit status 1."""


class _Parser(argparse.ArgumentParser):
    """Usage errors are bad input too: one `error:` line and exit status 1."""

    def error(self, message: str) -> NoReturn:
        raise EstimateError(message)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a .tflite model or an .mlir program (nn level); - reads standard input")
    parser.add_argument(
        "--accelerator",
        default=DEFAULT_ACCELERATOR,
        metavar="NAME",
        help=f"one of {', '.join(ACCELERATOR_NAMES)} (default {DEFAULT_ACCELERATOR}, as Vela)",
    )
    parser.add_argument(
        "--system-config",
        metavar="NAME",
        help="a [System_Config.NAME] of vela.ini (default: Vela's for the accelerator: "
        "Ethos_U55_High_End_Embedded or Ethos_U65_Client_Server)",
    )
    parser.add_argument(
        "--memory-mode",
        metavar="NAME",
        help="a [Memory_Mode.NAME] of vela.ini (default: Shared_Sram on U55, Dedicated_Sram_384KB on U65)",
    )
    parser.add_argument("--csv", type=Path, metavar="FILE", help="also write the per-layer table as CSV")
    parser.add_argument(
        "--no-weight-buffering",
        action="store_true",
        help="stream every operator's weights from flash/DRAM (as vela --disable-cascading does)",
    )
    return parser.parse_args(argv)


def _check_names(args: argparse.Namespace) -> None:
    problem = unknown_config_name(args.accelerator, args.system_config, args.memory_mode)
    if problem is not None:
        raise EstimateError(problem)


def table_rows(estimate: NetworkEstimate) -> tuple[list[str], list[list[str]]]:
    """The per-layer table: header and rows of strings."""
    memories = estimate.memory_names()
    header = ["#", "operator", "target", "cycles", "npu_cycles", "macs"]
    header += [f"{memory_label(m)}_bytes" for m in memories]
    header += [f"{memory_label(m)}_cycles" for m in memories]
    header += ["weights", "name"]
    rows = []
    for index, layer in enumerate(estimate.layers):
        row = [str(index), layer.kind, layer.target, str(layer.cycles), str(layer.npu_cycles), str(layer.macs)]
        row += [str(layer.bytes_by_memory.get(m, 0)) for m in memories]
        row += [str(layer.access_cycles.get(m, 0)) for m in memories]
        row += [layer.weights, layer.name]
        rows.append(row)
    return header, rows


def format_report(model: str, estimate: NetworkEstimate) -> str:
    arch = estimate.arch
    lines = [
        f"model: {model}",
        f"accelerator: {arch.accelerator.name}",
        f"system config: {arch.system.name} ({arch.system.core_clock / 1e6:g} MHz)",
        f"memory mode: {arch.mode.name}",
        "memories: "
        + ", ".join(
            f"{memory_label(m)} {m.bandwidth:g} B/cycle, latency {m.read_latency}/{m.write_latency}"
            for m in arch.memories()
        ),
        "",
    ]
    header, rows = table_rows(estimate)
    numeric = set(range(3, len(header) - 2))
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i]) for i in range(len(header))]
    widths[-1] = 0  # the name column is last and not padded

    def render(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.rjust(widths[i]) if i in numeric or i == 0 else cell.ljust(widths[i]) for i, cell in enumerate(cells)
        ).rstrip()

    lines.append(render(header))
    lines.extend(render(row) for row in rows)
    lines.append("")
    totals = estimate.total_bytes()
    on_cpu = sum(1 for layer in estimate.layers if layer.target != "NPU")
    lines.append(f"operators: {len(estimate.layers)} ({on_cpu} not on the NPU)")
    lines.append(f"total_macs: {estimate.total_macs}")
    for memory in estimate.memory_names():
        lines.append(f"total_{memory_label(memory)}_bytes: {totals.get(memory, 0)}")
    lines.append(f"total_npu_cycles: {estimate.total_npu_cycles}")
    lines.append(f"inference_time_ms: {estimate.inference_seconds * 1e3:.3f}")
    lines.append(f"total_cycles: {estimate.total_cycles}")
    return "\n".join(lines)


def write_csv(path: Path, estimate: NetworkEstimate) -> None:
    header, rows = table_rows(estimate)
    try:
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(rows)
    except OSError as error:
        raise EstimateError(f"{path}: cannot write: {error.strerror or error}") from None


def run(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    _check_names(args)
    arch = arch_config(args.accelerator, args.system_config, args.memory_mode)
    module = load_module(args.model)
    try:
        check_tensor_sizes(module)
    except InterpretationError as error:
        raise EstimateError(f"{args.model}: {error}") from None
    if any(op.name == "ethosu.command_stream" for op in module.walk()):
        # Only the operators left to the CPU are still nn: their estimate would be the model's.
        raise EstimateError(
            f"{args.model}: lowered IR holds its NPU work in command streams, which cascade-estimate does not "
            "price: estimate the model or its nn program, or compile it with cascade-opt ... --report FILE"
        )
    functions = [op for op in module.ops if isinstance(op, FuncOp)]
    chosen = next((f for f in functions if f.sym_name.data == "main"), functions[0] if functions else None)
    if chosen is not None and chosen.is_declaration:
        # program_from_module picks this function too, and a declaration has no operators.
        raise EstimateError(f"{args.model}: @{chosen.sym_name.data} is a declaration without a body")
    try:
        program = program_from_module(module)
    except ValueError as error:
        raise EstimateError(f"{args.model}: {error}") from None
    estimate = estimate_program(program, arch, weight_buffering=not args.no_weight_buffering)
    if args.csv is not None:
        write_csv(args.csv, estimate)
    print(format_report(args.model, estimate))
    return 0


def one_line(message: str) -> str:
    """A diagnostic on one line: a parser's `file:line:col`, source line and caret become
    `file:line:col: message`."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if len(lines) <= 1:
        return lines[0] if lines else message
    return f"{lines[0]}: {lines[-1]}"


def main(argv: Sequence[str] | None = None) -> None:
    expected = (EstimateError, LoadError, ArchConfigError)
    sys.exit(exit_status(PROG, lambda: run(argv), expected, lambda error: one_line(str(error))))


if __name__ == "__main__":
    main()
