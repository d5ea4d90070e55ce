"""Accelerator configs, system configs and memory modes, checked against Vela's own tables."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from ethosu.vela.architecture_features import Accelerator, ArchitectureFeatures

from cascade.ethos_u.arch import (
    ACCELERATOR_NAMES,
    ArchConfigError,
    accelerator,
    arch_config,
    memory_mode_names,
    read_vela_ini,
    system_config_names,
)


def test_u55_128_constants() -> None:
    config = accelerator("ethos-u55-128")
    # 128 MACs/cycle = micro-block 1x2 positions x 8 output channels x 8 input channels per step.
    assert config.macs == 128
    assert config.total_macs == 128
    assert (config.ofm_ublock.height, config.ofm_ublock.width, config.ofm_ublock.depth) == (1, 2, 8)
    assert config.shram_banks == 24
    assert config.shram_bytes == 24 * 1024
    assert config.axi_bytes_per_cycle == 8  # a 64-bit AXI port on U55
    # Vela limits OFM blocks to 32 high, 64 wide, 128 deep.
    assert (config.ofm_block_max.height, config.ofm_block_max.width, config.ofm_block_max.depth) == (32, 64, 128)


def test_u65_512_has_two_cores() -> None:
    config = accelerator("ethos-u65-512")
    assert config.cores == 2
    assert config.total_macs == 512
    assert config.axi_bytes_per_cycle == 16
    assert config.is_u65


@pytest.mark.parametrize("name", ACCELERATOR_NAMES)
def test_output_rates_match_vela(name: str) -> None:
    """Our copy of the output/activation rates is Vela's (which only builds them in a method)."""
    holder = SimpleNamespace()
    ArchitectureFeatures._generate_output_perf_tables(holder, Accelerator(name))  # type: ignore[arg-type]
    config = accelerator(name)
    assert config.output_cycles == tuple(holder.output_cycles_per_elem)
    assert config.activation_cycles == tuple(holder.activation_cycles_per_elem)


def test_unknown_accelerator() -> None:
    with pytest.raises(ArchConfigError, match=r"unknown accelerator 'ethos-u99'.*ethos-u55-128"):
        accelerator("ethos-u99")


def test_u55_default_system() -> None:
    arch = arch_config("ethos-u55-128")
    # Vela's defaults: Ethos_U55_High_End_Embedded (500 MHz) and Shared_Sram.
    assert arch.system.name == "Ethos_U55_High_End_Embedded"
    assert arch.system.core_clock == 500e6
    assert arch.mode.name == "Shared_Sram"
    # SRAM on AXI0 at clock scale 1.0: 8 B/cycle = 4 GB/s; flash on AXI1 at 0.125: 1 B/cycle.
    assert arch.arena_memory.name == "Sram"
    assert arch.arena_memory.bandwidth == 8.0
    assert arch.arena_memory.read_latency == 32
    assert arch.const_memory.name == "OffChipFlash"
    assert arch.const_memory.bandwidth == 1.0
    assert arch.const_memory.read_latency == 64
    assert arch.const_memory.burst_length == 128
    assert arch.staging_memory is arch.arena_memory
    assert not arch.spilling
    assert arch.staging_limit == 1 << 32  # no arena_cache_size: the whole 32-bit address space


def test_u65_default_system() -> None:
    arch = arch_config("ethos-u65-256")
    # Vela's defaults: Ethos_U65_Client_Server (1 GHz) and Dedicated_Sram_384KB.
    assert arch.system.name == "Ethos_U65_Client_Server"
    assert arch.mode.name == "Dedicated_Sram_384KB"
    # DRAM: 16 B/cycle port * 0.75 = 12 B/cycle; SRAM 16 B/cycle.
    assert arch.arena_memory.name == "Dram"
    assert arch.arena_memory.bandwidth == 12.0
    assert arch.arena_memory.read_latency == 500
    assert arch.arena_memory.write_latency == 250
    assert arch.const_memory is arch.arena_memory
    assert arch.staging_memory.name == "Sram"
    assert arch.staging_memory.bandwidth == 16.0
    assert arch.spilling
    # Dedicated_Sram_384KB inherits Dedicated_Sram and sets arena_cache_size = 384 KiB.
    assert arch.staging_limit == 384 * 1024


def test_sram_only_moves_constants_to_on_chip_flash() -> None:
    arch = arch_config("ethos-u55-256", "Ethos_U55_Deep_Embedded", "Sram_Only")
    # Vela turns an SRAM constant area into "on-chip flash" with the SRAM's characteristics.
    assert arch.const_memory.name == "OnChipFlash"
    assert arch.const_memory.bandwidth == arch.arena_memory.bandwidth == 8.0
    assert arch.system.core_clock == 200e6


def test_names_come_from_vela_ini() -> None:
    assert "Ethos_U65_High_End" in system_config_names()
    assert "Dedicated_Sram_512KB" in memory_mode_names()


@pytest.mark.parametrize(
    ("system", "mode", "message"),
    [
        ("Nope", None, "unknown system config 'Nope'"),
        (None, "Nope", "unknown memory mode 'Nope'"),
    ],
)
def test_unknown_names(system: str | None, mode: str | None, message: str) -> None:
    with pytest.raises(ArchConfigError, match=message):
        arch_config("ethos-u55-128", system, mode)


def test_custom_ini_with_inheritance(tmp_path) -> None:
    ini = tmp_path / "custom.ini"
    ini.write_text(
        "[System_Config.Slow]\ncore_clock=100e6\naxi0_port=Sram\naxi1_port=OffChipFlash\n"
        "Sram_clock_scale=0.5\nSram_read_latency=8\nOffChipFlash_clock_scale=0.25\n"
        "[Memory_Mode.Base]\nconst_mem_area=Axi1\narena_mem_area=Axi0\ncache_mem_area=Axi0\n"
        "[Memory_Mode.Small]\ninherit=Memory_Mode.Base\narena_cache_size=1000\n"
    )
    arch = arch_config("ethos-u55-64", "Slow", "Small", str(ini))
    assert arch.arena_memory.bandwidth == 4.0  # 8 B/cycle * 0.5
    assert arch.arena_memory.read_latency == 8
    assert arch.const_memory.bandwidth == 2.0
    assert arch.staging_limit == 1000
    assert read_vela_ini(str(ini)).memory_modes["Small"]["const_mem_area"] == "Axi1"


def test_unreadable_ini(tmp_path) -> None:
    with pytest.raises(ArchConfigError, match="cannot read Vela configuration file"):
        read_vela_ini(str(tmp_path / "missing.ini"))
