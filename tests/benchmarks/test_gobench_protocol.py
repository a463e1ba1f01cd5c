"""GOBench understanding: real records and images, the critic prompt, reply parsing, scores, SPS,
ground-truth files, and a run end to end through the CLI, engine and HTTP backend."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.benchmarks.gobench.benchmark import GOBench
from lensbench.benchmarks.gobench.humans import ground_truth, load_human_gt, read_rating_rows
from lensbench.benchmarks.gobench.parse_paper import normalize_answer, parse_reply
from lensbench.benchmarks.gobench.prompts import CriticAnswerSpace, critic_prompt
from lensbench.benchmarks.gobench.load import load_records
from lensbench.benchmarks.gobench.records import split_questions
from lensbench.benchmarks.gobench.sps import authenticity_score, sps
from lensbench.cli.main import app
from lensbench.core.errors import DataError
from lensbench.scoring.metrics import correlation
from lensbench.testing.server import FakeOpenAIServer


@pytest.fixture(scope="module")
def gob_data(shared_data) -> Path:
    p = shared_data / "GOBench" / "data"
    if not (p / "data_total.json").is_file():
        pytest.skip(f"GOBench data not found at {p}")
    return p


# --------------------------------------------------------------------------- real data
def test_real_records(gob_data):
    recs = load_records(gob_data / "data_total.json")
    raw = json.loads((gob_data / "data_total.json").read_text())
    assert len(recs) == len(raw) == 999
    assert Counter(r.category for r in recs) == Counter(r["category"] for r in raw)
    assert Counter(r.category for r in recs)["reflect_light_images"] == 357
    assert all(len(r.questions) == 5 and not r.questions[0][0].isdigit() for r in recs)
    assert len({r.scenario for r in recs}) == 333
    # images present in the release folders that belong to a record
    on_disk = {str(p.relative_to(gob_data)) for p in gob_data.glob("*_images/*.png")}
    assert len(on_disk) == 46
    with_img = {r.image for r in recs if r.image_path}
    assert with_img == on_disk & {r["image"] for r in raw}
    assert len(with_img) == 45  # direct_light_images/1.4.png is not a record
    r0 = recs[0]
    assert r0.index == "direct_light_images_1.1" and r0.scenario == "direct_light_images/1" and r0.variant == "1"
    assert r0.questions[0] == "Is there an explicit or implied light source, and is its position reasonable?"


def test_benchmark_load_skips_and_errors(gob_data):
    b = GOBench()
    recs = b.load(gob_data)
    assert len(recs) == 45 and all(Path(r.image_path).is_file() for r in recs)
    assert recs.counts["n_images_missing"] == 954 and recs.counts["n_records_total"] == 999
    with pytest.raises(DataError, match=r"954 of 999 records lack media.*--skip-missing"):
        GOBench(GOBench.Options(skip_missing=False)).load(gob_data)
    only = GOBench(GOBench.Options(categories="refracted_light_images")).load(gob_data)
    assert len(only) == 15 and {r.category for r in only} == {"refracted_light_images"}


def test_critic_prompt_is_the_official_text(gob_data):
    r = load_records(gob_data / "data_total.json")[500]
    text = critic_prompt(r.prompt, r.questions, "my-model")
    assert text.startswith("You are an expert image critic and AI model evaluator.\n")
    assert f'English Prompt: "{r.prompt}"\n\nReality Questions to Answer' in text
    for i, q in enumerate(r.questions, 1):
        assert f'  {i}. Q_EN: "{q}"\n' in text
    assert '"model_used_for_eval": "my-model"' in text and "<" + "ENGLISH_PROMPT>" not in text
    assert text.endswith("starting with { and ending with }.\n")
    req = GOBench().expand([r.__class__(**{**r.__dict__, "image_path": str(next(gob_data.glob("*/1.1.png")))})],
                           model_name="m")[0]
    parts = req.messages[0].parts
    assert parts[0].type == "text" and parts[1].type == "image"  # official order: text, then image


# --------------------------------------------------------------------------- scores
def test_sps_hand_cases():
    assert sps(3.0, 3.0) == 1.0
    assert sps(3.25, 3.0) == pytest.approx(0.5)
    assert sps(2.75, 3.0) == pytest.approx(0.5)
    assert sps(3.5, 3.0) == 0.0
    assert sps(3.75, 3.0) == 0.0
    assert sps(4, 13 / 3) == pytest.approx(1 - (1 / 3) / 0.5)
    assert sps(2.0, 3.0, delta_max=1.0) == 0.0 and sps(2.5, 3.0, delta_max=1.0) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        sps(1, 1, delta_max=0)


def test_authenticity_scoring():
    assert authenticity_score(["Yes", "No", "Cannot determine", "Yes", "Cannot determine"]) == 3.0
    assert authenticity_score(["Yes"] * 5) == 5.0 and authenticity_score(["No"] * 5) == 0.0
    assert authenticity_score(["Cannot determine"] * 5) == 2.5
    for raw, want in [("yes", "Yes"), ("No.", "No"), ("**Cannot Determine**", "Cannot determine"),
                      ("Cannot be determined", "Cannot determine"), ("Can't determine", "Cannot determine"),
                      (True, "Yes"), ("Nope, maybe", None), ("Maybe", None), ("", None), (3, None)]:
        assert normalize_answer(raw) == want, raw


def test_split_questions():
    assert split_questions("1. Is it? Yes.\n\n2. Is 3. ok?\n 3.5 cm long?") == ("Is it? Yes.", "Is 3. ok?", "3.5 cm long?")


# --------------------------------------------------------------------------- parsing
MESSY = [
    # (reply, answers, aesthetics, fidelity, method)
    ('{"realityAnswers_Eval": ["Yes", "No", "Cannot Determine", "Yes", "Yes"], "aestheticsRating_Eval": 4, '
     '"consistencyRating_Eval": 3, "reasoning_Eval": "Aesthetics 5 would be too high", "model_used_for_eval": "x"}',
     ["Yes", "No", "Cannot determine", "Yes", "Yes"], 4, 3, "json"),
    ('<think>the shadow {is} wrong</think>\n```json\n{\n "realityAnswers_Eval": ["yes","no","no","no","yes"],\n'
     ' "aestheticsRating_Eval": 5,\n "consistencyRating_Eval": 2,\n}\n```', ["Yes", "No", "No", "No", "Yes"], 5, 2,
     "json-repaired"),
    ("Here you go: {'realityAnswers_Eval': ['Yes', 'Yes', 'Yes', 'No', 'Cannot determine'], "
     "'aestheticsRating_Eval': 3, 'consistencyRating_Eval': 4}", ["Yes", "Yes", "Yes", "No", "Cannot determine"], 3, 4,
     "json-repaired"),
    ("\u201crealityAnswers_Eval\u201d: [\u201cYes\u201d, \u201cNo\u201d, \u201cYes\u201d, \u201cNo\u201d, \u201cYes\u201d]"
     " and Aesthetics Rating: 4/5, Instruction Consistency Rating: **2**", ["Yes", "No", "Yes", "No", "Yes"], 4, 2, "regex"),
    ("**Reality Assessment**\n1. Is the light plausible? **Yes**\n2. Shadow direction: No\nQ3: Cannot Determine\n"
     "4. Yes\n5) No\n\n**Aesthetics Rating:** 3\n**Instruction Consistency Rating:** 5",
     ["Yes", "No", "Cannot determine", "Yes", "No"], 3, 5, "regex"),
    ('{"answers": {"Q2": "No", "Q1": "Yes", "Q3": "Yes", "Q4": "Yes", "Q5": "No"}, "aesthetics": "4 (Good)", '
     '"instruction_consistency": 3.0}', ["Yes", "No", "Yes", "Yes", "No"], 4, 3, "json"),
    ('{"q1": "yes", "q2": "yes", "q3": "no", "q4": "no", "q5": "cannot determine", "aesthetics": 2, "fidelity": 1}',
     ["Yes", "Yes", "No", "No", "Cannot determine"], 2, 1, "json"),
]


@pytest.mark.parametrize("reply,answers,aes,fid,method", MESSY)
def test_parse_messy_replies(reply, answers, aes, fid, method):
    pr = parse_reply(reply)
    assert pr.complete, pr.problems
    assert pr.answers == answers and pr.aesthetics == aes and pr.fidelity == fid
    assert pr.method == method
    assert pr.authenticity == authenticity_score(answers)


def test_parse_failures():
    assert not parse_reply("").complete
    assert not parse_reply("<think>unfinished reasoning about {\"a\": 1").complete
    pr = parse_reply('{"realityAnswers_Eval": ["Yes", "No", "Yes", "No"], "aestheticsRating_Eval": 4, '
                     '"consistencyRating_Eval": 3}')
    assert not pr.complete and "4 answers for 5 questions" in pr.problems[0]
    pr = parse_reply('{"realityAnswers_Eval": ["Yes", "No", "Yes", "No", "Maybe"], "aestheticsRating_Eval": 4, '
                     '"consistencyRating_Eval": 3}')
    assert not pr.complete and pr.answers[4] is None
    pr = parse_reply('{"realityAnswers_Eval": ["Yes","Yes","Yes","Yes","Yes"], "aestheticsRating_Eval": 7, '
                     '"consistencyRating_Eval": 3}')
    assert not pr.complete and pr.aesthetics is None
    # VLMEvalKit-style reply: a stated total stands in for the answers
    pr = parse_reply("Total Score: 3.5\nAesthetics Rating: 4\nInstruction Consistency Rating: 2")
    assert pr.complete and pr.authenticity == 3.5 and pr.aesthetics == 4 and pr.fidelity == 2


def test_random_answer_space_is_the_full_product():
    sp = CriticAnswerSpace()
    assert len(sp) == 6075
    items = [json.loads(sp[i]) for i in range(len(sp))]
    assert len({json.dumps(x, sort_keys=True) for x in items}) == 6075
    assert all(parse_reply(sp[i]).complete for i in (0, 1, 1234, 6074))


def test_correlation_matches_hand_formula():
    x, y = [1.0, 2.0, 3.0, 5.0], [2.0, 1.0, 4.0, 4.5]
    mx, my = sum(x) / 4, sum(y) / 4
    num = sum((a - mx) * (b - my) for a, b in zip(x, y))
    den = (sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y)) ** 0.5
    c = correlation(x, y)
    assert c["PLCC"] == pytest.approx(num / den)
    assert c["SRCC"] == pytest.approx(1 - 6 * (1 + 1 + 0 + 0) / (4 * 15))  # ranks 1234 vs 2134
    assert correlation([1, 1, 1], [1, 2, 3])["PLCC"] is None


# --------------------------------------------------------------------------- ground truth files
def _write_csv(path: Path, rows: list[list]) -> Path:
    import csv

    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["image", "rater", "q1", "q2", "q3", "q4", "q5", "aesthetics", "fidelity"])
        w.writerows(rows)
    return path


GT_ROWS = [
    ["direct_light_images/1.1.png", "A", "Yes", "Yes", "No", "No", "Yes", 4, 3],
    ["direct_light_images/1.1.png", "B", "Yes", "Yes", "No", "Cannot determine", "Yes", 5, 4],
    ["direct_light_images/1.1.png", "C", "Yes", "No", "No", "Cannot determine", "Yes", 4, 3],
    ["direct_light_images/1.2.png", "A", "Yes", "Yes", "Yes", "Yes", "No", 4, 3],
    ["direct_light_images/1.2.png", "B", "yes", "Yes", "Yes", "Cannot Determine", "No", 4, 2],
    ["direct_light_images/2.1.png", "A", "No", "No", "No", "No", "No", 1, 1],
]


def test_ground_truth_from_rater_csv(tmp_path):
    rows = read_rating_rows(_write_csv(tmp_path / "h.csv", GT_ROWS))
    gt = ground_truth(rows)
    g = gt["direct_light_images/1.1.png"]
    assert g.authenticity == pytest.approx((3 + 3.5 + 2.5) / 3) and g.aesthetics == pytest.approx(13 / 3)
    assert g.fidelity == pytest.approx(10 / 3) and g.n_raters == 3
    assert g.majority == ("Yes", "Yes", "No", "Cannot determine", "Yes")
    assert gt["direct_light_images/1.2.png"].majority == ("Yes", "Yes", "Yes", None, "No")  # tie on Q4
    bad = tmp_path / "bad.csv"
    bad.write_text("image,aesthetics\ndirect_light_images/1.1.png,9\n")
    with pytest.raises(DataError, match="outside 1-5"):
        read_rating_rows(bad)
    bad.write_text("name,aesthetics\nx,3\n")
    with pytest.raises(DataError, match="'index' or 'image'"):
        read_rating_rows(bad)


def test_vlmevalkit_tsv(gob_data, tmp_path):
    recs = load_records(gob_data / "data_total.json", images_dir=tmp_path / "none")  # no images on disk
    png = next(gob_data.glob("direct_light_images/1.1.png")).read_bytes()
    tsv = tmp_path / "GOBench.tsv"
    lines = ["index\timage\tquestion\tanswer"]
    for i in (0, 1, 998):
        q = f"Prompt: {recs[i].prompt}\\nQuestions: ..."
        ans = f"Reality Assessment Score: {3 + i % 2 * 0.5}\\nAesthetics Rating: 4.17\\nInstruction Consistency Rating: 3"
        lines.append(f"{i}\t{base64.b64encode(png).decode()}\t{q}\t{ans}")
    tsv.write_text("\n".join(lines) + "\n")
    gt, qs, imgs, _ = load_human_gt(tsv, recs, image_cache=tmp_path / "cache")
    assert set(gt) == {recs[0].index, recs[1].index, recs[998].index}
    assert gt[recs[1].index].authenticity == 3.5 and gt[recs[0].index].aesthetics == 4.17
    assert Path(imgs[recs[998].index]).read_bytes() == png
    assert recs[998].prompt in qs[recs[998].index]
    # indices that do not line up with the records are refused
    bad = tmp_path / "bad.tsv"
    bad.write_text("index\tquestion\tanswer\n5\tPrompt: something else entirely\tAesthetics Rating: 3\n")
    with pytest.raises(DataError, match="do not line up"):
        load_human_gt(bad, recs)


# --------------------------------------------------------------------------- end to end
GOOD = ('```json\n{"realityAnswers_Eval": ["Yes", "Yes", "No", "Cannot Determine", "Yes"], "aestheticsRating_Eval": 4, '
        '"consistencyRating_Eval": 3, "reasoning_Eval": "ok", "model_used_for_eval": "fake"}\n```')


def test_cli_run_end_to_end(gob_data, tmp_path):
    seen = []

    def responder(body):
        seen.append(body)
        content = body["messages"][-1]["content"]
        text = next(p["text"] for p in content if p.get("type") == "text")
        if "oak tree" in text:  # scenario direct_light_images/1
            return GOOD
        return "I am unable to evaluate this image."

    human = _write_csv(tmp_path / "human.csv", GT_ROWS)
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=responder) as srv:
        res = CliRunner().invoke(app, ["run", "gobench", "--data-dir", str(gob_data), "--model", "openai:fake",
                                       "--base-url", srv.url, "--out", str(out), "--human-ratings", str(human),
                                       "--limit", "6", "--image-max-side", "128", "--no-progress", "--with-paper"])
        assert res.exit_code in (0, 3), res.output  # 3: a --limit run may be reported as partial
    body = seen[0]
    assert body["temperature"] == 0.1 and body["max_tokens"] == 1500
    assert [p["type"] for p in body["messages"][-1]["content"]] == ["text", "image_url"]
    result = json.loads((out / "result.json").read_text())
    m, c = result["metrics"], result["counts"]
    assert c["n_images"] == 6 and c["n"] == 3 and c["n_unparseable"] == 3 and c["n_with_gt"] == 2
    # hand-computed: model scores (3.5, 4, 3); GT 1.1 = (3, 13/3, 10/3), GT 1.2 = (3.75, 4, 2.5)
    assert m["SPS"]["Authenticity"] == pytest.approx(100 * (0 + 0.5) / 2)
    assert m["SPS"]["Aesthetics"] == pytest.approx(100 * ((1 - (1 / 3) / 0.5) + 1) / 2)
    assert m["SPS"]["Fidelity"] == pytest.approx(100 * ((1 - (1 / 3) / 0.5) + 0) / 2)
    assert m["SPS_by_category"]["Direct"]["Authenticity"] == pytest.approx(25.0)
    assert m["question_agreement"]["Overall"] == pytest.approx(100 * 7 / 9)
    assert m["question_agreement"]["Q3"] == pytest.approx(50.0)
    recs = {json.loads(line)["sample_id"]: json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()}
    r11, r12 = recs["direct_light_images_1.1"], recs["direct_light_images_1.2"]
    assert r11["outcome"] == r12["outcome"] == "scored"
    assert r11["scores"]["sps_authenticity"] == 0.0 and r12["scores"]["sps_authenticity"] == pytest.approx(0.5)
    assert r11["labels"] == {"category": "direct_light_images", "scenario": "direct_light_images/1", "variant": "1",
                             "image": "direct_light_images/1.1.png"}
    assert r11["target"]["aesthetics"] == pytest.approx(13 / 3) and r11["answer"]["authenticity"] == 3.5
    assert recs["direct_light_images_2.1"]["outcome"] == "unparseable"
    assert "Gemini-2.5Pro (0506) (paper) | 37.35" in res.output
    assert "unparseable" in res.output and "excluded" in res.output
