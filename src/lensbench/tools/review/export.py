"""Review answers out: CSV safe for spreadsheets (:mod:`lensbench.core.csvsafe`), JSONL, and the
accept / edit / reject outcome per item."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lensbench.core.answers import Answers
from lensbench.core.csvsafe import write_csv
from lensbench.core.jsonl import dumps_line
from lensbench.tools.review.form import DECISIONS, Form, ReviewItem

__all__ = ["answer_rows", "export_answers", "Outcome", "resolve"]

def answer_rows(answers: Answers, form: Form, items: Mapping[str, ReviewItem] | None = None) -> list[dict[str, Any]]:
    """One dict per (reviewer, item) answered: ``reviewer``, ``item``, every form field (None when
    not given; a box as its JSON text), ``meta`` (the item's meta when ``items`` is given)."""
    items = items or {}
    out = []
    for r in sorted(answers):
        for key in sorted(answers[r]):
            got = answers[r][key]
            it = items.get(key)
            out.append({"reviewer": r, "item": key, **{f.name: got.get(f.name) for f in form.fields},
                        "meta": dict(it.meta) if it else {}})
    return out


def export_answers(path: str | Path, answers: Answers, form: Form, items: Mapping[str, ReviewItem] | None = None,
                   fmt: str | None = None) -> int:
    """Write :func:`answer_rows` to ``path`` as ``csv`` (meta flattened to ``meta.<key>`` columns)
    or ``jsonl`` (``fmt`` from the suffix when None); returns rows written. Raises ValueError for
    another format."""
    fmt = fmt or Path(path).suffix.lstrip(".").lower()
    rows = answer_rows(answers, form, items)
    if fmt == "jsonl":
        with Path(path).open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(dumps_line(r) + "\n")
        return len(rows)
    if fmt != "csv":
        raise ValueError(f"{path}: export format must be csv or jsonl, got {fmt!r}")
    metas = sorted({k for r in rows for k in r["meta"]})
    names = [f.name for f in form.fields]
    return write_csv(path, ["reviewer", "item", *names, *(f"meta.{k}" for k in metas)],
                     ([r["reviewer"], r["item"], *(r[n] for n in names),
                       *(_flat(r["meta"].get(k)) for k in metas)] for r in rows))


def _flat(v: Any) -> Any:
    return json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v


@dataclass
class Outcome:
    """One item's accept / edit / reject outcome over its reviewers.

    ``keep``: kept or not by the rule; ``votes``: decision -> count; ``texts`` / ``boxes``: the
    item's values after the chosen edits (unedited ones as given); ``edited``: names of the
    fields changed; ``conflicts``: fields where reviewers' edits differ (the value given by most
    of them wins, ties broken by reviewer name order)."""

    key: str
    keep: bool
    votes: dict[str, int]
    texts: dict[str, str] = field(default_factory=dict)
    boxes: dict[str, list[float]] = field(default_factory=dict)
    edited: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


def resolve(answers: Answers, form: Form, items: Mapping[str, ReviewItem], *, decision: str = "decision",
            rule: str = "majority") -> dict[str, Outcome]:
    """The outcome of every reviewed item of ``items`` (items nobody decided are left out).

    ``rule``: ``majority`` keeps an item when accept + edit votes outnumber reject votes (a tie
    rejects), ``unanimous`` only when nobody rejected, ``any`` when anybody kept it. Edits count
    only from reviewers who decided ``edit``. Raises ValueError for an unknown rule or a form
    without the ``decision`` field."""
    if rule not in ("majority", "unanimous", "any"):
        raise ValueError(f"rule must be majority, unanimous or any, got {rule!r}")
    fields = form.by_name()
    if decision not in fields or fields[decision].options != DECISIONS:
        raise ValueError(f"the form has no accept / edit / reject field {decision!r}")
    editable = [f for f in form.fields if f.kind in ("text", "box")]
    out = {}
    for key, it in items.items():
        given = [(r, answers[r][key]) for r in sorted(answers) if key in answers[r] and decision in answers[r][key]]
        if not given:
            continue
        votes = Counter(a[decision] for _r, a in given)
        yes, no = votes["accept"] + votes["edit"], votes["reject"]
        keep = {"majority": yes > no, "unanimous": no == 0, "any": yes > 0}[rule]
        res = Outcome(key, keep, {d: votes[d] for d in DECISIONS}, dict(it.texts),
                      {k: list(v) for k, v in it.boxes.items()})
        for f in editable:
            vals = [a[f.name] for _r, a in given if a[decision] == "edit" and f.name in a]
            if not vals:
                continue
            counts = Counter(vals)
            best = max(counts.values())
            chosen = next(v for v in vals if counts[v] == best)
            if len(counts) > 1:
                res.conflicts.append(f.name)
            if f.kind == "text":
                changed = chosen != it.texts.get(f.name)
                res.texts[f.name] = chosen
            else:
                box = json.loads(chosen)
                changed = box != list(it.boxes.get(f.name) or [])
                res.boxes[f.name] = box
            if changed:
                res.edited.append(f.name)
        out[key] = res
    return out
