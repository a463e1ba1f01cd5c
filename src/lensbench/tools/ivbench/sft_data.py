"""IV-Bench Tab. 3 SFT data (paper Sec. 4.4): the ``ivbench synthesize`` output (image-grounded queries,
"36K IV data") and the unaligned video-QA originals ("36K Video data") as training conversations.

Each example is exactly the request IV-Bench sends for that query (:meth:`IVBench.requests`:
the Appendix C prefix, the sampled frames, the query image where the pattern puts it, the
question and lettered options, with the same seeded option order) and the correct option's
letter as the answer; so a model is trained on the format it is evaluated on. Variants:

* ``iv``: the synthesized query (question about "the entity in the image"), frames + image
  (``--pattern``, default video-first as the evaluation);
* ``video``: the original question (``source_question`` of the synthesis output) with the same
  frames and options and no image (``text-only``), the unaligned video-QA data. Its prefix is the
  video-only sentence of ``prompts/video_only.txt`` (the official video-first sentence without its
  image clauses): the paper's unaligned data is "the original video QA data (prior to alignment)",
  with no image, so its text must not announce one.

Mixture (Sec. 4.4: each variant "combined with small amounts of pure video and image data";
:mod:`.sft_mix`): with ``mix`` sources, every variant's file also holds the same drawn pure-video
(LLaVA-Video-178K format) and pure-image examples, shuffled in with a seed; ``row=True`` adds the
``llava-video-178k`` variant (Tab. 3's fourth row): every item of the video sources plus the same
image examples. ``export.json`` records each component's counts.

Outputs in ``out``: ``sft_<variant>.jsonl`` (:mod:`lensbench.tools.training.sft_data`, frames as
images) and ``llava_<variant>.json`` (LLaVA-Video-style conversations with ``video``,
``frame_times`` and the image list; :func:`~lensbench.tools.training.exports.to_llava`);
frames are extracted once into ``out/frames`` (the frame cache).
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path
from typing import Any

from lensbench.benchmarks.ivbench.benchmark import IVBench
from lensbench.core.errors import DataError
from lensbench.core.types import ImagePart
from lensbench.core.jsonl import iter_jsonl
from lensbench.core.resources import read_text
from lensbench.tools.ivbench.sft_mix import MixSources, mixture_components, read_sources
from lensbench.tools.training.exports import to_llava
from lensbench.tools.training.sft_data import make_example, write_examples

__all__ = ["VARIANTS", "ROW_VARIANT", "source_questions", "video_only_text", "sft_examples", "export_sft"]

VARIANTS = ("iv", "video")
#: Tab. 3's fourth row: the base model + the entire LLaVA-Video-178K (``paper/table3.json`` variant name)
ROW_VARIANT = "llava-video-178k"


def _template(package: str, name: str) -> str:
    return read_text(package, "prompts", name).split("-----\n", 1)[1].rstrip("\n")


def video_only_text(text: str) -> str:
    """``text`` (a request text starting with IV-Bench's video-first prefix) with that prefix replaced by the
    video-only sentence (``prompts/video_only.txt``), same frame count and duration. Raises ValueError
    when ``text`` does not start with the video-first prefix."""
    tpl = _template("lensbench.benchmarks.ivbench", "video_first.txt")
    pat = re.escape(tpl).replace(re.escape("{frame_num}"), r"(?P<n>\d+)").replace(
        re.escape("{duration}"), r"(?P<d>[0-9.eE+-]+)")
    m = re.match(pat, text)
    if m is None:
        raise ValueError("text does not start with the IV-Bench video-first prefix")
    return _template(__package__, "video_only.txt").format(frame_num=m["n"], duration=m["d"]) + text[m.end():]


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
                parts.append(video_only_text(p.text) if variant == "video" else p.text)
        q = by_uid[r.id.split("@")[0]]
        examples.append(make_example(f"{variant}/{r.id}", parts, r.meta["target"], meta={
            "variant": variant, "video": str(Path(videos) / f"{q.video_id}.mp4"), "frame_times": times,
            "question_type": q.question_type, "image": None if variant == "video" else str(Path(images) / q.image_name)}))
    return examples


def export_sft(questions: Path, videos: Path, images: Path, out: Path, *, variants: tuple[str, ...] = VARIANTS,
               frames: int = 32, seed: int = 0, mix: MixSources | None = None, row: bool = False
               ) -> dict[str, dict[str, Any]]:
    """Write ``sft_<variant>.jsonl`` and ``llava_<variant>.json`` for each variant into ``out`` (with ``mix``:
    each variant's examples plus the same pure-video and pure-image examples, shuffled with ``seed``; ``row``:
    also the ``llava-video-178k`` variant, module docstring); ``export.json`` and the return value:
    ``{variant: {"sft", "llava", "n", "components": {name: n}}}``; ``mix.json``: the components' counts and
    settings. Raises DataError for bad data or sources, ConfigError for ``row`` without video sources."""
    from lensbench.core.errors import ConfigError

    if row and (mix is None or not mix.video):
        raise ConfigError("the LLaVA-Video-178K row needs its data: give --llava-video FILE (its *_processed.json)")
    items = read_sources(mix) if mix is not None else {}
    out.mkdir(parents=True, exist_ok=True)
    mains = {v: sft_examples(questions, videos, images, out, variant=v, frames=frames, seed=seed) for v in variants}
    extra: dict[str, list[dict[str, Any]]] = {}
    if mix is not None:
        n_main = max((len(e) for e in mains.values()), default=0)
        stems = sorted({Path(e["meta"]["video"]).stem for exs in mains.values() for e in exs})
        extra, counts = mixture_components(mix, items, n_main, out, frames=frames, seed=seed, exclude_videos=stems)
        doc = {"paper": "Sec. 4.4: 'combined with small amounts of pure video and image data' (no amounts given)",
               "video_ratio": mix.video_ratio, "image_ratio": mix.image_ratio, "seed": seed, "n_main": n_main,
               "components": counts}
        if row:
            full, c = mixture_components(dataclasses.replace(mix, image=()), {**items, "image": []}, 0, out,
                                         frames=frames, seed=seed, full_video=True)
            mains[ROW_VARIANT] = full["pure-video"]
            doc["row"] = {"variant": ROW_VARIANT, "video": c["pure-video"]}
        (out / "mix.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    done = {}
    for v, main in mains.items():
        # the row's video component is the whole LLaVA-Video-178K already: the drawn pure-video items are not added
        adds = {k: e for k, e in extra.items() if not (v == ROW_VARIANT and k == "pure-video")}
        exs = main + [e for comp in adds.values() for e in comp]
        if adds:
            random.Random(f"{seed}/{v}").shuffle(exs)
        sft = out / f"sft_{v}.jsonl"
        write_examples(sft, exs)
        llava = to_llava(exs, out / f"llava_{v}.json", extra_keys=("video", "frame_times"))
        comps = {"main" if v != ROW_VARIANT else "llava-video-178k": len(main), **{k: len(e) for k, e in adds.items()}}
        done[v] = {"sft": str(sft), "llava": str(llava), "n": len(exs), "components": comps}
    (out / "export.json").write_text(json.dumps(done, indent=2), encoding="utf-8")
    return done
