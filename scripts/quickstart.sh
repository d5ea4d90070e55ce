#!/usr/bin/env bash
# Quick start: create .venv, install cascade-opt, and run the main job on a bundled model:
# import an int8 ResNet-8, plan its cascades under an SRAM budget, turn intermediates into
# rolling buffers, place every buffer in SRAM, and prove by executing the schedule stripe by
# stripe in one flat SRAM array that it computes exactly what TFLite's reference kernels compute;
# then compile it end to end to Ethos-U command streams in a deployable .tflite (Vela's format)
# and run those streams on the NPU's functional model against TFLite again.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

model=test/models/resnet8.tflite
out=$(mktemp -d)
echo "== cascade-opt $model --cascade-plan --rolling-buffer --allocate-memory (ethos-u55-128, budget 40 KiB)"
.venv/bin/cascade-opt "$model" --print-debuginfo -o "$out/scheduled.mlir" \
  --cascade-plan="accelerator=ethos-u55-128 sram-budget=40960 report=\"$out/plan.json\"" \
  --rolling-buffer --allocate-memory=accelerator=ethos-u55-128
.venv/bin/python - "$out/plan.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
chosen = report["chosen"]
print(f"   chosen plan: peak SRAM {chosen['peak_sram_bytes']} B, {chosen['cycles']} cycles, "
      f"{chosen['cascades']} cascades (row-striping lower bound {report['lower_bound_bytes']} B)")
print(f"   Pareto front: {len(report['front'])} plans from "
      f"{min(p['peak_sram_bytes'] for p in report['front'])} B to {max(p['peak_sram_bytes'] for p in report['front'])} B")
PY
echo "   the stripe loops and rolling buffers (full IR in $out/scheduled.mlir):"
grep -o 'cascade.for_stripes .*num_stripes \[[0-9, ]*\]\|cascade.rolling_buffer .* depth [0-9]*\|cascade.allocated_peak_bytes = [0-9]*' \
  "$out/scheduled.mlir" | sed 's/ins(.*) ->/... ->/; s/^/     /'

echo "== cascade-run: the schedule, executed in one flat SRAM array, against TFLite's reference kernels"
.venv/bin/cascade-run "$out/scheduled.mlir" --seed 1 --compare-tflite "$model"

echo "== cascade-opt -p ethosu-pipeline -t ethosu-tflite --report: the deployable model (same budget)"
.venv/bin/cascade-opt "$model" -p 'ethosu-pipeline{accelerator=ethos-u55-128 sram-budget=40960}' -o "$out/lowered.mlir"
.venv/bin/cascade-opt "$model" -p 'ethosu-pipeline{accelerator=ethos-u55-128 sram-budget=40960}' \
  -t ethosu-tflite -o "$out/resnet8_ethosu.tflite" --report "$out/report.json"
echo "   written: $out/resnet8_ethosu.tflite ($(wc -c < "$out/resnet8_ethosu.tflite") bytes), report $out/report.json"

echo "== cascade-run: the command streams, run by the NPU functional model, against TFLite"
.venv/bin/cascade-run "$out/lowered.mlir" --seed 1 --compare-tflite "$model"

echo "== cascade-estimate: Vela-calibrated cycles per layer, unfused (last lines)"
.venv/bin/cascade-estimate "$model" --accelerator ethos-u55-128 | tail -n 3
