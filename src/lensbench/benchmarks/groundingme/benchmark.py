"""GroundingME (Li et al., arXiv 2512.17495): visual grounding with rejection.

Protocol (README "Protocol"; paper Sec. 3.3, 4.2, 5.2, 5.3, Appendix A-B); the pieces live beside this
module: :mod:`.data` (HF parquet / Arrow / VLMEvalKit TSV), :mod:`.images` (the sent image,
``--max-pixels``), :mod:`.prompts` (Table 9, image first; greedy; ``max_tokens`` 20480),
:mod:`.parse` (strict ``bbox_2d`` parse), :mod:`.compat` (the official scorers' rules,
``--official-compat``/``--compat-rule``), :mod:`.score` (one reply), :mod:`.aggregate`
(Table 3/8/4 metrics), :mod:`.best_of_n` (Sec. 5.2 knockout), :mod:`.report`, :mod:`.draw`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field, field_validator

from lensbench.benchmarks.groundingme.interop import GroundingMEMap
from lensbench.core.interop import interop_formats
from lensbench.benchmarks.base import Benchmark, Loaded, RunContext, RunResult
from lensbench.benchmarks.groundingme.aggregate import aggregate_records
from lensbench.benchmarks.groundingme.best_of_n import JUDGE_MODES, bon_summary, candidate_id, run_tournament
from lensbench.benchmarks.groundingme.data import GMSample, load_groundingme
from lensbench.benchmarks.groundingme.draw import draw_record
from lensbench.benchmarks.groundingme.images import PreparedImage, prepare_images
from lensbench.benchmarks.groundingme.prompts import DEFAULT_MAX_TOKENS, build_prompt
from lensbench.benchmarks.groundingme.report import render_tables
from lensbench.benchmarks.groundingme.score import record_scores, score_prediction
from lensbench.core.errors import ConfigError
from lensbench.core.extras import Requirement
from lensbench.core.hashing import prime_sha256
from lensbench.core.records import SampleRecord
from lensbench.core.types import ImagePart, Message, Request, StoredResponse
from lensbench.scoring.bbox import BboxFormat
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import nonempty
from lensbench.benchmarks.groundingme.layout import LAYOUT
from lensbench.benchmarks.groundingme.units import CLUSTER, HEADLINES, acc_table

__all__ = ["GroundingME"]


class GroundingME(Benchmark):
    """GroundingME (arXiv 2512.17495): grounding with rejection; Table 3 / Table 8 / Table 4."""

    name = "groundingme"
    interop = GroundingMEMap()  # VLMEvalKit / lmms-eval rows (groundingme/interop.py)
    replay_formats = interop_formats(interop)
    title = "GroundingME"
    description = "visual grounding with rejection (boxes or 'no such object'); best-of-N with a judge"
    n_samples = 1005
    sample_unit = "samples"
    no_random_baseline = ("a box has no finite answer space to draw from; the always-reject baseline is "
                          "--model 'constant:{\"bbox_2d\": null}'")
    judge_permutation = ("bon_judge_order", "swapped")  # the pairwise knockout can swap each pair (Sec. 5.2)
    headline = "Acc@0.5, mAcc (Tables 3, 4, 8)"
    headlines = HEADLINES
    cluster = CLUSTER
    layout = LAYOUT
    #: the optional pieces (:attr:`lensbench.benchmarks.base.Benchmark.pieces`)
    pieces = {
        "demo": "lensbench.benchmarks.groundingme.demo:write_demo",
        "stats": "lensbench.benchmarks.groundingme.stats:dataset_stats",
        "reproduce": "lensbench.benchmarks.groundingme.reproduce:paper",
        "crafted": "lensbench.benchmarks.groundingme.crafted:craft_records",
        "figures": "lensbench.benchmarks.groundingme.figures:figures",
    }

    @classmethod
    def unit_tables(cls, records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
        """The Acc@0.5 table (:func:`lensbench.benchmarks.groundingme.units.acc_table`)."""
        return nonempty({"Acc@0.5": acc_table(records)})

    def judge_use(self) -> str | None:
        """A judge only picks among best-of-N samples (``--bon-judge``)."""
        return f"best-of-{self.options.best_of} selection ({self.options.bon_judge})" if self.options.bon_judge else None

    def no_judge_reason(self) -> str:
        return "a judge only picks among best-of-N samples: give --best-of N and --bon-judge MODE to use one"

    def requirements(self, data_dir: Path | None = None) -> list[Requirement]:
        """pyarrow when the data (folder) holds parquet or Arrow files (read before a VLMEvalKit TSV)."""
        d = Path(data_dir) if data_dir is not None else None
        if d is None:
            return []
        arrow = d.suffix.lower() in (".parquet", ".arrow") if d.is_file() else d.is_dir() and any(
            next(d.rglob(f"*.{ext}"), None) is not None for ext in ("parquet", "arrow"))
        return [Requirement("pyarrow", "data", "reading GroundingME parquet / Arrow files")] if arrow else []

    class Options(BaseModel):
        """GroundingME options (``lensbench run groundingme --help``)."""

        bbox_format: BboxFormat = Field(default="abs", description="model's box convention: abs (pixels of the image sent), "
                                 "abs-resized (Qwen2.5-VL smart-resized pixels), rel1000 (Qwen3-VL), rel1, "
                                 "yxyx1000 (Gemini [y1,x1,y2,x2])")
        skip_missing: bool = Field(default=False, description="run the samples whose image file exists (TSV "
                                   "image_path); the rest are counted (n_skipped_missing) instead of being an error")
        max_pixels: Optional[int] = Field(default=None, ge=1024, description="downscale images above this many pixels "
                                          "(JPEG draft decoding); boxes are mapped back to original pixels")
        official_compat: bool = Field(default=False, description="score with an official scorer's rule (best IoU over "
                                      "readings, unparseable = [0,0,0,0]); labelled in reports")
        compat_rule: Literal["evaluate", "lmms-eval"] = Field(
            default="evaluate", description="with --official-compat: evaluate (the release's evaluate.py: raw and "
            "normalised readings) or lmms-eval (its task: also MiMo and Qwen resized pixels; adds Center_ACC)")
        best_of: int = Field(default=1, ge=1, le=64, description="N samples per item (Sec. 5.2; N=16, "
                             "temperature 0.7 unless --temperature)")
        bon_judge: Optional[str] = Field(default=None, description="best-of-N selection: text-full-responses (Table 11: "
                                         "text-only judge reads both full responses) or mm-image-boxes (Table 10: "
                                         "multimodal judge sees the image and both boxes); the judge backend is "
                                         "--judge-model (or MODE:SPEC)")
        bon_judge_order: Literal["as-drawn", "swapped"] = Field(
            default="as-drawn", description="order of each pair shown to the best-of-N judge: as-drawn (Sec. 5.2: the "
            "earlier candidate as A) or swapped (the later one as A, the verdict mapped back: a position-bias check)")
        judge_retries: int = Field(default=1, ge=0, le=5, description="retries of a judge call without a \\boxed{A|B} "
                                   "verdict before the fixed rule (candidate A, the lower sample index, advances)")
        resize_factor: int = Field(default=28, ge=1, description="abs-resized: smart-resize patch factor")
        resize_min_pixels: int = Field(default=3136, ge=1, description="abs-resized: smart-resize min_pixels")
        resize_max_pixels: int = Field(default=12845056, ge=1, description="abs-resized: smart-resize max_pixels")
        blind: bool = Field(default=False, description="send the Table 9 prompt without the image (a language-prior "
                            "baseline; boxes are read in the original image's frame)")

        @field_validator("bon_judge")
        @classmethod
        def _judge(cls, v: Optional[str]) -> Optional[str]:
            if v is None or v == "":
                return None
            if v.split(":", 1)[0] not in JUDGE_MODES:
                raise ValueError(f"bon_judge must be {' or '.join(JUDGE_MODES)} (optionally MODE:SPEC), got {v!r}")
            return v

    def load(self, data_dir: Path) -> Loaded:
        """HF parquet shards, ``datasets`` Arrow files or VLMEvalKit TSV (:func:`.data.load_groundingme`);
        ``--skip-missing`` leaves out (and counts, ``n_skipped_missing``) samples whose image file is missing."""
        counts: dict[str, Any] = {}
        return Loaded(load_groundingme(Path(data_dir), skip_missing=self.options.skip_missing, stats=counts), counts)

    @property
    def judge_mode(self) -> str | None:
        """The ``--bon-judge`` mode (``text-full-responses`` / ``mm-image-boxes``) or None."""
        return self.options.bon_judge.split(":", 1)[0] if self.options.bon_judge else None

    def judge_spec(self) -> str | None:
        """The SPEC of ``--bon-judge MODE:SPEC`` (used when ``--judge-model`` is absent)."""
        j = self.options.bon_judge
        return j.split(":", 1)[1] if j and ":" in j else None

    def draw(self, record: SampleRecord, out_png: Path) -> Path:
        """Ground truth (green) and prediction (red) of one record as a PNG (:func:`.draw.draw_record`)."""
        return draw_record(record, out_png)

    def _resize(self) -> dict[str, int]:
        o = self.options
        return {"factor": o.resize_factor, "min_pixels": o.resize_min_pixels, "max_pixels": o.resize_max_pixels}

    def _check(self, ctx: RunContext) -> None:
        o = self.options
        if o.bon_judge and o.best_of < 2:
            raise ConfigError("--bon-judge selects among --best-of N samples; give --best-of 2 or more")
        if o.bon_judge and not ctx.has_judge:
            spec = o.bon_judge.split(":", 1)[1] if ":" in o.bon_judge else "SPEC"
            raise ConfigError(f"--bon-judge {o.bon_judge} needs a judge backend: pass --judge-model {spec}")
        if ctx.image_max_side and o.bbox_format in ("abs", "abs-resized"):
            raise ConfigError(f"--image-max-side re-scales the image after GroundingME's own downscaling, so "
                              f"--bbox-format {o.bbox_format} boxes could not be mapped back; use --max-pixels instead")

    def expand(self, samples: Sequence[GMSample], ctx: RunContext) -> list[Request]:
        """The images prepared (:func:`.images.prepare_images`: ``--max-pixels`` downscaling, into
        ``ctx.media_dir``) and hashed once, then :meth:`requests`: ``--best-of`` requests per item, the image
        first, then the Table 9 prompt.

        Raises ConfigError for inconsistent options (see :meth:`_check`)."""
        self._check(ctx)
        images = prepare_images(samples, ctx.media_dir, self.options.max_pixels)
        prime_sha256(images[s.id].path for s in samples)
        return self.requests(samples, images, ctx)

    async def evaluate(self, samples: Sequence[GMSample], ctx: RunContext) -> list[SampleRecord]:
        """expand -> engine -> score (:meth:`Benchmark.evaluate`); with ``--best-of N --bon-judge MODE`` the
        Sec. 5.2 knockout (:func:`.best_of_n.run_tournament`) first picks each item's record
        (``ctx.judged``). One record per item."""
        if not (self.options.best_of > 1 and self.options.bon_judge):
            return await super().evaluate(samples, ctx)
        requests, replies = await self.send(self.expand(samples, ctx), ctx)
        by_id = {s.id: s for s in samples}
        pairs = self.pairs_by_sample(requests, replies)
        cands = {sid: self.candidates(by_id[sid], ps) for sid, ps in pairs.items()}
        parts = {sid: (ps[0][0].images[0], ps[0][0].messages[0].parts[-1].text) for sid, ps in pairs.items()}
        ctx.judged.update(await run_tournament(samples, cands, replies, parts, ctx, mode=self.judge_mode,
                                               retries=self.options.judge_retries, n=self.options.best_of,
                                               bench_name=self.name, swap=self.options.bon_judge_order == "swapped"))
        records = self.score(samples, requests, replies, ctx)
        self.finish(records, ctx)
        return records

    def requests(self, samples: Sequence[GMSample], images: dict[str, PreparedImage], ctx: RunContext) -> list[Request]:
        """``--best-of`` requests per item (id :func:`.best_of_n.candidate_id`): the prepared image, then the
        Table 9 prompt; greedy for one, temperature 0.7 and seed + k for the k-th of several. ``meta``: the
        item, ``sample_index``, its box and size, the prepared image."""
        o = self.options
        n = o.best_of
        base = ctx.params(temperature=0.0 if n == 1 else 0.7, max_tokens=DEFAULT_MAX_TOKENS)
        out = []
        for s in samples:
            part = ImagePart.of(images[s.id].path)
            prompt = build_prompt(s.description, o.bbox_format)
            for k in range(n):
                params = base if n == 1 else base.model_copy(update={"seed": (base.seed if base.seed is not None
                                                                              else ctx.seed) + k})
                msg = Message.user(prompt) if o.blind else Message.user(part, prompt)
                out.append(Request(
                    id=candidate_id(s.id, k, n), messages=(msg,), params=params,
                    meta={"benchmark": self.name, "sample_id": s.id, "sample_index": k, "subtask_l1": s.subtask_l1,
                          "bbox": list(s.bbox) if s.bbox else None, "width": s.width, "height": s.height,
                          "image": images[s.id]}))
        return out

    def candidates(self, s: GMSample, pairs: list[tuple[Request, StoredResponse | None]]) -> list[dict[str, Any]]:
        """Each of the item's samples scored (:func:`.score.score_prediction`); a missing or failed reply is a
        candidate with status ``error`` (never scored)."""
        o = self.options
        compat_rule = o.compat_rule if o.official_compat else None
        out = []
        for req, reply in pairs:
            k = req.meta["sample_index"]
            if reply is None or not reply.ok:
                out.append({"sample_index": k, "status": "error", "parse": "error", "hit": False, "iou": None})
            else:
                out.append({"sample_index": k, **score_prediction(s, reply.text, req.meta["image"],
                                                                  bbox_format=o.bbox_format, compat_rule=compat_rule,
                                                                  resize=self._resize())})
        return out

    def score_sample(self, sample: GMSample, pairs: list, ctx: RunContext | None) -> list[SampleRecord]:
        """One record per item from its selected sample: the knockout's winner (``ctx.judged``), else the first
        valid one of several (the record shows it; Table 4 needs only the candidates), else the only one. The
        pairs are put in ``sample_index`` order first, whatever order they come in."""
        pairs = sorted(pairs, key=lambda p: p[0].meta["sample_index"])
        cands = self.candidates(sample, pairs)
        ko = ctx.judged.get(sample.id) if ctx is not None else None
        if ko is not None:
            sel = ko.winner
        elif len(pairs) > 1:
            sel = next((c["sample_index"] for c in cands if c["status"] != "error"), 0)
        else:
            sel = 0
        req, reply = pairs[sel]
        return [self._record(sample, req.meta["image"], cands, sel, req, reply, ko)]

    def _record(self, s: GMSample, img: PreparedImage, cands: list[dict[str, Any]], sel: int, req: Request,
                reply: StoredResponse | None, ko) -> SampleRecord:
        """The record of one item from its selected candidate ``sel`` (its request ``req`` and ``reply``)."""
        o = self.options
        n = o.best_of
        pick = cands[sel]
        extra: dict[str, Any] = {
            "parse": pick["parse"], "raw_bbox": pick.get("raw_bbox"), "n_boxes_found": pick.get("n_boxes_found"),
            "rejected": bool(pick.get("rejected")), "bbox_format": o.bbox_format,
            "sent_size": [img.sent_w, img.sent_h], "image": img.path, "width": s.width, "height": s.height,
            "description": s.description}
        if o.official_compat:
            extra.update(compat_rule=o.compat_rule, official_raw_bbox=pick.get("official_raw_bbox"),
                         compat_parse=pick.get("compat_parse"), compat_reading=pick.get("compat_reading"))
        judge = []
        if n > 1:
            extra["selected_index"] = sel
            extra["bon"] = bon_summary(cands, sel, n)
            if ko is not None:
                extra["knockout"] = {"mode": self.judge_mode and JUDGE_MODES[self.judge_mode],
                                     "fallbacks": ko.fallbacks, "judge_errors": ko.judge_errors,
                                     "matches": [m.as_dict() for m in ko.matches]}
                judge = ko.calls
        ok = pick["status"] != "error"
        return SampleRecord.from_reply(
            self.name, s.id, req, reply,
            answer=pick.get("pred_bbox") if ok else None, target=list(s.bbox) if s.bbox else None,
            outcome=pick["status"] if ok else "error", scores=record_scores(pick) if ok else {},
            labels={"L-1": s.subtask_l1, "L-2": s.subtask_l2}, judge=judge, extra=extra)

    def aggregate(self, records: list[SampleRecord], noted: Mapping[str, Any] | None = None
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Metrics in percent and counts (:func:`.aggregate.aggregate_records`), then ``noted``
        (``n_skipped_missing`` when ``--skip-missing`` left samples out)."""
        metrics, counts = aggregate_records(records)
        counts.update(noted or {})
        return metrics, counts

    def tables(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Table 3, Table 8, rejections/parsing, compat extras, Table 4 (:func:`.report.render_tables`)."""
        return render_tables(results, fmt, with_paper)
