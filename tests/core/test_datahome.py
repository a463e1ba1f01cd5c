"""The data home: LENSBENCH_DATA moves it; --data-dir falls back to it with a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from lensbench.core.datahome import data_home, default_data_dir, resolve_data_dir
from lensbench.core.errors import ConfigError


def test_default_and_env(monkeypatch, tmp_path):
    monkeypatch.delenv("LENSBENCH_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert data_home() == tmp_path / ".cache" / "lensbench" / "data"
    monkeypatch.setenv("LENSBENCH_DATA", str(tmp_path / "d"))
    assert default_data_dir("if-bench") == tmp_path / "d" / "if-bench"
    from lensbench.tools.data.home import default_data_dir as tools_default

    assert tools_default("gobench") == tmp_path / "d" / "gobench"


def test_resolve(monkeypatch, tmp_path):
    monkeypatch.setenv("LENSBENCH_DATA", str(tmp_path))
    assert resolve_data_dir("gobench", "x/y") == Path("x/y")
    with pytest.raises(ConfigError, match="lensbench data download gobench"):
        resolve_data_dir("gobench", None)
    (tmp_path / "gobench").mkdir()
    # an empty default folder (e.g. left by a failed offline download) gets the download hint too (issue 25)
    with pytest.raises(ConfigError, match="is empty: run 'lensbench data download gobench'"):
        resolve_data_dir("gobench", None)
    (tmp_path / "gobench" / "data_total.json").write_text("[]")
    assert resolve_data_dir("gobench", None) == tmp_path / "gobench"
