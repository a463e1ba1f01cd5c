"""IF-Bench protocol on the real if_bench.json with generated stand-in images.

Expected values are computed here independently of lensbench.benchmarks.ifbench: prompt
strings are written out from the paper's figures (with the official code's indentation), the
rotation is recomputed with a deque, and scores are counted by hand from the raw replies.
"""

from __future__ import annotations

import ast
import zlib
import json
import re
from collections import defaultdict, deque
from pathlib import Path

import pytest
from PIL import Image

from lensbench.benchmarks.base import RunResult
from lensbench.benchmarks.ifbench.analyses import paper_table, parse_model_name, scale_correlation, thinking_deltas
from lensbench.benchmarks.ifbench.benchmark import IFBench
from lensbench.benchmarks.ifbench.parse import exact_letter, official_first_char, parse_parser_reply
from lensbench.benchmarks.ifbench.prompts import build_prompt, load_prompt, parser_prompt, render_options, template_for
from lensbench.core.errors import DataError
from lensbench.runtime.runner import RunSettings, run_benchmark
from lensbench.testing.server import FakeOpenAIServer

ABBR = {"Scene Understanding": "SU", "Image Theme": "IT", "Viewpoint of Capture": "VC", "Target Localization": "TL",
        "Spatial Relationship Understanding": "SRU", "Object Counting": "OC", "Thermal Feature Understanding": "TFU",
        "Action Recognition": "AR", "Thermal Feature Reasoning": "TFR", "Commonsense Reasoning": "CR"}
L = "ABCD"


def indent(lines: list[str]) -> str:
    """The official code's layout of a figure's text: leading newline, 4-space indent, blank lines empty."""
    return "\n" + "\n".join(("    " + x) if x else "" for x in lines) + "\n"


FIG10_EN = [
    "You are a professional multimodal large language model assistant. You will be given a single-choice question that includes:",
    "1. One infrared image.",
    "2. One question related to the image.",
    "3. Four answer options (A, B, C, D).",
    "",
    "Your task:",
    "Carefully analyze the image and the question, evaluate all answer choices, and select the most appropriate one. "
    "Please output only a single uppercase letter (A, B, C, or D) as your final answer. Do not include any explanations, "
    "reasoning, or additional text.",
    "",
    "Evaluation Guidelines:",
    "1. Each question has only one correct answer.",
    "2. Random guessing is not allowed; answers must be based on accurate analysis of the image and the question.",
    "3. The output format must be a single uppercase letter: A, B, C, or D.",
    "",
    "The input question is: <input_question>.",
    "The input options are: <input_options>.",
]
FIG12_ITEM1 = ("1. One infrared image and one corresponding RGB image. The RGB image is translated from the corresponding "
               "infrared image by an image translation model.")
FIG13_EN = [
    "When completing the above tasks, please refer to the following prior knowledge about infrared images:",
    "1. Imaging Mechanism: Infrared imaging does not rely on visible light reflected from objects but instead captures "
    "the infrared radiation (thermal radiation) emitted by the objects themselves or their environment. The higher the "
    "temperature of an object, the stronger its infrared radiation; therefore, infrared images usually reflect "
    "temperature distribution rather than surface color. Infrared imaging is insensitive to lighting conditions and can "
    "function even in complete darkness.",
    "2. Image Characteristics: Infrared images are usually presented in grayscale, where brightness corresponds to "
    "temperature. The resolution of infrared images is generally lower, resulting in less detail and poorer edge "
    "sharpness. Due to environmental interference (e.g., atmospheric absorption, sensor noise), infrared images often "
    "contain more noise. Moreover, different materials have different infrared emissivities at the same temperature, "
    "which may cause brightness differences in the resulting images.",
    "",
]
FIG10_ZH = [
    "你是一个专业的的多模态大语言模型助手。你将收到一道单项选择题，题目内容包括：",
    "1. 一张红外图像；",
    "2. 一个与图像相关的问题；",
    "3. 四个候选答案（A、B、C、D）。",
    "",
    "你的任务是：",
    "认真理解图像和问题内容，分析所有选项，从中选择一个最合适的答案。请仅输出一个大写字母（A、B、C 或 D）作为最终答案，"
    "不要添加任何解释、理由或额外内容。",
    "",
    "评测要求：",
    "1. 每道题仅有一个正确答案；",
    "2. 禁止随意作答，必须基于图像和问题进行准确判断；",
    "3. 输出格式必须是单个大写英文字母：A、B、C 或 D。",
    "",
    "输入问题是: <input_question>。",
    "输入选项是: <input_options>。",
]
FIG11 = ("\n    You are a professional large model. You will receive responses from a model to single-choice questions. "
         "The options for each question are A, B, C, and D. Please determine which option (A, B, C, or D) the response "
         "considers to be the correct answer. If you believe that none of the options A, B, C, or D are present in the "
         "response, please reply with \"F\".\n    Remember, you can only reply with one of the characters A, B, C, D, or "
         "F. Do not output anything else.\n    Input: <input_response>\n    ")


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def bench_json(shared_data) -> Path:
    p = shared_data / "IF-Bench" / "evaluate" / "if_bench" / "if_bench.json"
    if not p.is_file():
        pytest.skip(f"IF-Bench data not found at {p}")
    return p


@pytest.fixture(scope="module")
def raw(bench_json):
    return json.loads(bench_json.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def images(tmp_path_factory, raw) -> Path:
    """Stand-in infrared images (8x8 grey, distinct) under the release's file names."""
    d = tmp_path_factory.mktemp("infrared_imgs")
    names = sorted({e["dst_thermal_path"] for v in raw.values() for e in v})
    for i, n in enumerate(names):
        im = Image.new("L", (8, 8), i % 256)
        im.putpixel((0, 0), i // 256 * 100)  # distinct content for every file
        im.save(d / n, quality=95)
    return d


@pytest.fixture(scope="module")
def translated(tmp_path_factory, raw) -> Path:
    """Stand-in translated RGB images, saved as PNG (same stem: the loader must find them)."""
    d = tmp_path_factory.mktemp("translated_rgb_imgs")
    names = sorted({e["dst_thermal_path"] for v in raw.values() for e in v})
    for i, n in enumerate(names):
        Image.new("RGB", (8, 8), (i % 256, i // 256, 20)).save(d / (Path(n).stem + ".png"))
    return d


def expected_units(raw):
    """(qid, dimension abbrev, question record) in file order, qid = abbrev-index within its list."""
    out = []
    for dim, lst in raw.items():
        for i, e in enumerate(lst):
            out.append((f"{ABBR[dim]}-{i:03d}", ABBR[dim], e))
    return out


# ------------------------------------------------------------------ prompts
def test_prompts_byte_exact_against_figures():
    fig10 = indent(FIG10_EN)
    assert template_for("if", "en") == fig10
    assert load_prompt("unified_en") == fig10
    fig12 = indent([FIG10_EN[0], FIG12_ITEM1] + FIG10_EN[2:])
    assert template_for("if+rgb", "en") == fig12
    # Fig. 13 prior goes between the task paragraph and the guidelines (official composition)
    assert template_for("if+text", "en") == indent(FIG10_EN[:8] + FIG13_EN + FIG10_EN[8:])
    assert template_for("if+rgb+text", "en") == indent([FIG10_EN[0], FIG12_ITEM1] + FIG10_EN[2:8] + FIG13_EN + FIG10_EN[8:])
    assert template_for("if", "zh") == indent(FIG10_ZH)
    assert load_prompt("parser") == FIG11
    assert parser_prompt("I pick B") == FIG11.replace("<input_response>", "I pick B")
    rgb_only = template_for("rgb", "en")
    assert "1. One RGB image translated from the corresponding infrared image by an image translation model." in rgb_only


def test_real_question_prompt_and_options_repr(bench_json, images):
    qs = IFBench(IFBench.Options(images_dir=str(images))).load(bench_json)
    reqs = IFBench(IFBench.Options(images_dir=str(images))).expand(qs[:1])
    first = reqs[0]  # Thermal Feature Understanding [0], en, rotation 0
    raw = json.loads(bench_json.read_text())["Thermal Feature Understanding"][0]["question"]
    o = raw["en_options"]
    expected = indent(FIG10_EN).replace("<input_question>", raw["en_question"]).replace(
        "<input_options>", "{'A': '%s', 'B': '%s', 'C': '%s', 'D': '%s'}" % (o["A"], o["B"], o["C"], o["D"]))
    parts = first.messages[0].parts
    assert parts[0].type == "image" and parts[1].type == "text" and len(parts) == 2
    assert parts[1].text == expected
    # Python repr quoting, as str(dict) in the official code
    assert render_options(["It's", 'say "hi"', "a", "b"]) == "{'A': \"It's\", 'B': 'say \"hi\"', 'C': 'a', 'D': 'b'}"
    assert build_prompt("Q=<input_question> O=<input_options>", "x", ["1", "2", "3", "4"]) == \
        "Q=x O={'A': '1', 'B': '2', 'C': '3', 'D': '4'}"


# ------------------------------------------------------------------ expansion
def test_680_questions_expand_to_5440_requests_and_rotations_move_the_answer(bench_json, raw, images):
    b = IFBench(IFBench.Options(images_dir=str(images)))
    qs = b.load(bench_json)
    assert len(qs) == 680 and len({q.image_name for q in qs}) == 499
    reqs = b.expand(qs)
    assert len(reqs) == 5440 and len({r.id for r in reqs}) == 5440
    by_id = {r.id: r for r in reqs}
    for qid, _ab, e in expected_units(raw):
        q = e["question"]
        for lang, qf, of in (("en", "en_question", "en_options"), ("zh", "cn_question", "cn_options")):
            opts = [q[of][x] for x in L]
            letters_seen = set()
            for i in range(4):
                r = by_id[f"{qid}/{lang}/r{i}"]
                idx = deque(range(4))
                idx.rotate(i)  # shift right by i
                want_letter = L[list(idx).index(L.index(q["answer"]))]
                assert r.meta["answer"] == want_letter
                letters_seen.add(want_letter)
                text = r.messages[0].parts[-1].text
                shown = ast.literal_eval(text.split("<input_options>")[0] if False else
                                         re.search(r"(\{'A'.*\})[.。]\n$", text, re.S).group(1))
                assert list(shown.values()) == [opts[k] for k in idx]
                assert shown[want_letter] == opts[L.index(q["answer"])]
                assert q[qf] in text
            assert letters_seen == set(L)
    # image first, one image per request, the right file
    r0 = reqs[0]
    assert Path(r0.images[0].path).name == raw["Thermal Feature Understanding"][0]["dst_thermal_path"]


def test_no_circular_and_one_language(bench_json, images):
    b = IFBench(IFBench.Options(images_dir=str(images), circular=False, languages="zh"))
    reqs = b.expand(b.load(bench_json))
    assert len(reqs) == 680 and all(r.id.endswith("/zh/r0") for r in reqs)
    with pytest.raises(ValueError):
        IFBench.Options(languages="fr")


# ------------------------------------------------------------------ judging units
@pytest.mark.parametrize("reply,letter", [("B", "B"), (" C \n", "C"), ("D.", "D"), ("(A)", "A"), ("**B**", "B"),
                                          ("[C]", "C"), ("b", None), ("Answer: C", None), ("AB", None), ("", None),
                                          ("B. Because", None)])
def test_exact_letter(reply, letter):
    assert exact_letter(reply) == letter


def test_official_first_char_and_parser_reply():
    assert official_first_char("Answer: C") == "A"  # the official quirk, reproduced on request
    assert official_first_char("<think>x</think>\n D") == "D"
    assert official_first_char("The answer is B") is None
    assert parse_parser_reply("F") == "F" and parse_parser_reply(" B\n") == "B"
    assert parse_parser_reply("<think>hm</think>C") == "C" and parse_parser_reply("As said") is None


# ------------------------------------------------------------------ full runs
def independent_scores(records_by_id, raw, langs=("en", "zh")):
    """Hand count: per language, dim = mean over questions of correct/4; Avg = mean of dims; then mean of languages."""
    per_lang = {}
    strict_lang = {}
    for lang in langs:
        dims, sdims = defaultdict(list), defaultdict(list)
        for qid, ab, e in expected_units(raw):
            oks = []
            for i in range(4):
                want = L[(L.index(e["question"]["answer"]) + i) % 4]
                rec = records_by_id[f"{qid}/{lang}/r{i}"]
                oks.append(rec["letter"] == want)
            dims[ab].append(sum(oks) / 4)
            sdims[ab].append(float(all(oks)))
        per_lang[lang] = {ab: 100 * sum(v) / len(v) for ab, v in dims.items()}
        strict_lang[lang] = {ab: 100 * sum(v) / len(v) for ab, v in sdims.items()}
    avg = {lg: sum(d.values()) / len(d) for lg, d in per_lang.items()}
    savg = {lg: sum(d.values()) / len(d) for lg, d in strict_lang.items()}
    return sum(avg.values()) / len(avg), avg, sum(savg.values()) / len(savg), per_lang


def test_random_run_equals_independent_count(bench_json, raw, images, tmp_path):
    b = IFBench(IFBench.Options(images_dir=str(images)))
    res = run_benchmark(b, RunSettings(model="random", data_dir=bench_json, out=tmp_path / "run", progress=False, seed=3))
    assert res.complete and res.counts["n_requests"] == 5440 and res.counts["n_questions"] == 680
    recs = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    by_id = {r["sample_id"]: {"letter": r["reply"].strip()} for r in recs}
    avg, lang_avg, strict, per_lang = independent_scores(by_id, raw)
    assert res.metrics["Score"]["Avg"] == pytest.approx(avg, abs=1e-9)
    assert res.metrics["Score-en"]["Avg"] == pytest.approx(lang_avg["en"], abs=1e-9)
    assert res.metrics["Score-zh"]["Avg"] == pytest.approx(lang_avg["zh"], abs=1e-9)
    assert res.metrics["Strict"]["Avg"] == pytest.approx(strict, abs=1e-9)
    for ab in ABBR.values():
        assert res.metrics["Score"][ab] == pytest.approx((per_lang["en"][ab] + per_lang["zh"][ab]) / 2, abs=1e-9)
    assert 20 < res.metrics["Score"]["Avg"] < 30 and res.counts["judge"] == "exact match only"
    # the report re-reads result.json; a re-run answers everything from the store
    res2 = run_benchmark(IFBench(IFBench.Options(images_dir=str(images))),
                         RunSettings(model="random", data_dir=bench_json, out=tmp_path / "run", progress=False, seed=3))
    assert res2.metrics == res.metrics
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["engine"]["sent"] == 0 and manifest["engine"]["cached"] == 5440


PARSER_HEAD = "\n    You are a professional large model."


def _text(body: dict) -> str:
    c = body["messages"][0]["content"]
    return c if isinstance(c, str) else "".join(p.get("text", "") for p in c if p.get("type") == "text")


def _judge_responder(body: dict) -> str:
    """The fake parser: the letter in '(X)' or 'answer is X' of the reply it is given, else F."""
    text = _text(body)
    if text.startswith(PARSER_HEAD):
        resp = text.split("Input: ", 1)[1].rsplit("\n    ", 1)[0]
        m = re.search(r"\(([A-D])\)|answer is ([A-D])", resp)
        return (m.group(1) or m.group(2)) if m else "F"
    return ""


def test_parser_path_against_local_server(bench_json, raw, images, tmp_path):
    """Model and judge are real HTTP backends; replies cover exact, wordy, thinking, hopeless and empty."""
    # (the 5th style is reasoning cut off at the token limit, which goes to the parser like any free-form
    # reply; the 7th an empty reply: the model's answer (SPEC General rules), re-asked once, then scored wrong
    # with no parser call (as the official code), never dropped and never an error; the 8th reasoning and then
    # nothing: empty after stripping, the same)
    styles = ["{a}", "I think the answer is ({a}) since it is warm.", "<think>look at it</think>\n{a}.",
              "No idea, sorry.", "<think>so the answer is ({a}), but wait", "Answer: {a}", "",
              "<think>it is ({a})</think>\n"]
    answers = {}
    asked_empty: dict[str, int] = defaultdict(int)

    def responder(body):
        text = _text(body)
        if text.startswith(PARSER_HEAD):  # parser call: text only
            return _judge_responder(body)
        key = zlib.crc32(text.encode()) % len(styles)
        if styles[key] == "":
            asked_empty[text] += 1
        # always the right letter, so the score measures only the judgment path
        shown = ast.literal_eval(re.search(r"(\{'A'.*\})[.。]\n$", text, re.S).group(1))
        q = answers[text]
        letter = next(k for k, v in shown.items() if v == q)
        return styles[key].format(a=letter)

    b = IFBench(IFBench.Options(images_dir=str(images)))
    qs = b.load(bench_json)[:6]
    for r in b.expand(qs):
        q = next(x for x in qs if x.qid == r.meta["qid"])
        answers[r.messages[0].parts[-1].text] = q.option_list(r.meta["lang"])[ord(q.answer) - 65]
    # options must be unique within these questions for the responder's lookup
    assert all(len(set(q.option_list(lg))) == 4 for q in qs for lg in ("en", "zh"))
    with FakeOpenAIServer(responder=responder) as srv:
        res = run_benchmark(IFBench(IFBench.Options(images_dir=str(images))),
                            RunSettings(model="openai:vlm", base_url=[srv.url], judge_model="openai:qwen3-8b",
                                        judge_base_url=[srv.url], data_dir=bench_json, out=tmp_path / "hy",
                                        limit=6, progress=False, max_retries=0))
        asked_first_run = dict(asked_empty)
        parser_bodies = [bd for bd in srv.bodies if _text(bd).startswith(PARSER_HEAD)]
        res_exact = run_benchmark(IFBench(IFBench.Options(images_dir=str(images))),
                                  RunSettings(model="openai:vlm", base_url=[srv.url], data_dir=bench_json,
                                              out=tmp_path / "ex", limit=6, progress=False, max_retries=0))
        res_off = run_benchmark(IFBench(IFBench.Options(images_dir=str(images), answer_parsing="official-first-char")),
                                RunSettings(model="openai:vlm", base_url=[srv.url], judge_model="openai:qwen3-8b",
                                            judge_base_url=[srv.url], data_dir=bench_json, out=tmp_path / "off",
                                            limit=6, progress=False, max_retries=0))
    recs = [json.loads(x) for x in (tmp_path / "hy" / "samples.jsonl").read_text().splitlines()]
    assert len(recs) == 48
    # independent classification of each reply
    kinds = defaultdict(int)
    for r in recs:
        s = re.sub(r"<think>.*?</think>", "", r["reply"], flags=re.S).strip()
        if re.fullmatch(r"[A-D]\.?", s):
            kinds["exact"] += 1
            assert r["outcome"] == "correct" and r["extra"]["judged_by"] == "exact"
        elif s == "":
            kinds["empty" if r["reply"] == "" else "think-only"] += 1
            assert r["outcome"] == "wrong" and r["answer"] is None and not r.get("judge")
            assert r["extra"]["note"] == "empty reply"
        elif "sorry" in s or s.startswith("Answer:"):
            kinds["F"] += 1
            assert r["outcome"] == "unparseable" and r["judge"][-1]["verdict"] == "F"
        else:
            kinds["parsed"] += 1
            assert r["outcome"] == "correct" and r["extra"]["judged_by"] == "parser"
    assert kinds["empty"] > 0 and kinds["think-only"] > 0
    assert res.counts["n_error"] == 0 and res.counts["n_empty"] == kinds["empty"]
    assert asked_first_run and set(asked_first_run.values()) == {2}  # each empty reply re-asked once, no more
    # replies with nothing in them never reach the parser: no parser body holds an empty input
    assert res.counts["n_parser_calls"] == kinds["F"] + kinds["parsed"]
    assert res.counts["n_parser_F"] == kinds["F"]
    assert res.counts["n_unparseable"] == kinds["F"]
    assert res.counts["n_exact"] == kinds["exact"]
    # parser calls: Fig. 11 text, thinking off, temperature 0, deduplicated by content
    assert parser_bodies and all(bd["chat_template_kwargs"] == {"enable_thinking": False} for bd in parser_bodies)
    assert all(bd["temperature"] == 0.0 for bd in parser_bodies)
    assert len(parser_bodies) == len({_text(bd) for bd in parser_bodies})
    assert all(_text(bd).split("Input: ", 1)[1].rsplit("\n    ", 1)[0].strip() for bd in parser_bodies)
    assert all(all(p["type"] == "text" for p in bd["messages"][0]["content"]) for bd in parser_bodies
               if not isinstance(bd["messages"][0]["content"], str))
    # score: correct rotations / 4 per (question, language) -> macro mean -> mean of languages
    units = defaultdict(list)
    for r in recs:
        units[(r["labels"]["qid"], r["labels"]["language"])].append(r["outcome"] == "correct")
    dims = defaultdict(lambda: defaultdict(list))
    for (qid, lang), oks in units.items():
        dims[lang][qid.split("-")[0]].append(sum(oks) / 4)
    lang_avg = [sum(sum(v) / len(v) for v in d.values()) / len(d) for d in dims.values()]
    assert res.metrics["Score"]["Avg"] == pytest.approx(100 * sum(lang_avg) / len(lang_avg))
    # without a judge: exact match only; replies needing the parser are unparseable
    assert res_exact.counts["judge"] == "exact match only" and res_exact.counts["n_parser_calls"] == 0
    assert res_exact.counts["n_unparseable"] == 48 - kinds["exact"] - kinds["empty"] - kinds["think-only"]
    assert "exact match only" in IFBench().tables([res_exact])
    # official first-char: "Answer: X" is read as "A"
    assert res_off.counts["judge_mode"] == "official-first-char" and res_off.counts["n_first_char"] > 0
    off = [json.loads(x) for x in (tmp_path / "off" / "samples.jsonl").read_text().splitlines()]
    for r in off:
        if r["reply"].startswith("Answer:"):
            assert r["answer"] == "A" and r["extra"]["judged_by"] == "first-char"
            assert r["outcome"] == ("correct" if r["target"] == "A" else "wrong")


def test_parser_transport_error_is_not_scored(bench_json, images, tmp_path):
    def responder(body):
        return "maybe (B)"

    def faults(key, attempt):
        return None

    with FakeOpenAIServer(responder=responder, fault_plan=faults) as srv:
        res = run_benchmark(IFBench(IFBench.Options(images_dir=str(images), languages="en")),
                            RunSettings(model="openai:vlm", base_url=[srv.url], judge_model="openai:judge",
                                        judge_base_url=["http://127.0.0.1:9/v1"], data_dir=bench_json,
                                        out=tmp_path / "e", limit=2, progress=False, max_retries=0, timeout_s=2))
    assert not res.complete
    assert res.counts["n_error"] == 8 and res.counts["n_units_missing"] == 2 and res.counts["n"] == 0
    assert res.metrics["Score"]["Avg"] is None
    assert "incomplete" in IFBench().tables([res])


# ------------------------------------------------------------------ GenViP inputs, blind
def test_input_configurations(bench_json, images, translated, raw):
    name0 = raw["Thermal Feature Understanding"][0]["dst_thermal_path"]
    for inp, kinds, tpl in (("if+rgb", ["if", "rgb"], "pair_en"), ("if+rgb+text", ["if", "rgb"], "prior_pair_en"),
                            ("rgb", ["rgb"], "translated_en"), ("if+text", ["if"], "prior_en")):
        b = IFBench(IFBench.Options(images_dir=str(images), translated_dir=str(translated), input=inp))
        r = b.expand(b.load(bench_json)[:1])[0]
        got = [("rgb" if p.path.endswith(".png") else "if") for p in r.images]
        assert got == kinds, inp
        assert Path(r.images[0].path).stem == Path(name0).stem
        assert r.messages[0].parts[-1].text.startswith(load_prompt(tpl).split("<input_question>")[0])
    b = IFBench(IFBench.Options(blind=True))
    qs = b.load(bench_json)  # no image folder needed
    reqs = b.expand(qs)
    assert len(reqs) == 5440 and all(not r.images for r in reqs)
    with pytest.raises(DataError, match="translated"):
        IFBench(IFBench.Options(images_dir=str(images), input="if+rgb", translated_dir=str(images / "nope"))).load(bench_json)


def test_loader_errors_name_file_and_field(tmp_path, images):
    good = {"dataset": "x", "dst_thermal_path": "a.jpg", "question": {
        "dimension": "Object Counting", "answer": "E", "en_question": "q", "cn_question": "q",
        "en_options": {k: k for k in L}, "cn_options": {k: k for k in L}}}
    Image.new("L", (8, 8)).save(tmp_path / "a.jpg")
    p = tmp_path / "if_bench.json"
    p.write_text(json.dumps({"Object Counting": [good]}))
    with pytest.raises(DataError, match=r"Object Counting\[0\]\.question\.answer"):
        IFBench().load(tmp_path)
    good["question"]["answer"] = "A"
    good["dst_thermal_path"] = "missing.jpg"
    p.write_text(json.dumps({"Object Counting": [good]}))
    with pytest.raises(DataError, match="dst_thermal_path"):
        IFBench().load(tmp_path)
    good["dst_thermal_path"] = "a.jpg"
    good["question"]["dimension"] = "Image Theme"
    p.write_text(json.dumps({"Object Counting": [good]}))
    with pytest.raises(DataError, match="dimension"):
        IFBench().load(tmp_path)


# ------------------------------------------------------------------ paper analyses and rendering
def _paper_rows():
    return [{**p, **parse_model_name(p["model"])} for p in paper_table("table2")["rows"]]


def test_scale_correlation_reproduces_paper_table3():
    corr = scale_correlation(_paper_rows())["Corr"]
    paper = paper_table("table3")["Corr"]
    for c, v in paper.items():
        assert round(corr[c], 2) == pytest.approx(v), c


def test_thinking_deltas_reproduce_paper_fig5():
    td = thinking_deltas(_paper_rows())
    assert len(td["pairs"]) == 14  # Sec. 5.2: "14 paired thinking and non-thinking variants"
    m = td["mean"]
    assert round(m["Avg"], 2) == 0.34 and round(m["TL"], 2) == -4.90 and round(m["AR"], 2) == -1.68
    assert round(m["TFU"], 1) == 4.2 and round(m["TFR"], 2) == 4.42


def test_parse_model_name():
    f = parse_model_name("OpenGVLab/InternVL3.5-30B-A3B-Thinking")
    assert f == {"params_b": 30.0, "family": "InternVL3.5-Thinking", "thinking": True, "base": "InternVL3.5-30B-A3B"}
    assert parse_model_name("Qwen/Qwen2.5-VL-7B-Instruct")["family"] == "Qwen2.5-VL"
    assert parse_model_name("Keye-VL-1.5-8B-Auto-Thinking")["thinking"] is False
    assert parse_model_name("gpt-4o")["params_b"] is None


def _result(model, score, **counts):
    cols = ["Avg"] + list(ABBR.values())
    m = {"Score": {c: score for c in cols}, "Strict": {c: score / 2 for c in cols},
         "Score-en": {c: score + 1 for c in cols}, "Score-zh": {c: score - 1 for c in cols}}
    base = {"judge": "exact match only", "n_requests": 5440, "n_error": 0, "input": "if", "blind": False}
    base.update(counts)
    return RunResult(benchmark="if-bench", model=model, metrics=m, counts=base)


def test_render_table2_with_paper_and_multi_run_features():
    rs = [_result("Qwen/Qwen2.5-VL-7B-Instruct", 70.0), _result("Qwen2.5-VL-3B", 60.0), _result("Qwen2.5-VL-32B", 75.0),
          _result("Qwen2.5-VL-7B-Instruct", 74.0, input="if+rgb+text"),
          _result("Qwen2.5-VL-7B-Instruct", 40.0, blind=True),
          _result("Qwen3-VL-8B-Instruct", 78.0), _result("Qwen3-VL-8B-Thinking", 77.0)]
    md = IFBench().tables(rs, "md", with_paper=True)
    assert "| Qwen2.5-VL-7B (paper) | 71.10 | 93.30 |" in md
    assert "Tab. 4 / Tab. 6 layout" in md and "GenViP" in md and "| 4.00 |" in md  # 74 - 70
    assert "BLIND" in md and "language prior" in md
    assert "Tab. 3 layout" in md and "Qwen2.5-VL" in md
    assert "| Qwen3-VL-8B-Thinking - Qwen3-VL-8B-Instruct | -1.00 |" in md
    assert "| Corr (paper) | 0.76 |" in md
    csv = IFBench().tables(rs[:1], "csv")
    assert csv.splitlines()[0] == "Model,Avg,SU,IT,VC,TL,SRU,OC,TFU,AR,TFR,CR"


def test_constant_answer_scores_exactly_25_under_circular_evaluation(bench_json, images, tmp_path):
    """Each original option sits in slot A in exactly one of the 4 rotations, so 'always A' scores 1/4
    on every question (soft) and 0 strict, in every dimension and language."""
    res = run_benchmark(IFBench(IFBench.Options(images_dir=str(images))),
                        RunSettings(model="constant:A", data_dir=bench_json, out=tmp_path / "c", progress=False))
    assert all(v == pytest.approx(25.0) for v in res.metrics["Score"].values())
    assert all(v == 0.0 for v in res.metrics["Strict"].values())
