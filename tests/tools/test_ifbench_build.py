"""IF-Bench construction (Sec. 3.2) end to end on the fake OpenAI server with scripted replies: the
size filter's counts, the Fig. 14 prompt verbatim, the release-schema check, the letter balancing,
resume after kill -9, and the built folder evaluated by ``lensbench run if-bench``."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.benchmarks.ifbench.data import DIMENSIONS, load_questions
from lensbench.cli.main import app
from lensbench.testing.server import FakeOpenAIServer
from lensbench.tools.ifbench.generate import ReleaseQuestion, generation_template
from lensbench.tools.ifbench.release import balance_letters
from tests.tools import ifbench_build_fixture as fx

SEED_DOC = Path(__file__).resolve().parents[2].parent / "shared" / "seeds" / "IF-Bench.md"


def _build_args(imgs, ann, out, url, *extra):
    return ["ifbench", "build", "--images", str(imgs), "--annotations", str(ann), "--model", "openai:gen",
            "--base-url", url, "--out", str(out), "--no-progress", *extra]


def test_prompt_file_is_figure_14_of_the_paper():
    if not SEED_DOC.is_file():
        pytest.skip("paper text not found")
    lines = SEED_DOC.read_text(encoding="utf-8").split("\n")
    start = lines.index("### ## Task")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("Figure 14."))
    norm = (lambda ls: [re.sub(r"^[#\s]+", "", ln).rstrip().replace("\\_", "_") for ln in ls])
    paper = norm(lines[start:end])
    while paper and not paper[-1]:
        paper.pop()
    assert norm(generation_template().split("\n")) == paper


def test_build_end_to_end(tmp_path):
    imgs, ann = fx.make_pool(tmp_path)
    out = tmp_path / "built"
    with FakeOpenAIServer(fx.responder) as srv:
        r = CliRunner().invoke(app, _build_args(imgs, ann, out, srv.url))
        bodies = list(srv.bodies)
    assert r.exit_code == 0, r.output
    man = json.loads((out / "build.json").read_text())["report"]
    # filter counts: 6 files, 1 unreadable, 1 with a short side of 150 px, 4 kept and asked
    assert man["images"] == {"found": 6, "sampled": 6, "unreadable": 1, "too_small": 1, "kept": 4, "asked": 4}
    assert man["requests"] == 4 == len(bodies) and man["sent"] == 4
    # the prompt, verbatim: Fig. 14 with the dimension list, and the (Optional) paragraph only for a0
    body = generation_template()
    optional = next(p for p in body.split("\n\n") if p.startswith("(Optional)"))
    for b in bodies:
        i, dims = fx.image_index(b), fx.requested(b)
        assert len(set(dims)) == 4 and set(dims) <= set(DIMENSIONS)
        want = body.replace("<sampled_dimensin_list>", ", ".join(dims))
        if i == 0:
            assert "Target Localization" in dims
            want = want.replace("<target_position>", fx.TARGET_TEXT)
        else:
            want = want.replace("\n\n" + optional, "")
        assert fx.system_text(b) == want
        assert [m["role"] for m in b["messages"]] == ["system", "user"]
    # schema check: what the script made valid is kept, the rest refused by reason
    assert man["questions"] == fx.EXPECTED_VALID
    assert man["rejected"] == fx.EXPECTED_REJECTED
    rejected = [json.loads(x) for x in (out / "rejected.jsonl").read_text().splitlines()]
    assert Counter(x["reason"] for x in rejected) == Counter(fx.EXPECTED_REJECTED)
    doc = json.loads((out / "if_bench.json").read_text(encoding="utf-8"))
    recs = [rec for dim in doc for rec in doc[dim]]
    assert len(recs) == fx.EXPECTED_VALID and list(doc) == [d for d in DIMENSIONS if d in doc]
    for rec in recs:
        q = ReleaseQuestion.model_validate(rec["question"]).release()
        assert q == rec["question"]  # release key order, nothing else
        tag = q["en_question"][len("Question "):-1]
        assert q["en_options"][q["answer"]] == f"right {tag}"  # the right text moved with its letter
        assert q["cn_options"][q["answer"]] == f"选项 right {tag}"  # the same permutation in Chinese
        assert (out / "infrared_imgs" / rec["dst_thermal_path"]).is_file()
        assert ("pos_info" in rec) == tag.startswith("a0")
    # balanced: the script put 4 answers on A, 3 on B, 1 on C, 1 on D; now no letter has 2 more than another
    counts = Counter(rec["question"]["answer"] for rec in recs)
    assert max(counts.values()) - min(counts[L] for L in "ABCD") <= 1 and sum(counts.values()) == 9
    assert man["letters"] == {L: counts[L] for L in "ABCD"}
    assert len(load_questions(out)) == fx.EXPECTED_VALID  # the benchmark's own loader reads it
    # the built folder evaluated directly: a model always answering A gets each question right in
    # exactly one of the 4 rotations -> 25 in every dimension and language
    with FakeOpenAIServer(lambda body: "A") as srv:
        r = CliRunner().invoke(app, ["run", "if-bench", "--data-dir", str(out), "--model", "openai:m",
                                     "--base-url", srv.url, "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "run" / "result.json").read_text())
    assert res["counts"]["n"] == fx.EXPECTED_VALID * 8
    assert res["counts"]["n_questions"] == fx.EXPECTED_VALID and res["counts"]["n_correct"] == fx.EXPECTED_VALID * 2
    score = res["metrics"]["Score"]
    assert score["Avg"] == pytest.approx(25.0)
    assert all(v == pytest.approx(25.0) for k, v in score.items() if v is not None)
    assert res["metrics"]["Strict-en"]["Avg"] == 0.0


def test_balancing_within_each_dimension_and_deterministic():
    by_dim = {d: [{"question": {"dimension": d, "answer": "A", "en_question": f"{d}{i}", "cn_question": "q",
                                "en_options": {L: f"{L}{i}" for L in "ABCD"},
                                "cn_options": {L: f"c{L}{i}" for L in "ABCD"}}} for i in range(n)]
              for d, n in zip(DIMENSIONS, (7, 5, 1, 9))}
    a = balance_letters(by_dim, seed=3)
    assert a == balance_letters(by_dim, seed=3) and a != balance_letters(by_dim, seed=4)
    total = Counter()
    for d, recs in a.items():
        c = Counter(r["question"]["answer"] for r in recs)
        total += c
        assert max(c.values()) - min(c.get(L, 0) for L in "ABCD") <= 1, (d, c)
        for old, new in zip(by_dim[d], recs):
            q, o = new["question"], old["question"]
            assert q["en_options"][q["answer"]] == o["en_options"]["A"] and q["cn_options"][q["answer"]] == \
                o["cn_options"]["A"]
            assert sorted(q["en_options"].values()) == sorted(o["en_options"].values())
    assert max(total.values()) - min(total.values()) <= 1 and sum(total.values()) == 22


def _rows(store: Path) -> int:
    if not store.is_file():
        return 0
    with sqlite3.connect(store) as c:
        try:
            return c.execute("SELECT COUNT(*) FROM responses WHERE status='ok'").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


def test_resume_after_kill_buys_only_what_is_missing(tmp_path):
    imgs, ann = fx.make_pool(tmp_path)
    out = tmp_path / "built"
    store = out / "generation" / "responses.sqlite"
    cmd = [sys.executable, "-m", "lensbench"]
    with FakeOpenAIServer(fx.responder, latency=0.4) as srv:
        first = subprocess.Popen([*cmd, *_build_args(imgs, ann, out, srv.url, "--concurrency", "1")],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.time() + 60
            while _rows(store) < 2 and time.time() < deadline and first.poll() is None:
                time.sleep(0.05)
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait()
    stored = _rows(store)
    assert 2 <= stored < 4, "the kill came too late to test a resume"
    with FakeOpenAIServer(fx.responder) as srv:
        r = subprocess.run([*cmd, *_build_args(imgs, ann, out, srv.url)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert sum(srv.answered.values()) == 4 - stored
    with FakeOpenAIServer(fx.responder) as srv:  # the same build without a kill gives the same release
        r = CliRunner().invoke(app, _build_args(imgs, ann, tmp_path / "clean", srv.url))
        assert r.exit_code == 0, r.output
    assert (out / "if_bench.json").read_bytes() == (tmp_path / "clean" / "if_bench.json").read_bytes()


def test_bad_input_is_refused_before_any_request(tmp_path):
    imgs, ann = fx.make_pool(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"image": "dsA/a0.png", "targets": [{"description": "x", "box": [50, 10, 40, 20]}]}]))
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "if_bench.json").write_text("{}")
    with FakeOpenAIServer(fx.responder) as srv:
        for args, msg in ((_build_args(imgs, bad, tmp_path / "o1", srv.url), "box"),
                          (_build_args(tmp_path / "none", ann, tmp_path / "o2", srv.url), "not a folder"),
                          (_build_args(imgs, ann, foreign, srv.url), "never overwritten")):
            r = CliRunner().invoke(app, args)
            assert r.exit_code != 0 and msg in r.output, r.output
        assert not srv.bodies
    assert (foreign / "if_bench.json").read_text() == "{}"


def test_release_schema_accepts_every_question_of_the_real_release(shared_data):
    path = shared_data / "IF-Bench" / "evaluate" / "if_bench" / "if_bench.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    doc = json.loads(path.read_text(encoding="utf-8"))
    qs = [rec["question"] for recs in doc.values() for rec in recs]
    assert len(qs) == 680
    for q in qs:  # the checker refuses nothing the authors released, and keeps every field as released
        got = ReleaseQuestion.model_validate(q).release()
        assert got == {k: (v if not isinstance(v, str) else v.strip()) for k, v in q.items() if k != "original_answer"}


def test_per_dataset_sampling_is_seeded_and_counted(tmp_path):
    from lensbench.tools.ifbench.collect import collect_images

    imgs, ann = fx.make_pool(tmp_path)
    a = collect_images(imgs, per_dataset=2, seed=5, annotations=ann)
    b = collect_images(imgs, per_dataset=2, seed=5, annotations=ann)
    assert (a.found, a.sampled) == (6, 4) and a.kept + a.too_small + a.unreadable == 4
    assert [i.key for i in a.images] == [i.key for i in b.images]
    assert all(i.dataset in ("dsA", "dsB") and i.key.startswith(i.dataset + "/") for i in a.images)
    full = collect_images(imgs, annotations=ann)
    (a0,) = [i for i in full.images if i.key == "dsA/a0.png"]
    t = a0.targets[0]  # box [40, 60, 120, 140] of 320 x 240
    assert (t.cx, t.cy, t.w, t.h) == pytest.approx((80 / 320, 100 / 240, 80 / 320, 80 / 240))
