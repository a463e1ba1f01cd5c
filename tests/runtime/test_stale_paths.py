"""Issue 32.9: a random baseline where none exists is refused before a folder is written, and grounding-rej is
listed as itself, not as GroundingME."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import lensbench
from lensbench.benchmarks.groundingme.demo import write_demo
from lensbench.cli.main import app
from lensbench.core.errors import ConfigError


def test_random_on_groundingme_is_refused_before_anything_is_written(tmp_path):
    data = tmp_path / "gm"
    write_demo(data)
    with pytest.raises(ConfigError, match=r"random: GroundingME: a box has no finite answer space.*"
                                          r"constant:\{\"bbox_2d\": null\}"):
        lensbench.run("groundingme", model="random", data_dir=data, out=tmp_path / "run")
    assert not (tmp_path / "run").exists()
    res = lensbench.run("groundingme", model='constant:{"bbox_2d": null}', data_dir=data, out=tmp_path / "rej")
    rejection_items = [r for r in lensbench.load_run(tmp_path / "rej").records if r.target is None]
    assert rejection_items and all(r.outcome == "correct" for r in rejection_items) and res.counts["n_error"] == 0


def test_grounding_rej_is_listed_as_itself():
    out = CliRunner().invoke(app, ["list", "--json"]).output
    rows = {b["name"]: b for b in json.loads(out)["benchmarks"]}
    gm, rej = rows["groundingme"], rows["grounding-rej"]
    assert rej["description"] != gm["description"] and "items file" in rej["description"]
    assert gm["n_samples"] == 1005 and rej["n_samples"] is None
