"""lensbench.core.extras.require: returns the module, or one line with the install hint."""

from __future__ import annotations

import sys

import pytest

from lensbench.core.errors import LensbenchError
from lensbench.core.extras import EXTRAS, MissingExtraError, install_hint, require


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

    doc = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    extras = doc["project"]["optional-dependencies"]
    assert set(EXTRAS) <= set(extras)
    assert install_hint("plots") == "pip install 'lensbench[plots]'"
    # the core stays slim: none of the heavy libraries is a core dependency
    core = " ".join(doc["project"]["dependencies"]).lower()
    for heavy in ("scipy", "pandas", "av", "opencv", "matplotlib", "pyarrow", "scikit", "torch", "httpx"):
        assert heavy not in core.replace("aiohttp", ""), heavy
