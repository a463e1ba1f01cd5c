"""Issue 32.8 in headless Chromium: sortable tables (click and keyboard, numeric-aware), a link to any single
sample (#sample=<run>/<id>, copy-link control), compare any two runs (pickers, swap, #compare= link), plots with
error bars and distinct run names, and the reproduce appendix readable (contents, collapsed sections, tables
scrolling inside the page). A screenshot of each (``LENSBENCH_SCREENSHOTS=DIR`` keeps them to look at).

Crafted runs for the page's behaviour; the recorded RGB-Th-Bench replies for a realistic page and appendix
(skipped without ../shared/data). Skipped without /usr/bin/chromium or playwright (tests/report/conftest.py).
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import pytest

from lensbench.cli.view import write_viewer
from lensbench.views.viewer.html import read_page_data
from lensbench.testing.runs import craft_run

W, H = 1400, 1000


def _retag(run: Path, tag: str) -> Path:
    p = run / "result.json"
    doc = json.loads(p.read_text(encoding="utf-8"))
    doc.setdefault("extra", {})["tag"] = tag
    p.write_text(json.dumps(doc), encoding="utf-8")
    return run


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    keep = os.environ.get("LENSBENCH_SCREENSHOTS")
    d = Path(keep) if keep else tmp_path_factory.mktemp("feature-screens")
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture(scope="module")
def page_file(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("features")
    runs = [_retag(craft_run(root / "a", "rgb-th-bench", "same-model", n=48, seed=1, accuracy=0.5), "first"),
            _retag(craft_run(root / "b", "rgb-th-bench", "same-model", n=48, seed=2, accuracy=0.8), "second"),
            craft_run(root / "c", "rgb-th-bench", "other-model", n=48, seed=3, accuracy=0.6)]
    out = root / "report.html"
    write_viewer(runs, out, n_resamples=200)
    return out


@pytest.fixture
def open_page(browser):
    pages = []

    def go(url: str, ready: bool = True):
        ctx = browser.new_context(viewport={"width": W, "height": H})
        pg = ctx.new_page()
        pg.errors = []
        pg.on("pageerror", lambda e: pg.errors.append(str(e)))
        pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
        pg.goto(url)
        if ready:  # the viewer marks the body when its first page is drawn; the appendix has no script
            pg.wait_for_selector("body[data-ready]")
        pg.wait_for_load_state("load")
        pages.append(ctx)
        return pg

    yield go
    for c in pages:
        c.close()


def _num(text: str) -> float | None:
    t = text.strip()
    return None if t in ("", "-") else float(t.split()[0].rstrip("*†").replace(",", ""))


def _column(pg, table: str, k: int) -> list[str]:
    return pg.eval_on_selector_all(f"{table} tbody tr", f"rows => rows.map(r => r.cells[{k}].textContent)")


def test_tables_sort_by_click_and_keyboard_numbers_as_numbers(open_page, page_file, shots):
    pg = open_page(page_file.as_uri())
    sel = "#tab-summary .bench table.tbl"  # the benchmark's Table 3 layout: paper rows and ours
    first = f"document.querySelectorAll('{sel}')[0]"
    k = pg.evaluate(f"[...{first}.tHead.rows[0].cells].map(c => c.textContent)").index("Overall QAcc")
    before = pg.evaluate(f"[...{first}.tBodies[0].rows].map(r => r.cells[{k}].textContent)")
    names = pg.evaluate(f"[...{first}.tBodies[0].rows].map(r => r.cells[0].textContent)")
    th = pg.locator(sel).first.locator("thead th").nth(k)
    assert th.get_attribute("aria-sort") == "none" and th.get_attribute("tabindex") == "0"
    th.click()
    after = pg.evaluate(f"[...{first}.tBodies[0].rows].map(r => r.cells[{k}].textContent)")
    nums = [v for v in map(_num, before) if v is not None]
    assert [_num(v) for v in after] == sorted(nums, reverse=True) + [None] * (len(before) - len(nums))
    assert th.get_attribute("aria-sort") == "descending"
    pg.screenshot(path=str(shots / "sorted-desc.png"))
    th.focus()
    pg.keyboard.press("Enter")  # the keyboard reverses the order
    assert th.get_attribute("aria-sort") == "ascending"
    asc = [_num(v) for v in pg.evaluate(f"[...{first}.tBodies[0].rows].map(r => r.cells[{k}].textContent)")]
    assert asc == sorted(nums) + [None] * (len(before) - len(nums))
    pg.keyboard.press(" ")  # third press: the table as written
    assert th.get_attribute("aria-sort") == "none"
    assert pg.evaluate(f"[...{first}.tBodies[0].rows].map(r => r.cells[0].textContent)") == names
    assert len(set(nums)) > 5 and pg.errors == []


def test_a_link_opens_one_sample_and_can_be_copied(open_page, browser, page_file, shots):
    doc = read_page_data(page_file.read_text(encoding="utf-8"))
    s = [x for x in doc["samples"] if x["r"] == 1][7]
    run = doc["runs"][1]
    frag = "#sample=" + quote(run["key"], safe="") + "/" + quote(s["id"], safe="")
    assert " " in s["id"] and "/" in s["id"]  # the id needs its encoding
    pg = open_page(page_file.as_uri() + frag)
    assert pg.locator("#tab-samples").get_attribute("class") == "tab on"
    cards = pg.locator("#list .sample")
    assert cards.count() == 1 and cards.locator("h3 code").inner_text() == s["id"]
    assert cards.locator(".run").inner_text().startswith(run["label"]) and run["label"] == "same-model [second]"
    assert cards.get_attribute("data-outcome") == s["o"]
    pg.screenshot(path=str(shots / "sample-link.png"))
    # the copy control: the clipboard (or, where there is none, a selected field) holds the full link
    pg.context.grant_permissions(["clipboard-read", "clipboard-write"])
    cards.locator("button.copylink").click()
    pg.wait_for_function("document.querySelector('.copylink') === null || document.querySelector('.copylink').textContent === 'copied'")
    got = (pg.input_value(".linkfield") if pg.locator(".linkfield").count()
           else pg.evaluate("navigator.clipboard.readText()"))
    assert got == page_file.as_uri() + frag
    # another link in the address bar opens that sample; 'show all samples' returns to the list
    other = [x for x in doc["samples"] if x["r"] == 2][3]
    pg.evaluate("h => { location.hash = h; }", "#sample=c/" + quote(other["id"], safe=""))
    pg.wait_for_function("id => document.querySelector('#list .sample h3 code').textContent === id", arg=other["id"])
    pg.click("#list .focus button")
    assert int(pg.get_attribute("#list", "data-count")) == len(doc["samples"])
    # a link to nothing says so
    pg.evaluate("() => { location.hash = '#sample=c/no-such-id'; }")
    pg.wait_for_function("document.querySelector('#list .focus') && document.querySelector('#list').dataset.count === '0'")
    assert "No sample c/no-such-id" in pg.inner_text("#list .focus")
    assert pg.errors == []


def _flips(doc: dict, ia: int, ib: int) -> tuple[int, int]:
    """(right only in A, right only in B) over the samples both runs scored: the test's own count."""
    out = {i: {s["id"]: s["o"] for s in doc["samples"] if s["r"] == i} for i in (ia, ib)}
    both = [k for k in out[ia] if k in out[ib] and {out[ia][k], out[ib][k]}.isdisjoint({"error", "scored"})]
    a = sum(out[ia][k] == "correct" and out[ib][k] != "correct" for k in both)
    b = sum(out[ib][k] == "correct" and out[ia][k] != "correct" for k in both)
    return a, b


def test_compare_any_two_runs_and_swap_them(open_page, page_file, shots):
    doc = read_page_data(page_file.read_text(encoding="utf-8"))
    pg = open_page(page_file.as_uri())
    pg.click("#tabs button[data-tab=compare]")
    assert pg.locator("#cmp-a option").count() == 3 and pg.locator("#tab-compare .comparison").count() == 1
    pg.select_option("#cmp-a", "1")
    pg.select_option("#cmp-b", "2")
    panel = pg.locator("#tab-compare .comparison")
    assert (panel.get_attribute("data-ia"), panel.get_attribute("data-ib")) == ("1", "2")
    stored = next(c for c in doc["comparisons"] if (c["ia"], c["ib"]) == (1, 2))
    row = stored["rows"][0]
    cells = panel.locator("table.deltas tbody tr").first.locator("td").all_inner_texts()
    assert float(cells[4]) == pytest.approx(row["diff"], abs=0.006)
    a, b = _flips(doc, 1, 2)
    assert panel.locator(":scope > h3").inner_text().startswith(f"{a + b} flipped samples ({a} right only in A, {b} right only in B)")
    assert "same-model [second]" in panel.locator(":scope > h2").inner_text() and "other-model" in panel.locator(":scope > h2").inner_text()
    assert pg.evaluate("location.hash") == "#compare=b/c"
    pg.screenshot(path=str(shots / "compare-b-c.png"))
    pg.click("#cmp-swap")  # B - A: every difference and CI mirrored, the flips counted the other way
    panel = pg.locator("#tab-compare .comparison")
    assert (panel.get_attribute("data-ia"), panel.get_attribute("data-ib")) == ("2", "1")
    cells = panel.locator("table.deltas tbody tr").first.locator("td").all_inner_texts()
    assert float(cells[4]) == pytest.approx(-row["diff"], abs=0.006)
    if row.get("too_few_clusters") is not None:  # below scoring.bootstrap.MIN_CLUSTERS: no CI either way round
        assert cells[5] == f"too few clusters ({row['too_few_clusters']})" and row["low"] is None
    else:
        low, high = (float(x) for x in cells[5].strip("[]").split(","))
        assert low == pytest.approx(-row["high"], abs=0.006) and high == pytest.approx(-row["low"], abs=0.006)
    assert panel.locator(":scope > h3").inner_text().startswith(f"{a + b} flipped samples ({b} right only in A, {a} right only in B)")
    assert panel.locator(".flip").first.locator(".sample").first.get_attribute("data-outcome") == "correct"
    assert pg.errors == []
    # the choice is a link
    pg2 = open_page(page_file.as_uri() + "#compare=c/a")
    pg2.wait_for_selector("#tab-compare .comparison")
    panel = pg2.locator("#tab-compare .comparison")
    assert (panel.get_attribute("data-ia"), panel.get_attribute("data-ib")) == ("2", "0")
    assert pg2.input_value("#cmp-a") == "2" and pg2.errors == []
    pg2.evaluate("() => { location.hash = '#compare=a/b'; }")  # followed on the open page
    pg2.wait_for_function("document.querySelector('#tab-compare .comparison').dataset.ib === '1'")
    assert pg2.locator("#tab-compare .comparison").get_attribute("data-ia") == "0" and pg2.errors == []


def test_plots_name_runs_apart_and_carry_error_bars(open_page, page_file, shots):
    doc = read_page_data(page_file.read_text(encoding="utf-8"))
    titles = [f["title"] for f in doc["figures"]]
    assert titles[0] == "rgb-th-bench: headline metrics per run (95% CI)"
    assert [r["label"] for r in doc["runs"]] == ["same-model [first]", "same-model [second]", "other-model"]
    pg = open_page(page_file.as_uri() + "#plots")
    pg.wait_for_function("[...document.querySelectorAll('#tab-plots img')].every(i => i.complete && i.naturalWidth)")
    assert pg.locator("#tab-plots figure").count() == len(titles)
    pg.screenshot(path=str(shots / "plots.png"), full_page=True)


@pytest.fixture(scope="module")
def recorded(rgbth_data, tmp_path_factory):
    """The recorded replies as runs: GLM twice (two tags), gemini-2.5-pro with both images and thermal-only."""
    from lensbench.benchmarks.rgbth.benchmark import RGBThBench
    from lensbench.runtime.runner import RunSettings, run_benchmark

    root, files = tmp_path_factory.mktemp("recorded-view"), rgbth_data.parent.parent
    plan = [("glm-a", "GLM", None, "paper-prompt", "rgb+thermal"), ("glm-b", "GLM", None, "rerun", "rgb+thermal"),
            ("gpro", "google", "gemini-2.5-pro", None, "rgb+thermal"),
            ("gpro-th", "gemini-2.5-pro_thermal_only", None, None, "thermal-only")]
    with ThreadPoolExecutor(1) as pool:  # its own event loop, apart from playwright's
        for name, f, model, tag, mode in plan:
            pool.submit(run_benchmark, RGBThBench(RGBThBench.Options(input=mode)),
                        RunSettings(model=f"replay:{files / f'benchmark_results_{f}.json'}", replay_model=model,
                                    out=root / name, data_dir=rgbth_data, progress=False, tag=tag)).result()
    return [root / p[0] for p in plan]


def test_recorded_runs_page_and_reproduce_appendix(open_page, recorded, tmp_path, shots):
    from lensbench.benchmarks.rgbth.reproduce import paper
    from lensbench.views.reproduce import reproduce
    from lensbench.views.reproduce_html import render_html

    out = tmp_path / "real.html"
    write_viewer(recorded, out, n_resamples=200)
    doc = read_page_data(out.read_text(encoding="utf-8"))
    labels = [r["label"] for r in doc["runs"]]
    assert labels[:2] == ["zai-org/GLM-4.5V [paper-prompt]", "zai-org/GLM-4.5V [rerun]"]
    assert labels[2].startswith("gemini-2.5-pro [input=rgb+thermal") and labels[3].startswith("gemini-2.5-pro [input=thermal-only")
    pg = open_page(out.as_uri() + "#plots")
    pg.wait_for_function("[...document.querySelectorAll('#tab-plots img')].every(i => i.complete && i.naturalWidth)")
    pg.screenshot(path=str(shots / "real-plots.png"), full_page=True)
    pg.click("#tabs button[data-tab=compare]")
    pg.select_option("#cmp-a", "2")
    pg.select_option("#cmp-b", "3")
    pg.screenshot(path=str(shots / "real-compare.png"))
    assert pg.errors == []

    page = tmp_path / "appendix.html"
    page.write_text(render_html(reproduce(paper(), recorded, n_resamples=200)), encoding="utf-8")
    pg = open_page(page.as_uri(), ready=False)
    pg.screenshot(path=str(shots / "appendix-top.png"))
    # collapsed: the contents and the runs on one short page, every section and claim closed
    assert pg.evaluate("document.documentElement.scrollHeight") < 2600
    assert pg.evaluate("[...document.querySelectorAll('details')].every(d => !d.open)")
    assert pg.locator("details.art").count() >= 5 and pg.locator("details.claim").count() >= 3
    # the contents link every section and claim list
    hrefs = pg.eval_on_selector_all("nav.toc a", "els => els.map(a => a.getAttribute('href').slice(1))")
    assert hrefs and all(pg.locator(f"[id='{h}']").count() == 1 for h in hrefs)
    # opened, nothing is cut off or wider than the window: every table scrolls inside its wrapper
    pg.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    assert pg.evaluate("document.documentElement.scrollWidth") <= W
    assert pg.evaluate("[...document.querySelectorAll('table')].every(t => t.parentElement.classList.contains('tblwrap'))")
    assert pg.evaluate("[...document.querySelectorAll('.tblwrap')].every(w => w.getBoundingClientRect().right <= innerWidth)")
    wide = pg.evaluate("[...document.querySelectorAll('td.reason')].filter(td => getComputedStyle(td).whiteSpace !== 'normal').length")
    assert wide == 0
    pg.locator("details.art").first.scroll_into_view_if_needed()
    pg.screenshot(path=str(shots / "appendix-open.png"))
    assert pg.errors == []
