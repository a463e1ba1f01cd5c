"""IV-Bench Tab. 3 training mixture (paper Sec. 4.4): "IV-Bench-aligned synthetic data combined with small
amounts of pure video and image data", and "the original video QA data ... similarly combined with pure
video and image data".

The two extra components are read from their releases' own format, the LLaVA conversation JSON that
LLaVA-Video-178K ships (``lmms-lab/LLaVA-Video-178K``: ``<duration>_<source>/*_cap_processed.json``,
``*_oe_qa_processed.json``, ``*_mc_qa_processed.json``) and LLaVA-OneVision's single-image data uses:
a JSON list of ::

    {"id": "...", "data_source": "0_30_s_academic_v0_1",            # optional
     "video": "academic_source/Charades/RW587.mp4",                  # pure video: relative to --video-root
     "image": "coco/train2017/1.jpg" | [..],                         # pure image: relative to --image-root
     "conversations": [{"from": "human", "value": "<image>\\nWhat ...?"}, {"from": "gpt", "value": "..."}, ...]}

(a JSONL file of such objects is read too). ``<image>`` (LLaVA-Video writes it for the video as well;
``<video>`` accepted) marks where the visual input goes; without one it goes first. Each human/gpt turn
becomes one single-turn example (:mod:`lensbench.tools.training.sft_data`) with the same visual input
(LLaVA-Video-178K's turns are questions about the video, each on its own); a video is ``frames`` frames
by the official ``centers`` rule from the shared frame cache, as IV-Bench's own examples.

Proportions: the paper gives none ("small amounts"). Ours (each an option): ``video_ratio`` and
``image_ratio`` = items drawn per main example (default 0.1 each), sampled with a seed; the SAME drawn
items go into every variant, so the variants differ only in the main component (the paper's controlled
comparison). Items whose video is one of the synthesized videos are left out of the pure-video draw
(counted), so the video component adds no second copy of a main example's video.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError, DataError
from lensbench.core.jsonl import iter_jsonl
from lensbench.tools.training.sft_data import make_example

__all__ = ["MixSources", "read_llava", "read_sources", "llava_examples", "draw", "mixture_components"]

_TOKENS = ("<image>", "<video>")


@dataclass(frozen=True)
class MixSources:
    """Where the extra components come from: LLaVA-format JSON files (``video``: LLaVA-Video-178K files,
    paths relative to ``video_root``; ``image``: image instruction files, paths relative to ``image_root``;
    a root defaults to each file's folder) and how much of each (``video_ratio`` / ``image_ratio``: items
    per main example, >= 0)."""

    video: tuple[Path, ...] = ()
    video_root: Path | None = None
    image: tuple[Path, ...] = ()
    image_root: Path | None = None
    video_ratio: float = 0.1
    image_ratio: float = 0.1


def _load(path: Path) -> list[tuple[int, Any]]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        try:
            return list(enumerate(json.loads(text)))
        except ValueError as exc:
            raise DataError(path, f"not valid JSON ({exc})") from None
    return [(ln - 1, obj) for ln, obj in iter_jsonl(path, "LLaVA conversation file")]


def read_llava(path: str | Path, kind: str) -> list[dict[str, Any]]:
    """The items of one LLaVA-format file (module docstring), each checked: ``conversations`` = non-empty,
    alternating ``human`` / ``gpt`` turns with string values, starting with ``human``; ``kind`` ``video``
    needs a ``video`` path (str), ``image`` an ``image`` path or list of paths. Raises DataError naming the
    file, the item (index, 0-based) and the field."""
    p = Path(path)
    if not p.is_file():
        raise DataError(p, "file not found")
    out = []
    for i, it in _load(p):
        where = f"item {i}"
        if not isinstance(it, dict):
            raise DataError(p, f"{where}: not a JSON object")
        conv = it.get("conversations")
        if not isinstance(conv, list) or len(conv) < 2 or not all(
                isinstance(t, dict) and t.get("from") == ("human", "gpt")[k % 2] and isinstance(t.get("value"), str)
                for k, t in enumerate(conv)):
            raise DataError(p, f"{where}: must alternate human / gpt turns with string values", field="conversations")
        media = it.get(kind)
        ok = isinstance(media, str) and media.strip() if kind == "video" else \
            (isinstance(media, str) and media.strip()) or (isinstance(media, list) and media and
                                                           all(isinstance(m, str) and m.strip() for m in media))
        if not ok:
            raise DataError(p, f"{where}: a {kind} item needs a {kind} path", field=kind)
        out.append({**it, "id": str(it.get("id", f"{p.stem}-{i}")), "_file": str(p)})
    return out


def _parts(value: str, visual: list[Path]) -> list[str | Path]:
    """The human turn as parts. As many ``<image>`` / ``<video>`` tokens as visual inputs (a multi-image item):
    each input where its token stands; otherwise all of them (a video's frames) where the first token stands,
    or first when there is none, other tokens dropped. Text around the tokens loses its edge newlines."""
    pieces = re.split("|".join(map(re.escape, _TOKENS)), value)
    n_tok = len(pieces) - 1
    slots = [[v] for v in visual] if n_tok == len(visual) else [list(visual)] + [[]] * max(n_tok - 1, 0)
    if n_tok == 0:
        pieces, slots = ["", value], [list(visual)]
    parts: list[str | Path] = []
    for k, text in enumerate(pieces):
        if text.strip():
            parts.append(text.strip("\n"))
        if k < len(slots):
            parts += slots[k]
    return parts


def llava_examples(items: Sequence[dict[str, Any]], kind: str, root: Path | None, frame_cache=None, *,
                   frames: int = 32) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """SFT examples of LLaVA items (module docstring): one per human/gpt turn, ids ``pure-<kind>/<item id>/<turn>``,
    ``meta`` = ``component`` (``pure-video`` | ``pure-image``), ``data_source``, ``video`` and ``frame_times``
    (video). ``root``: the folder media paths are relative to (default: the item's file's folder);
    ``frame_cache``: a :class:`~lensbench.media.frame_cache.FrameCache` (video). Items whose video does not
    decode or whose image file is missing are left out and counted: returns ``(examples, {"items",
    "examples", "skipped_media"})``."""
    from lensbench.media.frame_cache import FrameSpec
    from lensbench.media.video import VideoError

    out, skipped = [], 0
    for it in items:
        base = Path(root) if root else Path(it["_file"]).parent
        named = [it["video"]] if kind == "video" else ([it["image"]] if isinstance(it["image"], str) else it["image"])
        if not all((base / m).resolve().is_relative_to(base.resolve()) for m in named):
            raise DataError(it["_file"], f"item {it['id']}: a path leads outside {base}", field=kind)
        meta: dict[str, Any] = {"component": f"pure-{kind}", "data_source": it.get("data_source")}
        if kind == "video":
            try:
                fs = frame_cache.get(base / it["video"], FrameSpec("centers", frames))
            except VideoError:
                skipped += 1
                continue
            visual, meta = list(fs.paths), {**meta, "video": str(base / it["video"]), "frame_times": fs.timestamps}
        else:
            visual = [base / m for m in named]
            if not all(v.is_file() for v in visual):
                skipped += 1
                continue
        conv = it["conversations"]
        for k in range(0, len(conv) - 1, 2):
            if conv[k + 1]["value"].strip():
                out.append(make_example(f"pure-{kind}/{it['id']}/{k // 2}", _parts(conv[k]["value"], visual),
                                        conv[k + 1]["value"], meta=meta))
    return out, {"items": len(items), "examples": len(out), "skipped_media": skipped}


def draw(items: Sequence[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` items drawn without replacement by ``random.Random(seed)`` (all of them when ``n`` >= their
    number), in their file order."""
    if n >= len(items):
        return list(items)
    keep = set(random.Random(seed).sample(range(len(items)), n))
    return [it for i, it in enumerate(items) if i in keep]


def read_sources(sources: MixSources) -> dict[str, list[dict[str, Any]]]:
    """``{"video": items, "image": items}`` of every source file (:func:`read_llava`), checked before anything
    else is done. Raises ConfigError for a negative ratio, DataError for a bad file."""
    for name, r in (("--video-ratio", sources.video_ratio), ("--image-ratio", sources.image_ratio)):
        if r < 0:
            raise ConfigError(f"{name} must be >= 0, got {r}")
    return {"video": [it for f in sources.video for it in read_llava(f, "video")],
            "image": [it for f in sources.image for it in read_llava(f, "image")]}


def mixture_components(sources: MixSources, items: dict[str, list[dict[str, Any]]], n_main: int, out: Path, *,
                       frames: int = 32, seed: int = 0, exclude_videos: Sequence[str] = (), full_video: bool = False
                       ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """The pure-video and pure-image examples (from ``items`` = :func:`read_sources`) to add to a main
    component of ``n_main`` examples:
    ``round(ratio * n_main)`` items of each drawn (``full_video``: every video item, the LLaVA-Video-178K
    row), videos whose file stem is in ``exclude_videos`` left out; frames cached in ``out/frames``.
    Returns ``({"pure-video": [...], "pure-image": [...]}, counts)``. Raises DataError for a media path
    leading outside its root."""
    from lensbench.media.frame_cache import FrameCache

    comps: dict[str, list[dict[str, Any]]] = {}
    counts: dict[str, Any] = {}
    excl = set(exclude_videos)
    for kind, files, root, ratio in (("video", sources.video, sources.video_root, sources.video_ratio),
                                     ("image", sources.image, sources.image_root, sources.image_ratio)):
        pool = [it for it in items[kind] if kind != "video" or Path(it["video"]).stem not in excl]
        n = len(pool) if full_video and kind == "video" else round(ratio * n_main)
        chosen = draw(pool, n, seed)
        exs, c = llava_examples(chosen, kind, root, FrameCache(out / "frames") if kind == "video" else None,
                                frames=frames)
        comps[f"pure-{kind}"] = exs
        counts[f"pure-{kind}"] = {**c, "available": len(items[kind]),
                                  "excluded_synth_videos": len(items[kind]) - len(pool),
                                  "drawn": len(chosen), "files": [str(f) for f in files]}
    return comps, counts
