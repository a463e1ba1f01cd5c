"""GOBench (Zhu et al. 2025): the MLLM as optical critic of GOBench-Gen-1k images (understanding task).

Protocol (README "Protocol"; paper Sec. 2.2-2.3, Table 3); see README.md in this folder for the whole story.

* load: ``data_total.json`` (999 records) with images resolved (:mod:`.load`) and human ground
  truth attached (``--human-ratings``: VLMEvalKit ``GOBench.tsv``, a ratings CSV or a ``lensbench
  gobench rate`` database; :mod:`.humans`). Records whose image is absent are skipped and counted
  (``--no-skip-missing`` refuses instead, with the counts).
* expand: one critic request per image: the official prompt (text then image; :mod:`.prompts`),
  or ``--prompt-style vlmevalkit`` (image, then VLMEvalKit's SYS + the TSV question); temperature
  0.1, max 1500 tokens.
* score: one :class:`SampleRecord` per image. ``outcome`` ``scored`` (a critique was read),
  ``unparseable`` (counted, excluded from every dimension, never guessed) or ``error`` (transport
  failure; never scored). ``answer`` = the parsed critique (``answers``, ``authenticity``,
  ``aesthetics``, ``fidelity``); ``target`` = the human scores; ``scores`` = the model's three
  scores and ``sps_<dim>`` (Eq. 1, ``--delta-max``); ``labels`` = category, scenario, variant
  (the release's generator slot ``.1``-``.3``), image. Reader: ``--parser paper`` (default,
  :mod:`.parse_paper`) or ``--parser vlmevalkit`` (:mod:`.parse_vlmevalkit`).
* aggregate (:mod:`.aggregate`) and tables (:mod:`.report`).

Generation (``lensbench gobench generate | rate | summary``) lives in :mod:`lensbench.tools.gobench`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field, field_validator

from lensbench.benchmarks.gobench.interop import TSV_KEY, GOBenchMap
from lensbench.core.interop import interop_formats
from lensbench.benchmarks.base import Benchmark, Loaded, RunContext, RunResult
from lensbench.benchmarks.gobench import layout as release
from lensbench.benchmarks.gobench.aggregate import aggregate_records
from lensbench.benchmarks.gobench.parse_paper import ParsedReply, parse_reply
from lensbench.benchmarks.gobench.parse_vlmevalkit import parse_reply_vlmevalkit, vlmevalkit_gt_complete
from lensbench.benchmarks.gobench.prompts import CriticAnswerSpace, critic_prompt, load_prompt
from lensbench.benchmarks.gobench.load import load_gobench
from lensbench.benchmarks.gobench.records import DELTA_MAX, DIMENSIONS, GORecord, HumanGT
from lensbench.benchmarks.gobench.report import render_tables
from lensbench.benchmarks.gobench.sps import sps
from lensbench.benchmarks.gobench.units import CLUSTER, HEADLINES, sps_table
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import nonempty
from lensbench.core.hashing import prime_sha256
from lensbench.core.records import SampleRecord
from lensbench.core.types import ImagePart, Message, Request, StoredResponse, TextPart
from lensbench.media.perturb import check_perturbation
from lensbench.scoring.text import strip_reasoning

__all__ = ["GOBench", "CriticAnswerSpace", "gt_dict"]


def gt_dict(gt: HumanGT) -> dict[str, Any]:
    """The human ground truth of one image as a record's ``target``: the three rater means
    (None where absent), the per-question majority labels and the number of raters."""
    return {"authenticity": gt.authenticity, "aesthetics": gt.aesthetics, "fidelity": gt.fidelity,
            "majority": list(gt.majority), "n_raters": gt.n_raters}


class GOBench(Benchmark):
    """GOBench optical understanding: the MLLM as critic of GOBench-Gen-1k images, scored by SPS."""

    name = "gobench"
    interop = GOBenchMap()  # VLMEvalKit / lmms-eval rows (gobench/interop.py)
    replay_formats = interop_formats(interop)
    title = "GOBench"
    answer_space = None
    description = "geometric optics: the MLLM as critic of generated images, against human ratings"
    n_samples = 999
    sample_unit = "images"
    headline = "SPS; PLCC / SRCC (Tables 1-3)"
    headlines = HEADLINES
    layout = release.LAYOUT
    #: the optional pieces (:attr:`lensbench.benchmarks.base.Benchmark.pieces`)
    pieces = {
        "demo": "lensbench.benchmarks.gobench.demo:write_demo",
        "stats": "lensbench.benchmarks.gobench.stats:dataset_stats",
        "reproduce": "lensbench.benchmarks.gobench.reproduce:paper",
        "crafted": "lensbench.benchmarks.gobench.crafted:craft_records",
        "figures": "lensbench.benchmarks.gobench.figures:figures",
    }
    cluster = CLUSTER
    load_unit = "images"
    skipped_key = "n_images_missing"
    not_settings = frozenset({"skip_missing", "images_dir", "human_ratings", "image_cache"})

    @classmethod
    def unit_tables(cls, records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
        """The SPS table (:func:`lensbench.benchmarks.gobench.units.sps_table`)."""
        return nonempty({"SPS": sps_table(records)})

    @classmethod
    def headline_value(cls, block: dict[str, Any], column: str) -> Any:
        """``mean`` (the leaderboard's SPS): VLMEvalKit's ``Overall`` when the run has it, else the mean of
        the dimensions that have a value (the ``mean`` category of the SPS table)."""
        v = block.get(column)
        if v is None and column == "mean":
            v = block.get("Overall")
            if v is None:
                vals = [x for x in block.values() if isinstance(x, (int, float))]
                v = sum(vals) / len(vals) if vals else None
        return v

    class Options(BaseModel):
        """GOBench options."""

        human_ratings: Optional[str] = Field(default=None, description="human ground truth: VLMEvalKit GOBench.tsv, a "
                                             "ratings CSV (index|image + authenticity/aesthetics/fidelity or per-rater "
                                             "q1..q5), or a 'lensbench gobench rate' SQLite file")
        images_dir: Optional[str] = Field(default=None, description="folder holding <category>/<N.M>.png (default: "
                                          "the data folder)")
        skip_missing: bool = Field(default=True, description="records without an image file are skipped and "
                                   "counted (on by default: the git release holds 45 of the 999 images, the rest "
                                   "come from GOBench.tsv); --no-skip-missing makes them an error")
        image_cache: Optional[str] = Field(default=None, description="where images from GOBench.tsv are written "
                                           "(default: GOBench_images/ beside the TSV)")
        prompt_style: Literal["official", "vlmevalkit"] = Field(default="official", description="official (authors' JSON critic prompt, text then "
                                  "image) or vlmevalkit (VLMEvalKit SYS + TSV question, image first)")
        parser: Literal["paper", "vlmevalkit"] = Field(default="paper", description="reply reader: paper (JSON answers summed, ratings 1-5; "
                            "default) or vlmevalkit (VLMEvalKit's GOBenchDataset.evaluate: stated 'Total Score', "
                            "free-text ratings, incomplete ground-truth rows excluded)")
        delta_max: float = Field(default=DELTA_MAX, gt=0, description="SPS maximum permissible difference (paper: 0.5)")
        layout: Literal["release", "scenario"] = Field(default="release", description="release (<category>/<N.M>.png, 999 images) or scenario "
                            "(<category>/<N>.png, one image per scenario as 'lensbench gobench generate' writes)")
        ratings_generator: Optional[str] = Field(default=None, description="use only this generator's ratings from a "
                                                 "ratings file that holds several")
        categories: Optional[str] = Field(default=None, description="comma-separated categories to keep "
                                          "(direct_light_images,reflect_light_images,refracted_light_images)")
        blind: bool = Field(default=False, description="send the critic prompt without the image (a language-prior "
                            "baseline: how close to the people can ratings be from the prompt alone?)")
        perturb: Optional[str] = Field(default=None, description="input perturbations (docs/perturbations.md) do "
                                       "not apply to GOBench: every one is refused with the reason")

        @field_validator("perturb")
        @classmethod
        def _perturb(cls, v: Optional[str]) -> Optional[str]:
            return check_perturbation(v, {
                "options": "its critic answers yes/no/cannot-determine questions and 1-5 ratings: there are no "
                           "options to shuffle",
                "palette": "its images are generated photographs, not thermal images",
                "frames": "it has no video"}, "GOBench")

    # ----------------------------------------------------------------- load
    def load(self, data_dir: Path) -> Loaded:
        """Records of ``data_total.json`` with images resolved and human ground truth attached, and
        ``Loaded.counts``: records in the file, the records file, images missing, loaded, ground-truth matching
        (:func:`.load.load_gobench`, which names the errors raised)."""
        return load_gobench(Path(data_dir), self.options)

    def count_release(self, data_dir: Path) -> int:
        """The records of ``data_total.json`` (:mod:`lensbench.benchmarks.gobench.layout`)."""
        return release.count_release(Path(data_dir))

    def absent_media(self, data_dir: Path) -> list[str]:
        """The media the data names but ``data_dir`` lacks (:mod:`lensbench.benchmarks.gobench.layout`)."""
        return release.absent_media(Path(data_dir))

    def sample_id(self, sample: GORecord) -> str:
        """The record index (``<category>_<N.M>``)."""
        return sample.index


    # --------------------------------------------------------------- expand
    def expand(self, samples: list[GORecord], ctx: RunContext | None = None, model_name: str = "") -> list[Request]:
        """One critic request per record, id = the record index (official: text then image;
        vlmevalkit: image then text). Temperature 0.1, max 1500 tokens unless overridden."""
        params = ctx.params(temperature=0.1, max_tokens=1500) if ctx is not None else None
        name = model_name or (ctx.model_name if ctx is not None else "")
        space = CriticAnswerSpace()
        prime_sha256(r.image_path for r in samples if r.image_path)
        out = []
        for r in samples:
            img = () if self.options.blind else (ImagePart.of(r.image_path),)  # type: ignore[arg-type]
            if self.options.prompt_style == "vlmevalkit":
                msg = Message.user(*img, TextPart(text=load_prompt("vlmevalkit_sys") + "\n" + (r.tsv_question or "")))
            else:
                msg = Message.user(TextPart(text=critic_prompt(r.prompt, r.questions, name)), *img)
            kw = {"params": params} if params is not None else {}
            meta = {"sample_id": r.index, "answer_space": space, "target": gt_dict(r.gt) if r.gt is not None else None,
                    "labels": {"category": r.category, "scenario": r.scenario, "variant": r.variant, "image": r.image}}
            if r.tsv_index is not None:  # a VLMEvalKit predictions row names the image by its GOBench.tsv row
                meta["replay_match"] = [TSV_KEY, r.tsv_index]
            out.append(Request(id=r.index, messages=(msg,), meta=meta, **kw))
        return out

    # ---------------------------------------------------------------- score
    def parse(self, reply: str | None) -> ParsedReply:
        """The critique in ``reply`` as the chosen ``--parser`` reads it."""
        if self.options.parser == "vlmevalkit":
            return parse_reply_vlmevalkit(reply)
        return parse_reply(reply)

    def score_one(self, r: GORecord, reply: str | None) -> dict[str, Any]:
        """SampleRecord fields for one image from its reply: outcome, answer, scores, extra.

        With ``--parser vlmevalkit`` an image whose ground truth lacks one of the three scores
        gets no SPS at all (VLMEvalKit excludes the whole row); with the paper parser each
        dimension with a human score gets its SPS.
        """
        pr = self.parse(reply)
        extra: dict[str, Any] = {"parse_method": pr.method}
        if pr.problems:
            extra["problems"] = pr.problems
        answer = {"answers": pr.answers, "authenticity": pr.authenticity, "aesthetics": pr.aesthetics,
                  "fidelity": pr.fidelity}
        if not pr.complete:
            extra["reply_stripped"] = strip_reasoning(reply)[:2000]
            return {"outcome": "unparseable", "answer": answer, "extra": extra}
        model = {"authenticity": pr.authenticity, "aesthetics": pr.aesthetics, "fidelity": pr.fidelity}
        scores: dict[str, float | None] = dict(model)
        if pr.authenticity is not None and any(a is None for a in pr.answers):
            extra["authenticity_from"] = "stated total"
        gt = r.gt
        if gt is not None and self.options.parser == "vlmevalkit" and not vlmevalkit_gt_complete(gt):
            extra["gt_incomplete"] = True
            gt = None
        if gt is not None:
            for d in DIMENSIONS:
                h = gt.get(d)
                scores[f"sps_{d}"] = sps(model[d], h, self.options.delta_max) if h is not None else None  # type: ignore[arg-type]
            if gt.majority:
                extra["q_agree"] = [None if (h is None or a is None) else (a == h) for a, h in zip(pr.answers, gt.majority)]
        return {"outcome": "scored", "answer": answer, "scores": scores, "extra": extra}

    def scored(self, sample: GORecord, request: Request, reply: StoredResponse, ctx: RunContext | None
               ) -> SampleRecord:
        """The record of one image's critique (:meth:`score_one`), with its labels (category, scenario,
        variant, image) and target (the human scores)."""
        m = request.meta
        return SampleRecord.from_reply(self.name, request.id, request, reply, labels=dict(m["labels"]),
                                       target=m["target"], **self.score_one(sample, reply.text))

    # ------------------------------------------------------- aggregate, tables
    def aggregate(self, records: list[SampleRecord], noted: Mapping[str, Any] | None = None
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
        """See :func:`lensbench.benchmarks.gobench.aggregate.aggregate_records`; ``noted`` = what loading counted
        (``Loaded.counts`` of :meth:`load`)."""
        return aggregate_records(records, dict(noted or {}), overall_metric=self.options.parser == "vlmevalkit")

    def tables(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Table 3 (SPS %), per-category SPS, correlations, agreement, means, counts (:mod:`.report`)."""
        return render_tables(results, fmt, with_paper)
