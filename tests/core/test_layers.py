"""The import rule of DESIGN.md, checked on the source, string imports included (issue 35.2):
``cli -> tools -> runtime -> views -> benchmarks -> {scoring, report, media} -> core`` and
``backends -> {media, core}``. An import is an ``import`` statement (at any depth, lazy ones too), a literal
``importlib.import_module("lensbench...")`` / ``__import__``, or any string constant that names a lensbench
module, ``"module"`` or ``"module:attr"`` (a registry's lazy factory, an entry table's target, a package whose
resources are read): a load by name is an import like any other, only one that no picture shows. A load whose
name is computed (``import_module(f"{pkg}.{name}")``) cannot be checked: such sites are listed here, each with
the reason it is allowed, and a new one fails the test."""

from __future__ import annotations

import ast
import re
from contextlib import contextmanager
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PKG = SRC / "lensbench"

#: layer of each top-level part of lensbench: an import may go to the same or a lower layer only
#: (``api``, the library's face of the runtime, sits between the runtime and the tools that call it)
RANK = {"core": 0, "media": 1, "scoring": 1, "report": 2, "backends": 2, "benchmarks": 3, "views": 4, "analysis": 4, "runtime": 5,
        "api": 6, "testing": 7, "tools": 7, "cli": 8, "__init__": 9, "__main__": 9}
#: parts that may import only the parts named (besides themselves): DESIGN.md's second arrow, and the
#: declarative layer below the benchmarks never reaching sideways into the backends
ONLY = {"backends": {"media", "core"}, "report": {"scoring", "media", "core"}, "scoring": {"core"},
        "media": {"core"}, "core": set()}
#: computed loads by name: (file, the call's source) -> why the name cannot break the rule
COMPUTED = {
    ("backends/providers.py", "importlib.import_module(mod)"): "targets are the PROVIDERS table's constants",
    ("benchmarks/registry.py", "importlib.import_module(mod)"): "targets are the BENCHMARKS table's constants "
                                                                "and third-party entry points",
    ("benchmarks/base.py", "importlib.import_module(mod)"): "targets are the benchmarks' ``pieces`` constants",
    ("cli/lazy.py", "importlib.import_module(mod)"): "targets are the CLI's command and tool-group constants",
    ("cli/train.py", "importlib.import_module(mod)"): "targets are the TRAIN_RECIPES constants",
    ("core/extras.py", "importlib.import_module(module_name)"): "optional third-party libraries only",
}
TARGET = re.compile(r"lensbench(?:\.\w+)+(?::\w+(?:\.\w+)*)?")


def _module(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts[:-1]) if rel.name == "__init__" else list(rel.parts)
    return ".".join(parts)


def _exists(mod: str) -> bool:
    p = SRC.joinpath(*mod.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _resolve(name: str) -> str | None:
    """The lensbench module a dotted name or ``module:attr`` target lands in (its longest existing prefix)."""
    parts = name.partition(":")[0].split(".")
    for n in range(len(parts), 1, -1):
        if _exists(".".join(parts[:n])):
            return ".".join(parts[:n])
    return None


def _part(mod: str) -> str:
    return (mod.split(".") + ["__init__"])[1]


def _is_load_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
        or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__")))


def edges(path: Path) -> tuple[list[tuple[str, int, str]], list[str]]:
    """``([(imported module, line, how)], [computed load calls])`` of one source file; ``how`` is
    ``import`` or ``by name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module(path)
    out: list[tuple[str, int, str]] = []
    computed: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno, "import") for a in node.names if a.name.startswith("lensbench")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = me.split(".")[: len(me.split(".")) - node.level + (path.name == "__init__.py")]
                base = ".".join(up + ([base] if base else []))
            if base.startswith("lensbench"):
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    out.append((sub if _exists(sub) else base, node.lineno, "import"))
        elif _is_load_call(node):
            arg = node.args[0] if node.args else None
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                computed.append(ast.unparse(node))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and TARGET.fullmatch(node.value):
            mod = _resolve(node.value)
            if mod is not None:
                out.append((mod, node.lineno, "by name"))
    return out, computed


def violations() -> tuple[list[str], list[str], int]:
    """(import-rule breaches, unlisted computed loads, number of by-name edges checked) over all of src/."""
    bad, unknown, by_name = [], [], 0
    for path in sorted(PKG.rglob("*.py")):
        me = _module(path)
        mine = _part(me)
        found, computed = edges(path)
        rel = str(path.relative_to(PKG))
        for mod, line, how in found:
            by_name += how == "by name"
            theirs = _part(mod)
            if theirs == mine:
                continue
            if RANK[theirs] > RANK[mine] or (mine in ONLY and theirs not in ONLY[mine]):
                bad.append(f"{rel}:{line}: {mine} -> {theirs} ({how}: {mod})")
        unknown += [f"{rel}: {c}" for c in computed if (rel, c) not in COMPUTED]
    return bad, unknown, by_name


def test_every_import_follows_the_rule_string_imports_included():
    bad, unknown, by_name = violations()
    assert not bad, "\n".join(bad)
    assert not unknown, "loads by a computed name (list them in COMPUTED with the reason):\n" + "\n".join(unknown)
    assert by_name >= 10  # the registries' tables are read (benchmarks, backends, tool groups)


def test_every_piece_of_every_benchmark_names_a_callable():
    """One rule for the optional pieces (issue 35.4): each is a ``"module:attr"`` literal of ``pieces``, found
    through ``Benchmark.piece``; every declared one imports and is callable, and the five built-in benchmarks
    declare all five kinds (their demo, statistics, paper declaration, crafted records and plots)."""
    from lensbench.benchmarks.base import Benchmark
    from lensbench.benchmarks.registry import BENCHMARKS, get_benchmark

    kinds = {"demo", "stats", "reproduce", "crafted", "figures"}
    for name in BENCHMARKS:
        cls = get_benchmark(name)
        assert set(cls.pieces) <= kinds, (name, set(cls.pieces) - kinds)
        for piece in cls.pieces:
            assert callable(cls.piece(piece)), (name, piece)
    for name in ("rgb-th-bench", "if-bench", "iv-bench", "gobench", "groundingme"):
        assert set(get_benchmark(name).pieces) == kinds, name
    gm, rej = get_benchmark("groundingme").pieces, get_benchmark("grounding-rej").pieces
    assert Benchmark.pieces == {} and {**rej, "demo": gm["demo"]} == gm  # the variant: its own items-format demo
    assert rej["demo"] != gm["demo"]


def test_every_part_has_a_layer():
    parts = {p.stem if p.is_file() else p.name for p in PKG.iterdir()
             if p.suffix == ".py" or (p.is_dir() and any(p.rglob("*.py")))}
    assert parts == set(RANK), parts ^ set(RANK)


@contextmanager
def _probe(source: str):
    """A throwaway module ``lensbench.core._layer_probe`` holding ``source``, removed afterwards."""
    path = PKG / "core" / "_layer_probe.py"
    path.write_text(source, encoding="utf-8")
    try:
        yield path
    finally:
        path.unlink()


@pytest.mark.parametrize("source, expected", [
    ('import importlib\nimportlib.import_module("lensbench.benchmarks.registry")\n',
     "core -> benchmarks (by name: lensbench.benchmarks.registry)"),
    ('T = {"x": "lensbench.views.leaderboard:build_leaderboard"}\n',
     "core -> views (by name: lensbench.views.leaderboard)"),
    ('read_text("lensbench.views.viewer", "assets", "viewer.css")\n',
     "core -> views (by name: lensbench.views.viewer)"),
    ("def f():\n    from lensbench.runtime import store\n", "core -> runtime (import: lensbench.runtime.store)"),
    ("from lensbench.core import types\n", None),
])
def test_an_upward_import_is_caught_string_imports_too(source, expected):
    """The check itself: a load by name, a registry target, a resource package and a lazy import, each upward,
    are each reported once; a downward one is not."""
    with _probe(source):
        bad, _unknown, _n = violations()
    assert [b.split(": ", 1)[1] for b in bad if "_layer_probe" in b] == ([expected] if expected else [])


def test_a_computed_load_is_reported_until_listed():
    with _probe('import importlib\nname = "x"\nimportlib.import_module(f"lensbench.{name}")\n') as path:
        found, computed = edges(path)
        _bad, unknown, _n = violations()
    assert computed == ["importlib.import_module(f'lensbench.{name}')"] and found == []
    assert [u for u in unknown if "_layer_probe" in u] == [
        "core/_layer_probe.py: importlib.import_module(f'lensbench.{name}')"]
