"""The README's `lensbench eval` example runs as written against local servers (issue 25): only the host
names change; the judge goes to its own endpoint; the data folders named in the example are used."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clirun import run_cli
from lensbench.testing.server import FakeOpenAIServer

README = Path(__file__).resolve().parents[2] / "README.md"
HOSTS = ("http://gpu1:8000/v1", "http://gpu2:8000/v1", "http://gpu3:8000/v1")


def readme_eval_toml() -> str:
    section = README.read_text(encoding="utf-8").split("### Many models and benchmarks: `lensbench eval`", 1)[1]
    return section.split("```toml\n", 1)[1].split("```", 1)[0]


def cli(*args, env=None):
    return run_cli(*args, env=env)


def test_readme_eval_example_runs_as_written_against_local_servers(tmp_path):
    pytest.importorskip("av")
    toml = readme_eval_toml()
    for host in HOSTS:
        assert host in toml, f"the README example no longer names {host}"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["LENSBENCH_DATA"] = str(tmp_path / "empty-data-home")  # the example must name its own data folders
    for bench in ("if-bench", "iv-bench"):
        r = cli("data", "demo", bench, str(tmp_path / "data" / bench), env=env)
        assert r.returncode == 0, r.stderr
    model_reply = lambda body: "The answer is A."  # not a bare letter: IF-Bench calls its answer parser
    with FakeOpenAIServer(model_reply) as gpu1, FakeOpenAIServer(model_reply) as gpu2, \
            FakeOpenAIServer(lambda body: "A") as gpu3:
        for host, srv in zip(HOSTS, (gpu1, gpu2, gpu3)):
            toml = toml.replace(host, srv.url)
        (tmp_path / "matrix.toml").write_text(toml, encoding="utf-8")
        r = cli("eval", str(tmp_path / "matrix.toml"), env=env)
        assert r.returncode == 0, r.stderr[-3000:]
        # the model's requests were spread over both endpoints; only the parser calls went to the judge's
        assert sum(gpu1.received.values()) > 0 and sum(gpu2.received.values()) > 0
        judge_bodies = [b for b in gpu3.bodies]
        assert judge_bodies and all(b["model"] == "Qwen/Qwen3-8B" for b in judge_bodies)
        assert all(b["model"] == "Qwen/Qwen2.5-VL-7B-Instruct" for s in (gpu1, gpu2) for b in s.bodies)
    root = tmp_path / "runs" / "matrix" / "qwen2.5-vl-7b"
    cells = sorted(p.name for p in root.iterdir())
    assert cells == ["if-bench--IF", "if-bench--IF+RGB", "iv-bench"]
    for c in cells:
        res = json.loads((root / c / "result.json").read_text())
        assert res["complete"] and res["counts"]["n_error"] == 0
        man = json.loads((root / c / "run.json").read_text())
        assert man["data_dir"] == str((tmp_path / "data" / c.split("--")[0]).resolve()) and man["demo_data"] is True
    sweep = json.loads((root / "iv-bench" / "result.json").read_text())["metrics"]["sweep"]
    assert sorted(row["frames"] for row in sweep) == [8, 16, 32, 64]
    assert "qwen2.5-vl-7b" in r.stdout and "IF-Bench" in r.stdout  # the leaderboard
    assert "matrix: 3/3 cells done" in r.stderr  # the matrix progress ends with its summary line
