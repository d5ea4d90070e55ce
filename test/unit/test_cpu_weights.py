"""An operator that lowering leaves on the CPU gets no SRAM weight buffer: the CPU reads its
weights where TFLite keeps them, so a buffer for them would only raise the arena.

The model is a classifier head as Keras writes it: a 3x3 convolution (on the NPU), a global
MEAN, and a 32 -> 1024 FULLY_CONNECTED, which lower-to-ethosu leaves on the CPU unless
`fc-on-npu`. Its 32 KiB of weights would fit a 64 KiB budget, double-buffered in slices and
copied in while the convolution runs; that buffer is what the planner used to choose there.
With `fc-on-npu` the layer is an NPU operator, planned with that buffer and lowered to read it.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from cascade.dialects import nn
from cascade.ethos_u.tflite_output import lowered_tflite
from cascade.frontends.tflite import import_tflite
from cascade.frontends.tflite_writer import ModelBuilder, options
from cascade.passes.cascade_plan import CascadePlanPass
from cascade.passes.ethosu_pipeline import EthosUPipelinePass

ACCELERATOR = "ethos-u55-128"
SHAPE = [1, 16, 16, 32]
CLASSES = 1024


@functools.cache
def head_model() -> bytes:
    """x (16x16x32) -> 3x3 conv (32 ch) -> MEAN over H, W -> FULLY_CONNECTED (1024 classes)."""
    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x = mb.add_tensor("x", SHAPE, "int8", scale=0.05, zero_point=-3)
    conv_weights = rng.integers(-90, 90, (32, 3, 3, 32))
    w = mb.add_tensor("w", [32, 3, 3, 32], "int8", scale=[0.002] * 32, zero_point=0, data=conv_weights)
    b = mb.add_tensor("b", [32], "int32", scale=[0.0001] * 32, zero_point=0, data=rng.integers(-500, 500, 32))
    h = mb.add_tensor("h", SHAPE, "int8", scale=0.04, zero_point=1)
    conv = options("Conv2DOptions", padding="SAME", stride_w=1, stride_h=1)
    mb.add_operator("CONV_2D", [x, w, b], [h], conv, version=3)
    axes = mb.add_tensor("axes", [2], "int32", data=np.asarray([1, 2]))
    pooled = mb.add_tensor("pooled", [1, 32], "int8", scale=0.03, zero_point=2)
    mb.add_operator("MEAN", [h, axes], [pooled], options("ReducerOptions", keep_dims=False), version=2)
    fc_weights = rng.integers(-127, 128, (CLASSES, 32))
    w1 = mb.add_tensor("w1", [CLASSES, 32], "int8", scale=[0.004] * CLASSES, zero_point=0, data=fc_weights)
    y = mb.add_tensor("y", [1, CLASSES], "int8", scale=0.05, zero_point=0)
    mb.add_operator("FULLY_CONNECTED", [pooled, w1, -1], [y], options("FullyConnectedOptions"), version=4)
    return mb.build([x], [y])


def _fully_connected(module: ModuleOp) -> nn.FullyConnectedOp:
    (op,) = [op for op in module.walk() if isinstance(op, nn.FullyConnectedOp)]
    return op


def _peak(module: ModuleOp) -> int:
    (function,) = [op for op in module.walk() if "cascade.allocated_peak_bytes" in op.attributes]
    return function.attributes["cascade.allocated_peak_bytes"].value.data  # type: ignore[attr-defined]


@pytest.mark.parametrize("budget", [None, 65536])
def test_a_cpu_fully_connected_layer_reads_its_weights_where_they_are(budget: int | None) -> None:
    module = import_tflite(head_model())
    CascadePlanPass(accelerator=ACCELERATOR, sram_budget=budget).apply(Context(), module)
    fc = _fully_connected(module)
    assert str(fc.attributes["cascade.weights"]) == "#cascade.weights<stream>"
    assert "cascade.weight_slice_depth" not in fc.attributes
    assert "cascade.prefetch" not in fc.attributes


def test_a_larger_budget_buys_the_cpu_layer_no_buffer_and_the_program_runs_as_tflite_does() -> None:
    litert = pytest.importorskip("cascade.interpreter.litert")
    pytest.importorskip("ai_edge_litert")
    peaks = []
    for budget in (None, 65536):
        module = import_tflite(head_model())
        EthosUPipelinePass(accelerator=ACCELERATOR, sram_budget=budget).apply(Context(), module)
        assert "cascade.weights_placement" not in _fully_connected(module).attributes
        peaks.append(_peak(module))
        deployable = lowered_tflite(module)
        for seed in (0, 1):
            inputs = [np.random.default_rng(seed).integers(-128, 128, size=SHAPE, dtype=np.int8)]
            ours = litert.run_ethosu_tflite(deployable, inputs).outputs[0]
            assert len(np.unique(ours)) > 50
            np.testing.assert_array_equal(ours, litert.invoke(head_model(), inputs).outputs[0])
    # Nothing the budget could buy is faster: the same plan, the same arena.
    assert peaks[0] == peaks[1]


def test_with_fc_on_npu_the_layer_is_planned_and_lowered_with_its_weights_in_sram() -> None:
    from cascade.dialects import ethosu
    from cascade.ethos_u.report import compile_report
    from cascade.interpreter.nn import run_program
    from cascade.passes.lower_to_ethosu import run_lowered

    inputs = [np.random.default_rng(0).integers(-128, 128, size=SHAPE, dtype=np.int8)]
    want = run_program(import_tflite(head_model()), inputs).outputs[0].astype(np.int64)
    module = import_tflite(head_model())
    pipeline = EthosUPipelinePass(accelerator=ACCELERATOR, sram_budget=65536, fc_on_npu=True)
    planned = module.clone()
    pipeline.stages()[0].apply(Context(), planned)
    fc = _fully_connected(planned)
    assert str(fc.attributes["cascade.weights"]) == "#cascade.weights<sram>"
    assert "cascade.fc_on_npu" in planned.ops.first.attributes  # type: ignore[union-attr]
    pipeline.apply(Context(), module)
    # The whole head runs in one command stream, the FC reading its weights from SRAM (region 1).
    assert not [op for op in module.walk() if isinstance(op, nn.NNOperation)]
    (stream,) = [op for op in module.walk() if isinstance(op, ethosu.CommandStreamOp)]
    fc_commands = [op for op in stream.commands if isinstance(op, ethosu.Conv2DOp) and op.ofm.shape.height == 1]
    assert sum(op.ofm.shape.depth for op in fc_commands) == CLASSES  # in slices of output channels
    assert all(attr.region == 1 for op in fc_commands for attr in op.weights)
    # The NPU's fixed-point FC may differ from TFLite's by 1 LSB (why it stays on the CPU by
    # default); the outputs are not degenerate.
    got = run_lowered(module, inputs)[0].astype(np.int64)
    assert len(np.unique(got)) > 50
    assert np.abs(got - want).max() <= 1
    report = compile_report(module, planned=planned)
    assert report["cpu_ops"] == 0
    assert report["peak_sram_bytes"] <= 65536
