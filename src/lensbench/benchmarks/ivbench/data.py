"""IV-Bench data: the 13 tasks, the question-file loader and the missing-media check.

Release layout (IV-Bench README, Protocol; official repo ``dataset/test_data.jsonl``, HF ``m-a-p/IV-Bench``): one
jsonl line per video ``{video_id: [query, ...]}``; each query has ``data_id``, ``image_name``,
``question``, ``question_type`` (13 tasks), ``granularity``, ``answer``, ``answer_location``,
``distractors``. Videos ``videos/<video_id>.mp4`` (YouTube, fetched by ``lensbench ivbench
download``) and query images ``images/<image_name>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lensbench.benchmarks.fields import inside, want_int_or_str, want_obj, want_str, want_str_list
from lensbench.core.errors import DataError
from lensbench.core.jsonl import iter_jsonl

__all__ = [
    "PERCEPTION", "REASONING", "TASK_ABBREV", "TASKS", "TABLE2_COLUMNS", "Query", "load_queries",
    "find_question_file", "MediaCheck", "check_media",
]

#: The 13 ``question_type`` values in Table 2 order, with Table 2's column abbreviations.
PERCEPTION: dict[str, str] = {
    "Existence": "Exist.", "Reverse Existence": "RE", "NLI": "NLI", "Spatial relationship": "SR",
    "Keyframe extraction": "KE", "Constrained OCR": "CO", "Details Event": "DE",
}
REASONING: dict[str, str] = {
    "Counting": "Cnt.", "Attribute Change": "AC", "Temporal Reasoning": "TR", "Space-time computing": "STC",
    "Instruction manual": "IU", "Summary": "Sum.",
}
TASK_ABBREV: dict[str, str] = {**PERCEPTION, **REASONING}
TASKS = list(TASK_ABBREV)
#: Table 2 columns in the paper's order.
TABLE2_COLUMNS = ["Overall", *PERCEPTION.values(), "P-Avg", *REASONING.values(), "R-Avg"]

_FIELDS = ("data_id", "image_name", "question", "question_type", "answer", "distractors")


@dataclass(frozen=True)
class Query:
    """One IV-Bench query as published (one element of a jsonl line's list).

    Texts (``question``, ``answer``, ``distractors``) are kept byte for byte as released.
    ``uid`` = ``"<video_id>/<data_id>"``; ``line`` = 1-based jsonl line number; ``video`` / ``image``:
    the paths of its video and query image, set when the benchmark loads it (its folders), "" before.
    """

    video_id: str
    data_id: int | str
    image_name: str
    question: str
    question_type: str
    granularity: str
    answer: str
    answer_location: str
    distractors: tuple[str, ...]
    line: int
    video: str = field(default="", repr=False, compare=False)
    image: str = field(default="", repr=False, compare=False)

    @property
    def uid(self) -> str:
        """``"<video_id>/<data_id>"``, unique in the public set."""
        return f"{self.video_id}/{self.data_id}"

    @property
    def group(self) -> str:
        """``"Perception"`` or ``"Reasoning"`` (Table 2 column groups)."""
        return "Perception" if self.question_type in PERCEPTION else "Reasoning"


def _query(p: Path, ln: int, vid: str, j: int, q: Any) -> Query:
    where = f"{vid}[{j}]"
    want_obj(q, p, where)
    for k in _FIELDS:
        if k not in q:
            raise DataError(p, f"line {ln}: missing field", field=f"{where}.{k}")
    data_id = want_int_or_str(q["data_id"], p, f"{where}.data_id")
    image_name = want_str(q["image_name"], p, f"{where}.image_name", nonempty=True, expected="an image file name")
    question = want_str(q["question"], p, f"{where}.question", nonempty=True)
    qt = want_str(q["question_type"], p, f"{where}.question_type")
    granularity = want_str(q.get("granularity", ""), p, f"{where}.granularity")
    location = want_str(q.get("answer_location", ""), p, f"{where}.answer_location")
    if qt not in TASK_ABBREV:
        raise DataError(p, f"line {ln}: unknown question_type {qt!r} (known: {', '.join(TASKS)})",
                        field=f"{where}.question_type")
    ds = want_str_list(q["distractors"], p, f"{where}.distractors")
    answer = want_str(q["answer"], p, f"{where}.answer", nonempty=True, expected="a non-empty string")
    return Query(video_id=str(vid), data_id=data_id, image_name=image_name, question=question, question_type=qt,
                 granularity=granularity, answer=answer, answer_location=location, distractors=tuple(ds), line=ln)


def load_queries(path: str | Path) -> list[Query]:
    """All queries of an IV-Bench jsonl (``{video_id: [query, ...]}`` per line), in file order.

    Raises:
        DataError: naming the file, line and field for a missing file, invalid JSON, a missing
            field, an unknown ``question_type``, non-string options, an empty answer, or a
            duplicate ``video_id/data_id``.
    """
    p = Path(path)
    out: list[Query] = []
    seen: set[str] = set()
    for ln, obj in iter_jsonl(p, "question file"):
        if not isinstance(obj, dict):
            raise DataError(p, f"line {ln}: expected an object {{video_id: [query]}}")
        for vid, qs in obj.items():
            if not isinstance(qs, list):
                raise DataError(p, f"line {ln}: expected a list of queries", field=vid)
            if not vid.strip():
                raise DataError(p, f"line {ln}: empty video id", field=vid)
            for j, q in enumerate(qs):
                query = _query(p, ln, vid, j, q)
                if query.uid in seen:
                    raise DataError(p, f"line {ln}: duplicate query id {query.uid!r}", field=f"{vid}[{j}].data_id")
                seen.add(query.uid)
                out.append(query)
    return out


def find_question_file(data_dir: Path, questions: str | None = None) -> Path:
    """The question jsonl: ``questions`` (absolute, or relative to cwd / ``data_dir``), else
    ``test_data.jsonl`` or ``dataset/test_data.jsonl`` in ``data_dir``, else its only ``*.jsonl``.

    Raises DataError naming ``data_dir`` when none (or several candidates) are found.
    """
    d = Path(data_dir)
    if questions:
        q = Path(questions)
        return q if q.is_absolute() or q.exists() else d / q
    for c in (d / "test_data.jsonl", d / "dataset" / "test_data.jsonl"):
        if c.is_file():
            return c
    found = sorted(d.glob("*.jsonl")) or sorted(d.glob("dataset/*.jsonl"))
    if len(found) != 1:
        raise DataError(d, "no question file: expected test_data.jsonl or dataset/test_data.jsonl "
                           "(or exactly one *.jsonl, or --questions FILE)")
    return found[0]


@dataclass(frozen=True)
class MediaCheck:
    """Result of :func:`check_media`: the ``kept`` queries and what was missing.

    ``missing_video`` / ``missing_image``: queries whose video / image file is absent (a query
    can be in both); ``n_missing``: distinct queries lacking any media.
    """

    kept: list[Query]
    missing_video: list[Query]
    missing_image: list[Query]
    n_missing: int


def check_media(qfile: Path, queries: list[Query], videos: Path, images: Path, *, need_image: bool = True,
                skip_missing: bool = False) -> MediaCheck:
    """Queries whose video ``videos/<video_id>.mp4`` and (when ``need_image``) image exist.

    Raises:
        DataError: naming ``qfile`` and the field when a video id or image name resolves outside
            its folder (docs/protocol.md, general rules); naming ``qfile`` with the number of queries lacking
            media, how many videos / images are missing from which folder (first three named),
            unless ``skip_missing``; and when no query at all has its media.
    """
    for q in queries:
        where = f"{q.video_id}[data_id={q.data_id}]"
        inside(videos, f"{q.video_id}.mp4", qfile, f"{where} (video id)")
        if need_image:
            inside(images, q.image_name, qfile, f"{where}.image_name")
    miss_v = [q for q in queries if not (videos / f"{q.video_id}.mp4").is_file()]
    miss_i = [q for q in queries if need_image and not (images / q.image_name).is_file()]
    missing = {q.uid for q in miss_v} | {q.uid for q in miss_i}
    if missing and not skip_missing:
        vids = sorted({q.video_id for q in miss_v})
        raise DataError(qfile, f"{len(missing)} of {len(queries)} queries lack media: {len(miss_v)} queries on "
                               f"{len(vids)} videos missing from {videos} (e.g. {', '.join(vids[:3]) or '-'}), "
                               f"{len(miss_i)} images missing from {images} (e.g. "
                               f"{', '.join(q.image_name for q in miss_i[:3]) or '-'}); fetch them (lensbench "
                               "ivbench download) or pass --skip-missing")
    kept = [q for q in queries if q.uid not in missing]
    if not kept:
        raise DataError(qfile, f"none of the {len(queries)} queries has its video in {videos} and its image in "
                               f"{images}")
    return MediaCheck(kept=kept, missing_video=miss_v, missing_image=miss_i, n_missing=len(missing))
