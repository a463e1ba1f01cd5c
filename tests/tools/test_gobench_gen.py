"""GOBench generation side: text-to-image backends, the ratings database, summaries (Tables 1-2,
Krippendorff's alpha) against independent computations, and the rating page in headless Chromium."""

from __future__ import annotations

import base64
import csv
import io
import json
import shutil
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image
from scipy import stats
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.tools.gobench.generate import FolderGenerator, OpenAIImagesGenerator, generate_all
from lensbench.benchmarks.gobench.humans import ground_truth, read_rating_rows
from lensbench.tools.gobench.ratings_db import RatingsDB
from lensbench.benchmarks.gobench.load import load_records
from lensbench.tools.gobench.server import RatingServer, collect_items
from lensbench.tools.gobench.summary import Source, summarize

Q = "1. Is the shadow there?\n2. Is the light plausible?\n3. Is the colour natural?\n4. Is the edge sharp?\n5. Is it long?"


def _mini_release(root: Path) -> Path:
    """A 2-scenario release in the official layout (data_total.json + <category>/<N.M>.png)."""
    recs = []
    for cat, n in (("direct_light_images", 1), ("reflect_light_images", 7)):
        for m in (1, 2):
            recs.append({"index": f"{cat}_{n}.{m}", "category": cat, "image": f"{cat}/{n}.{m}.png",
                         "title": f"title {cat} {n}", "prompt": f"A prompt about {cat} scenario {n}.",
                         "Questions_reality": Q, "Question_aesthetics": "Please rate the aesthetics of the image on a "
                         "scale of 1-5.", "Question_Instruction_consistency": "Based on the image and the provided "
                         "prompt, please rate the instruction consistency of the generated image on a scale of 1-5."})
            (root / cat).mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (64, 48), (40 * n, 60 * m, 90)).save(root / cat / f"{n}.{m}.png")
    (root / "data_total.json").write_text(json.dumps(recs))
    return root


# --------------------------------------------------------------------------- generation
def test_generate_folder_and_resume(tmp_path):
    data = _mini_release(tmp_path / "data")
    recs = load_records(data / "data_total.json")
    src = tmp_path / "made"
    (src / "direct_light_images").mkdir(parents=True)
    Image.new("RGB", (32, 32), "red").save(src / "direct_light_images" / "1.jpg")
    out = tmp_path / "gen"
    rep = generate_all(recs, out, FolderGenerator(str(src)))
    assert rep.made == 1 and len(rep.failed) == 1 and rep.failed[0][0] == "reflect_light_images/7"
    px = Image.open(out / "direct_light_images" / "1.png").getpixel((0, 0))
    assert px[0] > 250 and px[1] < 5 and px[2] < 5  # JPEG in, PNG out
    Image.new("RGB", (32, 32), "blue").save(src / "reflect_light_images_7.png")
    rep = generate_all(recs, out, FolderGenerator(str(src)))
    assert rep.made == 1 and rep.kept == 1 and not rep.failed
    lines = [json.loads(x) for x in (out / "generation.jsonl").read_text().splitlines()]
    assert [x["scenario"] for x in lines] == ["direct_light_images/1", "reflect_light_images/7"]


def test_generate_openai_images(tmp_path):
    data = _mini_release(tmp_path / "data")
    recs = load_records(data / "data_total.json")
    buf = io.BytesIO()
    Image.new("RGB", (16, 16), (1, 2, 3)).save(buf, format="PNG")
    seen = []

    def handler(req: httpx.Request) -> httpx.Response:
        body = json.loads(req.content)
        seen.append((req.url.path, body))
        if "reflect" in body["prompt"]:
            return httpx.Response(500, text="boom")
        return httpx.Response(200, json={"data": [{"b64_json": base64.b64encode(buf.getvalue()).decode()}]})

    gen = OpenAIImagesGenerator("gpt-image-1", base_url="http://x/v1", size="512x512")
    gen.api.http = httpx.Client(transport=httpx.MockTransport(handler))
    rep = generate_all(recs, tmp_path / "out", gen)
    assert rep.made == 1 and "HTTP 500" in rep.failed[0][1]
    assert seen[0] == ("/v1/images/generations", {"model": "gpt-image-1", "prompt": recs[0].prompt, "n": 1,
                                                   "size": "512x512"})
    assert Image.open(tmp_path / "out" / "direct_light_images" / "1.png").getpixel((3, 3)) == (1, 2, 3)


# --------------------------------------------------------------------------- ratings and summary
def _interval_alpha(m: np.ndarray) -> float:
    """Krippendorff's interval alpha of a complete raters x units matrix, from the definition."""
    vals = m.T  # units x raters
    n = vals.size
    r = vals.shape[1]
    d_o = sum(((a - b) ** 2) for u in vals for i, a in enumerate(u) for j, b in enumerate(u) if i != j) / (r - 1) / n
    flat = vals.ravel()
    d_e = sum((a - b) ** 2 for i, a in enumerate(flat) for j, b in enumerate(flat) if i != j) / (n * (n - 1))
    return 1 - d_o / d_e


def test_summary_against_independent_computation(tmp_path):
    # 3 raters x 4 images (variants .1 and .2 of two scenarios)
    imgs = ["direct_light_images/1.1.png", "direct_light_images/1.2.png", "reflect_light_images/7.1.png",
            "reflect_light_images/7.2.png"]
    rng = np.random.default_rng(3)
    ans = ["Yes", "No", "Cannot determine"]
    rows = []
    for img in imgs:
        for rater in ("A", "B", "C"):
            q = [ans[k] for k in rng.integers(0, 3, 5)]
            rows.append([img, rater, *q, int(rng.integers(1, 6)), int(rng.integers(1, 6))])
    path = tmp_path / "r.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["image", "rater", "q1", "q2", "q3", "q4", "q5", "aesthetics", "fidelity"])
        w.writerows(rows)
    pts = {"Yes": 1.0, "No": 0.0, "Cannot determine": 0.5}
    auth = {(r[0], r[1]): sum(pts[a] for a in r[2:7]) for r in rows}
    aes = {(r[0], r[1]): r[7] for r in rows}
    fid = {(r[0], r[1]): r[8] for r in rows}
    mean = {d: {i: np.mean([src[(i, k)] for k in "ABC"]) for i in imgs} for d, src in
            (("Authenticity", auth), ("Aesthetics", aes), ("Fidelity", fid))}
    s = summarize([Source("humans", read_rating_rows(path))], {"1": "Gen-One", "2": "Gen-Two"})["humans"]
    assert set(s["table2"]) == {"Gen-One", "Gen-Two"}
    for d in ("Authenticity", "Aesthetics", "Fidelity"):
        assert s["table2"]["Gen-One"][d] == pytest.approx(np.mean([mean[d][imgs[0]], mean[d][imgs[2]]]))
        assert s["table2"]["Gen-Two"][d] == pytest.approx(np.mean([mean[d][imgs[1]], mean[d][imgs[3]]]))
    a, f = [mean["Aesthetics"][i] for i in imgs], [mean["Fidelity"][i] for i in imgs]
    assert s["table1"]["Aesthetics vs Fidelity"]["PLCC"] == pytest.approx(stats.pearsonr(a, f)[0])
    assert s["table1"]["Aesthetics vs Fidelity"]["SRCC"] == pytest.approx(stats.spearmanr(a, f)[0])
    m = np.array([[aes[(i, k)] for i in imgs] for k in "ABC"], dtype=float)
    assert s["alpha"]["Aesthetics"] == pytest.approx(_interval_alpha(m))
    assert s["n_raters"] == 3 and s["n_images"] == 4
    res = CliRunner().invoke(app, ["gobench", "summary", "--ratings", str(path), "--generator-map", "1=Gen-One,2=Gen-Two",
                                   "--with-paper"])
    assert res.exit_code == 0, res.output
    assert "GPT-4o-Image" in res.output and "Gen-One" in res.output and "Krippendorff" in res.output


def test_ratings_db_roundtrip(tmp_path):
    db = RatingsDB(tmp_path / "r.sqlite")
    db.add_items([("g/direct_light_images/1.1.png", "g", "/x.png", "direct_light_images_1.1")])
    for f, v in zip(("q1", "q2", "q3", "q4", "q5", "aesthetics", "fidelity"), ("Yes", "yes", "No", "cannot determine",
                                                                                 "Yes", "4", "5")):
        db.set("ann", "g/direct_light_images/1.1.png", f, v)
    db.set("ann", "g/direct_light_images/1.1.png", "q1", "No")  # a change of mind keeps the latest
    with pytest.raises(ValueError):
        db.set("ann", "g/direct_light_images/1.1.png", "aesthetics", "6")
    (row,) = db.rows()
    assert row.answers == ("No", "Yes", "No", "Cannot determine", "Yes") and row.authenticity == 2.5
    assert row.record == "direct_light_images_1.1" and row.generator == "g"
    n = db.export_csv(tmp_path / "r.csv")
    db.close()
    assert n == 1
    gt = ground_truth(read_rating_rows(tmp_path / "r.csv"))
    assert gt["g/direct_light_images/1.1.png"].authenticity == 2.5
    assert read_rating_rows(tmp_path / "r.sqlite")[0].fidelity == 5.0


# --------------------------------------------------------------------------- the page in a browser
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian package 'chromium' not installed")
def test_rating_page_in_headless_chromium(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    data = _mini_release(tmp_path / "data")
    items, unknown = collect_items(data, load_records(data / "data_total.json"), "release")
    assert len(items) == 4 and not unknown
    db = RatingsDB(tmp_path / "ratings.sqlite")
    with RatingServer(items, db, roots=[data]) as srv, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(srv.url + "?rater=alice")
        page.wait_for_selector("#main:not([hidden])")
        assert page.inner_text("#prompt") == items[0].prompt
        assert "Is the shadow there?" in page.inner_text("#questions")
        page.click('button[data-field="q1"][data-value="Yes"]')
        page.wait_for_selector('button.sel[data-field="q1"][data-value="Yes"]')
        page.click('button[data-field="q2"][data-value="No"]')
        page.wait_for_selector('button.sel[data-field="q2"][data-value="No"]')
        for key, field in (("c", "q3"), ("y", "q4"), ("n", "q5"), ("4", "aesthetics"), ("2", "fidelity")):
            page.keyboard.press(key)
            page.wait_for_selector(f'button.sel[data-field="{field}"]')
        page.wait_for_function("document.querySelector('#progress').textContent.startsWith('1 / 4')")
        page.keyboard.press("ArrowRight")
        page.wait_for_function("document.querySelector('#where').textContent.startsWith('Image 2 of 4')")
        page.click('button[data-field="q1"][data-value="Cannot determine"]')
        page.wait_for_selector('button.sel[data-field="q1"][data-value="Cannot determine"]')
        # stored the moment it was given, exactly what was clicked
        assert db.of_rater("alice") == {
            items[0].item: {"q1": "Yes", "q2": "No", "q3": "Cannot determine", "q4": "Yes", "q5": "No",
                            "aesthetics": "4", "fidelity": "2"},
            items[1].item: {"q1": "Cannot determine"}}
        # resumable: a reload starts at the first image not fully rated, answers shown
        page.goto(srv.url + "?rater=alice")
        page.wait_for_function("document.querySelector('#where').textContent.startsWith('Image 2 of 4')")
        assert page.is_visible('button.sel[data-field="q1"][data-value="Cannot determine"]')
        # a second rater has their own answers
        page2 = browser.new_page()
        page2.goto(srv.url)
        page2.fill("#name", "bob")
        page2.click("#start")
        page2.wait_for_function("document.querySelector('#where').textContent.startsWith('Image 1 of 4')")
        assert page2.query_selector("button.sel") is None
        page2.keyboard.press("y")
        page2.wait_for_selector('button.sel[data-field="q1"][data-value="Yes"]')
        browser.close()
    assert db.raters() == ["alice", "bob"]
    assert db.conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 9
    (row,) = db.rows()
    assert row.rater == "alice" and row.authenticity == 1 + 0 + 0.5 + 1 + 0 and row.record == "direct_light_images_1.1"
    db.close()


def test_judge_run_on_generated_scenarios_with_db_ratings(tmp_path):
    """Generated images (<category>/<N>.png) rated by people in the DB, then by an MLLM judge through the engine."""
    from lensbench.benchmarks.gobench.benchmark import GOBench
    from lensbench.runtime.runner import RunSettings, run_benchmark

    data = _mini_release(tmp_path / "data")
    recs = load_records(data / "data_total.json")
    gen_dir = tmp_path / "gen"
    for key in ("direct_light_images/1", "reflect_light_images/7"):
        (gen_dir / key).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (32, 32), "green").save(gen_dir / f"{key}.png")
    items, _ = collect_items(gen_dir, recs, "mygen")
    assert [it.record for it in items] == ["direct_light_images_1", "reflect_light_images_7"]
    db = RatingsDB(tmp_path / "r.sqlite")
    db.add_items((it.item, it.generator, it.image, it.record) for it in items)
    for f, v in zip(("q1", "q2", "q3", "q4", "q5", "aesthetics", "fidelity"), ("Yes",) * 4 + ("No", "4", "3")):
        db.set("ann", items[0].item, f, v)
    db.close()
    reply = '{"realityAnswers_Eval": ["Yes","Yes","Yes","Yes","Cannot Determine"], "aestheticsRating_Eval": 4, ' \
            '"consistencyRating_Eval": 3}'
    bench = GOBench(GOBench.Options(layout="scenario", images_dir=str(gen_dir), human_ratings=str(tmp_path / "r.sqlite")))
    res = run_benchmark(bench, RunSettings(model=f"constant:{reply}", out=tmp_path / "run", data_dir=data, progress=False))
    # model authenticity 4.5 vs human 4.0 -> SPS 0; aesthetics and fidelity equal -> 100
    assert res.counts["n"] == 2 and res.counts["n_with_gt"] == 1
    assert res.metrics["SPS"] == {"Authenticity": 0.0, "Aesthetics": 100.0, "Fidelity": 100.0}
    assert res.metrics["question_agreement"]["Overall"] == pytest.approx(100 * 4 / 5)
