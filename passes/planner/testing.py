"""Small programs and an analytical cost model, for tests and examples of the planner.

`ToyProgram` builds `OpInfo`s for NHWC convolutions, depthwise convolutions, pools, adds and
global means with the same access relations the `nn` dialect derives (`dialects.access`
helpers), without any IR. `AnalyticalCost` is an honest, simple `CostModel`:

* cycles of a stripe = `overhead` per stripe + MACs / `macs_per_cycle` + bytes moved /
  `bytes_per_cycle`, where the bytes are the input regions read, the output written, and the
  weights when they are streamed (read again for every stripe) rather than kept in SRAM;
* `buffer_bytes` = the region's volume times the element size, rounded up to 16;
* `weight_buffer_bytes` = the weights' bytes rounded up to 16;
* `weight_transfer_cycles` = weight bytes / `bytes_per_cycle`.

Pure Python: no IR types, no target.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from cascade.dialects.access import (
    Region,
    broadcast_relation,
    follows_axis,
    reads_whole_axis,
    relation_from_rows,
    window_row,
)
from cascade.passes.planner.graph import OpInfo, TensorInfo


def _round16(value: int) -> int:
    return -(-value // 16) * 16


@dataclass
class ToyProgram:
    """A program under construction: `input` then ops appended in order (`ops`)."""

    input_shape: tuple[int, ...]
    ops: list[OpInfo] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    graph_inputs: tuple[str, ...] = ("x",)

    @property
    def x(self) -> TensorInfo:
        return TensorInfo("x", self.input_shape)

    @property
    def graph_outputs(self) -> tuple[str, ...]:
        return tuple(self.outputs) if self.outputs else (self.ops[-1].output.name,)

    def _name(self) -> str:
        return f"t{len(self.ops)}"

    def window(
        self,
        source: TensorInfo,
        kind: str,
        kernel: tuple[int, int],
        stride: tuple[int, int] = (1, 1),
        padding: tuple[int, int, int, int] = (0, 0, 0, 0),
        channels: int | None = None,
        dilation: tuple[int, int] = (1, 1),
    ) -> TensorInfo:
        """Append a conv2d, depthwise_conv2d or pool2d reading `source`; returns its output."""
        n, h, w, c = source.shape
        top, left, bottom, right = padding
        out_h = (h + top + bottom - ((kernel[0] - 1) * dilation[0] + 1)) // stride[0] + 1
        out_w = (w + left + right - ((kernel[1] - 1) * dilation[1] + 1)) // stride[1] + 1
        out_c = channels if kind == "conv2d" and channels is not None else c
        output = TensorInfo(self._name(), (n, out_h, out_w, out_c))
        spatial = [
            follows_axis(4, 0),
            window_row(4, 1, stride[0], kernel[0], dilation[0], top),
            window_row(4, 2, stride[1], kernel[1], dilation[1], left),
        ]
        weights: tuple[TensorInfo, ...] = ()
        weight_relations = ()
        if kind == "conv2d":
            relation = relation_from_rows([*spatial, reads_whole_axis(4, c)])
            weights = (TensorInfo(f"{output.name}.w", (out_c, kernel[0], kernel[1], c)),)
            weight_relations = (
                relation_from_rows(
                    [
                        follows_axis(4, 3),
                        reads_whole_axis(4, kernel[0]),
                        reads_whole_axis(4, kernel[1]),
                        reads_whole_axis(4, c),
                    ]
                ),
            )
            macs = out_h * out_w * out_c * kernel[0] * kernel[1] * c
        elif kind == "depthwise_conv2d":
            relation = relation_from_rows([*spatial, follows_axis(4, 3)])
            weights = (TensorInfo(f"{output.name}.w", (1, kernel[0], kernel[1], c)),)
            weight_relations = (
                relation_from_rows(
                    [
                        reads_whole_axis(4, 1),
                        reads_whole_axis(4, kernel[0]),
                        reads_whole_axis(4, kernel[1]),
                        follows_axis(4, 3),
                    ]
                ),
            )
            macs = out_h * out_w * c * kernel[0] * kernel[1]
        else:
            relation = relation_from_rows([*spatial, follows_axis(4, 3)])
            macs = 0
        attributes: dict[str, object] = {
            "kernel": kernel,
            "stride": stride,
            "dilation": dilation,
            "padding": padding,
            "macs": macs,
        }
        self.ops.append(
            OpInfo(output.name, kind, output, (source,), (relation,), weights, weight_relations, attributes)
        )
        return output

    def conv(self, source: TensorInfo, k: int, s: int = 1, pad: int = 0, channels: int | None = None) -> TensorInfo:
        return self.window(source, "conv2d", (k, k), (s, s), (pad, pad, pad, pad), channels)

    def dw(self, source: TensorInfo, k: int, s: int = 1, pad: int = 0) -> TensorInfo:
        return self.window(source, "depthwise_conv2d", (k, k), (s, s), (pad, pad, pad, pad))

    def pool(self, source: TensorInfo, k: int, s: int = 1, pad: int = 0) -> TensorInfo:
        return self.window(source, "pool2d", (k, k), (s, s), (pad, pad, pad, pad))

    def add(self, a: TensorInfo, b: TensorInfo) -> TensorInfo:
        output = TensorInfo(self._name(), a.shape)
        relations = (broadcast_relation(a.shape, a.shape), broadcast_relation(b.shape, a.shape))
        self.ops.append(OpInfo(output.name, "add", output, (a, b), relations, attributes={"macs": 0}))
        return output

    def upscale(self, source: TensorInfo, factor: int) -> TensorInfo:
        """Nearest-neighbour upscaling by `factor` (output row y reads input row y // factor)."""
        n, h, w, c = source.shape
        output = TensorInfo(self._name(), (n, h * factor, w * factor, c))
        relation = relation_from_rows(
            [
                follows_axis(4, 0),
                follows_axis(4, 1, Fraction(1, factor)),
                follows_axis(4, 2, Fraction(1, factor)),
                follows_axis(4, 3),
            ]
        )
        self.ops.append(OpInfo(output.name, "resize", output, (source,), (relation,), attributes={"macs": 0}))
        return output

    def mean(self, source: TensorInfo) -> TensorInfo:
        """A global mean over rows and columns, as the `nn` dialect relates it: output `[N, C]`,
        channel c reading channel c of every row and column (cascaded along channels only)."""
        n, h, w, c = source.shape
        output = TensorInfo(self._name(), (n, c))
        rows = [follows_axis(2, 0), reads_whole_axis(2, h), reads_whole_axis(2, w), follows_axis(2, 1)]
        self.ops.append(
            OpInfo(output.name, "mean", output, (source,), (relation_from_rows(rows),), attributes={"macs": 0})
        )
        return output

    def whole(self, source: TensorInfo, kind: str = "mean") -> TensorInfo:
        """An operator reading its whole input (like mean over H and W): never cascaded."""
        output = TensorInfo(self._name(), (source.shape[0], source.shape[3]))
        relation = relation_from_rows([reads_whole_axis(2, size) for size in source.shape])
        self.ops.append(OpInfo(output.name, kind, output, (source,), (relation,), attributes={"macs": 0}))
        return output


@dataclass
class AnalyticalCost:
    """A simple `CostModel` (see the module docstring)."""

    macs_per_cycle: int = 64
    bytes_per_cycle: int = 4
    overhead: int = 100
    weight_bytes_per_cycle: int = 1

    def stripe_cycles(self, op: OpInfo, output: Region, weights_in_sram: bool) -> int:
        volume = output.volume
        total = op.output.bytes
        macs = op.macs * volume // total if total else 0
        moved = volume * op.output.element_bytes
        for tensor, relation in zip(op.inputs, op.input_relations, strict=True):
            moved += relation.input_region(output, tensor.shape).volume * tensor.element_bytes
        weights = sum(w.bytes for w in op.weights)
        cycles = self.overhead + macs // self.macs_per_cycle + moved // self.bytes_per_cycle
        if weights:
            cycles += weights // (self.bytes_per_cycle if weights_in_sram else self.weight_bytes_per_cycle)
        return cycles

    def weight_buffer_bytes(self, op: OpInfo) -> int:
        return _round16(sum(w.bytes for w in op.weights))

    def buffer_bytes(self, tensor: TensorInfo, region_shape: Sequence[int]) -> int:
        return _round16(math.prod(region_shape) * tensor.element_bytes)

    def weight_transfer_cycles(self, op: OpInfo) -> int:
        return sum(w.bytes for w in op.weights) // self.weight_bytes_per_cycle
