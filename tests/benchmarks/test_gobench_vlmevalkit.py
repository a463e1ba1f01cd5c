"""GOBench: VLMEvalKit's GOBench.tsv as human ground truth, and ``--parser vlmevalkit`` against
``--parser paper`` on the same replies. Expected figures are worked out by hand in the comments
(VLMEvalKit's rules: vlmeval/dataset/gobench.py, GOBenchDataset.evaluate / parse_prediction /
parse_ground_truth)."""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from lensbench.benchmarks.gobench.parse_vlmevalkit import parse_reply_vlmevalkit
from lensbench.cli.main import app

Q = "\n".join(f"{i}. Reality question {i}?" for i in range(1, 6))
CATS = ("direct_light_images", "reflect_light_images")
# (record index, GT answer cell, reply); records are scenario 1 (.1-.3) of each category
ROWS = [
    # r1: the stated total (4) differs from the listed answers (Y Y Y N N = 3)
    ("direct_light_images_1.1", "Reality Assessment Score: 4.0\nAesthetics Rating: 3\nInstruction Consistency Rating: 4",
     "1. Yes\n2. Yes\n3. Yes\n4. No\n5. No\nTotal Score: 4\nAesthetics Rating: 3\nInstruction Consistency Rating: 4"),
    # r2: a rating written in words
    ("direct_light_images_1.2", "Reality Assessment Score: 2.5\nAesthetics Rating: 3\nInstruction Consistency Rating: 2",
     "1. Yes\n2. No\n3. Cannot Determine\n4. Yes\n5. No\nTotal Score: 2.5\n"
     "Aesthetics Rating: I would rate it a 3\nInstruction Consistency Rating: 2"),
    # r3: a 0 rating
    ("direct_light_images_1.3", "Reality Assessment Score: 3\nAesthetics Rating: 2.25\nInstruction Consistency Rating: 1",
     "1. No\n2. Yes\n3. Yes\n4. Yes\n5. No\nTotal Score: 3\nAesthetics Rating: 2\nInstruction Consistency Rating: 0"),
    # r4: answers without a total line
    ("reflect_light_images_1.1", "Reality Assessment Score: 4.5\nAesthetics Rating: 4.4\nInstruction Consistency Rating: 3",
     "1. Yes\n2. Yes\n3. Yes\n4. Yes\n5. Cannot Determine\nAesthetics Rating: 4\nInstruction Consistency Rating: 3"),
    # r5: a thinking trace that states other numbers first
    ("reflect_light_images_1.2", "Reality Assessment Score: 2\nAesthetics Rating: 2\nInstruction Consistency Rating: 5",
     "<think>Maybe Total Score: 1 and Aesthetics Rating: 5</think>\n1. Yes\n2. No\n3. No\n4. Yes\n5. No\n"
     "Total Score: 2\nAesthetics Rating: 2\nInstruction Consistency Rating: 5"),
    # r6: a ground-truth row without its consistency field
    ("reflect_light_images_1.3", "Reality Assessment Score: 3.25\nAesthetics Rating: 4",
     "1. Yes\n2. Yes\n3. Yes\n4. No\n5. Cannot Determine\nTotal Score: 3.5\nAesthetics Rating: 4\n"
     "Instruction Consistency Rating: 4"),
]


def _png(colour) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (24, 24), colour).save(buf, "PNG")
    return buf.getvalue()


@pytest.fixture()
def release(tmp_path) -> dict[str, Path]:
    data = tmp_path / "data"
    recs, tsv_rows, replies = [], [], []
    for k, (index, gt, reply) in enumerate(ROWS):
        cat, num = index.rsplit("_", 1)
        img = f"{cat}/{num}.png"
        prompt = f"Scene {k}: a lamp and a mirror in {cat}."
        recs.append({"index": index, "category": cat, "image": img, "title": f"t{k}", "prompt": prompt,
                     "Questions_reality": Q, "Question_aesthetics": "a", "Question_Instruction_consistency": "c"})
        (data / cat).mkdir(parents=True, exist_ok=True)
        png = _png((30 * k, 90, 120))
        (data / img).write_bytes(png)
        # VLMEvalKit's layout: numbered rows (1-based here), base64 image, question cell with the prompt
        tsv_rows.append({"index": str(k + 1), "image": base64.b64encode(png).decode(),
                         "question": f"Prompt: {prompt}\nReality questions:\n{Q}", "answer": gt})
        replies.append({"request_id": index, "text": reply})
    (data / "data_total.json").write_text(json.dumps(recs))
    tsv = tmp_path / "GOBench.tsv"
    with tsv.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["index", "image", "question", "answer"], delimiter="\t")
        w.writeheader()
        w.writerows(tsv_rows)
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in replies))
    return {"data": data, "tsv": tsv, "replay": replay, "root": tmp_path}


def _run(release, parser: str) -> tuple[dict, dict, dict]:
    out = release["root"] / f"run_{parser}"
    res = CliRunner().invoke(app, ["run", "gobench", "--data-dir", str(release["data"]), "--model",
                                   f"replay:{release['replay']}", "--out", str(out), "--human-ratings",
                                   str(release["tsv"]), "--parser", parser, "--no-progress"])
    assert res.exit_code == 0, res.output
    result = json.loads((out / "result.json").read_text())
    recs = {json.loads(x)["sample_id"]: json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()}
    return result["metrics"], result["counts"], recs


def test_vlmevalkit_parser_reproduces_vlmevalkit(release):
    m, c, recs = _run(release, "vlmevalkit")
    # per image (auth, aes, fid) SPS, max(0, (0.5 - |pred - gt|) / 0.5):
    # r1 total 4 vs 4 -> 1; 3 vs 3 -> 1; 4 vs 4 -> 1
    # r2 2.5 vs 2.5 -> 1; "I would rate it a 3" = 3 vs 3 -> 1; 2 vs 2 -> 1
    # r3 3 vs 3 -> 1; 2 vs 2.25 -> 0.5; 0 vs 1 -> 0
    # r4 no "Total Score" line -> unparseable, excluded
    # r5 first numbers are inside <think>: total 1 vs 2 -> 0; aesthetics 5 vs 2 -> 0; 5 vs 5 -> 1
    # r6 parsed, but its ground truth lacks a field -> excluded from every dimension
    assert m["SPS"]["Authenticity"] == pytest.approx(100 * 3 / 4)
    assert m["SPS"]["Aesthetics"] == pytest.approx(100 * 2.5 / 4)
    assert m["SPS"]["Fidelity"] == pytest.approx(100 * 3 / 4)
    assert m["SPS"]["Overall"] == pytest.approx((75 + 62.5 + 75) / 3)  # VLMEvalKit's Overall
    assert c["n_unparseable"] == 1 and c["n"] == 5 and c["n_with_gt"] == 4 and c["n_gt_incomplete"] == 1
    assert c["n_error"] == 0
    assert recs["reflect_light_images_1.1"]["outcome"] == "unparseable"
    r3 = recs["direct_light_images_1.3"]
    assert r3["outcome"] == "scored" and r3["answer"]["fidelity"] == 0.0 and r3["scores"]["sps_fidelity"] == 0.0
    assert recs["direct_light_images_1.1"]["answer"]["authenticity"] == 4.0
    r6 = recs["reflect_light_images_1.3"]
    assert r6["outcome"] == "scored" and not any(k.startswith("sps_") for k in r6["scores"])
    assert r6["target"]["fidelity"] is None and r6["target"]["authenticity"] == 3.25


def test_paper_parser_on_the_same_replies(release):
    m, c, recs = _run(release, "paper")
    # r1 answers Y Y Y N N = 3 vs 4 -> 0; 3 vs 3 -> 1; 4 vs 4 -> 1
    # r2 rating in words -> unparseable;  r3 rating 0 is outside 1-5 -> unparseable
    # r4 answers 1+1+1+1+0.5 = 4.5 vs 4.5 -> 1; 4 vs 4.4 -> 1 - 0.4/0.5 = 0.2; 3 vs 3 -> 1
    # r5 <think> dropped: answers 1+0+0+1+0 = 2 vs 2 -> 1; 2 vs 2 -> 1; 5 vs 5 -> 1
    # r6 answers 1+1+1+0+0.5 = 3.5 vs 3.25 -> 0.5; 4 vs 4 -> 1; no human fidelity -> no SPS
    assert m["SPS"]["Authenticity"] == pytest.approx(100 * (0 + 1 + 1 + 0.5) / 4)
    assert m["SPS"]["Aesthetics"] == pytest.approx(100 * (1 + 0.2 + 1 + 1) / 4)
    assert m["SPS"]["Fidelity"] == pytest.approx(100 * 3 / 3)
    assert "Overall" not in m["SPS"]  # the paper's Table 3 has no Overall
    assert c["n_unparseable"] == 2 and c["n"] == 4 and c["n_with_gt"] == 4 and "n_gt_incomplete" not in c
    assert recs["direct_light_images_1.1"]["answer"]["authenticity"] == 3.0
    assert recs["direct_light_images_1.1"]["extra"]["parse_method"] == "regex"


def test_summary_tables_from_gobench_tsv(release, tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["gobench", "summary", "--ratings", str(release["tsv"])])
    assert res.exit_code == 2 and "--data-dir" in res.output  # numbered rows need data_total.json
    res = runner.invoke(app, ["gobench", "summary", "--ratings", str(release["tsv"]), "--data-dir", str(release["data"]),
                              "--generator-map", "1=G1,2=G2,3=G3", "--format", "json"])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)["humans: GOBench.tsv"]
    assert s["n_images"] == 6
    t2 = s["table2"]
    # variant .1 = r1, r4; .2 = r2, r5; .3 = r3, r6 (r6 has no fidelity)
    assert t2["G1"]["Authenticity"] == pytest.approx((4.0 + 4.5) / 2) and t2["G1"]["n"] == 2
    assert t2["G2"]["Aesthetics"] == pytest.approx((3 + 2) / 2)
    assert t2["G3"]["Fidelity"] == pytest.approx(1.0) and t2["G3"]["Authenticity"] == pytest.approx((3 + 3.25) / 2)
    # Table 1: Pearson/Spearman between per-image human means, by the textbook formulas
    auth = [4.0, 2.5, 3.0, 4.5, 2.0, 3.25]
    aes = [3.0, 3.0, 2.25, 4.4, 2.0, 4.0]

    def pearson(x, y):
        mx, my = sum(x) / len(x), sum(y) / len(y)
        num = sum((a - mx) * (b - my) for a, b in zip(x, y))
        return num / (sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y)) ** 0.5

    def ranks(v):  # average ranks (ties share)
        order = sorted(v)
        return [sum(i + 1 for i, w in enumerate(order) if w == x) / order.count(x) for x in v]

    t1 = s["table1"]["Aesthetics vs Authenticity"]
    assert t1["n"] == 6
    assert t1["PLCC"] == pytest.approx(pearson(aes, auth))
    assert t1["SRCC"] == pytest.approx(pearson(ranks(aes), ranks(auth)))
    assert s["table1"]["Authenticity vs Fidelity"]["n"] == 5  # r6 has no fidelity


def test_summary_refuses_a_tsv_without_human_scores(tmp_path):
    tsv = tmp_path / "GOBench.tsv"
    tsv.write_text("index\timage\tquestion\tanswer\ndirect_light_images_1.1\t\tq\tno scores here\n")
    res = CliRunner().invoke(app, ["gobench", "summary", "--ratings", str(tsv)])
    assert res.exit_code == 2 and "human score" in res.output


@pytest.mark.parametrize("reply, expect", [
    ("Total Score for Reality Assessment: **3.5**\nAesthetics Rating: 4/5\nInstruction Consistency Rating - 2",
     (3.5, 4.0, 2.0)),
    ("Total Score: 4\nAesthetics Rating:\n\n**5**\nInstruction Consistency Rating: 7", (4.0, 5.0, 7.0)),  # no range check
    ("Total Score: 4...\nAesthetics Rating: 4\nInstruction Consistency Rating: 3", None),  # float('4...') fails the row
    ("Failed to obtain answer. Total Score: 4\nAesthetics Rating: 4\nInstruction Consistency Rating: 3", None),
    ('{"realityAnswers_Eval": ["Yes","Yes","Yes","Yes","Yes"], "aestheticsRating_Eval": 4, '
     '"consistencyRating_Eval": 3}', None),  # the paper's JSON has none of VLMEvalKit's lines
    (None, None),
])
def test_parse_reply_vlmevalkit_cases(reply, expect):
    pr = parse_reply_vlmevalkit(reply)
    if expect is None:
        assert not pr.complete and pr.problems
    else:
        assert pr.complete and (pr.authenticity, pr.aesthetics, pr.fidelity) == expect
        assert pr.answers == [None] * 5 and pr.method == "vlmevalkit"
