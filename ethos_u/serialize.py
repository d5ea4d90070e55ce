"""Serialization of `ethosu.command_stream` through Vela, and its inverse, a disassembler.

* `command_stream_words` / `command_stream_bytes`: `npu_generate_register_command_stream`
  (register shadowing, DMA/kernel waits, BLOCKDEP, SHRAM layout are Vela's); whatever it
  fails on raises `SerializationError`, one line naming the command.
* `driver_payload`: `npu_create_driver_payload` (the COP1 blob the Ethos-U driver runs).
* `decode_registers`: replays register writes and snapshots the register file at every
  `NPU_OP_*` command (the hardware's view of an operation).
* `disassemble`: words, raw command-stream bytes, a COP1 driver payload, or a Vela-written
  `.tflite` (its `ethos-u` custom operator) back into an `ethosu.command_stream`.

What a register stream does not hold, and so what `disassemble` cannot recover:
quantization *scales* (conv scales live in the bias records; pooling and elementwise scales
are only present as the integer OFM/OPA/OPB scale registers), `fused_quantize`, debug names,
and the IFM's full height/width (the hardware derives them from the OFM box, kernel, stride
and padding; the lowering always programs exactly that shape). The disassembled feature maps
therefore carry `quant <none:zp>` and clamps relative to the zero point, except an 8-bit
elementwise add or sub and any mul: they get scales (or mul's explicit `rescale`) from which
Vela programs the very registers decoded (`_elementwise_scaling`), so that such a stream
serializes back word for word. `command_signature` compares two streams modulo all these fields.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import struct
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cascade.dialects import ethosu

__all__ = [
    "DecodedOperation",
    "DisassemblyError",
    "SerializationError",
    "command_from_registers",
    "command_signature",
    "command_stream_bytes",
    "command_stream_words",
    "command_words",
    "decode_registers",
    "disassemble",
    "disassemble_file",
    "driver_payload",
    "single_command_words",
    "stream_signature",
    "vela_accelerator",
]

PAYLOAD_FLAG = 0x4000
"""Bit 14 of a command word: a 32-bit payload word follows (`CmdMode.Payload32`)."""

OPCODE_MASK = 0x3FF

_COP1 = int.from_bytes(b"COP1", "little")
_DA_CMD_STREAM = 0x02
_DA_CONFIG = 0x01
_DA_NOP = 0x05


def vela_accelerator(accelerator: str) -> Any:
    """The `NpuAccelerator` of one of our accelerator names."""
    from ethosu.vela import api

    return api.NpuAccelerator[ethosu.ACCELERATORS[accelerator]]


class SerializationError(ValueError):
    """Vela's register-stream generator rejected a command stream. The message is one line
    and names the command (and where it is written, when known)."""


def command_stream_words(stream: ethosu.CommandStreamOp) -> list[int]:
    """The register command stream of `stream`: 32-bit words, ending with `NPU_OP_STOP`.

    Raises SerializationError if Vela's generator fails on it: the verifiers reject what it
    is known to refuse, and this catches the rest.
    """
    try:
        return _generate(stream.to_vela(), stream.vela_accelerator)
    except Exception as error:  # Vela refuses input with VelaError, but also with asserts and crashes
        raise SerializationError(_rejection(stream, error)) from error


def single_command_words(command: ethosu.EthosUCommand, accelerator: str) -> list[int]:
    """The register command stream of `command` alone on `accelerator`.

    Raises SerializationError (one line naming the command) if Vela's generator fails on it.
    """
    try:
        return _generate([command.to_vela()], vela_accelerator(accelerator))
    except Exception as error:  # as in command_stream_words
        raise SerializationError(f"{_where(command)}Vela rejected '{command.name}': {_vela_message(error)}") from error


def _generate(npu_ops: list[Any], accelerator: Any) -> list[int]:
    """Vela's `npu_generate_register_command_stream`, quietly."""
    from ethosu.vela import api

    # Vela prints configuration warnings on stdout ("No configuration file specified...");
    # they would end up in our output, so keep them out. numpy's warnings (a division by
    # a zero scale) would come on stderr before the error they lead to.
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return list(api.npu_generate_register_command_stream(npu_ops, accelerator))


_VELA_OPERATION = re.compile(r",? in operation (\d+):\w+$")
"""The suffix Vela's generator adds to a VelaError: the index of the failing operation."""

MAX_REJECTION = 300
"""Characters of Vela's message kept in a SerializationError."""


def _rejection(stream: ethosu.CommandStreamOp, error: Exception) -> str:
    """`<where>: Vela rejected '<op>' (command N of the stream): <Vela's message, one line>`."""
    message = _vela_message(error)
    index = None
    if (match := _VELA_OPERATION.search(message)) is not None:
        index, message = int(match[1]), message[: match.start()]
    commands = stream.commands
    if index is None:
        index = _failing_command(commands, stream.vela_accelerator)
    if index is None or index >= len(commands):
        return f"Vela rejected the {stream.accelerator.data} command stream of {len(commands)} commands: {message}"
    command = commands[index]
    return f"{_where(command)}Vela rejected '{command.name}' (command {index} of the stream): {message}"


def _failing_command(commands: Sequence[ethosu.EthosUCommand], accelerator: Any) -> int | None:
    """The first command Vela's generator fails on by itself, None if every one passes alone
    (a limit of the whole stream, such as its 16 MiB)."""
    for index, command in enumerate(commands):
        try:
            _generate([command.to_vela()], accelerator)
        except Exception:  # the same failure as in the whole stream, whatever its kind
            return index
    return None


def _vela_message(error: Exception) -> str:
    """The first line of Vela's message, its repeated prefix once, clipped to MAX_REJECTION
    characters; the exception's type leads it unless it is a VelaError (an assert, a crash)."""
    from ethosu.vela.errors import VelaError

    lines = str(getattr(error, "error_msg", error)).strip().splitlines()
    message = lines[0].strip() if lines else ""
    # Vela re-raises its alignment and size errors with their prefix once more.
    message = re.sub(r"^([A-Z][\w ]*: )\1+", r"\1", message)
    if len(message) > MAX_REJECTION:
        message = message[:MAX_REJECTION] + "..."
    if not isinstance(error, VelaError):
        message = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return message


def _where(op: ethosu.EthosUCommand) -> str:
    """`file:line:col: ` of a parsed op, `'name': ` of a named one, else nothing."""
    from xdsl.dialects.builtin import NameLoc

    from cascade.frontends.loader import format_location

    if (location := format_location(op.location)) is not None:
        return f"{location}: "
    if isinstance(op.location, NameLoc):
        return f"'{op.location.desc.data}': "
    if op.debug_name is not None:
        return f"'{op.debug_name.data}': "
    return ""


def command_stream_bytes(stream: ethosu.CommandStreamOp, accelerator: str | None = None) -> bytes:
    """The register command stream as little-endian bytes. `accelerator` overrides the one
    the stream names."""
    if accelerator is not None and accelerator != stream.accelerator.data:
        stream = ethosu.CommandStreamOp(accelerator, [op.clone() for op in stream.commands])
    words = command_stream_words(stream)
    return struct.pack(f"<{len(words)}I", *words)


def driver_payload(stream: ethosu.CommandStreamOp | Sequence[int], accelerator: str | None = None) -> bytes:
    """The COP1 driver payload of a stream (or of its words, with `accelerator`)."""
    from ethosu.vela import api

    if isinstance(stream, ethosu.CommandStreamOp):
        words = command_stream_words(stream)
        accelerator = accelerator or stream.accelerator.data
    else:
        words = list(stream)
    if accelerator is None:
        raise ValueError("driver_payload of raw words needs an accelerator")
    return api.npu_create_driver_payload(words, vela_accelerator(accelerator))


# --------------------------------------------------------------------------- #
# Decoding
# --------------------------------------------------------------------------- #


@dataclass
class DecodedOperation:
    """One `NPU_OP_*` command with the register file as it stood when it was issued.

    `registers` maps a register name (`cmd0`/`cmd1` member name without `NPU_SET_`) to its
    16-bit parameter, and `payloads` maps cmd1 registers to their 32-bit payload.
    `waits` lists the `NPU_OP_DMA_WAIT`/`NPU_OP_KERNEL_WAIT` commands issued before it.
    """

    opcode: str
    param: int
    registers: dict[str, int]
    payloads: dict[str, int]
    offset: int
    waits: list[tuple[str, int]] = field(default_factory=list)

    def reg(self, name: str, signed: bool = False) -> int:
        value = self.registers[name]
        return value - 0x10000 if signed and value & 0x8000 else value

    def address(self, name: str) -> int:
        """A cmd1 address: the payload plus the high bits Vela puts in the parameter."""
        return self.payloads[name] | (self.registers.get(name, 0) << 32)


def decode_registers(words: Sequence[int]) -> list[DecodedOperation]:
    """Replays a register command stream; one `DecodedOperation` per operation command.

    `NPU_OP_STOP` ends decoding; `NPU_OP_*_WAIT` are attached to the next operation.
    """
    from ethosu.vela.ethos_u55_regs.ethos_u55_regs import cmd0, cmd1

    registers: dict[str, int] = {}
    payloads: dict[str, int] = {}
    operations: list[DecodedOperation] = []
    waits: list[tuple[str, int]] = []
    index = 0
    while index < len(words):
        word = int(words[index])
        code, param = word & 0xFFFF, (word >> 16) & 0xFFFF
        offset = index * 4
        if code & PAYLOAD_FLAG:
            if index + 1 >= len(words):
                raise ValueError(f"command at byte {offset:#x} lacks its payload word")
            name = cmd1(code & OPCODE_MASK).name.removeprefix("NPU_SET_")
            registers[name] = param
            payloads[name] = int(words[index + 1])
            index += 2
            continue
        name = cmd0(code & OPCODE_MASK).name
        index += 1
        if name == "NPU_OP_STOP":
            break
        if name in ("NPU_OP_DMA_WAIT", "NPU_OP_KERNEL_WAIT"):
            waits.append((name, param))
        elif name.startswith("NPU_OP_"):
            if name not in ("NPU_OP_IRQ", "NPU_OP_PMU_MASK"):
                operations.append(DecodedOperation(name, param, dict(registers), dict(payloads), offset, waits))
                waits = []
        else:
            registers[name.removeprefix("NPU_SET_")] = param
    return operations


def _words_from_bytes(data: bytes) -> list[int]:
    if len(data) % 4:
        raise ValueError(f"a command stream is whole 32-bit words, got {len(data)} bytes")
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def _payload_words(words: list[int]) -> list[int]:
    """The register command stream inside a COP1 driver payload."""
    index = 1
    while index < len(words):
        tag = words[index]
        kind = tag & 0xFF
        if kind == _DA_CONFIG:
            index += 3
        elif kind == _DA_NOP:
            index += 1
        elif kind == _DA_CMD_STREAM:
            length = ((tag >> 8) & 0xFF) << 16 | (tag >> 16)
            return words[index + 1 : index + 1 + length]
        else:
            raise ValueError(f"unsupported driver action {kind:#x} in the COP1 payload")
    raise ValueError("COP1 payload without a command stream")


def _accelerator_from_payload(words: list[int]) -> str | None:
    """Our accelerator name from a COP1 config word (product, MACs per cycle)."""
    if len(words) < 3 or words[1] & 0xFF != _DA_CONFIG:
        return None
    config = words[2]
    macs = 1 << (config & 0xF)
    product = (config >> 28) & 0xF
    name = f"ethos-u{65 if product == 1 else 55}-{macs}"
    return name if name in ethosu.ACCELERATORS else None


def payload_accelerator(data: bytes | bytearray) -> str | None:
    """The accelerator a COP1 driver payload names in its config word (None: it names none)."""
    words = _words_from_bytes(bytes(data))
    return _accelerator_from_payload(words) if words and words[0] == _COP1 else None


def command_words(data: bytes | bytearray) -> list[int]:
    """The register command stream in raw little-endian bytes or in a COP1 driver payload
    (e.g. `cmd_data` of `vela --output-format raw`)."""
    words = _words_from_bytes(bytes(data))
    return _payload_words(words) if words and words[0] == _COP1 else words


def disassemble(
    data: Sequence[int] | bytes | bytearray | str | Path,
    accelerator: str | None = None,
) -> ethosu.CommandStreamOp:
    """Decodes a register command stream back into `ethosu` ops.

    `data` is a list of words, raw little-endian command-stream bytes, a COP1 driver payload,
    or the path of a Vela-written `.tflite` (its first `ethos-u` operator). The accelerator is
    read from a COP1 header when there is one, else `accelerator` (default ethos-u55-128).
    """
    if isinstance(data, str | Path):
        try:
            data = _tflite_images(Path(data).read_bytes())[0].words
        except DisassemblyError as error:
            raise ValueError(f"{data}: {error}") from None
    if isinstance(data, bytes | bytearray):
        words = _words_from_bytes(bytes(data))
    else:
        words = [int(w) for w in data]
    if words and words[0] == _COP1:
        accelerator = accelerator or _accelerator_from_payload(words)
        words = _payload_words(words)
    commands = [command_from_registers(op) for op in decode_registers(words)]
    return ethosu.CommandStreamOp(accelerator or "ethos-u55-128", commands)


_DATA_TYPES = {
    (0, 0): ethosu.DataType.UINT8,
    (0, 1): ethosu.DataType.INT8,
    (1, 0): ethosu.DataType.UINT16,
    (1, 1): ethosu.DataType.INT16,
    (2, 1): ethosu.DataType.INT32,
    (2, 0): ethosu.DataType.INT32,
}
_ROUNDING = [ethosu.RoundingMode.TFL, ethosu.RoundingMode.TRUNCATE, ethosu.RoundingMode.NATURAL]
_UPSCALE = [ethosu.ResamplingMode.NONE, ethosu.ResamplingMode.NEAREST, ethosu.ResamplingMode.TRANSPOSE]
_POOLING = [ethosu.PoolingKind.MAX, ethosu.PoolingKind.AVERAGE, ethosu.PoolingKind.REDUCE_SUM]
_ELEMENTWISE = [
    ethosu.ElementwiseKind.MUL,
    ethosu.ElementwiseKind.ADD,
    ethosu.ElementwiseKind.SUB,
    ethosu.ElementwiseKind.MIN,
    ethosu.ElementwiseKind.MAX,
    ethosu.ElementwiseKind.LRELU,
    ethosu.ElementwiseKind.ABS,
    ethosu.ElementwiseKind.CLZ,
    ethosu.ElementwiseKind.SHR,
    ethosu.ElementwiseKind.SHL,
]


def _feature_map(
    op: DecodedOperation,
    prefix: str,
    shape: tuple[int, int, int],
    precision: int,
    precision_shift: int,
    scale: float | None = None,
) -> ethosu.FeatureMapAttr:
    """An IFM/IFM2/OFM from its registers; `shape` (and a `scale` that reproduces them,
    `_elementwise_scaling`) is supplied by the caller."""
    data_type = _DATA_TYPES[((precision >> precision_shift) & 3, precision & 1)]
    layout = ethosu.Layout.NHCWB16 if precision & (1 << 6) else ethosu.Layout.NHWC
    tiles = ethosu.TileBoxAttr(
        op.reg(f"{prefix}_HEIGHT0_M1") + 1,
        op.reg(f"{prefix}_HEIGHT1_M1") + 1,
        op.reg(f"{prefix}_WIDTH0_M1") + 1,
        tuple(op.address(f"{prefix}_BASE{i}") for i in range(4)),
    )
    strides = (op.address(f"{prefix}_STRIDE_Y"), op.address(f"{prefix}_STRIDE_X"), op.address(f"{prefix}_STRIDE_C"))
    return ethosu.FeatureMapAttr(
        data_type,
        op.reg(f"{prefix}_REGION"),
        shape,
        tiles,
        layout,
        (scale, op.reg(f"{prefix}_ZERO_POINT", signed=True)),
        strides=strides,
    )


def _activation(op: DecodedOperation, ofm: ethosu.FeatureMapAttr) -> ethosu.ActivationAttr | None:
    """The clamp in the OFM's real domain (scale 1 when it has none), which Vela quantizes back."""
    code = op.reg("ACTIVATION") & 0xFFF
    low, high = op.reg("ACTIVATION_MIN", signed=True), op.reg("ACTIVATION_MAX", signed=True)
    dtype = ofm.data_type.data
    bits = dtype.size_in_bytes * 8
    signed = dtype.name.startswith("INT")
    type_min = -(1 << (bits - 1)) if signed else 0
    type_max = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    type_min, type_max = max(type_min, -(1 << 15)), min(type_max, (1 << 15) - 1)
    quant = ofm.quantization_or_none
    zero_point = 0 if quant is None else quant.zero_point.data
    scale = 1.0 if quant is None or quant.scale_value is None else quant.scale_value
    real_low = None if low == type_min else (low - zero_point) * scale
    real_high = None if high == type_max else (high - zero_point) * scale
    if code >= 16:
        return ethosu.ActivationAttr(ethosu.ActivationKind.TABLE_LOOKUP, real_low, real_high, code - 16)
    kind = {0: ethosu.ActivationKind.NONE_OR_RELU, 3: ethosu.ActivationKind.TANH, 4: ethosu.ActivationKind.SIGMOID}[
        code
    ]
    if kind == ethosu.ActivationKind.NONE_OR_RELU and real_low is None and real_high is None:
        return None
    return ethosu.ActivationAttr(kind, real_low, real_high)


def _core_ranges(op: DecodedOperation, kind: str) -> list[ethosu.AddressRangeAttr]:
    """The `kind` (WEIGHT or SCALE) ranges of every core: core 0's, and core 1's when a two-core
    Ethos-U65-512 stream gives it a non-empty one (`NPU_SET_<kind>1_BASE/LENGTH`)."""
    region = op.reg(f"{kind}_REGION")
    ranges = [ethosu.AddressRangeAttr(region, op.address(f"{kind}_BASE"), op.payloads[f"{kind}_LENGTH"])]
    if op.payloads.get(f"{kind}1_LENGTH"):
        ranges.append(ethosu.AddressRangeAttr(region, op.address(f"{kind}1_BASE"), op.payloads[f"{kind}1_LENGTH"]))
    return ranges


@dataclass(frozen=True)
class _Scaling:
    """Scales (and an explicit OFM rescale) from which Vela programs an elementwise
    operation's OPA/OPB/OFM scale registers; None: no scale."""

    ifm: float | None = None
    ifm2: float | None = None
    ofm: float | None = None
    rescale: tuple[int, int] | None = None


class _ScaleRecorder:
    """Stands in for Vela's command emitter: keeps the scale registers it is given."""

    def __init__(self) -> None:
        self.registers: dict[str, tuple[int, int]] = {}

    def cmd1_with_offset(self, cmd: Any, offset: int, param: int = 0) -> None:
        self.registers[cmd.name.removeprefix("NPU_SET_")] = (int(offset) & 0xFFFFFFFF, int(param) & 0xFFFF)


def _vela_scale_registers(kind: ethosu.ElementwiseKind, scaling: _Scaling, reversed_operands: bool) -> tuple:
    """(scale registers, operand to scale) that Vela programs for `scaling`."""
    from ethosu.vela import api
    from ethosu.vela.register_command_stream_generator import generate_scaling_for_elementwise

    npu_op = api.NpuElementWiseOperation(getattr(api.NpuElementWiseOp, kind.name))
    fms = []
    for scale in (scaling.ifm, scaling.ifm2, scaling.ofm):
        fm = api.NpuFeatureMap()
        fm.data_type = api.NpuDataType.INT8
        fm.quantization = api.NpuQuantization(scale, 0)
        fms.append(fm)
    npu_op.ifm, npu_op.ifm2, npu_op.ofm = fms
    npu_op.reversed_operands = reversed_operands
    npu_op.rescale = scaling.rescale
    recorder = _ScaleRecorder()
    op_to_scale = generate_scaling_for_elementwise(recorder, npu_op)  # type: ignore[arg-type]
    return recorder.registers, int(op_to_scale)


def _elementwise_scaling(op: DecodedOperation, kind: ethosu.ElementwiseKind, reversed_operands: bool) -> _Scaling:
    """Scales that make Vela program exactly the scale registers `op` holds, so that the
    disassembly serializes back to the same stream; no scales when none is found.

    The registers are quantized ratios of the scales, so any scales with those ratios do.
    Add/sub (8-bit): operands of unequal scales program OPA = the smaller over the larger as
    a 31-bit multiplier and shift (after `x << 20`), and OFM = 2 * larger / (ofm * 2**20);
    equal ones program OPA = OPB = 2**15 and OFM = 2 * scale / (ofm * 2**16). Taking the
    larger scale as 1.0 gives the smaller `OPA * 2**(-shift - 19)` exactly, and the OFM scale
    to within an ulp, far below what would change its 31-bit multiplier. Mul (of any bit
    depth) keeps its OFM scale as Vela's explicit `rescale`."""
    ofm = (op.payloads.get("OFM_SCALE", 1), op.registers.get("OFM_SCALE", 0))
    ofm_real = math.ldexp(ofm[0], -ofm[1])
    activation = op.reg("ACTIVATION") & 0xFFF
    eight_bit = (op.reg("IFM_PRECISION") >> 2) & 3 == 0
    if kind == ethosu.ElementwiseKind.MUL:
        return _Scaling() if ofm == (1, 0) else _Scaling(rescale=ofm)
    if kind not in (ethosu.ElementwiseKind.ADD, ethosu.ElementwiseKind.SUB):
        return _Scaling()
    if not eight_bit or activation in (3, 4) or ofm_real == 0:  # tanh/sigmoid fix Vela's OFM scale
        return _Scaling()
    opa = (op.payloads.get("OPA_SCALE", 1), op.registers.get("OPA_SCALE", 0))
    opb = op.payloads.get("OPB_SCALE", 1)
    to_scale = (op.reg("IFM_PRECISION") >> 8) & 3
    if (opa, opb, to_scale) == ((1, 0), 1, 0):
        candidate = _Scaling() if ofm == (1, 0) else _Scaling(rescale=ofm)
    elif to_scale:
        smaller = math.ldexp(opa[0], -opa[1] - 19)
        scaled_first = (to_scale == 1) != reversed_operands  # OPa: the IFM has the smaller scale
        first, second = (smaller, 1.0) if scaled_first else (1.0, smaller)
        candidate = _Scaling(first, second, math.ldexp(1.0, -19) / ofm_real)
    else:
        candidate = _Scaling(1.0, 1.0, math.ldexp(1.0, -15) / ofm_real)
    registers, op_to_scale = _vela_scale_registers(kind, candidate, reversed_operands)
    decoded = {
        "OPA_SCALE": (opa[0], opa[1]),
        "OPB_SCALE": (opb, op.registers.get("OPB_SCALE", 0)),
        "OFM_SCALE": ofm,
    }
    if op_to_scale != to_scale or any(registers.get(name, value) != value for name, value in decoded.items()):
        return _Scaling()
    return candidate


def command_from_registers(op: DecodedOperation) -> ethosu.EthosUCommand:
    """The `ethosu` op one decoded operation performs."""
    if op.opcode == "NPU_OP_DMA_START":
        length = op.address("DMA0_LEN")
        return ethosu.DmaOp(
            ethosu.AddressRangeAttr(op.reg("DMA0_SRC_REGION"), op.address("DMA0_SRC"), length),
            ethosu.AddressRangeAttr(op.reg("DMA0_DST_REGION"), op.address("DMA0_DST"), length),
            channel=op.param >> 4,
            mode=op.param & 0xF,
        )
    scaling, kind, broadcast = _Scaling(), ethosu.ElementwiseKind.MUL, 0
    if op.opcode == "NPU_OP_ELEMENTWISE":
        kind = _ELEMENTWISE[op.param]
        broadcast = 0 if kind.is_unary else op.reg("IFM2_BROADCAST")
        scaling = _elementwise_scaling(op, kind, reversed_operands=bool(broadcast & (1 << 6)))
    ofm_precision = op.reg("OFM_PRECISION")
    ofm_shape = (op.reg("OFM_HEIGHT_M1") + 1, op.reg("OFM_WIDTH_M1") + 1, op.reg("OFM_DEPTH_M1") + 1)
    ofm = _feature_map(op, "OFM", ofm_shape, ofm_precision, 1, scaling.ofm)
    block = (op.reg("OFM_BLK_HEIGHT_M1") + 1, op.reg("OFM_BLK_WIDTH_M1") + 1, op.reg("OFM_BLK_DEPTH_M1") + 1)
    upscale = _UPSCALE[op.reg("IFM_UPSCALE") & 3]
    options: ethosu.BlockOptions = {
        "activation": _activation(op, ofm),
        "rounding_mode": _ROUNDING[(ofm_precision >> 14) & 3],
        "ifm_upscale": upscale,
    }
    ifm_precision = op.reg("IFM_PRECISION")
    ifm_depth = op.reg("IFM_DEPTH_M1") + 1
    if op.opcode == "NPU_OP_ELEMENTWISE":
        ifm = _feature_map(op, "IFM", (*ofm_shape[:2], ifm_depth), ifm_precision, 2, scaling.ifm)
        ifm2: ethosu.FeatureMapAttr | ethosu.ScalarAttr | None = None
        if not kind.is_unary:
            ifm2_precision = op.reg("IFM2_PRECISION")
            if broadcast & (1 << 7):
                data_type = _DATA_TYPES[((ifm2_precision >> 2) & 3, ifm2_precision & 1)]
                zero_point = op.reg("IFM2_ZERO_POINT", signed=True)
                # The scalar register holds the quantized value: real = (q - zp) * scale.
                real = (op.reg("IFM2_SCALAR", signed=True) - zero_point) * (scaling.ifm2 or 1.0)
                ifm2 = ethosu.ScalarAttr(real, data_type, (scaling.ifm2, zero_point))
            else:
                shape = tuple(1 if broadcast & (1 << axis) else ofm_shape[axis] for axis in range(3))
                ifm2 = _feature_map(op, "IFM2", shape, ifm2_precision, 2, scaling.ifm2)  # type: ignore[arg-type]
        return ethosu.ElementwiseOp(
            kind,
            ifm=ifm,
            ofm=ofm,
            block_config=block,
            ifm2=ifm2,
            reversed_operands=bool(broadcast & (1 << 6)),
            rescale=scaling.rescale,
            **options,
        )
    stride_bits = op.reg("KERNEL_STRIDE")
    stride_x = ((stride_bits & 1) | ((stride_bits >> 6) & 7) << 1) + 1
    stride_y = (((stride_bits >> 1) & 1) | ((stride_bits >> 9) & 7) << 1) + 1
    dilation_x = ((stride_bits >> 3) & 1) + 1
    dilation_y = ((stride_bits >> 4) & 1) + 1
    kernel = ethosu.KernelAttr(
        op.reg("KERNEL_HEIGHT_M1") // dilation_y + 1,
        op.reg("KERNEL_WIDTH_M1") // dilation_x + 1,
        stride_y,
        stride_x,
        dilation_y,
        dilation_x,
    )
    padding = ethosu.PaddingAttr(
        op.reg("IFM_PAD_TOP"), op.reg("IFM_PAD_LEFT"), op.reg("IFM_PAD_BOTTOM"), op.reg("IFM_PAD_RIGHT")
    )
    # The IFM box the hardware reads: exactly what the OFM box needs through the window.
    ifm_height = (ofm_shape[0] - 1) * stride_y + kernel.dilated_height - padding.top - padding.bottom
    ifm_width = (ofm_shape[1] - 1) * stride_x + kernel.dilated_width - padding.left - padding.right
    if upscale != ethosu.ResamplingMode.NONE:
        ifm_height, ifm_width = -(-ifm_height // 2), -(-ifm_width // 2)
    ifm = _feature_map(op, "IFM", (ifm_height, ifm_width, ifm_depth), ifm_precision, 2)
    if op.opcode == "NPU_OP_POOL":
        return ethosu.PoolingOp(
            _POOLING[op.param], ifm=ifm, ofm=ofm, kernel=kernel, padding=padding, block_config=block, **options
        )
    weights = _core_ranges(op, "WEIGHT")
    biases = _core_ranges(op, "SCALE")
    traversal = ethosu.BlockTraversal.PART_KERNEL_FIRST if stride_bits & (1 << 2) else ethosu.BlockTraversal.DEPTH_FIRST
    cls = ethosu.Conv2DOp if op.opcode == "NPU_OP_CONV" else ethosu.DepthwiseConv2DOp
    return cls(
        ifm=ifm,
        ofm=ofm,
        kernel=kernel,
        padding=padding,
        weights=weights,
        biases=biases,
        block_config=block,
        block_traversal=traversal,
        **options,
    )


# --------------------------------------------------------------------------- #
# Comparison modulo what the register stream does not encode
# --------------------------------------------------------------------------- #


def _quantized(value: float | None, quant: ethosu.QuantizationAttr | None) -> int | None:
    """Vela's `quantise` of a clamp bound (None stays None)."""
    if value is None:
        return None
    from ethosu.vela.numeric_util import quantise_float32

    scale = 1.0 if quant is None or quant.scale_value is None else quant.scale_value
    zero_point = 0 if quant is None else quant.zero_point.data
    return int(quantise_float32(value, scale, zero_point))


def _scalar_quant(scalar: ethosu.ScalarAttr) -> ethosu.QuantizationAttr | None:
    quant = scalar.quantization
    return quant if isinstance(quant, ethosu.QuantizationAttr) else None


def _fm_signature(fm: ethosu.FeatureMapAttr | None) -> tuple[object, ...] | None:
    if fm is None:
        return None
    quant = fm.quantization_or_none
    strides = fm.strides_or_none
    return (
        fm.data_type.data,
        fm.region.data,
        fm.shape.as_tuple(),
        fm.tiles.as_tuple(),
        None if strides is None else strides.as_tuple(),
        fm.layout.data,
        0 if quant is None else quant.zero_point.data,
    )


def command_signature(command: ethosu.EthosUCommand) -> tuple[object, ...]:
    """Everything of a command that its register encoding determines.

    Quantization scales, `fused_quantize`, `rescale` and debug names are left out; clamps are
    compared as the quantized bounds Vela programs. Two streams with equal signatures encode
    the same geometry, addresses, constants ranges, zero points, clamps and modes.
    """
    if isinstance(command, ethosu.DmaOp):
        return ("dma", command.src.as_tuple(), command.dest.as_tuple(), command.channel.value.data)
    ofm_quant = command.ofm.quantization_or_none
    activation = command.activation
    clamp: tuple[object, ...] = ("none",)
    if activation is not None:
        low = _quantized(activation.min_value, ofm_quant)
        high = _quantized(activation.max_value, ofm_quant)
        clamp = (activation.kind.data, activation.lookup_table_index.data, low, high)
        if activation.kind.data == ethosu.ActivationKind.NONE_OR_RELU and low is None and high is None:
            clamp = ("none",)
    fields: list[object] = [
        command.name,
        _fm_signature(command.ifm),
        _fm_signature(command.ofm),
        command.block_config.as_tuple(),
        clamp,
        command.rounding_mode.data,
        command.ifm_upscale.data,
        tuple(r.as_tuple() for r in command.weight_ranges),
        tuple(r.as_tuple() for r in command.bias_ranges),
    ]
    if isinstance(command, ethosu.Conv2DOp | ethosu.DepthwiseConv2DOp | ethosu.PoolingOp):
        fields += [command.kernel.as_tuple(), command.padding.as_tuple()]
    if isinstance(command, ethosu.Conv2DOp):
        fields.append(command.block_traversal.data)
    if isinstance(command, ethosu.PoolingOp):
        fields.append(command.kind.data)
    if isinstance(command, ethosu.ElementwiseOp):
        scalar = command.ifm2_scalar
        fields += [
            command.kind.data,
            _fm_signature(command.ifm2),
            None if scalar is None else _quantized(scalar.value.data, _scalar_quant(scalar)),
            command.reversed_operands is not None,
        ]
    return tuple(fields)


def stream_signature(commands: Iterable[ethosu.EthosUCommand]) -> list[tuple[object, ...]]:
    """`command_signature` of every command."""
    return [command_signature(c) for c in commands]


# --------------------------------------------------------------------------- #
# Disassembling files (`cascade-opt --disassemble FILE`)
# --------------------------------------------------------------------------- #

DEFAULT_DISASSEMBLY_ACCELERATOR = "ethos-u55-128"
"""The accelerator of a stream without a COP1 header when none is given (Vela's
`--accelerator-config` must be known to decode block configs honestly; this is a guess)."""

_TFLITE_IDENTIFIER = b"TFL3"
_STREAM_HEADER = "// ethosu.command_stream"


class DisassemblyError(ValueError):
    """A file that is not a command stream we can decode; the message is one line."""


@dataclass
class StreamImage:
    """One command stream to decode: its words (raw or a COP1 payload), the accelerator its
    container names (if any), and its flash image when the container holds it."""

    words: list[int]
    accelerator: str | None = None
    flash: bytes | None = None


def _stop_index(words: Sequence[int]) -> int | None:
    """The index of the `NPU_OP_STOP` command, walking commands (payload words skipped)."""
    from ethosu.vela.ethos_u55_regs.ethos_u55_regs import cmd0

    index = 0
    while index < len(words):
        code = words[index] & 0xFFFF
        if code & PAYLOAD_FLAG:
            index += 2
            continue
        if code & OPCODE_MASK == cmd0.NPU_OP_STOP.value:
            return index
        index += 1
    return None


def _tflite_images(data: bytes) -> list[StreamImage]:
    """Every `ethos-u` operator of a Vela-format .tflite: input 0 is its COP1 command stream,
    input 1 its read-only constants (the flash image)."""
    from ethosu.vela.tflite.Model import Model

    try:
        model = Model.GetRootAsModel(data, 0)
        images = []
        for s in range(model.SubgraphsLength()):
            subgraph = model.Subgraphs(s)
            for o in range(subgraph.OperatorsLength()):
                op = subgraph.Operators(o)
                if model.OperatorCodes(op.OpcodeIndex()).CustomCode() != b"ethos-u":
                    continue
                buffers = [model.Buffers(subgraph.Tensors(op.Inputs(i)).Buffer()) for i in range(op.InputsLength())]
                stream = bytes(buffers[0].DataAsNumpy().tobytes()) if buffers and buffers[0].DataLength() else b""
                has_flash = len(buffers) > 1 and buffers[1].DataLength()
                flash = bytes(buffers[1].DataAsNumpy().tobytes()) if has_flash else b""
                images.append(StreamImage(_words_from_bytes(stream), flash=flash))
    except DisassemblyError:
        raise
    except Exception as error:  # a damaged flatbuffer fails anywhere inside the generated reader
        raise DisassemblyError(f"not a readable .tflite flatbuffer ({type(error).__name__}: {error})") from None
    if not images:
        raise DisassemblyError("the .tflite has no ethos-u operator (not compiled by Vela or -t ethosu-tflite?)")
    return images


def _text_images(text: str) -> list[StreamImage]:
    """The words `-t ethosu-cs` writes: per stream a header comment, then one `0x%08x` per line."""
    images: list[StreamImage] = []
    expected: list[int | None] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith(_STREAM_HEADER):
            # `// ethosu.command_stream N (accelerator): kind, K words`
            accelerator = line.partition("(")[2].partition(")")[0] or None
            count = line.rpartition(",")[2].split()
            images.append(StreamImage([], accelerator))
            expected.append(int(count[0]) if count and count[0].isdigit() else None)
            continue
        if line.startswith("//"):
            continue
        try:
            word = int(line, 16)
        except ValueError:
            raise DisassemblyError(f"line {number}: expected a hex word like 0x0000012c, got '{line[:40]}'") from None
        if not 0 <= word < 1 << 32:
            raise DisassemblyError(f"line {number}: '{line}' is not a 32-bit word")
        if not images:
            images.append(StreamImage([]))
            expected.append(None)
        images[-1].words.append(word)
    for index, (image, count) in enumerate(zip(images, expected, strict=True)):
        if count is not None and count != len(image.words):
            raise DisassemblyError(f"stream {index}: the header says {count} words, the file has {len(image.words)}")
    return images


def _hex_text(data: bytes) -> str | None:
    """`data` as text when it looks like `-t ethosu-cs` output (hex words and comments)."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return None
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return text if first.startswith(("//", "0x", "0X")) else None


def read_stream_images(data: bytes) -> list[StreamImage]:
    """The command streams in a file's bytes: a .tflite, `ethosu-cs` text, a COP1 payload or
    raw little-endian words."""
    if not data:
        raise DisassemblyError("the file is empty")
    if data[4:8] == _TFLITE_IDENTIFIER:
        return _tflite_images(data)
    if (text := _hex_text(data)) is not None:
        return _text_images(text)
    if len(data) % 4:
        raise DisassemblyError(f"not a command stream: {len(data)} bytes is not a whole number of 32-bit words")
    return [StreamImage(_words_from_bytes(data))]


def _decode_image(index: int, image: StreamImage, accelerator: str | None) -> ethosu.CommandStreamOp:

    words = image.words
    where = f"stream {index}"
    named = image.accelerator
    try:
        if words and words[0] == _COP1:
            named = named or _accelerator_from_payload(words)
            words = _payload_words(words)
        if not words:
            raise DisassemblyError(f"{where}: no command words")
        stop = _stop_index(words)
        if stop is None:
            raise DisassemblyError(f"{where}: no NPU_OP_STOP at the end: the stream is truncated")
        commands = [command_from_registers(op) for op in decode_registers(words[: stop + 1])]
    except DisassemblyError:
        raise
    except KeyError as error:
        raise DisassemblyError(f"{where}: an operation uses register {error} before the stream sets it") from None
    except (ValueError, IndexError) as error:
        raise DisassemblyError(f"{where}: not a valid command stream: {error}") from None
    name = named or accelerator or DEFAULT_DISASSEMBLY_ACCELERATOR
    if name not in ethosu.ACCELERATORS:
        raise DisassemblyError(f"unknown accelerator '{name}'; expected one of: {', '.join(ethosu.ACCELERATORS)}")
    stream = ethosu.CommandStreamOp(name, commands)
    if image.flash is not None:
        stream.set_flash_image(image.flash)
    return stream


def disassemble_file(path: str | Path, accelerator: str | None = None) -> Any:
    """`cascade-opt --disassemble`: a module with one `ethosu.command_stream` per stream of the file.

    The accelerator comes from the stream's COP1 header or `ethosu-cs` header comment, else
    `accelerator`, else ethos-u55-128. A stream read from a .tflite carries its flash image
    (`ethosu.flash`, the operator's read-only tensor); a bare stream has no `ethosu.flash`:
    its constants are unknown (its commands still name their flash address ranges).
    Raises DisassemblyError (one line) for anything else.
    """
    from xdsl.dialects.builtin import ModuleOp

    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise DisassemblyError(f"cannot read: {error.strerror}") from None
    images = read_stream_images(data)
    return ModuleOp([_decode_image(index, image, accelerator) for index, image in enumerate(images)])
