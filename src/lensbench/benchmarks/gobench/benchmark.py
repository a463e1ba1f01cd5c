"""GOBench (Zhu et al. 2025): geometric-optics understanding (MLLM as optical critic) and generation.

Understanding protocol (SPEC §4; paper Sec. 2.2-2.3, Table 3):

* Data: ``data_total.json`` of the release (999 records, 333 scenarios x 3 generated images);
  images at ``<data>/<category>/<N.M>.png`` (``--images-dir`` to look elsewhere; the public repo
  holds 46 of them, HF ``bonnot/GOBench`` all). Records whose image is absent are skipped and
  counted (``--missing-images error`` to refuse instead).
* Request per image: the official critic prompt (``prompts/gobench_critic.txt``, from the
  authors' ``code/Gemini2.5.py``) with the record's prompt and its 5 reality questions, text
  then image, temperature 0.1, max 1500 tokens; the reply is asked for as one JSON object.
  ``--prompt-style vlmevalkit`` sends VLMEvalKit's instruction + the TSV question cell instead.
* Parse: strict JSON, then repaired JSON, then regexes (:func:`lensbench.gobench.protocol.parse_reply`).
  Authenticity = Yes 1 / No 0 / Cannot determine 0.5 summed over the 5 questions; aesthetics and
  fidelity 1-5. A reply missing any of the three is ``unparseable``: counted, excluded from
  every dimension (as VLMEvalKit excludes failed rows), and said in the report.
* Against human ground truth (``--human-ratings``: VLMEvalKit ``GOBench.tsv``, a ratings CSV,
  or a ``lensbench gobench rate`` database): SPS per image and dimension (Eq. 1, delta_max 0.5),
  averaged per dimension (Table 3), per category; PLCC/SRCC between model and human scores;
  agreement of each answer with the human majority where per-question labels exist.
* Status of a scored image: ``correct`` when its authenticity SPS > 0 (within delta_max of the
  humans), else ``wrong``; ``correct`` when there is no ground truth to compare with.

Generation (``lensbench gobench generate | rate | summary``) lives in :mod:`lensbench.gobench`.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, Field

from lensbench.core.errors import ConfigError, DataError
from lensbench.benchmarks.gobench.protocol import (ANSWERS, CATEGORIES, DELTA_MAX, DIM_TITLES, DIMENSIONS, GORecord, critic_prompt,
                                find_records_file, load_prompt, load_records, parse_reply, sps)
from lensbench.scoring.text import strip_reasoning
from lensbench.report.tables import render_table
from lensbench.core.types import ImagePart, Message, Request, TextPart
from lensbench.benchmarks.base import Benchmark, RunContext, RunResult
from lensbench.core.resources import read_text
from lensbench.scoring.metrics import correlation, mean as _mean

__all__ = ["GOBench", "CriticAnswerSpace", "correlation"]


class CriticAnswerSpace(Sequence):
    """Every well-formed critic reply (3^5 answer lists x 5 x 5 ratings = 6,075 JSON strings), made
    on demand: the answer space of the seeded random baseline (``--model random``)."""

    _ANS = ("Yes", "No", "Cannot Determine")

    def __len__(self) -> int:
        return 3 ** 5 * 25

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        fid, i = i % 5 + 1, i // 5
        aes, i = i % 5 + 1, i // 5
        ans = []
        for _ in range(5):
            ans.append(self._ANS[i % 3])
            i //= 3
        return json.dumps({"realityAnswers_Eval": ans, "aestheticsRating_Eval": aes, "consistencyRating_Eval": fid})


class GOBench(Benchmark):
    """GOBench optical understanding: the MLLM as critic of GOBench-Gen-1k images, scored by SPS."""

    name = "gobench"
    title = "GOBench"
    answer_space = None

    class Options(BaseModel):
        """GOBench options."""

        human_ratings: Optional[str] = Field(default=None, description="human ground truth: VLMEvalKit GOBench.tsv, a "
                                             "ratings CSV (index|image + authenticity/aesthetics/fidelity or per-rater "
                                             "q1..q5), or a 'lensbench gobench rate' SQLite file")
        images_dir: Optional[str] = Field(default=None, description="folder holding <category>/<N.M>.png (default: "
                                          "the data folder)")
        missing_images: str = Field(default="skip", description="records without an image file: skip (counted) or "
                                    "error")
        image_cache: Optional[str] = Field(default=None, description="where images from GOBench.tsv are written "
                                           "(default: GOBench_images/ beside the TSV)")
        prompt_style: str = Field(default="official", description="official (authors' JSON critic prompt, text then "
                                  "image) or vlmevalkit (VLMEvalKit SYS + TSV question, image first)")
        delta_max: float = Field(default=DELTA_MAX, gt=0, description="SPS maximum permissible difference (paper: 0.5)")
        layout: str = Field(default="release", description="release (<category>/<N.M>.png, 999 images) or scenario "
                            "(<category>/<N>.png, one image per scenario as 'lensbench gobench generate' writes)")
        ratings_generator: Optional[str] = Field(default=None, description="use only this generator's ratings from a "
                                                 "ratings file that holds several")
        categories: Optional[str] = Field(default=None, description="comma-separated categories to keep "
                                          "(direct_light_images,reflect_light_images,refracted_light_images)")

    def __init__(self, options: BaseModel | None = None):
        super().__init__(options)
        self.load_info: dict[str, Any] = {}

    # ----------------------------------------------------------------- load
    def load(self, data_dir: Path) -> list[GORecord]:
        """Records of ``data_total.json`` with images resolved and human ground truth attached.

        Raises DataError naming the file/field for bad records, a missing image (with
        ``--missing-images error``), no image at all, or unreadable ratings; ConfigError for bad
        option values.
        """
        o = self.options
        if o.missing_images not in ("skip", "error"):
            raise ConfigError(f"--missing-images must be skip or error, got {o.missing_images!r}")
        if o.prompt_style not in ("official", "vlmevalkit"):
            raise ConfigError(f"--prompt-style must be official or vlmevalkit, got {o.prompt_style!r}")
        path = find_records_file(Path(data_dir))
        images_dir = Path(o.images_dir) if o.images_dir else None
        if images_dir is not None and not images_dir.is_dir():
            raise DataError(images_dir, "--images-dir is not a folder")
        if o.layout not in ("release", "scenario"):
            raise ConfigError(f"--layout must be release or scenario, got {o.layout!r}")
        records = load_records(path, images_dir)
        if o.layout == "scenario":
            base = images_dir or path.parent
            reps = {}
            for r in records:
                if r.scenario not in reps:
                    img = f"{r.scenario}.png"
                    p = base / img
                    reps[r.scenario] = replace(r, index=r.scenario.replace("/", "_"), image=img, variant="",
                                               image_path=str(p) if p.is_file() else None)
            records = list(reps.values())
        n_all = len(records)
        if o.categories:
            keep = {c.strip() for c in o.categories.split(",") if c.strip()}
            unknown = keep - set(CATEGORIES)
            if unknown:
                raise ConfigError(f"--categories: unknown {sorted(unknown)}; known: {', '.join(CATEGORIES)}")
            records = [r for r in records if r.category in keep]
        info: dict[str, Any] = {"n_records_total": n_all, "records_file": str(path)}
        if o.human_ratings:
            from lensbench.benchmarks.gobench.humans import load_human_gt

            hp = Path(o.human_ratings)
            cache = Path(o.image_cache) if o.image_cache else hp.parent / "GOBench_images"
            gt, qs, imgs, unmatched = load_human_gt(hp, records, image_cache=cache, generator=o.ratings_generator)
            records = [replace(r, gt=gt.get(r.index), tsv_question=qs.get(r.index),
                               image_path=r.image_path or imgs.get(r.index)) for r in records]
            info.update(human_ratings=str(hp), n_gt=sum(r.gt is not None for r in records),
                        n_gt_unmatched_keys=len(unmatched), gt_unmatched_examples=unmatched[:5],
                        n_images_from_tsv=len(imgs))
        missing = [r for r in records if r.image_path is None]
        if missing and o.missing_images == "error":
            m = missing[0]
            raise DataError(Path(images_dir or path.parent) / m.image, f"image not found ({len(missing)} of "
                            f"{len(records)} records lack their image; --missing-images skip evaluates the rest)",
                            field=f"{m.index}.image")
        present = [r for r in records if r.image_path is not None]
        if not present:
            raise DataError(images_dir or path.parent, f"none of the {len(records)} records' images was found "
                            "(expected <category>/<N.M>.png, e.g. direct_light_images/1.1.png)", field="image")
        if o.prompt_style == "vlmevalkit":
            noq = [r.index for r in present if not r.tsv_question]
            if noq:
                raise ConfigError(f"--prompt-style vlmevalkit needs the TSV's question cells (--human-ratings "
                                  f"GOBench.tsv); {len(noq)} record(s) have none, e.g. {noq[0]}")
        info.update(n_images_missing=len(missing), n_loaded=len(present))
        self.load_info = info
        return present

    # ------------------------------------------------------------- evaluate
    def requests(self, records: Sequence[GORecord], ctx: RunContext | None = None, model_name: str = "") -> list[Request]:
        """One critic request per record (official: text then image; vlmevalkit: image then text)."""
        params = ctx.params(temperature=0.1, max_tokens=1500) if ctx is not None else None
        name = model_name or (ctx.model_name if ctx is not None else "")
        space = CriticAnswerSpace()
        out = []
        for r in records:
            img = ImagePart.of(r.image_path)  # type: ignore[arg-type]
            if self.options.prompt_style == "vlmevalkit":
                msg = Message.user(img, TextPart(text=load_prompt("vlmevalkit_sys") + "\n" + (r.tsv_question or "")))
            else:
                msg = Message.user(TextPart(text=critic_prompt(r.prompt, r.questions, name)), img)
            kw = {"params": params} if params is not None else {}
            out.append(Request(id=r.index, messages=(msg,), meta={"replay_match": ["gobench", r.index],
                                                                   "answer_space": space}, **kw))
        return out

    def score(self, r: GORecord, reply: str | None) -> dict[str, Any]:
        """Per-image record from a reply: parsed answers, the three scores, SPS and agreement."""
        pr = parse_reply(reply)
        rec: dict[str, Any] = {"answers": pr.answers, "parse_method": pr.method}
        if pr.problems:
            rec["problems"] = pr.problems
        if not pr.complete:
            rec["status"] = "unparseable"
            rec["reply_stripped"] = strip_reasoning(reply)[:2000]
            return rec
        scores = {"authenticity": pr.authenticity, "aesthetics": pr.aesthetics, "fidelity": pr.fidelity}
        rec["scores"] = scores
        if pr.authenticity is not None and any(a is None for a in pr.answers):
            rec["authenticity_from"] = "stated total"
        if r.gt is not None:
            rec["sps"] = {d: (sps(scores[d], r.gt.get(d), self.options.delta_max) if r.gt.get(d) is not None else None)
                          for d in DIMENSIONS}
            if r.gt.majority:
                rec["q_agree"] = [None if (h is None or a is None) else (a == h) for a, h in zip(pr.answers, r.gt.majority)]
            auth = rec["sps"]["authenticity"]
            rec["status"] = "correct" if (auth is None or auth > 0) else "wrong"
        else:
            rec["status"] = "correct"
        return rec

    async def evaluate(self, samples: list[GORecord], ctx: RunContext) -> list[dict[str, Any]]:
        """Send one critic request per image and score the replies (records: one per image)."""
        reqs = self.requests(samples, ctx)
        got = await ctx.generate(reqs, label="gobench critic")
        out = []
        for r in samples:
            resp = got.get(r.index)
            rec: dict[str, Any] = {"id": r.index, "category": r.category, "scenario": r.scenario, "variant": r.variant,
                                   "image": r.image}
            if r.gt is not None:
                rec["gt"] = {"authenticity": r.gt.authenticity, "aesthetics": r.gt.aesthetics, "fidelity": r.gt.fidelity,
                             "majority": list(r.gt.majority), "n_raters": r.gt.n_raters}
            if resp is None or not resp.ok:
                rec.update(status="error", error=resp.error if resp else "no response")
            else:
                rec.update(reply=resp.text, reasoning=resp.reasoning)
                rec.update(self.score(r, resp.text))
            if not out:
                rec["load_info"] = self.load_info
            out.append(rec)
        return out

    # ------------------------------------------------------------ aggregate
    def aggregate(self, records: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
        """SPS (Table 3, %), per-category SPS, model-vs-human PLCC/SRCC, question agreement, means.

        ``metrics``: ``SPS`` {Authenticity, Aesthetics, Fidelity} in percent over parseable images
        with ground truth; ``SPS_by_category`` {Direct|Reflect|Refracted: {...}};
        ``correlation`` {dim: {PLCC, SRCC, n}}; ``question_agreement`` {Overall, categories,
        Q1..Q5} in percent; ``model_mean`` / ``human_mean`` {dim: mean score} (and by category);
        ``answer_distribution`` {Yes, No, Cannot determine} in percent.
        ``counts``: ``n`` (parseable images), ``n_images``, ``n_unparseable``, ``n_error``,
        ``n_with_gt``, ``n_images_missing``, ``n_records_total``, parse methods.
        """
        info = next((r.get("load_info") for r in records if r.get("load_info")), None) or self.load_info or {}
        ok = [r for r in records if r["status"] in ("correct", "wrong")]
        with_gt = [r for r in ok if r.get("sps")]
        cats = [c for c in CATEGORIES if any(r["category"] == c for r in records)]

        def sps_block(rs):
            out = {}
            for d in DIMENSIONS:
                v = [r["sps"][d] for r in rs if r["sps"].get(d) is not None]
                out[DIM_TITLES[d]] = 100.0 * _mean(v) if v else None
            return out

        def mean_block(rs, src):
            out = {}
            for d in DIMENSIONS:
                v = [r[src][d] for r in rs if r.get(src) and r[src].get(d) is not None]
                out[DIM_TITLES[d]] = _mean(v)
            return out

        metrics: dict[str, Any] = {"SPS": sps_block(with_gt)}
        metrics["SPS_by_category"] = {CATEGORIES[c]: sps_block([r for r in with_gt if r["category"] == c]) for c in cats}
        metrics["correlation"] = {}
        for d in DIMENSIONS:
            pairs = [(r["scores"][d], r["gt"][d]) for r in with_gt if r["gt"].get(d) is not None]
            metrics["correlation"][DIM_TITLES[d]] = correlation([p[0] for p in pairs], [p[1] for p in pairs])
        agree: dict[str, list[bool]] = defaultdict(list)
        for r in ok:
            for qi, a in enumerate(r.get("q_agree") or []):
                if a is not None:
                    agree["Overall"].append(a)
                    agree[CATEGORIES.get(r["category"], r["category"])].append(a)
                    agree[f"Q{qi + 1}"].append(a)
        order = ["Overall"] + [CATEGORIES[c] for c in cats] + [f"Q{i}" for i in range(1, 6)]
        metrics["question_agreement"] = {k: (100.0 * sum(agree[k]) / len(agree[k]) if agree.get(k) else None) for k in order}
        metrics["question_agreement_n"] = {k: len(agree.get(k, [])) for k in order}
        metrics["model_mean"] = {"All": mean_block(ok, "scores"),
                                 **{CATEGORIES[c]: mean_block([r for r in ok if r["category"] == c], "scores") for c in cats}}
        metrics["human_mean"] = {"All": mean_block(with_gt, "gt"),
                                 **{CATEGORIES[c]: mean_block([r for r in with_gt if r["category"] == c], "gt") for c in cats}}
        dist = Counter(a for r in ok for a in (r.get("answers") or []) if a is not None)
        tot = sum(dist.values())
        metrics["answer_distribution"] = {a: (100.0 * dist[a] / tot if tot else None) for a in ANSWERS}
        counts = {
            "n": len(ok),
            "n_images": len(records),
            "n_unparseable": sum(r["status"] == "unparseable" for r in records),
            "n_error": sum(r["status"] == "error" for r in records),
            "n_with_gt": len(with_gt),
            "n_without_gt": len(ok) - len(with_gt),
            "parse_methods": dict(Counter(str(r.get("parse_method")) for r in ok)),
            "n_records_total": info.get("n_records_total"),
            "n_images_missing": info.get("n_images_missing"),
            "human_ratings": info.get("human_ratings"),
            "n_gt_unmatched_keys": info.get("n_gt_unmatched_keys"),
            "per_category": {CATEGORIES[c]: sum(r["category"] == c for r in ok) for c in cats},
        }
        return metrics, counts

    # --------------------------------------------------------------- render
    @staticmethod
    def paper_table(n: int) -> dict[str, Any]:
        """Table ``n`` (1, 2 or 3) of the paper, from ``lensbench/data/gobench_paper_table{n}.json``."""
        text = read_text(__package__, "paper", f"table{n}.json")
        return json.loads(text)

    def tables(self, results, fmt: str = "md", with_paper: bool = False) -> str:
        """See :meth:`Benchmark.tables` (transition alias of :meth:`render`)."""
        return self.render(results, fmt, with_paper)

    def render(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Table 3 (SPS %), per-category SPS, model-vs-human correlation, question agreement, means, counts."""
        dims = [DIM_TITLES[d] for d in DIMENSIONS]
        rows = []
        if with_paper:
            rows += [[f"{p['model']} (paper)"] + [p[d] for d in dims] for p in self.paper_table(3)["rows"]]
        for r in results:
            tag = "" if r.complete else f" [incomplete: {r.counts.get('n_error', 0)} errors]"
            rows.append([r.model + tag] + [r.metrics["SPS"].get(d) for d in dims])
        parts = [render_table(["MLLMs"] + [f"{d}↑" for d in dims], rows, fmt,
                              title="GOBench optical understanding: SPS vs human ground truth (Table 3 layout; %)")]
        cats = []
        for r in results:
            for c in r.metrics.get("SPS_by_category", {}):
                if c not in cats:
                    cats.append(c)
        if cats:
            parts.append(render_table(
                ["Model"] + [f"{c} {d}" for c in cats for d in dims],
                [[r.model] + [r.metrics["SPS_by_category"].get(c, {}).get(d) for c in cats for d in dims] for r in results],
                fmt, title="SPS per category (%)"))
        parts.append(render_table(
            ["Model"] + [f"{d} {k}" for d in dims for k in ("PLCC", "SRCC")],
            [[r.model] + [r.metrics["correlation"].get(d, {}).get(k) for d in dims for k in ("PLCC", "SRCC")]
             for r in results], fmt, title="Model vs human scores per image (PLCC / SRCC)", digits=4))
        qa_cols: list[str] = []
        for r in results:
            for k in r.metrics.get("question_agreement", {}):
                if k not in qa_cols:
                    qa_cols.append(k)
        parts.append(render_table(["Model"] + qa_cols,
                                  [[r.model] + [r.metrics["question_agreement"].get(k) for k in qa_cols] for r in results],
                                  fmt, title="Agreement of each answer with the human majority label (%; only where "
                                             "per-question human labels exist)"))
        mean_rows = []
        for r in results:
            mean_rows.append([r.model, "model"] + [r.metrics["model_mean"]["All"].get(d) for d in dims]
                             + [r.metrics["answer_distribution"].get(a) for a in ANSWERS])
            if r.counts.get("n_with_gt"):
                mean_rows.append([r.model, "human (same images)"] + [r.metrics["human_mean"]["All"].get(d) for d in dims]
                                 + [None, None, None])
        parts.append(render_table(["Model", "rated by"] + [f"mean {d}" for d in dims] + [f"% {a}" for a in ANSWERS],
                                  mean_rows, fmt, title="Mean scores (Authenticity 0-5, Aesthetics / Fidelity 1-5) and "
                                                        "answer distribution"))
        parts.append(render_table(
            ["Model", "images", "scored", "unparseable (excluded)", "errors (not scored)", "with human GT",
             "records in release", "images missing (skipped)"],
            [[r.model, r.counts.get("n_images"), r.counts.get("n"), r.counts.get("n_unparseable"), r.counts.get("n_error"),
              r.counts.get("n_with_gt"), r.counts.get("n_records_total"), r.counts.get("n_images_missing")]
             for r in results], fmt, title="Counts"))
        if fmt == "md":
            notes = ["Unparseable replies (a missing answer or rating) are counted above and excluded from every "
                     "dimension, as VLMEvalKit does; they are never guessed."]
            for r in results:
                if not r.counts.get("n_with_gt"):
                    notes.append(f"{r.model}: no human ground truth matched (--human-ratings), so SPS, correlations "
                                 "and agreement are empty; the model's own mean scores are shown.")
                if r.counts.get("n_images_missing"):
                    notes.append(f"{r.model}: {r.counts['n_images_missing']} of {r.counts.get('n_records_total')} "
                                 "records had no image file and were skipped.")
                if not r.complete:
                    notes.append(f"{r.model}: {r.counts.get('n_error')} request(s) failed in transport and are not "
                                 "scored; re-run with the same --out to retry them.")
            parts.append("\n".join(f"- {n}" for n in notes) + "\n")
        return "\n".join(parts)
