"""IV-Bench Tab. 3 SFT data (paper Sec. 4.4): the ``ivbench synthesize`` output (image-grounded queries,
"36K IV data") and the unaligned video-QA originals ("36K Video data") as training conversations.

Each example is exactly the request IV-Bench sends for that query (:meth:`IVBench.requests`:
the Appendix C prefix, the sampled frames, the query image where the pattern puts it, the
question and lettered options, with the same seeded option order) and the correct option's
letter as the answer; so a model is trained on the format it is evaluated on. Variants:

* ``iv``: the synthesized query (question about "the entity in the image"), frames + image
  (``--pattern``, default video-first as the evaluation);
* ``video``: the original question (``source_question`` of the synthesis output) with the same
  frames and options and no image (``text-only``), the unaligned video-QA data.

Outputs in ``out``: ``sft_<variant>.jsonl`` (:mod:`lensbench.tools.training.sft_data`, frames as
images) and ``llava_<variant>.json`` (LLaVA-Video-style conversations with ``video``,
``frame_times`` and the image list; :func:`~lensbench.tools.training.exports.to_llava`);
frames are extracted once into ``out/frames`` (the frame cache).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from lensbench.benchmarks.ivbench.benchmark import IVBench
from lensbench.core.errors import DataError
from lensbench.core.types import ImagePart
from lensbench.core.jsonl import iter_jsonl
from lensbench.tools.training.exports import to_llava
from lensbench.tools.training.sft_data import make_example, write_examples

__all__ = ["VARIANTS", "source_questions", "sft_examples", "export_sft"]

VARIANTS = ("iv", "video")


def source_questions(path: Path) -> dict[str, str]:
    """``{video_id/data_id: source_question}`` of a synthesis output (IV-Bench jsonl with the
    extra ``source_question`` field). Raises DataError when a query lacks it."""
    out = {}
    for ln, obj in iter_jsonl(path, "synthesis output", kind=dict):
        for vid, qs in obj.items():
            for q in qs:
                if not isinstance(q.get("source_question"), str) or not q["source_question"].strip():
                    raise DataError(path, f"line {ln}: the unaligned variant needs the synthesis output's "
                                          "source_question", field="source_question")
                out[f"{vid}/{q['data_id']}"] = q["source_question"]
    return out


def sft_examples(questions: Path, videos: Path, images: Path, out: Path, *, variant: str = "iv", frames: int = 32,
                 seed: int = 0, pattern: str = "video-first") -> list[dict[str, Any]]:
    """The examples of one variant (module docstring). Queries whose video fails to decode are
    left out. Raises DataError for bad data (IV-Bench's loader checks) or an unknown variant."""
    if variant not in VARIANTS:
        raise DataError(questions, f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    from lensbench.media.frame_cache import FrameCache

    bench = IVBench(IVBench.Options(questions=str(questions), videos_dir=str(videos), images_dir=str(images),
                                    frames=str(frames), pattern=pattern if variant == "iv" else "text-only"))
    queries = bench.load(Path(questions).parent)
    if variant == "video":
        src = source_questions(questions)
        queries = [dataclasses.replace(q, question=src[q.uid]) for q in queries]
    decoded = bench.extract_frames(queries, FrameCache(out / "frames"))
    reqs, _undecoded = bench.requests(queries, decoded, None, seed=seed)
    by_uid = {q.uid: q for q in queries}
    examples = []
    for r in reqs:
        parts, times = [], []
        for p in r.messages[0].parts:
            if isinstance(p, ImagePart):
                parts.append(Path(p.path))
                if p.video:
                    times.append(p.t_s)
            else:
                parts.append(p.text)
        q = by_uid[r.id.split("@")[0]]
        examples.append(make_example(f"{variant}/{r.id}", parts, r.meta["target"], meta={
            "variant": variant, "video": str(Path(videos) / f"{q.video_id}.mp4"), "frame_times": times,
            "question_type": q.question_type, "image": None if variant == "video" else str(Path(images) / q.image_name)}))
    return examples


def export_sft(questions: Path, videos: Path, images: Path, out: Path, *, variants: tuple[str, ...] = VARIANTS,
               frames: int = 32, seed: int = 0) -> dict[str, dict[str, Any]]:
    """Write ``sft_<variant>.jsonl`` and ``llava_<variant>.json`` for each variant into ``out``;
    returns ``{variant: {"sft", "llava", "n"}}``."""
    out.mkdir(parents=True, exist_ok=True)
    done = {}
    for v in variants:
        exs = sft_examples(questions, videos, images, out, variant=v, frames=frames, seed=seed)
        sft = out / f"sft_{v}.jsonl"
        write_examples(sft, exs)
        llava = to_llava(exs, out / f"llava_{v}.json", extra_keys=("video", "frame_times"))
        done[v] = {"sft": str(sft), "llava": str(llava), "n": len(exs)}
    (out / "export.json").write_text(json.dumps(done, indent=2), encoding="utf-8")
    return done
