"""IV-Bench's requests: frames sampled once per video for every configuration, one request per query and
configuration, sent video by video as decoding finishes.

Frames come from :class:`lensbench.media.frame_cache.FrameCache` (each video decoded once for every
(frames, short side) configuration, on ``decode_workers`` threads). A request is built in the
``--pattern`` image order (``video-first``: N frames in time order, the query image, the text;
``image-first``: image, frames, text; ``text-only``: frames, text; ``no-video``: image, text;
``blind``: text); frame parts carry the video path
and the frame's time. ``--perturb frames:shuffle`` sends a query's frames in a seeded order, ``frames:drop=F``
leaves a seeded share of them out (the prompt's frame count is the number sent), ``options:shuffle`` letters the
options by a second shuffle seed (:mod:`lensbench.media.perturb`). A query whose video does not decode is an
:class:`~lensbench.benchmarks.steps.Unsent` unit per configuration (scored as an ``error`` of kind ``video``,
nothing sent).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lensbench.benchmarks.context import RunContext
from lensbench.benchmarks.ivbench.data import TASK_ABBREV, Query
from lensbench.benchmarks.ivbench.options import Choices, build_options
from lensbench.benchmarks.ivbench.prompts import NO_FRAMES, NO_IMAGE, build_text
from lensbench.benchmarks.ivbench.sweep import config_label
from lensbench.benchmarks.steps import Batches, Unsent
from lensbench.core.types import GenParams, ImagePart, Message, Request
from lensbench.media.perturb import frame_order, item_seed

__all__ = ["Config", "Framing", "OFFICIAL_MAX_TOKENS"]

#: Greedy decoding with max_new_tokens=1024, as in the official model wrappers (``--max-tokens`` overrides).
OFFICIAL_MAX_TOKENS = 1024

Config = tuple[int, Any]


def _facts(q: Query, ch: Choices) -> tuple[dict[str, Any], dict[str, Any]]:
    """The record labels and extra facts every configuration of query ``q`` shares."""
    labels = {"task": q.question_type, "column": TASK_ABBREV[q.question_type], "group": q.group[0],
              "video_id": q.video_id, "data_id": q.data_id, "granularity": q.granularity}
    extra = {"question": q.question, "answer_text": q.answer, "options": ch.as_dict, "n_options": len(ch.options),
             "dup_answer_removed": ch.dup_answer, "dup_distractor_removed": ch.dup_other,
             "empty_distractor_removed": ch.empty}
    return labels, extra


class Framing:
    """IV-Bench's frame sampling and request building for one set of options (see the module docstring).

    ``configs``: the (frames, short side) configurations; ``frame_rule``, ``pattern``, ``text_style``,
    ``decode_workers``, ``perturb``: as the options of the same names.
    """

    def __init__(self, configs: Sequence[Config], *, frame_rule: str, pattern: str, text_style: str,
                 decode_workers: int, perturb: str | None = None):
        self.configs = list(configs)
        self.frame_rule, self.pattern, self.text_style = frame_rule, pattern, text_style
        self.decode_workers = decode_workers
        self.perturb = perturb or ""

    def extract(self, q: Query, cache) -> Any:
        """``{(frames, short side): FrameSet}`` of the video of ``q`` (one decode for all configs) or its VideoError."""
        from lensbench.media.frame_cache import FrameSpec
        from lensbench.media.video import VideoError

        specs = [FrameSpec(self.frame_rule, n, r) for n, r in self.configs]
        try:
            got = cache.get_many(Path(q.video), specs)
            return {(s.num, s.resolution): got[s] for s in specs}
        except VideoError as exc:
            return exc
        except Exception as exc:  # noqa: BLE001 - any decoder failure is a per-video error
            return VideoError(Path(q.video), f"{type(exc).__name__}: {exc}")

    def extract_all(self, queries: Sequence[Query], cache) -> dict[str, Any]:
        """Frames of every video for every config: ``{video_id: {(frames, short side): FrameSet} | VideoError}``,
        decoded on ``decode_workers`` threads."""
        first = {q.video_id: q for q in queries}
        with ThreadPoolExecutor(max_workers=self.decode_workers) as pool:
            return dict(zip(first, pool.map(lambda q: self.extract(q, cache), first.values())))

    def requests(self, queries: Sequence[Query], frames: dict[str, Any], params: GenParams | None,
                 seed: int = 0) -> tuple[list[Request], list[Unsent]]:
        """Requests (one per query and config, id ``video_id/data_id`` plus ``@32f@360p`` in a sweep; ``meta``:
        the query, target letter, labels, extra, answer space) and the units of undecoded videos."""
        multi = len(self.configs) > 1
        reqs: list[Request] = []
        unsent: list[Unsent] = []
        img_parts: dict[str, ImagePart] = {}
        # options:shuffle: the per-item shuffle under a second seed, derived from the run seed
        opt_seed = item_seed(seed, self.perturb, "options") if self.perturb == "options:shuffle" else seed
        for q in queries:
            ch = build_options(q, opt_seed)
            labels, extra = _facts(q, ch)
            if self.perturb:
                extra["perturb"] = self.perturb
            fr = frames.get(q.video_id)
            for n, r in self.configs:
                rid = q.uid + (f"@{config_label(n, r)}" if multi else "")
                meta: dict[str, Any] = {"sample_id": q.uid, "target": ch.correct,
                                        "labels": dict(labels, frames=n, resolution=r, config=config_label(n, r))}
                if isinstance(fr, Exception) or fr is None:
                    meta["extra"] = dict(extra, error_kind="video")
                    unsent.append(Unsent(rid, meta, f"video: {fr}" if fr is not None else "video: not decoded"))
                    continue
                fs = fr[(n, r)]
                meta["extra"] = dict(extra, frame_indices=fs.indices, duration=fs.duration,
                                     frame_size=list(fs.frame_size))
                order = list(range(len(fs.paths)))
                if self.perturb.startswith("frames:"):
                    order = frame_order(len(fs.paths), self.perturb, item_seed(seed, self.perturb, rid))
                    meta["extra"]["frame_order"] = order
                meta["answer_space"] = [k for k, _ in ch.options]
                text = build_text(q, ch, pattern=self.pattern, frame_num=len(order), duration=fs.duration,
                                  style=self.text_style)
                ts = fs.timestamps
                fparts = [] if self.pattern in NO_FRAMES else [ImagePart.of(fs.paths[i], video=q.video, t_s=ts[i])
                                                               for i in order]
                if self.pattern in NO_IMAGE:
                    parts = [*fparts, text]
                else:
                    if q.image not in img_parts:
                        img_parts[q.image] = ImagePart.of(q.image)
                    ip = img_parts[q.image]
                    parts = [ip, *fparts, text] if self.pattern == "image-first" else [*fparts, ip, text]
                kw = {"params": params} if params is not None else {}
                reqs.append(Request(id=rid, messages=(Message.user(*parts),), meta=meta, **kw))
        return reqs, unsent

    def stream(self, samples: Sequence[Query], ctx: RunContext, cache) -> Batches:
        """The requests of ``samples`` video by video, each batch ready as soon as its video is decoded (videos
        decode in parallel while earlier batches are sent; issue 11: wall time ~ max(decoding, requests)).
        Query images are pre-flight checked before the first batch; at the end ``ctx.counts`` gains
        ``n_videos_decoded`` and ``n_video_errors``."""
        params = ctx.params(temperature=0.0, max_tokens=OFFICIAL_MAX_TOKENS)
        return Batches(self._batches(samples, ctx, cache, params), total=len(samples) * len(self.configs))

    async def _batches(self, samples: Sequence[Query], ctx: RunContext, cache, params: GenParams
                       ) -> AsyncIterator[list[Request | Unsent]]:
        if self.pattern not in NO_IMAGE:
            from lensbench.media.preflight import preflight_images

            await preflight_images(q.image for q in samples)
        by_vid: dict[str, list[Query]] = {}
        for q in samples:
            by_vid.setdefault(q.video_id, []).append(q)
        loop = asyncio.get_running_loop()
        pool = ThreadPoolExecutor(max_workers=self.decode_workers, thread_name_prefix="ivbench-decode")

        def one(qs: list[Query]):  # on the pool: decode, then build the video's requests (hashes its frame files)
            fr = self.extract(qs[0], cache)
            reqs, unsent = self.requests(qs, {qs[0].video_id: fr}, params, seed=ctx.seed)
            return fr, [*reqs, *unsent]

        futs = [loop.run_in_executor(pool, one, qs) for qs in by_vid.values()]
        n_errors = 0
        try:
            for fut in asyncio.as_completed(futs):  # in the order videos finish decoding
                fr, units = await fut
                n_errors += isinstance(fr, Exception)
                yield units
        finally:
            for fut in futs:
                fut.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            ctx.counts["n_videos_decoded"] = cache.decodes
            ctx.counts["n_video_errors"] = n_errors
