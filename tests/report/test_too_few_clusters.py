"""Issue 29: intervals and p-values that say when they cannot be trusted, on every surface.

SPEC General rules: below 10 clusters no CI and no p, "too few clusters (n)" instead (JSON: null bounds and
``too_few_clusters: n``); compare's CSV never prints p as 0.0000; the leaderboard and the viewer's run
table count empty replies; two significance rows of the RGB-Th-Bench report never share a label.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from lensbench.core.records import SampleRecord
from lensbench.views.compare import compare_runs, render_comparison
from lensbench.views.leaderboard import build_leaderboard, render_leaderboard
from lensbench.views.runs import read_run
from lensbench.scoring.intervals import MIN_CLUSTERS, interval_block
from lensbench.testing.runs import craft_run

# crafted RGB-Th-Bench runs: 24 questions (6 skills x 4) per scene
TWO_SCENES, TEN_SCENES = 48, 240


def _edit_result(run_dir, **fields):
    p = run_dir / "result.json"
    doc = json.loads(p.read_text(encoding="utf-8"))
    for k, v in fields.items():
        doc[k] = {**doc.get(k, {}), **v} if isinstance(v, dict) else v
    p.write_text(json.dumps(doc), encoding="utf-8")
    return run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("few")
    return {"few-a": craft_run(root / "few-a", "rgb-th-bench", "small-a", n=TWO_SCENES, seed=1),
            "few-b": craft_run(root / "few-b", "rgb-th-bench", "small-b", n=TWO_SCENES, seed=2, accuracy=0.9),
            "ten": craft_run(root / "ten", "rgb-th-bench", "big", n=TEN_SCENES, seed=3)}


def test_leaderboard_prints_too_few_clusters_below_ten_scenes(runs):
    lb = build_leaderboard([read_run(runs["few-a"]), read_run(runs["ten"])], n_resamples=300)
    heads = {(c.model, c.metric): c for c in lb.cells if c.headline}
    few, ten = heads[("small-a", "QAcc")], heads[("big", "QAcc")]
    assert (few.n, few.ci_low, few.ci_high, few.too_few_clusters) == (2, None, None, 2)
    assert ten.n == 10 and ten.too_few_clusters is None and ten.ci_low < ten.value < ten.ci_high
    md = render_leaderboard(lb, "md")
    row = next(ln for ln in md.splitlines() if ln.startswith("| small-a |"))
    assert row.count("[too few clusters (2)]") == 2  # QAcc and SAcc Overall: neither has an interval
    big = next(ln for ln in md.splitlines() if ln.startswith("| big |"))
    assert "too few" not in big and f"[{ten.ci_low:.1f}, {ten.ci_high:.1f}]" in big
    assert f"fewer than {MIN_CLUSTERS} scenes" in md
    # JSON: null bounds and the machine-readable marker
    cells = json.loads(render_leaderboard(lb, "json"))["cells"]
    j = next(c for c in cells if c["model"] == "small-a" and c["metric"] == "QAcc" and c["category"] == "Overall")
    assert (j["ci_low"], j["ci_high"], j["too_few_clusters"], j["n"]) == (None, None, 2, 2)


def test_result_json_block_marks_too_few_clusters(runs):
    from lensbench.benchmarks.registry import get_benchmark

    for name, n_scenes in (("few-a", 2), ("ten", 10)):
        recs = [SampleRecord.model_validate_json(x)
                for x in (runs[name] / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
        block = interval_block(get_benchmark("rgb-th-bench").unit_tables(recs), "scene", n_resamples=200)
        assert block["design"]["min_clusters"] == MIN_CLUSTERS and block["design"]["method"] == "BCa bootstrap"
        q = block["tables"]["QAcc"]
        value, low, high, n, _units = q["intervals"]["Overall"]
        assert n == n_scenes
        if n_scenes < MIN_CLUSTERS:
            assert low is None and high is None and q["too_few_clusters"]["Overall"] == n_scenes
        else:
            assert low < value < high and "Overall" not in q["too_few_clusters"]


def test_compare_gives_no_ci_or_p_below_ten_clusters(runs):
    cmp = compare_runs(read_run(runs["few-a"]), read_run(runs["few-b"]), n_resamples=300)
    row = next(r for r in cmp.rows if (r["metric"], r["category"]) == ("QAcc", "Overall"))
    assert row["diff"] is not None and (row["low"], row["high"], row["p_value"]) == (None, None, None)
    assert row["too_few_clusters"] == 2 == row["n"]
    md = render_comparison(cmp, "md")
    line = next(ln for ln in md.splitlines() if ln.startswith("| QAcc | Overall |"))
    assert line.count("too few clusters (2)") == 2  # the CI cell and the p cell
    rows = list(csv.DictReader(io.StringIO(render_comparison(cmp, "csv"))))
    c = next(r for r in rows if (r["metric"], r["category"]) == ("QAcc", "Overall"))
    assert (c["ci_low"], c["ci_high"], c["p"]) == ("too few clusters (2)", "", "too few clusters (2)")
    assert json.loads(render_comparison(cmp, "json"))["rows"][0]["too_few_clusters"] == 2
    assert f"neither CI nor p below {MIN_CLUSTERS} scenes" in cmp.ci_note


def test_compare_csv_never_prints_p_as_zero(runs):
    cmp = compare_runs(read_run(runs["ten"]), read_run(runs["ten"]), n_resamples=300)
    rows = cmp.rows[:3]
    assert all(r["too_few_clusters"] is None for r in rows)
    rows[0]["p_value"], rows[1]["p_value"], rows[2]["p_value"] = 3e-5, 0.01234, None
    got = [r["p"] for r in csv.DictReader(io.StringIO(render_comparison(cmp, "csv")))][:3]
    assert got == ["<0.0001", "0.0123", ""]
    md_p = [ln.split(" | ")[-2] for ln in render_comparison(cmp, "md").splitlines()
            if ln.startswith(f"| {rows[0]['metric']} |")][:2]
    assert md_p[0].startswith("<0.001") and md_p[1].startswith("0.012")


def test_leaderboard_counts_empty_replies(runs, tmp_path):
    import shutil

    d = shutil.copytree(runs["ten"], tmp_path / "ten")
    doc = json.loads((d / "result.json").read_text(encoding="utf-8"))
    _edit_result(d, counts={**doc["counts"], "n_empty": 3})
    lb = build_leaderboard([read_run(d), read_run(runs["few-a"])], n_resamples=100)
    assert lb.empty == [("big", str(d), 3)]
    md = render_leaderboard(lb, "md")
    assert "Empty replies" in md and "big: 3" in md and "small-a:" not in md.split("Empty replies", 1)[1]
    assert json.loads(render_leaderboard(lb, "json"))["empty_replies"] == [{"row": "big", "run": str(d), "n": 3}]


def test_viewer_run_table_has_an_empty_replies_column(runs, tmp_path):
    import shutil

    from lensbench.cli.view import write_viewer
    from lensbench.views.viewer.html import read_page_data

    d = shutil.copytree(runs["few-a"], tmp_path / "few-a")
    doc = json.loads((d / "result.json").read_text(encoding="utf-8"))
    _edit_result(d, counts={**doc["counts"], "n_empty": 5})
    html, _images, _runs = write_viewer([d], None, figures=False)
    data = read_page_data(html)
    assert data["runs"][0]["counts"]["n_empty"] == 5
    # the run table's columns (viewer.js) put the count beside unparseable and errors
    assert "'unparseable', 'empty replies', 'errors'" in html and "fmt(c.n_empty || 0)" in html


def test_rgbth_significance_rows_of_one_model_get_distinct_labels(tmp_path):
    from lensbench.benchmarks.rgbth.aggregate import aggregate_records
    from lensbench.benchmarks.rgbth.report import render_tables
    from lensbench.core.results import RunResult

    results = []
    for name, n in (("first", TWO_SCENES), ("second", TEN_SCENES)):
        d = craft_run(tmp_path / name, "rgb-th-bench", "same-model", n=n, seed=4)
        recs = [SampleRecord.model_validate_json(x) for x in (d / "samples.jsonl").read_text().splitlines()]
        metrics, counts = aggregate_records(recs)
        results.append(RunResult("rgb-th-bench", "same-model", metrics, counts, run_dir=str(d)))
    md = render_tables(results, "md")
    labels = [ln.split(" | ")[0] for ln in md.splitlines() if ln.startswith("| Statistically Significant")]
    assert labels == ["| Statistically Significant (>=) [same-model (first)]",
                      "| Statistically Significant (>=) [same-model (second)]"]
    assert "same-model (first): RGB-Txt >=" in md and "same-model (second): RGB-Txt >=" in md
