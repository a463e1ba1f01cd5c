"""IV-Bench data synthesis (paper Sec. 4.4): turn video-QA items into image-grounded queries.

Three steps, each resumable (model calls go through the engine and its SQLite store in the
work folder; frames through the frame cache):

1. **Rewrite** (LLM, ``prompts/ivbench_synth_rewrite.txt``): pick the entity mention and
   replace it by "the entity in the image"; reply ``{"entity", "question"}``.
2. **Filter** (LLM judge, ``prompts/ivbench_synth_filter.txt``): drop items the judge can
   answer from the text alone (``{"answerable_without_image": true}``).
3. **Image** (embedder): sample ``frames`` frames (official ``centers`` rule), embed the entity
   text and the frames, keep the most similar frame as the query image (CLIP-L in the paper:
   ``--embedder clip`` / ``hf:openai/clip-vit-large-patch14``; ``simple`` is a weight-free
   colour-word baseline for offline use).

Input (``--videoqa``): jsonl, one item per line: ``video_id``, ``question``, ``answer``, optional
``distractors`` (list) and ``question_type`` / ``granularity``. Output: the IV-Bench jsonl schema
(``{video_id: [query]}``) plus ``images/<video_id>_<data_id>_image.png``.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from lensbench.core.errors import ConfigError, DataError
from lensbench.scoring.text import extract_json_object, strip_reasoning
from lensbench.core.types import GenParams, Message, Request
from lensbench.core.resources import read_text
from lensbench.core.extras import require
from lensbench.core.jsonl import dumps_line, iter_jsonl

__all__ = ["Embedder", "SimpleColorEmbedder", "ClipEmbedder", "make_embedder", "VideoQAItem", "load_videoqa",
           "synthesize"]


# --------------------------------------------------------------------------- embedders
class Embedder(ABC):
    """Text and image embeddings in one space (rows L2-normalised), for frame choice.

    ``fingerprint`` names the model; :meth:`embed_texts` -> ``(n, d)``; :meth:`embed_images`
    (image files) -> ``(m, d)`` float arrays.
    """

    fingerprint: str = ""

    @abstractmethod
    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), d)`` unit vectors."""

    @abstractmethod
    def embed_images(self, paths: Sequence[str | Path]) -> np.ndarray:
        """``(len(paths), d)`` unit vectors."""


#: Basic colour names and their RGB prototypes (SimpleColorEmbedder).
COLOURS: dict[str, tuple[int, int, int]] = {
    "black": (0, 0, 0), "white": (255, 255, 255), "gray": (128, 128, 128), "red": (220, 30, 30),
    "orange": (255, 140, 0), "yellow": (240, 220, 30), "green": (40, 170, 40), "blue": (30, 60, 220),
    "purple": (130, 40, 160), "pink": (255, 150, 190), "brown": (130, 80, 30),
}
_SYNONYMS = {"grey": "gray", "violet": "purple", "golden": "yellow", "gold": "yellow"}


def _unit(m: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(n == 0, 1, n)


class SimpleColorEmbedder(Embedder):
    """Weight-free baseline: colour words in the text vs the colour histogram of the image.

    Text vector: counts of the 11 basic colour names (``COLOURS``); image vector: share of
    pixels nearest to each colour prototype (64x64 thumbnail). Only meaningful for colour
    mentions ("the red car"); with no colour word every frame ties and the middle one wins.
    """

    fingerprint = "simple-colour-v1"

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        names = list(COLOURS)
        out = np.zeros((len(texts), len(names)))
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z]+", t.lower()):
                w = _SYNONYMS.get(w, w)
                if w in COLOURS:
                    out[i, names.index(w)] += 1
        return _unit(out)

    def embed_images(self, paths: Sequence[str | Path]) -> np.ndarray:
        protos = np.array(list(COLOURS.values()), dtype=float)
        out = np.zeros((len(paths), len(protos)))
        for i, p in enumerate(paths):
            with Image.open(p) as im:
                px = np.asarray(im.convert("RGB").resize((64, 64)), dtype=float).reshape(-1, 3)
            nearest = np.argmin(((px[:, None, :] - protos[None]) ** 2).sum(-1), axis=1)
            out[i] = np.bincount(nearest, minlength=len(protos)) / len(px)
        return _unit(out)


class ClipEmbedder(Embedder):
    """CLIP through open_clip (``clip[:ARCH[:PRETRAINED]]``, default ViT-L-14/openai = CLIP-L as in
    the paper) or transformers (``hf:MODEL_ID``). Imported lazily; weights must be available
    (cached or downloadable). Raises ConfigError when the library or weights are missing.
    """

    def __init__(self, spec: str = "clip"):
        self.spec = spec
        self.fingerprint = spec
        self._model = None

    def _load(self):
        if self._model is not None:
            return
        kind, _, rest = self.spec.partition(":")
        require("torch", "hf", f"--embedder {self.spec} (or use --embedder simple)")
        try:
            if kind == "hf":
                from transformers import CLIPModel, CLIPProcessor

                mid = rest or "openai/clip-vit-large-patch14"
                self._model = ("hf", CLIPModel.from_pretrained(mid).eval(), CLIPProcessor.from_pretrained(mid))
            else:
                import open_clip

                arch, _, pre = rest.partition(":")
                model, _, preprocess = open_clip.create_model_and_transforms(arch or "ViT-L-14",
                                                                             pretrained=pre or "openai")
                self._model = ("oc", model.eval(), preprocess, open_clip.get_tokenizer(arch or "ViT-L-14"))
        except ImportError as exc:
            raise ConfigError(f"--embedder {self.spec}: {exc} (pip install 'lensbench[hf]')") from None
        except Exception as exc:  # noqa: BLE001 - offline hub, missing weights
            raise ConfigError(f"--embedder {self.spec}: cannot load CLIP weights ({type(exc).__name__}: {exc}); "
                              "offline? use --embedder simple") from None

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        torch = require("torch", "hf", f"--embedder {self.spec}")

        self._load()
        with torch.no_grad():
            if self._model[0] == "hf":
                _, m, proc = self._model
                f = m.get_text_features(**proc(text=list(texts), return_tensors="pt", padding=True))
            else:
                _, m, _pre, tok = self._model
                f = m.encode_text(tok(list(texts)))
        return _unit(f.float().cpu().numpy())

    def embed_images(self, paths: Sequence[str | Path]) -> np.ndarray:
        torch = require("torch", "hf", f"--embedder {self.spec}")

        self._load()
        ims = [Image.open(p).convert("RGB") for p in paths]
        with torch.no_grad():
            if self._model[0] == "hf":
                _, m, proc = self._model
                f = m.get_image_features(**proc(images=ims, return_tensors="pt"))
            else:
                _, m, pre, _tok = self._model
                f = m.encode_image(torch.stack([pre(i) for i in ims]))
        return _unit(f.float().cpu().numpy())


def make_embedder(spec: str) -> Embedder:
    """``simple`` | ``clip[:ARCH[:PRETRAINED]]`` | ``hf:MODEL_ID``. Raises ConfigError otherwise."""
    if spec == "simple":
        return SimpleColorEmbedder()
    if spec == "clip" or spec.startswith(("clip:", "hf:")):
        return ClipEmbedder(spec)
    raise ConfigError(f"unknown --embedder {spec!r}: use simple, clip[:ARCH[:PRETRAINED]] or hf:MODEL_ID")


# --------------------------------------------------------------------------- data
@dataclass(frozen=True)
class VideoQAItem:
    """One input video-QA item (see the module docstring for the jsonl fields)."""

    video_id: str
    question: str
    answer: str
    distractors: tuple[str, ...] = ()
    question_type: str = ""
    granularity: str = ""


def load_videoqa(path: str | Path) -> list[VideoQAItem]:
    """Items of a video-QA jsonl. Raises DataError naming the file, line and field."""
    p = Path(path)
    out = []
    for ln, d in iter_jsonl(p, "video-QA file", kind=dict):
        for k in ("video_id", "question", "answer"):
            if not isinstance(d.get(k), str) or not d[k].strip():
                raise DataError(p, f"line {ln}: missing or empty", field=k)
        ds = d.get("distractors", [])
        if not isinstance(ds, list):
            raise DataError(p, f"line {ln}: must be a list", field="distractors")
        out.append(VideoQAItem(d["video_id"], d["question"], d["answer"], tuple(str(x) for x in ds),
                               str(d.get("question_type", "")), str(d.get("granularity", ""))))
    return out


def _template(name: str) -> str:
    raw = read_text(__package__, "prompts", f"synth_{name}.txt")
    return raw.split("-----\n", 1)[1].rstrip("\n")


def _json_reply(text: str | None) -> dict[str, Any] | None:
    s = strip_reasoning(text)
    blob = extract_json_object(s)
    if blob is None:
        return None
    try:
        d = json.loads(blob)
    except json.JSONDecodeError:
        return None
    return d if isinstance(d, dict) else None


# --------------------------------------------------------------------------- pipeline
async def synthesize(items: Sequence[VideoQAItem], videos_dir: Path, out_file: Path, generate, embedder: Embedder,
                     frame_cache, *, frames: int = 16, params: GenParams | None = None,
                     default_question_type: str = "Details Event") -> dict[str, int]:
    """Run the three steps and write ``out_file`` (IV-Bench jsonl) and ``images/`` beside it.

    ``generate(requests, label) -> {id: StoredResponse}`` is the engine (rewrite requests use
    role ``model``, filter requests role ``judge``); ``frame_cache`` a
    :class:`~lensbench.media.frame_cache.FrameCache`. Returns counts per outcome: ``n_input``,
    ``n_no_entity`` (rewrite gave none / unparseable), ``n_error`` (transport), ``n_answerable``
    (filtered out), ``n_judge_unparseable``, ``n_video_error``, ``n_written``. Items without a
    ``question_type`` get ``default_question_type`` (IV-Bench's loader needs one of its 13 tasks).
    """
    params = params or GenParams(temperature=0.0, max_tokens=512)
    counts: dict[str, int] = defaultdict(int)
    counts["n_input"] = len(items)
    rewritten = await _rewrite(items, generate, params, counts)
    keep = await _filter(items, rewritten, generate, params, counts)
    img_dir = out_file.parent / "images"
    img_dir.mkdir(parents=True, exist_ok=True)
    per_video: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for i in keep:
        it = items[i]
        ent, q = rewritten[i]
        found = _query_image(it, ent, videos_dir, embedder, frame_cache, frames)
        if found is None:
            counts["n_video_error"] += 1
            continue
        frame, index, sim = found
        data_id = len(per_video[it.video_id])
        name = f"{it.video_id}_{data_id}_image.png"
        with Image.open(frame) as im:
            im.convert("RGB").save(img_dir / name)
        per_video[it.video_id].append({
            "data_id": data_id, "image_name": name, "question": q, "question_type": it.question_type or default_question_type,
            "granularity": it.granularity, "answer": it.answer, "answer_location": "",
            "distractors": list(it.distractors), "entity": ent, "source_question": it.question,
            "frame_index": index, "similarity": sim, "embedder": embedder.fingerprint})
        counts["n_written"] += 1
    out_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_file.with_suffix(out_file.suffix + ".tmp")
    tmp.write_text("".join(dumps_line({v: qs}) + "\n" for v, qs in per_video.items()),
                   encoding="utf-8")
    tmp.replace(out_file)
    return dict(counts)


async def _rewrite(items: Sequence[VideoQAItem], generate, params: GenParams, counts: dict[str, int]
                   ) -> dict[int, tuple[str, str]]:
    """Step 1: each question rewritten around one visual entity, ``{item: (entity, question)}``; a failed call
    counts in ``n_error``, a reply without both in ``n_no_entity``."""
    rw_t = _template("rewrite")
    reqs = [Request(id=f"rewrite/{i}", params=params,
                    messages=(Message.user(rw_t.format(question=it.question, answer=it.answer)),))
            for i, it in enumerate(items)]
    got = await generate(reqs, "rewrite")
    rewritten: dict[int, tuple[str, str]] = {}
    for i in range(len(items)):
        r = got[f"rewrite/{i}"]
        if not r.ok:
            counts["n_error"] += 1
            continue
        d = _json_reply(r.text)
        ent, q = (d or {}).get("entity"), (d or {}).get("question")
        if not isinstance(ent, str) or not isinstance(q, str) or not ent.strip() or not q.strip():
            counts["n_no_entity"] += 1
            continue
        rewritten[i] = (ent.strip(), q.strip())
    return rewritten


async def _filter(items: Sequence[VideoQAItem], rewritten: dict[int, tuple[str, str]], generate, params: GenParams,
                  counts: dict[str, int]) -> list[int]:
    """Step 2: the judge keeps the rewritten questions it cannot answer without the image; a failed call counts
    in ``n_error``, an answerable one in ``n_answerable``, an unreadable verdict in ``n_judge_unparseable``."""
    fl_t = _template("filter")
    reqs = []
    for i, (_ent, q) in rewritten.items():
        opts = [items[i].answer, *items[i].distractors]
        reqs.append(Request(id=f"filter/{i}", role="judge", params=params, messages=(Message.user(fl_t.format(
            question=q, options="\n".join(f"{chr(97 + k)}. {o}" for k, o in enumerate(sorted(opts))))),)))
    got = await generate(reqs, "filter")
    keep = []
    for i in rewritten:
        r = got[f"filter/{i}"]
        if not r.ok:
            counts["n_error"] += 1
            continue
        v = (_json_reply(r.text) or {}).get("answerable_without_image")
        if not isinstance(v, bool):
            counts["n_judge_unparseable"] += 1
        elif v:
            counts["n_answerable"] += 1
        else:
            keep.append(i)
    return keep


def _query_image(it: VideoQAItem, entity: str, videos_dir: Path, embedder: Embedder, frame_cache, frames: int
                 ) -> tuple[str, int, float] | None:
    """Step 3: the frame of the item's video most like ``entity`` (the middle one when all are alike):
    ``(frame file, frame index, similarity)``; None when the video does not decode."""
    from lensbench.media.frame_cache import FrameSpec
    from lensbench.media.video import VideoError

    try:
        fs = frame_cache.get(videos_dir / f"{it.video_id}.mp4", FrameSpec("centers", frames, None))
    except VideoError:
        return None
    sims = embedder.embed_images(fs.paths) @ embedder.embed_texts([entity])[0]
    best = int(np.argmax(sims)) if np.ptp(sims) > 0 else len(fs.paths) // 2
    return fs.paths[best], fs.indices[best], float(sims[best])
