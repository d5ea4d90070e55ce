#!/usr/bin/env bash
# Quick start: create .venv, install cascade-opt, and run the main job on a bundled model:
# import an int8 ResNet-8, plan its cascades under an SRAM budget, and prove by execution
# that the planned program computes exactly what TFLite's reference kernels compute.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

model=test/models/resnet8.tflite
out=$(mktemp -d)
echo "== cascade-opt $model --cascade-plan (ethos-u55-128, budget 40 KiB)"
.venv/bin/cascade-opt "$model" --print-debuginfo -o "$out/planned.mlir" \
  --cascade-plan="accelerator=ethos-u55-128 sram-budget=40960 report=\"$out/plan.json\""
.venv/bin/python - "$out/plan.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
chosen = report["chosen"]
print(f"   chosen plan: peak SRAM {chosen['peak_sram_bytes']} B, {chosen['cycles']} cycles, "
      f"{chosen['cascades']} cascades (row-striping lower bound {report['lower_bound_bytes']} B)")
print(f"   Pareto front: {len(report['front'])} plans from "
      f"{min(p['peak_sram_bytes'] for p in report['front'])} B to {max(p['peak_sram_bytes'] for p in report['front'])} B")
PY
echo "   the cascades, with their stripes (full IR in $out/planned.mlir):"
grep -o 'cascade.group ins(.*num_stripes \[[0-9, ]*\]' "$out/planned.mlir" | sed 's/ins(.*) ->/... ->/; s/^/     /'

echo "== cascade-run: the planned program against TFLite's reference kernels, every tensor"
.venv/bin/cascade-run "$out/planned.mlir" --seed 1 --compare-tflite "$model"

echo "== cascade-estimate: Vela-calibrated cycles per layer, unfused (last lines)"
.venv/bin/cascade-estimate "$model" --accelerator ethos-u55-128 | tail -n 3
