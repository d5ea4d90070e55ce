"""The child process of the fuzz tests (`test_fuzz.py`): compiles one input at a time, in isolation.

Run as `python fuzz_worker.py`; it reads requests from stdin and answers on stdout, each frame a
4-byte big-endian length and a pickle. A request is `{"kind": "tflite" | "mlir", "data": ...,
"seed": int, "stages": bool}`; the answer is `("stage", name)` when a stage starts, then
`("done", outcome)`. With `"stages": False` only import, execution and the reference run.

Why a separate process: LiteRT aborts the whole process on some malformed models (not an
exception), a hang must be killable, and a runaway allocation must not take the test runner
down. The parent restarts the worker after a crash or a timeout and attributes it to the last
stage announced.

The pipeline an input goes through is `STAGES`: after import (TFLite or MLIR parse and verify)
every stage transforms the module, the IR is verified again (an invalid result is an internal
error of that stage), and, if the stage's IR is executable, it is run and must give exactly the
outputs of the `nn` program. The `nn` program itself must match LiteRT's reference kernels
bit for bit on every named tensor (TFLite inputs) and must print and parse back to the same
text. To fuzz a new stage (rolling-buffer, allocate-memory, lower-to-ethosu...), add a `Stage`.
"""

from __future__ import annotations

import os
import pickle
import resource
import struct
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, BinaryIO

import numpy as np
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.passes import PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from cascade.dialects import nn
from cascade.frontends.loader import LoadError, make_context, parse_mlir
from cascade.frontends.tflite import TFLiteImportError, import_tflite
from cascade.interpreter.nn import InterpretationError, main_function, run_program
from cascade.passes import get_all_passes

MEMORY_LIMIT = 6 * 2**30
"""Address-space limit of the worker: a runaway allocation raises MemoryError instead of
inviting the OOM killer onto the CI machine."""

RUN_LIMIT_BYTES = 64 * 2**20
"""Programs whose tensors add up to more than this are compiled but not executed: a mutated
shape can ask for gigabytes, and running those proves nothing the small ones do not."""


@dataclass(frozen=True)
class Stage:
    """One step after import: an xDSL pass pipeline, and how to execute its result.

    `execute(module, inputs)` returns the outputs of @main, or None if the IR of this stage is
    not executable yet; its outputs must equal those of the `nn` program bit for bit.
    """

    name: str
    pipeline: str
    execute: Callable[[ModuleOp, Sequence[np.ndarray]], list[np.ndarray] | None] | None = None
    check: Callable[[ModuleOp], None] | None = None
    """An invariant of the stage's result on every input, executed or not (raises Failure)."""


def _execute(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Runs the IR of any stage as cascade-run does: planned IR at tensor level, rolling buffers
    through their group view, allocated IR stripe by stripe in one flat SRAM (freed bytes
    poisoned), lowered IR through Vela's command stream and the NPU functional model."""
    from cascade.interpreter.scheduled import run_any

    return run_any(module, inputs).outputs


class Failure(Exception):
    """A broken invariant: the outcome is a failure of the fuzz test, with this message."""


def _check_allocation(module: ModuleOp) -> None:
    """The independent checker (`passes.memory_check`) accepts every allocated function: no two
    live buffers overlap (returned arguments included), sizes and alignment hold. Executed
    inputs are checked by the stripe executor too; this covers the ones too large to run."""
    from xdsl.dialects.func import FuncOp

    from cascade.passes.memory_check import check_memory

    for function in module.walk():
        if isinstance(function, FuncOp) and not function.is_declaration:
            if problems := check_memory(function):
                raise Failure(f"allocate-memory: @{function.sym_name.data}: invalid allocation: {problems[:3]}")


# The stages of `ethosu-pipeline` (passes/ethosu_pipeline.py), one by one, so that each result is
# verified, checked and executed.
STAGES: list[Stage] = [
    Stage("cascade-plan", "cascade-plan", _execute),
    Stage("rolling-buffer", "rolling-buffer", _execute),
    Stage("allocate-memory", "allocate-memory", _execute, _check_allocation),
    Stage("lower-to-ethosu", "lower-to-ethosu", _execute),
]


@dataclass
class Outcome:
    """What happened to one input; `status` is accepted, rejected or failure."""

    status: str
    stage: str
    error_class: str = ""
    message: str = ""
    reference: str = ""
    """ok, skipped, or `rejected: <reason>` when LiteRT could not run the model."""
    executed: bool = False
    stages_run: list[str] = field(default_factory=list)


class _Channel:
    def __init__(self, out: BinaryIO) -> None:
        self.out = out

    def send(self, message: Any) -> None:
        payload = pickle.dumps(message)
        self.out.write(struct.pack(">I", len(payload)) + payload)
        self.out.flush()


def _read_frame(stream: BinaryIO) -> Any | None:
    header = stream.read(4)
    if len(header) < 4:
        return None
    (length,) = struct.unpack(">I", header)
    return pickle.loads(stream.read(length))


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:500]


def _inputs(module: ModuleOp, seed: int) -> list[np.ndarray]:
    """Random inputs of @main: full-range int8 activations, small int32 values otherwise."""
    rng = np.random.default_rng(seed)
    arrays = []
    for arg in main_function(module).args:
        ty = arg.type
        assert isinstance(ty, TensorType)
        element = ty.element_type
        if isinstance(element, IntegerType) and element.width.data == 8:
            arrays.append(rng.integers(-128, 128, size=ty.get_shape(), dtype=np.int8))
        elif isinstance(element, IntegerType) and element.width.data == 32:
            arrays.append(rng.integers(-1000, 1000, size=ty.get_shape(), dtype=np.int32))
        else:
            raise InterpretationError(f"argument of type {ty} cannot be generated")
    return arrays


def _inputs_or_refusal(module: ModuleOp, seed: int, outcome: Outcome) -> list[np.ndarray] | None:
    """`_inputs`, or None with `outcome` rejected when the program cannot be run at all (its
    @main is a declaration, or takes what no input can be made for): the interpreter's own
    refusal, as `_run` counts it."""
    try:
        return _inputs(module, seed)
    except InterpretationError as error:
        outcome.status, outcome.stage = "rejected", "run"
        outcome.error_class, outcome.message = "InterpretationError", _one_line(error)
        return None


def _total_bytes(module: ModuleOp) -> int:
    total = 0
    for op in module.walk():
        for value in (*op.results, *(arg for region in op.regions for block in region.blocks for arg in block.args)):
            if isinstance(value.type, TensorType):
                total += nn.tensor_bytes(value.type)
    return total


def _print(module: ModuleOp) -> str:
    from io import StringIO

    stream = StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def _expected_run_error(error: InterpretationError) -> bool:
    """An interpreter refusal, not an interpreter bug: our own message, or a kernel's ValueError
    (the kernels raise ValueError exactly where TFLite itself refuses the operator)."""
    cause = error.__cause__
    return cause is None or isinstance(cause, InterpretationError | ValueError)


def _import(request: dict[str, Any], outcome: Outcome) -> ModuleOp | None:
    try:
        if request["kind"] == "tflite":
            module = import_tflite(request["data"])
            module.verify()
        else:
            module = parse_mlir(request["data"], "fuzz.mlir", make_context())
    except (TFLiteImportError, LoadError) as error:
        outcome.status, outcome.error_class, outcome.message = "rejected", type(error).__name__, _one_line(error)
        return None
    return module


def _check_roundtrip(module: ModuleOp, stage: str) -> None:
    """The printed IR parses back and prints identically (determinism and a sound custom syntax)."""
    text = _print(module)
    try:
        again = _print(parse_mlir(text, f"{stage}.mlir", make_context()))
    except LoadError as error:
        raise Failure(f"the IR printed after {stage} does not parse back: {_one_line(error)}") from None
    if again != text:
        raise Failure(f"the IR printed after {stage} prints differently once parsed back")


def _run(module: ModuleOp, inputs: Sequence[np.ndarray], stage: str, outcome: Outcome) -> Any:
    try:
        return run_program(module, inputs)
    except InterpretationError as error:
        if not _expected_run_error(error):
            cause = error.__cause__
            raise Failure(f"the interpreter crashed: {type(cause).__name__}: {_one_line(error)}") from None
        outcome.status, outcome.stage = "rejected", stage
        outcome.error_class, outcome.message = "InterpretationError", _one_line(error)
        return None


def _check_diagnostic(error: DiagnosticException, stage: str) -> None:
    """A pass refuses an input with one line that starts with the pass's name (the driver
    prints it after `cascade-opt: error: `); anything else is not a clean diagnostic."""
    text = str(error)
    if "\n" in text.strip() or not text.startswith(f"{stage}: "):
        raise Failure(f"{stage} refused the input without a clean one-line diagnostic: {text[:300]!r}")


def _compare_reference(request: dict[str, Any], module: ModuleOp, inputs: Sequence[np.ndarray], run: Any) -> str:
    from cascade.interpreter.litert import run_reference
    from cascade.tools.cascade_run import comparisons

    try:
        reference = run_reference(request["data"], inputs)
    except Exception as error:  # LiteRT refuses the model: counted, not a failure of ours
        return f"rejected: {type(error).__name__}: {_one_line(error)[:200]}"
    try:
        pairs = comparisons(module, run, reference)
    except Exception as error:
        raise Failure(f"cannot match tensors with LiteRT: {type(error).__name__}: {_one_line(error)}") from None
    mismatches = [f"{pair.label}: {problem}" for pair in pairs if (problem := pair.mismatch()) is not None]
    if mismatches or not pairs:
        raise Failure(f"not bit-exact against LiteRT ({len(mismatches)}/{len(pairs)} differ): {mismatches[:3]}")
    return "ok"


def handle(request: dict[str, Any], channel: _Channel) -> Outcome:
    """Compile one input through every stage and check every invariant."""
    if request["kind"] == "selftest":
        # For the tests of the parent's time bound and crash handling: hang or die on request.
        channel.send(("stage", "selftest"))
        if request["action"] == "abort":
            os.abort()
        time.sleep(3600)
    outcome = Outcome("accepted", "import")
    channel.send(("stage", "import"))
    module = _import(request, outcome)
    if module is None:
        return outcome
    ctx = make_context()
    passes = get_all_passes()
    try:
        channel.send(("stage", "print"))
        _check_roundtrip(module, "import")
        runnable = _total_bytes(module) <= RUN_LIMIT_BYTES
        inputs = reference_outputs = None
        if runnable:
            channel.send(("stage", "run"))
            inputs = _inputs_or_refusal(module, request["seed"], outcome)
            if inputs is None:
                return outcome
            run = _run(module, inputs, "run", outcome)
            if run is None:
                return outcome
            outcome.executed = True
            reference_outputs = run.outputs
            if request["kind"] == "tflite":
                channel.send(("stage", "reference"))
                outcome.reference = _compare_reference(request, module, inputs, run)
        stages = STAGES if request.get("stages", True) else []
        for position, stage in enumerate(stages):
            outcome.stage = stage.name
            channel.send(("stage", stage.name))
            pipeline = PassPipeline.parse_spec(passes, stage.pipeline)
            try:
                pipeline.apply(ctx, module)
            except VerifyException as error:
                raise Failure(f"{stage.name} produced IR that does not verify: {_one_line(error)}") from None
            except DiagnosticException as error:
                _check_diagnostic(error, stage.name)
                outcome.status, outcome.error_class, outcome.message = (
                    "rejected",
                    type(error).__name__,
                    _one_line(error),
                )
                return outcome
            try:
                module.verify()
            except VerifyException as error:
                raise Failure(f"{stage.name} produced IR that does not verify: {_one_line(error)}") from None
            # Printing and parsing back costs as much as a stage: every input checks it after
            # the last stage, one in four (by its seed) after each of the others too.
            if position == len(stages) - 1 or request["seed"] % 4 == 0:
                _check_roundtrip(module, stage.name)
            if stage.check is not None:
                stage.check(module)
            outcome.stages_run.append(stage.name)
            if stage.execute is not None and inputs is not None and reference_outputs is not None:
                channel.send(("stage", f"{stage.name}:run"))
                try:
                    outputs = stage.execute(module, inputs)
                except InterpretationError as error:
                    raise Failure(f"the IR after {stage.name} does not run: {_one_line(error)}") from None
                if outputs is not None and any(
                    not np.array_equal(a, b) for a, b in zip(outputs, reference_outputs, strict=True)
                ):
                    raise Failure(f"the IR after {stage.name} computes different outputs than the nn program")
    except Failure as failure:
        outcome.status, outcome.error_class, outcome.message = "failure", "Failure", str(failure)
    except Exception as error:  # anything else is an unexpected exception: the bug we look for
        outcome.status, outcome.error_class = "failure", type(error).__name__
        outcome.message = f"{_one_line(error)} | {traceback.format_exc(limit=-3)!r}"
    return outcome


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    # The protocol owns the real stdout; anything printed by a library goes to stderr instead.
    channel = _Channel(os.fdopen(os.dup(1), "wb"))
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    channel.send(("ready", os.getpid()))
    while (request := _read_frame(requests)) is not None:
        channel.send(("done", asdict(handle(request, channel))))


if __name__ == "__main__":
    main()
