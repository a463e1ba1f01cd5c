"""Generate the golden-test fixtures ONCE (deterministic; the outputs are committed).

    python tests/golden/make_fixtures.py        # rewrites tests/golden/fixtures/

Small synthetic inputs in each benchmark's official release format (see each section), replay
files of recorded replies, and ``image_catalog.json``: for every image (and every video frame)
the fixtures contain, an id and an 8x8 colour signature, used by the harness to tell which
fixture image a request carried however the client re-encoded it. The tests never regenerate
these bytes (so nothing depends on the Pillow / libx264 version at test time); re-running this
script may change image bytes and then requires re-recording the goldens (``record.py``).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import shutil
import sys
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import FIXTURES, image_signature  # noqa: E402

CATALOG: dict[str, dict] = {}  # sha256 of bytes (or frame key) -> {"id", "sig"}


def rng(*key) -> np.random.Generator:
    h = hashlib.sha256("|".join(map(str, key)).encode()).digest()
    return np.random.default_rng(int.from_bytes(h[:8], "big"))


def pick(key: str, options: list):
    h = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:12], 16)
    return options[h % len(options)]


def pattern(key: str, size: tuple[int, int], blocks=(4, 3), gray=False) -> Image.Image:
    """A random block pattern (distinct per key): ``blocks`` colour cells upscaled to ``size``."""
    g = rng("img", key)
    bw, bh = blocks
    if gray:
        cells = g.integers(0, 256, (bh, bw), dtype=np.uint8)
        cells = np.stack([cells] * 3, axis=-1)
    else:
        cells = g.integers(0, 256, (bh, bw, 3), dtype=np.uint8)
    im = Image.fromarray(cells, "RGB").resize(size, Image.Resampling.NEAREST)
    return im


def encode(im: Image.Image, fmt: str) -> bytes:
    buf = io.BytesIO()
    if fmt == "JPEG":
        im.convert("RGB").save(buf, "JPEG", quality=92)
    else:
        im.save(buf, "PNG", optimize=False)
    return buf.getvalue()


def register(name: str, data: bytes) -> None:
    sha = hashlib.sha256(data).hexdigest()
    if sha in CATALOG:
        return
    with Image.open(io.BytesIO(data)) as im:
        CATALOG[sha] = {"id": name, "sha256": sha, "sig": image_signature(im)}


def write_image(rel: str, im: Image.Image) -> bytes:
    fmt = "JPEG" if rel.lower().endswith((".jpg", ".jpeg")) else "PNG"
    data = encode(im, fmt)
    p = FIXTURES / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    register(rel, data)
    return data


def write_json(rel: str, obj, indent=1) -> None:
    p = FIXTURES / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(obj, ensure_ascii=False, indent=indent) + "\n", encoding="utf-8")


def write_jsonl(rel: str, rows) -> None:
    p = FIXTURES / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


# ============================================================================ RGB-Th-Bench
RGBTH_SKILLS = [  # skill_type, abbrev, thermal pair?
    ("Scene Understanding", "Scene", False), ("Detailed Object Presence", "ObjPr", False),
    ("Instance Attributes", "Attr", False), ("Instance Location w.r.t. Image", "LocIm", False),
    ("Instance Spatial Relation", "SpRel", False), ("Instance Counting", "Count", False),
    ("Instance Interaction", "Interact", False),
    ("Numerical Text Reference Understanding", "NumText", False),
    ("Non-Numerical Text Reference Understanding", "NonNumText", False),
    ("Temperature to Color Mapping Understanding", "Temp2Col", True), ("RGB-Thermal-Heatmap Alignment", "HeatAlign", True),
    ("Instance Thermal Attribute", "ThermAttr", True), ("Relative Thermal Attribute", "RelTherm", True),
    ("Warmest Areas Detection", "Warmest", True), ("Coldest Areas Detection", "Coldest", True),
    ("Risk and Anomaly Detection", "Anomaly", True),
]
RGBTH_SCENES = [("Source 1", "Attic"), ("Source 1", "Fuse panel"), ("Source 2", "Garage door")]
RGBTH_REPLIES = ["Yes", "No", "yes.", "No, it is not.", "I don't know.", "<think>the panel looks warm</think>Yes",
                 "Nobody is there.", "Yes and no", "NO", "**Yes**", "Answer: no", "<think>cold</think>\n\nNo."]


def make_rgbth() -> None:
    root = "rgbth/Data"
    questions: list[tuple[str, str, str, str, str]] = []  # (file, skill, question, answer, request id)
    for si, (src, scene) in enumerate(RGBTH_SCENES):
        write_image(f"{root}/{src}/{scene}/rgb.jpg", pattern(f"rgbth-rgb-{scene}", (48, 36)))
        write_image(f"{root}/{src}/{scene}/thermal.jpg", pattern(f"rgbth-th-{scene}", (48, 36), blocks=(3, 3)))
        items = []
        for ki, (skill, abbrev, pair) in enumerate(RGBTH_SKILLS):
            n = 4
            if (scene, abbrev) == ("Attic", "Scene"):
                n = 3
            if (scene, abbrev) == ("Garage door", "Count"):
                n = 5
            qas = []
            for j in range(n):
                q = f"Is there a {['red', 'warm', 'small', 'round', 'bright'][j]} object #{j} for {abbrev} in the {scene}?"
                a = "Yes" if (si + ki + j) % 3 != 0 else "No"
                qas.append({"question": q, "answer": a})
            if (scene, abbrev) == ("Fuse panel", "Temp2Col"):
                # the release's defect: one question asked twice with opposite answers
                qas[3] = {"question": qas[2]["question"], "answer": "No" if qas[2]["answer"] == "Yes" else "Yes"}
            if (scene, abbrev) == ("Garage door", "Attr"):
                qas[1]["answer"] = " yes "  # answers are normalised (strip + capitalize)
            did = [f"{scene}/rgb.jpg", f"{scene}/thermal.jpg"] if pair else f"{scene}/rgb.jpg"
            items.append({"version": "v1", "data_source": src, "data_id": did,
                          "data_type": "RGB-Thermal Pair" if pair else "Single RGB Image", "skill_type": skill,
                          "QAs": qas})
            for j, qa in enumerate(qas):
                questions.append((f"{src}\\{scene}\\questions.json", skill, qa["question"], qa["answer"].strip().capitalize(),
                                  f"{src}/{scene}/{abbrev}/{j}"))
        write_json(f"{root}/{src}/{scene}/questions.json", {"data": items}, indent=4)
    # third-party result file (RGB-Th-Benchmark re-evaluation format) with two models
    recs = []
    for model in ("alpha-vl", "beta-vl"):
        for k, (file, skill, q, a, rid) in enumerate(questions):
            if model == "beta-vl" and k in (7, 40):
                continue  # no recorded reply: a transport error at replay
            raw = pick(f"{model}|{rid}", RGBTH_REPLIES)
            if model == "beta-vl" and k in (11, 95):
                raw = "Error: HTTP 500 from provider"
            recs.append({"model": model, "provider": "local", "file": file, "skill": skill,
                         "data_type_original": "x", "question": q, "ground_truth": a, "vlm_response_raw": raw,
                         "vlm_answer_parsed": None, "is_correct": None, "latency_s": 0.1})
    write_json("rgbth/benchmark_results_two_models.json", recs)
    # lensbench export format (request ids) of a third model
    rows = []
    for k, (file, skill, q, a, rid) in enumerate(questions):
        if k % 17 == 5:
            rows.append({"request_id": rid, "model": "gamma-vl", "error": "recorded timeout"})
        else:
            rows.append({"request_id": rid, "model": "gamma-vl", "text": a if k % 4 else pick(rid, RGBTH_REPLIES)})
    write_jsonl("rgbth/gamma_replay.jsonl", rows)


# ============================================================================ IF-Bench
IF_DIMS = [
    ("Scene Understanding", "SU", "the scene", "场景"), ("Image Theme", "IT", "the theme", "主题"),
    ("Viewpoint of Capture", "VC", "the viewpoint", "拍摄视角"), ("Target Localization", "TL", "the target", "目标位置"),
    ("Spatial Relationship Understanding", "SRU", "the layout", "空间关系"),
    ("Object Counting", "OC", "the count", "数量"), ("Thermal Feature Understanding", "TFU", "the heat", "热特征"),
    ("Action Recognition", "AR", "the action", "动作"), ("Thermal Feature Reasoning", "TFR", "the warmth", "温度推理"),
    ("Commonsense Reasoning", "CR", "the context", "常识"),
]
IF_IMAGES = ["ir_001.jpg", "ir_002.jpg", "ir_003.png", "ir_004.jpg", "ir_005.png", "ir_006.jpg", "ir_007.jpg",
             "ir_008.jpg"]


def make_ifbench() -> None:
    for i, name in enumerate(IF_IMAGES):
        write_image(f"ifbench/infrared_imgs/{name}", pattern(f"if-ir-{name}", (48, 36), gray=True))
        stem = Path(name).stem
        # translated RGB: same base name; .png for .jpg infrared files (another extension is accepted)
        tname = f"{stem}.png" if name.endswith(".jpg") and i % 2 == 0 else name
        write_image(f"ifbench/translated_rgb_imgs/{tname}", pattern(f"if-rgb-{name}", (48, 36)))
    doc: dict[str, list] = {}
    qn = 0
    model_rows, parser_rows = [], []
    for di, (dim, abbrev, topic, topic_cn) in enumerate(IF_DIMS):
        recs = []
        for j in range(2 if abbrev in ("SU", "CR") else 1):
            qn += 1
            ans = "ABCD"[(qn * 3 + j) % 4]
            en = {L: f"{topic} option {L}{qn}" for L in "ABCD"}
            en["B"] = f"it's {topic} #{qn}"  # an apostrophe: the dict repr switches quotes
            cn = {L: f"{topic_cn}选项{L}{qn}" for L in "ABCD"}
            rec = {"dataset": ["FLIR", "LLVIP", "M3FD"][qn % 3], "dst_thermal_path": IF_IMAGES[qn % len(IF_IMAGES)],
                   "pos_info": [0, 0, 10, 10],
                   "question": {"dimension": dim, "answer": ans, "original_answer": "A",
                                "en_question": f"Q{qn:02d}: What does the infrared image show about {topic}?",
                                "en_options": en,
                                "cn_question": f"Q{qn:02d}：红外图像中关于{topic_cn}的内容是什么？",
                                "cn_options": cn}}
            recs.append(rec)
            qid = f"{abbrev}-{j:03d}"
            k = "ABCD".index(ans)
            for lang in ("en", "zh"):
                for r in range(4):
                    right = "ABCD"[(k + r) % 4]
                    wrong = "ABCD"[(k + r + 1) % 4]
                    rid = f"{qid}/{lang}/r{r}"
                    reply = pick(rid, [right, right, right.lower(), wrong, f"Answer: {right}", f"<think>it is {right}</think>{right}",
                                       f"**{right}**", f"({wrong})", f"The correct option is {right}.",
                                       "I cannot tell from this image.", f"{right}.", f"<think>maybe</think>\n\n{wrong.lower()}"])
                    model_rows.append({"request_id": rid, "model": "replay-if", "text": reply})
                    parser_rows.append({"request_id": rid + "/parser", "model": "parser",
                                        "text": pick(rid + "p", [right, "F", f"{right}.", wrong, "The answer is B",
                                                                 f"<think>x</think>{right}"])})
        doc[dim] = recs
    write_json("ifbench/if_bench.json", doc, indent=2)
    write_jsonl("ifbench/replay_model.jsonl", model_rows)
    write_jsonl("ifbench/replay_parser.jsonl", parser_rows)


# ============================================================================ IV-Bench
IV_VIDEOS = {  # video id -> (n frames, fps, (w, h))
    "vidA": (40, 8, (128, 96)),
    "vidB": (30, 10, (96, 128)),
    "vidC": (24, 6, (112, 64)),
}


def frame_rgb(vid: str, i: int, size: tuple[int, int]) -> np.ndarray:
    """Frame ``i`` of ``vid``: four flat quadrants of random colours (distinct per frame)."""
    w, h = size
    g = rng("frame", vid, i)
    cols = g.integers(16, 240, (2, 2, 3), dtype=np.uint8)
    arr = np.repeat(np.repeat(cols, h // 2, axis=0), w // 2, axis=1)
    return np.ascontiguousarray(arr)


def write_video(rel: str, vid: str, n: int, fps: int, size: tuple[int, int]) -> None:
    import av

    p = FIXTURES / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    container = av.open(str(p), "w")
    stream = container.add_stream("libx264", rate=fps)
    stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
    stream.codec_context.gop_size = 10
    stream.options = {"preset": "ultrafast", "g": "10", "keyint_min": "10", "sc_threshold": "0", "crf": "12",
                      "threads": "1"}
    for i in range(n):
        arr = frame_rgb(vid, i, size)
        frame = av.VideoFrame.from_ndarray(arr, format="rgb24").reformat(format="yuv420p")
        frame.pts = i
        for pkt in stream.encode(frame):
            container.mux(pkt)
        CATALOG[f"frame:{vid}:{i}"] = {"id": f"{rel}#{i}", "sha256": None,
                                       "sig": image_signature(Image.fromarray(arr, "RGB"))}
    for pkt in stream.encode():
        container.mux(pkt)
    container.close()


IV_QUERIES = [  # video, data_id, task, question, answer, distractors
    ("vidA", 1, "Existence", "Does the object in the image appear in the video", "yes, in the first half",
     ["no", "yes, only at the end", "", "yes, in the first half", "never"]),
    ("vidA", 2, "Counting", "How many times does the image object show up", "three",
     ["one", "two", "four", "five", "six", "seven", "eight", " two "]),
    ("vidA", 3, "Keyframe extraction", "At which second does the image scene occur", "at 2 seconds",
     ["at 0 seconds", "at 1 second", "at 3 seconds", "at 4 seconds"]),
    ("vidB", 1, "Temporal Reasoning", "What happens after the image event", "the door closes",
     ["the door opens", "a car passes", "nothing", "the light turns on", "the door closes", "a dog barks"]),
    ("vidB", 2, "Constrained OCR", "What text is on the sign in the image", "EXIT 4",
     ["EXIT 1", "EXIT 2", "EXIT 3", "ENTRY 4", "EXIT 5", "EXIT 6", "EXIT 7", "EXIT 8", "EXIT 9"]),
    ("vidC", 7, "Summary", "Summarize the video with respect to the image", "a person walks a dog",
     ["a cat sleeps", "a car drives", "a bird flies", "a person cooks"]),
    ("vidC", 8, "Spatial relationship", "Where is the image object relative to the table", "left of it",
     ["right of it", "on it", "under it"]),
    ("vidC", 9, "Attribute Change", "How does the object's colour change", "red to blue",
     ["blue to red", "green to red", "red to green", "it stays red"]),
]
IV_REPLIES = ["{L}", "{l}", "({L})", "The answer is ({L}).", "Answer: {l}", "{answer}", "<think>looking</think>{L}.",
              "I am not sure which option.", "{L}. {answer}", "**{L}**"]


def make_ivbench() -> None:
    for vid, (n, fps, size) in IV_VIDEOS.items():
        write_video(f"ivbench/videos/{vid}.mp4", vid, n, fps, size)
    data = (FIXTURES / "ivbench/videos/vidA.mp4").read_bytes()
    (FIXTURES / "ivbench/videos/vidBad.mp4").write_bytes(data[: len(data) // 3])  # truncated: undecodable
    by_vid: dict[str, list] = {}
    replay = []
    for k, (vid, did, task, q, ans, ds) in enumerate(IV_QUERIES):
        name = f"{vid}_{did}.{'png' if k % 2 else 'jpg'}"
        write_image(f"ivbench/images/{name}", pattern(f"iv-q-{vid}-{did}", (40, 30)))
        by_vid.setdefault(vid, []).append({"data_id": did, "image_name": name, "question": q, "question_type": task,
                                           "granularity": "Whole Video", "answer": ans, "answer_location": "middle",
                                           "distractors": ds})
        letter = "abcdefghij"[k % 4]
        tmpl = IV_REPLIES[k % len(IV_REPLIES)]
        replay.append({"request_id": f"{vid}/{did}", "model": "replay-iv",
                       "text": tmpl.format(L=letter.upper(), l=letter, answer=ans)})
    lines = [{vid: qs} for vid, qs in by_vid.items()]
    write_jsonl("ivbench/test_data.jsonl", lines)
    # extra: the same + an undecodable video, a missing video and a missing image
    write_image("ivbench/images/vidBad_1.png", pattern("iv-q-vidBad-1", (40, 30)))
    extra = lines + [
        {"vidBad": [{"data_id": 1, "image_name": "vidBad_1.png", "question": "What is shown", "question_type": "NLI",
                     "granularity": "Clip", "answer": "a box", "answer_location": "", "distractors": ["a ball", "a cup"]}]},
        {"vidMissing": [{"data_id": 1, "image_name": "vidA_1.jpg", "question": "What is missing",
                         "question_type": "Details Event", "granularity": "Clip", "answer": "x", "answer_location": "",
                         "distractors": ["y", "z"]}]},
        {"vidA": [{"data_id": 99, "image_name": "no_such_image.png", "question": "Where is the image",
                   "question_type": "Reverse Existence", "granularity": "Clip", "answer": "p", "answer_location": "",
                   "distractors": ["q", "r"]}]},
    ]
    write_jsonl("ivbench/extra.jsonl", extra)
    write_jsonl("ivbench/replay.jsonl", replay)


# ============================================================================ GOBench
GO_RECORDS = [  # category, scenario number, variant, image on disk?
    ("direct_light_images", 1, 1, True), ("direct_light_images", 1, 2, True), ("direct_light_images", 2, 1, True),
    ("reflect_light_images", 1, 1, True), ("reflect_light_images", 1, 2, True),
    ("refracted_light_images", 1, 1, True), ("refracted_light_images", 1, 2, True),
    ("refracted_light_images", 3, 1, False),
]


def make_gobench() -> None:
    recs = []
    tsv_rows = []
    ratings = []
    for k, (cat, num, var, on_disk) in enumerate(GO_RECORDS):
        index = f"{cat}_{num}.{var}"
        img_rel = f"{cat}/{num}.{var}.png"
        im = pattern(f"go-{index}", (40, 40))
        data = encode(im, "PNG")
        if on_disk:
            write_image(f"gobench/data/{img_rel}", im)
        else:
            register(f"gobench/GOBench.tsv#{index}", data)
        prompt = f"A {['lamp', 'glass', 'mirror', 'prism', 'pool'][k % 5]} scene number {k} with {cat.split('_')[0]} light."
        qs = "\n".join(f"{i}. Is reality aspect {i} of scene {k} plausible?" for i in range(1, 6))
        recs.append({"index": index, "category": cat, "image": img_rel, "title": f"title {k}", "prompt": prompt,
                     "Questions_reality": qs,
                     "Question_aesthetics": "Please rate the aesthetics of the image on a scale of 1-5.",
                     "Question_Instruction_consistency": "Based on the image and the provided prompt, please rate the "
                                                         "instruction consistency of the generated image on a scale of 1-5."})
        auth = [3.5, 2.0, 4.25, 1.5, 3.0, 5.0, 0.5, 2.5][k]
        tsv_rows.append({"index": str(k + 1), "image": base64.b64encode(data).decode("ascii"),
                         "question": f"Prompt: {prompt}\nReality questions:\n{qs}",
                         "answer": f"Reality Assessment Score: {auth}\nAesthetics Rating: {1 + k % 5}\n"
                                   f"Instruction Consistency Rating: {1 + (k * 2) % 5}"})
        for gen in ("genA", "genB"):
            for rater in ("r1", "r2", "r3"):
                g = rng("go-rating", index, gen, rater)
                ans = [["Yes", "No", "Cannot determine"][int(x)] for x in g.integers(0, 3, 5)]
                ratings.append({"index": index, "generator": gen, "rater": rater, **{f"q{i + 1}": a for i, a in enumerate(ans)},
                                "aesthetics": int(g.integers(1, 6)), "fidelity": int(g.integers(1, 6))})
    ratings.append({"index": "direct_light_images_99.1", "generator": "genA", "rater": "r1", "q1": "Yes", "q2": "Yes",
                    "q3": "Yes", "q4": "No", "q5": "No", "aesthetics": 3, "fidelity": 3})
    write_json("gobench/data/data_total.json", recs, indent=4)
    # images for --layout scenario (<category>/<N>.png, one per scenario)
    for cat, num in (("direct_light_images", 1), ("reflect_light_images", 1)):
        write_image(f"gobench/data/{cat}/{num}.png", pattern(f"go-scen-{cat}-{num}", (40, 40)))
    with open(FIXTURES / "gobench/GOBench.tsv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["index", "image", "question", "answer"], delimiter="\t")
        w.writeheader()
        w.writerows(tsv_rows)
    with open(FIXTURES / "gobench/ratings.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(ratings[0].keys()))
        w.writeheader()
        w.writerows(ratings)
    replies = []
    for k, (cat, num, var, _d) in enumerate(GO_RECORDS):
        index = f"{cat}_{num}.{var}"
        replies.append({"request_id": index, "model": "replay-go", "text": gobench_reply(index, k)})
    write_jsonl("gobench/replay.jsonl", replies)


def gobench_reply(index: str, k: int) -> str:
    g = rng("go-reply", index)
    ans = [["Yes", "No", "Cannot Determine"][int(x)] for x in g.integers(0, 3, 5)]
    aes, fid = int(g.integers(1, 6)), int(g.integers(1, 6))
    style = k % 6
    if style == 0:
        return json.dumps({"realityAnswers_Eval": ans, "aestheticsRating_Eval": aes, "consistencyRating_Eval": fid,
                           "reasoning_Eval": "ok", "model_used_for_eval": "m"})
    if style == 1:
        return "<think>shadows</think>\n```json\n" + json.dumps({"realityAnswers_Eval": [a.lower() for a in ans],
                                                               "aestheticsRating_Eval": str(aes),
                                                               "consistencyRating_Eval": f"{fid}/5"}) + "\n```"
    if style == 2:
        return "{'realityAnswers_Eval': %r, 'aestheticsRating_Eval': %d, 'consistencyRating_Eval': %d,}" % (ans, aes, fid)
    if style == 3:
        return "\n".join(f"{i + 1}. {a}" for i, a in enumerate(ans)) + f"\nAesthetics Rating: {aes}\nInstruction Consistency Rating: {fid}"
    if style == 4:
        return json.dumps({"realityAnswers_Eval": ans, "aestheticsRating_Eval": aes})  # no fidelity: unparseable
    return f"Total Score: 2.5\nAesthetics Rating: {aes}\nInstruction Consistency Rating: {fid}"


# ============================================================================ GroundingME
GM_ITEMS = [  # id, l1, l2 (as a release might spell it), (w, h), bbox or None, image key
    ("gm-01", "Discriminative", "Appearance", (160, 120), [20, 30, 90, 100], "a"),
    ("gm-02", "Discriminative", "Discriminative_Text", (200, 100), [100, 10, 190, 60], "b"),
    ("gm-03", "Discriminative", "Component", (120, 160), [10, 10, 60, 80], "c"),
    ("gm-04", "Discriminative", "state", (160, 120), [40, 20, 150, 110], "d"),
    ("gm-05", "Spatial", "Relationship", (180, 120), [0, 0, 60, 60], "e"),
    ("gm-06", "Spatial", "Counting", (160, 120), [80, 60, 160, 120], "f"),
    ("gm-07", "Limited", "Occlusion", (400, 300), [50, 40, 350, 260], "g"),
    ("gm-08", "Limited", "Small", (160, 120), [70, 50, 80, 58], "h"),
    ("gm-09", "Rejection", "Appearance", (160, 120), None, "i"),
    ("gm-10", "Rejection", "Text", (200, 100), [10, 10, 50, 50], "b"),
    ("gm-11", "Rejection", "State", (120, 160), None, "j"),
    ("gm-12", "Discriminative", "Appearance", (160, 120), [60, 40, 150, 115], "a"),
]


def make_groundingme() -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    imgs: dict[str, bytes] = {}
    for sid, l1, l2, size, box, key in GM_ITEMS:
        if key not in imgs:
            fmt = "PNG" if key in ("c", "h") else "JPEG"
            data = encode(pattern(f"gm-{key}", size, blocks=(5, 4)), fmt)
            imgs[key] = data
            register(f"gm/hf#{sid}", data)
    rows = []
    for sid, l1, l2, size, box, key in GM_ITEMS:
        rows.append({"id": sid, "image": {"bytes": imgs[key], "path": f"{sid}.jpg"},
                     "description": f"the {l2.lower()} thing of {sid} ({'left' if int(sid[-2:]) % 2 else 'right'} side)",
                     "bbox": box, "subtask_l1": l1, "subtask_l2": l2, "width": size[0], "height": size[1]})
    (FIXTURES / "gm/hf/data").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), FIXTURES / "gm/hf/data/test-00000-of-00001.parquet",
                   compression="none")
    (FIXTURES / "gm/tsv").mkdir(parents=True, exist_ok=True)
    first_row: dict[str, int] = {}
    with open(FIXTURES / "gm/tsv/groundingme.tsv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(["index", "image", "question", "answer", "width", "height", "subtask_l1", "subtask_l2"])
        for i, (r, item) in enumerate(zip(rows, GM_ITEMS)):
            key = item[5]
            # VLMEvalKit stores a repeated image once and refers to it by index
            img = str(first_row[key]) if key in first_row else base64.b64encode(imgs[key]).decode()
            first_row.setdefault(key, i)
            w.writerow([i, img, r["description"], json.dumps(r["bbox"]) if r["bbox"] else "", r["width"], r["height"],
                        r["subtask_l1"], r["subtask_l2"]])
    # lensbench replay (request id = sample id) of replies in rel1000
    rep = []
    for k, (sid, l1, l2, (w, h), box, key) in enumerate(GM_ITEMS):
        if box is None or l1 == "Rejection":
            text = ['{"bbox_2d": null}', "There is no such object.", '{"bbox_2d": [1, 2, 300, 400]}'][k % 3]
        else:
            rel = [round(box[0] / w * 1000), round(box[1] / h * 1000), round(box[2] / w * 1000), round(box[3] / h * 1000)]
            text = [json.dumps({"bbox_2d": rel}), "<think>look</think>```json\n" + json.dumps({"bbox_2d": rel}) + "\n```",
                    "{'bbox_2d': [%d, %d, %d, %d]}" % tuple(v + 60 for v in rel), '{"bbox_2d": null}',
                    "The box is " + str(rel)][k % 5]
        rep.append({"request_id": sid, "model": "replay-gm", "text": text})
    write_jsonl("gm/replay_rel1000.jsonl", rep)


def main() -> None:
    if FIXTURES.exists():
        shutil.rmtree(FIXTURES)
    FIXTURES.mkdir(parents=True)
    make_rgbth()
    make_ifbench()
    make_ivbench()
    make_gobench()
    make_groundingme()
    cat = sorted(CATALOG.values(), key=lambda e: e["id"])
    (FIXTURES / "image_catalog.json").write_text(
        json.dumps({"about": "id and 8x8 RGB box signature of every fixture image / video frame (harness.ImageMatcher)",
                    "images": [{"id": e["id"], "sha256": e["sha256"], "sig": e["sig"]} for e in cat]},
                   separators=(",", ":")) + "\n", encoding="utf-8")
    total = sum(p.stat().st_size for p in FIXTURES.rglob("*") if p.is_file())
    n = sum(1 for p in FIXTURES.rglob("*") if p.is_file())
    print(f"wrote {n} files, {total / 1024:.1f} KiB, {len(cat)} catalogue images under {FIXTURES}")


if __name__ == "__main__":
    main()
