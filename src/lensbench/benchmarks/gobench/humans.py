"""Human ratings for GOBench: rating files (CSV/TSV, the rate page's SQLite, VLMEvalKit's GOBench.tsv)
and the ground truth made from them.

Ground truth (paper Sec. 2.2: "the averaged expert scores for these three dimensions ... serve as
the definitive ground truth") is the mean over raters per image and dimension. Accepted sources:

* VLMEvalKit's ``GOBench.tsv`` (HF ``bonnot/GOBench``): columns ``index``, ``image`` (base64),
  ``question``, ``answer``; the ``answer`` cell holds ``Reality Assessment Score: x``,
  ``Aesthetics Rating: y``, ``Instruction Consistency Rating: z`` (read with the same patterns
  VLMEvalKit's ``parse_ground_truth`` uses; a field that is absent or not a number is None).
  Only per-image means, no per-question labels. The public human ground truth: Tables 1-2 of
  ``lensbench gobench summary`` are computed from it (:func:`tsv_rating_rows`).
* A CSV (or TSV) of ratings: a key column ``index`` (``direct_light_images_1.1``) or ``image``
  (``direct_light_images/1.1.png``); either per-image means (``authenticity``, ``aesthetics``,
  ``fidelity``; aliases ``reality``, ``consistency``, ``instruction_consistency``) or one row
  per rater (``rater`` column and/or ``q1``..``q5`` answers Yes / No / Cannot determine). With
  per-rater rows the ground truth is the mean of raters, and per question the majority label.
* The SQLite database written by ``lensbench gobench rate`` (same per-rater semantics).
"""

from __future__ import annotations

import base64
import csv
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lensbench.core.csvsafe import read_csv
from lensbench.core.errors import DataError
from lensbench.benchmarks.gobench.parse_paper import normalize_answer
from lensbench.benchmarks.gobench.ratings import FIELDS, QFIELDS, RatingRow, read_store_rows
from lensbench.benchmarks.gobench.records import GORecord, HumanGT
from lensbench.benchmarks.gobench.sps import authenticity_score

__all__ = ["attach_human_gt", "RatingRow", "read_rating_rows", "ground_truth", "read_vlmevalkit_tsv", "match_record",
           "load_human_gt", "QFIELDS", "FIELDS", "is_vlmevalkit_tsv", "tsv_rating_rows"]

_ALIASES = {
    "authenticity": ("authenticity", "reality", "optical_authenticity", "reality_score", "authenticity_score"),
    "aesthetics": ("aesthetics", "aesthetic", "aesthetics_rating", "aesthetic_quality"),
    "fidelity": ("fidelity", "consistency", "instruction_consistency", "instruction_fidelity", "consistency_rating"),
}


# --------------------------------------------------------------------------- files
def _num(v: Any, lo: float, hi: float, path: Path, field: str, line: int) -> float | None:
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise DataError(path, f"line {line}: not a number: {v!r}", field=field) from None
    if math.isnan(x):
        return None
    if not lo <= x <= hi:
        raise DataError(path, f"line {line}: {x} outside {lo:g}-{hi:g}", field=field)
    return x


def read_rating_rows(path: str | Path) -> list[RatingRow]:
    """Rating rows from a ratings CSV/TSV or a ``lensbench gobench rate`` SQLite database.

    A VLMEvalKit ``GOBench.tsv`` is read by :func:`tsv_rating_rows` (one row per image, its
    rater means; numbered rows need ``records`` there, so here only record-keyed TSVs work).
    Raises DataError naming the file and column for a missing key column, a bad answer or a
    score out of range.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "ratings file not found")
    if is_vlmevalkit_tsv(path):
        return tsv_rating_rows(path)
    with path.open("rb") as fh:
        head = fh.read(16)
    if head.startswith(b"SQLite format 3"):
        return read_store_rows(path)
    return _csv_rating_rows(path)


def _csv_rating_rows(path: Path) -> list[RatingRow]:
    """The rows of a ratings CSV / TSV (key column ``item``, ``image``, ``index`` or ``record_index``; per-rater
    ``q1``..``q5`` answers and / or the three scores; optional ``rater``, ``generator``)."""
    text = path.read_text(encoding="utf-8-sig")
    first = text.split("\n", 1)[0]
    delim = "\t" if path.suffix.lower() == ".tsv" or first.count("\t") > first.count(",") else ","
    names, reader = read_csv(path, delim, text=text)  # records end only at \r / \n (not U+2028 / U+0085)
    cols = {c.strip().lower(): c for c in names}
    key_col = next((cols[c] for c in ("item", "image", "index", "record_index") if c in cols), None)
    if key_col is None:
        raise DataError(path, f"needs an 'index' or 'image' column; has {list(cols)}", field="index")
    rec_col = next((cols[c] for c in ("index", "record_index") if c in cols), None)
    dim_cols = {d: next((cols[a] for a in al if a in cols), None) for d, al in _ALIASES.items()}
    q_cols = [cols.get(q) for q in QFIELDS]

    def cell(row: dict[str, str], col: str | None) -> str | None:
        return ((row.get(col) or "").strip() or None) if col else None

    def score(row: dict[str, str], dim: str, low: int, line: int) -> float | None:
        col = dim_cols[dim]
        return _num(row.get(col) if col else None, low, 5, path, str(col), line)

    out = []
    for line, row in enumerate(reader, 2):
        key = (row.get(key_col) or "").strip()
        if not key:
            raise DataError(path, f"line {line}: empty key", field=key_col)
        answers = _row_answers(path, line, row, q_cols) if all(c is not None for c in q_cols) else ()
        auth = score(row, "authenticity", 0, line)
        if answers and all(a is not None for a in answers):
            auth = authenticity_score(answers)  # type: ignore[arg-type]
        out.append(RatingRow(key=key, rater=cell(row, cols.get("rater")), answers=answers, authenticity=auth,
                             aesthetics=score(row, "aesthetics", 1, line), fidelity=score(row, "fidelity", 1, line),
                             generator=cell(row, cols.get("generator")), record=cell(row, rec_col)))
    return out


def _row_answers(path: Path, line: int, row: dict[str, str], q_cols: list[str | None]) -> tuple[str | None, ...]:
    """The five answers of a ratings row (None where blank). Raises DataError for an answer that is none of
    Yes / No / Cannot determine."""
    out = []
    for c in q_cols:
        raw = (row.get(c) or "").strip()  # type: ignore[arg-type]
        a = normalize_answer(raw) if raw else None
        if raw and a is None:
            raise DataError(path, f"line {line}: answer must be Yes / No / Cannot determine, got {raw!r}", field=c)
        out.append(a)
    return tuple(out)


def _mean(vals: Sequence[float | None]) -> float | None:
    v = [x for x in vals if x is not None]
    return sum(v) / len(v) if v else None


def ground_truth(rows: Sequence[RatingRow]) -> dict[str, HumanGT]:
    """Per key: mean over its rows per dimension (Sec. 2.2) and per-question majority labels.

    A question's majority is the label given by strictly more raters than any other label
    (None on a tie or when no rater answered it). Returns ``{key: HumanGT}``.
    """
    by: dict[str, list[RatingRow]] = defaultdict(list)
    for r in rows:
        by[r.key].append(r)
    out = {}
    for key, rs in by.items():
        maj: list[str | None] = []
        if any(r.answers for r in rs):
            for qi in range(5):
                c = Counter(r.answers[qi] for r in rs if r.answers and r.answers[qi] is not None)
                top = c.most_common(2)
                maj.append(top[0][0] if top and (len(top) == 1 or top[0][1] > top[1][1]) else None)
        out[key] = HumanGT(authenticity=_mean([r.authenticity for r in rs]), aesthetics=_mean([r.aesthetics for r in rs]),
                           fidelity=_mean([r.fidelity for r in rs]), majority=tuple(maj), n_raters=len(rs))
    return out


# --------------------------------------------------------------------------- VLMEvalKit TSV
_GT_PATTERNS = {
    "authenticity": re.compile(r"Reality Assessment Score:\s*([\d.]+)", re.IGNORECASE),
    "aesthetics": re.compile(r"Aesthetics Rating:\s*([\d.]+)", re.IGNORECASE),
    "fidelity": re.compile(r"Instruction Consistency Rating:\s*([\d.]+)", re.IGNORECASE),
}


@dataclass
class TsvRow:
    """One row of ``GOBench.tsv``: its ``index`` cell, question, GT scores, and the row number."""

    index: str
    question: str | None
    gt: HumanGT | None
    row: int
    image_b64: str | None = None


def read_vlmevalkit_tsv(path: str | Path, keep_images: bool = False) -> list[TsvRow]:
    """Rows of VLMEvalKit's ``GOBench.tsv`` (streamed; base64 images kept only if ``keep_images``).

    Raises DataError naming the file and column when ``index`` or ``answer`` is missing.
    """
    path = Path(path)
    csv.field_size_limit(sys.maxsize)
    out = []
    with path.open("r", encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        cols = reader.fieldnames or []
        for need in ("index", "answer"):
            if need not in cols:
                raise DataError(path, f"VLMEvalKit TSV without a {need!r} column (columns: {cols})", field=need)
        for i, row in enumerate(reader, 2):
            ans = row.get("answer") or ""
            vals: dict[str, float | None] = {}
            for d, pat in _GT_PATTERNS.items():
                m = pat.search(ans)
                try:
                    vals[d] = float(m.group(1)) if m else None
                except ValueError:  # e.g. "3.5." : VLMEvalKit's float() fails the row too
                    vals[d] = None
            gt = HumanGT(**vals) if any(v is not None for v in vals.values()) else None
            out.append(TsvRow(index=str(row["index"]).strip(), question=row.get("question"), gt=gt, row=i,
                              image_b64=row.get("image") if keep_images else None))
    return out


def match_record(key: str, by_index: dict[str, GORecord], by_image: dict[str, GORecord]) -> GORecord | None:
    """The record a ratings key names: a record ``index``, a release image path (with or without
    a leading ``data/`` or extension), or None."""
    k = key.strip().replace("\\", "/")
    if k in by_index:
        return by_index[k]
    for cand in (k, k.removeprefix("data/"), re.sub(r"\.[A-Za-z]+$", "", k.removeprefix("data/")) + ".png"):
        if cand in by_image:
            return by_image[cand]
    return None


def _tsv_to_records(rows: list[TsvRow], records: list[GORecord], path: Path) -> dict[str, TsvRow]:
    by_index = {r.index: r for r in records}
    by_image = {r.image: r for r in records}
    out: dict[str, TsvRow] = {}
    pending = []
    for t in rows:
        rec = match_record(t.index, by_index, by_image)
        if rec is not None:
            out[rec.index] = t
        else:
            pending.append(t)
    if not pending:
        return out
    if not all(re.fullmatch(r"-?\d+", t.index) for t in pending):
        bad = next(t for t in pending if not re.fullmatch(r"-?\d+", t.index))
        raise DataError(path, f"row {bad.row}: index {bad.index!r} matches no record of data_total.json", field="index")
    # integer indices: position in data_total.json (0- or 1-based), checked against the question text
    best = None
    for offset in (0, 1):
        hits = checked = 0
        for t in pending:
            j = int(t.index) - offset
            if not 0 <= j < len(records):
                hits = -1
                break
            if t.question:
                checked += 1
                hits += records[j].prompt.strip() in t.question
        if hits >= 0 and (best is None or hits > best[1]):
            best = (offset, hits, checked)
    if best is None:
        raise DataError(path, "integer indices outside the 999 records", field="index")
    offset, hits, checked = best
    if checked and hits < 0.9 * checked:
        raise DataError(path, f"integer indices do not line up with data_total.json (only {hits}/{checked} question "
                              "cells contain the record's prompt)", field="index")
    for t in pending:
        out[records[int(t.index) - offset].index] = t
    return out


def is_vlmevalkit_tsv(path: str | Path) -> bool:
    """Whether ``path`` is a ``.tsv`` whose header has VLMEvalKit's ``index`` and ``answer`` columns."""
    path = Path(path)
    if path.suffix.lower() != ".tsv" or not path.is_file():
        return False
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        header = fh.readline().rstrip("\r\n").split("\t")
    return "answer" in header and "index" in header


def tsv_rating_rows(path: str | Path, records: list[GORecord] | None = None) -> list[RatingRow]:
    """One :class:`RatingRow` per image of VLMEvalKit's ``GOBench.tsv``: the rater means of its
    ``answer`` cell (``rater`` None; a field absent from the cell is None).

    Keys: the record ``index`` (``direct_light_images_1.1``, so the release variant ``.1``-``.3``
    and thus the generator is known). Numbered rows (``1``..``999``) are matched to ``records``
    (``data_total.json`` order, checked against the question cells); without ``records`` they
    are refused. Rows whose ``answer`` cell holds none of the three scores are left out.
    Raises DataError naming the file and field: numbered rows without ``records``, an index
    that matches no record, or no human score in any ``answer`` cell.
    """
    path = Path(path)
    rows = read_vlmevalkit_tsv(path)
    if records is not None:
        mapping = _tsv_to_records(rows, records, path)
        keyed = [(k, t) for k, t in mapping.items()]
    else:
        numbered = next((t for t in rows if re.fullmatch(r"-?\d+", t.index)), None)
        if numbered is not None:
            raise DataError(path, f"row {numbered.row}: numbered index {numbered.index!r}; give the GOBench data "
                                  "folder (--data-dir, data_total.json) to know each row's image and generator",
                            field="index")
        keyed = [(t.index, t) for t in rows]
    out = [RatingRow(key=k, rater=None, answers=(), authenticity=t.gt.authenticity, aesthetics=t.gt.aesthetics,
                     fidelity=t.gt.fidelity, record=k) for k, t in keyed if t.gt is not None]
    if not out:
        raise DataError(path, f"none of the {len(rows)} rows has a human score in its 'answer' cell (expected "
                              "'Reality Assessment Score: x', 'Aesthetics Rating: y', 'Instruction Consistency "
                              "Rating: z')", field="answer")
    return out



def load_human_gt(path: str | Path, records: list[GORecord], *, image_cache: Path | None = None,
                  generator: str | None = None) -> tuple[dict[str, HumanGT], dict[str, str], dict[str, str], list[str]]:
    """Ground truth for ``records`` from a TSV / CSV / SQLite ratings file.

    Returns ``(gt by record index, TSV question cell by record index, extracted image path by
    record index, unmatched keys)``. TSV images are written under ``image_cache`` (only for
    records whose image file is missing) when it is given. Raises DataError for unreadable
    files or keys that match no record when none match at all.
    """
    path = Path(path)
    by_index = {r.index: r for r in records}
    by_image = {r.image: r for r in records}
    if not path.is_file():
        raise DataError(path, "human ratings file not found")
    if is_vlmevalkit_tsv(path):
        need_img = image_cache is not None and any(r.image_path is None for r in records)
        rows = read_vlmevalkit_tsv(path, keep_images=need_img)
        mapping = _tsv_to_records(rows, records, path)
        gt = {k: t.gt for k, t in mapping.items() if t.gt is not None}
        qs = {k: t.question for k, t in mapping.items() if t.question}
        imgs: dict[str, str] = {}
        if need_img:
            for k, t in mapping.items():
                rec = by_index[k]
                if rec.image_path is None and t.image_b64:
                    dst = Path(image_cache) / rec.image
                    if not dst.is_file():
                        dst.parent.mkdir(parents=True, exist_ok=True)
                        try:
                            data = base64.b64decode(t.image_b64)
                        except ValueError as exc:
                            raise DataError(path, f"row {t.row}: image is not base64 ({exc})", field="image") from None
                        tmp = dst.with_suffix(dst.suffix + ".tmp")
                        tmp.write_bytes(data)
                        tmp.replace(dst)
                    imgs[k] = str(dst)
        return gt, qs, imgs, []
    rows_ = read_rating_rows(path)
    gens = sorted({r.generator for r in rows_ if r.generator})
    if generator is not None:
        rows_ = [r for r in rows_ if r.generator == generator]
        if not rows_:
            raise DataError(path, f"no ratings of generator {generator!r} (generators: {gens})", field="generator")
    elif len(gens) > 1:
        raise DataError(path, f"ratings of several generators {gens}; choose one with --ratings-generator",
                        field="generator")
    unmatched = []
    keyed = []
    for r in rows_:
        rec = match_record(r.record or r.key, by_index, by_image)
        if rec is None:
            unmatched.append(r.key)
            continue
        keyed.append(RatingRow(rec.index, r.rater, r.answers, r.authenticity, r.aesthetics, r.fidelity, r.generator,
                               rec.index))
    if rows_ and not keyed:
        raise DataError(path, f"no key matches a record (e.g. {rows_[0].key!r}); use the record 'index' "
                              "(direct_light_images_1.1) or 'image' (direct_light_images/1.1.png)", field="index")
    return ground_truth(keyed), {}, {}, sorted(set(unmatched))


def attach_human_gt(path: Path, records: list[GORecord], *, image_cache: Path | None = None,
                    generator: str | None = None) -> tuple[list[GORecord], dict[str, Any]]:
    """``records`` with their ground truth, TSV question and (where their file is missing) TSV image from the
    ratings file ``path`` (:func:`load_human_gt`; TSV images under ``image_cache``, default
    ``GOBench_images/`` beside it), and what was found: ``human_ratings``, ``n_gt``, ``n_gt_unmatched_keys``,
    ``gt_unmatched_examples``, ``n_images_from_tsv``. Raises DataError for an unreadable file."""
    gt, qs, imgs, unmatched = load_human_gt(path, records, image_cache=image_cache or path.parent / "GOBench_images",
                                            generator=generator)
    # the TSV row each record was matched to: VLMEvalKit predictions name images by it (gobench/interop.py)
    ix = {k: t.index for k, t in _tsv_to_records(read_vlmevalkit_tsv(path), records, path).items()} \
        if is_vlmevalkit_tsv(path) else {}
    records = [replace(r, gt=gt.get(r.index), tsv_question=qs.get(r.index), image_path=r.image_path or imgs.get(r.index),
                       tsv_index=ix.get(r.index)) for r in records]
    return records, {"human_ratings": str(path), "n_gt": sum(r.gt is not None for r in records),
                     "n_gt_unmatched_keys": len(unmatched), "gt_unmatched_examples": unmatched[:5],
                     "n_images_from_tsv": len(imgs)}
