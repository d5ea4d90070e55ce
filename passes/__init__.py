"""Our passes, registered by name.

Factories import their module only when called, so listing passes (`--help`, the xDSL universe)
does not import any pass implementation.
"""

import importlib
from collections.abc import Callable
from typing import NamedTuple

from xdsl.passes import ModulePass


class PassEntry(NamedTuple):
    """One registered pass: its kebab-case name, its module under `cascade.passes`, its class,
    what it does, and its options with the values they take (for `--help`; a test holds them to
    the class's)."""

    name: str
    module: str
    class_name: str
    summary: str
    options: str = ""

    def load(self) -> type[ModulePass]:
        module = importlib.import_module(f"cascade.passes.{self.module}")
        return getattr(module, self.class_name)


PASSES: tuple[PassEntry, ...] = (
    PassEntry(
        "legalize-tosa",
        "legalize_tosa",
        "LegalizeTosaPass",
        "convert TOSA operations to nn",
        "fully-connected=tflite|conv",
    ),
    PassEntry(
        "cascade-plan",
        "cascade_plan",
        "CascadePlanPass",
        "group nn operations into cascades and choose stripes under an SRAM budget",
        "sram-budget=BYTES accelerator=NAME system-config=NAME memory-mode=NAME "
        "objective=min-sram|min-cycles striping=none|h|hw|c|hc|hwc rolling-axes=h|hw reorder=true|false "
        'fc-on-npu=true|false report="FILE"',
    ),
    PassEntry(
        "rolling-buffer",
        "rolling_buffer",
        "RollingBufferPass",
        "turn intermediates inside cascades into rolling buffers",
    ),
    PassEntry(
        "allocate-memory",
        "allocate_memory",
        "AllocateMemoryPass",
        "place every buffer at an SRAM offset",
        "accelerator=NAME (default: the plan's)",
    ),
    PassEntry(
        "lower-to-ethosu",
        "lower_to_ethosu",
        "LowerToEthosUPass",
        "lower scheduled IR to ethosu NPU commands",
        "accelerator=NAME (default: the plan's) fc-on-npu=true|false (default: the plan's) "
        "check-allocation=true|false (default true)",
    ),
    PassEntry(
        "ethosu-pipeline",
        "ethosu_pipeline",
        "EthosUPipelinePass",
        "run the whole nn-to-ethosu pipeline",
        "accelerator=NAME sram-budget=BYTES system-config=NAME memory-mode=NAME reorder=true|false "
        "striping=none|h|hw|c|hc|hwc fc-on-npu=true|false",
    ),
)


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Map each pass name to a factory that imports and returns the pass class."""
    return {entry.name: entry.load for entry in PASSES}
