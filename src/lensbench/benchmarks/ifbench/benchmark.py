"""IF-Bench (Zhang et al.): infrared image understanding, with its full evaluation protocol.

Protocol (IF-Bench README, Protocol; paper Sec. 3.3, Sec. 4.1, Appendix B and D; official code
``github.com/casiatao/IF-Bench`` ``evaluate/bench_evaluate.py`` at commit 8c49d8b). The pieces:

* :mod:`.data` — the loader (``if_bench.json`` + image folders -> :class:`Question`).
* :mod:`.prompts` — templates (Fig. 10-13, verbatim in ``prompts/*.txt``), option rendering as a
  Python dict repr, circular rotation (rotation ``i`` shifts the option list right by ``i``).
* :mod:`.parse` — reading the answer letter (hybrid: exact letter, else the Fig. 11 LLM parser;
  ``official-first-char``: the official code's first-character rule, for the parser's reply too).
* :mod:`.score` — soft circular / strict scores, dimension and language macro means.
* :mod:`.analyses` — Tab. 3 model-scale correlation, Fig. 5 thinking deltas, paper tables.
* :mod:`.report` — the tables.

One :class:`SampleRecord` per model request: ``sample_id`` = request id ``"<qid>/<lang>/r<i>"``;
``labels``: ``qid``, ``dimension`` (Tab. 2 abbreviation), ``language``, ``rotation``, ``input``,
``blind``; ``target``: the rotated right letter; ``answer``: the letter read; ``judge``: the parser
calls (:class:`JudgeCall`); ``extra``: ``judged_by`` (exact | first-char | parser | None),
``note``, ``image``, ``dimension_name``, ``judge_mode``, ``parser_available``, ``thinking``.
``--perturb`` (``docs/perturbations.md``): ``palette:gray|iron|inverted`` re-colours the infrared image
(:mod:`lensbench.media.perturb`); ``options:shuffle`` re-orders each question's options by a seeded permutation
outside the circular set, then rotates that order as usual (``extra.perturb``, ``extra.option_order``).
A transport failure (model or parser) is ``error``: never scored; its (question, language) unit is
left out of every score and the run is marked incomplete.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field, field_validator, model_validator

from lensbench.benchmarks.ifbench.interop import IFBenchMap
from lensbench.core.interop import interop_formats
from lensbench.benchmarks.base import Benchmark, Loaded, RunContext, RunResult
from lensbench.benchmarks.ifbench import report
from lensbench.benchmarks.ifbench import layout as release
from lensbench.benchmarks.ifbench.data import ABBREVS, Question, load_questions
from lensbench.benchmarks.ifbench.parse import EMPTY_REPLY, read_parser_reply, read_reply
from lensbench.benchmarks.ifbench.prompts import INPUTS, LANG_FIELDS, LETTERS, build_prompt, parser_prompt, rotate, template_for
from lensbench.benchmarks.ifbench.score import CLUSTER, HEADLINES, cells, score_metrics, score_tables
from lensbench.core.hashing import prime_sha256
from lensbench.core.records import SampleRecord
from lensbench.core.types import GenParams, ImagePart, Message, Request, StoredResponse
from lensbench.media.perturb import (cache_folder, check_perturbation, item_seed, non_circular_permutation,
                                     perturbed_image)
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.choice import choice_outcome
from lensbench.scoring.judges import judge_round
from lensbench.scoring.units import nonempty

__all__ = ["IFBench"]


class IFBench(Benchmark):
    """IF-Bench: 680 infrared-image questions, circular x bilingual, hybrid judgment (see module docs)."""

    name = "if-bench"
    interop = IFBenchMap()  # VLMEvalKit / lmms-eval rows (ifbench/interop.py)
    replay_formats = interop_formats(interop)
    title = "IF-Bench"
    answer_space = list(LETTERS)
    description = "infrared-image multiple choice, circular evaluation in English and Chinese, hybrid judgment"
    n_samples = 680
    sample_unit = "questions"
    headline = "Avg, Strict (Tab. 2, 7)"
    headlines = HEADLINES
    layout = release.LAYOUT
    #: the optional pieces (:attr:`lensbench.benchmarks.base.Benchmark.pieces`)
    pieces = {
        "demo": "lensbench.benchmarks.ifbench.demo:write_demo",
        "stats": "lensbench.benchmarks.ifbench.stats:dataset_stats",
        "reproduce": "lensbench.benchmarks.ifbench.reproduce:paper",
        "crafted": "lensbench.benchmarks.ifbench.crafted:craft_records",
        "figures": "lensbench.benchmarks.ifbench.figures:figures",
    }
    cluster = CLUSTER
    load_unit = "questions"
    not_settings = frozenset({"skip_missing", "images_dir", "translated_dir", "model_family", "model_params_b"})
    viewer_group = ("qid",)  # a question's 4 rotations x 2 languages together

    @classmethod
    def release_key(cls, record: SampleRecord) -> tuple[str, str] | None:
        """``(image, question)`` of a record (a question has 4 rotations x 2 languages of records)."""
        qid = str(record.labels.get("qid", record.sample_id))
        return str(record.extra.get("image") or qid), qid

    @classmethod
    def unit_tables(cls, records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
        """The soft circular ``Score`` table (:func:`lensbench.benchmarks.ifbench.score.score_tables`)."""
        return nonempty({"Score": score_tables(records)["Score"]})

    def judge_use(self) -> str | None:
        """The Fig. 11 answer parser reads every reply that is not a single letter (both answer-parsing rules)."""
        return "the answer parser (Fig. 11) reads replies that are not a single letter"

    class Options(BaseModel):
        """IF-Bench options (protocol of paper Sec. 3.3; GenViP inputs of Sec. 4.1 / Tab. 6)."""

        languages: str = Field(default="en,zh", description="comma-separated languages to evaluate: en, zh (cn = zh)")
        circular: bool = Field(default=True, description="circular evaluation: 4 option rotations per question "
                               "(--no-circular sends only the original order)")
        answer_parsing: Literal["hybrid", "official-first-char"] = Field(
            default="hybrid", description="how the answer letter is read from a reply: hybrid (paper: an exact single "
            "letter, else the Fig. 11 LLM parser given by --judge-model) or official-first-char (the official code: "
            "a reply's first character if A-D, else the parser, whose reply also counts by its first character)")
        parser_retries: int = Field(default=0, ge=0, le=5, description="extra parser calls (temperature 0.7, seed = "
                                    "attempt) for a parser reply that cannot be read (official: 0)")
        input: Literal["if", "if+text", "rgb", "if+rgb", "if+rgb+text"] = Field(
            default="if", description="input configuration (Tab. 6): if, if+text, rgb, if+rgb, if+rgb+text "
            "(GenViP = if+rgb+text)")
        translated_dir: Optional[str] = Field(default=None, description="folder of translated RGB images (same base "
                                              "names as the infrared files); default DATA_DIR/translated_rgb_imgs")
        images_dir: Optional[str] = Field(default=None, description="folder of the infrared images; default "
                                         "DATA_DIR/infrared_imgs, DATA_DIR/images or DATA_DIR")
        blind: bool = Field(default=False, description="send the same prompts without any image (language-prior "
                            "baseline, reported as such)")
        skip_missing: bool = Field(default=False, description="run the questions whose images exist; the rest are "
                                   "counted (n_skipped_missing) instead of being an error")
        parser_max_tokens: Optional[int] = Field(default=None, gt=0, description="max tokens of a parser reply "
                                                 "(default: the server's)")
        parser_disable_thinking: bool = Field(default=True, description="send chat_template_kwargs.enable_thinking="
                                              "false with parser calls (paper: Qwen3-8B, thinking off); turn off for "
                                              "APIs that reject the field")
        model_family: Optional[str] = Field(default=None, description="model family for the scale correlation "
                                            "(default: the model name without its size)")
        model_params_b: Optional[float] = Field(default=None, gt=0, description="declared parameter count in "
                                                "billions (MoE: total) for the scale correlation (default: from the name)")
        perturb: Optional[str] = Field(default=None, description="an input perturbation (docs/perturbations.md): "
                                       "palette:gray, palette:iron or palette:inverted re-colours the infrared "
                                       "image; options:shuffle re-orders the options outside the circular set; "
                                       "compare the run with its unperturbed twin (lensbench compare)")

        @field_validator("perturb")
        @classmethod
        def _perturb(cls, v: Optional[str]) -> Optional[str]:
            return check_perturbation(v, {"palette": "", "options": "", "frames": "it has no video"}, "IF-Bench")

        @model_validator(mode="after")
        def _perturb_input(self) -> "IFBench.Options":
            if (self.perturb or "").startswith("palette:") and (self.blind or "if" not in INPUTS[self.input][1]):
                raise ValueError(f"{self.perturb} re-colours the infrared image: "
                                 + ("--blind sends none" if self.blind else f"--input {self.input} sends none"))
            return self

        @field_validator("languages")
        @classmethod
        def _langs(cls, v: str) -> str:
            out = []
            for part in v.split(","):
                p = part.strip().lower()
                if not p:
                    continue
                p = {"cn": "zh", "chinese": "zh", "english": "en"}.get(p, p)
                if p not in LANG_FIELDS:
                    raise ValueError(f"unknown language {part!r}: use en, zh")
                if p not in out:
                    out.append(p)
            if not out:
                raise ValueError("at least one language (en, zh)")
            return ",".join(out)

    @property
    def langs(self) -> list[str]:
        """The languages to evaluate, in order."""
        return self.options.languages.split(",")

    @property
    def rotations(self) -> int:
        """4 with circular evaluation, else 1."""
        return 4 if self.options.circular else 1

    def load(self, data_dir: Path) -> Loaded:
        """See :func:`lensbench.benchmarks.ifbench.data.load_questions` (folders from the options); counts:
        ``n_skipped_missing`` when ``--skip-missing`` left questions out."""
        o = self.options
        counts: dict[str, Any] = {}
        return Loaded(load_questions(data_dir, input_config=o.input, blind=o.blind, image_dir=o.images_dir,
                                     translated_dir=o.translated_dir, skip_missing=o.skip_missing, stats=counts),
                      counts)

    def count_release(self, data_dir: Path) -> int:
        """The questions of ``if_bench.json`` (:mod:`lensbench.benchmarks.ifbench.layout`)."""
        return release.count_release(Path(data_dir))

    def absent_media(self, data_dir: Path) -> list[str]:
        """The media the data names but ``data_dir`` lacks (:mod:`lensbench.benchmarks.ifbench.layout`)."""
        return release.absent_media(Path(data_dir))

    def sample_id(self, sample: Question) -> str:
        """The question id (``<abbrev>-<nnn>``)."""
        return sample.qid

    def expand(self, samples: Sequence[Question], ctx: RunContext | None = None) -> list[Request]:
        """Model requests: per question, per language, per rotation (ids ``<qid>/<lang>/r<i>``).

        Each request is one user message: the image(s) of the input configuration (infrared,
        then translated RGB; none in blind mode), then the filled template. ``meta`` carries
        ``answer`` (rotated letter, also the ``target``), ``answer_space`` (A-D), ``qid``, ``lang``,
        ``rotation`` and the record's ``labels`` and ``extra`` (see the module docs).
        """
        params = ctx.params(temperature=0.0) if ctx is not None else GenParams(temperature=0.0)
        thinking = (params.extra_body.get("chat_template_kwargs") or {}).get("enable_thinking")
        has_judge = ctx.has_judge if ctx is not None else False
        _stem, kinds = INPUTS[self.options.input]
        if not self.options.blind:
            prime_sha256(q.if_path if k == "if" else q.rgb_path for q in samples for k in kinds)
        cache: dict[str, ImagePart] = {}
        perturb = self.options.perturb or ""
        media_dir = ctx.media_dir if ctx is not None else None

        def img(p: str, kind: str) -> ImagePart:
            if kind == "if" and perturb.startswith("palette:"):
                p = str(perturbed_image(p, perturb, cache_folder(media_dir)))
            if p not in cache:
                cache[p] = ImagePart.of(p)
            return cache[p]

        out = []
        for q in samples:
            parts = [] if self.options.blind else [img(q.if_path if k == "if" else q.rgb_path, k) for k in kinds]
            # options:shuffle: one seeded non-circular order per question (both languages), rotated as usual
            order = (non_circular_permutation(4, item_seed(ctx.seed if ctx is not None else 0, perturb, q.qid))
                     if perturb == "options:shuffle" else (0, 1, 2, 3))
            answer = LETTERS[order.index(LETTERS.index(q.answer))]
            for lang in self.langs:
                tpl = template_for(self.options.input, lang)
                base = [q.option_list(lang)[j] for j in order]
                for i in range(self.rotations):
                    slots, letter = rotate(base, answer, i)
                    text = build_prompt(tpl, q.question(lang), slots)
                    labels = {"qid": q.qid, "dimension": q.abbrev, "language": lang, "rotation": i,
                              "input": self.options.input, "blind": self.options.blind}
                    extra = {"dimension_name": q.dimension, "image": q.image_name,
                             "judge_mode": self.options.answer_parsing, "parser_available": has_judge,
                             "thinking": thinking, "judged_by": None}
                    if perturb:
                        extra["perturb"] = perturb
                        if perturb == "options:shuffle":
                            extra["option_order"] = [LETTERS[j] for j in order]
                    out.append(Request(id=f"{q.qid}/{lang}/r{i}", messages=(Message.user(*parts, text),), params=params,
                                       meta={"sample_id": q.qid, "answer": letter, "answer_space": list(LETTERS),
                                             "qid": q.qid, "lang": lang, "rotation": i, "target": letter,
                                             "labels": labels, "extra": extra}))
        return out

    def parser_params(self) -> GenParams:
        """Parser call parameters: temperature 0, thinking off unless ``--no-parser-disable-thinking``."""
        extra = {"chat_template_kwargs": {"enable_thinking": False}} if self.options.parser_disable_thinking else {}
        return GenParams(temperature=0.0, max_tokens=self.options.parser_max_tokens, extra_body=extra)

    async def evaluate(self, samples: Sequence[Question], ctx: RunContext) -> list[SampleRecord]:
        """Model requests -> engine -> read letters -> parser round (``role="judge"``: the replies that are
        not a letter; its readings go to ``ctx.judged``) -> records."""
        reqs = self.expand(samples, ctx)
        got = await ctx.generate(reqs, label=self.name)
        mode = self.options.answer_parsing
        pending = {}
        if ctx.has_judge:
            for r in reqs:
                resp = got.get(r.id)
                if resp is not None and resp.ok:
                    reading = read_reply(resp.text, mode)
                    if reading.letter is None and reading.parser_text is not None:
                        pending[r.id] = reading.parser_text
        if pending:
            ctx.judged.update(await judge_round(ctx, pending, prompt=parser_prompt,
                                                read=lambda t: read_parser_reply(t, mode), params=self.parser_params(),
                                                kind="parser", retries=self.options.parser_retries,
                                                label="if-bench parser"))
        return self.score(samples, reqs, got, ctx)

    def scored(self, sample: Question, request: Request, reply: StoredResponse, ctx: RunContext | None) -> SampleRecord:
        """The letter read from the reply (exact / first character), else the parser's reading of it
        (``ctx.judged``; without a parser round such a reply is ``unparseable``); see the module docs."""
        m = request.meta
        extra = dict(m["extra"])
        fields: dict[str, Any] = {"target": m["target"], "labels": dict(m["labels"]), "extra": extra}
        reading = read_reply(reply.text, self.options.answer_parsing)
        answer = reading.letter
        if reading.letter is not None:
            extra["judged_by"] = reading.judged_by
        elif reading.parser_text is None:
            extra["note"] = reading.note
        elif ctx is None or request.id not in ctx.judged:
            extra["note"] = "not a single letter (exact match only)"
        else:
            extra["judged_by"] = "parser"
            res = ctx.judged[request.id]
            fields["judge"] = res.calls
            if res.error is not None:
                return SampleRecord.from_reply(self.name, request.id, request, reply, outcome="error",
                                               error=f"parser: {res.error}", **fields)
            if res.verdict in LETTERS:
                answer = res.verdict
            else:
                extra["note"] = "parser answered F" if res.verdict == "F" else "invalid parser reply"
        empty = reading.note == EMPTY_REPLY  # the model's answer, with no letter in it: wrong (docs/protocol.md)
        outcome = choice_outcome(answer, m["target"], empty=empty)
        return SampleRecord.from_reply(self.name, request.id, request, reply, answer=answer, outcome=outcome,
                                       scores={"correct": int(outcome == "correct")}, **fields)

    def aggregate(self, records: list[SampleRecord], noted: Mapping[str, Any] | None = None
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Scores (percent; the unit tables of :mod:`lensbench.benchmarks.ifbench.score`) and counts.

        ``metrics``: ``Score`` (Table 2 row: Avg + 10 abbreviations), ``Strict`` (Tab. 7),
        ``Score-en``/``Score-zh`` (Fig. 9), ``Strict-en``/``Strict-zh``. ``counts``: ``n``
        (requests scored), ``n_requests``, ``n_questions``, ``n_correct``, ``n_unparseable``,
        ``n_error``, ``n_exact``, ``n_first_char``, ``n_parser_calls``, ``n_parser_F``,
        ``n_parser_invalid``, ``n_parser_error``, ``n_units``/``n_units_scored``/
        ``n_units_missing`` ((question, language) units), ``judge`` (label for the report
        header), ``judge_mode``, ``input``, ``blind``, ``languages``, ``rotations``, ``thinking``,
        ``model_family``, ``model_params_b``, ``per_dimension`` (question counts); then ``noted``
        (``n_skipped_missing`` when ``--skip-missing`` left questions out).
        """
        metrics: dict[str, Any] = score_metrics(score_tables(records))
        us = cells(records)
        missing = sum(any(r.outcome == "error" for r in rs) for rs in us.values())
        by = [r.extra.get("judged_by") for r in records]
        parsed = [r for r in records if r.extra.get("judged_by") == "parser"]
        last = [r.judge[-1] if r.judge else None for r in parsed]
        first = records[0] if records else None
        mode = first.extra.get("judge_mode", "hybrid") if first else self.options.answer_parsing
        per_dim: dict[str, int] = defaultdict(int)
        for _qid, dim in {r.labels["qid"]: r.labels["dimension"] for r in records}.items():
            per_dim[dim] += 1
        langs = sorted({r.labels["language"] for r in records},
                       key=lambda x: list(LANG_FIELDS).index(x) if x in LANG_FIELDS else 9)
        counts = {
            "n": sum(r.outcome != "error" for r in records),
            "n_requests": len(records),
            "n_questions": len({r.labels["qid"] for r in records}),
            "n_correct": sum(r.outcome == "correct" for r in records),
            "n_unparseable": sum(r.outcome == "unparseable" for r in records),
            "n_error": sum(r.outcome == "error" for r in records),
            "n_exact": by.count("exact"),
            "n_first_char": by.count("first-char"),
            "n_parser_calls": len(parsed),
            "n_parser_F": sum(c is not None and c.verdict == "F" for c in last),
            "n_parser_invalid": sum(c is not None and c.reply is not None and c.verdict is None for c in last),
            "n_parser_error": sum(r.outcome == "error" for r in parsed),
            "n_units": len(us),
            "n_units_scored": len(us) - missing,
            "n_units_missing": missing,
            "judge": _judgment(mode, any(r.extra.get("parser_available") for r in records)),
            "judge_mode": mode,
            "input": first.labels["input"] if first else self.options.input,
            "blind": bool(first.labels["blind"] if first else self.options.blind),
            "languages": langs,
            "rotations": len({r.labels["rotation"] for r in records}),
            "thinking": first.extra.get("thinking") if first else None,
            "model_family": self.options.model_family,
            "model_params_b": self.options.model_params_b,
            "per_dimension": {a: per_dim.get(a, 0) for a in ABBREVS},
        }
        counts.update(noted or {})
        return metrics, counts

    def tables(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """See :func:`lensbench.benchmarks.ifbench.report.render`."""
        return report.render(results, fmt, with_paper)


def _judgment(mode: str, has_parser: bool) -> str:
    """How the run's replies were judged, in words (the report's header): the answer-parsing rule and the parser."""
    if mode == "official-first-char":
        return "official first character" + (" + LLM parser (Fig. 11)" if has_parser else " only (no parser)")
    return "hybrid: exact letter + LLM parser (Fig. 11)" if has_parser else "exact match only"
