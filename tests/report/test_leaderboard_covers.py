"""Every number of the leaderboard says what it covers (issue 19 item 3): protocol settings, coverage,
partial / incomplete / killed runs, sweep settings, and how each CI was drawn (report, view, compare)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from clirun import run_cli
from lensbench.cli.view import leaderboard_report, write_viewer
from lensbench.core.errors import NOT_SENT
from lensbench.core.records import SampleRecord
from lensbench.views.compare import compare_runs, render_comparison
from lensbench.views.leaderboard import build_leaderboard, render_leaderboard
from lensbench.views.runs import read_run
from lensbench.views.viewer.html import read_page_data
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES
from lensbench.scoring.intervals import interval_block
from lensbench.benchmarks.registry import get_benchmark
from lensbench.testing.runs import craft_run, write_run


def unit_tables(benchmark, records):
    """The benchmark's unit tables of ``records`` (each benchmark states its own)."""
    return get_benchmark(benchmark).unit_tables(records)


def _edit(run_dir, result=None, manifest=None):
    for name, upd in (("result.json", result), ("run.json", manifest)):
        if upd:
            p = run_dir / name
            doc = json.loads(p.read_text())
            for k, v in upd.items():
                doc[k] = {**doc.get(k, {}), **v} if isinstance(v, dict) and isinstance(doc.get(k), dict) else v
            p.write_text(json.dumps(doc))
    return run_dir


def _csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_differently_configured_runs_are_named_columns_never_superseded(tmp_path):
    paper = _edit(craft_run(tmp_path / "paper", "rgb-th-bench", "m", n=96, seed=1),
                  result={"options": {"input": "rgb+thermal", "include_extra_skills": False}})
    thermal = _edit(craft_run(tmp_path / "thermal", "rgb-th-bench", "m", n=96, seed=2),
                    result={"options": {"input": "thermal-only", "include_extra_skills": False}})
    plain = _edit(craft_run(tmp_path / "gm1", "groundingme", "m", n=40, seed=3), result={"options": {"best_of": 1}})
    bon = _edit(craft_run(tmp_path / "gm4", "groundingme", "m", n=40, seed=4),
                result={"options": {"best_of": 4, "bon_judge": "text-full-responses"}, "extra": {"judge": "qwen3"}})
    blind = _edit(craft_run(tmp_path / "blind", "if-bench", "m", n=64, seed=5),
                  result={"options": {"blind": True, "input": "if"}})
    dirs = [paper, thermal, plain, bon, blind]
    md = leaderboard_report(dirs, "md", n_resamples=200)
    head = md.splitlines()[2]
    for col in ("RGB-Th-Bench QAcc Overall", "RGB-Th-Bench [input=thermal-only] QAcc Overall",
                "GroundingME Acc@0.5 Total", "GroundingME [best_of=4; bon_judge=text-full-responses; judge: qwen3] "
                "Acc@0.5 Total", "IF-Bench [blind] Avg"):
        assert f"| {col} |" in head, (col, head)
    assert "superseded" not in md and md.count("| m |") == 1  # one model, one row, five configurations
    rows = _csv(leaderboard_report(dirs, "csv", n_resamples=200))
    assert {r["settings"] for r in rows if r["benchmark"] == "rgb-th-bench"} == {"", "input=thermal-only"}
    assert {r["settings"] for r in rows if r["benchmark"] == "if-bench"} == {"blind"}
    # without the registry's defaults (the Python API), the settings that differ between the runs are named
    lb = build_leaderboard([read_run(d) for d in (paper, thermal)], n_resamples=100)
    assert {c.settings for c in lb.cells} == {"input=rgb+thermal", "input=thermal-only"}


def test_two_runs_of_one_configuration_are_two_rows(tmp_path):
    a = craft_run(tmp_path / "a", "groundingme", "m", n=30, seed=1)
    b = craft_run(tmp_path / "b", "groundingme", "m", n=30, seed=2)
    md = leaderboard_report([a, b], "md", n_resamples=100)
    assert "| m |" in md and "| m (b) |" in md and "superseded" not in md


def test_coverage_partial_incomplete_and_killed_are_named(tmp_path):
    # coverage is counted against the release (issue 29): a run that loaded all of IV-Bench's 1,686 queries
    full = _edit(craft_run(tmp_path / "full", "iv-bench", "m", n=64, seed=1),
                 manifest={"n_samples": 1686, "n_samples_loaded": 1686})
    few = _edit(craft_run(tmp_path / "few", "iv-bench", "m2", n=64, seed=2),
                manifest={"n_samples": 22, "n_samples_loaded": 22},
                result={"counts": {"n_skipped_missing": 1664}})
    limited = _edit(craft_run(tmp_path / "limited", "groundingme", "m", n=3, seed=3),
                    manifest={"n_samples": 3, "n_samples_loaded": 29},
                    result={"complete": False, "extra": {"partial": "first 3 of 29 samples (--limit)"}})
    recs = [SampleRecord(benchmark="groundingme", sample_id=f"s{i}", outcome="correct" if i % 2 else "wrong",
                         labels={"L-1": "Spatial", "L-2": "Counting"}) for i in range(10)]
    recs += [SampleRecord(benchmark="groundingme", sample_id="f0", outcome="error", error="HTTP 500 from x")]
    recs += [SampleRecord(benchmark="groundingme", sample_id=f"u{i}", outcome="error",
                          error="no stored reply (offline rebuild)") for i in range(2)]  # a folder of lensbench 0.1
    recs += [SampleRecord(benchmark="groundingme", sample_id="u2", outcome="error", error=NOT_SENT)]
    killed = write_run(tmp_path / "killed", "groundingme", "m3", recs,
                       {"Acc@0.5": {"Total": 50.0, "Spatial": 50.0, "Spatial/Counting": 50.0}})
    md = leaderboard_report([full, few, limited, killed], "md", n_resamples=100)
    head = md.splitlines()[2]
    assert "| IV-Bench Overall |" in head
    few_recs = [json.loads(x) for x in (few / "samples.jsonl").read_text().splitlines()]
    videos = {r["labels"]["video_id"] for r in few_recs}
    queries = {(r["labels"]["video_id"], r["labels"]["data_id"]) for r in few_recs}
    assert (f"| IV-Bench ({len(videos)}/747 videos, {len(queries)}/1,686 queries: queries skipped for missing "
            "media: 1,664) Overall |") in head
    lim = {json.loads(x)["sample_id"] for x in (limited / "samples.jsonl").read_text().splitlines()}
    assert (f"| GroundingME ({len(lim)}/1,005 samples: first 3 of 29 samples (--limit); the data folder holds 29 of "
            "the release's 1,005 samples) Acc@0.5 Total |") in head
    assert "not ranked with full runs" in md
    assert "incomplete: 0" not in md and "partial (" not in md  # a --limit run is partial, not incomplete
    assert f"{len(lim)}/1,005 samples (first 3 of 29 samples (--limit); the data folder holds 29" in md
    assert "killed: 3 unsent requests" in md and "incomplete: 1 failed request " in md
    killed_row = next(ln for ln in md.splitlines() if ln.startswith("| m3 |"))
    assert "50.0*" in killed_row  # values over what was answered, marked
    limited_row = next(ln for ln in md.splitlines() if ln.startswith("| m |"))
    assert "*" not in limited_row  # a partial run is not an incomplete one
    assert limited_row.count("†") == 1  # the --limit run's cell (the full IV-Bench run's is not marked)


def test_iv_bench_sweep_names_each_setting(tmp_path):
    d = craft_run(tmp_path / "sweep", "iv-bench", "m", n=48, seed=1)
    lines = (d / "samples.jsonl").read_text().splitlines()
    recs = [SampleRecord.model_validate_json(x) for x in lines]
    more = [r.model_copy(update={"sample_id": r.sample_id + "@8f", "labels": {**r.labels, "frames": 8},
                                 "outcome": "correct"}) for r in recs]
    tables = unit_tables("iv-bench", recs + more)
    assert [t.setting for t in tables.values()] == [{"frames": 4, "resolution": None}, {"frames": 8, "resolution": None}]
    acc4, acc8 = (tables[k].value() for k in ("accuracy", "accuracy#2"))
    metrics = {"accuracy": {"Overall": acc4}, "sweep": [
        {"frames": 4, "resolution": None, "label": "4f@native", "accuracy": {"Overall": acc4}},
        {"frames": 8, "resolution": None, "label": "8f@native", "accuracy": {"Overall": acc8}}]}
    write_run(d, "iv-bench", "m", recs + more, metrics)
    lb = build_leaderboard([read_run(d)], n_resamples=200, all_categories=False)
    cells = {c.settings: c for c in lb.cells}
    assert set(cells) == {"4f@native", "8f@native"} and cells["8f@native"].value == 100.0
    assert cells["4f@native"].ci_low is not None and cells["4f@native"].ci_low < acc4 < cells["4f@native"].ci_high
    assert "| IV-Bench [4f@native] Overall | IV-Bench [8f@native] Overall |" in render_leaderboard(lb, "md")


def test_cis_are_read_from_result_json_when_drawn_the_same_way(tmp_path):
    d = craft_run(tmp_path / "r", "rgb-th-bench", "m", n=240, seed=4)  # 10 scenes: CIs (SPEC: >= 10 clusters)
    recs = [SampleRecord.model_validate_json(x) for x in (d / "samples.jsonl").read_text().splitlines()]
    fresh = build_leaderboard([read_run(d)], n_resamples=300)
    block = interval_block(unit_tables("rgb-th-bench", recs), "scene", n_resamples=300)
    cat = block["tables"]["QAcc"]["intervals"]["Overall"]
    block["tables"]["QAcc"]["intervals"]["Overall"] = [cat[0], -1.0, 101.0, cat[3], cat[4]]  # marked: read back
    _edit(d, result={"ci": block})
    stored = build_leaderboard([read_run(d, with_records=False)], n_resamples=300)
    q = next(c for c in stored.cells if c.metric == "QAcc" and c.category == "Overall")
    assert (q.ci_low, q.ci_high) == (-1.0, 101.0)
    for a, b in zip(fresh.cells, stored.cells):
        if (a.metric, a.category) != ("QAcc", "Overall"):
            assert (a.ci_low, a.ci_high, a.n) == (b.ci_low, b.ci_high, b.n)
    other = build_leaderboard([read_run(d)], n_resamples=301)  # another design: resampled, not read
    q = next(c for c in other.cells if c.metric == "QAcc" and c.category == "Overall")
    assert q.ci_low > -1.0


def test_one_resample_count_and_one_ci_note_in_report_view_and_compare(tmp_path):
    a = craft_run(tmp_path / "a", "rgb-th-bench", "ma", n=240, seed=1)
    b = craft_run(tmp_path / "b", "rgb-th-bench", "mb", n=240, seed=2, accuracy=0.7)
    note = "RGB-Th-Bench: 95% CI: BCa bootstrap over scenes (clusters resampled), 2000 resamples, seed 0."
    assert DEFAULT_RESAMPLES == 2000 and note in leaderboard_report([a, b], "md")
    html, _images, _runs = write_viewer([a, b], None, figures=False)
    doc = read_page_data(html)
    assert note in doc["tables"]["_leaderboard"]
    md = render_comparison(compare_runs(read_run(a), read_run(b)), "md")
    assert doc["comparisons"][0]["ci_note"] in md and "2000 resamples" in doc["comparisons"][0]["ci_note"]
    viewer_rows = {(r["metric"], r["category"]): (r["low"], r["high"], r["p_value"]) for r in doc["comparisons"][0]["rows"]}
    cli_rows = {(r["metric"], r["category"]): (r["low"], r["high"], r["p_value"])
                for r in compare_runs(read_run(a), read_run(b)).rows}
    assert viewer_rows == cli_rows


def test_compare_names_differing_protocol_settings(tmp_path):
    a = _edit(craft_run(tmp_path / "a", "rgb-th-bench", "m", n=96, seed=1),
              result={"options": {"input": "rgb+thermal", "include_extra_skills": False}})
    b = _edit(craft_run(tmp_path / "b", "rgb-th-bench", "m", n=96, seed=2),
              result={"options": {"input": "thermal-only", "include_extra_skills": False}},
              manifest={"generation_overrides": {"temperature": 0.7}})
    md = render_comparison(compare_runs(read_run(a), read_run(b), n_resamples=200), "md")
    assert "differ in protocol settings" in md
    assert "input: rgb+thermal (A) vs thermal-only (B)" in md and "temperature: (not set) (A) vs 0.7 (B)" in md
    same = compare_runs(read_run(a), read_run(a), n_resamples=200)
    assert not any("protocol settings" in n for n in same.notes)


def test_report_and_compare_take_seed_and_resamples(tmp_path):
        
    a = craft_run(tmp_path / "a", "rgb-th-bench", "ma", n=96, seed=1)
    b = craft_run(tmp_path / "b", "groundingme", "mb", n=40, seed=2)
    r = run_cli("report", str(a), str(b), "--resamples", "300", "--seed", "7")
    assert r.returncode == 0 and "over scenes (clusters resampled), 300 resamples, seed 7." in r.stdout
    r = run_cli("compare", str(a), str(a), "--resamples", "300", "--seed", "7", "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["design"] == {"cluster": "scene", "method": "BCa bootstrap", "n_resamples": 300, "seed": 7,
                             "level": 0.95, "min_clusters": 10}
