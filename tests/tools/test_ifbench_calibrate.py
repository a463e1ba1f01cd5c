"""IF-Bench two-stage human calibration on the review page: stage 1 (two reviewers, each in their
own answers file, one of them through the page's HTTP API), stage 2 (an expert) over what stage 1
kept, ``ifbench finalize`` (outcome, invalid edits, agreement figures by hand, letters balanced
again) and the final folder evaluated by ``lensbench run if-bench``; the page itself in Chromium."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.core.answers import AnswerStore
from lensbench.testing.server import FakeOpenAIServer
from lensbench.tools.ifbench.calibrate import CALIBRATION_FORM, _texts, qid_records, review_items
from lensbench.tools.review import ReviewDB, ReviewServer, cohen_kappa
from tests.tools import ifbench_build_fixture as fx

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture()
def built(tmp_path):
    imgs, ann = fx.make_pool(tmp_path)
    out = tmp_path / "built"
    with FakeOpenAIServer(fx.responder) as srv:
        r = CliRunner().invoke(app, ["ifbench", "build", "--images", str(imgs), "--annotations", str(ann), "--model",
                                     "openai:gen", "--base-url", srv.url, "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    recs = qid_records(json.loads((out / "if_bench.json").read_text(encoding="utf-8")))
    assert len(recs) == 9
    return out, recs


def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_two_stages_then_finalize(built, tmp_path):
    out, recs = built
    q = list(recs)  # question ids, e.g. IT-000
    items = review_items(recs, out / "infrared_imgs")
    assert all(it.images for it in items)
    t1 = _texts(recs[q[1]]["question"])
    new_letter = next(L for L in "ABCD" if L != t1["answer"])
    edit1 = {**t1, "en_question": "Edited question?", "answer": new_letter}
    # stage 1, reviewer ann through the page's API (as the page posts: the decision and every text)
    with ReviewDB(tmp_path / "s1_ann.sqlite", CALIBRATION_FORM) as db, \
            ReviewServer(items, db, roots=[out / "infrared_imgs"]) as srv:
        api = srv.url + "api/answer"
        for k, dec in ((0, "accept"), (2, "reject"), (3, "accept"), (5, "accept"), (6, "accept"), (7, "accept"),
                       (8, "accept")):
            assert _post(api, {"reviewer": "ann", "item": q[k], "values": {"decision": dec}}) == 200
        assert _post(api, {"reviewer": "ann", "item": q[1], "values": {"decision": "edit", **edit1}}) == 200
        bad = {"decision": "edit", **_texts(recs[q[4]]["question"]), "answer": "Z"}
        assert _post(api, {"reviewer": "ann", "item": q[4], "values": bad}) == 400  # refused on the page
        assert _post(api, {"reviewer": "ann", "item": q[4], "values": {"decision": "edit", "en_question": " "}}) == 400
    with AnswerStore(tmp_path / "s1_ann.sqlite") as raw:  # an answers file written elsewhere: checked at finalize
        raw.write("ann", q[4], {"decision": "edit", **bad})
    with ReviewDB(tmp_path / "s1_bob.sqlite", CALIBRATION_FORM) as db:
        for k, dec in ((0, "accept"), (1, "accept"), (2, "reject"), (3, "reject"), (4, "accept")):
            db.record("bob", q[k], {"decision": dec})
    # stage 2: the expert sees what stage 1 kept, with ann's edit
    r = CliRunner().invoke(app, ["ifbench", "finalize", "--data-dir", str(out), "--stage",
                                 f"{tmp_path / 's1_ann.sqlite'},{tmp_path / 's1_bob.sqlite'}",
                                 "--out", str(tmp_path / "after1"), "--format", "json"])
    assert r.exit_code == 0, r.output
    s1 = json.loads(r.output)["stages"][0]
    assert (s1["decided"], s1["kept"], s1["edited"], s1["rejected"], s1["undecided"]) == (9, 6, 1, 2, 0)
    assert list(s1["invalid_edits"]) == [q[4]] and "answer" in s1["invalid_edits"][q[4]]
    ann = ["accept", "edit", "reject", "accept", "edit"]
    bob = ["accept", "accept", "reject", "reject", "accept"]
    a = s1["agreement"]
    assert a["n_items"] == 5 and a["percent"] == pytest.approx(40.0)
    assert a["cohen_kappa"] == pytest.approx(cohen_kappa(ann, bob))
    assert a["cohen_kappa"] == pytest.approx((2 / 5 - 8 / 25) / (1 - 8 / 25))
    from lensbench.tools.ifbench.calibrate import after_stages
    from lensbench.tools.review import merged_answers

    stage1 = merged_answers([tmp_path / "s1_ann.sqlite", tmp_path / "s1_bob.sqlite"])
    kept1, _ = after_stages(out, [stage1])
    assert list(kept1) == [q[k] for k in (0, 1, 5, 6, 7, 8)]
    assert kept1[q[1]]["question"]["en_question"] == "Edited question?"
    assert kept1[q[1]]["question"]["answer"] == new_letter
    with ReviewDB(tmp_path / "s2.sqlite", CALIBRATION_FORM) as db:
        items2 = {it.key: it for it in review_items(kept1, out / "infrared_imgs")}
        assert items2[q[1]].texts["en_question"] == "Edited question?"
        for k, dec in ((0, "accept"), (1, "accept"), (5, "reject"), (7, "accept")):
            db.record("eve", q[k], {"decision": dec})
        db.record("eve", q[6], {"decision": "edit", **_texts(kept1[q[6]]["question"]), "cn_question": "改过的问题？"})
    final = tmp_path / "final"
    r = CliRunner().invoke(app, ["ifbench", "finalize", "--data-dir", str(out), "--stage",
                                 f"{tmp_path / 's1_ann.sqlite'},{tmp_path / 's1_bob.sqlite'}", "--stage",
                                 str(tmp_path / "s2.sqlite"), "--out", str(final)])
    assert r.exit_code == 0, r.output
    assert "stage 2: 1 reviewer(s); 5 decided, 4 kept (1 edited), 1 rejected, 1 undecided" in r.output
    doc = json.loads((final / "if_bench.json").read_text(encoding="utf-8"))
    got = [rec["question"] for d in doc for rec in doc[d]]
    assert len(got) == 4 and sorted(g["answer"] for g in got) == ["A", "B", "C", "D"]
    e1 = next(g for g in got if g["en_question"] == "Edited question?")
    assert e1["en_options"][e1["answer"]] == recs[q[1]]["question"]["en_options"][new_letter]
    assert e1["cn_options"][e1["answer"]] == recs[q[1]]["question"]["cn_options"][new_letter]
    assert sum(g["cn_question"] == "改过的问题？" for g in got) == 1
    r = CliRunner().invoke(app, ["ifbench", "finalize", "--data-dir", str(out), "--stage", str(tmp_path / "s2.sqlite"),
                                 "--out", str(final)])
    assert r.exit_code != 0 and "exists" in r.output  # never written over
    with FakeOpenAIServer(lambda body: "A") as srv:
        r = CliRunner().invoke(app, ["run", "if-bench", "--data-dir", str(final), "--model", "openai:m", "--base-url",
                                     srv.url, "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "run" / "result.json").read_text())["counts"]["n_questions"] == 4


def test_review_command_prints_the_token_url(built, monkeypatch, tmp_path):
    import aiohttp.web

    out, _ = built
    seen = []
    monkeypatch.setattr(aiohttp.web, "run_app", lambda app_, **kw: seen.append(kw))
    r = CliRunner().invoke(app, ["ifbench", "review", "--data-dir", str(out), "--db", str(tmp_path / "s.sqlite"),
                                 "--port", "8766"])
    assert r.exit_code == 0, r.output
    assert "9 items" in r.output and "http://127.0.0.1:8766/t/" in r.output and seen[0]["port"] == 8766
    recs = qid_records(json.loads((out / "if_bench.json").read_text(encoding="utf-8")))
    with ReviewDB(tmp_path / "s1.sqlite", CALIBRATION_FORM) as db:  # stage 1 rejects two questions
        for k, qid in enumerate(recs):
            db.record("ann", qid, {"decision": "reject" if k < 2 else "accept"})
    r = CliRunner().invoke(app, ["ifbench", "review", "--data-dir", str(out), "--db", str(tmp_path / "s2.sqlite"),
                                 "--after", str(tmp_path / "s1.sqlite")])
    assert r.exit_code == 0 and "7 items" in r.output, r.output


@pytest.mark.skipif(CHROMIUM is None, reason="Debian package 'chromium' not installed")
def test_calibration_page_edit_in_chromium(built, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    out, recs = built
    items = review_items(recs, out / "infrared_imgs")
    with ReviewDB(tmp_path / "s.sqlite", CALIBRATION_FORM) as db, ReviewServer(items, db, roots=[out / "infrared_imgs"]) as srv, \
            sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(srv.url + "?reviewer=ann")
        page.wait_for_selector("#main:not([hidden])")
        first = items[0]
        assert page.inner_text("#dimension") == first.info["dimension"]
        assert page.input_value('textarea[data-field="cn_question"]') == first.texts["cn_question"]
        page.fill('textarea[data-field="en_question"]', "Which region is warmest?")
        page.fill('textarea[data-field="answer"]', "Q")
        page.click("#save")
        page.wait_for_function("document.querySelector('#status').className === 'err'")
        assert "A-D" in page.inner_text("#status") and db.all_answers() == {}
        page.fill('textarea[data-field="answer"]', "c")
        page.click("#save")
        page.wait_for_selector('button.sel[data-field="decision"][data-value="edit"]')
        got = db.answers("ann")[first.key]
        assert got["decision"] == "edit" and got["en_question"] == "Which region is warmest?" and got["answer"] == "c"
        assert got["cn_question"] == first.texts["cn_question"]
        browser.close()
