"""Ethos-U specifics: architecture configs, the performance model and the bridge to Vela.

* `arch`: accelerators (ethos-u55-32/64/128/256, ethos-u65-256/512), system configurations and
  memory modes read from the vela.ini Vela ships, resolved to concrete memories.
* `performance`: one NPU operation on one stripe: block config (Vela's SHRAM
  fit and block heuristic), compute cycles and memory traffic.
* `lowering`: which NPU operations an `nn` operator (as the planner sees it) becomes.
* `cost_model`: `EthosUCostModel`, the planner's `CostModel` for the Ethos-U.
* `estimate`: the per-layer estimate of a whole network, operators run alone
  (`cascade-estimate`).

Named `ethos_u`, not `ethosu`, so that running Python from the repository root never
shadows Vela's own `ethosu` package.
"""
