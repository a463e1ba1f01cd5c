"""Golden scenarios: every benchmark x every option that changes scores or requests.

A :class:`Scenario` is one or more ``lensbench run BENCH ...`` invocations (``runs``: the args
after the benchmark name; ``--out`` and ``--no-progress`` are added by the harness) followed by
``lensbench report`` over all of its runs. Placeholders: ``{FIX}`` the (copied) fixture folder,
``{RUN0}``.. the run folders, ``{SERVER}`` the fake OpenAI server's base URL for this scenario.
Flags are written with their pre-restructure names; renames go through ``harness.FLAGS``.

``scripts`` maps the model name of an ``openai:NAME`` backend to a reply script
``fn(ReqView, ScriptContext) -> str | {"content", "reasoning_content"}``: replies are a pure
function of the request content (never of arrival order), so the goldens are deterministic.
Replies are deliberately varied: correct, wrong, lower-case, wrapped letters, prose, reasoning
traces (``<think>..</think>`` and a ``reasoning_content`` channel), unparseable text.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from harness import ReqView, ScriptContext


@dataclass
class Scenario:
    name: str
    bench: str
    runs: list[list[str]]
    scripts: dict[str, Any] = field(default_factory=dict)
    description: str = ""


def pick(key: str, options: list):
    """Deterministic choice by SHA-256 of ``key`` (independent of PYTHONHASHSEED)."""
    h = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:12], 16)
    return options[h % len(options)]


# ============================================================================ reply scripts
# --- RGB-Th-Bench
def _rgbth_gold(ctx: ScriptContext) -> dict[str, str]:
    if "rgbth_gold" not in ctx.cache:
        gold = {}
        for p in sorted((ctx.fixtures / "rgbth" / "Data").glob("*/*/questions.json")):
            for it in json.loads(p.read_text(encoding="utf-8"))["data"]:
                for qa in it["QAs"]:
                    gold.setdefault(qa["question"].strip(), qa["answer"].strip().capitalize())
        ctx.cache["rgbth_gold"] = gold
    return ctx.cache["rgbth_gold"]


def rgbth_model(req: ReqView, ctx: ScriptContext):
    q = req.text.strip().splitlines()[-1]
    g = _rgbth_gold(ctx)[q]
    o = "No" if g == "Yes" else "Yes"
    pol = pick(f"{q}|{len(req.images)}|{req.images[0]['size'] if req.images else ''}",
               ["{g}", "{g}", "{g}.", "{o}", "{gl}", "<think>the colours say {g}</think>{g}", "I don't know.",
                "Nobody can tell.", "{o}, definitely", {"content": "{g}", "reasoning_content": "thermal reasoning"}])
    if isinstance(pol, dict):
        return {"content": pol["content"].format(g=g), "reasoning_content": pol["reasoning_content"]}
    return pol.format(g=g, o=o, gl=g.lower())


# --- IF-Bench
def _if_questions(ctx: ScriptContext) -> dict[int, dict]:
    if "if_q" not in ctx.cache:
        out = {}
        for recs in ctx.load_json("ifbench/if_bench.json").values():
            for r in recs:
                q = r["question"]
                n = int(re.match(r"Q(\d+)", q["en_question"]).group(1))
                out[n] = q
        ctx.cache["if_q"] = out
    return ctx.cache["if_q"]


def if_model(req: ReqView, ctx: ScriptContext):
    text = req.text
    n = int(re.search(r"Q(\d\d)", text).group(1))
    q = _if_questions(ctx)[n]
    zh = "输入问题" in text
    correct_text = q["cn_options" if zh else "en_options"][q["answer"]]
    m = re.search(r"'([ABCD])': ['\"]" + re.escape(correct_text) + r"['\"]", text)
    right = m.group(1)
    wrong = "ABCD"[("ABCD".index(right) + 1) % 4]
    key = f"{n}|{zh}|{right}|{len(req.images)}|{'prior' if 'prior' in text.lower() or '先验' in text else ''}"
    pol = pick(key, ["{R}", "{R}", "{R}", "{r}", "{W}", "Answer: {R}", "<think>the heat says {R}</think>{R}",
                     "**{R}**", "({W})", "The correct option is {R}.", "I cannot tell from this image.", "{R}.",
                     "<think>maybe {W}</think>\n\n{w}", "<think>I think it is {R} but", "[{R}]",
                     {"content": "{R}", "reasoning_content": "reasoning channel"}])
    if isinstance(pol, dict):
        return {"content": pol["content"].format(R=right), "reasoning_content": pol["reasoning_content"]}
    return pol.format(R=right, r=right.lower(), W=wrong, w=wrong.lower())


def if_parser(req: ReqView, ctx: ScriptContext):
    resp = req.text.split("Input: ", 1)[1].strip()
    m = re.search(r"(?:answer|option) is \(?([A-Da-d])\b|Answer: ([A-D])|^\(?\[?([A-Da-d])\]?\)?\.?$", resp)
    if m:
        letter = next(g for g in m.groups() if g).upper()
        return pick(resp, [letter, letter, f"{letter}.", f"<think>x</think>{letter}"])
    if "cannot" in resp.lower():
        return "F"
    return pick(resp, ["F", "The answer is B", "<think>unsure</think>C", "Z"])


# --- IV-Bench
def _iv_queries(ctx: ScriptContext) -> list[dict]:
    if "iv_q" not in ctx.cache:
        out = []
        for rel in ("ivbench/test_data.jsonl", "ivbench/extra.jsonl"):
            for line in ctx.load_json(rel):
                for vid, qs in line.items():
                    for q in qs:
                        out.append({"vid": vid, **q})
        ctx.cache["iv_q"] = out
    return ctx.cache["iv_q"]


def iv_model(req: ReqView, ctx: ScriptContext):
    text = req.text
    q = next(q for q in _iv_queries(ctx) if q["question"] in text)
    opts = dict(re.findall(r"^([a-j])\. (.*)$", text, re.M))
    right = next(k for k, v in opts.items() if v.strip() == q["answer"].strip())
    wrong = next(k for k in sorted(opts) if k != right)
    n_img = len(req.images)
    sizes = sorted({tuple(i["size"]) for i in req.images})
    good = n_img >= 8
    key = f"{q['vid']}/{q['data_id']}|{n_img}|{sizes[0] if sizes else ''}"
    pols = (["{L}", "{l}", "The answer is ({L}).", "{answer}", "<think>frames</think>{L}", "Answer: {l}", "{W}"]
            if good else ["{W}", "{w}", "{L}", "I am not sure.", "{l}. {answer}", "**{W}**"])
    return pick(key, pols).format(L=right.upper(), l=right, W=wrong.upper(), w=wrong, answer=q["answer"])


# --- GOBench
def gobench_model(req: ReqView, ctx: ScriptContext):
    ident = req.images[0]["image"]
    m = re.search(r"((?:direct|reflect|refracted)_light_images)[/_#](\d+(?:\.\d+)?)", ident)
    key = f"{m.group(1)}_{m.group(2)}" if m else ident
    h = hashlib.sha256(f"go-live|{key}|{req.text[:40]}".encode()).digest()
    ans = [["Yes", "No", "Cannot Determine"][b % 3] for b in h[:5]]
    aes, fid = 1 + h[5] % 5, 1 + h[6] % 5
    style = pick(key + req.text[:60], list(range(7)))
    if style == 0:
        return json.dumps({"realityAnswers_Eval": ans, "aestheticsRating_Eval": aes, "consistencyRating_Eval": fid,
                           "reasoning_Eval": "fine", "model_used_for_eval": "x"})
    if style == 1:
        return {"content": "```json\n" + json.dumps({"realityAnswers_Eval": {f"Q{i + 1}": a for i, a in enumerate(ans)},
                                                     "aestheticsRating_Eval": f"{aes} (Good)",
                                                     "consistencyRating_Eval": fid}) + "\n```",
                "reasoning_content": "looked at the light"}
    if style == 2:
        return "<think>{the light}</think>\n{'realityAnswers_Eval': %r, 'aestheticsRating_Eval': %d, " \
               "'consistencyRating_Eval': %d}" % (ans, aes, fid)
    if style == 3:
        return "\n".join(f"{i + 1}. {a}" for i, a in enumerate(ans)) + \
            f"\nAesthetics Rating: {aes}\nInstruction Consistency Rating: {fid}/5"
    if style == 4:
        return "The image looks nice but I cannot rate it."
    if style == 5:
        return f"Reality Assessment\nTotal Score: {sum({'Yes': 1, 'No': 0}.get(a, 0.5) for a in ans)}\n" \
               f"Aesthetics Rating: {aes}\nInstruction Consistency Rating: {fid}"
    return json.dumps({"realityAnswers_Eval": ans[:4], "aestheticsRating_Eval": aes, "consistencyRating_Eval": fid})


# --- GroundingME
def _gm_items(ctx: ScriptContext) -> dict[str, dict]:
    if "gm" not in ctx.cache:
        out = {}
        with open(ctx.fixtures / "gm" / "tsv" / "groundingme.tsv", encoding="utf-8", newline="") as fh:
            csv.field_size_limit(1 << 30)
            for row in csv.DictReader(fh, delimiter="\t"):
                sid = re.search(r"of (gm-\d+)", row["question"]).group(1)
                out[row["question"]] = {"sid": sid, "w": int(row["width"]), "h": int(row["height"]),
                                        "l1": row["subtask_l1"],
                                        "box": json.loads(row["answer"]) if row["answer"] else None}
        ctx.cache["gm"] = out
    return ctx.cache["gm"]


def _smart_resize(h: int, w: int, factor: int = 28, min_pixels: int = 3136, max_pixels: int = 12845056):
    hb, wb = max(factor, round(h / factor) * factor), max(factor, round(w / factor) * factor)
    if hb * wb > max_pixels:
        beta = math.sqrt(h * w / max_pixels)
        hb, wb = math.floor(h / beta / factor) * factor, math.floor(w / beta / factor) * factor
    elif hb * wb < min_pixels:
        beta = math.sqrt(min_pixels / (h * w))
        hb, wb = math.ceil(h * beta / factor) * factor, math.ceil(w * beta / factor) * factor
    return hb, wb


def _to_conv(box, fmt: str, sent, orig):
    x1, y1, x2, y2 = box
    ow, oh = orig
    if fmt == "abs":
        sx, sy = sent[0] / ow, sent[1] / oh
        return [round(x1 * sx), round(y1 * sy), round(x2 * sx), round(y2 * sy)]
    if fmt == "abs-resized":
        rh, rw = _smart_resize(sent[1], sent[0])
        return [round(x1 * rw / ow), round(y1 * rh / oh), round(x2 * rw / ow), round(y2 * rh / oh)]
    if fmt == "rel1000":
        return [round(x1 / ow * 1000), round(y1 / oh * 1000), round(x2 / ow * 1000), round(y2 / oh * 1000)]
    if fmt == "rel1":
        return [round(x1 / ow, 3), round(y1 / oh, 3), round(x2 / ow, 3), round(y2 / oh, 3)]
    if fmt == "yxyx1000":
        return [round(y1 / oh * 1000), round(x1 / ow * 1000), round(y2 / oh * 1000), round(x2 / ow * 1000)]
    raise ValueError(fmt)


def gm_model(req: ReqView, ctx: ScriptContext, fmt: str = "abs"):
    desc = req.text.split("describes:\n", 1)[1].split("\n", 1)[0]
    it = _gm_items(ctx)[desc]
    sent = req.images[0]["size"]
    seed = req.seed if req.seed is not None else 0
    key = f"{it['sid']}|{seed}|{fmt}"
    if it["l1"] == "Rejection":
        return pick(key, ['{"bbox_2d": null}', "<think>careful: nothing matches</think>{\"bbox_2d\": null}",
                          "{'bbox_2d': None}", '<think>hasty</think>{"bbox_2d": [5, 5, 40, 40]}',
                          "I do not see it.", {"content": '{"bbox_2d": null}', "reasoning_content": "careful search"}])
    b = _to_conv(it["box"], fmt, sent, (it["w"], it["h"]))
    shift = [v + (max(1, round(0.08 * (b[2] - b[0]))) if isinstance(v, int) else round(0.08 * (b[2] - b[0]), 3))
             for v in b]
    far = [0, 0, b[0] // 2 if isinstance(b[0], int) else 0.01, b[1] // 2 if isinstance(b[1], int) else 0.01]
    pol = pick(key, [
        "exact", "exact", "think_exact", "shift", "far", "null", "prose", "single", "nested", "two", "bare",
        "reasoning_channel",
    ])
    j = json.dumps
    return {
        "exact": j({"bbox_2d": b}),
        "think_exact": "<think>careful look at every object</think>```json\n" + j({"bbox_2d": b}) + "\n```",
        "shift": "<think>careful, roughly</think>" + j({"bbox_2d": shift}),
        "far": "<think>hasty</think>" + j({"bbox_2d": far}),
        "null": '<think>hasty</think>{"bbox_2d": null}',
        "prose": f"The object is near the middle, about {b[0]} from the left.",
        "single": "{'bbox_2d': %s}" % b,
        "nested": j({"bbox_2d": [b]}),
        "two": j({"bbox_2d": far}) + " then corrected: " + j({"bbox_2d": b}),
        "bare": f"Coordinates: {b[0]}, {b[1]}, {b[2]}, {b[3]}",
        "reasoning_channel": {"content": j({"bbox_2d": b}), "reasoning_content": "careful reasoning in a channel"},
    }[pol]


def gm_judge_text(req: ReqView, ctx: ScriptContext):
    text = req.text
    a = text.split("[Full Content of Response A]", 1)[1].split("[Full Content of Response B]", 1)[0]
    b = text.split("[Full Content of Response B]", 1)[1].split("# Output", 1)[0]
    sid = re.search(r"of (gm-\d+)", text).group(1)
    if sid == "gm-06":
        return "Both look similar; no choice."
    if sid == "gm-05" and (req.temperature or 0) == 0:
        return "<think>hard</think>I need more time."
    ca, cb = "careful" in a, "careful" in b
    if ca != cb:
        return "\\boxed{A}" if ca else "\\boxed{B}"
    return "<think>length</think>\\boxed{%s}" % ("A" if len(a) <= len(b) else "B")


def gm_judge_mm(req: ReqView, ctx: ScriptContext):
    text = req.text
    sid = re.search(r"of (gm-\d+)", text).group(1)
    ba = re.search(r"^Bbox A: (.*)$", text, re.M).group(1)
    bb = re.search(r"^Bbox B: (.*)$", text, re.M).group(1)
    if sid == "gm-03" and (req.seed or 0) < 2:
        return "Explanation without a verdict."
    if sid == "gm-08":
        return "cannot judge"

    def score(s):
        if s.startswith("none"):
            return 1e9
        if s == "null":
            return -1.0
        return sum(float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", s))

    return "Reasoning about the image.\n\\boxed{%s}" % ("A" if score(ba) <= score(bb) else "B")


# ============================================================================ scenarios
RGB = ["--data-dir", "{FIX}/rgbth/Data"]
IF = ["--data-dir", "{FIX}/ifbench"]
IV = ["--data-dir", "{FIX}/ivbench"]
GO = ["--data-dir", "{FIX}/gobench/data"]
GM = ["--data-dir", "{FIX}/gm/hf"]
SRV = ["--base-url", "{SERVER}"]
IF_PARSER = ["--judge-model", "openai:fake-parser", "--judge-base-url", "{SERVER}"]
IF_SCRIPTS = {"fake-if": if_model, "fake-parser": if_parser}
GO_JSON = ('{"realityAnswers_Eval": ["Yes", "No", "Cannot Determine", "Yes", "Yes"], '
           '"aestheticsRating_Eval": 4, "consistencyRating_Eval": 3}')


def _gm(fmt: str) -> dict[str, Any]:
    return {"fake-gm": partial(gm_model, fmt=fmt)}


SCENARIOS: list[Scenario] = [
    # ------------------------------------------------------------------ RGB-Th-Bench
    Scenario("rgbth_default_replay_alpha", "rgb-th-bench",
             [[*RGB, "--model", "replay:{FIX}/rgbth/benchmark_results_two_models.json", "--replay-model", "alpha-vl"]],
             description="14 paper skills; third-party result file, one model of two; duplicate-question defect unit"),
    Scenario("rgbth_extra_skills_replay_alpha", "rgb-th-bench",
             [[*RGB, "--model", "replay:{FIX}/rgbth/benchmark_results_two_models.json", "--replay-model", "alpha-vl",
               "--include-extra-skills"]],
             description="--include-extra-skills (the two Text Reference skills, reported apart)"),
    Scenario("rgbth_incomplete_replay_beta", "rgb-th-bench",
             [[*RGB, "--model", "replay:{FIX}/rgbth/benchmark_results_two_models.json", "--replay-model", "beta-vl"]],
             description="recorded 'Error:' replies and missing replies: transport errors, incomplete run (exit 3)"),
    Scenario("rgbth_lens_jsonl_extra", "rgb-th-bench",
             [[*RGB, "--model", "replay:{FIX}/rgbth/gamma_replay.jsonl", "--include-extra-skills",
               "--model-name", "Gamma-VL-7B"]],
             description="lensbench export JSONL replay (request ids), recorded errors, display name"),
    Scenario("rgbth_openai_default", "rgb-th-bench", [[*RGB, "--model", "openai:fake-rgbth", *SRV]],
             scripts={"fake-rgbth": rgbth_model}, description="HTTP backend: request bodies (images RGB then thermal)"),
    Scenario("rgbth_openai_extra_png_small", "rgb-th-bench",
             [[*RGB, "--model", "openai:fake-rgbth", *SRV, "--include-extra-skills", "--image-format", "png",
               "--image-max-side", "24", "--temperature", "0.2", "--max-tokens", "16", "--seed", "3"]],
             scripts={"fake-rgbth": rgbth_model},
             description="extra skills + transport settings that change the bodies (png, max side, overrides)"),
    Scenario("rgbth_baselines", "rgb-th-bench",
             [[*RGB, "--model", "constant:Yes"], [*RGB, "--model", "random", "--seed", "7"]],
             description="constant and seeded random baselines, reported together"),
    # ------------------------------------------------------------------ IF-Bench
    Scenario("if_exact_only_replay", "if-bench", [[*IF, "--model", "replay:{FIX}/ifbench/replay_model.jsonl"]],
             description="no judge: exact single letters only; both languages, 4 rotations"),
    Scenario("if_hybrid_replay_parser", "if-bench",
             [[*IF, "--model", "replay:{FIX}/ifbench/replay_model.jsonl",
               "--judge-model", "replay:{FIX}/ifbench/replay_parser.jsonl"]],
             description="hybrid judgment with a replayed Fig. 11 parser (F, invalid and letter verdicts)"),
    Scenario("if_hybrid_openai_parser", "if-bench", [[*IF, "--model", "openai:fake-if", *SRV, *IF_PARSER]],
             scripts=IF_SCRIPTS, description="hybrid judgment, model and parser over HTTP (bodies of both)"),
    Scenario("if_first_char_openai_parser", "if-bench",
             [[*IF, "--model", "openai:fake-if", *SRV, *IF_PARSER, "--judge", "official-first-char"]],
             scripts=IF_SCRIPTS, description="--judge official-first-char with the parser for the rest"),
    Scenario("if_first_char_replay_no_parser", "if-bench",
             [[*IF, "--model", "replay:{FIX}/ifbench/replay_model.jsonl", "--judge", "official-first-char"]],
             description="--judge official-first-char without a parser"),
    Scenario("if_no_circular_openai", "if-bench",
             [[*IF, "--model", "openai:fake-if", *SRV, *IF_PARSER, "--no-circular"]],
             scripts=IF_SCRIPTS, description="--no-circular: one rotation"),
    Scenario("if_blind_openai", "if-bench", [[*IF, "--model", "openai:fake-if", *SRV, *IF_PARSER, "--blind"]],
             scripts=IF_SCRIPTS, description="--blind: the same prompts without images"),
    Scenario("if_input_if_text_openai", "if-bench", [[*IF, "--model", "openai:fake-if", *SRV, "--input", "if+text"]],
             scripts=IF_SCRIPTS, description="--input if+text (Fig. 13 prior), exact only"),
    Scenario("if_input_rgb_openai", "if-bench", [[*IF, "--model", "openai:fake-if", *SRV, "--input", "rgb"]],
             scripts=IF_SCRIPTS, description="--input rgb (translated image only)"),
    Scenario("if_input_if_rgb_openai", "if-bench", [[*IF, "--model", "openai:fake-if", *SRV, "--input", "if+rgb"]],
             scripts=IF_SCRIPTS, description="--input if+rgb (Fig. 12 dual-image prompt)"),
    Scenario("if_input_if_rgb_text_openai_parser", "if-bench",
             [[*IF, "--model", "openai:fake-if", *SRV, *IF_PARSER, "--input", "if+rgb+text",
               "--translated-dir", "{FIX}/ifbench/translated_rgb_imgs"]],
             scripts=IF_SCRIPTS, description="--input if+rgb+text (GenViP) with --translated-dir and the parser"),
    Scenario("if_en_only_flags_openai", "if-bench",
             [[*IF, "--model", "openai:fake-if", *SRV, *IF_PARSER, "--languages", "en", "--image-dir",
               "{FIX}/ifbench/infrared_imgs", "--thinking", "--parser-max-tokens", "8", "--no-parser-disable-thinking"]],
             scripts=IF_SCRIPTS,
             description="--languages en, --image-dir, --thinking (body + report), parser max tokens / thinking flag"),
    Scenario("if_baselines", "if-bench",
             [[*IF, "--model", "constant:A"], [*IF, "--model", "random", "--seed", "5"]],
             description="constant A and seeded random baselines"),
    Scenario("if_multi_run_report", "if-bench", [
        [*IF, "--model", "random", "--seed", "1", "--model-name", "Qwen2.5-VL-3B-Instruct"],
        [*IF, "--model", "random", "--seed", "2", "--model-name", "Qwen2.5-VL-7B-Instruct"],
        [*IF, "--model", "random", "--seed", "3", "--model-name", "Qwen2.5-VL-72B-Instruct"],
        [*IF, "--model", "random", "--seed", "4", "--model-name", "InternVL3-8B-Thinking"],
        [*IF, "--model", "random", "--seed", "6", "--model-name", "InternVL3-8B"],
        [*IF, "--model", "constant:B", "--model-name", "Qwen2.5-VL-7B-Instruct", "--input", "if+rgb+text"],
        [*IF, "--model", "constant:C", "--model-name", "Qwen2.5-VL-7B-Instruct", "--blind"],
    ], description="multi-run report: scale correlation (Tab. 3), thinking deltas (Fig. 5), inputs vs vanilla"),
    # ------------------------------------------------------------------ IV-Bench
    Scenario("iv_default_replay", "iv-bench", [[*IV, "--model", "replay:{FIX}/ivbench/replay.jsonl"]],
             description="defaults: 32 frames (segment centres), video-first, official text style"),
    Scenario("iv_video_first_openai", "iv-bench", [[*IV, "--model", "openai:fake-iv", *SRV, "--frames", "8"]],
             scripts={"fake-iv": iv_model}, description="video-first pattern (frames, image, text)"),
    Scenario("iv_image_first_openai", "iv-bench",
             [[*IV, "--model", "openai:fake-iv", *SRV, "--frames", "8", "--pattern", "image-first"]],
             scripts={"fake-iv": iv_model}, description="image-first pattern"),
    Scenario("iv_text_only_openai", "iv-bench",
             [[*IV, "--model", "openai:fake-iv", *SRV, "--frames", "8", "--pattern", "text-only"]],
             scripts={"fake-iv": iv_model}, description="text-only pattern (no query image)"),
    Scenario("iv_sweep_openai", "iv-bench",
             [[*IV, "--model", "openai:fake-iv", *SRV, "--frames", "4,8", "--resolution", "48,native"]],
             scripts={"fake-iv": iv_model}, description="frames x resolution sweep in one run"),
    Scenario("iv_pairs_constant", "iv-bench",
             [[*IV, "--model", "constant:b", "--pairs", "4x48,6x64,8xnative"]],
             description="--pairs explicit FRAMESxRES configs"),
    Scenario("iv_linspace_clean_seed_openai", "iv-bench",
             [[*IV, "--model", "openai:fake-iv", *SRV, "--frames", "6", "--frame-rule", "linspace", "--text-style",
               "clean", "--seed", "3"]],
             scripts={"fake-iv": iv_model}, description="linspace frames, clean text, another option shuffle seed"),
    Scenario("iv_fps_random", "iv-bench",
             [[*IV, "--model", "random", "--seed", "11", "--frames", "8", "--frame-rule", "fps:2"]],
             description="fps:2 frame rule, seeded random baseline"),
    Scenario("iv_skip_missing_openai", "iv-bench",
             [[*IV, "--model", "openai:fake-iv", *SRV, "--frames", "4", "--questions", "{FIX}/ivbench/extra.jsonl",
               "--skip-missing"]],
             scripts={"fake-iv": iv_model},
             description="--questions, --skip-missing (missing video / image), an undecodable video (exit 3)"),
    # ------------------------------------------------------------------ GOBench
    Scenario("go_official_csv_genA_openai", "gobench",
             [[*GO, "--model", "openai:fake-go", *SRV, "--human-ratings", "{FIX}/gobench/ratings.csv",
               "--ratings-generator", "genA"]],
             scripts={"fake-go": gobench_model},
             description="official prompt style; per-rater CSV ground truth (majority labels), one image missing"),
    Scenario("go_vlmevalkit_tsv_openai", "gobench",
             [[*GO, "--model", "openai:fake-go", *SRV, "--prompt-style", "vlmevalkit", "--human-ratings",
               "{FIX}/gobench/GOBench.tsv", "--image-cache", "{RUN0}/tsv_images"]],
             scripts={"fake-go": gobench_model},
             description="--prompt-style vlmevalkit with GOBench.tsv (integer indices; missing image from the TSV)"),
    Scenario("go_delta_max_replay", "gobench", [
        [*GO, "--model", "replay:{FIX}/gobench/replay.jsonl", "--human-ratings", "{FIX}/gobench/GOBench.tsv",
         "--image-cache", "{RUN0}/tsv_images"],
        [*GO, "--model", "replay:{FIX}/gobench/replay.jsonl", "--human-ratings", "{FIX}/gobench/GOBench.tsv",
         "--image-cache", "{RUN1}/tsv_images", "--delta-max", "1.0", "--model-name", "replay-go (delta 1.0)"],
    ], description="the same replies scored with delta_max 0.5 and 1.0"),
    Scenario("go_categories_genB_constant", "gobench",
             [[*GO, "--model", "constant:" + GO_JSON, "--human-ratings", "{FIX}/gobench/ratings.csv",
               "--ratings-generator", "genB", "--categories", "direct_light_images,refracted_light_images"]],
             description="--categories filter, other generator's ratings, constant critic reply"),
    Scenario("go_random_no_gt", "gobench", [[*GO, "--model", "random", "--seed", "2"]],
             description="random critic baseline, no ground truth (model means only)"),
    Scenario("go_layout_scenario_openai", "gobench",
             [[*GO, "--model", "openai:fake-go", *SRV, "--layout", "scenario"]],
             scripts={"fake-go": gobench_model}, description="--layout scenario (<category>/<N>.png)"),
    # ------------------------------------------------------------------ GroundingME
    *[Scenario(f"gm_{fmt.replace('-', '_')}_openai", "groundingme",
               [[*GM, "--model", "openai:fake-gm", *SRV, "--bbox-format", fmt]], scripts=_gm(fmt),
               description=f"--bbox-format {fmt}")
      for fmt in ("abs", "abs-resized", "rel1000", "rel1", "yxyx1000")],
    Scenario("gm_official_compat_openai", "groundingme",
             [[*GM, "--model", "openai:fake-gm", *SRV, "--official-compat"]], scripts=_gm("abs"),
             description="--official-compat (best IoU over readings; unparseable = rejection)"),
    Scenario("gm_max_pixels_abs_openai", "groundingme",
             [[*GM, "--model", "openai:fake-gm", *SRV, "--max-pixels", "40000"]], scripts=_gm("abs"),
             description="--max-pixels downscaling, abs boxes mapped back to original pixels"),
    Scenario("gm_tsv_layout_rel1000_openai", "groundingme",
             [["--data-dir", "{FIX}/gm/tsv", "--model", "openai:fake-gm", *SRV, "--bbox-format", "rel1000"]],
             scripts=_gm("rel1000"), description="VLMEvalKit groundingme.tsv layout (image stored once, referenced)"),
    Scenario("gm_replay_rel1000", "groundingme",
             [[*GM, "--model", "replay:{FIX}/gm/replay_rel1000.jsonl", "--bbox-format", "rel1000"]],
             description="replayed replies (fences, single quotes, bare numbers)"),
    Scenario("gm_best_of_4_text_judge", "groundingme",
             [[*GM, "--model", "openai:fake-gm", *SRV, "--bbox-format", "rel1000", "--best-of", "4", "--judge",
               "text:openai:judge-text", "--judge-base-url", "{SERVER}"]],
             scripts={**_gm("rel1000"), "judge-text": gm_judge_text},
             description="best-of-4, text judge (Table 11) given as --judge text:SPEC; retries and fallbacks"),
    Scenario("gm_best_of_4_mm_judge", "groundingme",
             [[*GM, "--model", "openai:fake-gm", *SRV, "--bbox-format", "abs", "--best-of", "4", "--judge", "mm",
               "--judge-model", "openai:judge-mm", "--judge-base-url", "{SERVER}", "--judge-retries", "2"]],
             scripts={**_gm("abs"), "judge-mm": gm_judge_mm},
             description="best-of-4, multimodal judge (Table 10: image + boxes), --judge-retries 2"),
    Scenario("gm_best_of_3_no_judge", "groundingme",
             [[*GM, "--model", "openai:fake-gm", *SRV, "--bbox-format", "rel1000", "--best-of", "3"]],
             scripts=_gm("rel1000"), description="best-of-3 without a judge (average and oracle rows only)"),
]

BY_NAME = {s.name: s for s in SCENARIOS}
assert len(BY_NAME) == len(SCENARIOS), "duplicate scenario names"
