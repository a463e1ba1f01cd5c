"""``report --format csv`` over runs of ONE benchmark: one tidy table (the leaderboard CSV's columns), a row
per number of each result.json with its CI where the records give one; ``run --format csv`` prints the same."""

from __future__ import annotations

import csv
import io
import json
import pytest

from clirun import run_cli
from lensbench.views.leaderboard_render import TIDY_COLUMNS


def cli(*args):
    return run_cli(*args)


@pytest.fixture(scope="module")
def two_runs(rgbth_gen, tmp_path_factory):
    root = tmp_path_factory.mktemp("tidy")
    outs = []
    for seed in (7, 8):
        out = root / f"random{seed}"
        r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "random", "--seed", str(seed),
                "--out", str(out), "--no-progress", "--format", "csv")
        assert r.returncode == 0, r.stderr
        outs.append((out, r.stdout))
    return outs


def _leaves(v, prefix=""):
    """Every number (or null) of a nested result block, keyed by its '/'-joined path (the test's own walk)."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            out.update(_leaves(x, f"{prefix}/{k}" if prefix else k))
        return out
    if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)):
        return {prefix: v}
    return {}


def _rows(text):
    return list(csv.reader(io.StringIO(text)))


def test_one_benchmark_csv_is_one_tidy_table(two_runs):
    (a, _), (b, _) = two_runs
    r = cli("report", str(a), str(b), "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert "" not in r.stdout.splitlines()  # no blank line between blocks
    rows = _rows(r.stdout)
    assert rows[0] == TIDY_COLUMNS and all(row != TIDY_COLUMNS for row in rows[1:])  # one header
    assert all(len(row) == len(TIDY_COLUMNS) for row in rows)
    body = [dict(zip(TIDY_COLUMNS, row)) for row in rows[1:]]
    keys = [(d["model"], d["metric"], d["category"]) for d in body]
    assert len(keys) == len(set(keys))  # each number once
    by = {(d["model"], d["metric"], d["category"]): d for d in body}
    for run in (a, b):
        doc = json.loads((run / "result.json").read_text(encoding="utf-8"))
        model = doc["model"]
        assert body[[d["model"] for d in body].index(model)]["metric"] == "QAcc"  # headline metric first
        for metric, block in doc["metrics"].items():
            for cat, v in _leaves(block).items():
                got = by[(model, metric, cat)]
                assert got["benchmark"] == "rgb-th-bench" and got["run"] == str(run)
                assert got["value"] == ("" if v is None else f"{float(v):.6g}"), (metric, cat)
        for cat, v in _leaves({k: x for k, x in doc["counts"].items() if x is not None}).items():
            assert by[(model, "counts", cat)]["value"] == f"{float(v):.6g}"
        # the CIs are the ones result.json stored (same design: 2000 resamples, seed 0), drawn over scenes
        for metric in ("QAcc", "SAcc"):
            few = doc["ci"]["tables"][metric]["too_few_clusters"]
            for cat, iv in doc["ci"]["tables"][metric]["intervals"].items():
                got = by[(model, metric, cat)]
                if iv[3] < 10:  # SPEC: no CI below 10 clusters; the block marks it
                    assert iv[1] is iv[2] is None and few[cat] == iv[3] and got["ci_low"] == got["ci_high"] == ""
                    assert got["n"] == str(iv[3])
                    continue
                assert cat not in few
                assert (got["ci_low"], got["ci_high"], got["n"]) == (f"{iv[1]:.6g}", f"{iv[2]:.6g}", str(iv[3]))
                assert (got["cluster"], got["n_resamples"], got["seed"]) == ("scene", "2000", "0")
        # numbers without a CI say nothing about how one was drawn
        sig = by[(model, "significance", "QAcc/Overall")]
        assert sig["ci_low"] == sig["cluster"] == sig["n_resamples"] == ""


def test_run_prints_the_same_tidy_table(two_runs):
    (a, printed), _ = two_runs
    assert printed == cli("report", str(a), "--format", "csv").stdout
    assert _rows(printed)[0] == TIDY_COLUMNS


def test_with_paper_and_csv_is_refused(two_runs):
    (a, _), _ = two_runs
    r = cli("report", str(a), "--format", "csv", "--with-paper")
    assert r.returncode == 2 and "--format md --with-paper" in r.stderr and r.stdout == ""
