"""The viewer in a real browser: headless Debian Chromium driven by playwright.

Skipped when /usr/bin/chromium or playwright is missing (``apt-get install -y chromium``; tests/report/conftest.py).
"""

from __future__ import annotations

import pytest

from lensbench.cli.view import write_viewer
from lensbench.testing.runs import craft_run

# the browser fixture: tests/report/conftest.py


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    root = tmp_path_factory.mktemp("viewer")
    runs = [craft_run(root / "gm-a", "groundingme", "model-a", n=60, seed=1, accuracy=0.4),
            craft_run(root / "gm-b", "groundingme", "model-b", n=60, seed=2, accuracy=0.9),
            craft_run(root / "if", "if-bench", "model-a", n=32, seed=3),
            craft_run(root / "iv", "iv-bench", "model-a", n=8, seed=4)]
    out = root / "report.html"
    write_viewer(runs, out, n_resamples=200, figures=False, chunk=16)  # many chunks
    return out


@pytest.fixture
def page(browser, page_file):
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("request", lambda r: errors.append(f"network: {r.url}") if r.url.startswith("http") else None)
    pg.goto(page_file.as_uri())
    pg.wait_for_selector("body[data-ready]")
    pg.errors = errors
    yield pg
    pg.close()


def _count(pg) -> int:
    return int(pg.get_attribute("#list", "data-count"))


def test_loads_without_console_errors(page):
    assert page.errors == []
    assert page.locator("#tab-summary table.tbl").count() >= 2
    assert "model-b" in page.locator("#tab-summary .leaderboard").inner_text()  # leaderboard with CIs
    assert _count(page) == 60 + 60 + 32 + 8


def test_filters_and_search_change_the_list(page):
    page.click("#tabs button[data-tab=samples]")
    total = _count(page)
    page.select_option("#f-bench", "groundingme")
    assert _count(page) == 120
    page.select_option("#f-outcome", "correct")
    n_correct = _count(page)
    assert 0 < n_correct < 120
    assert all(o == "correct" for o in page.eval_on_selector_all("#list .sample", "els => els.map(e => e.dataset.outcome)"))
    page.select_option("select[data-label='L-1']", "Rejection")
    assert 0 < _count(page) < n_correct
    page.select_option("#f-bench", "")
    page.fill("#f-search", "locate the object 17.")
    page.wait_for_function("document.querySelector('#list').dataset.count === '2'")
    assert _count(page) == 2 < total  # gm17 in both groundingme runs
    assert page.errors == []


def test_images_and_boxes_render(page):
    page.click("#tabs button[data-tab=samples]")
    page.select_option("#f-bench", "groundingme")
    page.select_option("select[data-label='L-1']", "Spatial")
    img = page.locator("#list .sample .thumb img").first
    img.wait_for()
    assert page.evaluate("(e) => e.complete && e.naturalWidth > 0", img.element_handle())
    assert page.locator("#list .sample .thumb svg rect.box.gt").count() > 0
    assert page.locator("#list .sample .thumb svg rect.box.pr").count() > 0
    # the overlay covers exactly the picture, and the boxes lie on it
    geo = page.evaluate("""() => { const t = document.querySelector('#list .sample .thumb');
        const i = t.querySelector('img').getBoundingClientRect(), s = t.querySelector('svg').getBoundingClientRect();
        const b = t.querySelector('rect.box.gt').getBoundingClientRect();
        return [i.width, s.width, i.height, s.height, b.left >= i.left - 1 && b.right <= i.right + 1]; }""")
    assert abs(geo[0] - geo[1]) < 1 and abs(geo[2] - geo[3]) < 1 and geo[4]
    page.locator("#list .sample .thumb").first.click()
    page.locator("#modal .big img").wait_for(state="visible")
    assert page.evaluate("() => document.querySelector('#modal .big img').naturalWidth") == 400
    assert page.locator("#modal .big svg rect.box").count() == 2
    page.locator("#modal").click()
    assert not page.locator("#modal").is_visible()
    # IV-Bench frame strip with timestamps
    page.select_option("#f-bench", "iv-bench")
    assert page.locator("#list .sample .strip figure").count() >= 4
    assert "0.50 s" in page.locator("#list .sample .strip").first.inner_text()
    assert page.errors == []


def test_ifbench_groups_rotations_and_languages(page):
    page.click("#tabs button[data-tab=samples]")
    page.select_option("#f-bench", "if-bench")
    assert page.input_value("#f-group") == "qid"
    first = page.locator(".card.group").first
    assert first.locator(".mini.sample").count() == 8  # 4 rotations x 2 languages


def test_comparison_lists_flipped_samples(page, page_file):
    from lensbench.views.viewer.html import read_page_data

    page.click("#tabs button[data-tab=compare]")
    doc = read_page_data(page_file.read_text(encoding="utf-8"))
    flips = [f["sample_id"] for f in doc["comparisons"][0]["flips"]]
    assert flips
    shown = page.eval_on_selector_all("#tab-compare .flip", "els => els.map(e => e.dataset.id)")
    assert shown == flips[:20]
    first = page.locator("#tab-compare .flip").first
    outcomes = first.locator(".sample").evaluate_all("els => els.map(e => e.dataset.outcome)")
    assert len(outcomes) == 2 and ("correct" in outcomes) and outcomes[0] != outcomes[1]
    assert page.locator("#tab-compare table.deltas tbody tr").count() >= 2
    assert page.errors == []
