"""Ethos-U accelerator configurations, system configurations and memory modes.

Three independent choices describe the machine a plan is priced on, with the same names and
defaults as Vela's command line:

* the accelerator (`--accelerator-config`): MACs per cycle, micro-block, SHRAM, output rates;
* the system configuration (`--system-config`): core clock and, for each AXI port, the memory
  behind it with its bandwidth, latency and burst length;
* the memory mode (`--memory-mode`): which port holds the constants (weights), the tensor arena
  (feature maps) and the fast SRAM cache.

System configurations and memory modes are read from the `vela.ini` that Vela ships (or any file
in the same format), so they never drift from Vela's. Accelerator constants come from Vela's own
table (`ArchitectureFeatures.accelerator_configs`); the output and activation rates, which Vela
only exposes through a private method, are kept here and checked against Vela by a unit test.
"""

from __future__ import annotations

import configparser
import contextlib
import io
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ethosu.vela.api import NpuAccelerator
from ethosu.vela.architecture_features import CONFIG_FILES_PATH, Accelerator, ArchitectureFeatures


class ArchConfigError(ValueError):
    """An unknown accelerator, system configuration or memory mode; the message lists the valid names."""


# --------------------------------------------------------------------------- #
# Accelerators
# --------------------------------------------------------------------------- #

DEFAULT_ACCELERATOR = "ethos-u55-256"
"""Vela's default `--accelerator-config`."""

ACCELERATOR_NAMES: tuple[str, ...] = (
    "ethos-u55-32",
    "ethos-u55-64",
    "ethos-u55-128",
    "ethos-u55-256",
    "ethos-u65-256",
    "ethos-u65-512",
)

# Output-stage cycles per OFM element, indexed as Vela's tables are:
# 0 elementwise int32 unary, 1 elementwise int32 binary, 2 mul with int32 output, 3 mul or 40-bit
# accumulator, 4 simple add/sub, 5 add/sub (with rescale, what the compiler emits), 6 max pool,
# 7 anything else (convolutions, average pool, ...).
# And activation cycles per element: 0 table lookup (sigmoid, tanh, LUT), 1 clamp (ReLU), 2 none.
_OUTPUT_CYCLES: dict[str, tuple[float, ...]] = {
    "ethos-u55-32": (2.0, 3.0, 3.0, 3.0, 4.0, 6.0, 1.0, 2.0),
    "ethos-u55-64": (1.0, 1.5, 1.5, 1.5, 2.0, 3.0, 0.5, 1.0),
    "ethos-u55-128": (0.75, 1.25, 0.75, 0.75, 1.0, 1.5, 0.25, 0.5),
    "ethos-u55-256": (0.625, 1.125, 0.5, 0.375, 0.5, 0.75, 0.125, 0.25),
    "ethos-u65-256": (0.625, 1.125, 0.5, 0.375, 0.5, 0.75, 0.125, 0.25),
    "ethos-u65-512": (0.3125, 0.5625, 0.25, 0.1875, 0.25, 0.375, 0.0625, 0.125),
}
_ACTIVATION_CYCLES: dict[str, tuple[float, ...]] = {
    "ethos-u55-32": (1.0, 1.0, 0.0),
    "ethos-u55-64": (1.0, 1.0, 0.0),
    "ethos-u55-128": (1.0, 0.5, 0.0),
    "ethos-u55-256": (1.0, 0.25, 0.0),
    "ethos-u65-256": (1.0, 0.25, 0.0),
    "ethos-u65-512": (0.5, 0.125, 0.0),
}


@dataclass(frozen=True)
class Shape3:
    """A (height, width, depth) triple: micro-blocks, block limits."""

    height: int
    width: int
    depth: int


@dataclass(frozen=True)
class AcceleratorConfig:
    """The fixed properties of one Ethos-U configuration."""

    name: str
    macs: int  # MACs per cycle per core
    cores: int
    ofm_ublock: Shape3  # output micro-block: the unit the MAC array produces per step
    ifm_ublock: Shape3
    shram_banks: int  # 1 KiB banks of shared buffer RAM (IFM and accumulator staging)
    shram_granules: tuple[int, ...]  # bank rounding per SHRAM element kind, as Vela's SHRAMElements
    elementwise_units: int
    output_cycles: tuple[float, ...]
    activation_cycles: tuple[float, ...]
    axi_bytes_per_cycle: int  # AXI port width: 8 bytes on U55, 16 on U65
    npu_accelerator: NpuAccelerator
    ofm_block_max: Shape3 = Shape3(32, 64, 128)
    shram_bank_bytes: int = 1024

    @property
    def is_u65(self) -> bool:
        return self.name.startswith("ethos-u65")

    @property
    def shram_bytes(self) -> int:
        return self.shram_banks * self.shram_bank_bytes

    @property
    def total_macs(self) -> int:
        return self.macs * self.cores


@cache
def accelerator(name: str) -> AcceleratorConfig:
    """The configuration of accelerator `name` (e.g. "ethos-u55-128"); ArchConfigError if unknown."""
    if name not in ACCELERATOR_NAMES:
        raise ArchConfigError(f"unknown accelerator '{name}'; expected one of: {', '.join(ACCELERATOR_NAMES)}")
    vela_accel = Accelerator(name)
    table = ArchitectureFeatures.accelerator_configs[vela_accel]
    # Vela's Block is (width, height, depth); ours is (height, width, depth).
    ofm_ublock = Shape3(table.ofm_ublock.height, table.ofm_ublock.width, table.ofm_ublock.depth)
    ifm_ublock = Shape3(table.ifm_ublock.height, table.ifm_ublock.width, table.ifm_ublock.depth)
    npu_accelerator = {
        "ethos-u55-32": NpuAccelerator.Ethos_U55_32,
        "ethos-u55-64": NpuAccelerator.Ethos_U55_64,
        "ethos-u55-128": NpuAccelerator.Ethos_U55_128,
        "ethos-u55-256": NpuAccelerator.Ethos_U55_256,
        "ethos-u65-256": NpuAccelerator.Ethos_U65_256,
        "ethos-u65-512": NpuAccelerator.Ethos_U65_512,
    }[name]
    return AcceleratorConfig(
        name=name,
        macs=table.macs,
        cores=table.cores,
        ofm_ublock=ofm_ublock,
        ifm_ublock=ifm_ublock,
        shram_banks=table.shram_banks,
        shram_granules=tuple(table.shram_granules),
        elementwise_units=table.elem_units,
        output_cycles=_OUTPUT_CYCLES[name],
        activation_cycles=_ACTIVATION_CYCLES[name],
        axi_bytes_per_cycle=16 if name.startswith("ethos-u65") else 8,
        npu_accelerator=npu_accelerator,
    )


_VELA_ARCH_LOCK = threading.Lock()


def vela_default_arch(name: str) -> ArchitectureFeatures:
    """Vela's default `ArchitectureFeatures` for accelerator `name`, which its API functions use.

    Vela prints "No configuration file specified" warnings on stdout the first time it builds
    one; build it here first, with stdout silenced, so the warnings never reach our output.
    """
    from ethosu.vela.architecture_features import create_default_arch

    with _VELA_ARCH_LOCK, contextlib.redirect_stdout(io.StringIO()):
        return create_default_arch(Accelerator(name))


# --------------------------------------------------------------------------- #
# System configurations and memory modes (vela.ini)
# --------------------------------------------------------------------------- #

VELA_INI: Path = Path(CONFIG_FILES_PATH) / "Arm" / "vela.ini"

# Vela's defaults when --system-config / --memory-mode are not given (architecture_features.py).
DEFAULT_SYSTEM_CONFIG = {"u55": "Ethos_U55_High_End_Embedded", "u65": "Ethos_U65_Client_Server"}
DEFAULT_MEMORY_MODE = {"u55": "Shared_Sram", "u65": "Dedicated_Sram_384KB"}

# Memories Vela knows, by the names vela.ini uses for `axiN_port`.
MEMORY_KINDS = ("Sram", "Dram", "OnChipFlash", "OffChipFlash")


@dataclass(frozen=True)
class Memory:
    """One memory as the NPU sees it through an AXI port.

    `bandwidth` is in bytes per NPU cycle: the port width times the memory's clock scale, e.g.
    off-chip flash on Ethos_U55_High_End_Embedded is 8 B/cycle * 0.125 = 1 B/cycle (0.5 GB/s at
    500 MHz). Latencies are in NPU cycles; `burst_length` is the largest useful burst in bytes.
    """

    name: str
    bandwidth: float
    read_latency: int
    write_latency: int
    burst_length: int

    @property
    def is_sram(self) -> bool:
        return self.name == "Sram"


@dataclass(frozen=True)
class SystemConfig:
    """A `[System_Config.*]` section: clock and the memories on the two AXI ports."""

    name: str
    core_clock: float
    axi0_port: str
    axi1_port: str
    memories: dict[str, Memory] = field(hash=False, compare=False)


@dataclass(frozen=True)
class MemoryMode:
    """A `[Memory_Mode.*]` section: which port holds constants, the arena and the SRAM cache."""

    name: str
    const_mem_area: str  # "Axi0" or "Axi1"
    arena_mem_area: str
    cache_mem_area: str
    arena_cache_size: int | None  # bytes; None = Vela's default (no limit: the whole address space)


@dataclass(frozen=True)
class VelaIni:
    """The system configurations and memory modes of one Vela configuration file."""

    path: str
    system_configs: dict[str, dict[str, str]] = field(hash=False, compare=False)
    memory_modes: dict[str, dict[str, str]] = field(hash=False, compare=False)


def _section_options(parser: configparser.ConfigParser, section: str, seen: tuple[str, ...] = ()) -> dict[str, str]:
    """Options of `section` with `inherit=` resolved; the child's own values win, as in Vela."""
    if section in seen:
        raise ArchConfigError(f"vela.ini: section [{section}] inherits from itself")
    options: dict[str, str] = {}
    if parser.has_option(section, "inherit"):
        parent = parser.get(section, "inherit")
        if not parser.has_section(parent):
            raise ArchConfigError(f"vela.ini: section [{section}] inherits from missing [{parent}]")
        options.update(_section_options(parser, parent, (*seen, section)))
    for key, value in parser.items(section):
        if key != "inherit":
            options[key] = value
    return options


@cache
def read_vela_ini(path: str | None = None) -> VelaIni:
    """Parse a Vela configuration file (default: the `Arm/vela.ini` installed with Vela)."""
    ini_path = Path(path) if path is not None else VELA_INI
    parser = configparser.ConfigParser()
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keep Vela's key spelling
    try:
        with open(ini_path, encoding="utf-8") as handle:
            parser.read_file(handle)
    except (OSError, configparser.Error) as error:
        raise ArchConfigError(f"cannot read Vela configuration file {ini_path}: {error}") from None
    system_configs: dict[str, dict[str, str]] = {}
    memory_modes: dict[str, dict[str, str]] = {}
    for section in parser.sections():
        kind, _, name = section.partition(".")
        if kind == "System_Config":
            system_configs[name] = _section_options(parser, section)
        elif kind == "Memory_Mode":
            memory_modes[name] = _section_options(parser, section)
    return VelaIni(str(ini_path), system_configs, memory_modes)


def _family(accel: AcceleratorConfig) -> str:
    return "u65" if accel.is_u65 else "u55"


def system_config(name: str, accel: AcceleratorConfig, ini: VelaIni | None = None) -> SystemConfig:
    """The system configuration `name` for `accel`, with per-memory bandwidth in bytes per cycle."""
    ini = ini or read_vela_ini()
    if name not in ini.system_configs:
        known = ", ".join(sorted(ini.system_configs))
        raise ArchConfigError(f"unknown system config '{name}'; {ini.path} defines: {known}")
    options = ini.system_configs[name]

    def number(key: str, default: float) -> float:
        try:
            return float(options.get(key, default))
        except ValueError:
            raise ArchConfigError(f"system config '{name}': {key} is not a number: {options[key]!r}") from None

    ports = (options.get("axi0_port", "Sram"), options.get("axi1_port", "Sram"))
    for port in ports:
        if port not in MEMORY_KINDS:
            raise ArchConfigError(f"system config '{name}': unknown memory '{port}'")
    memories: dict[str, Memory] = {}
    for kind in dict.fromkeys(ports):
        ports_used = max(1, int(number(f"{kind}_ports_used", 1)))
        memories[kind] = Memory(
            name=kind,
            bandwidth=accel.axi_bytes_per_cycle * ports_used * number(f"{kind}_clock_scale", 1.0),
            read_latency=int(number(f"{kind}_read_latency", 0)),
            write_latency=int(number(f"{kind}_write_latency", 0)),
            burst_length=int(number(f"{kind}_burst_length", 1)),
        )
    return SystemConfig(name, number("core_clock", 1.0), ports[0], ports[1], memories)


def memory_mode(name: str, ini: VelaIni | None = None) -> MemoryMode:
    """The memory mode `name` from the Vela configuration file."""
    ini = ini or read_vela_ini()
    if name not in ini.memory_modes:
        known = ", ".join(sorted(ini.memory_modes))
        raise ArchConfigError(f"unknown memory mode '{name}'; {ini.path} defines: {known}")
    options = ini.memory_modes[name]
    areas = [options.get(key, "Axi0") for key in ("const_mem_area", "arena_mem_area", "cache_mem_area")]
    for area in areas:
        if area not in ("Axi0", "Axi1"):
            raise ArchConfigError(f"memory mode '{name}': unknown memory area '{area}'")
    size = options.get("arena_cache_size")
    try:
        cache_size = int(size) if size is not None else None
    except ValueError:
        raise ArchConfigError(f"memory mode '{name}': arena_cache_size is not an integer: {size!r}") from None
    return MemoryMode(name, *areas, arena_cache_size=cache_size)


# --------------------------------------------------------------------------- #
# The resolved architecture
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class ArchConfig:
    """Accelerator, system configuration and memory mode, resolved to concrete memories.

    * `const_memory` holds weights, biases and other constants (flash on U55 Shared_Sram).
    * `arena_memory` holds feature maps (SRAM in Shared_Sram, DRAM in Dedicated_Sram).
    * `staging_memory` is the SRAM the scheduler may use for buffers: weight buffers, rolling
      buffers, and in Dedicated_Sram the cache that feature maps are moved into.
    * `staging_limit` is the SRAM budget in bytes (`arena_cache_size`, 4 GiB on U55 and 1 TiB on
      U65 when the memory mode does not set it, as in Vela).
    """

    accelerator: AcceleratorConfig
    system: SystemConfig
    mode: MemoryMode
    const_memory: Memory
    arena_memory: Memory
    staging_memory: Memory
    staging_limit: int

    @property
    def name(self) -> str:
        return f"{self.accelerator.name}/{self.system.name}/{self.mode.name}"

    @property
    def spilling(self) -> bool:
        """Dedicated_Sram: feature maps live in DRAM and the SRAM is a cache (Vela's "spilling")."""
        return self.staging_memory is not self.arena_memory

    def memories(self) -> tuple[Memory, ...]:
        """The distinct memories, in a fixed order: staging (SRAM) first, then arena, then constants."""
        seen: dict[int, Memory] = {}
        for memory in (self.staging_memory, self.arena_memory, self.const_memory):
            seen.setdefault(id(memory), memory)
        return tuple(seen.values())


def _resolve_port(area: str, system: SystemConfig) -> str:
    return system.axi0_port if area == "Axi0" else system.axi1_port


def arch_config(
    accelerator_name: str = "ethos-u55-128",
    system_config_name: str | None = None,
    memory_mode_name: str | None = None,
    config_file: str | None = None,
) -> ArchConfig:
    """Resolve names as `vela --accelerator-config --system-config --memory-mode` does.

    A `None` system config or memory mode takes Vela's default for the accelerator family:
    Ethos_U55_High_End_Embedded + Shared_Sram on U55, Ethos_U65_Client_Server +
    Dedicated_Sram_384KB on U65.
    """
    accel = accelerator(accelerator_name)
    ini = read_vela_ini(config_file)
    system = system_config(system_config_name or DEFAULT_SYSTEM_CONFIG[_family(accel)], accel, ini)
    mode = memory_mode(memory_mode_name or DEFAULT_MEMORY_MODE[_family(accel)], ini)
    memories = dict(system.memories)
    const_kind = _resolve_port(mode.const_mem_area, system)
    arena_kind = _resolve_port(mode.arena_mem_area, system)
    cache_kind = _resolve_port(mode.cache_mem_area, system)
    if const_kind == "Sram":
        # Sram_Only: Vela moves constants to an "on-chip flash" with the SRAM's characteristics.
        sram = memories["Sram"]
        memories["OnChipFlash"] = Memory(
            "OnChipFlash", sram.bandwidth, sram.read_latency, sram.write_latency, sram.burst_length
        )
        const_kind = "OnChipFlash"
    if const_kind not in ("Dram", "OnChipFlash", "OffChipFlash"):
        raise ArchConfigError(f"memory mode '{mode.name}': constants cannot live in {const_kind}")
    if arena_kind not in ("Sram", "Dram"):
        raise ArchConfigError(f"memory mode '{mode.name}': the arena cannot live in {arena_kind}")
    if cache_kind != "Sram":
        raise ArchConfigError(f"memory mode '{mode.name}': the cache must be SRAM, not {cache_kind}")
    address_space = 1 << (40 if accel.is_u65 else 32)
    limit = mode.arena_cache_size if mode.arena_cache_size is not None else address_space
    return ArchConfig(
        accelerator=accel,
        system=system,
        mode=mode,
        const_memory=memories[const_kind],
        arena_memory=memories[arena_kind],
        staging_memory=memories[cache_kind],
        staging_limit=limit,
    )


def system_config_names(config_file: str | None = None) -> Sequence[str]:
    return sorted(read_vela_ini(config_file).system_configs)


def memory_mode_names(config_file: str | None = None) -> Sequence[str]:
    return sorted(read_vela_ini(config_file).memory_modes)


def unknown_config_name(
    accelerator: str, system_config: str | None = None, memory_mode: str | None = None
) -> str | None:
    """Why the first unknown name among these is unknown, listing the valid ones; None if all are
    known (None for a system config or memory mode means Vela's default)."""
    if accelerator not in ACCELERATOR_NAMES:
        return f"unknown accelerator '{accelerator}'; expected one of: {', '.join(ACCELERATOR_NAMES)}"
    if system_config is not None and system_config not in system_config_names():
        return f"unknown system config '{system_config}'; expected one of: {', '.join(system_config_names())}"
    if memory_mode is not None and memory_mode not in memory_mode_names():
        return f"unknown memory mode '{memory_mode}'; expected one of: {', '.join(memory_mode_names())}"
    return None
