"""IF-Bench scores from per-request :class:`SampleRecord` s: soft circular, strict, macro means.

Paper Sec. 3.3 and Tab. 2 (soft circular score), Appendix D Tab. 7 (strict score), Fig. 9
(per-language scores); the official ``bench_evaluate`` computes the same: per question and
language ``correct rotations / rotations``, per dimension the mean over its questions, per
language the plain mean over the 10 dimensions, overall the mean of the two languages.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from lensbench.benchmarks.ifbench.data import ABBREVS, COLUMNS
from lensbench.benchmarks.ifbench.prompts import LANG_FIELDS
from lensbench.core.records import SampleRecord
from lensbench.scoring.metrics import mean

__all__ = ["units", "score_records"]


def units(records: Sequence[SampleRecord]) -> dict[tuple[str, str], list[SampleRecord]]:
    """Records grouped by (question id, language) unit (``labels["qid"]``, ``labels["language"]``),
    in first-seen order."""
    out: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    for r in records:
        out[(r.labels["qid"], r.labels["language"])].append(r)
    return out


def score_records(records: Sequence[SampleRecord]) -> dict[str, dict[str, float | None]]:
    """Soft circular and strict scores (percent, 0-100) from per-request records.

    Each record carries ``labels`` ``qid``, ``dimension`` (Tab. 2 abbreviation), ``language`` and
    an ``outcome``. A (question, language) unit with an ``error`` record (transport failure) is
    left out of every score; ``unparseable`` counts as wrong. Returns ``{"Score": {col},
    "Strict": {col}, "Score-<lang>": {col}, "Strict-<lang>": {col}}`` with columns ``Avg`` and the
    10 abbreviations: per language, dimension = mean over questions of (correct rotations /
    rotations) (soft) or of all-rotations-correct (strict), Avg = macro mean over dimensions
    present; overall dimension/Avg = mean over languages (None where no value).
    """
    soft: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    strict: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (_qid, lang), rs in units(records).items():
        if any(r.outcome == "error" for r in rs):
            continue
        ok = [r.outcome == "correct" for r in rs]
        dim = rs[0].labels["dimension"]
        soft[lang][dim].append(sum(ok) / len(ok))
        strict[lang][dim].append(1.0 if all(ok) else 0.0)
    langs = [lg for lg in LANG_FIELDS if lg in soft] + sorted(lg for lg in soft if lg not in LANG_FIELDS)
    out: dict[str, dict[str, float | None]] = {}
    for name, tab in (("Score", soft), ("Strict", strict)):
        per_lang: dict[str, dict[str, float | None]] = {}
        for lg in langs:
            dims = {a: (100.0 * sum(tab[lg][a]) / len(tab[lg][a]) if tab[lg].get(a) else None) for a in ABBREVS}
            per_lang[lg] = {"Avg": mean(dims.values()), **dims}
            out[f"{name}-{lg}"] = per_lang[lg]
        out[name] = {c: mean(per_lang[lg][c] for lg in langs) for c in COLUMNS}
        if not langs:
            out[name] = {c: None for c in COLUMNS}
    return out
