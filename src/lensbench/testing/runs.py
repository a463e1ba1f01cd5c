"""Crafted run folders for tests and benchmarks of the report side (viewer, leaderboard, statistics).

:func:`craft_run` writes ``run.json``, ``samples.jsonl`` and ``result.json`` for one of the five
benchmarks with seeded random outcomes, small generated images (and IV-Bench frames cached under
``media/frames`` as the frame cache lays them out), in the common
:class:`~lensbench.core.records.SampleRecord` shape. Metrics in ``result.json`` are the headline
values of :mod:`lensbench.scoring.units` (so a leaderboard can attach CIs to them).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from lensbench.core.records import SampleRecord
from lensbench.core.types import file_sha256

__all__ = ["craft_run", "write_run", "make_image"]

_RGB_SKILLS = ["Scene", "ObjPr", "Attr", "Temp2Col", "HeatAlign", "Warmest"]
_IF_DIMS = ["OCR", "Count", "Shape", "Texture"]
_IV_TASKS = ["Count", "Attr", "Spatial", "Reason"]
_GM_L1 = ["Discriminative", "Spatial", "Limited", "Rejection"]


def make_image(path: Path, size: tuple[int, int] = (320, 240), seed: int = 0, fmt: str = "PNG") -> Path:
    """Write a small deterministic test image (gradient + a rectangle) and return its path."""
    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    img = Image.new("RGB", size, (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    d = ImageDraw.Draw(img)
    w, h = size
    x, y = rng.randrange(w // 2), rng.randrange(h // 2)
    d.rectangle([x, y, x + w // 3, y + h // 3], fill=(255 - x % 256, 128, y % 256))
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, fmt)
    return path


def write_run(run_dir: Path, benchmark: str, model: str, records: list[SampleRecord], metrics: dict[str, Any],
              complete: bool = True, write_result: bool = True, manifest: dict[str, Any] | None = None) -> Path:
    """Write a run folder from records (``result.json`` only when ``write_result``); ``manifest``:
    extra ``run.json`` fields (``n_samples``, ``options``, ``generation_overrides``, ...). The folder gets
    an empty run store, as a real run has one (a report of a folder whose store is gone warns and exits 3)."""
    from lensbench.runtime.store import RunStore

    run_dir.mkdir(parents=True, exist_ok=True)
    RunStore(run_dir).close()
    (run_dir / "run.json").write_text(json.dumps({"benchmark": benchmark, "model_name": model, "seed": 0,
                                                  "model_spec": f"crafted:{model}", **(manifest or {})}),
                                      encoding="utf-8")
    with (run_dir / "samples.jsonl").open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r.line(), ensure_ascii=False) + "\n")
    if write_result:
        counts = {"n": sum(r.outcome != "error" for r in records),
                  "n_error": sum(r.outcome == "error" for r in records),
                  "n_unparseable": sum(r.outcome == "unparseable" for r in records)}
        doc = {"benchmark": benchmark, "model": model, "complete": complete and counts["n_error"] == 0,
               "metrics": metrics, "counts": counts, "options": {}, "extra": {}, "run_dir": str(run_dir)}
        (run_dir / "result.json").write_text(json.dumps(doc), encoding="utf-8")
    return run_dir


def _outcome(rng: random.Random, acc: float, p_err: float = 0.0) -> str:
    x = rng.random()
    if x < p_err:
        return "error"
    if x < p_err + 0.03:
        return "unparseable"
    return "correct" if rng.random() < acc else "wrong"


def _img(media: Path, name: str, seed: int, size=(320, 240)) -> dict[str, Any]:
    p = media / name
    if not p.exists():
        make_image(p, size, seed)
    return {"type": "image", "path": str(p), "sha256": file_sha256(p)}


def _rec(bench: str, sid: str, parts: list[dict], outcome: str, **kw: Any) -> SampleRecord:
    reply = kw.pop("reply", None)
    return SampleRecord(benchmark=bench, sample_id=sid, request_id=sid, messages=[{"role": "user", "content": parts}],
                        reply=None if outcome == "error" else reply, outcome=outcome,
                        error="HTTP 500" if outcome == "error" else None, latency_s=0.5, **kw)


def _rgbth(n: int, rng: random.Random, acc: float, media: Path, p_err: float) -> list[SampleRecord]:
    out = []
    n_scenes = max(1, n // (4 * len(_RGB_SKILLS)))
    for s in range(n_scenes):
        scene = f"Source 1/Scene{s}"
        rgb = _img(media, f"rgb{s}.png", s)
        th = _img(media, f"th{s}.png", 1000 + s)
        for sk_i, sk in enumerate(_RGB_SKILLS):
            pair = sk_i >= 3
            for j in range(4):
                target = ["Yes", "No"][(s + sk_i + j) % 2]
                o = _outcome(rng, acc, p_err)
                ans = target if o == "correct" else (None if o in ("unparseable", "error") else
                                                     ("No" if target == "Yes" else "Yes"))
                text = f"Based on this image, answer with Yes or No.\nIs there a thing number {j} in {sk}?"
                out.append(_rec("rgb-th-bench", f"{scene}/{sk}/{j}", [rgb, th, {"type": "text", "text": text}]
                                if pair else [rgb, {"type": "text", "text": text}], o, answer=ans, target=target,
                                reply=ans or "I cannot tell", reasoning="<think>look</think>" if j == 0 else None,
                                labels={"scene": scene, "skill": sk, "group": "RGB-Th-Txt" if pair else "RGB-Txt"}))
    return out


def _ifbench(n: int, rng: random.Random, acc: float, media: Path, p_err: float) -> list[SampleRecord]:
    out = []
    for q in range(max(1, n // 8)):
        img = _img(media, f"ir{q // 2}.png", 50 + q // 2)  # two questions per image, as in the release
        dim = _IF_DIMS[q % len(_IF_DIMS)]
        for lang in ("en", "zh"):
            for rot in range(4):
                target = "ABCD"[(q + rot) % 4]
                o = _outcome(rng, acc, p_err)
                ans = target if o == "correct" else (None if o in ("unparseable", "error") else "ABCD"[(q + rot + 1) % 4])
                text = f"[{lang}] Question {q} about {dim}? Options rotated {rot}:\nA. a\nB. b\nC. c\nD. d"
                out.append(_rec("if-bench", f"q{q}/{lang}/rot{rot}", [img, {"type": "text", "text": text}], o,
                                answer=ans, target=target, reply=f"The answer is {ans}",
                                labels={"qid": f"q{q}", "dimension": dim, "language": lang, "rotation": rot},
                                extra={"options": ["a", "b", "c", "d"], "image": f"ir{q // 2}.png"},
                                judge=[{"kind": "parser", "request_id": f"parse/q{q}/{lang}/{rot}",
                                        "reply": ans, "verdict": ans}] if o == "unparseable" else []))
    return out


def _ivbench(n: int, rng: random.Random, acc: float, media: Path, p_err: float) -> list[SampleRecord]:
    out = []
    for v in range(max(1, n // 4)):
        folder = media / "frames" / f"vid{v}-abc" / "centers_n4_rnative"
        frames = [_img(folder, f"frame_{k:03d}.jpg", 300 + v * 10 + k, (160, 90))["sha256"] for k in range(4)]
        video = {"type": "video", "path": f"/data/videos/vid{v}.mp4", "timestamps": [0.5, 1.5, 2.5, 3.5],
                 "frames": frames}
        for t in range(4):
            task = _IV_TASKS[t]
            target = "ABCD"[(v + t) % 4]
            o = _outcome(rng, acc, p_err)
            ans = target if o == "correct" else (None if o in ("unparseable", "error") else "ABCD"[(v + t + 2) % 4])
            out.append(_rec("iv-bench", f"vid{v}/{t}", [video, {"type": "text", "text": f"{task} question {t}?"}], o,
                            answer=ans, target=target, reply=ans or "unsure",
                            labels={"video_id": f"vid{v}", "task": task, "frames": 4, "resolution": None}))
    return out


def _groundingme(n: int, rng: random.Random, acc: float, media: Path, p_err: float) -> list[SampleRecord]:
    out = []
    for i in range(n):
        img = _img(media, f"gm{i % 20}.png", 500 + i % 20, (400, 300))
        l1 = _GM_L1[i % len(_GM_L1)]
        gt = [40 + i % 50, 30, 200 + i % 50, 180]
        o = _outcome(rng, acc, p_err)
        pred = [gt[0] + 8, gt[1] + 5, gt[2] + 10, gt[3] - 4] if o == "correct" else [250, 200, 390, 290]
        if l1 == "Rejection":
            gt, pred = None, (None if o == "correct" else pred)
        iou = None if gt is None or o in ("error", "unparseable") else _iou(pred, gt)
        out.append(_rec("groundingme", f"gm{i}", [img, {"type": "text", "text": f"Locate the object {i}."}], o,
                        answer=None if o in ("unparseable", "error") else pred, target=gt,
                        reply=json.dumps(pred), scores={} if iou is None else {"iou": iou},
                        labels={"L-1": l1, "L-2": f"{l1}-sub{i % 2}"}))
    return out


def _iou(a: list[float], b: list[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _gobench(n: int, rng: random.Random, acc: float, media: Path, p_err: float) -> list[SampleRecord]:
    out = []
    for i in range(n):
        img = _img(media, f"go{i % 30}.png", 700 + i % 30)
        o = "error" if rng.random() < p_err else "scored"
        dims = ("authenticity", "aesthetics", "fidelity")
        human = {d: rng.randint(1, 5) for d in dims}
        scores = {} if o == "error" else {f"sps_{d}": round(min(1.0, max(0.0, rng.gauss(acc, 0.2))), 3) for d in dims}
        if o != "error":
            scores.update({d: min(5, max(1, human[d] + rng.choice([-1, 0, 0, 1]))) for d in dims})
        out.append(_rec("gobench", f"img{i}", [img, {"type": "text", "text": "Rate this image."}], o,
                        answer={d: scores.get(d) for d in dims}, target=human, scores=scores, reply="Q1: Yes ...",
                        labels={"image_id": f"img{i}", "category": ["direct", "reflect", "refracted"][i % 3]}))
    return out


_MAKERS = {"rgb-th-bench": _rgbth, "if-bench": _ifbench, "iv-bench": _ivbench, "groundingme": _groundingme,
           "gobench": _gobench}


def craft_run(run_dir: str | Path, benchmark: str, model: str = "model-a", n: int = 48, seed: int = 0,
              accuracy: float = 0.6, p_error: float = 0.0, write_result: bool = True) -> Path:
    """Write a crafted run folder of about ``n`` records of ``benchmark``; returns its path.

    Outcomes are drawn with ``random.Random(seed)``: ``accuracy`` = P(correct | scored),
    ``p_error`` = P(transport error), ~3% unparseable. Images live under ``run_dir/media``.
    """
    from lensbench.scoring.units import HEADLINES, unit_tables

    run_dir = Path(run_dir)
    rng = random.Random(seed)
    records = _MAKERS[benchmark](n, rng, accuracy, run_dir / "media", p_error)
    tables = unit_tables(benchmark, records)
    metrics: dict[str, Any] = {}
    for key, col, cat in HEADLINES[benchmark]:
        t = tables.get(key)
        if t is None:
            continue
        block = metrics.setdefault(key, {})
        block[col] = t.value(cat)
        for c in t.categories:
            block.setdefault(c, t.value(c))
    return write_run(run_dir, benchmark, model, records, metrics, complete=p_error == 0, write_result=write_result)
