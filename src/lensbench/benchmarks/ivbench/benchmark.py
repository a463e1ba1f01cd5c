"""IV-Bench (Ma et al., 2025): image-grounded video perception and reasoning, 10-way MCQ.

Protocol (SPEC §3; paper Sec. 4.1, 4.3, Appendix C, Table 2; official code
github.com/multimodal-art-projection/IV-Bench ``inference.py``). One module per job:

* :mod:`.data`: the jsonl loader and the missing-media check (``--skip-missing``);
* :mod:`.options`: de-duplicated options (texts as released), per-item shuffle, letters a..j;
* :mod:`.prompts`: Appendix C prefix + question + options + instruction (``--text-style``);
* :mod:`.parse`: the reply's letter, or unparseable (never a random guess);
* :mod:`.aggregate`: Table 2 accuracy (P-Avg, R-Avg, Overall sample-weighted) and sweeps;
* :mod:`.report` / :mod:`.plot`: Table 2 layout, counts, sweep table and ``ivbench_sweep.png``;
* :mod:`.sweep`: the (frames, short side) configurations (``--frames``, ``--resolution``, ``--pairs``).

This module holds the :class:`IVBench` class: frames are sampled with
:class:`lensbench.media.frame_cache.FrameCache` (each video decoded once for every config), one
request per query and config is built in the ``--pattern`` image order (``video-first``: N frames
in time order, the query image, the text; ``image-first``: image, frames, text; ``text-only``:
frames, text), replies are parsed and scored into :class:`~lensbench.core.records.SampleRecord`.
Frames are logged as the video path plus each frame's timestamp.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, Field, field_validator, model_validator

from lensbench.benchmarks.base import Benchmark, RunContext, RunResult
from lensbench.benchmarks.ivbench.aggregate import aggregate_records
from lensbench.benchmarks.ivbench.data import TASK_ABBREV, Query, check_media, find_question_file, load_queries
from lensbench.benchmarks.ivbench.options import Choices, build_options
from lensbench.benchmarks.ivbench.parse import parse_choice
from lensbench.benchmarks.ivbench.plot import plot_sweep
from lensbench.benchmarks.ivbench.prompts import PATTERNS, TEXT_STYLES, build_text
from lensbench.benchmarks.ivbench.report import render_tables
from lensbench.benchmarks.ivbench.sweep import config_label, sweep_configs
from lensbench.core.errors import ConfigError
from lensbench.core.extras import Requirement
from lensbench.core.records import SampleRecord, outcome_of
from lensbench.core.types import ImagePart, Message, Request, StoredResponse
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline, nonempty
from lensbench.benchmarks.ivbench.units import CLUSTER, HEADLINES, accuracy_tables, sweep_cells

__all__ = ["IVBench", "OFFICIAL_MAX_TOKENS"]

#: Greedy decoding with max_new_tokens=1024, as in the official model wrappers (``--max-tokens`` overrides).
OFFICIAL_MAX_TOKENS = 1024


class IVBench(Benchmark):
    """IV-Bench: 1,686 image-grounded video MCQs on 747 videos; P-Avg / R-Avg / Overall (Table 2).

    See the module docstring for the protocol.
    """

    name = "iv-bench"
    title = "IV-Bench"
    description = "image-grounded video multiple choice (13 tasks), seek-based frame sampling"
    n_samples = 1686
    sample_unit = "queries"
    headline = "P-Avg / R-Avg / Overall (Table 2)"
    headlines = HEADLINES
    cluster = CLUSTER
    load_unit = "queries"
    not_settings = frozenset({"skip_missing", "images_dir", "questions", "videos_dir", "frame_cache",
                              "decode_workers"})

    @classmethod
    def unit_tables(cls, records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
        """One accuracy table per frames/resolution configuration (:mod:`lensbench.benchmarks.ivbench.units`)."""
        return nonempty(accuracy_tables(records))

    @classmethod
    def headline_cells(cls, metrics: dict[str, Any], tables: Callable[[], dict[str, tuple[str, Any]]]
                       ) -> list[tuple[Headline, str, dict[str, Any], str]]:
        """One cell per configuration of a sweep (:func:`lensbench.benchmarks.ivbench.units.sweep_cells`)."""
        return sweep_cells(metrics, tables) or super().headline_cells(metrics, tables)

    def requirements(self, data_dir: Path | None = None) -> list[Requirement]:
        """PyAV decodes the frames; a sweep (several frame counts or resolutions) also draws a plot (matplotlib)."""
        reqs = [Requirement("av", "video", "IV-Bench frame sampling")]
        if len(self.configs) > 1:
            reqs.append(Requirement("matplotlib", "plots", "the IV-Bench sweep plot", optional=True))
        return reqs

    @classmethod
    def write_demo(cls, root: Path) -> Path:
        """Generated queries, images and videos (:func:`lensbench.benchmarks.ivbench.demo.write_demo`)."""
        from lensbench.benchmarks.ivbench.demo import write_demo

        return write_demo(root)

    class Options(BaseModel):
        """IV-Bench options."""

        frames: str = Field(default="32", description="frames per video (paper: 32); a comma list (8,16,32,64) runs a "
                                                       "sweep sharing decoded frames")
        frame_rule: str = Field(default="centers", description="frame sampling: centers (official: centre of N equal "
                                                               "segments), linspace (incl. both ends) or fps:F")
        resolution: Optional[str] = Field(default=None, description="target short side of frames in px (never "
                                          "upscaled; default native); a comma list (72,108,144,240) sweeps")
        pairs: Optional[str] = Field(default=None, description="explicit FRAMESxRES sweep, e.g. 8x720,32x360, or "
                                     "'fig4b' for the equal-token pairs of Fig. 4(b); overrides --frames/--resolution")
        pattern: str = Field(default="video-first", description="video-first (frames, image, text), image-first or "
                                                                "text-only (no query image)")
        text_style: str = Field(default="official", description="official (prefix glued to question + '？', as the "
                                                                "official code) or clean")
        skip_missing: bool = Field(default=False, description="run the items whose video and image exist; report "
                                   "how many were skipped (default: stop with an error listing them)")
        questions: Optional[str] = Field(default=None, description="question jsonl (default: test_data.jsonl or "
                                         "dataset/test_data.jsonl in --data-dir)")
        videos_dir: Optional[str] = Field(default=None, description="folder of <video_id>.mp4 (default DATA/videos)")
        images_dir: Optional[str] = Field(default=None, description="folder of query images (default DATA/images)")
        frame_cache: Optional[str] = Field(default=None, description="frame cache folder (default RUN/media/"
                                           "ivbench_frames); share it between runs to decode once")
        decode_workers: int = Field(default=4, ge=1, description="videos decoded in parallel")

        @field_validator("frames", "resolution", mode="before")
        @classmethod
        def _intish(cls, v: Any) -> Any:
            return str(v) if isinstance(v, int) and not isinstance(v, bool) else v

        @model_validator(mode="after")
        def _configs(self) -> "IVBench.Options":
            try:
                sweep_configs(self.frames, self.resolution, self.pairs)
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
            return self

        @field_validator("frame_rule")
        @classmethod
        def _rule(cls, v: str) -> str:
            from lensbench.media.video import parse_rule

            parse_rule(v)
            return v.strip()

        @field_validator("pattern")
        @classmethod
        def _pattern(cls, v: str) -> str:
            if v not in PATTERNS:
                raise ValueError(f"pattern must be video-first, image-first or text-only, got {v!r}")
            return v

        @field_validator("text_style")
        @classmethod
        def _style(cls, v: str) -> str:
            if v not in TEXT_STYLES:
                raise ValueError(f"text_style must be official or clean, got {v!r}")
            return v

    def __init__(self, options: BaseModel | None = None):
        super().__init__(options)
        self.configs = sweep_configs(self.options.frames, self.options.resolution, self.options.pairs)
        self.load_stats: dict[str, Any] = {}
        self._facts: dict[str, dict[str, Any]] = {}

    # ----------------------------------------------------------------- load
    def load(self, data_dir: Path) -> list[Query]:
        """Queries whose video (``videos/<video_id>.mp4``) and image (``images/<image_name>``) exist.

        Folders: ``--videos-dir`` / ``--images-dir`` (default ``DATA/videos``, ``DATA/images``);
        question file: see :func:`~lensbench.benchmarks.ivbench.data.find_question_file`.

        Raises DataError naming the question file for bad data, and naming the folders with the
        number of queries whose video / image is missing (first few listed) unless
        ``--skip-missing`` (then they are left out and counted in :attr:`load_stats`).
        """
        o = self.options
        d = Path(data_dir)
        qfile = find_question_file(d, o.questions)
        videos = Path(o.videos_dir) if o.videos_dir else d / "videos"
        images = Path(o.images_dir) if o.images_dir else d / "images"
        queries = load_queries(qfile)
        mc = check_media(qfile, queries, videos, images, need_image=o.pattern != "text-only",
                         skip_missing=o.skip_missing)
        kept = mc.kept
        self.load_stats = {
            "question_file": str(qfile), "n_queries_in_file": len(queries), "n_skipped_missing": mc.n_missing,
            "n_skipped_missing_video": len(mc.missing_video), "n_skipped_missing_image": len(mc.missing_image),
            "n_items_duplicate_answer": sum(any(x.strip() == q.answer.strip() for x in q.distractors) for q in kept),
        }
        self._videos, self._images = videos, images
        return kept

    # --------------------------------------------------------------- frames
    def _frame_cache(self, ctx: RunContext):
        from lensbench.media.frame_cache import FrameCache

        root = Path(self.options.frame_cache) if self.options.frame_cache else ctx.media_dir / "ivbench_frames"
        return FrameCache(root)

    def extract_frames(self, queries: Sequence[Query], cache, videos: Path) -> dict[str, Any]:
        """Frames of every video for every config: ``{video_id: {(frames, short side): FrameSet} | VideoError}``.

        Each video is decoded once for all configs (union of indices); decoding runs on
        ``decode_workers`` threads. A video that fails to decode maps to its VideoError.
        """
        vids = list(dict.fromkeys(q.video_id for q in queries))
        with ThreadPoolExecutor(max_workers=self.options.decode_workers) as pool:
            return dict(zip(vids, pool.map(lambda vid: self._extract_one(vid, cache, videos), vids)))

    def _extract_one(self, vid: str, cache, videos: Path) -> Any:
        """``{(frames, short side): FrameSet}`` of one video (one decode for all configs) or its VideoError."""
        from lensbench.media.frame_cache import FrameSpec
        from lensbench.media.video import VideoError

        specs = [FrameSpec(self.options.frame_rule, n, r) for n, r in self.configs]
        try:
            got = cache.get_many(videos / f"{vid}.mp4", specs)
            return {(s.num, s.resolution): got[s] for s in specs}
        except VideoError as exc:
            return exc
        except Exception as exc:  # noqa: BLE001 - any decoder failure is a per-video error
            return VideoError(videos / f"{vid}.mp4", f"{type(exc).__name__}: {exc}")

    # --------------------------------------------------------------- expand
    @staticmethod
    def _facts_of(q: Query, ch: Choices) -> dict[str, Any]:
        labels = {"task": q.question_type, "column": TASK_ABBREV[q.question_type], "group": q.group[0],
                  "video_id": q.video_id, "data_id": q.data_id, "granularity": q.granularity}
        extra = {"question": q.question, "answer_text": q.answer, "options": ch.as_dict, "n_options": len(ch.options),
                 "dup_answer_removed": ch.dup_answer, "dup_distractor_removed": ch.dup_other,
                 "empty_distractor_removed": ch.empty}
        return {"labels": labels, "extra": extra, "target": ch.correct}

    def requests(self, queries: Sequence[Query], frames: dict[str, Any], ctx: RunContext | None = None,
                 seed: int = 0) -> tuple[list[Request], dict[str, dict[str, Any]]]:
        """Requests (one per query and config, id ``video_id/data_id`` plus ``@32f@360p`` in a sweep)
        and per-request facts ``{id: {"labels", "extra", "target", "error"?}}``.

        Frame parts carry the video path and the frame's time (``ImagePart.video`` / ``t_s``).
        Queries whose video failed to decode get no request; their facts carry ``error``.
        """
        o = self.options
        params = ctx.params(temperature=0.0, max_tokens=OFFICIAL_MAX_TOKENS) if ctx is not None else None
        multi = len(self.configs) > 1
        reqs: list[Request] = []
        facts: dict[str, dict[str, Any]] = {}
        img_parts: dict[str, ImagePart] = {}
        for q in queries:
            ch = build_options(q, seed)
            base = self._facts_of(q, ch)
            fr = frames.get(q.video_id)
            video = str(self._videos / f"{q.video_id}.mp4")
            for n, r in self.configs:
                rid = q.uid + (f"@{config_label(n, r)}" if multi else "")
                f = {"labels": dict(base["labels"], frames=n, resolution=r, config=config_label(n, r)),
                     "extra": dict(base["extra"]), "target": ch.correct}
                facts[rid] = f
                if isinstance(fr, Exception) or fr is None:
                    f["error"] = f"video: {fr}" if fr is not None else "video: not decoded"
                    continue
                fs = fr[(n, r)]
                f["extra"].update(frame_indices=fs.indices, duration=fs.duration, frame_size=list(fs.frame_size))
                text = build_text(q, ch, pattern=o.pattern, frame_num=len(fs.paths), duration=fs.duration,
                                  style=o.text_style)
                fparts = [ImagePart.of(p, video=video, t_s=t) for p, t in zip(fs.paths, fs.timestamps)]
                if o.pattern == "text-only":
                    parts = [*fparts, text]
                else:
                    ip = str(self._images / q.image_name)
                    if ip not in img_parts:
                        img_parts[ip] = ImagePart.of(ip)
                    parts = [img_parts[ip], *fparts, text] if o.pattern == "image-first" else [*fparts, img_parts[ip], text]
                kw = {"params": params} if params is not None else {}
                reqs.append(Request(id=rid, messages=(Message.user(*parts),),
                                    meta={"replay_match": ["ivbench", q.video_id, q.data_id, n, r],
                                          "answer_space": [k for k, _ in ch.options]}, **kw))
        return reqs, facts

    def expand(self, samples: list[Query], ctx: RunContext) -> list[Request]:
        """Sample frames (cached; one decode per video for all configs) and build the requests.

        Per-request facts are kept for :meth:`score`; ``load_stats`` gains ``n_videos_decoded``
        and ``n_video_errors``.
        """
        if not hasattr(self, "_videos"):
            self.load(ctx.data_dir)
        cache = self._frame_cache(ctx)
        frames = self.extract_frames(samples, cache, self._videos)
        self.load_stats["n_videos_decoded"] = cache.decodes
        self.load_stats["n_video_errors"] = sum(isinstance(v, Exception) for v in frames.values())
        reqs, self._facts = self.requests(samples, frames, ctx, seed=ctx.seed)
        return reqs

    # ---------------------------------------------------------------- score
    def score(self, samples: list[Query], requests: list[Request], replies: dict[str, StoredResponse],
              ctx: RunContext) -> list[SampleRecord]:
        """One record per (query, config), in query order then config order.

        ``answer``: parsed letter (None = unparseable, scored wrong); ``target``: the correct
        letter; ``extra.error_kind``: ``video`` (undecodable, no request sent) or ``transport``.
        """
        by_id = {r.id: r for r in requests}
        records = []
        for rid, f in self._facts.items():
            common = {"labels": f["labels"], "target": f["target"]}
            if "error" in f:
                records.append(SampleRecord(benchmark=self.name, sample_id=rid, outcome="error", error=f["error"],
                                            extra=dict(f["extra"], error_kind="video"), **common))
                continue
            resp = replies.get(rid)
            if resp is None or not resp.ok:
                records.append(SampleRecord.from_reply(self.name, rid, by_id[rid], resp, outcome="error",
                                                       extra=dict(f["extra"], error_kind="transport"), **common))
                continue
            parsed = parse_choice(resp.text, f["extra"]["options"])
            outcome = outcome_of(None if parsed is None else parsed == f["target"])
            records.append(SampleRecord.from_reply(self.name, rid, by_id[rid], resp, answer=parsed, outcome=outcome,
                                                   extra=f["extra"], **common))
        return records

    async def evaluate(self, samples: list[Query], ctx: RunContext) -> list[SampleRecord]:
        """expand -> engine -> score, streamed: videos are decoded in parallel (``decode_workers``) and
        each video's requests go to the engine as soon as its frames are ready, while later videos
        are still decoding (issue 11: wall time ~ max(decoding, requests), not their sum). Requests,
        request keys and records (query order) are those of :meth:`expand`. A sweep also writes
        ``ivbench_sweep.png`` in the run folder (a plot failure is noted, never fatal)."""
        requests, replies = await self._stream(samples, ctx)
        records = self.score(samples, requests, replies, ctx)
        if len(self.configs) > 1:
            try:
                plot_sweep(self.aggregate(records)[0].get("sweep", []), ctx.run_dir / "ivbench_sweep.png",
                           title=f"IV-Bench sweep: {ctx.model_name}")
            except Exception as exc:  # noqa: BLE001 - a plot must never lose a run
                self.load_stats["plot_error"] = str(exc)
        return records

    async def _stream(self, samples: list[Query], ctx: RunContext) -> tuple[list[Request], dict[str, StoredResponse]]:
        """Decode videos on a thread pool and feed each video's requests to ``ctx.generate_stream`` as
        soon as its frames are ready; ``(requests in query order, replies)``. Query images are
        pre-flight checked before the first request."""
        if not hasattr(self, "_videos"):
            self.load(ctx.data_dir)
        if self.options.pattern != "text-only":
            from lensbench.media.preflight import preflight_images

            await preflight_images(str(self._images / q.image_name) for q in samples)
        cache = self._frame_cache(ctx)
        by_vid: dict[str, list[Query]] = {}
        for q in samples:
            by_vid.setdefault(q.video_id, []).append(q)
        loop = asyncio.get_running_loop()
        pool = ThreadPoolExecutor(max_workers=self.options.decode_workers, thread_name_prefix="ivbench-decode")

        def one(vid: str):  # on the pool: decode, then build the video's requests (hashes its frame files)
            fr = self._extract_one(vid, cache, self._videos)
            return vid, fr, *self.requests(by_vid[vid], {vid: fr}, ctx, seed=ctx.seed)

        futs = [loop.run_in_executor(pool, one, vid) for vid in by_vid]
        frames: dict[str, Any] = {}
        reqs: dict[str, Request] = {}
        facts: dict[str, dict[str, Any]] = {}

        async def batches():  # in the order videos finish decoding (records are put in query order below)
            for fut in asyncio.as_completed(futs):
                vid, frames[vid], got, f = await fut
                reqs.update((r.id, r) for r in got)
                facts.update(f)
                yield got

        try:
            replies = await ctx.generate_stream(batches(), label=self.name, total=len(samples) * len(self.configs))
        finally:
            for fut in futs:
                fut.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
        self.load_stats["n_videos_decoded"] = cache.decodes
        self.load_stats["n_video_errors"] = sum(isinstance(v, Exception) for v in frames.values())
        multi = len(self.configs) > 1
        order = [q.uid + (f"@{config_label(n, r)}" if multi else "") for q in samples for n, r in self.configs]
        self._facts = {rid: facts[rid] for rid in order}
        return [reqs[rid] for rid in order if rid in reqs], replies

    # ------------------------------------------------------ aggregate/report
    def aggregate(self, records: list[SampleRecord]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Table 2 accuracy (%) for the first config, a ``sweep`` list for all; counts.

        See :func:`lensbench.benchmarks.ivbench.aggregate.aggregate_records`.
        """
        return aggregate_records(records, self.configs, frame_rule=self.options.frame_rule,
                                 pattern=self.options.pattern, load_stats=self.load_stats)

    def tables(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Table 2 layout, Counts and (for sweeps) the sweep table, as md or csv.

        See :func:`lensbench.benchmarks.ivbench.report.render_tables`.
        """
        return render_tables(results, fmt, with_paper)
