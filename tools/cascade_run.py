"""cascade-run: execute a program on int8 inputs, and optionally check it against TFLite.

    cascade-run model.tflite --seed 3
    cascade-run program.mlir --inputs inputs.npz --outputs outputs.npz
    cascade-run program.mlir --compare-tflite model.tflite

With --compare-tflite, LiteRT runs the model with TFLite's reference kernels on the
same inputs and every tensor the two programs share is compared: each computed value
that carries a TFLite tensor name as its location (all intermediates of an imported
`nn` program) and the outputs, by position. One line per mismatch, then
`bit-exact: K/N tensors`; the exit status is 0 only if K == N and N > 0.
"""

from __future__ import annotations

import argparse
import hashlib
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, SSAValue

from cascade.frontends.loader import LoadError, load_module, location_name
from cascade.interpreter.litert import LiteRTUnavailable, ReferenceRun, run_reference
from cascade.interpreter.nn import (
    InterpretationError,
    ProgramRun,
    check_tensor_sizes,
    constant_outputs,
    input_types,
    main_function,
)
from cascade.interpreter.scheduled import run_any
from cascade.tools.outcome import exit_status

PROG = "cascade-run"


class RunError(Exception):
    """Bad input to cascade-run; printed as one line, exit status 1."""


class _Parser(argparse.ArgumentParser):
    """Usage errors are bad input too: one `error:` line and exit status 1 (argparse exits 2)."""

    def error(self, message: str) -> NoReturn:
        raise RunError(message)


def _seed(text: str) -> int:
    """A --seed: numpy takes non-negative integers only."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got '{text}'")
    return seed


def random_inputs(module: ModuleOp, seed: int) -> list[np.ndarray]:
    """Uniform int8 inputs over the whole range, so activations take many distinct values."""
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=ty.get_shape(), dtype=np.int8) for ty in input_types(module)]


def read_inputs(path: Path, module: ModuleOp) -> list[np.ndarray]:
    """Inputs from an .npz: `arr_0, arr_1, ...` in argument order, or one array per argument name."""
    try:
        archive = np.load(path)
    except OSError as error:
        raise RunError(f"{path}: cannot read inputs: {error.strerror or error}") from None
    except (ValueError, EOFError) as error:
        raise RunError(f"{path}: cannot read inputs: {error}") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise RunError(f"{path}: cannot read inputs: expected an .npz archive (numpy.savez), got a single array")
    types = input_types(module)
    function = main_function(module)
    inputs = []
    used = []
    for index, (arg, ty) in enumerate(zip(function.args, types, strict=True)):
        keys = [f"arr_{index}", arg.name_hint or "", location_name(arg) or ""]
        key = next((k for k in keys if k and k in archive.files), None)
        if key is None:
            raise RunError(f"{path}: no array for input {index} (tried {', '.join(k for k in keys if k)})")
        used.append(key)
        value = archive[key]
        if tuple(value.shape) != ty.get_shape() or value.dtype != np.int8:
            raise RunError(
                f"{path}: input '{key}' is {value.dtype}{list(value.shape)}, expected int8{list(ty.get_shape())}"
            )
        inputs.append(value)
    # An array no input takes is a mistake (a misspelt name, the wrong file), not a spare.
    if unused := [name for name in archive.files if name not in used]:
        raise RunError(
            f"{path}: no input of @{function.sym_name.data} takes {', '.join(map(repr, unused))} "
            f"(it has {len(types)} input{'s' if len(types) != 1 else ''}: arr_0, ... or their names)"
        )
    return inputs


@dataclass
class Comparison:
    label: str
    ours: np.ndarray
    theirs: np.ndarray

    def mismatch(self) -> str | None:
        if self.ours.shape != self.theirs.shape:
            return f"shape {list(self.ours.shape)} vs TFLite {list(self.theirs.shape)}"
        differ = self.ours != self.theirs
        if not differ.any():
            return None
        worst = np.abs(self.ours.astype(np.int64) - self.theirs.astype(np.int64)).max()
        return f"{int(differ.sum())} of {differ.size} elements differ, max |difference| {worst}"


def comparisons(module: ModuleOp, run: ProgramRun, reference: ReferenceRun) -> list[Comparison]:
    """Pairs of tensors to compare: named computed values, then outputs not already named."""
    pairs: list[Comparison] = []
    compared: set[SSAValue] = set()
    for value, ours in run.values.items():
        if not _is_computed(value):
            continue
        name = location_name(value)
        if name is None or name not in reference.tensors:
            continue
        pairs.append(Comparison(f"'{name}'", ours, reference.tensors[name]))
        compared.add(value)
    returned = list(main_function(module).body.block.last_op.operands)  # type: ignore[union-attr]
    if len(returned) != len(reference.outputs):
        raise RunError(f"the program has {len(returned)} outputs but the TFLite model has {len(reference.outputs)}")
    for index, (value, ours, theirs) in enumerate(zip(returned, run.outputs, reference.outputs, strict=True)):
        if value not in compared:
            pairs.append(Comparison(f"output {index}", ours, theirs))
    return pairs


def _is_computed(value: SSAValue) -> bool:
    """Activations: arguments of @main and results of operators other than constants."""
    if isinstance(value, BlockArgument):
        return True
    return value.owner.name != "arith.constant"


def describe_tensor(array: np.ndarray) -> str:
    digest = hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]
    return (
        f"{array.dtype}{list(array.shape)} min {array.min()} max {array.max()} "
        f"distinct {len(np.unique(array))} sha256 {digest}"
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "file", help="a .tflite model or an .mlir program (nn, scheduled or lowered); - reads standard input"
    )
    parser.add_argument("--seed", type=_seed, default=0, help="seed of the random int8 inputs (default 0)")
    parser.add_argument("--inputs", type=Path, help=".npz with one int8 array per input (arr_0, ... or names)")
    parser.add_argument("--outputs", type=Path, help="write the outputs to this .npz")
    parser.add_argument("--compare-tflite", type=Path, metavar="MODEL", help="compare against LiteRT's reference")
    return parser.parse_args(argv)


def _read_reference(path: Path) -> bytes:
    try:
        model = path.read_bytes()
    except OSError as error:
        raise RunError(f"{path}: cannot read: {error.strerror or error}") from None
    if model[4:8] != b"TFL3":
        raise RunError(f"{path}: not a TFLite file: the flatbuffer identifier 'TFL3' is missing")
    return model


def run(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # The reference is read first: a bad --compare-tflite fails before any work is done.
    model = _read_reference(args.compare_tflite) if args.compare_tflite is not None else None
    module = load_module(args.file)
    try:
        check_tensor_sizes(module)  # before the random inputs are allocated
    except InterpretationError as error:
        raise RunError(f"{args.file}: {error}") from None
    inputs = read_inputs(args.inputs, module) if args.inputs else random_inputs(module, args.seed)
    result = run_any(module, inputs)
    for index, output in enumerate(result.outputs):
        print(f"output {index}: {describe_tensor(output)}")
    if args.outputs:
        try:
            np.savez(args.outputs, *result.outputs)
        except OSError as error:
            raise RunError(f"{args.outputs}: cannot write: {error.strerror or error}") from None
    if model is None:
        return 0
    try:
        reference = run_reference(model, inputs)
    except (ValueError, RuntimeError, IndexError, TypeError, struct.error) as error:
        # LiteRT reports a model it cannot load or run with these, and the flatbuffer reader of
        # the softmax check the others on a corrupt file; say which file it was.
        reason = " ".join(str(error).split())
        raise RunError(f"{args.compare_tflite}: LiteRT cannot run the model: {reason}") from None
    pairs = comparisons(module, result, reference)
    exact = 0
    for pair in pairs:
        problem = pair.mismatch()
        if problem is None:
            exact += 1
        else:
            print(f"mismatch {pair.label}: {problem}")
    print(f"bit-exact: {exact}/{len(pairs)} tensors")
    for index in constant_outputs(result.outputs):
        # Not a failure (a model may saturate), but an equal constant proves little.
        print(f"note: output {index} holds one value on these inputs: its comparison shows little")
    return 0 if pairs and exact == len(pairs) else 1


def main(argv: Sequence[str] | None = None) -> None:
    # Vela refusing a lowered stream the verifiers let through (cascade-run serializes it).
    from cascade.ethos_u.serialize import SerializationError

    expected = (LoadError, RunError, InterpretationError, LiteRTUnavailable, SerializationError)
    sys.exit(exit_status(PROG, lambda: run(argv), expected))


if __name__ == "__main__":
    main()
