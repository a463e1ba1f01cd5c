"""The package's structure rules, checked on the source tree (the README's "Import rule"):

* every module of ``src/lensbench`` has at most 400 lines;
* the import graph between lensbench modules (module- and function-level imports, relative ones
  resolved) has no cycle;
* imports go down the layers only: ``cli -> tools -> runtime -> benchmarks -> {scoring, report, media} -> core``
  and ``backends -> {media, core}``; only ``runtime`` (and the ``cli``/``tools`` above it) sees both
  backends and benchmarks;
* nothing outside ``lensbench.testing`` (test helpers) imports it.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path


SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "lensbench"
MAX_LINES = 400

#: top-level package -> the top-level packages it may import (besides itself)
ALLOWED = {
    "core": set(),
    "media": {"core"},
    "scoring": {"core"},
    "report": {"scoring", "media", "core"},
    "backends": {"media", "core"},
    "benchmarks": {"scoring", "report", "media", "core"},
    "runtime": {"benchmarks", "backends", "scoring", "report", "media", "core"},
    "tools": {"runtime", "benchmarks", "backends", "scoring", "report", "media", "core"},
    "cli": {"tools", "runtime", "benchmarks", "backends", "scoring", "report", "media", "core"},
}


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        name = ".".join(p.relative_to(SRC).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


def _imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the lensbench modules it imports (a package import counts as its ``__init__``)."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        pkg = m if p.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods]
                targets = subs or [base]
            else:
                continue
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != m and t.startswith("lensbench."):
                    graph[m].add(t)
    return graph


MODS = _modules()
GRAPH = _imports(MODS)


def _top(mod: str) -> str:
    return mod.split(".")[1] if mod.count(".") else ""


def test_modules_are_at_most_400_lines():
    long = {str(p.relative_to(SRC)): n for p in MODS.values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (``[a, b, ..., a]``), or [] when there is none."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        return list(exc.args[1])
    return []


def test_no_import_cycles():
    assert _cycle(GRAPH) == []
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) != []  # the check finds one where there is one


def _upward(graph: dict[str, set[str]]) -> list[str]:
    """``"a -> b"`` for each import of ``graph`` that goes up the layers (:data:`ALLOWED`)."""
    return sorted(f"{m} -> {t}" for m, ts in graph.items() for t in ts
                  if _top(m) in ALLOWED and _top(t) in ALLOWED and _top(t) != _top(m)
                  and _top(t) not in ALLOWED[_top(m)])


def _testing_users(graph: dict[str, set[str]]) -> list[str]:
    """``"a -> b"`` for each import of ``lensbench.testing`` from outside it."""
    return sorted(f"{m} -> {t}" for m, ts in graph.items() for t in ts
                  if _top(t) == "testing" and _top(m) != "testing")


def test_imports_go_down_the_layers():
    assert _upward(GRAPH) == []
    bad = {"lensbench.core.x": {"lensbench.cli.y"}, "lensbench.backends.x": {"lensbench.benchmarks.y"},
           "lensbench.runtime.x": {"lensbench.backends.y", "lensbench.benchmarks.y"}}
    assert _upward(bad) == ["lensbench.backends.x -> lensbench.benchmarks.y", "lensbench.core.x -> lensbench.cli.y"]


def test_production_code_never_imports_the_test_helpers():
    assert _testing_users(GRAPH) == []
    assert _testing_users({"lensbench.cli.train": {"lensbench.testing.tiny_vlm"},
                           "lensbench.testing.a": {"lensbench.testing.b"}}) == [
        "lensbench.cli.train -> lensbench.testing.tiny_vlm"]
