"""Hand-written or edited `cascade` IR that is valid by the dialect but not as cascade-plan writes
it: rolling-buffer and allocate-memory refuse it with one located `error:` line and exit status
1 (`cascade_plan.check_cascades`), never an internal error. The planner's helpers they rely on
fail with a clear ValueError on such IR instead of an IndexError or a StopIteration.

The lit tests test/passes/{rolling_buffer,allocate_memory}/not_planned.mlir,
test/passes/rolling_buffer/edited_stripe.mlir and test/passes/cascade_plan/target_mismatch.mlir
cover the fuzzer's reproducers; these cover the other edits the same check refuses.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cascade.frontends.loader import parse_mlir
from cascade.interpreter.nn import main_function
from cascade.passes.cascade_plan import scheduled_geometries, target_problem
from cascade.passes.planner.from_nn import program_from_module
from cascade.passes.planner.memory import Step, plan_buffers
from cascade.passes.planner.program import ProgramGraph
from cascade.passes.planner.stripes import StripeConfig
from cascade.passes.planner.testing import AnalyticalCost
from cascade.tools import cascade_opt

ROOT = Path(__file__).resolve().parents[2]
RESIDUAL = ROOT / "test" / "passes" / "rolling_buffer" / "residual.mlir"
PLAN = "--cascade-plan=objective=min-sram accelerator=ethos-u55-128"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = cascade_opt.run(list(args))
    return status, capsys.readouterr().err


@pytest.fixture
def planned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """residual.mlir as cascade-plan plans it: a lone %y, then a group of %t1..%out_1."""
    output = tmp_path / "planned.mlir"
    assert run(capsys, str(RESIDUAL), PLAN, "-o", str(output)) == (0, "")
    return output.read_text()


def _edit(text: str, pattern: str, replacement: str) -> str:
    edited, count = re.subn(pattern, replacement, text, count=1)
    assert count == 1, pattern
    return edited


def _arith_for_depthwise(text: str) -> str:
    """%t2, a rolling depthwise convolution, replaced by an arith.addi with the same stripe."""
    line = next(line for line in text.splitlines() if "%t2 = nn.depthwise_conv2d" in line)
    stripe = re.search(r"cascade\.stripe = (#cascade\.stripe<.*?mode = rolling>)", line)
    assert stripe is not None
    indent = line[: len(line) - len(line.lstrip())]
    arith = f"{indent}%t2 = arith.addi %t1, %t1 {{cascade.stripe = {stripe.group(1)}}} : tensor<1x16x8x32xi8>"
    return text.replace(line, arith)


def _rolling_buffer_in_group(text: str) -> str:
    """A cascade.rolling_buffer in the group (rolling-buffer's, in its loops) between %t1 and %t2."""
    buffer = (
        "      %t1_rolling = cascade.rolling_buffer %t1 depth 3 index_map "
        "affine_map<(d0, d1, d2, d3) -> (d0, d1 mod 3, d2, d3)> : tensor<1x16x8x32xi8>\n"
    )
    return _edit(text, r"(\n)(\s+%t2 = nn\.depthwise_conv2d )%t1,", rf"\1{buffer}\2%t1_rolling,")


EDITS = {
    "stripe renamed": (
        lambda text: _edit(text, r"(%t3 = nn\.conv2d [^{]*\{)cascade\.stripe", r"\1cascade.bogus_op"),
        r"nn\.conv2d at {file}:12:7 in the cascade\.group at {file}:9:5 has no 'cascade\.stripe': "
        r"every operator of a cascade needs its stripe map",
    ),
    "arith operator": (
        _arith_for_depthwise,
        r"arith\.addi at {file}:11:7 in the cascade\.group at {file}:9:5 is not an nn operator: "
        r"{pass_name} works on cascades of nn operators, as cascade-plan plans them",
    ),
    "rolling buffer in a group": (
        _rolling_buffer_in_group,
        r"cascade\.rolling_buffer at {file}:11:7 in the cascade\.group at {file}:9:5 is not an nn operator",
    ),
}


@pytest.mark.parametrize("pass_flags", [["--rolling-buffer"], ["--allocate-memory"]], ids=lambda f: f[0][2:])
@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_cascade_is_a_located_error(
    planned: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str, pass_flags: list[str]
) -> None:
    change, expected = EDITS[edit]
    source = tmp_path / "edited.mlir"
    source.write_text(change(planned))
    pass_name = pass_flags[0][2:]
    status, stderr = run(capsys, str(source), *pass_flags)
    message = expected.format(file=re.escape(str(source)), pass_name=pass_name)
    assert status == 1
    assert re.fullmatch(rf"cascade-opt: error: {pass_name}: @residual: {message}[^\n]*\n", stderr), stderr


def test_the_unedited_plan_goes_through_both_passes(
    planned: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "planned.mlir"
    source.write_text(planned)
    status, stderr = run(capsys, str(source), "--rolling-buffer", "--allocate-memory", "-o", str(tmp_path / "out.mlir"))
    assert (status, stderr) == (0, "")


def test_the_planner_view_of_a_group_of_no_nn_operator_is_a_value_error() -> None:
    """Not a StopIteration: `scheduled_geometries` names the group."""
    module = parse_mlir(_GROUP_OF_ARITH, "arith.mlir")
    with pytest.raises(ValueError, match=r"cascade\.group at arith\.mlir:3:3 has no nn operator"):
        scheduled_geometries(main_function(module))


_GROUP_OF_ARITH = """
func.func @main(%x: tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
         stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %s = arith.addi %a, %a : tensor<1x16x16x8xi8>
    cascade.yield %s : tensor<1x16x16x8xi8>
  }
  func.return %r : tensor<1x16x16x8xi8>
}
"""


def test_plan_buffers_refuses_a_step_of_no_operator() -> None:
    """The step `scheduled_program` made for a group of no nn operator (first > sink)."""
    module = parse_mlir(RESIDUAL.read_text(), str(RESIDUAL))
    graph = ProgramGraph.build(program_from_module(module))
    alone = [Step(op, op, StripeConfig((), ()), frozenset(), False) for op in range(graph.size)]
    assert plan_buffers(graph, alone, AnalyticalCost())
    empty = Step(graph.size, graph.size - 1, StripeConfig((), ()), frozenset(), False)
    with pytest.raises(ValueError, match=rf"step {graph.size} covers operators {graph.size}\.\.{graph.size - 1}"):
        plan_buffers(graph, [*alone, empty], AnalyticalCost())


@pytest.mark.parametrize(
    ("accelerator", "system_config", "memory_mode", "problem"),
    [
        ("ethos-u55-128", None, None, None),
        ("ethos-u55-128", "Ethos_U65_Client_Server", "Shared_Sram", None),
        ("ethos-u55-256", None, "Sram_Only", None),
        ("ethos-u65-256", None, None, None),
        ("ethos-u65-512", "Ethos_U65_Client_Server", "Dedicated_Sram", None),
        ("ethos-u55-128", "Ethos_U65_Client_Server", "Dedicated_Sram", "only Ethos-U65 supports"),
        ("ethos-u55-64", None, "Dedicated_Sram_256KB", "only Ethos-U65 supports"),
        ("ethos-u65-256", "Ethos_U65_Embedded", "Dedicated_Sram", "the arena cannot live in OffChipFlash"),
    ],
)
def test_target_problem(accelerator: str, system_config: str | None, memory_mode: str | None, problem: str | None):
    found = target_problem(accelerator, system_config, memory_mode)
    assert (found is None) == (problem is None), found
    assert problem is None or (found is not None and problem in found)
