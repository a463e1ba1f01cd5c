"""Leaderboard over several benchmarks/models (never aborting), tidy CSV, paired comparison, flips."""

from __future__ import annotations

import csv
import io
import json

import pytest

from lensbench.views.compare import compare_runs, render_comparison
from lensbench.views.leaderboard import TIDY_COLUMNS, build_leaderboard, render_leaderboard
from lensbench.views.runs import read_run
from lensbench.testing.runs import craft_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    dirs = [craft_run(root / "gm-a", "groundingme", "model-a", n=80, seed=1, accuracy=0.5),
            craft_run(root / "gm-b", "groundingme", "model-b", n=80, seed=2, accuracy=0.8),
            craft_run(root / "rgb-a", "rgb-th-bench", "model-a", n=48, seed=3),
            craft_run(root / "if-b", "if-bench", "model-b", n=64, seed=4),
            craft_run(root / "unfinished", "iv-bench", "model-a", n=16, seed=5, write_result=False)]
    broken = root / "broken"
    broken.mkdir()
    (broken / "result.json").write_text("{not json", encoding="utf-8")
    return dirs + [broken, root / "missing"]


def _hand_acc(run_dir):
    recs = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    scored = [r for r in recs if r["outcome"] != "error"]
    return 100 * sum(r["outcome"] == "correct" for r in scored) / len(scored), len(scored)


def test_leaderboard_rows_csv_and_unfinished(runs):
    lb = build_leaderboard([read_run(d) for d in runs], n_resamples=400)
    md = render_leaderboard(lb, "md")
    assert "| model-a |" in md and "| model-b |" in md
    assert "unfinished" in md and "broken" in md and "missing" in md
    rows = list(csv.reader(io.StringIO(render_leaderboard(lb, "csv"))))
    assert rows[0] == TIDY_COLUMNS
    body = [dict(zip(rows[0], r)) for r in rows[1:]]
    gm = {r["model"]: r for r in body if r["benchmark"] == "groundingme" and r["category"] == "Total"}
    for model, d in (("model-a", runs[0]), ("model-b", runs[1])):
        acc, n = _hand_acc(d)
        assert float(gm[model]["value"]) == pytest.approx(acc, rel=1e-5)
        assert int(gm[model]["n"]) == n
        assert float(gm[model]["ci_low"]) < acc < float(gm[model]["ci_high"])
    heads = {(c.model, c.benchmark, c.metric) for c in lb.cells if c.headline}
    assert ("model-a", "rgb-th-bench", "SAcc") in heads and ("model-b", "if-bench", "Score") in heads
    assert sum(1 for p, _why in lb.unfinished if p.endswith(("unfinished", "broken", "missing"))) == 3


def test_value_without_ci_when_records_disagree(tmp_path):
    d = craft_run(tmp_path / "r", "groundingme", "m", n=40)
    doc = json.loads((d / "result.json").read_text())
    doc["metrics"]["Acc@0.5"]["Total"] = 12.5
    (d / "result.json").write_text(json.dumps(doc))
    lb = build_leaderboard([read_run(d)], n_resamples=100)
    cell = next(c for c in lb.cells if c.headline)
    assert cell.value == 12.5 and cell.ci_low is None and "no CI" in cell.note


def test_compare_flips_and_deltas(runs):
    a, b = read_run(runs[0]), read_run(runs[1])
    cmp = compare_runs(a, b, n_resamples=400)
    ra = {r.sample_id: r.outcome for r in a.records}
    rb = {r.sample_id: r.outcome for r in b.records}
    expected = {s for s in ra if s in rb and "error" not in (ra[s], rb[s]) and (ra[s] == "correct") != (rb[s] == "correct")}
    assert {f.sample_id for f in cmp.flips} == expected and expected
    total = next(r for r in cmp.rows if r["category"] == "Total")
    shared = [s for s in ra if s in rb and "error" not in (ra[s], rb[s])]
    acc_a = 100 * sum(ra[s] == "correct" for s in shared) / len(shared)
    acc_b = 100 * sum(rb[s] == "correct" for s in shared) / len(shared)
    assert total["diff"] == pytest.approx(acc_a - acc_b)
    assert total["low"] <= total["diff"] <= total["high"] and 0 <= total["p_value"] <= 1
    assert {r["category"] for r in cmp.rows} >= {"Total", "Rejection"}
    md = render_comparison(cmp, "md")
    assert "Flipped samples" in md and "Paired differences" in md
    assert render_comparison(cmp, "csv").splitlines()[0].startswith("metric,category")


def test_compare_refuses_two_benchmarks(runs):
    with pytest.raises(ValueError):
        compare_runs(read_run(runs[0]), read_run(runs[2]))


def test_old_format_records_give_values_without_ci(tmp_path):
    d = craft_run(tmp_path / "old", "groundingme", "m", n=20)
    (d / "samples.jsonl").write_text('{"id": "gm0", "status": "correct"}\n', encoding="utf-8")
    lb = build_leaderboard([read_run(d)], n_resamples=100)
    cell = next(c for c in lb.cells if c.headline)
    assert cell.value is not None and cell.ci_low is None and "common shape" in cell.note
    assert "line 1 is not a sample record" in cell.note and "No CI" in render_leaderboard(lb, "md")
