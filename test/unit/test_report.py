"""`cascade-opt --report FILE`: the compile report and the stderr summary.

Expected values come from elsewhere: the planner's own JSON report (`cascade-plan{report=...}`),
the commands counted in the serialized stream, and hand arithmetic on a one-operator network.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from cascade.ethos_u.serialize import disassemble_file
from cascade.ethos_u.targets import command_stream_text
from cascade.frontends.loader import load_module
from cascade.frontends.tflite_writer import ModelBuilder, options
from cascade.tools.cascade_opt import run

MODELS = Path(__file__).parents[1] / "models"
ACCELERATOR = "ethos-u55-128"
SCHEMA = {
    "tool": str,
    "version": str,
    "input": str,
    "accelerator": str,
    "system_config": str,
    "memory_mode": str,
    "peak_sram_bytes": int,
    "lower_bound_bytes": (int, type(None)),
    "total_cycles": int,
    "npu_cycles": int,
    "cpu_ops": int,
    "flash_bytes_read": int,
    "sram_bytes_accessed": int,
    "cascades": int,
    "npu_ops": int,
    "command_streams": int,
    "per_op": list,
    "compile_seconds": float,
}


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = run(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_planned_report_matches_the_planner(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    plan_json, report_file = tmp_path / "plan.json", tmp_path / "report.json"
    status, _, err = _cli(
        capsys,
        str(MODELS / "ds_cnn_kws.tflite"),
        f'--cascade-plan=accelerator={ACCELERATOR} report="{plan_json}"',
        "--rolling-buffer",
        "--report",
        str(report_file),
        "-o",
        str(tmp_path / "out.mlir"),
    )
    assert status == 0, err
    report = json.loads(report_file.read_text())
    for key, kind in SCHEMA.items():
        assert isinstance(report[key], kind), key
    for entry in report["per_op"]:
        assert set(entry) >= {"name", "op", "cycles", "cascade"}
    chosen = json.loads(plan_json.read_text())["chosen"]
    assert report["peak_sram_bytes"] == chosen["peak_sram_bytes"]
    assert report["total_cycles"] == chosen["cycles"]
    assert report["cascades"] == chosen["cascades"]
    assert report["accelerator"] == ACCELERATOR
    # Vela's defaults for a U55 (vela.ini / Vela's documentation).
    assert (report["system_config"], report["memory_mode"]) == ("Ethos_U55_High_End_Embedded", "Shared_Sram")
    assert report["command_streams"] == 0
    assert 0 < report["npu_cycles"]
    # The summary: a header, then aligned "label  value" lines, total cycles among them.
    lines = err.strip().splitlines()
    assert lines[0] == f"Network summary for {MODELS / 'ds_cnn_kws.tflite'}"
    total = next(line for line in lines if line.strip().startswith("Total cycles"))
    assert f"  {report['total_cycles']} (" in total
    # Values start in one column: after the longest label and two spaces.
    starts = {len(line) - len(line.split("  ")[-1].lstrip()) for line in lines[1:4]}
    assert len(starts) == 1


def test_weights_in_slices_are_priced_slice_by_slice(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # resnet8 planned without a budget on U55-128 double-buffers four convolutions' weights in
    # output-channel slices. The report prices such an operator as the plan and the stream run
    # it: one box per slice, back to back (fill and drain once), not as one whole box.
    from cascade.ethos_u.arch import arch_config
    from cascade.ethos_u.cost_model import EthosUCostModel
    from cascade.ethos_u.estimate import choose_layouts
    from cascade.passes.planner.from_nn import program_from_module
    from cascade.passes.planner.plan import PlanOptions, plan_program
    from cascade.passes.planner.search import Pricer

    report_file = tmp_path / "report.json"
    model = MODELS / "resnet8.tflite"
    status, _, err = _cli(
        capsys, str(model), f"--cascade-plan=accelerator={ACCELERATOR}", "--report", str(report_file), "-o", "/dev/null"
    )
    assert status == 0, err
    per_op = {entry["name"]: entry["cycles"] for entry in json.loads(report_file.read_text())["per_op"]}
    program = program_from_module(load_module(model))
    cost = EthosUCostModel(arch_config(ACCELERATOR), layouts=choose_layouts(program))
    result = plan_program(program, cost, PlanOptions())
    sliced = [c for c in result.cascades if c.weight_slice_depth]
    assert len(sliced) >= 2
    pricer = Pricer(result.graph, cost, exact=True)
    differs = 0
    for cascade in sliced:
        op, depth = cascade.sink, cascade.weight_slice_depth
        channels = result.graph.output_shape(op)[-1]
        sizes = [min(depth, channels - first) for first in range(0, channels, depth)]
        assert len(sizes) >= 2
        expected = pricer.once(op, True) + sum(pricer.channel_slice(op, size, pipelined=True) for size in sizes)
        assert per_op[result.graph.ops[op].name] == expected
        differs += expected != pricer.whole(op, True)
    assert differs  # slices are not priced as the whole operator


def test_lowered_report_counts_the_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    report_file, lowered = tmp_path / "r.json", tmp_path / "low.mlir"
    status, _, err = _cli(
        capsys,
        str(MODELS / "resnet8.tflite"),
        f"--ethosu-pipeline=accelerator={ACCELERATOR} system-config=Ethos_U55_Deep_Embedded",
        "--report",
        str(report_file),
        "-o",
        str(lowered),
    )
    assert status == 0, err
    report = json.loads(report_file.read_text())
    assert report["system_config"] == "Ethos_U55_Deep_Embedded"
    assert report["command_streams"] == 1
    # NPU operations: the kernel commands of the serialized stream, decoded back (DMAs aside).
    text = tmp_path / "cs.txt"
    text.write_text(command_stream_text(load_module(lowered)))
    decoded = [op for op in disassemble_file(text).walk() if op.name.startswith("ethosu.") and op.name != "ethosu.dma"]
    kernels = [op for op in decoded if op.name != "ethosu.command_stream"]
    assert report["npu_ops"] == len(kernels)
    # resnet8 ends in fully_connected and softmax, which stay on the CPU by default: the
    # per-operator entries say so under the names cpu_operators gives them, and cost the NPU nothing.
    assert report["cpu_ops"] == 2
    off_npu = [(e["op"], e["name"]) for e in report["per_op"] if e["on_cpu"]]
    assert off_npu == [(o["op"], o["name"]) for o in report["cpu_operators"]]
    assert [op for op, _ in off_npu] == ["nn.fully_connected", "nn.softmax"]
    assert all(e["cycles"] == 0 for e in report["per_op"] if e["on_cpu"])
    assert all(e["cycles"] > 0 for e in report["per_op"] if not e["on_cpu"] and e["op"] != "nn.reshape")
    assert report["cascades"] >= 1


def test_report_is_deterministic(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    texts = []
    for name in ("a.json", "b.json"):
        status, _, err = _cli(
            capsys,
            str(MODELS / "mbv1_025_96.tflite"),
            f"--cascade-plan=accelerator={ACCELERATOR}",
            "--report",
            str(tmp_path / name),
            "-o",
            str(tmp_path / "out.mlir"),
        )
        assert status == 0, err
        texts.append("\n".join(ln for ln in (tmp_path / name).read_text().splitlines() if "compile_seconds" not in ln))
    assert texts[0] == texts[1]


def one_conv_model() -> bytes:
    """x[1,8,8,16] -> conv 1x1 (16 out): one operator, no cascade."""
    rng = np.random.default_rng(1)
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, 8, 8, 16], "int8", scale=0.05, zero_point=0)
    w = mb.add_tensor(
        "w", [16, 1, 1, 16], "int8", scale=[0.01] * 16, zero_point=0, data=rng.integers(-127, 128, (16, 1, 1, 16))
    )
    b = mb.add_tensor("b", [16], "int32", scale=[0.0005] * 16, zero_point=0, data=np.zeros(16, dtype=np.int64))
    y = mb.add_tensor("y", [1, 8, 8, 16], "int8", scale=0.1, zero_point=0)
    mb.add_operator(
        "CONV_2D", [x, w, b], [y], options("Conv2DOptions", padding="VALID", stride_h=1, stride_w=1), version=3
    )
    return mb.build([x], [y])


def test_traffic_of_one_convolution(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """A 1x1 conv of 8x8x16 to 8x8x16 in NHWC (graph input and output) reads its IFM once and
    writes its OFM once: 1024 + 1024 bytes of SRAM; its weights (and bias records) come from
    flash once, and if the plan keeps them in SRAM, they are also written and read there."""
    model = tmp_path / "conv.tflite"
    model.write_bytes(one_conv_model())
    report_file = tmp_path / "r.json"
    status, out, err = _cli(
        capsys, str(model), f"--cascade-plan=accelerator={ACCELERATOR}", "--report", str(report_file)
    )
    assert status == 0, err
    report = json.loads(report_file.read_text())
    (entry,) = report["per_op"]
    assert (entry["op"], entry["cascade"]) == ("nn.conv2d", None)
    assert report["cascades"] == 0
    weights_in_sram = "#cascade.weights<sram>" in out
    fm_bytes = 8 * 8 * 16 * 2
    constants = report["flash_bytes_read"]
    assert constants >= 16 * 10  # at least the 10-byte bias/scale record per output channel
    expected_sram = fm_bytes + (2 * constants if weights_in_sram else 0)
    assert report["sram_bytes_accessed"] == expected_sram


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([str(MODELS / "resnet8.tflite")], "the report needs planned IR"),
        (
            [str(MODELS / "resnet8.tflite"), "--cascade-plan", "--report", "/nonexistent/dir/r.json"],
            "cannot write report",
        ),
    ],
)
def test_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str):
    if "--report" not in args:
        args = [*args, "--report", str(tmp_path / "r.json")]
    status, _, err = _cli(capsys, *args, "-o", str(tmp_path / "out.mlir"))
    assert status == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("cascade-opt: error: ")
    assert message in lines[0]


def test_operators_a_model_names_alike_are_told_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """Two convolutions both write a tensor named 't': the stride-1 one runs on the NPU, the
    stride-4 one on the CPU. Only the second is reported off the NPU (both were, with 0 NPU
    cycles in all, when operators were matched by name and location alone)."""
    rng = np.random.default_rng(0)
    mb = ModelBuilder()
    x = mb.add_tensor("x", [1, 16, 16, 4], "int8", scale=0.05, zero_point=0)
    w = mb.add_tensor("w", [4, 3, 3, 4], "int8", scale=0.02, zero_point=0, data=rng.integers(-50, 50, (4, 3, 3, 4)))
    b = mb.add_tensor("b", [4], "int32", scale=0.001, zero_point=0, data=np.zeros(4, np.int64))
    first = mb.add_tensor("t", [1, 16, 16, 4], "int8", scale=0.1, zero_point=0)
    same = options("Conv2DOptions", padding="SAME", stride_w=1, stride_h=1)
    mb.add_operator("CONV_2D", [x, w, b], [first], same, version=3)
    second = mb.add_tensor("t", [1, 4, 4, 4], "int8", scale=0.1, zero_point=0)
    wide = options("Conv2DOptions", padding="SAME", stride_w=4, stride_h=4)
    mb.add_operator("CONV_2D", [first, w, b], [second], wide, version=3)
    model, report_file = tmp_path / "dup.tflite", tmp_path / "dup.json"
    model.write_bytes(mb.build([x], [second]))
    status, _, err = _cli(capsys, str(model), "--ethosu-pipeline", "--report", str(report_file), "-o", "/dev/null")
    assert status == 0, err
    report = json.loads(report_file.read_text())
    assert [(e["name"], e["on_cpu"]) for e in report["per_op"]] == [("t", False), ("t#2", True)]
    assert report["cpu_ops"] == len(report["cpu_operators"]) == 1
    assert report["npu_cycles"] > 0


@pytest.mark.parametrize("cores", [1, 2])
def test_the_plan_keeper_gathers_the_plan_lower_to_ethosu_receives_and_only_it(
    monkeypatch: pytest.MonkeyPatch, cores: int
):
    # With two cores a forked child gathers the facts while the module is lowered here; with
    # one, they are gathered at once. Either way they are those of the module as it stood.
    from xdsl.context import Context

    from cascade import parallel
    from cascade.ethos_u.report import PlanKeeper, compile_report, is_lowered, planned_facts
    from cascade.passes.allocate_memory import AllocateMemoryPass
    from cascade.passes.cascade_plan import CascadePlanPass
    from cascade.passes.lower_to_ethosu import LowerToEthosUPass
    from cascade.passes.rolling_buffer import RollingBufferPass

    monkeypatch.setattr(parallel, "available_cores", lambda: cores)
    monkeypatch.setattr(parallel, "_can_fork", lambda: sys.platform.startswith("linux"))
    stages = [
        CascadePlanPass(accelerator=ACCELERATOR),
        RollingBufferPass(),
        AllocateMemoryPass(),
        LowerToEthosUPass(accelerator=ACCELERATOR),
    ]
    keeper = PlanKeeper(accelerator=ACCELERATOR)
    module = load_module(str(MODELS / "resnet8.tflite"))
    context = Context(allow_unregistered=True)
    before_lowering = None
    keeper(None, module, stages[0])
    for previous, following in zip(stages, [*stages[1:], None], strict=True):
        previous.apply(context, module)
        if following is not None and following.name == "lower-to-ethosu":
            before_lowering = module.clone()
        keeper(previous, module, following)
        # Planned but not yet before lower-to-ethosu: nothing is gathered yet.
        assert (keeper.planned is None) == (before_lowering is None)
    assert is_lowered(module)
    assert keeper.planned is not None
    assert before_lowering is not None
    facts = keeper.planned.result()
    assert facts == planned_facts(before_lowering, ACCELERATOR)
    assert facts.costs
    assert all(cost.cycles > 0 for cost in facts.costs if not cost.on_cpu)
    # The report from the facts is the one from the planned module itself.
    assert compile_report(module, planned=facts) == compile_report(module, planned=before_lowering)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the child is forked on Linux only")
def test_a_compile_that_fails_in_lowering_leaves_no_child_gathering_its_report(monkeypatch: pytest.MonkeyPatch):
    from cascade import parallel
    from cascade.api import CompileError, compile

    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    monkeypatch.setattr(parallel, "_can_fork", lambda: True)
    forks: list[int] = []
    real_fork = os.fork

    def counting_fork() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counting_fork)
    children = _children()
    # lower-to-ethosu refuses an accelerator other than the plan's, after the keeper forked.
    pipeline = (
        f"cascade-plan{{accelerator={ACCELERATOR}}},rolling-buffer,allocate-memory,"
        "lower-to-ethosu{accelerator=ethos-u65-256}"
    )
    with pytest.raises(CompileError, match="lower-to-ethosu"):
        compile(MODELS / "resnet8.tflite", pipeline)
    assert forks, "the keeper forked no child"
    assert _children() == children


def _children() -> set[int]:
    """Pids of this process's living children (Linux)."""
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as children:
        return {int(pid) for pid in children.read().split()}
