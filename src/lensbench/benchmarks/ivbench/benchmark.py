"""IV-Bench (Ma et al., 2025): image-grounded video perception and reasoning, 10-way MCQ.

Protocol (IV-Bench README, Protocol; paper Sec. 4.1, 4.3, Appendix C, Table 2; official code
github.com/multimodal-art-projection/IV-Bench ``inference.py``). One module per job:

* :mod:`.data`: the jsonl loader and the missing-media check (``--skip-missing``);
* :mod:`.options`: de-duplicated options (texts as released), per-item shuffle, letters a..j;
* :mod:`.prompts`: Appendix C prefix + question + options + instruction (``--text-style``);
* :mod:`.parse`: the reply's letter, or unparseable (never a random guess);
* :mod:`.aggregate`: Table 2 accuracy (P-Avg, R-Avg, Overall sample-weighted) and sweeps;
* :mod:`.report` / :mod:`.plot`: Table 2 layout, counts, sweep table and ``ivbench_sweep.png``;
* :mod:`.sweep`: the (frames, short side) configurations (``--frames``, ``--resolution``, ``--pairs``).

* :mod:`.expand`: frames decoded once per video for every config, one request per query and config in
  the ``--pattern`` image order, sent video by video as decoding finishes;
* :mod:`.units`: the Table 2 unit tables (the video is the resampled cluster);
* ``--perturb frames:shuffle | frames:drop=F | options:shuffle``: seeded input perturbations applied in
  :mod:`.expand` (:mod:`lensbench.media.perturb`, ``docs/perturbations.md``).

This module holds the :class:`IVBench` class: load, the steps' wiring, per-reply scoring into
:class:`~lensbench.core.records.SampleRecord` (frames logged as the video path plus each frame's
timestamp), aggregation and tables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, Field, field_validator, model_validator

from lensbench.benchmarks.ivbench.interop import IVBenchMap
from lensbench.core.interop import interop_formats
from lensbench.benchmarks.base import Benchmark, Loaded, RunContext, RunResult
from lensbench.benchmarks.ivbench import layout as release
from lensbench.benchmarks.ivbench.aggregate import aggregate_records
from lensbench.benchmarks.ivbench.data import Query, check_media, find_question_file, load_queries
from lensbench.benchmarks.ivbench.expand import OFFICIAL_MAX_TOKENS, Framing
from lensbench.benchmarks.ivbench.parse import parse_choice
from lensbench.benchmarks.ivbench.plot import plot_sweep
from lensbench.benchmarks.ivbench.prompts import NO_FRAMES, NO_IMAGE, Pattern, TextStyle
from lensbench.benchmarks.ivbench.report import render_tables
from lensbench.benchmarks.ivbench.sweep import sweep_configs
from lensbench.benchmarks.ivbench.units import CLUSTER, HEADLINES, accuracy_tables, sweep_cells
from lensbench.benchmarks.steps import Batches, Unsent
from lensbench.core.errors import ConfigError
from lensbench.core.extras import Requirement
from lensbench.core.records import SampleRecord
from lensbench.core.types import Request, StoredResponse
from lensbench.media.perturb import check_perturbation
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.choice import choice_outcome
from lensbench.scoring.units import Headline, nonempty

__all__ = ["IVBench", "OFFICIAL_MAX_TOKENS"]


class IVBench(Benchmark):
    """IV-Bench: 1,686 image-grounded video MCQs on 747 videos; P-Avg / R-Avg / Overall (Table 2).

    See the module docstring for the protocol.
    """

    name = "iv-bench"
    interop = IVBenchMap()  # VLMEvalKit / lmms-eval rows (ivbench/interop.py)
    replay_formats = interop_formats(interop)
    title = "IV-Bench"
    description = "image-grounded video multiple choice (13 tasks), seek-based frame sampling"
    n_samples = 1686
    sample_unit = "queries"
    headline = "P-Avg / R-Avg / Overall (Table 2)"
    headlines = HEADLINES
    layout = release.LAYOUT
    #: the optional pieces (:attr:`lensbench.benchmarks.base.Benchmark.pieces`)
    pieces = {
        "demo": "lensbench.benchmarks.ivbench.demo:write_demo",
        "stats": "lensbench.benchmarks.ivbench.stats:dataset_stats",
        "reproduce": "lensbench.benchmarks.ivbench.reproduce:paper",
        "crafted": "lensbench.benchmarks.ivbench.crafted:craft_records",
        "figures": "lensbench.benchmarks.ivbench.figures:figures",
    }
    cluster = CLUSTER
    load_unit = "queries"
    not_settings = frozenset({"skip_missing", "images_dir", "questions", "videos_dir", "frame_cache",
                              "decode_workers"})

    @classmethod
    def release_key(cls, record: SampleRecord) -> tuple[str, str] | None:
        """``(video, query)`` of a record (a sweep has one record per query and setting)."""
        video = str(record.labels.get("video_id", record.sample_id))
        data_id = record.labels.get("data_id")
        return video, f"{video}/{data_id}" if data_id is not None else record.sample_id

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
        pattern: Pattern = Field(default="video-first", description="video-first (frames, image, text), image-first, "
                             "text-only (no query image), no-video (image, text) or blind (text only): the last two "
                             "are the Sec. 2.3 quality-check baselines (videos still decoded: the same items)")
        text_style: TextStyle = Field(default="official", description="official (prefix glued to question + '？', as the "
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
        perturb: Optional[str] = Field(default=None, description="an input perturbation (docs/perturbations.md): "
                                       "frames:shuffle (frames in a seeded order), frames:drop=F (a seeded share F "
                                       "of the frames left out), options:shuffle (a second option-shuffle seed); "
                                       "compare the run with its unperturbed twin (lensbench compare)")

        @field_validator("perturb")
        @classmethod
        def _perturb(cls, v: Optional[str]) -> Optional[str]:
            return check_perturbation(v, {"frames": "", "options": "", "palette": "its images are not thermal"},
                                      "IV-Bench")

        @model_validator(mode="after")
        def _perturb_pattern(self) -> "IVBench.Options":
            if (self.perturb or "").startswith("frames:") and self.pattern in NO_FRAMES:
                raise ValueError(f"{self.perturb} changes the frames: --pattern {self.pattern} sends none")
            return self

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


    def __init__(self, options: BaseModel | None = None):
        super().__init__(options)
        o = self.options
        self.configs = sweep_configs(o.frames, o.resolution, o.pairs)
        self.framing = Framing(self.configs, frame_rule=o.frame_rule, pattern=o.pattern, text_style=o.text_style,
                               decode_workers=o.decode_workers, perturb=o.perturb)

    def load(self, data_dir: Path) -> Loaded:
        """Queries whose video (``videos/<video_id>.mp4``) and image (``images/<image_name>``) exist, with
        those paths (``Query.video`` / ``Query.image``).

        Folders: ``--videos-dir`` / ``--images-dir`` (default ``DATA/videos``, ``DATA/images``);
        question file: see :func:`~lensbench.benchmarks.ivbench.data.find_question_file`. Counts: the
        question file, queries in it, skipped for missing media (video, image), items repeating the answer.

        Raises DataError naming the question file for bad data, and naming the folders with the
        number of queries whose video / image is missing (first few listed) unless ``--skip-missing``
        (then they are left out and counted).
        """
        o = self.options
        d = Path(data_dir)
        qfile = find_question_file(d, o.questions)
        videos = Path(o.videos_dir) if o.videos_dir else d / "videos"
        images = Path(o.images_dir) if o.images_dir else d / "images"
        queries = load_queries(qfile)
        mc = check_media(qfile, queries, videos, images, need_image=o.pattern not in NO_IMAGE,
                         skip_missing=o.skip_missing)
        kept = [replace(q, video=str(videos / f"{q.video_id}.mp4"), image=str(images / q.image_name)) for q in mc.kept]
        return Loaded(kept, {
            "question_file": str(qfile), "n_queries_in_file": len(queries), "n_skipped_missing": mc.n_missing,
            "n_skipped_missing_video": len(mc.missing_video), "n_skipped_missing_image": len(mc.missing_image),
            "n_items_duplicate_answer": sum(any(x.strip() == q.answer.strip() for x in q.distractors) for q in kept),
        })

    def count_release(self, data_dir: Path) -> int:
        """The queries of the question file (:mod:`lensbench.benchmarks.ivbench.layout`)."""
        return release.count_release(Path(data_dir))

    def absent_media(self, data_dir: Path) -> list[str]:
        """The media the data names but ``data_dir`` lacks (:mod:`lensbench.benchmarks.ivbench.layout`)."""
        return release.absent_media(Path(data_dir))

    def sample_id(self, sample: Query) -> str:
        """``"<video_id>/<data_id>"``."""
        return sample.uid

    def frame_cache(self, ctx: RunContext):
        """The frame cache: ``--frame-cache``, else ``RUN/media/ivbench_frames``."""
        from lensbench.media.frame_cache import FrameCache

        return FrameCache(Path(self.options.frame_cache) if self.options.frame_cache else ctx.media_dir / "ivbench_frames")

    def extract_frames(self, queries: Sequence[Query], cache) -> dict[str, Any]:
        """Frames of every video for every config (:meth:`~lensbench.benchmarks.ivbench.expand.Framing.extract_all`)."""
        return self.framing.extract_all(queries, cache)

    def requests(self, queries: Sequence[Query], frames: dict[str, Any], ctx: RunContext | None = None,
                 seed: int = 0) -> tuple[list[Request], list[Unsent]]:
        """The requests of ``queries`` from decoded ``frames`` and the units of undecoded videos
        (:meth:`~lensbench.benchmarks.ivbench.expand.Framing.requests`; parameters from ``ctx``)."""
        params = ctx.params(temperature=0.0, max_tokens=OFFICIAL_MAX_TOKENS) if ctx is not None else None
        return self.framing.requests(queries, frames, params, seed)

    def expand(self, samples: Sequence[Query], ctx: RunContext) -> Batches:
        """The requests video by video, each batch sent as soon as its frames are ready
        (:meth:`~lensbench.benchmarks.ivbench.expand.Framing.stream`)."""
        return self.framing.stream(samples, ctx, self.frame_cache(ctx))

    def scored(self, sample: Query, request: Request, reply: StoredResponse, ctx: RunContext | None) -> SampleRecord:
        """``answer``: the letter read from the reply (None = unparseable, scored wrong); ``target``: the right letter."""
        m = request.meta
        parsed = parse_choice(reply.text, m["extra"]["options"])
        return SampleRecord.from_reply(self.name, request.id, request, reply, answer=parsed,
                                       outcome=choice_outcome(parsed, m["target"]),
                                       extra=dict(m["extra"]), labels=m["labels"], target=m["target"])

    def failed(self, unit: Request | Unsent, reply: StoredResponse | None) -> SampleRecord:
        """An error record whose ``extra.error_kind`` says why: ``video`` (undecodable, nothing sent) or ``transport``."""
        rec = super().failed(unit, reply)
        rec.extra.setdefault("error_kind", "transport")
        return rec

    def finish(self, records: list[SampleRecord], ctx: RunContext) -> None:
        """A sweep writes ``ivbench_sweep.png`` in the run folder (a plot failure is noted as ``plot_error``,
        never fatal)."""
        if len(self.configs) > 1:
            try:
                plot_sweep(self.aggregate(records, ctx.counts)[0].get("sweep", []), ctx.run_dir / "ivbench_sweep.png",
                           title=f"IV-Bench sweep: {ctx.model_name}")
            except Exception as exc:  # noqa: BLE001 - a plot must never lose a run
                ctx.counts["plot_error"] = str(exc)

    def aggregate(self, records: list[SampleRecord], noted: Mapping[str, Any] | None = None
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Table 2 accuracy (%) for the first config, a ``sweep`` list for all; counts, then ``noted``.

        See :func:`lensbench.benchmarks.ivbench.aggregate.aggregate_records`.
        """
        return aggregate_records(records, self.configs, frame_rule=self.options.frame_rule,
                                 pattern=self.options.pattern, noted=dict(noted or {}))

    def tables(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Table 2 layout, Counts and (for sweeps) the sweep table, as md or csv.

        See :func:`lensbench.benchmarks.ivbench.report.render_tables`.
        """
        return render_tables(results, fmt, with_paper)
