"""`code_cache`: the functions dataclasses compile, kept across processes and unchanged."""

from __future__ import annotations

import builtins
import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cascade.tools import code_cache
from cascade.tools.code_cache import CodeCache, future_flags, serve_dataclasses

# A process that serves dataclasses from the cache, imports the compiler's pass registry and
# defines a dataclass of each kind, then reports what it compiled and how the classes behave.
_PROCESS = textwrap.dedent(
    """
    import dataclasses, json, sys
    from cascade.tools.code_cache import serve_dataclasses

    cache = serve_dataclasses()

    import cascade.passes.planner.search  # many dataclasses

    @dataclasses.dataclass(frozen=True, order=True)
    class Point:
        x: int
        y: int = 2
        tags: tuple[str, ...] = ()

    @dataclasses.dataclass
    class Box:
        items: list[int] = dataclasses.field(default_factory=list)

    try:
        Point(1).x = 5
        frozen = False
    except dataclasses.FrozenInstanceError:
        frozen = True
    box = Box()
    box.items.append(3)
    behaviour = [repr(Point(1)), Point(1) == Point(1, 2), Point(1) < Point(2), hash(Point(1)) == hash(Point(1)),
                 frozen, Box().items, box.items, Point.__init__.__annotations__.get("x") is int]
    print(json.dumps({"compiled": cache.compiled, "used": len(cache.used), "behaviour": behaviour}))
    """
)


def _run(cache_home: Path, **environment: str) -> dict[str, object]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(XDG_CACHE_HOME=str(cache_home), **environment)
    done = subprocess.run([sys.executable, "-c", _PROCESS], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def _cache_files(cache_home: Path) -> list[Path]:
    return sorted((cache_home / "cascade-opt").glob("dataclass-code-*.marshal"))


def test_a_second_process_compiles_nothing_and_its_classes_behave_the_same(tmp_path: Path) -> None:
    first = _run(tmp_path)
    assert first["compiled"] > 100  # the planner's dataclasses and xDSL's
    assert len(_cache_files(tmp_path)) == 1
    second = _run(tmp_path)
    assert second["compiled"] == 0
    assert second["used"] == first["used"]
    expected = ["Point(x=1, y=2, tags=())", True, True, True, True, [], [3], True]
    assert first["behaviour"] == second["behaviour"] == expected


def test_cascade_opt_fills_the_cache_and_compiles_the_same_with_it(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("cascade-opt")
    model = Path(__file__).parents[1] / "models" / "resnet8.tflite"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    outputs = []
    for run in ("cold", "warm"):
        output = tmp_path / f"{run}.tflite"
        command = [str(script), str(model), "-p", "ethosu-pipeline{accelerator=ethos-u55-128}", "-t", "ethosu-tflite"]
        subprocess.run([*command, "-o", str(output)], env=env, check=True, capture_output=True)
        outputs.append(output.read_bytes())
        [cache_file] = _cache_files(tmp_path / "cache")
        assert len(CodeCache(cache_file).codes) > 500  # xDSL's dataclasses and ours
    assert outputs[0] == outputs[1]


def test_nothing_is_written_when_python_writes_no_bytecode(tmp_path: Path) -> None:
    first = _run(tmp_path, PYTHONDONTWRITEBYTECODE="1")
    assert first["compiled"] > 100
    assert _cache_files(tmp_path) == []


def test_a_corrupt_or_foreign_file_counts_as_empty_and_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "cache.marshal"
    for content in (b"\x00garbage", b""):
        path.write_bytes(content)
        cache = CodeCache(path)
        assert cache.codes == {}
        cache.code("a = 1")
        cache.save()
        assert len(CodeCache(path).codes) == 1
    path.write_bytes(__import__("marshal").dumps({"not bytes": 1, b"k" * 16: "not code"}))
    assert CodeCache(path).codes == {}


def test_a_cached_code_object_equals_a_fresh_compile_with_the_module_flags(tmp_path: Path) -> None:
    source = "def f(x: undefined_name) -> int:\n    return x + 1\n"
    plain = CodeCache(tmp_path / "plain.marshal", future_flags(dataclasses))
    plain.code(source)
    plain.save()
    reloaded = CodeCache(tmp_path / "plain.marshal", future_flags(dataclasses)).code(source)
    assert reloaded == compile(source, "<string>", "exec", dont_inherit=True)
    namespace: dict[str, object] = {}
    with pytest.raises(NameError):  # dataclasses has no `from __future__ import annotations`
        builtins.exec(reloaded, namespace)
    # A module with postponed annotations passes the flag on, as `exec` from it would.
    postponed = CodeCache(tmp_path / "postponed.marshal", future_flags(code_cache)).code(source)
    builtins.exec(postponed, namespace)
    assert namespace["f"].__annotations__ == {"x": "undefined_name", "return": "int"}  # type: ignore[attr-defined]


def test_exec_without_namespaces_runs_in_the_callers(tmp_path: Path) -> None:
    cache = CodeCache(tmp_path / "c.marshal")
    caller: dict[str, object] = {"cache": cache}
    builtins.exec("cache.exec('result = 6 * 7')", caller)
    assert caller["result"] == 42
    given: dict[str, object] = {}
    cache.exec("value = 'given'", given)
    assert given["value"] == "given"


def test_a_full_cache_keeps_only_what_the_process_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.marshal"
    old = CodeCache(path)
    for index in range(5):
        old.code(f"a = {index}")
    old.save()
    monkeypatch.setattr(code_cache, "MAX_ENTRIES", 4)
    cache = CodeCache(path)
    cache.code("a = 0")
    cache.code("b = 1")  # new: 6 entries, over the limit
    cache.save()
    assert len(CodeCache(path).codes) == 2


def test_an_unwritable_cache_is_ignored(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = CodeCache(blocker / "sub" / "c.marshal")
    cache.code("a = 1")
    cache.save()  # the parent is a file: no error, no cache
    assert not (blocker / "sub").exists()


def test_serving_dataclasses_replaces_only_their_exec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dataclasses, "exec", builtins.exec, raising=False)
    cache = serve_dataclasses(tmp_path / "c.marshal")
    assert cache is not None
    assert dataclasses.exec == cache.exec  # type: ignore[attr-defined]

    @dataclasses.dataclass
    class Pair:
        left: int
        right: int

    assert cache.compiled >= 3  # __init__, __repr__, __eq__
    assert Pair(1, 2) == Pair(1, 2)
    assert builtins.exec is not cache.exec
