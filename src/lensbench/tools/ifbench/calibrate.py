"""IF-Bench two-stage human calibration (paper Sec. 3.2 "Human Calibration") on the review page.

Each question of a built ``if_bench.json`` is one review item (key = its question id, e.g.
``TFU-003``, as ``lensbench run if-bench`` names it): the infrared image, its dimension, source
data set and target, and the question, four options and right letter in both languages as
editable texts. Each reviewer accepts, edits (the edited texts are saved with the decision) or
rejects it, applying the paper's six criteria (:data:`CRITERIA`). Stage 1 reviews the candidates;
stage 2 (the paper's domain experts, "more rigorous") reviews what stage 1 kept, with stage 1's
edits applied. :func:`finalize` applies the stages in order (an item is kept when every stage
keeps it, by :func:`lensbench.tools.review.resolve`'s rule), checks every edited question against
the release schema, balances the letters again and writes the final release.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lensbench.benchmarks.ifbench.data import DIMENSIONS, find_image
from lensbench.benchmarks.ifbench.prompts import LETTERS
from lensbench.core.answers import Answers
from lensbench.core.errors import DataError
from lensbench.tools.ifbench.generate import ReleaseQuestion
from lensbench.tools.ifbench.release import (Record, balance_letters, letter_counts, place_image, read_release,
                                             write_release)
from lensbench.tools.review import Field, Form, ReviewItem, Section, agreement, resolve

__all__ = ["CRITERIA", "CALIBRATION_FORM", "qid_records", "review_items", "apply_outcome", "StageReport",
           "after_stages", "finalize", "final_counts"]

#: Sec. 3.2's calibration criteria, shown to every reviewer.
CRITERIA = ("(1) Plausibility: remove ill-formed or logically inconsistent questions. (2) Ambiguity: revise "
            "ambiguously phrased questions (e.g. state the observer's viewpoint). (3) Answerability: exclude "
            "questions whose answer cannot be reliably inferred from the image. (4) Answer verification: correct "
            "inaccurate or mismatched answers. (5) Difficulty: filter out highly repetitive or overly simple "
            "questions. (6) Data augmentation is done outside this page.")

_TEXTS = [("en_question", "Question (English)"), *((f"en_{L.lower()}", f"{L} (English)") for L in LETTERS),
          ("cn_question", "Question (Chinese)"), *((f"cn_{L.lower()}", f"{L} (Chinese)") for L in LETTERS),
          ("answer", "Right letter (A-D, the same in both languages)")]

def _check(values: dict[str, str]) -> None:
    if "answer" in values and values["answer"].strip().upper() not in LETTERS:
        raise ValueError(f"the right letter must be one of A-D, got {values['answer']!r}")
    empty = [k for k, v in values.items() if k != "decision" and not v.strip()]
    if empty:
        raise ValueError(f"empty text: {', '.join(empty)}")


CALIBRATION_FORM = Form(
    fields=(Field.decision(), *(Field.text(n, label) for n, label in _TEXTS)),
    title="IF-Bench calibration", info=("dimension", "dataset", "target"), instructions=CRITERIA,
    sections=(Section("verdict", "Accept / edit / reject", ("decision",)),
              Section("english", "English", tuple(n for n, _ in _TEXTS[:5])),
              Section("chinese", "Chinese", tuple(n for n, _ in _TEXTS[5:10])),
              Section("right", "Answer", ("answer",))),
    check=_check)


def qid_records(by_dim: dict[str, list[Record]]) -> dict[str, Record]:
    """``{question id: record}`` with the ids of ``lensbench run if-bench`` (``<abbrev>-<index>``)."""
    return {f"{DIMENSIONS[d]}-{i:03d}": r for d, recs in by_dim.items() for i, r in enumerate(recs)}


def _texts(q: dict[str, Any]) -> dict[str, str]:
    out = {"en_question": q["en_question"], "cn_question": q["cn_question"], "answer": q["answer"]}
    for L in LETTERS:
        out[f"en_{L.lower()}"] = q["en_options"][L]
        out[f"cn_{L.lower()}"] = q["cn_options"][L]
    return out


def review_items(records: dict[str, Record], image_dir: Path | None) -> list[ReviewItem]:
    """One review item per question (its image found in ``image_dir`` by the record's name; none
    when ``image_dir`` is None)."""
    out = []
    for qid, r in records.items():
        img = find_image(image_dir, r["dst_thermal_path"]) if image_dir is not None else None
        q = r["question"]
        out.append(ReviewItem(key=qid, images=(str(img),) if img else (), title=f"{qid}: {q['dimension']}",
                              info={"dimension": q["dimension"], "dataset": r.get("dataset", ""),
                                    "target": r.get("pos_info", "")},
                              texts=_texts(q), meta={"dst_thermal_path": r["dst_thermal_path"]}))
    return out


@dataclass
class StageReport:
    """One stage: ``decided`` items, ``kept``, ``edited`` (kept with a changed text), ``rejected``,
    ``undecided`` (nobody decided: dropped), ``invalid_edits`` ({qid: why}: dropped), ``agreement``
    on the decision (percent, kappas, alpha), ``reviewers``."""

    decided: int = 0
    kept: int = 0
    edited: int = 0
    rejected: int = 0
    undecided: int = 0
    invalid_edits: dict[str, str] = field(default_factory=dict)
    agreement: dict[str, Any] = field(default_factory=dict)
    reviewers: list[str] = field(default_factory=list)


def apply_outcome(records: dict[str, Record], answers: Answers, rule: str = "majority"
                  ) -> tuple[dict[str, Record], StageReport]:
    """The records one stage keeps, with its edits applied and checked against the release schema."""
    items = {it.key: it for it in review_items(records, None)}
    outcome = resolve(answers, CALIBRATION_FORM, items, rule=rule)
    rep = StageReport(reviewers=sorted(answers), agreement=agreement(answers, CALIBRATION_FORM, ["decision"])["decision"])
    kept: dict[str, Record] = {}
    for qid, rec in records.items():
        o = outcome.get(qid)
        if o is None:
            rep.undecided += 1
            continue
        rep.decided += 1
        if not o.keep:
            rep.rejected += 1
            continue
        t = o.texts
        q = {"dimension": rec["question"]["dimension"], "en_question": t["en_question"], "cn_question": t["cn_question"],
             "answer": t["answer"].strip().upper(),
             "en_options": {L: t[f"en_{L.lower()}"] for L in LETTERS},
             "cn_options": {L: t[f"cn_{L.lower()}"] for L in LETTERS}}
        try:
            q = ReleaseQuestion.model_validate(q).release()
        except ValidationError as exc:
            err = exc.errors()[0]
            rep.invalid_edits[qid] = f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}"
            continue
        rep.kept += 1
        rep.edited += bool(o.edited)
        kept[qid] = {**rec, "question": q}
    return kept, rep


def after_stages(data_dir: Path, stages: Sequence[Answers], rule: str = "majority"
                 ) -> tuple[dict[str, Record], list[StageReport]]:
    """The questions of ``data_dir/if_bench.json`` that survive ``stages`` (in order), edits applied."""
    records = qid_records(read_release(Path(data_dir) / "if_bench.json"))
    reports = []
    for answers in stages:
        records, rep = apply_outcome(records, answers, rule)
        reports.append(rep)
    return records, reports


def finalize(data_dir: Path, stages: Sequence[Answers], out: Path, *, rule: str = "majority",
             seed: int = 0) -> tuple[dict[str, list[Record]], list[StageReport]]:
    """Apply the stages' answers in order to ``data_dir/if_bench.json``, balance the letters and
    write ``out/if_bench.json`` with its images in ``out/infrared_imgs``. Returns the final
    ``{dimension: [record]}`` and one report per stage. Raises DataError when ``out`` is
    ``data_dir`` or already holds an ``if_bench.json`` (never overwritten), or for a bad release."""
    data_dir, out = Path(data_dir), Path(out)
    if out.resolve() == data_dir.resolve() or (out / "if_bench.json").exists():
        raise DataError(out / "if_bench.json", "exists (or is the candidates' folder); choose a new --out")
    records, reports = after_stages(data_dir, stages, rule)
    by_dim: dict[str, list[Record]] = {}
    for rec in records.values():
        by_dim.setdefault(rec["question"]["dimension"], []).append(rec)
    final = balance_letters({d: by_dim[d] for d in DIMENSIONS if d in by_dim}, seed)
    for recs in final.values():
        for r in recs:
            src = find_image(data_dir / "infrared_imgs", r["dst_thermal_path"])
            if src is None:
                raise DataError(data_dir / "infrared_imgs", f"image {r['dst_thermal_path']!r} not found")
            place_image(src, out / "infrared_imgs", r["dst_thermal_path"])
    write_release(out, final)
    return final, reports


def final_counts(final: dict[str, list[Record]]) -> dict[str, Any]:
    """Questions, images, per-dimension counts and right letters of a final set."""
    return {"questions": sum(len(v) for v in final.values()),
            "images": len({r["dst_thermal_path"] for v in final.values() for r in v}),
            "per_dimension": {d: len(v) for d, v in final.items()}, "letters": letter_counts(final)}
