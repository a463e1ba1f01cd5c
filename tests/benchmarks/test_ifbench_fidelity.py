"""IF-Bench fidelity to the official code (SPEC §1; issues 9 and 12), on crafted inputs.

Expected strings and figures are written out here by hand from the official
``evaluate/bench_evaluate.py`` / ``qwen3_infer.py`` (github.com/casiatao/IF-Bench, 8c49d8b).
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ifbench_fixture import fake_ctx, write_bench  # noqa: E402

from lensbench.benchmarks.ifbench.benchmark import IFBench  # noqa: E402
from lensbench.benchmarks.ifbench.parse import (official_parser_verdict, parse_parser_reply,  # noqa: E402
                                                read_reply, reasoning_cut_off)
from lensbench.benchmarks.ifbench.prompts import load_prompt  # noqa: E402

ZH_HEAD = ("\n    你是一个专业的的多模态大语言模型助手。你将收到一道单项选择题，题目内容包括：\n"
           "    1. 一张红外图像；\n")
ZH_PAIR_ITEM1 = "    1. 一张红外图像与一张对应的可见光图像，可见光图像使用一个图像翻译模型从对应的红外图像转换而来；\n"
ZH_BODY = ("    2. 一个与图像相关的问题；\n"
           "    3. 四个候选答案（A、B、C、D）。\n"
           "\n"
           "    你的任务是：\n"
           "    认真理解图像和问题内容，分析所有选项，从中选择一个最合适的答案。请仅输出一个大写字母（A、B、C 或 D）作为最终答案，"
           "不要添加任何解释、理由或额外内容。\n"
           "\n"
           "    评测要求：\n"
           "    1. 每道题仅有一个正确答案；\n"
           "    2. 禁止随意作答，必须基于图像和问题进行准确判断；\n"
           "    3. 输出格式必须是单个大写英文字母：A、B、C 或 D。\n"
           "\n")


@pytest.fixture()
def crafted(tmp_path):
    """One question, answer B, with a quote in option D (the dict repr switches quotes)."""
    rec = {"dataset": "FLIR", "dst_thermal_path": "x.jpg", "question": {
        "dimension": "Thermal Feature Reasoning", "answer": "B",
        "en_question": "Which object is the hottest?", "en_options": {"A": "person", "B": "car", "C": "tree",
                                                                      "D": "it's a lamp"},
        "cn_question": "图中哪个物体最热？", "cn_options": {"A": "人", "B": "汽车", "C": "树", "D": "it's 路灯"}}}
    return write_bench(tmp_path / "d", {"Thermal Feature Reasoning": [rec]})


def _texts(bench, data):
    return {r.id: r.messages[0].parts[-1].text for r in bench.expand(bench.load(data))}


def test_chinese_prompt_byte_exact_after_rotation(crafted):
    texts = _texts(IFBench(), crafted)
    # rotation 1: slots A-D = original D, A, B, C; the answer B moves to C
    want_zh = (ZH_HEAD + ZH_BODY + "    输入问题是: 图中哪个物体最热？。\n"
               "    输入选项是: {'A': \"it's 路灯\", 'B': '人', 'C': '汽车', 'D': '树'}。\n")
    assert texts["TFR-000/zh/r1"] == want_zh
    want_en = ("\n    You are a professional multimodal large language model assistant. You will be given a single-choice "
               "question that includes:\n    1. One infrared image.\n    2. One question related to the image.\n"
               "    3. Four answer options (A, B, C, D).\n\n    Your task:\n    Carefully analyze the image and the "
               "question, evaluate all answer choices, and select the most appropriate one. Please output only a "
               "single uppercase letter (A, B, C, or D) as your final answer. Do not include any explanations, "
               "reasoning, or additional text.\n\n    Evaluation Guidelines:\n    1. Each question has only one "
               "correct answer.\n    2. Random guessing is not allowed; answers must be based on accurate analysis of "
               "the image and the question.\n    3. The output format must be a single uppercase letter: A, B, C, or "
               "D.\n\n    The input question is: Which object is the hottest?.\n"
               "    The input options are: {'A': 'car', 'B': 'tree', 'C': \"it's a lamp\", 'D': 'person'}.\n")
    assert texts["TFR-000/en/r3"] == want_en  # rotation 3: slots = B, C, D, A
    pair = _texts(IFBench(IFBench.Options(input="if+rgb")), crafted)
    assert pair["TFR-000/zh/r0"] == ("\n    你是一个专业的的多模态大语言模型助手。你将收到一道单项选择题，题目内容包括：\n"
                                     + ZH_PAIR_ITEM1 + ZH_BODY + "    输入问题是: 图中哪个物体最热？。\n"
                                     "    输入选项是: {'A': '人', 'B': '汽车', 'C': '树', 'D': \"it's 路灯\"}。\n")
    reqs = {r.id: r for r in IFBench().expand(IFBench().load(crafted))}
    assert [reqs[f"TFR-000/zh/r{i}"].meta["answer"] for i in range(4)] == ["B", "C", "D", "A"]


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize("inp,order", [("if", ["if"]), ("if+text", ["if"]), ("rgb", ["rgb"]),
                                       ("if+rgb", ["if", "rgb"]), ("if+rgb+text", ["if", "rgb"])])
def test_image_order_per_input_configuration(crafted, inp, order):
    files = {"if": crafted / "infrared_imgs" / "x.jpg", "rgb": crafted / "translated_rgb_imgs" / "x.jpg"}
    b = IFBench(IFBench.Options(input=inp))
    for r in b.expand(b.load(crafted)):
        parts = r.messages[0].parts
        assert [p.type for p in parts] == ["image"] * len(order) + ["text"]  # images first, then the text
        assert [p.sha256 for p in parts[:-1]] == [_sha(files[k]) for k in order]
    blind = IFBench(IFBench.Options(input=inp, blind=True))
    assert all([p.type for p in r.messages[0].parts] == ["text"] for r in blind.expand(blind.load(crafted)))


# ----------------------------------------------------------------- reading replies
@pytest.mark.parametrize("reply,mode,letter,to_parser", [
    # official-first-char reads only an UPPER-case first character (official: output[0] in ["A","B","C","D"])
    ("b", "official-first-char", None, "b"),
    ("c) the car", "official-first-char", None, "c) the car"),
    ("answer: C", "official-first-char", None, "answer: C"),
    ("Answer: c", "official-first-char", "A", None),          # 'A' of "Answer"
    ("  <think>x</think>\n d.", "official-first-char", None, "d."),
    ("b", "hybrid", None, "b"),
    ("**B**", "hybrid", "B", None),
    # an empty reply (or nothing after the reasoning) is never sent to the parser (SPEC: wrong, no parser call)
    ("", "hybrid", None, None),
    ("<think>x</think>\n", "hybrid", None, None),
    (" \n ", "hybrid", None, None),
    ("", "official-first-char", None, None),
    ("<think>x</think>  \n", "official-first-char", None, None),
])
def test_reading_lower_case_and_first_char(reply, mode, letter, to_parser):
    r = read_reply(reply, mode)
    assert r.letter == letter and r.parser_text == to_parser


def test_cut_off_reasoning_goes_to_the_parser_with_the_official_text():
    reply = "  <think>The car is brightest, so the answer is (B), but let me check the tree"
    assert reasoning_cut_off(reply) and not reasoning_cut_off("<think>a</think>B")
    assert reasoning_cut_off("<think>a</think>B <think>more")
    for mode in ("hybrid", "official-first-char"):
        r = read_reply(reply, mode)
        # official: output.strip(); no '</think>' to split on; output[0] = '<' -> llm_check_infer(output)
        assert r.letter is None and r.parser_text == reply.strip()
    # a letter before a cut-off trace is not an exact answer in hybrid mode (SPEC §1) ...
    assert read_reply("B <think>hmm", "hybrid").parser_text == "B <think>hmm"
    # ... while the official rule reads its first character
    assert read_reply("B <think>hmm", "official-first-char").letter == "B"


def test_official_parser_reply_first_character():
    assert official_parser_verdict("Answer: B") == "A"          # the official quirk
    assert official_parser_verdict("B") == "B" and official_parser_verdict("\nC\n") == "C"
    assert official_parser_verdict("<think>\n</think>\n\nD") == "D"
    assert official_parser_verdict("F") == "F" and official_parser_verdict("The answer is B") is None
    assert official_parser_verdict(" B") is None                 # strip("\n") keeps the space
    assert official_parser_verdict("") is None and official_parser_verdict(None) is None
    assert parse_parser_reply("Answer: B") is None               # hybrid keeps rejecting it


def test_evaluate_cut_off_and_official_parser_reply(crafted, tmp_path):
    """Per mode, the records of a run where every model reply has cut-off reasoning and the parser
    answers 'Answer: B' (hybrid: invalid -> unparseable; official: 'A')."""
    parser_head = load_prompt("parser").split("<input_response>")[0]
    seen = []

    def reply(req):
        if req.role == "judge":
            seen.append(req.text)
            return "Answer: B"
        return "<think>It glows, so (C)"

    for mode in ("hybrid", "official-first-char"):
        seen.clear()
        b = IFBench(IFBench.Options(answer_parsing=mode, languages="en"))
        ctx, gen = fake_ctx(tmp_path / mode, reply)
        recs = asyncio.run(b.evaluate(b.load(crafted), ctx))
        assert len(seen) == 4 and all(t == parser_head + "<think>It glows, so (C)" + "\n    " for t in seen)
        targets = [r.target for r in recs]
        assert targets == ["B", "C", "D", "A"]
        if mode == "hybrid":
            assert [r.outcome for r in recs] == ["unparseable"] * 4
            assert all(r.extra["note"] == "invalid parser reply" for r in recs)
        else:
            assert [r.answer for r in recs] == ["A"] * 4
            assert [r.outcome for r in recs] == ["wrong", "wrong", "wrong", "correct"]
            metrics, counts = b.aggregate(recs)
            # one question, 1 of 4 rotations right: soft 25, strict 0; only TFR present in en
            assert metrics["Score-en"]["TFR"] == 25.0 and metrics["Score"]["Avg"] == 25.0
            assert metrics["Strict"]["Avg"] == 0.0 and counts["n_parser_calls"] == 4
        assert all(r.judge[0].request_id == r.sample_id + "/parser" for r in recs)
