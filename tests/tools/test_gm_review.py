"""GroundingME's human steps on the shared review page: selection and refinement (Sec. 3.2.3:
accept / edit text / fix box / change subcategory / reject, resolved over two reviewers and
exported), App. C's human rejection verification (figures worked out by hand), and the page in
headless Chromium."""

from __future__ import annotations

import json
import shutil
import sys
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.testing.server import FakeOpenAIServer
from lensbench.tools.groundingme.review_cli import image_roots
from lensbench.tools.groundingme.review import (apply_review, selection_form, selection_items, verification_form,
                                                verification_scores)
from lensbench.tools.review import ReviewDB, ReviewServer, binary_scores

sys.path.insert(0, str(Path(__file__).parent))
from gm_build_fixture import FLAGS, KITE, ScriptedBuilder, make_scene  # noqa: E402

pytest.importorskip("pyarrow")
GM_FIXTURE = Path(__file__).resolve().parents[1] / "golden" / "fixtures" / "gm" / "hf"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("gmrev")
    scene = make_scene(root)
    work = root / "work"
    with FakeOpenAIServer(responder=ScriptedBuilder()) as srv:
        res = CliRunner().invoke(app, ["groundingme", "build", "--work", str(work), "--model", "openai:b",
                                       "--base-url", srv.url, "--images", str(scene["images"]), "--boxes",
                                       str(scene["boxes"]), "--small-boxes", str(scene["small"]),
                                       "--max-per-image", "10", "--rejection-share", "0.25"])
        assert res.exit_code == 0, res.output
    return work, [json.loads(x) for x in (work / "candidates.jsonl").read_text().splitlines()]


def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())


def test_selection_review_resolved_and_exported(built, tmp_path):
    work, cands = built
    flags = [c for c in cands if c["subtask_l2"] == "Counting"]
    occl = next(c for c in cands if c["subtask_l2"] == "Occlusion")
    kite = next(c for c in cands if c["subtask_l2"] == "Small")
    rej = next(c for c in cands if c["subtask_l1"] == "Rejection")
    items = selection_items(cands)
    by = {it.key: it for it in items}
    assert by[rej["id"]].boxes == {"distractor": rej["distractor_bbox"]} and "made from" in by[rej["id"]].info["source"]
    assert by[kite["id"]].texts == {"description": kite["description"]} and by[kite["id"]].boxes["box"] == kite["bbox"]
    db_path = work / "review.sqlite"
    with ReviewDB(db_path, selection_form()) as db, ReviewServer(items, db, roots=image_roots(work)) as srv:
        # the page's own call: a fixed box is checked against the image size
        got = _post(srv.url + "api/answer", {"reviewer": "ann", "item": kite["id"],
                                             "values": {"decision": "edit", "box": [199, 99, 221, 116]}})
        assert got["ok"] and got["stored"]["box"] == "[199.0, 99.0, 221.0, 116.0]"
        with pytest.raises(urllib.error.HTTPError):
            _post(srv.url + "api/answer", {"reviewer": "ann", "item": kite["id"],
                                           "values": {"decision": "edit", "box": [0, 0, 401, 10]}})  # image is 400 wide
        db.record("bob", kite["id"], {"decision": "accept"})
        for r in ("ann", "bob"):
            db.record(r, flags[0]["id"], {"decision": "accept"})
            db.record(r, occl["id"], {"decision": "edit", "description": "The flag cut by the left edge."})
            db.record(r, flags[1]["id"], {"decision": "reject"})
        db.record("ann", flags[2]["id"], {"decision": "reject"})
        db.record("bob", flags[2]["id"], {"decision": "accept"})
        db.record("ann", rej["id"], {"decision": "edit", "subtask": "discriminative/appearance"})
        db.record("bob", rej["id"], {"decision": "accept"})
        answers = db.all_answers()
    kept, counts = apply_review(cands, answers)
    # kept: flags[0], occl (edited text), kite (fixed box), rej moved to Discriminative; flags[1] rejected by both,
    # flags[2] a 1-1 tie (majority: a tie rejects); 13 - 6 decided = 7 unreviewed
    assert counts == {"n_unreviewed": 7, "n_rejected": 2, "n_no_box": 0, "n_edited": 3, "n_kept": 4}
    k = {c["id"]: c for c in kept}
    assert k[occl["id"]]["description"] == "The flag cut by the left edge." and k[occl["id"]]["bbox"] == list(FLAGS[-1])
    assert k[kite["id"]]["bbox"] == [199, 99, 221, 116] and k[kite["id"]]["review"]["edited"] == ["box"]
    moved = k[rej["id"]]
    assert (moved["subtask_l1"], moved["subtask_l2"]) == ("Discriminative", "Appearance")
    assert moved["bbox"] == rej["distractor_bbox"] and moved["review"]["votes"] == {"accept": 1, "edit": 1, "reject": 0}
    assert len(apply_review(cands, answers, rule="any")[0]) == 5  # the tie is kept by 'any'

    out = tmp_path / "release"
    res = CliRunner().invoke(app, ["groundingme", "export", "--work", str(work), "--out", str(out)])
    assert res.exit_code == 0, res.output
    from lensbench.benchmarks.groundingme.data import load_groundingme

    samples = {s.id: s for s in load_groundingme(out)}
    assert set(samples) == set(k)
    assert samples[kite["id"]].bbox == (199.0, 99.0, 221.0, 116.0) and samples[kite["id"]].subtask_l2 == "Small"
    assert samples[rej["id"]].subtask_l1 == "Discriminative" and samples[rej["id"]].bbox is not None
    assert KITE == (200, 100, 220, 115)


def test_verification_figures_by_hand(tmp_path):
    runner = CliRunner()
    work = tmp_path / "verify"
    from lensbench.tools.groundingme.review_cli import prepare_verification

    # the golden fixture: Discriminative gm-01..04, gm-12; Rejection gm-09..11 -> a pool of 8
    items = prepare_verification(GM_FIXTURE, work, 8, 0)
    assert sorted(it.key for it in items) == ["gm-01", "gm-02", "gm-03", "gm-04", "gm-09", "gm-10", "gm-11", "gm-12"]
    assert all(not it.boxes and Path(it.images[0]).is_file() for it in items)  # no box gives the answer away
    assert prepare_verification(GM_FIXTURE, work, 8, 0)[0].key == items[0].key  # the sample is kept
    with pytest.raises(Exception, match="other settings"):
        prepare_verification(GM_FIXTURE, work, 5, 0)
    ann = {"gm-09": "not groundable", "gm-10": "not groundable", "gm-11": "groundable", "gm-01": "not groundable",
           "gm-02": "groundable", "gm-03": "groundable", "gm-04": "groundable", "gm-12": "groundable"}
    with ReviewDB(work / "review.sqlite", verification_form()) as db:
        for k, v in ann.items():
            db.record("ann", k, {"verdict": v})
            db.record("bob", k, {"verdict": "not groundable" if k in ("gm-09", "gm-10", "gm-11") else "groundable"})
    res = runner.invoke(app, ["groundingme", "verify-score", "--work", str(work), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    a, b, pooled = doc["reviewers"]["ann"], doc["reviewers"]["bob"], doc["reviewers"]["all"]
    # ann: TP 2 (gm-09, gm-10), FN 1 (gm-11), FP 1 (gm-01), TN 4 -> acc 6/8, P 2/3, R 2/3, F1 2/3
    assert (a["tp"], a["fp"], a["fn"], a["tn"]) == (2, 1, 1, 4)
    assert a["accuracy"] == pytest.approx(75.0) and a["precision"] == pytest.approx(200 / 3)
    assert a["recall"] == pytest.approx(200 / 3) and a["f1"] == pytest.approx(200 / 3)
    assert b["accuracy"] == 100.0 and b["f1"] == 100.0
    # pooled: TP 5, FP 1, FN 1, TN 9 of 16 -> acc 87.5, P = R = F1 = 5/6
    assert pooled["accuracy"] == pytest.approx(87.5) and pooled["f1"] == pytest.approx(500 / 6)
    # agreement: the two differ on gm-11 and gm-01 -> 6 of 8 items agree
    assert doc["agreement"]["verdict"]["percent"] == pytest.approx(75.0)
    md = runner.invoke(app, ["groundingme", "verify-score", "--work", str(work)]).output
    assert "paper (App. C)" in md and "91.00" in md and "88.24" in md


def test_paper_appc_figures_fit_one_confusion_matrix():
    from lensbench.tools.groundingme.verify_report import paper_appc

    p = paper_appc()
    # TP 45, FP 6, FN 3, TN 46 (worked out from the four published figures)
    truth = {i: i < 48 for i in range(100)}
    judged = {i: (i < 45) or (48 <= i < 54) for i in range(100)}
    s = binary_scores(truth, judged)
    assert (s["tp"], s["fp"], s["fn"], s["tn"]) == (45, 6, 3, 46)
    for k in ("accuracy", "precision", "recall", "f1"):
        assert round(s[k], 2) == p[k]
    assert verification_scores({"x": {0: {"verdict": "not groundable"}}}, {0: True})["x"]["tp"] == 1


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian package 'chromium' not installed")
def test_selection_page_in_headless_chromium(built, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    work, cands = built
    kite = next(c for c in cands if c["subtask_l2"] == "Small")
    items = selection_items([kite])
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        with ReviewDB(tmp_path / "r.sqlite", selection_form()) as db, \
                ReviewServer(items, db, roots=image_roots(work)) as srv:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(srv.url + "?reviewer=cy")
            page.wait_for_selector("#main:not([hidden])")
            assert "kite (1 in the image)" in page.inner_text("#object")
            assert page.input_value('textarea[data-field="description"]') == kite["description"]
            page.wait_for_selector('#overlay rect[data-box="box"]')
            # the subcategory first: a choice click re-renders the item and drops unsaved text / box edits
            page.click('button[data-field="subtask"][data-value="Limited/Small"]')
            page.wait_for_selector('button.sel[data-field="subtask"][data-value="Limited/Small"]')
            page.fill('textarea[data-field="description"]', "A small green kite near the centre.")
            for name, v in zip(("x1", "y1", "x2", "y2"), (190, 90, 230, 120)):  # the box typed, not dragged
                page.fill(f'input.coord[data-field="box"][title="{name}"]', str(v))
            page.click("#save")
            page.wait_for_selector('button.sel[data-field="decision"][data-value="edit"]')
            got = db.answers("cy")[kite["id"]]
            browser.close()
    assert got["decision"] == "edit" and got["description"] == "A small green kite near the centre."
    assert json.loads(got["box"]) == [190, 90, 230, 120]
    assert got["subtask"] == "Limited/Small"
