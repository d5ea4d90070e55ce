"""The cascading planner's search: pure Python over a small graph model, no IR types.

`graph` describes operators as the planner sees them; `cost` is the interface through
which a target (e.g. `cascade.ethos_u`) prices a stripe. Nothing here imports a target.
"""
