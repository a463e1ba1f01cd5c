"""A sixth benchmark lensbench does not know: tests/toybench/toy_count (one folder), registered through the
``lensbench.benchmarks`` entry point of a throwaway installed distribution (a dist-info on sys.path). With no
lensbench file touched it gets ``run``, resume, CIs, its leaderboard column, ``compare``, the viewer,
``data check``, ``export`` (and replay) and ``report``; docs/adding-a-benchmark.md shows this very package."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contract import toy_data, toy_installed
from lensbench.benchmarks.registry import BENCHMARKS, get_benchmark
from lensbench.cli.main import app

TOY = Path(__file__).resolve().parents[1] / "toybench"
DOC = Path(__file__).resolve().parents[2] / "docs" / "adding-a-benchmark.md"
runner = CliRunner()


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The plugin installed (a dist-info naming its entry point, the package beside it) and its data folder."""
    with toy_installed(tmp_path_factory.mktemp("site")):
        yield toy_data(tmp_path_factory.mktemp("toy-data") / "data")


def cli(*args: str):
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    r = runner.invoke(app, list(args), env=env, catch_exceptions=False)
    return r


def _run(data: Path, out: Path, model: str, *extra: str):
    r = cli("run", "toy-count", "--data-dir", str(data), "--model", model, "--out", str(out), "--no-progress",
            "--format", "json", *extra)
    assert r.exit_code == 0, r.output
    return json.loads((out / "result.json").read_text()), json.loads((out / "run.json").read_text())


def _records(run: Path) -> dict[str, dict]:
    return {d["sample_id"]: d for d in map(json.loads, (run / "samples.jsonl").read_text().splitlines())}


def test_a_plugin_benchmark_gets_every_command(toy, tmp_path):
    assert "toy-count" not in BENCHMARKS and get_benchmark("toy-count").title == "ToyCount"
    listed = json.loads(cli("list", "--json").stdout)["benchmarks"]
    assert "toy-count" in [b["name"] for b in listed]
    # data check: the layout's files, the loader's count, the media
    r = cli("data", "check", "toy-count", str(toy), "--quick")
    assert r.exit_code == 0, r.output
    assert "ok    loader: questions: 12" in r.stdout and "ok    files: images: 6" in r.stdout
    # run part of it, then the same folder again: resumed, only the rest is sent
    a = tmp_path / "a"
    _run(toy, a, "random", "--limit", "3")
    res_a, man_a = _run(toy, a, "random")
    assert (man_a["engine"]["cached"], man_a["engine"]["sent"]) == (3, 9)
    recs = _records(a)
    right = sum(d["outcome"] == "correct" for d in recs.values())
    assert len(recs) == 12 and res_a["metrics"]["accuracy"]["all"] == 100 * right / 12
    # the CIs are in result.json, resampling the images
    ci = res_a["ci"]
    assert ci["design"]["cluster"] == "image" and ci["tables"]["accuracy"]["intervals"]["all"][3] == 6
    # another model, the leaderboard (one column, a CI), compare, the viewer, the benchmark's own tables
    b = tmp_path / "b"
    res_b, _ = _run(toy, b, "constant:2")
    lb = cli("report", str(a), str(b), "--leaderboard", "--format", "csv", "--resamples", "300")
    assert lb.exit_code == 0, lb.output
    rows = [dict(zip(lb.stdout.splitlines()[0].split(","), line.split(","))) for line in lb.stdout.splitlines()[1:]]
    heads = [r for r in rows if r["benchmark"] == "toy-count" and r["category"] == "all"]
    # 6 images are too few clusters for a CI (SPEC: below 10): the row keeps the count and the design
    assert len(heads) == 2 and all(r["ci_low"] == r["ci_high"] == "" and (r["n"], r["cluster"]) == ("6", "image")
                                   for r in heads)
    assert "ToyCount" in cli("report", str(a), str(b), "--leaderboard").stdout
    cmp = json.loads(cli("compare", str(a), str(b), "--format", "json", "--resamples", "300").stdout)
    row = next(r for r in cmp["rows"] if r["category"] == "all")
    recs_b = _records(b)
    want = 100 * (right - sum(d["outcome"] == "correct" for d in recs_b.values())) / 12
    assert row["diff"] == pytest.approx(want)
    assert (row["low"], row["high"], row["p_value"], row["too_few_clusters"]) == (None, None, None, 6)
    html = tmp_path / "view.html"
    assert cli("view", str(a), str(b), "--out", str(html), "--no-figures").exit_code == 0
    page = html.read_text(encoding="utf-8")
    assert "toy-count" in page and "img5/plus1" in page and "ToyCount" in page
    report = cli("report", str(a)).stdout
    assert "| Model | accuracy (%) | n |" in report
    # it states no release size (issue 29): every surface says so, nothing claims it partial or whole
    assert f"Coverage of {a}: release size unknown: its share of the benchmark is not counted." in report
    assert {r["coverage"] for r in heads} == {"release size unknown"}
    from lensbench.views.viewer.html import read_page_data

    assert [r["status"] for r in read_page_data(page)["runs"]] == ["release size unknown"] * 2
    # export, then replay the export: the same result
    replies = tmp_path / "replies.jsonl"
    assert cli("export", str(a), "--out", str(replies)).exit_code == 0
    res_c, _ = _run(toy, tmp_path / "c", f"replay:{replies}")
    assert res_c["metrics"] == res_a["metrics"] and res_c["counts"] == res_a["counts"]


def test_the_walk_through_shows_this_package():
    """Every file of the toy package appears verbatim in docs/adding-a-benchmark.md (a code block headed by
    its path), so the walk-through cannot drift from the code this test runs."""
    doc = DOC.read_text(encoding="utf-8")
    blocks = dict(re.findall(r"```python\n# (toy_count/\S+\.py)\n(.*?)```", doc, re.S))
    files = {str(p.relative_to(TOY)): p.read_text(encoding="utf-8") for p in sorted(TOY.rglob("*.py"))}
    assert set(blocks) == set(files) and all(blocks[k] == files[k] for k in files)


def test_plugins_that_cannot_be_loaded_are_named_and_built_ins_win(tmp_path, monkeypatch):
    from lensbench.benchmarks.registry import benchmark_names
    from lensbench.core.errors import ConfigError

    dist = tmp_path / "broken_bench-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-bench\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[lensbench.benchmarks]\nno-module = nowhere_at_all.bench:Bench\nnot-a-bench = json:JSONDecoder\n"
        "rgb-th-bench = nowhere_at_all.bench:Bench\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert {"no-module", "not-a-bench"} <= set(benchmark_names())
    with pytest.raises(ConfigError, match=r"plugin 'no-module' \(nowhere_at_all.bench:Bench\) cannot be loaded: "
                                          r"ModuleNotFoundError"):
        get_benchmark("no-module")
    with pytest.raises(ConfigError, match="is not a lensbench Benchmark subclass named 'not-a-bench'"):
        get_benchmark("not-a-bench")
    assert get_benchmark("rgb-th-bench").__name__ == "RGBThBench"  # a plugin cannot replace a built-in
    assert benchmark_names().count("rgb-th-bench") == 1
