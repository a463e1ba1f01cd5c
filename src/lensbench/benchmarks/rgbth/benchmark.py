"""RGB-Th-Bench (Moshtaghi et al.): yes/no questions on RGB and RGB-thermal pairs.

Protocol (SPEC §2; paper Sec. 3.2-3.4, Table 3, Fig. 4-5):

* Data: ``Source */<scene>/questions.json`` = ``{"data": [item]}``, one item per (scene, skill)
  with ``data_source``, ``data_id`` (a path, or a ``[rgb, thermal]`` pair, relative to the
  Source folder), ``data_type``, ``skill_type``, ``QAs`` = ``[{question, answer}]``.
* 14 paper skills (1,624 questions on 29 pairs) by default; the two "Text Reference" skills in
  the files are extra (``--include-extra-skills``).
* Prompt: the fixed context of Sec. 3.3 for the group, a newline, then the question; images
  first (RGB, then thermal).
* Parse: whole-word yes/no (see :func:`lensbench.parsing.parse_yes_no`); no answer = Fail
  (wrong, counted as non-compliance).
* QAcc = % questions right; SAcc = % (scene, skill) units with all questions right; per skill,
  per group (mean of its skills), Overall = mean of the 14 paper skills. A question whose call
  failed (transport error) is left out of QAcc and its unit out of SAcc; the run is marked
  incomplete.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from lensbench.core.errors import DataError
from lensbench.scoring.text import parse_yes_no, strip_reasoning
from lensbench.scoring.metrics import binomial_threshold
from lensbench.report.tables import render_table
from lensbench.core.types import ImagePart, Message, Request
from lensbench.benchmarks.base import Benchmark, RunContext, RunResult
from lensbench.core.resources import read_text

__all__ = ["RGBThBench", "SKILLS", "EXTRA_SKILLS", "CONTEXT", "Unit"]

RGB_TXT = "RGB-Txt"
RGB_TH_TXT = "RGB-Th-Txt"

#: skill_type -> (abbreviation of Sec. 3.2 / Fig. 4-5, prompt group), in the paper's order.
SKILLS: dict[str, tuple[str, str]] = {
    "Scene Understanding": ("Scene", RGB_TXT),
    "Detailed Object Presence": ("ObjPr", RGB_TXT),
    "Instance Attributes": ("Attr", RGB_TXT),
    "Instance Location w.r.t. Image": ("LocIm", RGB_TXT),
    "Instance Spatial Relation": ("SpRel", RGB_TXT),
    "Instance Counting": ("Count", RGB_TXT),
    "Instance Interaction": ("Interact", RGB_TXT),
    "Temperature to Color Mapping Understanding": ("Temp2Col", RGB_TH_TXT),
    "RGB-Thermal-Heatmap Alignment": ("HeatAlign", RGB_TH_TXT),
    "Instance Thermal Attribute": ("ThermAttr", RGB_TH_TXT),
    "Relative Thermal Attribute": ("RelTherm", RGB_TH_TXT),
    "Warmest Areas Detection": ("Warmest", RGB_TH_TXT),
    "Coldest Areas Detection": ("Coldest", RGB_TH_TXT),
    "Risk and Anomaly Detection": ("Anomaly", RGB_TH_TXT),
}
#: The two skills present in the files but not in the paper's 14 (``--include-extra-skills``).
EXTRA_SKILLS: dict[str, tuple[str, str]] = {
    "Numerical Text Reference Understanding": ("NumText", RGB_TXT),
    "Non-Numerical Text Reference Understanding": ("NonNumText", RGB_TXT),
}
PAPER_ABBREVS = [a for a, _ in SKILLS.values()]

#: The fixed contexts of Sec. 3.3, verbatim.
CONTEXT = {
    RGB_TXT: 'Based on this image, answer the following question with strictly either "Yes" or "No", '
             'without any extra explanation',
    RGB_TH_TXT: 'Based on these two images, and the fact that the second image is the thermal image taken from '
                'the same scene as the first image, answer the following question with strictly either "Yes" or '
                '"No", without any extra explanation',
}

_DATA_TYPES = {"Single RGB Image": 1, "RGB-Thermal Pair": 2}


@dataclass(frozen=True)
class Unit:
    """One (scene, skill) unit: its images (RGB[, thermal]) and its questions.

    ``scene_key`` = ``"Source N/<scene>"``; ``qas`` = ((question, "Yes"|"No"), ...).
    """

    scene_key: str
    skill: str
    abbrev: str
    group: str
    extra: bool
    images: tuple[str, ...]
    qas: tuple[tuple[str, str], ...]


class RGBThBench(Benchmark):
    """RGB-Th-Bench: 1,624 yes/no questions on 29 RGB-thermal pairs; QAcc / SAcc (Table 3).

    See the module docstring for the protocol.
    """

    name = "rgb-th-bench"
    title = "RGB-Th-Bench"
    answer_space = ["Yes", "No"]

    class Options(BaseModel):
        """RGB-Th-Bench options."""

        include_extra_skills: bool = Field(default=False, description="also evaluate the two Text Reference skills "
                                           "(not in the paper's 14; reported apart, not in group/Overall scores)")

    # ----------------------------------------------------------------- load
    def load(self, data_dir: Path) -> list[Unit]:
        """Units of ``data_dir`` (the ``Data`` folder with ``Source */<scene>/questions.json``).

        Raises DataError naming the file and field for a malformed file, an unknown skill or
        data type, a bad answer, or a missing image.
        """
        files = sorted(Path(data_dir).glob("*/*/questions.json"))
        if not files:
            raise DataError(data_dir, "no '<Source>/<scene>/questions.json' files found (expected the RGB-Th-Bench "
                                      "'Data' folder)")
        units: list[Unit] = []
        for f in files:
            try:
                doc = json.loads(f.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise DataError(f, f"not valid JSON: {exc}") from None
            items = doc.get("data") if isinstance(doc, dict) else None
            if not isinstance(items, list):
                raise DataError(f, "expected an object with a 'data' list", field="data")
            source_dir = f.parent.parent
            scene_key = f"{source_dir.name}/{f.parent.name}"
            for i, it in enumerate(items):
                units.extend(self._unit(f, i, it, source_dir, scene_key))
        return units

    def _unit(self, f: Path, i: int, it: Any, source_dir: Path, scene_key: str) -> list[Unit]:
        where = f"data[{i}]"
        if not isinstance(it, dict):
            raise DataError(f, "item is not an object", field=where)
        for k in ("data_id", "data_type", "skill_type", "QAs"):
            if k not in it:
                raise DataError(f, "missing field", field=f"{where}.{k}")
        skill = it["skill_type"]
        if skill in SKILLS:
            (abbrev, group), extra = SKILLS[skill], False
        elif skill in EXTRA_SKILLS:
            (abbrev, group), extra = EXTRA_SKILLS[skill], True
            if not self.options.include_extra_skills:
                return []
        else:
            raise DataError(f, f"unknown skill {skill!r}", field=f"{where}.skill_type")
        n_img = _DATA_TYPES.get(it["data_type"])
        if n_img is None:
            raise DataError(f, f"unknown data_type {it['data_type']!r}", field=f"{where}.data_type")
        ids = it["data_id"] if isinstance(it["data_id"], list) else [it["data_id"]]
        if len(ids) != n_img:
            raise DataError(f, f"{it['data_type']!r} needs {n_img} image(s), got {len(ids)}", field=f"{where}.data_id")
        expected_group = RGB_TXT if n_img == 1 else RGB_TH_TXT
        if group != expected_group:
            raise DataError(f, f"skill {skill!r} belongs to {group} but data_type is {it['data_type']!r}",
                            field=f"{where}.data_type")
        images = []
        for rel in ids:
            p = source_dir / rel
            if not p.is_file():
                raise DataError(f, f"image not found: {p}", field=f"{where}.data_id")
            images.append(str(p))
        qas = []
        if not isinstance(it["QAs"], list) or not it["QAs"]:
            raise DataError(f, "expected a non-empty list", field=f"{where}.QAs")
        for j, qa in enumerate(it["QAs"]):
            if not isinstance(qa, dict) or "question" not in qa or "answer" not in qa:
                raise DataError(f, "needs 'question' and 'answer'", field=f"{where}.QAs[{j}]")
            ans = str(qa["answer"]).strip().capitalize()
            if ans not in ("Yes", "No"):
                raise DataError(f, f"answer must be Yes or No, got {qa['answer']!r}", field=f"{where}.QAs[{j}].answer")
            qas.append((str(qa["question"]).strip(), ans))
        return [Unit(scene_key, skill, abbrev, group, extra, tuple(images), tuple(qas))]

    # ------------------------------------------------------------- evaluate
    def requests(self, units: Sequence[Unit], ctx: RunContext | None = None) -> list[Request]:
        """One request per question: images (RGB, thermal), then context + newline + question."""
        params = ctx.params(temperature=0.0) if ctx is not None else None
        img_cache: dict[str, ImagePart] = {}
        out = []
        for u in units:
            parts = []
            for p in u.images:
                if p not in img_cache:
                    img_cache[p] = ImagePart.of(p)
                parts.append(img_cache[p])
            seen: dict[str, int] = defaultdict(int)
            for j, (q, _a) in enumerate(u.qas):
                occ = seen[q]
                seen[q] += 1
                kw = {"params": params} if params is not None else {}
                out.append(Request(
                    id=f"{u.scene_key}/{u.abbrev}/{j}",
                    messages=(Message.user(*parts, f"{CONTEXT[u.group]}\n{q}"),),
                    meta={"replay_match": ["rgbth", u.scene_key, u.skill, q, occ], "answer_space": ["Yes", "No"]},
                    **kw))
        return out

    async def evaluate(self, samples: list[Unit], ctx: RunContext) -> list[dict[str, Any]]:
        """Send one request per question and score it (records: one per question)."""
        reqs = self.requests(samples, ctx)
        got = await ctx.generate(reqs, label="rgb-th-bench")
        records = []
        it = iter(reqs)
        for u in samples:
            for j, (q, a) in enumerate(u.qas):
                r = next(it)
                resp = got.get(r.id)
                rec = {"id": r.id, "scene": u.scene_key, "skill": u.skill, "abbrev": u.abbrev, "group": u.group,
                       "extra": u.extra, "question": q, "answer": a}
                if resp is None or not resp.ok:
                    rec.update(status="error", error=resp.error if resp else "no response")
                else:
                    parsed = parse_yes_no(resp.text)
                    rec.update(reply=resp.text, reasoning=resp.reasoning, parsed=parsed,
                               status="unparseable" if parsed is None else ("correct" if parsed == a else "wrong"))
                    if parsed is None:
                        rec["reply_stripped"] = strip_reasoning(resp.text)
                records.append(rec)
        return records

    # ------------------------------------------------------------ aggregate
    def aggregate(self, records: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
        """QAcc / SAcc per skill abbreviation, per group and Overall (percent); counts and thresholds.

        Returns ``(metrics, counts)``: ``metrics = {"QAcc": {col: %}, "SAcc": {col: %},
        "significance": {...}}`` with columns ``Overall``, ``RGB-Txt``, ``RGB-Th-Txt`` and the
        abbreviations; ``counts`` has ``n`` (questions scored), ``n_unparseable`` (Fail =
        non-compliance), ``n_error`` (transport failures, left out), ``n_units_scored``,
        ``n_units_missing``, per-skill question/unit counts.
        """
        by_skill_q: dict[str, list[bool]] = defaultdict(list)
        units: dict[tuple[str, str], list[dict]] = defaultdict(list)
        order: list[str] = []
        groups: dict[str, str] = {}
        extra: dict[str, bool] = {}
        for r in records:
            ab = r["abbrev"]
            if ab not in groups:
                order.append(ab)
                groups[ab] = r["group"]
                extra[ab] = r["extra"]
            units[(r["scene"], ab)].append(r)
            if r["status"] != "error":
                by_skill_q[ab].append(r["status"] == "correct")
        by_skill_u: dict[str, list[bool]] = defaultdict(list)
        missing_units = 0
        for (_scene, ab), rs in units.items():
            if any(r["status"] == "error" for r in rs):
                missing_units += 1
                continue
            by_skill_u[ab].append(all(r["status"] == "correct" for r in rs))
        paper_order = [a for a in PAPER_ABBREVS if a in groups] + [a for a in order if a not in PAPER_ABBREVS]
        qacc: dict[str, float | None] = {}
        sacc: dict[str, float | None] = {}
        for ab in paper_order:
            qs, us = by_skill_q.get(ab, []), by_skill_u.get(ab, [])
            qacc[ab] = 100.0 * sum(qs) / len(qs) if qs else None
            sacc[ab] = 100.0 * sum(us) / len(us) if us else None

        def mean(vals):
            vals = [v for v in vals if v is not None]
            return sum(vals) / len(vals) if vals else None

        core = [a for a in paper_order if not extra[a]]
        cols = {RGB_TXT: [a for a in core if groups[a] == RGB_TXT], RGB_TH_TXT: [a for a in core if groups[a] == RGB_TH_TXT]}
        q_out = {"Overall": mean(qacc[a] for a in core)}
        s_out = {"Overall": mean(sacc[a] for a in core)}
        for g, abs_ in cols.items():
            q_out[g] = mean(qacc[a] for a in abs_)
            s_out[g] = mean(sacc[a] for a in abs_)
        q_out.update(qacc)
        s_out.update(sacc)
        # significance thresholds from the counts (binomial, p < 0.05; Table 3's row)
        sig_q, sig_s = {}, {}
        n_q = {g: sum(len(by_skill_q.get(a, [])) for a in abs_) for g, abs_ in cols.items()}
        n_u = {g: sum(len(by_skill_u.get(a, [])) for a in abs_) for g, abs_ in cols.items()}
        n_q["Overall"], n_u["Overall"] = sum(n_q.values()), sum(n_u.values())
        for col in ("Overall", RGB_TXT, RGB_TH_TXT):
            sig_q[col] = binomial_threshold(n_q[col], 0.5) if n_q[col] else None
            sig_s[col] = binomial_threshold(n_u[col], 0.5 ** 4) if n_u[col] else None
        metrics = {"QAcc": q_out, "SAcc": s_out,
                   "significance": {"QAcc": sig_q, "SAcc": sig_s, "test": "one-sided exact binomial, p < 0.05; "
                                    "chance 50% per question, 6.25% per 4-question unit"}}
        n_err = sum(r["status"] == "error" for r in records)
        counts = {
            "n": sum(r["status"] != "error" for r in records),
            "n_questions": len(records),
            "n_unparseable": sum(r["status"] == "unparseable" for r in records),
            "n_error": n_err,
            "n_units": len(units),
            "n_units_scored": len(units) - missing_units,
            "n_units_missing": missing_units,
            "per_skill": {ab: {"questions": len(by_skill_q.get(ab, [])), "units": len(by_skill_u.get(ab, []))}
                          for ab in paper_order},
        }
        return metrics, counts

    # --------------------------------------------------------------- render
    @staticmethod
    def paper_rows() -> list[dict[str, Any]]:
        """Table 3 of the paper (shipped as data: ``lensbench/data/rgbth_paper_table3.json``)."""
        text = read_text(__package__, "paper", "table3.json")
        return json.loads(text)["rows"]

    def tables(self, results, fmt: str = "md", with_paper: bool = False) -> str:
        """See :meth:`Benchmark.tables` (transition alias of :meth:`render`)."""
        return self.render(results, fmt, with_paper)

    def render(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Table 3 (group QAcc/SAcc), Fig. 4/5 per-skill tables and the counts, as md or csv."""
        cols3 = ["Model", "RGB-Txt QAcc", "RGB-Txt SAcc", "RGB-Th-Txt QAcc", "RGB-Th-Txt SAcc", "Overall QAcc",
                 "Overall SAcc"]

        def row3(name, q, s):
            return [name, q.get(RGB_TXT), s.get(RGB_TXT), q.get(RGB_TH_TXT), s.get(RGB_TH_TXT), q.get("Overall"),
                    s.get("Overall")]

        rows = [row3("Random Baseline", {c: 50.0 for c in (RGB_TXT, RGB_TH_TXT, "Overall")},
                     {c: 6.25 for c in (RGB_TXT, RGB_TH_TXT, "Overall")})]
        if results:
            sig = results[0].metrics.get("significance", {})
            rows.append(row3("Statistically Significant (>)", sig.get("QAcc", {}), sig.get("SAcc", {})))
        if with_paper:
            rows += [row3(f"{p['model']} (paper)", p["QAcc"], p["SAcc"]) for p in self.paper_rows()]
        for r in results:
            tag = "" if r.complete else f" [incomplete: {r.counts.get('n_error', 0)} errors]"
            rows.append(row3(r.model + tag, r.metrics["QAcc"], r.metrics["SAcc"]))
        parts = [render_table(cols3, rows, fmt, title="RGB-Th-Bench (Table 3 layout; %)")]
        abbrevs: list[str] = []
        for r in results:
            for k in r.metrics["QAcc"]:
                if k not in ("Overall", RGB_TXT, RGB_TH_TXT) and k not in abbrevs:
                    abbrevs.append(k)
        for metric, fig in (("QAcc", "Fig. 4"), ("SAcc", "Fig. 5")):
            parts.append(render_table(["Model"] + abbrevs, [[r.model] + [r.metrics[metric].get(a) for a in abbrevs]
                                                             for r in results], fmt,
                                      title=f"Per-skill {metric} ({fig} layout; %)"))
        parts.append(render_table(
            ["Model", "questions scored", "unparseable (non-compliance)", "errors (not scored)", "units scored",
             "units missing"],
            [[r.model, r.counts.get("n"), r.counts.get("n_unparseable"), r.counts.get("n_error"),
              r.counts.get("n_units_scored"), r.counts.get("n_units_missing")] for r in results], fmt, title="Counts"))
        for r in results:
            if not r.complete:
                parts.append(f"Run {r.run_dir or r.model} is incomplete: {r.counts.get('n_error')} question(s) failed "
                             f"in transport and are left out ({r.counts.get('n_units_missing')} unit(s) missing from "
                             "SAcc); re-run with the same --out to retry them.\n")
        return "\n".join(parts)
