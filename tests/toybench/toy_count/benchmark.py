"""ToyCount: how many dots are in the picture? A complete lensbench benchmark in one file.

Data (``--data-dir DIR``): ``DIR/questions.json``, a list of ``{"id", "image", "question", "answer", "kind"}``
(``image`` relative to DIR, ``answer`` a number as text, ``kind`` the question's category), and the images.
Protocol: the image, then the question, greedy; the reply's first whole number is the answer.
Headline: accuracy over all questions, with a 95% CI that resamples images (questions share them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lensbench.benchmarks.base import Benchmark, Loaded, RunContext, RunResult
from lensbench.benchmarks.fields import inside, want_list, want_obj, want_str
from lensbench.benchmarks.layout import FileSet, Layout, Source
from lensbench.core.records import SampleRecord, count_outcomes, outcome_of
from lensbench.core.types import ImagePart, Message, Request, StoredResponse
from lensbench.report.tables import render_table
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline, hit, make_table, nonempty, scored


@dataclass(frozen=True)
class Question:
    """One question as released (never changed); ``image`` is the file's path."""

    id: str
    image: str
    question: str
    answer: str
    kind: str


class ToyCount(Benchmark):
    """ToyCount: count the dots (see the module docstring)."""

    name = "toy-count"
    title = "ToyCount"
    description = "how many dots are in the picture (a toy benchmark)"
    sample_unit = "questions"
    headline = "accuracy (all)"
    answer_space = ["1", "2", "3", "4"]  # what the seeded random baseline answers
    # statistics: the leaderboard cell, what a CI resamples, what load() returns
    headlines = (Headline("accuracy", "all", "all"),)
    cluster = "image"
    load_unit = "questions"
    # the release: where it comes from and what a complete data folder holds
    layout = Layout(bench="toy-count", source=Source("github", "example/toy-count", "0" * 40),
                    files=(FileSet("question file", ("questions.json",), count=1),
                           FileSet("images", ("images/*.png",), minimum=1, media=True)),
                    n_samples=None, samples_what="questions", markers=("questions.json",))

    def load(self, data_dir: Path) -> Loaded:
        """The questions of ``questions.json``. Raises DataError naming the file and field."""
        f = Path(data_dir) / "questions.json"
        items = want_list(json.loads(f.read_text(encoding="utf-8")), f, "questions", nonempty=True)
        out = []
        for i, it in enumerate(items):
            want_obj(it, f, f"[{i}]")
            text = {k: want_str(it.get(k), f, f"[{i}].{k}", nonempty=True)
                    for k in ("id", "image", "question", "answer", "kind")}
            image = inside(data_dir, text.pop("image"), f, f"[{i}].image")
            out.append(Question(image=str(image), **text))
        return Loaded(out)

    def expand(self, samples: Sequence[Question], ctx: RunContext | None = None) -> list[Request]:
        """One request per question; ``meta`` names its sample and the record's facts."""
        params = {"params": ctx.params(temperature=0.0)} if ctx is not None else {}
        return [Request(id=q.id, messages=(Message.user(ImagePart.of(q.image), q.question),), **params,
                        meta={"sample_id": q.id, "target": q.answer, "labels": {"kind": q.kind},
                              "extra": {"image": Path(q.image).name}, "answer_space": self.answer_space})
                for q in samples]

    def scored(self, sample: Question, request: Request, reply: StoredResponse, ctx: RunContext | None) -> SampleRecord:
        """The reply's first whole number against the answer (no number: unparseable)."""
        m = request.meta
        found = re.search(r"\d+", reply.text)
        answer = found.group(0) if found else None
        return SampleRecord.from_reply(self.name, request.id, request, reply, answer=answer, target=m["target"],
                                       outcome=outcome_of(None if answer is None else answer == m["target"]),
                                       labels=dict(m["labels"]), extra=dict(m["extra"]))

    @classmethod
    def unit_tables(cls, records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
        """Accuracy: one row per scored question, a column per kind, images as clusters."""
        recs = scored(records)
        kinds = list(dict.fromkeys(r.labels["kind"] for r in recs))
        rows = [(r.sample_id, r.extra["image"], kinds.index(r.labels["kind"]), hit(r), 1.0) for r in recs]
        cats = {"all": list(range(len(kinds))), **{k: [i] for i, k in enumerate(kinds)}}
        return nonempty({"accuracy": make_table("accuracy", rows, kinds, cluster=cls.cluster, pool="micro",
                                                categories=cats)})

    def aggregate(self, records: list[SampleRecord], noted: Mapping[str, Any] | None = None
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Accuracy (percent) overall and per kind, from the unit table; the outcome counts."""
        t = self.unit_tables(records).get("accuracy")
        metrics = {"accuracy": {c: t.value(c) for c in t.categories} if t is not None else {"all": None}}
        return metrics, {**count_outcomes(records), **(noted or {})}

    def tables(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """One row per run."""
        rows = [[r.model, r.metrics["accuracy"].get("all"), r.counts.get("n")] for r in results]
        return render_table(["Model", "accuracy (%)", "n"], rows, fmt, title="ToyCount")
