"""RGB-Th-Bench (Moshtaghi et al.): yes/no questions on RGB and RGB-thermal pairs.

Protocol (RGB-Th-Bench README, Protocol; paper Sec. 3.2-3.4, Table 3, Fig. 4-5; see README.md beside this file):

* Data: ``Source */<scene>/questions.json``, one item per (scene, skill) (:mod:`.data`).
* 14 paper skills (1,624 questions on 29 pairs) by default; the two "Text Reference" skills in
  the files are extra (``--include-extra-skills``).
* Prompt (``--input rgb+thermal``, the paper): the fixed context of Sec. 3.3 for the group
  (``prompts/rgb_txt.txt``, ``prompts/rgb_th_txt.txt``), a newline, then the question; images
  first (RGB, then thermal). ``--input thermal-only`` (third-party re-evaluation,
  ``benchmark_thermal.py``): the scene's thermal image, ``prompts/thermal_only.txt``, a blank
  line, ``Question: `` and the question. ``--input rgb-only``: the RGB image with the RGB-Txt
  context for every skill. ``--input blind``: no image, the paper's text (a language-prior baseline).
* Parse: whole-word yes/no (:func:`lensbench.scoring.text.parse_yes_no`); no answer = Fail
  (wrong, counted as non-compliance).
* A question asked twice in one unit is sent twice (``Request.repeat``): each ask has its own
  reply; a missing second reply is an ``error``, never a copy of the first.
* ``--perturb palette:gray|iron|inverted`` (``docs/perturbations.md``): the thermal image is re-coloured
  (:mod:`lensbench.media.perturb`); RGB-only units are sent unchanged. Compared with its unperturbed twin by
  ``lensbench compare``; a perturbed run is never the paper's measurement.
* QAcc / SAcc per skill, group, Overall (:mod:`.aggregate`); a transport error is left out of
  QAcc and its unit out of SAcc; the run is marked incomplete.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field, field_validator, model_validator

from lensbench.benchmarks.rgbth.interop import RGBThMap
from lensbench.core.interop import interop_formats
from lensbench.core.hashing import prime_sha256
from lensbench.core.records import SampleRecord
from lensbench.core.resources import read_text
from lensbench.core.results import RunResult
from lensbench.core.types import ImagePart, Message, Request, StoredResponse
from lensbench.media.perturb import cache_folder, check_perturbation, perturbed_image
from lensbench.scoring.text import parse_yes_no
from lensbench.benchmarks.base import Benchmark, Loaded, RunContext
from lensbench.benchmarks.rgbth.aggregate import aggregate_records
from lensbench.benchmarks.rgbth.data import (DEFAULT_INPUT, EXTRA_SKILLS, RGB_TH_TXT, RGB_TXT, SKILLS, Unit,
                                             load_units)
from lensbench.benchmarks.rgbth.layout import LAYOUT, absent_media
from lensbench.benchmarks.rgbth.replay import ResultFile, match_key
from lensbench.benchmarks.rgbth.report import paper_rows, render_tables
from lensbench.benchmarks.rgbth.units import CLUSTER, HEADLINES, skill_tables
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.choice import choice_outcome
from lensbench.scoring.units import nonempty

__all__ = ["RGBThBench", "SKILLS", "EXTRA_SKILLS", "CONTEXT", "THERMAL_ONLY_CONTEXT", "Unit", "prompt_text"]

#: The fixed contexts of Sec. 3.3, verbatim (``prompts/*.txt``, no trailing newline).
CONTEXT = {RGB_TXT: read_text(__package__, "prompts", "rgb_txt.txt"),
           RGB_TH_TXT: read_text(__package__, "prompts", "rgb_th_txt.txt")}
#: The thermal-only context of the third-party ``benchmark_thermal.py`` (``get_prompt_context``), verbatim.
THERMAL_ONLY_CONTEXT = read_text(__package__, "prompts", "thermal_only.txt")


def prompt_text(group: str, question: str, input_mode: str = DEFAULT_INPUT) -> str:
    """The text part of one request (sent after the image(s)).

    ``rgb+thermal``: ``CONTEXT[group] + "\\n" + question`` (Sec. 3.3); ``rgb-only``: the RGB-Txt
    context for every group; ``thermal-only``: ``THERMAL_ONLY_CONTEXT + "\\n\\nQuestion: " +
    question`` (the third-party script's ``full_prompt``); ``blind``: as ``rgb+thermal`` (no image is sent).
    """
    if input_mode == "thermal-only":
        return f"{THERMAL_ONLY_CONTEXT}\n\nQuestion: {question}"
    if input_mode == "rgb-only":
        group = RGB_TXT
    return f"{CONTEXT[group]}\n{question}"


class RGBThBench(Benchmark):
    """RGB-Th-Bench: 1,624 yes/no questions on 29 RGB-thermal pairs; QAcc / SAcc (Table 3).

    See the module docstring for the protocol.
    """

    name = "rgb-th-bench"
    title = "RGB-Th-Bench"
    answer_space = ["Yes", "No"]
    description = "yes/no questions on RGB images and RGB-thermal pairs (14 skills)"
    n_samples = 1624
    sample_unit = "questions"
    headline = "QAcc / SAcc (Table 3)"
    headlines = HEADLINES
    cluster = CLUSTER
    load_unit = "units"
    interop = RGBThMap()  # VLMEvalKit / lmms-eval rows (rgbth/interop.py)
    replay_formats = (ResultFile(), *interop_formats(interop))
    layout = LAYOUT
    #: the optional pieces (:attr:`lensbench.benchmarks.base.Benchmark.pieces`)
    pieces = {
        "demo": "lensbench.benchmarks.rgbth.demo:write_demo",
        "stats": "lensbench.benchmarks.rgbth.stats:dataset_stats",
        "reproduce": "lensbench.benchmarks.rgbth.reproduce:paper",
        "crafted": "lensbench.benchmarks.rgbth.crafted:craft_records",
        "figures": "lensbench.benchmarks.rgbth.figures:figures",
    }

    @classmethod
    def release_key(cls, record: SampleRecord) -> tuple[str, str] | None:
        """``(scene, question)`` of a record; None for the two extra Text-Reference skills (not the paper's
        1,624 questions, Sec. 3.2)."""
        if record.labels.get("extra") is True:
            return None
        return str(record.labels.get("scene", record.sample_id)), record.sample_id

    @classmethod
    def unit_tables(cls, records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
        """QAcc and SAcc over the paper's 14 skills (:func:`lensbench.benchmarks.rgbth.units.skill_tables`)."""
        return nonempty(skill_tables(records))

    class Options(BaseModel):
        """RGB-Th-Bench options."""

        include_extra_skills: bool = Field(default=False, description="also evaluate the two Text Reference skills "
                                           "(not in the paper's 14; reported apart, not in group/Overall scores)")
        input: Literal["rgb+thermal", "thermal-only", "rgb-only", "blind"] = Field(
            default=DEFAULT_INPUT, description="what each question shows: rgb+thermal (paper: RGB, or RGB then "
            "thermal), thermal-only (third-party re-evaluation: the scene's thermal image, its own context), "
            "rgb-only (the RGB image, RGB-Txt context), blind (no image, the paper's text: a language-prior "
            "baseline)")
        skip_missing: bool = Field(default=False, description="run the units whose images exist; the rest are "
                                   "counted (n_skipped_missing) instead of being an error")
        perturb: Optional[str] = Field(default=None, description="an input perturbation (docs/perturbations.md): "
                                       "palette:gray, palette:iron or palette:inverted re-colours the thermal image; "
                                       "compare the run with its unperturbed twin (lensbench compare)")

        @field_validator("perturb")
        @classmethod
        def _perturb(cls, v: Optional[str]) -> Optional[str]:
            return check_perturbation(v, {"palette": "", "frames": "it has no video",
                                          "options": "its yes/no questions have no options to shuffle"},
                                      "RGB-Th-Bench")

        @model_validator(mode="after")
        def _perturb_input(self) -> "RGBThBench.Options":
            if self.perturb and self.input in ("rgb-only", "blind"):
                raise ValueError(f"{self.perturb} re-colours the thermal image: --input {self.input} sends none")
            return self

    def load(self, data_dir: Path) -> Loaded:
        """Units of ``data_dir`` (see :func:`lensbench.benchmarks.rgbth.data.load_units`). Raises DataError
        (missing images: unless ``--skip-missing``, which counts them in ``n_skipped_missing``)."""
        counts: dict[str, Any] = {}
        return Loaded(load_units(data_dir, self.options.include_extra_skills, self.options.input,
                                 skip_missing=self.options.skip_missing, stats=counts), counts)

    def absent_media(self, data_dir: Path) -> list[str]:
        """Scene images missing beside a ``questions.json`` (:func:`lensbench.benchmarks.rgbth.layout.absent_media`)."""
        return absent_media(Path(data_dir))

    def sample_id(self, sample: Unit) -> str:
        """``"<Source N/scene>/<abbrev>"``: one (scene, skill) unit."""
        return f"{sample.scene_key}/{sample.abbrev}"

    def expand(self, samples: Sequence[Unit], ctx: RunContext | None = None) -> list[Request]:
        """One request per question: the mode's image(s) (RGB, thermal), then the prompt text.

        Request id ``"<Source N/scene>/<abbrev>/<j>"`` (j = question index in the unit);
        ``repeat`` = how many times the same question came earlier in the unit. ``meta``: the unit,
        target (gold Yes/No), labels = {skill, abbrev, group, scene, extra}, extra = {question, input,
        defects (the unit's contradictory questions, if any), perturb (``--perturb``, on requests whose thermal
        image it re-coloured: the palette-mapped PNG is sent instead, cached under ``RUN/media/perturbed``)}.
        """
        params = ctx.params(temperature=0.0) if ctx is not None else None
        mode = self.options.input
        prime_sha256(p for u in samples for p in u.images)
        img_cache: dict[str, ImagePart] = {}
        perturb = self.options.perturb
        # the thermal image of a unit: the second of an RGB-thermal pair, the only one in thermal-only mode
        thermal_at = 0 if mode == "thermal-only" else 1
        out = []
        for u in samples:
            parts = []
            for k, p in enumerate(u.images):
                if perturb and k == thermal_at:
                    p = str(perturbed_image(p, perturb, cache_folder(ctx.media_dir if ctx is not None else None)))
                if p not in img_cache:
                    img_cache[p] = ImagePart.of(p)
                parts.append(img_cache[p])
            changed = bool(perturb) and len(u.images) > thermal_at
            labels = {"skill": u.skill, "abbrev": u.abbrev, "group": u.group, "scene": u.scene_key, "extra": u.extra}
            seen: dict[str, int] = defaultdict(int)
            for j, (q, a) in enumerate(u.qas):
                occ = seen[q]
                seen[q] += 1
                extra: dict[str, Any] = {"question": q, "input": mode}
                if u.defects:
                    extra["defects"] = list(u.defects)
                if changed:
                    extra["perturb"] = perturb
                kw = {"params": params} if params is not None else {}
                out.append(Request(
                    id=f"{u.scene_key}/{u.abbrev}/{j}",
                    messages=(Message.user(*parts, prompt_text(u.group, q, mode)),),
                    meta={"sample_id": self.sample_id(u), "target": a, "labels": labels, "extra": extra,
                          "replay_match": list(match_key(u.scene_key, u.skill, q, occ)),
                          "answer_space": ["Yes", "No"], "rgbth_input": mode},
                    repeat=occ, **kw))
        return out

    def scored(self, sample: Unit, request: Request, reply: StoredResponse, ctx: RunContext | None) -> SampleRecord:
        """answer = the whole-word Yes/No of the reply (None = Fail, unparseable), target = gold Yes/No."""
        m = request.meta
        parsed = parse_yes_no(reply.text)
        return SampleRecord.from_reply(self.name, request.id, request, reply, answer=parsed, target=m["target"],
                                       outcome=choice_outcome(parsed, m["target"]),
                                       labels=dict(m["labels"]), extra=dict(m["extra"]))

    def aggregate(self, records: list[SampleRecord], noted: Mapping[str, Any] | None = None
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
        """See :func:`lensbench.benchmarks.rgbth.aggregate.aggregate_records`; counts gain what loading
        noted (``n_skipped_missing`` when ``--skip-missing`` left units out)."""
        metrics, counts = aggregate_records(records)
        for k, v in (noted or {}).items():
            counts.setdefault(k, v)
        return metrics, counts

    @staticmethod
    def paper_rows() -> list[dict[str, Any]]:
        """Table 3 of the paper (``paper/table3.json``)."""
        return paper_rows()

    def tables(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Table 3 (group QAcc/SAcc), Fig. 4/5 per-skill tables, the counts and the notes, as md or csv."""
        return render_tables(results, fmt, with_paper)
