"""The ethosu verifiers accept exactly what Vela's register-stream generator encodes, and the
serializer reports what it refuses anyway (`ethos_u/serialize.py`: `SerializationError`).

The block-config check asks Vela's own `get_arch_block_config`, memoised by what it reads of a
command: a grid of block configs on several ops and accelerators must get the generator's
verdict, neither refusing a block the lowering may pick nor passing one the generator asserts
on.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import random
import subprocess
import sys
from pathlib import Path

import pytest
from ethosu.vela import api
from ethosu.vela.errors import VelaError
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from cascade.dialects import ethosu
from cascade.ethos_u import serialize
from cascade.ethos_u.targets import EthosUCommandStreamTarget, EthosUTFLiteTarget

# Ops whose block config the grid varies: `{block}` is replaced by `<h, w, d>`.
GRID_OPS = {
    "conv2d": "ethosu.conv2d ifm <i8, region 1, shape [18, 18, 32], at 0, layout nhwc, quant 0.5:0> "
    "ofm <i8, region 1, shape [16, 16, 48], at 0x4000, layout nhwc, quant 0.25:0> kernel <[3, 3]> "
    "padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 160>] "
    "biases [#ethosu.address_range<0, 0, 160>] block {block} traversal depth_first",
    "conv2d_int16": "ethosu.conv2d ifm <i16, region 1, shape [10, 10, 16], at 0, layout nhwc, quant 0.5:0> "
    "ofm <i16, region 1, shape [8, 8, 16], at 0x4000, layout nhwc, quant 0.25:0> kernel <[3, 3]> "
    "padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 160>] "
    "biases [#ethosu.address_range<0, 0, 160>] block {block} traversal part_kernel_first",
    "depthwise": "ethosu.depthwise_conv2d ifm <i8, region 1, shape [18, 18, 16], at 0, layout nhcwb16, "
    "quant 0.5:0> ofm <i8, region 1, shape [16, 16, 16], at 0x1800, layout nhcwb16, quant 0.5:0> "
    "kernel <[3, 3]> padding <0, 0, 0, 0> weights [#ethosu.address_range<0, 0x100, 160>] "
    "biases [#ethosu.address_range<0, 0, 160>] block {block} activation <sigmoid>",
    "average": "ethosu.pooling average ifm <i8, region 1, shape [16, 16, 32], at 0, layout nhwc, quant 0.5:0> "
    "ofm <i8, region 1, shape [8, 8, 32], at 0x2000, layout nhwc, quant 0.5:0> kernel <[2, 2], stride [2, 2]> "
    "padding <0, 0, 0, 0> block {block} upscale none",
    "reduce_sum": "ethosu.pooling reduce_sum ifm <i8, region 1, shape [4, 64, 16], at 0, layout nhwc, quant none:0> "
    "ofm <i32, region 1, shape [4, 64, 1], at 0x1000, layout nhwc, quant none:0> kernel <[1, 1]> "
    "padding <0, 0, 0, 0> block {block}",
    "add": "ethosu.elementwise add ifm <i16, region 1, shape [8, 32, 32], at 0, layout nhwc, quant 0.5:0> "
    "ifm2 <i16, region 1, shape [8, 32, 32], at 0x4000, layout nhwc, quant 0.25:3> "
    "ofm <i16, region 1, shape [8, 32, 32], at 0x8000, layout nhwc, quant 0.5:0> block {block}",
    "mul_scalar": "ethosu.elementwise mul ifm <i8, region 1, shape [8, 32, 64], at 0, layout nhwc, quant 0.5:0> "
    "scalar <2.0, i8, quant 0.5:0> ofm <i8, region 1, shape [8, 32, 64], at 0x8000, layout nhwc> "
    "block {block} activation <table_lookup, index 1>",
}
GRID_ACCELERATORS = ("ethos-u55-32", "ethos-u55-128", "ethos-u65-512")
GRID_BLOCKS = list(itertools.product((1, 2, 3, 8, 16, 33), (1, 2, 8, 16, 64, 65), (8, 16, 24, 64)))


def parse_module(text: str) -> ModuleOp:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(ethosu.EthosU)
    return Parser(ctx, text).parse_module()


def stream_of(accelerator: str, *commands: str) -> ethosu.CommandStreamOp:
    body = "\n".join(f"  {command}" for command in commands)
    module = parse_module(f'ethosu.command_stream "{accelerator}" {{\n{body}\n}}')
    stream = next(op for op in module.walk() if isinstance(op, ethosu.CommandStreamOp))
    return stream


def vela_encodes(command: ethosu.EthosUCommand, accelerator: str) -> bool:
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            api.npu_generate_register_command_stream([command.to_vela()], serialize.vela_accelerator(accelerator))
    except AssertionError:
        return False
    return True


def verifies(command: ethosu.EthosUCommand) -> bool:
    try:
        command.verify()
    except VerifyException:
        return False
    return True


# --------------------------------------------------------------------------- #
# The verifiers against Vela's generator
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("accelerator", GRID_ACCELERATORS)
@pytest.mark.parametrize("kind", sorted(GRID_OPS))
def test_block_config_verdict_is_the_generators(kind: str, accelerator: str) -> None:
    disagreements = []
    fitting = 0
    for height, width, depth in GRID_BLOCKS:
        command = stream_of(accelerator, GRID_OPS[kind].format(block=f"<{height}, {width}, {depth}>")).commands[0]
        expected = vela_encodes(command, accelerator)
        fitting += expected
        if verifies(command) != expected:
            disagreements.append(((height, width, depth), expected))
    assert not disagreements, f"verifier and generator disagree (block, generator's verdict): {disagreements}"
    assert 0 < fitting < len(GRID_BLOCKS), "the grid should hold blocks that fit and blocks that do not"


def test_block_config_verdict_depends_on_the_accelerator() -> None:
    """One memo entry per accelerator: the same command fits the larger SHRAM only."""
    command = GRID_OPS["depthwise"].format(block="<8, 16, 16>")
    assert verifies(stream_of("ethos-u55-256", command).commands[0])
    with pytest.raises(VerifyException, match=r"does not fit the shared buffer \(SHRAM\) of ethos-u55-128"):
        stream_of("ethos-u55-128", command).commands[0].verify()


def test_misfit_names_a_block_that_fits() -> None:
    command = stream_of("ethos-u55-128", GRID_OPS["depthwise"].format(block="<16, 16, 16>")).commands[0]
    with pytest.raises(VerifyException, match=r"; \[\d+, \d+, \d+\] does\n") as error:
        command.verify()
    advice = str(error.value).splitlines()[0].rpartition("; ")[2].removesuffix(" does")
    height, width, depth = (int(v) for v in advice.strip("[]").split(", "))
    assert verifies(command.with_block((height, width, depth), command.weight_ranges, command.bias_ranges))


def test_detached_command_skips_the_accelerator_checks() -> None:
    """Outside a stream there is no accelerator to check against (HasParent reports it)."""
    command = stream_of("ethos-u55-128", GRID_OPS["depthwise"].format(block="<16, 16, 16>")).commands[0]
    detached = command.clone()
    detached.verify_()  # the fields are fine; no block config verdict without an accelerator


def test_verifying_prints_nothing_on_stdout(tmp_path: Path) -> None:
    """Vela prints configuration warnings when its architecture is first built: not into our output."""
    source = tmp_path / "stream.mlir"
    source.write_text(f'ethosu.command_stream "ethos-u55-128" {{\n  {POOL}\n}}\n')
    cascade_opt = Path(sys.executable).with_name("cascade-opt")
    result = subprocess.run([str(cascade_opt), str(source)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("builtin.module {\n  ethosu.command_stream"), result.stdout[:200]


# --------------------------------------------------------------------------- #
# The serializer's last line of defence
# --------------------------------------------------------------------------- #

POOL = "ethosu.pooling max ifm <i8, region 1, shape [8, 8, 16], at 0, layout nhwc> ofm <i8, region 1, shape [8, 8, 16], at 0x800, layout nhwc> kernel <[1, 1]> padding <0, 0, 0, 0> block <8, 8, 16>"  # noqa: E501
DMA = "ethosu.dma src <0, 0x40, 64> dest <1, 0x1500, 64>"


@pytest.fixture
def refusing_generator(monkeypatch: pytest.MonkeyPatch):
    """Makes Vela's generator raise `error(stream)` for the streams `refuses(ops)` selects."""

    def install(refuses, error) -> None:
        generate = api.npu_generate_register_command_stream

        def fake(npu_ops, accelerator):
            if refuses(npu_ops):
                raise error
            return generate(npu_ops, accelerator)

        monkeypatch.setattr(api, "npu_generate_register_command_stream", fake)

    return install


def has_pooling(npu_ops) -> bool:
    return any(isinstance(op, api.NpuPoolingOperation) for op in npu_ops)


def test_an_assertion_becomes_one_line_naming_the_command(refusing_generator) -> None:
    refusing_generator(has_pooling, AssertionError("block_config does not fit\n  second line\nthird"))
    stream = stream_of("ethos-u55-128", DMA, POOL.replace("block <8, 8, 16>", 'block <8, 8, 16> name "pool"'))
    with pytest.raises(serialize.SerializationError) as error:
        serialize.command_stream_words(stream)
    assert str(error.value) == (
        "'pool': Vela rejected 'ethosu.pooling' (command 1 of the stream): AssertionError: block_config does not fit"
    )
    assert isinstance(error.value.__cause__, AssertionError)  # CASCADE_DEBUG=1 shows Vela's traceback


def test_an_empty_assertion_names_its_kind(refusing_generator) -> None:
    refusing_generator(has_pooling, AssertionError())
    with pytest.raises(serialize.SerializationError, match=r"\(command 0 of the stream\): AssertionError$"):
        serialize.command_stream_words(stream_of("ethos-u55-128", POOL))


def test_a_vela_error_names_the_operation_vela_gives(refusing_generator) -> None:
    # Vela's own index is believed: the generator fails on the whole stream only.
    refusing_generator(lambda ops: len(ops) == 3, VelaError("Address offset out of range: 9, in operation 2:Pooling"))
    stream = stream_of("ethos-u55-128", DMA, DMA, POOL)
    with pytest.raises(serialize.SerializationError) as error:
        serialize.command_stream_words(stream)
    assert (
        str(error.value) == "Vela rejected 'ethosu.pooling' (command 2 of the stream): Address offset out of range: 9"
    )


def test_a_limit_of_the_whole_stream_names_the_stream(refusing_generator) -> None:
    refusing_generator(
        lambda ops: len(ops) == 2, VelaError("The command stream size exceeds the hardware limit of 16 MiB.")
    )
    with pytest.raises(serialize.SerializationError) as error:
        serialize.command_stream_words(stream_of("ethos-u55-128", DMA, POOL))
    assert str(error.value) == (
        "Vela rejected the ethos-u55-128 command stream of 2 commands: "
        "The command stream size exceeds the hardware limit of 16 MiB."
    )


def test_a_long_message_is_clipped(refusing_generator) -> None:
    refusing_generator(has_pooling, ValueError("x" * 1000))
    with pytest.raises(serialize.SerializationError) as error:
        serialize.command_stream_words(stream_of("ethos-u55-128", POOL))
    assert str(error.value).endswith("ValueError: " + "x" * serialize.MAX_REJECTION + "...")


def test_the_functional_model_reports_a_refused_command(refusing_generator) -> None:
    # cascade-run programs each command's registers through Vela: its refusal is the model's
    # error (an InterpretationError once execute_lowered has it), not a crash inside Vela.
    from cascade.interpreter.ethosu import EthosUMachine, FunctionalModelError

    refusing_generator(has_pooling, AssertionError("block_config does not fit"))
    (pool,) = stream_of("ethos-u55-128", POOL.replace("block <8, 8, 16>", 'block <8, 8, 16> name "pool"')).commands
    with pytest.raises(serialize.SerializationError) as error:
        serialize.single_command_words(pool, "ethos-u55-128")
    assert str(error.value) == "'pool': Vela rejected 'ethosu.pooling': AssertionError: block_config does not fit"
    machine = EthosUMachine("ethos-u55-128", {1: bytearray(4096)})
    with pytest.raises(FunctionalModelError, match=r"^'pool': Vela rejected 'ethosu.pooling': AssertionError"):
        machine.execute(pool)


def test_targets_report_the_refusal_as_a_diagnostic(refusing_generator, monkeypatch: pytest.MonkeyPatch) -> None:
    refusing_generator(has_pooling, AssertionError("no"))
    module = ModuleOp([stream_of("ethos-u55-128", POOL).clone()])
    with pytest.raises(DiagnosticException, match=r"^ethosu-cs: Vela rejected 'ethosu.pooling' \(command 0"):
        EthosUCommandStreamTarget().emit(Context(), module, io.StringIO())
    with pytest.raises(DiagnosticException, match=r"^ethosu-cs: Vela rejected 'ethosu.pooling' \(command 0"):
        EthosUCommandStreamTarget(payload=True).emit(Context(), module, io.StringIO())

    from cascade.ethos_u import tflite_output

    def refuse(_module: ModuleOp) -> bytes:
        raise serialize.SerializationError("Vela rejected 'ethosu.pooling' (command 0 of the stream): no")

    monkeypatch.setattr(tflite_output, "lowered_tflite", refuse)
    with pytest.raises(DiagnosticException, match=r"^ethosu-tflite: Vela rejected 'ethosu.pooling'"):
        EthosUTFLiteTarget().emit_bytes(Context(), module)


# --------------------------------------------------------------------------- #
# Random commands: what verifies, Vela encodes
# --------------------------------------------------------------------------- #


def random_command(rng: random.Random) -> str:
    """A command of random kind, types, layouts, shapes, kernel, block and options, most of
    them valid in syntax, many not encodable."""

    def fm(data_type: str, shape: tuple[int, int, int], address: int) -> str:
        quant = rng.choice(["", ", quant none:0", ", quant 0.5:1", ", quant 0.01:-3"])
        layout = rng.choice(["nhwc", "nhcwb16"])
        return (
            f"<{data_type}, region 1, shape [{shape[0]}, {shape[1]}, {shape[2]}], at {address}, layout {layout}{quant}>"
        )

    height, width, depth = rng.choice([1, 2, 5, 8, 31]), rng.choice([1, 4, 7, 16, 64]), rng.choice([1, 8, 24, 64])
    kernel, stride = rng.choice([1, 2, 3, 5]), rng.choice([1, 2])
    ifm_type, ofm_type = rng.choice(["u8", "i8", "i16", "i32"]), rng.choice(["u8", "i8", "i16", "i32"])
    ifm = fm(ifm_type, (height * stride + kernel, width * stride + kernel, depth), 0)
    ofm = fm(ofm_type, (height, width, depth), 0x100000)
    block = f"<{rng.choice([1, 2, 4, 8, 16, 32])}, {rng.choice([1, 2, 8, 16, 64])}, {rng.choice([8, 16, 32, 64])}>"
    activation = rng.choice(
        ["", "", " activation <none_or_relu, min 0.0>", " activation <tanh>", " activation <sigmoid>"]
    )
    options = activation + rng.choice(["", "", " upscale nearest"]) + rng.choice(["", "", " fused_quantize"])
    padding = rng.choice(["<0, 0, 0, 0>", "<1, 1, 1, 1>"])
    kernel_head = f"kernel <[{kernel}, {kernel}], stride [{stride}, {stride}]> padding {padding}"
    constants = "weights [#ethosu.address_range<0, 0x100, 160>] biases [#ethosu.address_range<0, 0, 160>]"
    kind = rng.choice(["conv", "depthwise", "pool", "binary", "scalar", "unary"])
    if kind == "conv":
        traversal = rng.choice(["depth_first", "part_kernel_first"])
        return (
            f"ethosu.conv2d ifm {ifm} ofm {ofm} {kernel_head} {constants} block {block} traversal {traversal}{options}"
        )
    if kind == "depthwise":
        return f"ethosu.depthwise_conv2d ifm {ifm} ofm {ofm} {kernel_head} {constants} block {block}{options}"
    if kind == "pool":
        pooling = rng.choice(["max", "average", "reduce_sum"])
        return f"ethosu.pooling {pooling} ifm {ifm} ofm {ofm} {kernel_head} block {block}{options}"
    ifm = fm(ifm_type, (height, width, depth), 0)
    if kind == "unary":
        return f"ethosu.elementwise {rng.choice(['abs', 'lrelu', 'clz'])} ifm {ifm} ofm {ofm} block {block}{activation}"
    if kind == "scalar":
        operand = f"scalar <{rng.choice([0.0, 3.0, 100.0, -5.0])}, {ifm_type}{rng.choice(['', ', quant 0.5:0'])}>"
    else:
        operand = "ifm2 " + fm(
            ifm_type, (rng.choice([1, height]), rng.choice([1, width]), rng.choice([1, depth])), 0x80000
        )
    binary = rng.choice(["add", "sub", "mul", "min", "max", "shl"])
    return f"ethosu.elementwise {binary} ifm {ifm} {operand} ofm {ofm} block {block}{activation}"


def test_what_verifies_vela_encodes() -> None:
    rng = random.Random(7)
    accepted = refused = 0
    for _ in range(400):
        accelerator = rng.choice(list(ethosu.ACCELERATORS))
        stream = stream_of(accelerator, random_command(rng))
        try:
            stream.verify()
        except VerifyException:
            refused += 1
            continue
        accepted += 1
        serialize.command_stream_words(stream)  # raises SerializationError if Vela refuses it
    assert accepted > 50
    assert refused > 50
