"""cascade-bench: our whole pipeline against Vela 5.2.0, side by side (console entry point).

The implementation is `cascade.benchmarks.cascade_bench` (also runnable as
`python benchmarks/cascade_bench.py` from a checkout); see its docstring.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> None:
    from cascade.benchmarks.cascade_bench import main as bench_main

    raise SystemExit(bench_main(argv))


if __name__ == "__main__":
    main()
