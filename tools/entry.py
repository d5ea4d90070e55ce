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
permanent generation that collection skips. The rest of a normal shutdown tears down some 590
modules and frees their objects one by one, which no one is there to see: once a compile has
returned its status, `leave` runs the exit handlers and flushes the standard streams as the
interpreter would, then ends the process (mbv1_025_96 for U55-128: 0.038-0.052 s from the end
of the compile to the end of the process, 0.009-0.012 s so).

Compiling the methods of the dataclasses the imports define took 0.14 s of that run too:
`code_cache` keeps them across runs. The operations' assembly formats are compiled when first
used (`lazy_formats`). Library users (the Python API, the tests) keep the
collector and compile their dataclasses and formats at import: only this entry point does
otherwise.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from typing import NoReturn


def cascade_opt() -> None:
    gc.disable()
    from cascade.tools.code_cache import serve_dataclasses
    from cascade.tools.lazy_formats import defer_assembly_formats

    serve_dataclasses()
    defer_assembly_formats()
    from cascade.tools.cascade_opt import run

    try:
        status = run()
    finally:
        gc.freeze()  # an exception still leaves the usual way, with its traceback
    leave(status)


def leave(status: int) -> NoReturn:
    """End the process with `status` after what a normal exit does that anyone can observe:
    the exit handlers run (`code_cache` saves there) and the standard streams flushed. A stream
    that cannot be flushed (a closed pipe) makes a successful run fail with 120, as it would."""
    atexit._run_exitfuncs()  # what the interpreter's own exit calls first
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 120
    os._exit(status)
