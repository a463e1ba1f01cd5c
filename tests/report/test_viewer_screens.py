"""`lensbench view` on all five benchmarks in headless Chromium at 1400x1000: a screenshot of every tab and of
every benchmark's sample list, the facet bar showing only the selected benchmark's labels (each label beside
its control), notes as lists, nothing wider than the window; strings from the data never run as HTML.

Screenshots go to a test tmp folder (``LENSBENCH_SCREENSHOTS=DIR`` keeps them in DIR to look at). Skipped
without /usr/bin/chromium or playwright (the browser fixture: tests/report/conftest.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clirun import run_cli
from lensbench.views.viewer.html import read_page_data
from lensbench.testing.runs import craft_run

BENCHES = {"rgb-th-bench": 48, "if-bench": 32, "iv-bench": 16, "gobench": 24, "groundingme": 40}
TABS = ("summary", "samples", "compare", "plots")
W, H = 1400, 1000

# elements sticking out of the window, unless a scrolling container (a wide table, a frame strip) clips them
OVERFLOW = """(root) => { const W = window.innerWidth, out = [];
  for (const e of document.querySelectorAll(root + ' *')) {
    const r = e.getBoundingClientRect();
    if (!r.width || r.right <= W + 1) continue;
    let p = e.parentElement, clipped = false;
    while (p && p !== document.body) {
      const ox = getComputedStyle(p).overflowX;
      if ((ox === 'auto' || ox === 'hidden' || ox === 'scroll') && p.getBoundingClientRect().right <= W + 1) { clipped = true; break; }
      p = p.parentElement;
    }
    if (!clipped) out.push(e.tagName + '.' + e.className + ' right=' + Math.round(r.right));
  }
  return out; }"""


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    keep = os.environ.get("LENSBENCH_SCREENSHOTS")
    d = Path(keep) if keep else tmp_path_factory.mktemp("viewer-screens")
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """Two crafted runs of each benchmark (so every benchmark has a comparison) and an unfinished one,
    through the `lensbench view` command with its plots."""
    root = tmp_path_factory.mktemp("view5")
    dirs = []
    for bench, n in BENCHES.items():
        for model, seed, acc in (("model-a", 1, 0.5), ("model-b", 2, 0.8)):
            dirs.append(craft_run(root / f"{bench}-{model}", bench, model, n=n, seed=seed, accuracy=acc))
    dirs.append(craft_run(root / "gm-unfinished", "groundingme", "model-c", n=8, seed=3, write_result=False))
    out = root / "report.html"
    r = run_cli("view", *map(str, dirs), "--out", str(out), "--resamples", "100")
    assert r.returncode == 0, r.stderr
    return out


def _open(browser, page_file: Path):
    pg = browser.new_page(viewport={"width": W, "height": H})
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("request", lambda r: errors.append(f"network: {r.url}") if not r.url.startswith(("file:", "data:")) else None)
    pg.goto(page_file.as_uri())
    pg.wait_for_selector("body[data-ready]")
    pg.wait_for_load_state("load")
    return pg, errors


def _facets_expected(doc: dict, bench: str) -> list[str]:
    """The label keys of ``bench``'s records with 2-60 distinct values (the test's own count)."""
    runs = {r["i"] for r in doc["runs"] if r["benchmark"] == bench}
    values: dict[str, set[str]] = {}
    for s in doc["samples"]:
        if s["r"] in runs:
            for k, v in (s.get("l") or {}).items():
                values.setdefault(k, set()).add(v if isinstance(v, str) else json.dumps(v, separators=(",", ":")))
    return sorted(k for k, vs in values.items() if 2 <= len(vs) <= 60)


def test_every_tab_fits_the_window(browser, report, shots):
    pg, errors = _open(browser, report)
    try:
        for tab in TABS:
            pg.click(f"#tabs button[data-tab={tab}]")
            if tab == "plots":
                pg.wait_for_function("[...document.querySelectorAll('#tab-plots img')].every(i => i.complete)")
            pg.screenshot(path=str(shots / f"tab-{tab}.png"))
            assert pg.evaluate("document.documentElement.scrollWidth") <= W, tab
            assert pg.evaluate(OVERFLOW, f"#tab-{tab}") == [], tab
            pg.screenshot(path=str(shots / f"tab-{tab}-full.png"), full_page=True)
        assert pg.evaluate("document.querySelector('header').getBoundingClientRect().height") < 60  # one line
        doc = read_page_data(report.read_text(encoding="utf-8"))
        assert pg.locator("#tab-plots figure").count() == len(doc["figures"]) > 0
        # every pair of a benchmark's runs is compared (two each, groundingme three with the unfinished run);
        # the tab shows the one pair its pickers choose
        assert len(doc["comparisons"]) == len(BENCHES) - 1 + 3
        assert pg.locator("#tab-compare .comparison").count() == 1
        assert errors == []
    finally:
        pg.close()


def test_facet_bar_shows_the_selected_benchmarks_labels_beside_their_controls(browser, report, shots):
    doc = read_page_data(report.read_text(encoding="utf-8"))
    pg, errors = _open(browser, report)
    try:
        pg.click("#tabs button[data-tab=samples]")
        assert pg.locator("#f-labels select").count() == 0  # several benchmarks, none chosen: no label facets
        assert "Choose a benchmark" in pg.inner_text("#f-labels")
        for bench in BENCHES:
            pg.select_option("#f-bench", bench)
            pg.screenshot(path=str(shots / f"samples-{bench}.png"))
            want = _facets_expected(doc, bench)
            got = pg.eval_on_selector_all("#f-labels select", "els => els.map(e => e.dataset.label)")
            assert sorted(got) == want and want, bench
            # each label sits with its control: one pill, same line, next to each other
            geo = pg.eval_on_selector_all("#f-labels .facet", """els => els.map(f => {
                const l = f.querySelector('.fl').getBoundingClientRect(), s = f.querySelector('select').getBoundingClientRect();
                return [f.dataset.facet, f.querySelector('.fl').textContent, s.left - l.right,
                        Math.abs((l.top + l.bottom) / 2 - (s.top + s.bottom) / 2)]; })""")
            for key, text, gap, dy in geo:
                assert text == key and 0 <= gap < 12 and dy < 4, (bench, key, gap, dy)
            # compact: the whole filter is at most three rows of controls
            assert pg.evaluate("document.querySelector('#controls').getBoundingClientRect().height") < 130, bench
            assert pg.evaluate(OVERFLOW, "#tab-samples") == [], bench
        # a facet filters, marks itself on, and 'clear filters' undoes it
        pg.select_option("#f-bench", "groundingme")
        before = int(pg.get_attribute("#list", "data-count"))
        pg.select_option("select[data-label='L-1']", "Spatial")
        assert 0 < int(pg.get_attribute("#list", "data-count")) < before
        assert pg.locator(".facet.on[data-facet='L-1']").count() == 1
        pg.click("#f-labels button.clear")
        assert int(pg.get_attribute("#list", "data-count")) == before
        assert pg.locator(".facet.on").count() == 0
        assert errors == []
    finally:
        pg.close()


def test_notes_render_as_lists(browser, report):
    pg, errors = _open(browser, report)
    try:
        raw = pg.eval_on_selector_all("#tab-summary p, #tab-compare p", "els => els.map(e => e.textContent)")
        assert not [t for t in raw if t.lstrip().startswith("- ")]
        items = pg.eval_on_selector_all("#tab-summary .leaderboard li", "els => els.map(e => e.textContent)")
        assert any("gm-unfinished" in t for t in items)  # the leaderboard's list of runs left out
        assert errors == []
    finally:
        pg.close()


def test_strings_from_the_data_never_run(browser, tmp_path):
    evil = '<img src=x onerror="window.pwned=1">'
    run = craft_run(tmp_path / "gm", "groundingme", evil, n=8, seed=4)
    lines = (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    recs = [json.loads(x) for x in lines]
    for i, rec in enumerate(recs):
        rec["labels"][evil] = evil if i % 2 else "plain"
    (run / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    out = tmp_path / "evil.html"
    from lensbench.cli.view import write_viewer

    write_viewer([run], out, n_resamples=50, figures=False)
    pg, errors = _open(browser, out)
    try:
        pg.click("#tabs button[data-tab=samples]")
        assert pg.input_value("#f-bench") == "groundingme"  # the only benchmark is chosen at once
        pg.select_option(f"select[data-label='{evil}']", evil)
        assert int(pg.get_attribute("#list", "data-count")) == 4
        assert evil in pg.inner_text("#f-labels") and evil in pg.inner_text("#tab-summary")
        assert pg.evaluate("window.pwned") is None and pg.locator("img[src=x]").count() == 0
        assert [e for e in errors if "network" in e] == []
    finally:
        pg.close()
