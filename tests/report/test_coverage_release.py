"""A run's coverage is counted against the benchmark's release, never its own folder (issue 29 part 2; SPEC
General rules): a subset of the data, a ``--limit``, a ``--shard`` and a demo-data run each say what they cover
("10/29 scenes") on the leaderboard, the report header, the viewer's run table and in ``reproduce`` (not
comparable); a run missing one failed request of 1,624 stays comparable with its coverage stated. Expected
counts are read from the run's own samples.jsonl here (distinct scenes and questions)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.benchmarks.layout import Release
from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.benchmarks.rgbth.reproduce import paper
from lensbench.cli.main import app
from lensbench.cli.view import leaderboard_report
from lensbench.report.coverage import MAX_MISSING_SHARE, Coverage, run_coverage, run_status
from lensbench.views.reproduce import reproduce
from lensbench.views.runs import read_run
from lensbench.core.errors import NOT_SENT
from lensbench.core.records import SampleRecord
from lensbench.views.viewer.data import build_payload
from lensbench.runtime.runner import RunSettings, run_benchmark
from lensbench.testing.runs import write_run

ROW = "GPT4o-20241120"  # a paper row to match the runs to (Table 3)
RGBTH = Release(29, "scenes", 1624, "questions")


def _run(data: Path, out: Path, model: str = "random", **kw) -> Path:
    run_benchmark(RGBThBench(), RunSettings(model=model, out=out, data_dir=data, progress=False, **kw))
    return out


def _scored(run_dir: Path) -> tuple[int, int]:
    """(scenes, questions) the run scored, from its records: the paper's skills, no failed request."""
    recs = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    ok = [r for r in recs if r["labels"].get("extra") is not True and r["outcome"] != "error"]
    return len({r["labels"]["scene"] for r in ok}), len({r["sample_id"] for r in ok})


def _surfaces(run_dir: Path) -> dict[str, str]:
    """What each surface says of the run: leaderboard md, ``lensbench report`` md, the viewer's run status,
    and the reasons of the run's Table 3 cells in ``reproduce`` (matched to a paper row)."""
    report = CliRunner().invoke(app, ["report", str(run_dir)], catch_exceptions=False)
    payload, _ = build_payload([read_run(run_dir)], embed=False)
    rep = reproduce(paper(), [run_dir], [f"{run_dir}={ROW}"], n_resamples=50)
    cells = next(s for s in rep.sections if s.id == "Tab. 3").cells
    return {"leaderboard": leaderboard_report([run_dir], "md", n_resamples=50), "report": report.stdout,
            "viewer": payload["runs"][0]["status"], "verdicts": {c.verdict for c in cells},
            "reasons": {c.reason for c in cells}, "runs": rep.runs}


def test_a_limit_run_names_its_limit_and_counts_against_the_release(rgbth_gen, tmp_path):
    d = _run(rgbth_gen, tmp_path / "lim", limit=10)
    scenes, questions = _scored(d)
    assert (scenes, questions) == (2, 10 * 4)  # 10 units of 4 questions: 8 skills of the first scene, 2 of the next
    counts = f"{scenes}/29 scenes, {questions}/1,624 questions"
    why = "--limit 10; the data folder holds 48 of the release's 406 question units"
    s = _surfaces(d)
    assert f"RGB-Th-Bench ({counts}: {why}) QAcc Overall" in s["leaderboard"]
    assert f"Coverage of {d}: {counts} ({why}): not comparable" in s["report"]
    assert s["viewer"] == f"partial: --limit 10, the data folder holds 48 of the release's 406 question units, {counts}"
    assert "unfinished" not in s["viewer"] and "failed" not in s["viewer"]
    assert s["verdicts"] == {"not comparable"} and s["reasons"] == {f"a random baseline, not a model; covers {counts} ({why})"}
    assert read_run(d).problems == []  # no more "incomplete (0 failed requests)"


def test_a_shard_run_and_a_demo_run_say_so(rgbth_gen, tmp_path):
    d = _run(rgbth_gen, tmp_path / "shard", shard="1/3")
    scenes, questions = _scored(d)
    s = _surfaces(d)
    counts = f"{scenes}/29 scenes, {questions}/1,624 questions"
    assert f"({counts}: --shard 1/3; the data folder holds 48" in s["leaderboard"]
    assert s["viewer"].startswith("partial: --shard 1/3, ") and s["viewer"].endswith(counts)
    assert all(r.startswith(f"a random baseline, not a model; covers {counts} (--shard 1/3;") for r in s["reasons"])
    # lensbench data demo: the folder is labelled, the run records demo_data, every surface says so
    demo = CliRunner().invoke(app, ["data", "demo", "rgb-th-bench", str(tmp_path / "demo")], catch_exceptions=False)
    assert demo.exit_code == 0, demo.output
    dd = _run(Path(demo.stdout.strip().splitlines()[-1]), tmp_path / "demo-run")
    assert json.loads((dd / "run.json").read_text())["demo_data"] is True
    scenes, questions = _scored(dd)
    s = _surfaces(dd)
    counts = f"{scenes}/29 scenes, {questions}/1,624 questions"
    assert f"RGB-Th-Bench (demo data, not the benchmark: {counts}) QAcc Overall" in s["leaderboard"]
    assert f"Coverage of {dd}: demo data, not the benchmark: {counts}: not comparable" in s["report"]
    assert s["viewer"] == f"demo data, not the benchmark: {counts}"
    assert s["reasons"] == {"a random baseline, not a model; demo data, not the benchmark"} and s["verdicts"] == {"not comparable"}
    assert s["runs"][0]["coverage"] == f"demo data, not the benchmark: {counts}"


def test_comparable_only_when_short_by_a_few_failed_requests():
    """The rule itself: every cluster, at most 1% of the samples missing, and only through failed requests."""
    one = Coverage(RGBTH, True, 29, 1623, failed=1)
    assert one.comparable and one.blocker is None and one.label == ""
    assert one.text == "29/29 scenes, 1,623/1,624 questions (1 failed request)"
    limit = int(MAX_MISSING_SHARE * 1624)  # 16 questions
    assert Coverage(RGBTH, True, 29, 1624 - limit, failed=limit).comparable
    over = Coverage(RGBTH, True, 29, 1624 - limit - 1, failed=limit + 1)
    assert not over.comparable and over.blocker == f"covers 29/29 scenes, {1624 - limit - 1:,}/1,624 questions " \
                                                   f"({limit + 1} failed requests)"
    assert not Coverage(RGBTH, True, 28, 1623, failed=1).comparable  # a whole scene missing
    assert not Coverage(RGBTH, True, 29, 1623).comparable  # missing without a failed request: not the release
    assert Coverage(RGBTH, True, 29, 1624).full and Coverage(RGBTH, True, 29, 1624).label == ""
    more = Coverage(RGBTH, True, 31, 1700)  # a constructed data set read by the benchmark's loader
    assert not more.comparable and more.blocker == ("other data than the release: 31 scenes / 1,700 questions "
                                                    "scored, the release holds 29 / 1,624")
    # a benchmark that states no release size: said, never a crash, never claimed partial
    unknown = Coverage(None, True)
    assert unknown.label == unknown.text == "release size unknown" and unknown.blocker is None
    assert Coverage(None, True, reasons=("--limit 3",)).blocker == "release size unknown; --limit 3"
    # a folder that does not record what it loaded (crafted by hand) claims nothing either way
    assert Coverage(RGBTH, False).label == "" and Coverage(RGBTH, False).blocker is None


def test_the_viewer_status_names_partial_killed_and_failed_together(tmp_path):
    recs = [SampleRecord(benchmark="groundingme", sample_id=f"s{i}", outcome="correct",
                         labels={"L-1": "Spatial", "L-2": "Counting"}) for i in range(10)]
    recs += [SampleRecord(benchmark="groundingme", sample_id="f0", outcome="error", error="HTTP 500 from x"),
             SampleRecord(benchmark="groundingme", sample_id="u0", outcome="error", error=NOT_SENT)]
    d = write_run(tmp_path / "gm", "groundingme", "m", recs, {"Acc@0.5": {"Total": 100.0}},
                  manifest={"n_samples": 12, "n_samples_loaded": 12})
    run = read_run(d)
    assert run_status(run) == ("partial: the data folder holds 12 of the release's 1,005 samples, 10/1,005 samples; "
                               "killed: 1 unsent request, incomplete: 1 failed request")
    assert run.problems == [f"{d}: incomplete (2 failed requests)"]
    cov = run_coverage(run)
    assert cov.blocker == ("covers 10/1,005 samples (the data folder holds 12 of the release's 1,005 samples; "
                           "1 failed request; 1 unsent request)")
    # the same records over the whole release (run.json says all 1,005 were loaded): short only by two requests
    whole = write_run(tmp_path / "gm-all", "groundingme", "m", recs, {"Acc@0.5": {"Total": 100.0}},
                      manifest={"n_samples": 1005, "n_samples_loaded": 1005})
    assert run_status(read_run(whole)) == "killed: 1 unsent request, incomplete: 1 failed request; 10/1,005 samples"


@pytest.fixture(scope="module")
def real_runs(rgbth_data, tmp_path_factory):
    """GLM-4.5V's recorded replies replayed on 10 of the 29 scenes (copied) and on all of them; Gemini-2.5-Pro's
    (one recorded error) on all of them."""
    root = tmp_path_factory.mktemp("cov-real")
    scenes = sorted(p.parent for p in rgbth_data.glob("*/*/questions.json"))[:10]
    for sc in scenes:
        shutil.copytree(sc, root / "sub" / sc.relative_to(rgbth_data))
    files = rgbth_data.parent.parent
    glm = f"replay:{files / 'benchmark_results_GLM.json'}"
    return {"sub": _run(root / "sub", root / "glm10", glm), "all": _run(rgbth_data, root / "glm", glm),
            "pro": _run(rgbth_data, root / "pro", f"replay:{files / 'benchmark_results_google.json'}",
                        replay_model="gemini-2.5-pro")}


def test_ten_scenes_of_the_real_release_are_10_of_29_everywhere(real_runs):
    d = real_runs["sub"]
    scenes, questions = _scored(d)
    assert scenes == 10
    counts = f"10/29 scenes, {questions:,}/1,624 questions"
    n_units = json.loads((d / "run.json").read_text())["n_samples"]
    assert n_units == 10 * 14  # the paper's 14 skills of each scene
    why = f"the data folder holds {n_units} of the release's 406 question units"
    s = _surfaces(d)
    assert f"({counts}: {why}) QAcc Overall" in s["leaderboard"]
    assert f"Coverage of {d}: {counts} ({why}): not comparable" in s["report"]
    assert s["viewer"] == f"partial: {why}, {counts}"
    assert s["verdicts"] == {"not comparable"} and s["reasons"] == {f"covers {counts} ({why})"}
    # beside the full run it is its own column, marked, never ranked with it
    md = leaderboard_report([real_runs["all"], d], "md", n_resamples=50)
    row = next(ln for ln in md.splitlines() if ln.startswith("| zai-org/GLM-4.5V |"))
    assert row.count("†") == 2 and "| RGB-Th-Bench QAcc Overall |" in md.splitlines()[2]
    full = _surfaces(real_runs["all"])
    assert full["viewer"] == "complete" and "Coverage of" not in full["report"]
    assert "not comparable" not in full["verdicts"]
    assert run_coverage(read_run(real_runs["all"])).full


def test_one_failed_request_of_1624_stays_comparable_with_its_coverage_stated(real_runs):
    d = real_runs["pro"]
    run = read_run(d)
    assert run.result.counts["n_error"] == 1
    scenes, questions = _scored(d)
    assert (scenes, questions) == (29, 1623)
    s = _surfaces(d)
    assert "not comparable" not in s["verdicts"]
    assert s["runs"][0]["coverage"] == "29/29 scenes, 1,623/1,624 questions (1 failed request)"
    assert s["viewer"] == "incomplete: 1 failed request; 29/29 scenes, 1,623/1,624 questions"
    assert f"Coverage of {d}: 29/29 scenes, 1,623/1,624 questions (1 failed request): comparable" in s["report"]
    assert run_status(run).startswith("incomplete")
