#!/usr/bin/env bash
# Quick start: create .venv, install cascade-opt, and run it on the bundled example network.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .

example=test/Inputs/example_nn.mlir
echo "== cascade-opt $example"
echo "   (parsed, verified and printed back; a bad input gets a file:line:col diagnostic)"
.venv/bin/cascade-opt "$example"

echo "== the pass flags cascade-opt offers (the passes themselves are still planned: see README)"
.venv/bin/cascade-opt --help | sed -n '/^cascade passes:/,$p'
