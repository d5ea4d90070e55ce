"""ethosu-pipeline: the whole nn-to-ethosu pipeline as one pass.

    cascade-opt net.tflite --ethosu-pipeline='accelerator=ethos-u55-128 sram-budget=65536'

is `cascade-plan{accelerator sram-budget system-config memory-mode reorder striping fc-on-npu}`,
`rolling-buffer`, `allocate-memory{accelerator}` and `lower-to-ethosu{accelerator}` in order
(`stages`), the plan restricted to rolling buffers along rows, the only ones lower-to-ethosu
lowers, and by default to stripes of rows and of channels (`EthosUPipelinePass.striping`).
The names are checked before any work (as cascade-estimate does). `system-config` and
`memory-mode` (Vela's vela.ini section names) price the plan and are recorded on every
`ethosu.command_stream`.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from cascade.dialects import ethosu


@dataclass(frozen=True)
class EthosUPipelinePass(ModulePass):
    """Run cascade-plan, rolling-buffer, allocate-memory and lower-to-ethosu in order.

    Options: `accelerator` (Vela accelerator name), `sram-budget` (bytes), `system-config` and
    `memory-mode` (Vela system configuration and memory mode names), `reorder` (cascade-plan's:
    `false` keeps the model's operator order), `striping` (cascade-plan's, default `hc`),
    `fc-on-npu` (fully connected layers planned and lowered as NPU operators; default: on the
    CPU).
    """

    name = "ethosu-pipeline"

    accelerator: str = "ethos-u55-256"
    sram_budget: int | None = None
    system_config: str | None = None
    memory_mode: str | None = None
    reorder: bool = True
    fc_on_npu: bool = False
    striping: str = "hc"
    """Rows and channels by default, where cascade-plan's default also cuts columns.

    Channel stripes reach what rows cannot (a head's convolution and its global mean). Against
    rows alone (`h`), on six benchmark models (the `_nosoftmax` twins left out; U55-128 and
    U65-256, without a budget and at Vela Size's peak, 2026-12-07) 15 of 24 plans kept their
    peak and cycles. mbv1_025_96 on U55-128 ran 0.8 % faster at the same peak; four plans
    moved by less than 0.1 %. Without a budget on U65-256, ds_cnn_kws and mbv2_100_224 found
    13 % and 30 % smaller peaks (2.1 % and 0.5 % slower, within the 5 % the choice allows),
    while mbv1_100_224 chose a plan of 17,904 bytes, 0.4 % faster, over one of 1,520 (both
    keep all else in DRAM). Planning took as long; lowering each channel stripe on its own
    took longer (mbv1_100_224 for U55-128: 0.25 -> 0.45 s).

    Columns (`hw`, `hwc`): on 2026-12-02, 23 of 32 plans came out the same with rows and
    columns while planning took 1.4 to 3.6 times as long on the MobileNets (mbv2_100_224 at
    its budget: 1.40 s instead of 0.39 s); without a budget, rows and columns found 3.2 and
    4.5 % smaller peaks for mbv1_100_224 and mbv2_100_224 on U55-128. Every striping cuts an
    output one row high (a 1-D network's) in stripes of columns, rolling along them."""

    def check_names(self) -> None:
        """Reject unknown accelerator, system config, memory mode and striping names before any
        work."""
        from cascade.ethos_u.arch import unknown_config_name
        from cascade.passes.planner.plan import PlanningError, PlanOptions

        problem = unknown_config_name(self.accelerator, self.system_config, self.memory_mode)
        if problem is not None:
            raise DiagnosticException(f"{self.name}: {problem}")
        try:
            PlanOptions(striping=self.striping).validate()
        except PlanningError as error:
            raise DiagnosticException(f"{self.name}: {error}") from None

    def stages(self) -> tuple[ModulePass, ...]:
        """The passes this one runs, in order (the report driver runs them one by one)."""
        from cascade.passes.allocate_memory import AllocateMemoryPass
        from cascade.passes.cascade_plan import CascadePlanPass
        from cascade.passes.lower_to_ethosu import LowerToEthosUPass
        from cascade.passes.rolling_buffer import RollingBufferPass

        return (
            CascadePlanPass(
                sram_budget=self.sram_budget,
                accelerator=self.accelerator,
                striping=self.striping,
                system_config=self.system_config,
                memory_mode=self.memory_mode,
                reorder=self.reorder,
                fc_on_npu=self.fc_on_npu,
            ),
            RollingBufferPass(),
            AllocateMemoryPass(accelerator=self.accelerator),
            LowerToEthosUPass(accelerator=self.accelerator, check_allocation=False),  # allocate-memory checked
            RecordStreamConfigPass(self.system_config, self.memory_mode),
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_names()
        for stage in self.stages():
            stage.apply(ctx, op)


@dataclass(frozen=True)
class RecordStreamConfigPass(ModulePass):
    """The last stage of ethosu-pipeline: record the system config and memory mode (when given)
    on every `ethosu.command_stream`."""

    name = "ethosu-pipeline"

    system_config: str | None = None
    memory_mode: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for stream in [o for o in op.walk() if isinstance(o, ethosu.CommandStreamOp)]:
            if self.system_config is not None:
                stream.system_config = StringAttr(self.system_config)
            if self.memory_mode is not None:
                stream.memory_mode = StringAttr(self.memory_mode)
