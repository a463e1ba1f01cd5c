"""RGB-Th-Bench protocol on crafted data in the official layout (no shared data needed).

Expected figures are computed here by hand or with exact integer binomial sums, never by
calling the benchmark's own scorer.
"""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest
from PIL import Image

from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.core.errors import ConfigError
from lensbench.core.records import SampleRecord
from lensbench.core.types import ImagePart, TextPart
from lensbench.runtime.runner import RunSettings, run_benchmark

RGB_CTX = 'Based on this image, answer the following question with strictly either "Yes" or "No", without any extra explanation'
RGBTH_CTX = ('Based on these two images, and the fact that the second image is the thermal image taken from the same '
             'scene as the first image, answer the following question with strictly either "Yes" or "No", without any '
             'extra explanation')
THERMAL_CTX = ('Based on this thermal image, answer the following question with strictly either "Yes" or "No", '
               'without any extra explanation.')
PAIR, SINGLE = "RGB-Thermal Pair", "Single RGB Image"


def make_data(root: Path, units: list[tuple[str, str, str, str, list[tuple[str, str]]]]) -> Path:
    """Write ``Data/<source>/<scene>/questions.json`` (+ rgb.jpg, thermal.jpg) for (source, scene, skill, type, qas)."""
    data = root / "Data"
    by_scene: dict[tuple[str, str], list[dict]] = {}
    for src, scene, skill, dtype, qas in units:
        did = [f"{scene}/rgb.jpg", f"{scene}/thermal.jpg"] if dtype == PAIR else f"{scene}/rgb.jpg"
        by_scene.setdefault((src, scene), []).append(
            {"data_source": src, "data_id": did, "data_type": dtype, "skill_type": skill,
             "QAs": [{"question": q, "answer": a} for q, a in qas]})
    for i, ((src, scene), items) in enumerate(by_scene.items()):
        d = data / src / scene
        d.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (8, 6), (200, 10 * i, 0)).save(d / "rgb.jpg")
        Image.new("RGB", (8, 6), (0, 10 * i, 200)).save(d / "thermal.jpg")
        (d / "questions.json").write_text(json.dumps({"data": items}), encoding="utf-8")
    return data


def replies_file(path: Path, rows: list[tuple[str, str, str, str, str]], thermal_fields: bool = False) -> Path:
    """A third-party result file: rows of (source, scene, skill, question, raw reply)."""
    key = "data_type_original" if thermal_fields else "data_type"
    recs = [{"model": "m", "provider": "local", "file": f"{src}\\{scene}\\questions.json", "skill": skill,
             key: SINGLE, "question": q, "ground_truth": "Yes", "vlm_response_raw": raw,
             "vlm_answer_parsed": None, "is_correct": None, "latency_s": 0.1} for src, scene, skill, q, raw in rows]
    path.write_text(json.dumps(recs), encoding="utf-8")
    return path


def run(data: Path, replay: Path, out: Path, **opts):
    return run_benchmark(RGBThBench(RGBThBench.Options(**opts)),
                         RunSettings(model=f"replay:{replay}", out=out, data_dir=data, progress=False))


def samples(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]


# ------------------------------------------------------------------- prompt bytes and image order
def test_prompt_bytes_and_image_order(tmp_path):
    data = make_data(tmp_path, [("Source 1", "Hall", "Warmest Areas Detection", PAIR, [("Is the lamp warm?", "Yes")]),
                                ("Source 1", "Hall", "Scene Understanding", SINGLE, [("Is it a hall?", "No")])])
    b = RGBThBench()
    reqs = b.expand(b.load(data), None)
    by_id = {r.id: r for r in reqs}
    pair = by_id["Source 1/Hall/Warmest/0"].messages[0].parts
    single = by_id["Source 1/Hall/Scene/0"].messages[0].parts
    scene = data / "Source 1" / "Hall"
    sha = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    # RGB first, then thermal, then the text (Sec. 3.3)
    assert [type(p) for p in pair] == [ImagePart, ImagePart, TextPart]
    assert [Path(pair[0].path).name, Path(pair[1].path).name] == ["rgb.jpg", "thermal.jpg"]
    assert [pair[0].sha256, pair[1].sha256] == [sha(scene / "rgb.jpg"), sha(scene / "thermal.jpg")]
    assert pair[2].text.encode() == (RGBTH_CTX + "\nIs the lamp warm?").encode()
    assert [type(p) for p in single] == [ImagePart, TextPart] and single[0].sha256 == sha(scene / "rgb.jpg")
    assert single[1].text.encode() == (RGB_CTX + "\nIs it a hall?").encode()


def test_thermal_only_and_rgb_only_inputs(tmp_path):
    data = make_data(tmp_path, [("Source 1", "Hall", "Warmest Areas Detection", PAIR, [("Is the lamp warm?", "Yes")]),
                                ("Source 1", "Hall", "Scene Understanding", SINGLE, [("Is it a hall?", "No")])])
    scene = data / "Source 1" / "Hall"
    th = RGBThBench(RGBThBench.Options(input="thermal-only"))
    for r in th.expand(th.load(data), None):
        img, txt = r.messages[0].parts
        assert Path(img.path) == scene / "thermal.jpg"  # the scene's thermal image, also for RGB-only skills
        q = "Is the lamp warm?" if "Warmest" in r.id else "Is it a hall?"
        assert txt.text == f"{THERMAL_CTX}\n\nQuestion: {q}"  # third-party benchmark_thermal.py full_prompt
    rgb = RGBThBench(RGBThBench.Options(input="rgb-only"))
    for r in rgb.expand(rgb.load(data), None):
        img, txt = r.messages[0].parts
        assert Path(img.path) == scene / "rgb.jpg"
        assert txt.text.startswith(RGB_CTX + "\n")
    # thermal.png is the fallback, as in the third-party loader
    (scene / "thermal.jpg").rename(scene / "thermal.png")
    (scene / "x.jpg").write_bytes((scene / "rgb.jpg").read_bytes())
    doc = json.loads((scene / "questions.json").read_text())
    doc["data"] = [doc["data"][1]]  # keep the single-image unit (its data_id names no thermal file)
    (scene / "questions.json").write_text(json.dumps(doc))
    assert Path(th.expand(th.load(data), None)[0].images[0].path) == scene / "thermal.png"


# ------------------------------------------------------------------- significance row values
def exact_threshold(n: int, num: int, den: int) -> float:
    """Smallest k/n (%) with P(X >= k) < 0.05 for X ~ Bin(n, num/den), by an exact integer sum."""
    total = den ** n
    tail = 0
    tails = [0] * (n + 2)
    for i in range(n, -1, -1):
        tail += comb(n, i) * num ** i * (den - num) ** (n - i)
        tails[i] = tail
    k = next(k for k in range(n + 1) if Fraction(tails[k], total) < Fraction(1, 20))
    return 100.0 * k / n


def paper_shaped_records(n_units: int = 29, size: int = 4) -> list[SampleRecord]:
    from lensbench.benchmarks.rgbth.data import SKILLS

    recs = []
    for skill, (ab, group) in SKILLS.items():
        for u in range(n_units):
            for j in range(size):
                recs.append(SampleRecord(benchmark="rgb-th-bench", sample_id=f"S/{u}/{ab}/{j}", outcome="correct",
                                         answer="Yes", target="Yes",
                                         labels={"skill": skill, "abbrev": ab, "group": group, "scene": f"S/{u}",
                                                 "extra": False}))
    return recs


def test_significance_row_values_against_exact_binomial():
    metrics, counts = RGBThBench().aggregate(paper_shaped_records())
    sig = metrics["significance"]
    # the paper's sizes: 812 questions / 203 units per group, 1624 / 406 overall
    for col, nq, nu in (("RGB-Txt", 812, 203), ("RGB-Th-Txt", 812, 203), ("Overall", 1624, 406)):
        assert sig["QAcc"][col] == pytest.approx(exact_threshold(nq, 1, 2), abs=1e-9)
        assert sig["SAcc"][col] == pytest.approx(exact_threshold(nu, 1, 16), abs=1e-9)
    # the figures themselves (k / n): 430/812, 846/1624, 20/203, 35/406
    assert sig["QAcc"]["Overall"] == pytest.approx(100 * 846 / 1624)
    assert sig["SAcc"]["RGB-Txt"] == pytest.approx(100 * 20 / 203)
    assert sig["SAcc"]["Overall"] == pytest.approx(100 * 35 / 406)


def test_significance_row_is_an_at_least_bound_and_per_run():
    """The printed threshold k/n is itself significant (p < 0.05), so the row reads ">=" (the issue's
    430/812 = 52.96% has p = 0.0495); runs with different counts each get their own row."""
    from lensbench.core.results import RunResult

    stats = pytest.importorskip("scipy.stats")
    metrics, counts = RGBThBench().aggregate(paper_shaped_records())
    k = round(metrics["significance"]["QAcc"]["RGB-Txt"] * 812 / 100)
    assert stats.binomtest(k, 812, 0.5, alternative="greater").pvalue < 0.05
    assert stats.binomtest(k - 1, 812, 0.5, alternative="greater").pvalue >= 0.05
    one = RGBThBench().tables([RunResult("rgb-th-bench", "m", metrics, counts)])
    assert f"| Statistically Significant (>=) | {100 * k / 812:.2f} |" in one and "(>)" not in one
    small_m, small_c = RGBThBench().aggregate(paper_shaped_records()[:400])
    both = RGBThBench().tables([RunResult("rgb-th-bench", "big", metrics, counts),
                                RunResult("rgb-th-bench", "small", small_m, small_c)])
    rows = [ln for ln in both.splitlines() if ln.startswith("| Statistically Significant")]
    assert [r.split(" | ")[0] for r in rows] == ["| Statistically Significant (>=) [big]",
                                                  "| Statistically Significant (>=) [small]"]
    assert rows[0] != rows[1].replace("[small]", "[big]")


def test_significance_note_explains_the_paper_thresholds():
    from lensbench.core.results import RunResult

    metrics, counts = RGBThBench().aggregate(paper_shaped_records())
    text = RGBThBench().tables([RunResult("rgb-th-bench", "m", metrics, counts)])
    assert "> 8 per group, > 7.5 Overall" in text
    assert f"RGB-Txt >= {100 * 20 / 203:.2f} (203 units)" in text and f"Overall >= {100 * 35 / 406:.2f} (406 units)" in text
    assert f"give {exact_threshold(812, 1, 16):.2f} / {exact_threshold(1624, 1, 16):.2f}" in text


# ------------------------------------------------------------------- errors, unit sizes, duplicates
def test_transport_errors_left_out_of_qacc_and_sacc_metrics(tmp_path):
    s = "Source 1"
    qa = [(f"Q{j}?", "Yes") for j in range(4)]
    data = make_data(tmp_path, [(s, "A", "Scene Understanding", SINGLE, qa), (s, "B", "Scene Understanding", SINGLE, qa)])
    rows = [(s, "A", "Scene Understanding", q, "Yes") for q, _ in qa]  # unit A: 4/4 right
    rows += [(s, "B", "Scene Understanding", "Q0?", "Yes"), (s, "B", "Scene Understanding", "Q1?", "No"),
             (s, "B", "Scene Understanding", "Q2?", "Error: 503 Service Unavailable")]  # Q3 not recorded at all
    res = run(data, replies_file(tmp_path / "r.json", rows), tmp_path / "run")
    # questions scored: 4 (A) + 2 (B: Q0 right, Q1 wrong); the 2 errors are left out, not counted wrong
    assert res.metrics["QAcc"]["Scene"] == pytest.approx(100 * 5 / 6)
    # unit B has errors: out of SAcc; unit A passes -> 1/1
    assert res.metrics["SAcc"]["Scene"] == pytest.approx(100.0)
    assert res.counts["n_error"] == 2 and res.counts["n"] == 6 and res.counts["n_units_missing"] == 1
    assert not res.complete
    assert sorted(r["outcome"] for r in samples(tmp_path / "run")) == ["correct"] * 5 + ["error"] * 2 + ["wrong"]


def test_unequal_unit_sizes(tmp_path):
    s = "Source 2"
    three = [(f"T{j}?", "No") for j in range(3)]
    five = [(f"F{j}?", "Yes") for j in range(5)]
    four = [(f"R{j}?", "Yes") for j in range(4)]
    data = make_data(tmp_path, [(s, "1", "Risk and Anomaly Detection", PAIR, three),
                                (s, "2", "Risk and Anomaly Detection", PAIR, five),
                                (s, "3", "Risk and Anomaly Detection", PAIR, four)])
    rows = [(s, "1", "Risk and Anomaly Detection", q, "No.") for q, _ in three]          # 3/3: unit passes
    rows += [(s, "2", "Risk and Anomaly Detection", q, "Yes") for q, _ in five[:4]]
    rows += [(s, "2", "Risk and Anomaly Detection", "F4?", "I don't know")]              # Fail: unit fails
    rows += [(s, "3", "Risk and Anomaly Detection", q, "yes") for q, _ in four]          # 4/4: passes
    res = run(data, replies_file(tmp_path / "r.json", rows), tmp_path / "run")
    assert res.metrics["QAcc"]["Anomaly"] == pytest.approx(100 * 11 / 12)
    assert res.metrics["SAcc"]["Anomaly"] == pytest.approx(100 * 2 / 3)
    assert res.counts["n_unparseable"] == 1 and res.counts["per_skill"]["Anomaly"] == {"questions": 12, "units": 3}


def _dup_data(tmp_path, answers=("No", "No")):
    s, sk = "Source 2", "Coldest Areas Detection"
    qas = [("Is the cable the coldest?", answers[0]), ("Is the pipe cold?", "Yes"),
           ("Is the cable the coldest?", answers[1]), ("Is the wall warm?", "No")]
    return make_data(tmp_path, [(s, "3", sk, PAIR, qas)]), s, sk


def test_repeated_question_gets_its_own_recorded_reply(tmp_path):
    data, s, sk = _dup_data(tmp_path)
    rows = [(s, "3", sk, "Is the cable the coldest?", "No"), (s, "3", sk, "Is the pipe cold?", "Yes"),
            (s, "3", sk, "Is the cable the coldest?", "Yes"), (s, "3", sk, "Is the wall warm?", "No")]
    res = run(data, replies_file(tmp_path / "r.json", rows), tmp_path / "run")
    recs = {r["sample_id"]: r for r in samples(tmp_path / "run")}
    assert recs["Source 2/3/Coldest/0"]["answer"] == "No" and recs["Source 2/3/Coldest/2"]["answer"] == "Yes"
    assert res.metrics["QAcc"]["Coldest"] == pytest.approx(75.0) and res.metrics["SAcc"]["Coldest"] == 0.0
    assert res.counts["data_defects"] == []  # same question, same answer twice: not a defect


@pytest.mark.parametrize("thermal", [False, True])
def test_missing_second_reply_is_an_error_not_a_copy(tmp_path, thermal):
    data, s, sk = _dup_data(tmp_path)
    rows = [(s, "3", sk, "Is the cable the coldest?", "No"), (s, "3", sk, "Is the pipe cold?", "Yes"),
            (s, "3", sk, "Is the wall warm?", "No")]  # the second ask was never recorded
    name = "benchmark_results_m_thermal_only.json" if thermal else "r.json"
    res = run(data, replies_file(tmp_path / name, rows, thermal_fields=thermal), tmp_path / "run",
              **({"input": "thermal-only"} if thermal else {}))
    recs = {r["sample_id"]: r for r in samples(tmp_path / "run")}
    assert recs["Source 2/3/Coldest/2"]["outcome"] == "error" and recs["Source 2/3/Coldest/2"]["reply"] is None
    assert res.metrics["QAcc"]["Coldest"] == pytest.approx(100.0)  # 3 of 3 answered, all right
    assert res.metrics["SAcc"]["Coldest"] is None  # the only unit is missing
    assert res.counts["n"] == 3 and res.counts["n_error"] == 1


def test_contradictory_unit_is_reported_as_a_data_defect(tmp_path):
    data, s, sk = _dup_data(tmp_path, answers=("Yes", "No"))
    rows = [(s, "3", sk, q, "Yes") for q in ("Is the cable the coldest?", "Is the pipe cold?",
                                              "Is the cable the coldest?", "Is the wall warm?")]
    res = run(data, replies_file(tmp_path / "r.json", rows), tmp_path / "run")
    assert res.counts["data_defects"] == [{"unit": "Source 2/3/Coldest", "skill": sk,
                                           "question": "Is the cable the coldest?"}]
    text = RGBThBench().tables([res])
    assert "Data defect: unit Source 2/3/Coldest" in text and "can never pass SAcc" in text


# ------------------------------------------------------------------- input modes and replay files
def test_thermal_only_file_refused_under_another_mode(tmp_path):
    data, s, sk = _dup_data(tmp_path)
    rows = [(s, "3", sk, "Is the pipe cold?", "Yes")]
    named = replies_file(tmp_path / "benchmark_results_m_thermal_only.json", rows)
    by_fields = replies_file(tmp_path / "plain_name.json", rows, thermal_fields=True)
    for i, f in enumerate((named, by_fields)):
        with pytest.raises(ConfigError, match="--input thermal-only"):
            run(data, f, tmp_path / f"a{i}")
        with pytest.raises(ConfigError, match="thermal-only"):
            run(data, f, tmp_path / f"b{i}", input="rgb-only")
    paper = replies_file(tmp_path / "paper.json", rows)
    with pytest.raises(ConfigError, match="--input rgb\\+thermal"):
        run(data, paper, tmp_path / "c", input="thermal-only")


def test_input_mode_in_manifest_result_and_report(tmp_path):
    data, s, sk = _dup_data(tmp_path)
    rows = [(s, "3", sk, "Is the pipe cold?", "Yes")]
    f = replies_file(tmp_path / "benchmark_results_m_thermal_only.json", rows, thermal_fields=True)
    res = run(data, f, tmp_path / "run", input="thermal-only")
    assert json.loads((tmp_path / "run" / "run.json").read_text())["options"]["input"] == "thermal-only"
    assert res.options["input"] == "thermal-only"
    text = RGBThBench().tables([res])
    assert "| m [input: thermal-only] [incomplete: 3 errors] |" in text
    assert "| m [input: thermal-only] |" in text  # per-skill tables
