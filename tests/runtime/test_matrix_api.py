"""`lensbench eval` (matrix config) and the Python API, on generated inputs."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

import lensbench
from lensbench.core.errors import ConfigError
from lensbench.runtime.matrix import expand_cells, load_config
from lensbench.testing.data import make_rgbth_release
from lensbench.testing.server import FakeOpenAIServer


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_rgbth_release(tmp_path_factory.mktemp("d"), n_scenes=2)


def write(tmp_path: Path, text: str, name: str = "cfg.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_cells_expand_models_x_benchmarks_x_variants(tmp_path, data):
    cfg = load_config(write(tmp_path, f"""
out = "m"
[[model]]
name = "a"
spec = "random"
[[model]]
name = "b"
spec = "constant:Yes"
[[benchmark]]
name = "rgb-th-bench"
data_dir = "{data}"
limit = 3
[[benchmark.variant]]
label = "paper"
[[benchmark.variant]]
label = "extra"
options = {{ include_extra_skills = true }}
"""))
    cells = expand_cells(cfg)
    assert [(c.model, c.variant) for c in cells] == [("a", "paper"), ("a", "extra"), ("b", "paper"), ("b", "extra")]
    assert cells[1].out == tmp_path / "m" / "a" / "rgb-th-bench--extra"
    assert cells[1].options == {"include_extra_skills": True} and cells[1].settings.limit == 3


@pytest.mark.parametrize("body, needle", [
    ('out="m"\n[[model]]\nname="a"\nspec="random"\napi_key="sk-1"\n[[benchmark]]\nname="rgb-th-bench"', "model[0].api_key"),
    ('out="m"\n[[model]]\nname="a"\nspec="random"\n[[benchmark]]\nname="nope"', "unknown benchmark"),
    ('out="m"\n[[model]]\nname="a"\n[[benchmark]]\nname="rgb-th-bench"', "model.0.spec"),
    ('out="m"\n[[model]]\nname="a"\nspec="random"\n[[benchmark]]\nname="rgb-th-bench"\nconcurrency=0', "concurrency"),
])
def test_bad_configs_name_the_key(tmp_path, body, needle):
    with pytest.raises(ConfigError) as ei:
        expand_cells(load_config(write(tmp_path, body)))
    assert needle in str(ei.value) and "cfg.toml" in str(ei.value) or needle in str(ei.value)


def test_eval_shares_the_endpoint_budget_and_resumes(tmp_path, data):
    with FakeOpenAIServer(lambda body: "Yes", latency=0.05) as srv:
        cfg = write(tmp_path, f"""
out = "m"
[[model]]
name = "fake"
spec = "openai:fake"
base_url = ["{srv.url}"]
concurrency = 3
[[benchmark]]
name = "rgb-th-bench"
data_dir = "{data}"
concurrency = 8
[[benchmark.variant]]
label = "s1"
settings = {{ seed = 1 }}
[[benchmark.variant]]
label = "s2"
options = {{ include_extra_skills = false }}
settings = {{ temperature = 0.5 }}
""")
        r = subprocess.run([sys.executable, "-m", "lensbench", "eval", str(cfg)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "| fake |" in r.stdout
        assert srv.peak_inflight == 3  # two cells, each asking for 8, never more than the model's 3 at once
        sent = sum(srv.answered.values())
        r2 = subprocess.run([sys.executable, "-m", "lensbench", "eval", str(cfg)], capture_output=True, text=True)
        assert r2.returncode == 0, r2.stderr
        assert sum(srv.answered.values()) == sent  # resumed as a whole: nothing sent twice
    for v in ("s1", "s2"):
        assert json.loads((tmp_path / "m" / "fake" / f"rgb-th-bench--{v}" / "result.json").read_text())["complete"]


def test_python_api_equals_cli(tmp_path, data):
    res = lensbench.run("rgb-th-bench", model="random", out=tmp_path / "api", data_dir=data, seed=5)
    r = subprocess.run([sys.executable, "-m", "lensbench", "run", "rgb-th-bench", "--data-dir", str(data), "--model",
                        "random", "--seed", "5", "--out", str(tmp_path / "cli"), "--format", "json", "--no-progress"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["metrics"] == res.metrics
    run = lensbench.load_run(tmp_path / "api")
    assert run.result.metrics == res.metrics and len(run.records) == res.counts["n_questions"]
    assert run.manifest["benchmark"] == "rgb-th-bench"
    with pytest.raises(ConfigError, match="frames"):
        lensbench.run("rgb-th-bench", model="random", out=tmp_path / "x", data_dir=data, frames=8)
