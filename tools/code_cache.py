"""Keeps the functions `dataclasses` compiles at import time on disk, as Python keeps a module's
bytecode in a `.pyc` file. Used by `cascade-opt`'s entry point only.

`@dataclass` writes the source of each class's `__init__`, `__eq__`, `__hash__`, ... and
compiles it with `exec` while its module imports. A compile imports some 340 dataclasses (xDSL's
attributes and operations, and ours) with about 1,000 such functions; compiling them took
0.14 s of a 0.86 s run (resnet8 for U55-128). A code object depends only on its source, the
compiler flags and the interpreter's bytecode version, so the cache keys each one by a digest of
its source and keeps one file per bytecode version:
`$XDG_CACHE_HOME/cascade-opt/dataclass-code-<tag>-<magic>.marshal` (default `~/.cache`).

The cache replaces the name `exec` in the `dataclasses` module only: a string is compiled as
`exec` would compile it there (file `<string>`, the module's `__future__` flags) or taken from
the cache, then run by the builtin. Like `.pyc` files, the cache is not written when Python is
told not to write bytecode (`-B`, `PYTHONDONTWRITEBYTECODE`); an unreadable or corrupt file is
treated as empty, and a failed write is ignored.
"""

from __future__ import annotations
import __future__

import builtins
import contextlib
import hashlib
import marshal
import os
import sys
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

MAX_ENTRIES = 8192
"""Past this many functions, a save keeps only those this process used: old versions of our
classes would otherwise pile up (a run uses about 1,000)."""


class CodeCache:
    """Code objects of compiled sources, by a digest of the source, loaded from `path`."""

    def __init__(self, path: Path, flags: int = 0) -> None:
        self.path = path
        self.flags = flags
        """Compiler flags every source is compiled with (`__future__` features)."""
        self.codes = _load(path)
        self.used: set[bytes] = set()
        self.compiled = 0
        """Sources compiled by this process (not found in the cache)."""

    def exec(self, source: Any, globals: dict[str, Any] | None = None, locals: Any = None, /) -> None:
        """The builtin `exec`, with `source` compiled once across processes when it is a string."""
        if globals is None:  # exec's default: the caller's namespaces
            caller = sys._getframe(1)
            globals, locals = caller.f_globals, caller.f_locals if locals is None else locals
        if isinstance(source, str):
            source = self.code(source)
        builtins.exec(source, globals, locals)

    def code(self, source: str) -> CodeType:
        """`source` compiled in `exec` mode, from the cache when it holds it."""
        key = hashlib.blake2b(source.encode(), digest_size=16).digest()
        self.used.add(key)
        code = self.codes.get(key)
        if code is None:
            code = compile(source, "<string>", "exec", self.flags, dont_inherit=True)
            self.codes[key] = code
            self.compiled += 1
        return code

    def save(self) -> None:
        """Write the cache if this process compiled anything, atomically (parallel compiles
        each write a whole file; the last one stays)."""
        if not self.compiled:
            return
        codes = self.codes
        if len(codes) > MAX_ENTRIES:
            codes = {key: code for key, code in codes.items() if key in self.used}
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(marshal.dumps(codes))
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)


def _load(path: Path) -> dict[bytes, CodeType]:
    try:
        codes = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    return {key: code for key, code in codes.items() if isinstance(key, bytes) and isinstance(code, CodeType)}


def future_flags(module: ModuleType) -> int:
    """The compiler flags of the `__future__` features `module` imports: what `exec` called
    from that module passes on to the code it compiles."""
    flags = 0
    for name in __future__.all_feature_names:
        feature = getattr(__future__, name)
        if vars(module).get(name) is feature:
            flags |= feature.compiler_flag
    return flags


def default_path() -> Path | None:
    """Where the console scripts keep the cache, or None without a home directory."""
    from importlib.util import MAGIC_NUMBER

    root = os.environ.get("XDG_CACHE_HOME")
    try:
        base = Path(root) if root else Path.home() / ".cache"
    except RuntimeError:
        return None
    tag = sys.implementation.cache_tag or sys.implementation.name
    return base / "cascade-opt" / f"dataclass-code-{tag}-{MAGIC_NUMBER.hex()}.marshal"


def serve_dataclasses(path: Path | None = None) -> CodeCache | None:
    """Compile `dataclasses`' generated functions through a cache at `path` (default
    `default_path()`), saved when the process exits; the cache, or None when there is none."""
    import atexit
    import dataclasses

    path = path or default_path()
    if path is None:
        return None
    cache = CodeCache(path, future_flags(dataclasses))
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]
    if not sys.dont_write_bytecode:
        atexit.register(cache.save)
    return cache
