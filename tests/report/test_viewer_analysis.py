"""The viewer's Items and Judge tabs (issue 34): their data in the page (present only where there is something to
show, the numbers those of :mod:`lensbench.analysis` and the stored judge-noise report), and one browser check
that opens both tabs, sorts the flagged items and follows a sample link (``LENSBENCH_SCREENSHOTS=DIR`` keeps the
screenshots)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from lensbench.analysis.items import analyze_items, to_json
from lensbench.cli.view import write_viewer
from lensbench.views.viewer.html import read_page_data

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
import items_fixture as fx  # noqa: E402

RESAMPLES = 200


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[list[Path], Path]:
    pytest.importorskip("scipy")
    return fx.write_runs(tmp_path_factory.mktemp("items"))


def _judge_report(run: Path) -> dict:
    """A judge-noise.json as ``analyze judge`` writes it (JudgeNoise.to_json), with two disagreements."""
    doc = {"judges": ["gpt-judge", "other-judge"], "n_judged": 40, "kappa": [0.8, 0.61, 0.93], "agreement": 0.95,
           "design": {"cluster": "scene", "n_resamples": 200, "seed": 0}, "n_clusters": 12,
           "headline": {"metric": "accuracy", "first": 61.0, "second": 59.5, "change": -1.5, "low": -4.0, "high": 0.5,
                        "p_value": 0.25},
           "disagreements": [{"sample_id": fx.MISKEYED, "first": "Yes", "second": "No", "outcome_first": "wrong",
                              "outcome_second": "correct"},
                             {"sample_id": fx.FALLS, "first": "No", "second": "Yes", "outcome_first": "correct",
                              "outcome_second": "wrong"}]}
    d = run / "analysis" / "judge-other-judge"
    d.mkdir(parents=True)
    (d / "judge-noise.json").write_text(json.dumps(doc), encoding="utf-8")
    return doc


@pytest.fixture(scope="module")
def page(runs, tmp_path_factory) -> tuple[Path, dict]:
    dirs, blind = runs
    judge = _judge_report(dirs[3])
    out = tmp_path_factory.mktemp("page") / "page.html"
    write_viewer(dirs + [blind], out, n_resamples=RESAMPLES, compare=False, figures=False)
    return out, judge


def test_items_tab_data_equal_the_analysis(runs, page):
    dirs, blind = runs
    doc = read_page_data(page[0].read_text(encoding="utf-8"))
    want = to_json(analyze_items(dirs + [blind], n_resamples=RESAMPLES, seed=0))
    got = doc["items"]["rgb-th-bench"]
    assert got["flag_counts"] == want["flag_counts"]
    assert got["without_flagged"] == want["without_flagged"]
    flagged = [r for r in want["items"] if r["flags"]]
    assert got["n_flagged"] == len(flagged) == len(got["items"]) and got["n_items"] == len(fx.items())
    for g, w in zip(got["items"], flagged):
        assert {k: g[k] for k in w} == w
    ids = {r["item"] for r in got["items"]}
    assert {fx.MISKEYED, fx.FALLS, *fx.DUP} <= ids  # the planted defects are among them
    keys = [r["key"] for r in doc["runs"]]
    for r in got["items"]:  # each flagged item links to a run that has it as a sample
        assert any(s["r"] == r["run"] and s["id"] == r["item"] for s in doc["samples"]), keys[r["run"]]
    assert got["irt_skipped"] is False and all(r["irt_a"] is not None for r in got["items"])
    assert [doc["runs"][i]["path"] for i in got["page_runs"]] == [str(d) for d in dirs]


def test_judge_tab_data_is_the_stored_report(page):
    doc = read_page_data(page[0].read_text(encoding="utf-8"))
    (j,) = doc["judge"]
    assert j["run"] == 3 and j["name"] == "judge-other-judge"
    assert {k: v for k, v in j.items() if k not in ("run", "name")} == page[1]


def test_no_items_or_judge_data_below_three_runs(runs, tmp_path):
    dirs, _ = runs
    out = tmp_path / "two.html"
    write_viewer(dirs[:2], out, n_resamples=RESAMPLES, compare=False, figures=False)
    doc = read_page_data(out.read_text(encoding="utf-8"))
    assert doc["items"] == {} and doc["judge"] == []
    html = out.read_text(encoding="utf-8")
    assert '<button data-tab="items" hidden>' in html and '<button data-tab="judge" hidden>' in html


def test_a_bad_judge_report_is_named_and_left_out(runs, tmp_path):
    from lensbench.views.runs import read_run
    from lensbench.views.viewer.analysis import judge_data

    import shutil
    run = shutil.copytree(runs[0][0], tmp_path / "run")
    bad = run / "analysis" / "judge-x" / "judge-noise.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json", encoding="utf-8")
    said: list[str] = []
    assert judge_data([read_run(run)], said.append) == []
    assert len(said) == 1 and str(bad) in said[0]


def test_browser_items_and_judge_tabs(browser, page):
    shots = Path(os.environ.get("LENSBENCH_SCREENSHOTS") or page[0].parent)
    shots.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(page[0].as_uri())
    pg.wait_for_selector("body[data-ready]")
    pg.wait_for_load_state("load")
    doc = read_page_data(page[0].read_text(encoding="utf-8"))["items"]["rgb-th-bench"]
    assert pg.is_visible("#tabs button[data-tab=items]") and pg.is_visible("#tabs button[data-tab=judge]")
    pg.click("#tabs button[data-tab=items]")
    rows = pg.eval_on_selector_all("#tab-items table.flagged tbody tr", "rs => rs.map(r => r.dataset.item)")
    assert rows == [r["item"] for r in doc["items"]]
    pg.click("#tab-items table.flagged thead th:nth-child(3)")  # difficulty, highest first
    diffs = pg.eval_on_selector_all("#tab-items table.flagged tbody tr", "rs => rs.map(r => r.cells[2].textContent)")
    vals = [float(v) for v in diffs if v != "-"]
    assert vals == sorted(vals, reverse=True)
    pg.screenshot(path=str(shots / "items-tab.png"), full_page=True)
    pg.click("#tabs button[data-tab=judge]")
    assert pg.inner_text("#tab-judge table.facts").count("0.800 [0.610, 0.930]") == 1
    links = pg.eval_on_selector_all("#tab-judge table.disagree a", "as => as.map(a => a.textContent)")
    assert links == [fx.MISKEYED, fx.FALLS]
    pg.screenshot(path=str(shots / "judge-tab.png"), full_page=True)
    pg.click("#tab-judge table.disagree a")
    pg.wait_for_selector("#list .focus")
    assert pg.locator("#list [data-count='1']").count() + (pg.get_attribute("#list", "data-count") == "1") >= 1
    assert errors == []
    ctx.close()


def test_2pl_skipped_above_the_cap_and_no_subset_search(runs):
    from lensbench.views.runs import read_run
    from lensbench.views.viewer.analysis import items_data

    dirs, _ = runs
    loaded = [read_run(d) for d in dirs[:4]]
    (doc,) = items_data(loaded, n_resamples=50, irt_max_cells=len(fx.items()) * 4 - 1).values()
    assert doc["irt_skipped"] is True and doc["irt"] is None and doc["subset"] is None
    assert all(r["irt_a"] is None and r["irt_b"] is None for r in doc["items"])
    (fit,) = items_data(loaded, n_resamples=50, irt_max_cells=len(fx.items()) * 4).values()
    assert fit["irt_skipped"] is False and fit["irt"] is not None
