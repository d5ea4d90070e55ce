"""Console-script entry points: each command starts with Python's cyclic garbage collector off
and its dataclasses' generated functions from a cache, and leaves without the collector's last
pass.

A compile is one short process that builds a large graph of IR objects and keeps most of them
to the end, so the collector's passes find almost nothing to free. Turning it off before the
imports saves 5-12 % of wall time on U55-128 (`-p ethosu-pipeline -t ethosu-tflite --report`,
runs alternated): ds_cnn_kws 0.66 -> 0.59 s, resnet8 1.09 -> 1.02 s, mbv2_100_224 7.2 -> 6.3 s,
for 1.4 % more peak memory (239 -> 243 MB).

With the collector off, every object the compile made is still tracked when the interpreter
exits, and its shutdown runs one full collection over all of them: 0.08 s for resnet8's 85,000
objects, and the whole exit took 0.1-0.2 s of a 0.9 s run. `gc.freeze()` moves them to the
permanent generation that collection skips; the exit still flushes, closes and runs its atexit
handlers as usual.

Compiling the methods of the dataclasses the imports define took 0.14 s of that run too:
`code_cache` keeps them across runs. Library users (the Python API, the tests) keep the
collector and compile their dataclasses: only this entry point does either.
"""

from __future__ import annotations

import gc


def cascade_opt() -> None:
    gc.disable()
    from cascade.tools.code_cache import serve_dataclasses

    serve_dataclasses()
    from cascade.tools.cascade_opt import main

    try:
        main()
    finally:
        gc.freeze()
