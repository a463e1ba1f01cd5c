"""lensbench.core.extras.require: returns the module, or one line with the install hint."""

from __future__ import annotations

import sys

import pytest

from lensbench.core.errors import LensbenchError
from lensbench.core.extras import MissingExtraError, declared_extras, install_hint, require


def test_require_returns_module():
    assert require("json", "data") is sys.modules["json"]


def test_missing_module_gives_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "av", None)
    with pytest.raises(MissingExtraError) as ei:
        require("av", "video", "video decoding")
    msg = str(ei.value)
    assert isinstance(ei.value, LensbenchError)
    assert "\n" not in msg
    assert msg == "video decoding needs the Python module 'av': pip install 'lensbench[video]'"


def test_missing_dependency_of_module_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # may be imported already by other tests
    with pytest.raises(MissingExtraError, match=r"pip install 'lensbench\[stats\]'"):
        require("scipy.stats", "stats")


def test_unknown_extra_is_a_bug():
    with pytest.raises(ValueError):
        require("json", "nonsense")


def test_every_extra_is_in_pyproject():
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    doc = tomllib.loads((root / "pyproject.toml").read_text())
    extras = doc["project"]["optional-dependencies"]
    assert declared_extras() is None or declared_extras() == set(extras)  # the installed metadata is pyproject's
    # every extra the source names in require(...) / Requirement(...) is declared in pyproject
    named = _extras_named_in(root / "src" / "lensbench")
    assert len(named) >= 8 and {e for e, _where in named} <= set(extras), [n for n in named if n[0] not in extras]
    assert install_hint("plots") == "pip install 'lensbench[plots]'"
    # the core stays slim: none of the heavy libraries is a core dependency
    core = " ".join(doc["project"]["dependencies"]).lower()
    for heavy in ("scipy", "pandas", "av", "opencv", "matplotlib", "pyarrow", "scikit", "torch", "httpx"):
        assert heavy not in core.replace("aiohttp", ""), heavy


def _extras_named_in(src) -> list[tuple[str, str]]:
    """``(extra, file:line)`` of each literal extra passed to ``require(module, extra, ...)`` or
    ``Requirement(module, extra, ...)`` (second positional argument or ``extra=``) under ``src``."""
    import ast

    out = []
    for f in src.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name not in ("require", "Requirement"):
                continue
            args = [a for a in node.args[1:2]] + [k.value for k in node.keywords if k.arg == "extra"]
            out += [(a.value, f"{f.name}:{node.lineno}") for a in args
                    if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return out
