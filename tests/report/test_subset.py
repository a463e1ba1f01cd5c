"""Issue 34.1 follow-up: ``--subset FILE`` (a ``subset-<name>.json`` of ``lensbench analyze items``) restricts runs
to its items before aggregation, on report, leaderboard, compare, view and ``load_run``; bad files are refused."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict

import pytest

import lensbench
from lensbench.benchmarks.rgbth.data import PAPER_ABBREVS
from lensbench.core.errors import ConfigError
from lensbench.report.subset import load_subset
from lensbench.runtime.runner import run_benchmark
from lensbench.runtime.settings import RunSettings
from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.views.runs import read_run


@pytest.fixture(scope="module")
def runs(rgbth_gen, tmp_path_factory):
    root = tmp_path_factory.mktemp("subset-runs")
    out = []
    for i, spec in enumerate(("random", "constant:Yes")):
        d = root / f"run{i}"
        run_benchmark(RGBThBench(), RunSettings(model=spec, out=d, data_dir=rgbth_gen, progress=False))
        out.append(d)
    return out


def _records(d):
    return [json.loads(line) for line in (d / "samples.jsonl").read_text(encoding="utf-8").splitlines() if line]


def _write_subset(path, items, name=None, **over):
    items = sorted(items)
    sha = hashlib.sha256("\n".join(items).encode()).hexdigest()
    doc = {"name": name or f"rgb-th-bench-disc50-{sha[:8]}", "rule": "test", "n_items": len(items), "sha256": sha,
           "kendall_tau": [1.0, None, None], "items": items, **over}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path, doc


@pytest.fixture(scope="module")
def subset(runs, tmp_path_factory):
    ids = sorted({r["sample_id"] for r in _records(runs[0])})
    keep = ids[::3]  # every third question id
    return _write_subset(tmp_path_factory.mktemp("subset") / "subset.json", keep) + (len(ids),)


def _qacc_overall(records, keep):
    """Paper Sec. 3.4: QAcc per skill = % of its questions right; Overall = mean over the paper's skills present."""
    right, n = defaultdict(int), defaultdict(int)
    for r in records:
        if r["sample_id"] in keep and r["labels"]["abbrev"] in PAPER_ABBREVS:
            n[r["labels"]["abbrev"]] += 1
            right[r["labels"]["abbrev"]] += r["outcome"] == "correct"
    return sum(100.0 * right[s] / n[s] for s in n) / len(n)


def test_subset_recomputes_each_runs_metrics_over_its_items(runs, subset):
    path, doc, total = subset
    keep = set(doc["items"])
    for d in runs:
        run = read_run(d, subset=load_subset(path))
        assert {r.sample_id for r in run.records} == keep
        assert run.result.metrics["QAcc"]["Overall"] == pytest.approx(_qacc_overall(_records(d), keep))
        assert run.result.ci is None and run.result.counts["n"] == len(keep)
        assert run.subset_applied.label == f"subset {doc['name']} ({len(keep)}/{total} items, sha256 {doc['sha256'][:12]})"
        full = read_run(d)
        assert full.result.metrics["QAcc"]["Overall"] == pytest.approx(_qacc_overall(_records(d), set(
            r["sample_id"] for r in _records(d))))
    api = lensbench.load_run(runs[0], subset=path)
    assert api.result.metrics == read_run(runs[0], subset=load_subset(path)).result.metrics


def test_report_leaderboard_and_compare_are_labelled(runs, subset, cli):
    path, doc, total = subset
    label = f"subset {doc['name']} ({len(doc['items'])}/{total} items"
    want = _qacc_overall(_records(runs[0]), set(doc["items"]))
    rep = cli("report", str(runs[0]), "--subset", str(path), "--format", "json")
    assert rep.returncode == 0, rep.stderr
    got = json.loads(rep.stdout)
    assert got["metrics"]["QAcc"]["Overall"] == pytest.approx(want) and got["extra"]["subset"]["sha256"] == doc["sha256"]
    md = cli("report", str(runs[0]), "--subset", str(path))
    assert md.returncode == 0 and label in md.stdout and "not the paper's measurement" in md.stdout
    lb = cli("report", *map(str, runs), "--leaderboard", "--subset", str(path), "--resamples", "50")
    assert lb.returncode == 0 and label in lb.stdout and f"[subset {doc['name']}]" in lb.stdout
    assert f"{want:.1f}" in lb.stdout
    cmp = cli("compare", *map(str, runs), "--subset", str(path), "--resamples", "50")
    assert cmp.returncode == 0, cmp.stderr
    assert label in cmp.stdout and f"[subset {doc['name']}]" in cmp.stdout


def test_view_is_labelled(runs, subset, cli, tmp_path):
    path, doc, _total = subset
    out = tmp_path / "v.html"
    res = cli("view", str(runs[0]), "--subset", str(path), "--out", str(out), "--no-figures")
    assert res.returncode == 0, res.stderr
    assert f"subset {doc['name']}" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", ["missing", "not-json", "shape", "sha", "other-bench", "no-items-here"])
def test_bad_subset_files_are_refused(runs, subset, cli, tmp_path, case):
    path, doc, _total = subset
    p = tmp_path / "bad.json"
    if case == "missing":
        p, field = tmp_path / "nope.json", "no such subset file"
    elif case == "not-json":
        p.write_text("{items", encoding="utf-8")
        field = "not a JSON subset file"
    elif case == "shape":
        p.write_text(json.dumps({**doc, "items": "q1"}), encoding="utf-8")
        field = "field 'items'"
    elif case == "sha":
        p.write_text(json.dumps({**doc, "items": doc["items"][1:], "n_items": len(doc["items"]) - 1}), encoding="utf-8")
        field = "field 'sha256'"
    elif case == "other-bench":
        _write_subset(p, doc["items"], name="if-bench-disc50-0000")
        field = "field 'name'"
    else:
        _write_subset(p, ["nowhere/1", "nowhere/2"])
        field = "field 'items'"
    for args in (("report", str(runs[0])), ("compare", *map(str, runs)), ("view", str(runs[0]), "--out",
                                                                          str(tmp_path / "x.html"))):
        res = cli(*args, "--subset", str(p))
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]  # view's progress lines aside
        assert len(errors) == 1 and str(p) in errors[0] and field in errors[0], res.stderr
        assert "Traceback" not in res.stderr and res.stdout == ""
    with pytest.raises(ConfigError):
        lensbench.load_run(runs[0], subset=p)
