"""IV-Bench (Ma et al., 2025): image-grounded video perception and reasoning, 10-way MCQ.

Protocol (SPEC §3; paper Sec. 4.1, 4.3, Appendix C, Table 2; official code
github.com/multimodal-art-projection/IV-Bench ``inference.py``):

* Data: a jsonl with one line per video ``{video_id: [query]}``; each query has ``data_id``,
  ``image_name``, ``question``, ``question_type`` (13 tasks), ``granularity``, ``answer``,
  ``answer_location``, ``distractors``. ``--data-dir`` holds the jsonl (``test_data.jsonl``,
  ``dataset/test_data.jsonl`` or a single ``*.jsonl``), ``videos/<video_id>.mp4`` and
  ``images/<image_name>``. Missing videos/images: a :class:`DataError` with the counts, or with
  ``--skip-missing`` the rest is run and the report says how many were skipped.
* Options: distractors with empty text dropped (as the official code does), distractors equal
  to the answer or to an earlier distractor dropped (the official code keeps them; 21 public
  items repeat the answer: counted in the report), then ``distractors + [answer]`` shuffled with
  a per-item seed (SHA-256 of run seed, video id, data id) and lettered ``a``, ``b``, ... as the
  official ``get_option_letter`` does.
* Text (official ``format_question`` + ``build_prompt_text``): prefix sentence of Appendix C
  (video-first or image-first, with frame count and the container duration in seconds) directly
  followed by ``question + "？"``, a newline, the options ``"a. text"`` one per line, a newline and
  "Answer with the option's letter from the given choices directly." (``--text-style clean``
  puts a newline after the prefix and drops the extra full-width question mark).
* Images: ``video-first`` (default) = the N frames in time order, the query image, the text;
  ``image-first`` = image, frames, text; ``text-only`` = frames, text (no query image; the
  official script keeps the video-first prefix then, and so do we).
* Frames: N (default 32) by the official segment-centre rule (``--frame-rule centers``), or
  ``linspace``, or ``fps:F``; ``--resolution R`` resizes to short side R px (aspect kept, never
  upscaled; default native). See :mod:`lensbench.ivbench.frames`.
* Parse: :func:`parse_choice` (letter in several forms or echoed option text); nothing found =
  ``unparseable``, scored wrong and counted. Never a random guess (the official ``check_answer``
  guesses at random; SPEC general rules forbid it).
* Metric (Table 2): accuracy per task, P-Avg / R-Avg / Overall as sample-weighted means over the
  perception / reasoning / all items. Transport failures and undecodable videos are not scored
  (``error``, counted; the run is incomplete).
* Ablations (Sec. 4.3.2, Fig. 3(b), 4): ``--frames 8,16,32,64``, ``--resolution 72,108,144,240``
  or ``--pairs fig4b`` run every configuration in one run; each video is decoded once for all
  of them; the report adds a sweep table and ``ivbench_sweep.png`` in the run folder.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import typer
from pydantic import BaseModel, Field, field_validator, model_validator

from lensbench.core.errors import ConfigError, DataError
from lensbench.scoring.text import strip_reasoning
from lensbench.report.tables import render_table
from lensbench.core.types import ImagePart, Message, Request
from lensbench.benchmarks.base import Benchmark, RunContext, RunResult
from lensbench.core.resources import read_text

__all__ = [
    "IVBench", "Query", "TASKS", "PERCEPTION", "REASONING", "TASK_ABBREV", "load_queries", "build_options",
    "build_text", "parse_choice", "parse_int_list", "sweep_configs", "FIG4B_PAIRS", "option_letter",
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
TABLE2_COLUMNS = ["Overall", *PERCEPTION.values(), "P-Avg", *REASONING.values(), "R-Avg"]

#: Fig. 4(b): (frames, short side) pairs of roughly equal visual-token count.
FIG4B_PAIRS: list[tuple[int, int]] = [(8, 720), (16, 480), (32, 360), (64, 240), (128, 144), (256, 108), (512, 72)]

#: Greedy decoding with max_new_tokens=1024, as in the official model wrappers (``--max-tokens`` overrides).
OFFICIAL_MAX_TOKENS = 1024

_FIELDS = ("data_id", "image_name", "question", "question_type", "answer", "distractors")


@dataclass(frozen=True)
class Query:
    """One IV-Bench query as published (one element of a jsonl line's list).

    ``uid`` = ``"<video_id>/<data_id>"``; ``line`` = 1-based jsonl line number.
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

    @property
    def uid(self) -> str:
        """``"<video_id>/<data_id>"``, unique in the public set."""
        return f"{self.video_id}/{self.data_id}"

    @property
    def group(self) -> str:
        """``"Perception"`` or ``"Reasoning"`` (Table 2 column groups)."""
        return "Perception" if self.question_type in PERCEPTION else "Reasoning"


def load_queries(path: str | Path) -> list[Query]:
    """All queries of an IV-Bench jsonl (``{video_id: [query, ...]}`` per line), in file order.

    Raises:
        DataError: naming the file, line and field for invalid JSON, a missing field, an
            unknown ``question_type``, non-string options, or a duplicate ``video_id/data_id``.
    """
    p = Path(path)
    out: list[Query] = []
    seen: set[str] = set()
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataError(p, "question file not found") from None
    for ln, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(p, f"line {ln}: not valid JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise DataError(p, f"line {ln}: expected an object {{video_id: [query]}}")
        for vid, qs in obj.items():
            if not isinstance(qs, list):
                raise DataError(p, f"line {ln}: expected a list of queries", field=vid)
            for j, q in enumerate(qs):
                where = f"{vid}[{j}]"
                if not isinstance(q, dict):
                    raise DataError(p, f"line {ln}: query is not an object", field=where)
                for k in _FIELDS:
                    if k not in q:
                        raise DataError(p, f"line {ln}: missing field", field=f"{where}.{k}")
                qt = q["question_type"]
                if qt not in TASK_ABBREV:
                    raise DataError(p, f"line {ln}: unknown question_type {qt!r} (known: {', '.join(TASKS)})",
                                    field=f"{where}.question_type")
                ds = q["distractors"]
                if not isinstance(ds, list) or not all(isinstance(d, str) for d in ds):
                    raise DataError(p, f"line {ln}: distractors must be a list of strings", field=f"{where}.distractors")
                if not isinstance(q["answer"], str) or not q["answer"].strip():
                    raise DataError(p, f"line {ln}: answer must be a non-empty string", field=f"{where}.answer")
                query = Query(video_id=str(vid), data_id=q["data_id"], image_name=str(q["image_name"]),
                              question=str(q["question"]), question_type=qt, granularity=str(q.get("granularity", "")),
                              answer=q["answer"], answer_location=str(q.get("answer_location", "")),
                              distractors=tuple(ds), line=ln)
                if query.uid in seen:
                    raise DataError(p, f"line {ln}: duplicate query id {query.uid!r}", field=f"{where}.data_id")
                seen.add(query.uid)
                out.append(query)
    return out


def option_letter(i: int) -> str:
    """Letter of the ``i``-th option (0-based) as the official code writes it: ``a``, ``b``, ..."""
    return chr(ord("a") + i)


@dataclass(frozen=True)
class Choices:
    """Shuffled, lettered options of one query.

    ``options``: ((letter, text), ...) in letter order; ``correct``: the answer's letter;
    ``dup_answer``: distractors dropped for repeating the answer; ``dup_other``: distractors
    dropped for repeating an earlier distractor; ``empty``: empty distractors dropped.
    """

    options: tuple[tuple[str, str], ...]
    correct: str
    dup_answer: int
    dup_other: int
    empty: int

    @property
    def as_dict(self) -> dict[str, str]:
        """``{letter: text}``."""
        return dict(self.options)


def item_seed(seed: int, q: Query) -> int:
    """Per-item shuffle seed: first 8 bytes of SHA-256(``"{seed}|{video_id}|{data_id}"``) as int."""
    return int.from_bytes(hashlib.sha256(f"{seed}|{q.video_id}|{q.data_id}".encode()).digest()[:8], "big")


def build_options(q: Query, seed: int) -> Choices:
    """Options of ``q``: de-duplicated ``distractors + [answer]`` shuffled by :func:`item_seed`.

    Texts are compared after ``str.strip()``; empty distractors are dropped (official code),
    distractors equal to the answer or an earlier distractor are dropped (SPEC §3). The list is
    shuffled with ``random.Random(item_seed(seed, q)).shuffle`` and lettered a, b, ...
    """
    answer = q.answer.strip()
    kept: list[str] = []
    dup_answer = dup_other = empty = 0
    for d in q.distractors:
        t = d.strip()
        if not t:
            empty += 1
        elif t == answer:
            dup_answer += 1
        elif t in kept:
            dup_other += 1
        else:
            kept.append(t)
    opts = kept + [answer]
    random.Random(item_seed(seed, q)).shuffle(opts)
    lettered = tuple((option_letter(i), t) for i, t in enumerate(opts))
    return Choices(lettered, option_letter(opts.index(answer)), dup_answer, dup_other, empty)


def _template(name: str) -> str:
    raw = read_text(__package__, "prompts", f"{name}.txt")
    return raw.split("-----\n", 1)[1].rstrip("\n")


def format_duration(seconds: float) -> str:
    """Duration as the official prompt shows it: Python ``str`` of ffprobe's float (6 decimals max)."""
    return str(float(round(seconds, 6)))


def build_text(q: Query, choices: Choices, *, pattern: str, frame_num: int, duration: float,
               style: str = "official") -> str:
    """The text part of a request (Appendix C prefix + question + options + instruction).

    ``pattern``: ``video-first`` | ``image-first`` | ``text-only`` (text-only uses the
    video-first prefix, as the official script does). ``style``: ``official`` (prefix directly
    followed by ``question + "？"``) or ``clean`` (newline after the prefix, question as is).
    """
    prefix = _template("image_first" if pattern == "image-first" else "video_first")
    prefix = prefix.format(frame_num=int(frame_num), duration=format_duration(duration))
    question = q.question + "？" if style == "official" else q.question.strip()
    body = _template("mcq").format(question=question,
                                   options="\n".join(f"{k}. {v}" for k, v in choices.options))
    return prefix + ("" if style == "official" else "\n") + body


# --------------------------------------------------------------------------- parsing
_NORM_RE = re.compile(r"[^\w]+", re.UNICODE)


def _norm(s: str) -> str:
    return " ".join(_NORM_RE.sub(" ", s.lower()).split())


def _letter_ok(m: re.Match, s: str, letters: set[str]) -> str | None:
    ch = m.group(1)
    if ch.lower() not in letters:
        return None
    if ch.islower():
        # a lower-case letter must stand alone (punctuation or end after it): "a dog" is no answer
        rest = s[m.end(1):]
        if rest and not re.match(r"\s*(?:$|[.):,;\]}>*\n])", rest):
            return None
    return ch.lower()


_CUE = re.compile(r"\b(?:answer|option|choice)\b>?\s*(?:is|would be|:|=|-)?\s*[:\-]?\s*[\(\[\*]*([A-Za-z])(?![A-Za-z0-9])",
                  re.IGNORECASE)
_LEAD = re.compile(r"^[\s\*\(\[]*([A-Za-z])\s*[\.\):\]](?:\s|$)")
_PAREN = re.compile(r"\(([A-Za-z])\)")


def parse_choice(text: str | None, options: dict[str, str]) -> str | None:
    """The chosen option letter (lower case) of a reply, or None (unparseable).

    After :func:`lensbench.parsing.strip_reasoning`, first rule that gives a valid letter wins:

    1. the reply is just a letter, optionally wrapped: ``b``, ``(b)``, ``B.``, ``**B**``;
    2. a cue: ``Answer: B``, ``the answer is (b)``, ``<answer>: b``, ``Option C``;
    3. a leading ``b.`` / ``(b)`` / ``B)`` / ``b:`` followed by text;
    4. exactly one distinct parenthesised letter ``(b)`` anywhere;
    5. option text echoed: the normalised reply equals one option's text, or contains exactly one
       option text of >= 4 characters as whole words (options inside a longer matched option
       are ignored).

    Lower-case letters count only when standing alone (``a dog`` is no answer). Letters must be
    among ``options``' keys. No guessing.
    """
    s = strip_reasoning(text)
    if not s:
        return None
    letters = set(options)
    m = re.fullmatch(r"[\s\*\(\[\"'<]*([A-Za-z])[\s\*\)\]\"'>.:,;!]*", s)
    if m and m.group(1).lower() in letters:
        return m.group(1).lower()
    for m in _CUE.finditer(s):
        got = _letter_ok(m, s, letters)
        if got:
            return got
    m = _LEAD.match(s)
    if m and m.group(1).lower() in letters:
        return m.group(1).lower()
    par = {c.lower() for c in _PAREN.findall(s) if c.lower() in letters}
    if len(par) == 1:
        return par.pop()
    ns = _norm(s)
    normed = {k: _norm(v) for k, v in options.items()}
    exact = [k for k, v in normed.items() if v and v == ns]
    if len(exact) == 1:
        return exact[0]
    padded = f" {ns} "
    hits = [k for k, v in normed.items() if len(v) >= 4 and f" {v} " in padded]
    hits = [k for k in hits if not any(k2 != k and normed[k] in normed[k2] for k2 in hits)]
    return hits[0] if len(hits) == 1 else None


# --------------------------------------------------------------------------- options
def parse_int_list(value: str | int | None, what: str, allow_native: bool = False) -> list[int | None]:
    """``"8,16,32"`` -> ``[8, 16, 32]``; ``None``/``""``/``"native"`` -> ``[None]`` when allowed.

    Raises ConfigError naming the option for a bad element or a value < 1.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        if allow_native:
            return [None]
        raise ConfigError(f"--{what} needs a value")
    if isinstance(value, int):
        items = [str(value)]
    else:
        items = [v.strip() for v in str(value).split(",") if v.strip()]
    out: list[int | None] = []
    for v in items:
        if allow_native and v.lower() in ("native", "none", "0"):
            out.append(None)
            continue
        try:
            n = int(v)
        except ValueError:
            raise ConfigError(f"--{what}: {v!r} is not an integer (give e.g. 32 or 8,16,32,64)") from None
        if n < 1:
            raise ConfigError(f"--{what}: {n} must be >= 1")
        out.append(n)
    return list(dict.fromkeys(out))


def sweep_configs(frames: str | int, resolution: str | int | None, pairs: str | None) -> list[tuple[int, int | None]]:
    """The (frames, short side or None) configurations of a run, in order.

    ``pairs`` (``"fig4b"`` or ``"8x720,16x480"``) gives them explicitly; otherwise the product of
    the ``frames`` and ``resolution`` lists. Raises ConfigError for bad syntax.
    """
    if pairs:
        if pairs.strip().lower() == "fig4b":
            return list(FIG4B_PAIRS)
        out = []
        for tok in pairs.split(","):
            m = re.fullmatch(r"\s*(\d+)\s*[x@]\s*(\d+|native)\s*p?\s*", tok, re.IGNORECASE)
            if not m:
                raise ConfigError(f"--pairs: {tok!r} is not FRAMESxRESOLUTION (e.g. 32x360) or 'fig4b'")
            out.append((int(m.group(1)), None if m.group(2).lower() == "native" else int(m.group(2))))
        return list(dict.fromkeys(out))
    fr = parse_int_list(frames, "frames")
    rs = parse_int_list(resolution, "resolution", allow_native=True)
    return [(n, r) for n in fr for r in rs]


def _config_label(n: int, r: int | None) -> str:
    return f"{n}f@{r}p" if r else f"{n}f@native"


# --------------------------------------------------------------------------- benchmark
class IVBench(Benchmark):
    """IV-Bench: 1,686 image-grounded video MCQs on 747 videos; P-Avg / R-Avg / Overall (Table 2).

    See the module docstring for the protocol.
    """

    name = "iv-bench"
    title = "IV-Bench"

    class Options(BaseModel):
        """IV-Bench options."""

        frames: str = Field(default="32", description="frames per video (paper: 32); a comma list (8,16,32,64) runs a "
                                                       "sweep sharing decoded frames")
        frame_rule: str = Field(default="centers", description="frame sampling: centers (official: centre of N equal "
                                                               "segments), linspace (incl. both ends) or fps:F")
        resolution: Optional[str] = Field(default=None, description="target short side of frames in px (never "
                                          "upscaled; default native); a comma list (72,108,144,240) sweeps")
        pairs: Optional[str] = Field(default=None, description="explicit FRAMESxRES sweep, e.g. 8x720,32x360, or "
                                     "'fig4b' for the equal-token pairs of Fig. 4(b); overrides --frames/--resolution")
        pattern: str = Field(default="video-first", description="video-first (frames, image, text), image-first or "
                                                                "text-only (no query image)")
        text_style: str = Field(default="official", description="official (prefix glued to question + '？', as the "
                                                                "official code) or clean")
        skip_missing: bool = Field(default=False, description="run the items whose video and image exist; report "
                                   "how many were skipped (default: stop with an error listing them)")
        questions: Optional[str] = Field(default=None, description="question jsonl (default: test_data.jsonl or "
                                         "dataset/test_data.jsonl in --data-dir)")
        videos_dir: Optional[str] = Field(default=None, description="folder of <video_id>.mp4 (default DATA/videos)")
        images_dir: Optional[str] = Field(default=None, description="folder of query images (default DATA/images)")
        frame_cache: Optional[str] = Field(default=None, description="frame cache folder (default RUN/media/"
                                           "ivbench_frames); share it between runs to decode once")
        decode_workers: int = Field(default=4, ge=1, description="videos decoded in parallel")

        @field_validator("frames", "resolution", mode="before")
        @classmethod
        def _intish(cls, v: Any) -> Any:
            return str(v) if isinstance(v, int) and not isinstance(v, bool) else v

        @model_validator(mode="after")
        def _configs(self) -> "IVBench.Options":
            try:
                sweep_configs(self.frames, self.resolution, self.pairs)
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
            return self

        @field_validator("frame_rule")
        @classmethod
        def _rule(cls, v: str) -> str:
            from lensbench.media.video import parse_rule

            parse_rule(v)
            return v.strip()

        @field_validator("pattern")
        @classmethod
        def _pattern(cls, v: str) -> str:
            if v not in ("video-first", "image-first", "text-only"):
                raise ValueError(f"pattern must be video-first, image-first or text-only, got {v!r}")
            return v

        @field_validator("text_style")
        @classmethod
        def _style(cls, v: str) -> str:
            if v not in ("official", "clean"):
                raise ValueError(f"text_style must be official or clean, got {v!r}")
            return v

    def __init__(self, options: BaseModel | None = None):
        super().__init__(options)
        self.configs = sweep_configs(self.options.frames, self.options.resolution, self.options.pairs)
        self.load_stats: dict[str, Any] = {}

    # ----------------------------------------------------------------- load
    def _paths(self, data_dir: Path) -> tuple[Path, Path, Path]:
        o = self.options
        d = Path(data_dir)
        if o.questions:
            q = Path(o.questions)
            q = q if q.is_absolute() or q.exists() else d / q
        else:
            cands = [d / "test_data.jsonl", d / "dataset" / "test_data.jsonl"]
            q = next((c for c in cands if c.is_file()), None)
            if q is None:
                found = sorted(d.glob("*.jsonl")) or sorted(d.glob("dataset/*.jsonl"))
                if len(found) != 1:
                    raise DataError(d, "no question file: expected test_data.jsonl or dataset/test_data.jsonl "
                                       "(or exactly one *.jsonl, or --questions FILE)")
                q = found[0]
        videos = Path(o.videos_dir) if o.videos_dir else d / "videos"
        images = Path(o.images_dir) if o.images_dir else d / "images"
        return q, videos, images

    def load(self, data_dir: Path) -> list[Query]:
        """Queries whose video (``videos/<video_id>.mp4``) and image (``images/<image_name>``) exist.

        Raises DataError naming the question file for bad data, and naming the folders with the
        number of queries whose video / image is missing (first few listed) unless
        ``--skip-missing`` (then they are left out and counted in :attr:`load_stats`).
        """
        qfile, videos, images = self._paths(Path(data_dir))
        queries = load_queries(qfile)
        need_image = self.options.pattern != "text-only"
        miss_v = [q for q in queries if not (videos / f"{q.video_id}.mp4").is_file()]
        miss_i = [q for q in queries if need_image and not (images / q.image_name).is_file()]
        missing = {q.uid for q in miss_v} | {q.uid for q in miss_i}
        if missing and not self.options.skip_missing:
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
        dup_answer = sum(any(d.strip() == q.answer.strip() for d in q.distractors) for q in kept)
        self.load_stats = {
            "question_file": str(qfile), "n_queries_in_file": len(queries), "n_skipped_missing": len(missing),
            "n_skipped_missing_video": len(miss_v), "n_skipped_missing_image": len(miss_i),
            "n_items_duplicate_answer": dup_answer,
        }
        self._videos, self._images = videos, images
        return kept

    # ------------------------------------------------------------- evaluate
    def _frame_cache(self, ctx: RunContext):
        from lensbench.media.video import FrameCache

        root = Path(self.options.frame_cache) if self.options.frame_cache else ctx.media_dir / "ivbench_frames"
        return FrameCache(root)

    def extract_frames(self, queries: Sequence[Query], cache, videos: Path) -> dict[str, Any]:
        """Frames of every video for every config: ``{video_id: {config: FrameSet} | VideoError}``.

        Each video is decoded once for all configs (union of indices); decoding runs on
        ``decode_workers`` threads.
        """
        from lensbench.media.video import FrameSpec, VideoError

        specs = [FrameSpec(self.options.frame_rule, n, r) for n, r in self.configs]
        vids = list(dict.fromkeys(q.video_id for q in queries))

        def one(vid: str):
            try:
                got = cache.get_many(videos / f"{vid}.mp4", specs)
                return vid, {(s.num, s.resolution): got[s] for s in specs}
            except VideoError as exc:
                return vid, exc
            except Exception as exc:  # noqa: BLE001 - any decoder failure is a per-video error
                return vid, VideoError(videos / f"{vid}.mp4", f"{type(exc).__name__}: {exc}")

        with ThreadPoolExecutor(max_workers=self.options.decode_workers) as pool:
            return dict(pool.map(one, vids))

    def requests(self, queries: Sequence[Query], frames: dict[str, Any], ctx: RunContext | None = None,
                 seed: int = 0) -> tuple[list[Request], dict[str, dict[str, Any]]]:
        """Requests (one per query and config) and per-request facts (options, answer, frames).

        Queries whose video failed to decode get no request; their facts carry ``error``.
        """
        o = self.options
        params = ctx.params(temperature=0.0, max_tokens=OFFICIAL_MAX_TOKENS) if ctx is not None else None
        multi = len(self.configs) > 1
        reqs: list[Request] = []
        facts: dict[str, dict[str, Any]] = {}
        img_parts: dict[str, ImagePart] = {}
        for q in queries:
            ch = build_options(q, seed)
            base = {"video_id": q.video_id, "data_id": q.data_id, "task": q.question_type,
                    "abbrev": TASK_ABBREV[q.question_type], "group": q.group, "granularity": q.granularity,
                    "question": q.question, "answer": q.answer, "options": ch.as_dict, "correct": ch.correct,
                    "n_options": len(ch.options), "dup_answer_removed": ch.dup_answer,
                    "dup_distractor_removed": ch.dup_other, "empty_distractor_removed": ch.empty}
            fr = frames.get(q.video_id)
            for n, r in self.configs:
                rid = q.uid + (f"@{_config_label(n, r)}" if multi else "")
                f = dict(base, id=rid, frames=n, resolution=r)
                facts[rid] = f
                if isinstance(fr, Exception) or fr is None:
                    f["error"] = f"video: {fr}" if fr is not None else "video: not decoded"
                    continue
                fs = fr[(n, r)]
                f.update(frame_indices=fs.indices, duration=fs.duration, frame_size=list(fs.frame_size))
                text = build_text(q, ch, pattern=o.pattern, frame_num=len(fs.paths), duration=fs.duration,
                                  style=o.text_style)
                fparts = [ImagePart.of(p) for p in fs.paths]
                if o.pattern == "text-only":
                    parts = [*fparts, text]
                else:
                    ip = str(self._images / q.image_name)
                    if ip not in img_parts:
                        img_parts[ip] = ImagePart.of(ip)
                    parts = [img_parts[ip], *fparts, text] if o.pattern == "image-first" else [*fparts, img_parts[ip], text]
                kw = {"params": params} if params is not None else {}
                reqs.append(Request(id=rid, messages=(Message.user(*parts),),
                                    meta={"replay_match": ["ivbench", q.video_id, q.data_id, n, r],
                                          "answer_space": [k for k, _ in ch.options]}, **kw))
        return reqs, facts

    async def evaluate(self, samples: list[Query], ctx: RunContext) -> list[dict[str, Any]]:
        """Sample frames (cached), send one request per query and config, parse, score.

        Records: one per (query, config) with the options, correct letter, parsed letter and
        status; undecodable videos give ``error`` records (the run goes on).
        """
        if not hasattr(self, "_videos"):
            self.load(ctx.data_dir)
        cache = self._frame_cache(ctx)
        frames = await asyncio.to_thread(self.extract_frames, samples, cache, self._videos)
        self.load_stats["n_videos_decoded"] = cache.decodes
        self.load_stats["n_video_errors"] = sum(isinstance(v, Exception) for v in frames.values())
        reqs, facts = self.requests(samples, frames, ctx, seed=ctx.seed)
        got = await ctx.generate(reqs, label="iv-bench")
        records = []
        for rid, f in facts.items():
            rec = dict(f)
            if "error" in f:
                rec["status"] = "error"
                rec["error_kind"] = "video"
            else:
                resp = got.get(rid)
                if resp is None or not resp.ok:
                    rec.update(status="error", error_kind="transport", error=resp.error if resp else "no response")
                else:
                    parsed = parse_choice(resp.text, f["options"])
                    rec.update(reply=resp.text, reasoning=resp.reasoning, parsed=parsed,
                               status="unparseable" if parsed is None else
                               ("correct" if parsed == f["correct"] else "wrong"))
            records.append(rec)
        if len(self.configs) > 1:
            try:
                plot_sweep(self.aggregate(records)[0].get("sweep", []), ctx.run_dir / "ivbench_sweep.png",
                           title=f"IV-Bench sweep: {ctx.model_name}")
            except Exception as exc:  # noqa: BLE001 - a plot must never lose a run
                self.load_stats["plot_error"] = str(exc)
        return records

    # ------------------------------------------------------------ aggregate
    @staticmethod
    def _accuracy(records: list[dict[str, Any]]) -> tuple[dict[str, float | None], dict[str, float | None], dict[str, int]]:
        scored = [r for r in records if r["status"] != "error"]
        acc: dict[str, float | None] = {}
        chance: dict[str, float | None] = {}
        n: dict[str, int] = {}

        def put(col, rs):
            n[col] = len(rs)
            acc[col] = 100.0 * sum(r["status"] == "correct" for r in rs) / len(rs) if rs else None
            chance[col] = 100.0 * sum(1.0 / r["n_options"] for r in rs) / len(rs) if rs else None

        put("Overall", scored)
        for task, ab in PERCEPTION.items():
            put(ab, [r for r in scored if r["task"] == task])
        put("P-Avg", [r for r in scored if r["task"] in PERCEPTION])
        for task, ab in REASONING.items():
            put(ab, [r for r in scored if r["task"] == task])
        put("R-Avg", [r for r in scored if r["task"] in REASONING])
        return acc, chance, n

    def aggregate(self, records: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Accuracy (%) in Table 2 columns for the first config, a ``sweep`` list for all; counts.

        ``metrics = {"accuracy": {col: %}, "chance": {col: %}, "config": {...}, "sweep": [...]}``;
        columns: Overall, the 7 perception abbreviations, P-Avg, the 6 reasoning ones, R-Avg (all
        sample-weighted). ``counts``: ``n`` scored, ``n_unparseable``, ``n_error`` (transport +
        video), ``n_video_error``, per-task ``n`` and load statistics (skipped, duplicates).
        """
        by_cfg: dict[tuple, list[dict]] = defaultdict(list)
        for r in records:
            by_cfg[(r["frames"], r["resolution"])].append(r)
        order = [c for c in self.configs if c in by_cfg] + [c for c in by_cfg if c not in self.configs]
        sweep = []
        for c in order:
            rs = by_cfg[c]
            acc, chance, n = self._accuracy(rs)
            sweep.append({"frames": c[0], "resolution": c[1], "label": _config_label(*c), "accuracy": acc,
                          "n": n["Overall"], "n_unparseable": sum(r["status"] == "unparseable" for r in rs),
                          "n_error": sum(r["status"] == "error" for r in rs)})
        first = by_cfg[order[0]] if order else []
        acc, chance, n = self._accuracy(first)
        metrics: dict[str, Any] = {"accuracy": acc, "chance": chance,
                                   "config": {"frames": order[0][0] if order else None,
                                              "resolution": order[0][1] if order else None,
                                              "frame_rule": self.options.frame_rule, "pattern": self.options.pattern}}
        if len(order) > 1:
            metrics["sweep"] = sweep
        items = {(r["video_id"], r["data_id"]): r for r in records}
        counts: dict[str, Any] = {
            "n": sum(r["status"] != "error" for r in records),
            "n_records": len(records),
            "n_correct": sum(r["status"] == "correct" for r in records),
            "n_unparseable": sum(r["status"] == "unparseable" for r in records),
            "n_error": sum(r["status"] == "error" for r in records),
            "n_video_error": sum(r["status"] == "error" and r.get("error_kind") == "video" for r in records),
            "n_transport_error": sum(r["status"] == "error" and r.get("error_kind") == "transport" for r in records),
            "n_items": len(items),
            "n_configs": len(order),
            "n_duplicate_answers_removed": sum(r["dup_answer_removed"] for r in items.values()),
            "n_items_duplicate_answer": sum(r["dup_answer_removed"] > 0 for r in items.values()),
            "n_duplicate_distractors_removed": sum(r["dup_distractor_removed"] for r in items.values()),
            "n_empty_distractors_removed": sum(r["empty_distractor_removed"] for r in items.values()),
            "per_task": {ab: n[ab] for ab in TABLE2_COLUMNS if ab not in ("Overall", "P-Avg", "R-Avg")},
        }
        for k, v in self.load_stats.items():
            counts.setdefault(k, v)
        return metrics, counts

    # --------------------------------------------------------------- render
    @staticmethod
    def paper_rows() -> list[dict[str, Any]]:
        """Table 2 of the paper (``lensbench/data/ivbench_paper_table2.json``): 27 models."""
        text = read_text(__package__, "paper", "table2.json")
        return json.loads(text)["rows"]

    def tables(self, results, fmt: str = "md", with_paper: bool = False) -> str:
        """See :meth:`Benchmark.tables` (transition alias of :meth:`render`)."""
        return self.render(results, fmt, with_paper)

    def render(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Table 2 layout (one row per run and config), counts, and the sweep table, as md or csv."""
        cols = ["Model", *TABLE2_COLUMNS]
        rows: list[list[Any]] = []
        if results and results[0].metrics.get("chance"):
            ch = results[0].metrics["chance"]
            rows.append(["Random guess (expected)", *[ch.get(c) for c in TABLE2_COLUMNS]])
        if with_paper:
            rows += [[f"{p['model']} (paper)", *[p.get(c) for c in TABLE2_COLUMNS]] for p in self.paper_rows()]
        for r in results:
            tag = "" if r.complete else f" [incomplete: {r.counts.get('n_error', 0)} errors]"
            sweep = r.metrics.get("sweep")
            if sweep:
                for s in sweep:
                    stag = f" [incomplete: {s['n_error']} errors]" if s.get("n_error") else ""
                    rows.append([f"{r.model} ({s['label']}){stag}", *[s["accuracy"].get(c) for c in TABLE2_COLUMNS]])
            else:
                cfg = r.metrics.get("config", {})
                label = _config_label(cfg.get("frames") or 0, cfg.get("resolution")) if cfg.get("frames") else ""
                rows.append([f"{r.model}" + (f" ({label})" if label else "") + tag,
                             *[r.metrics["accuracy"].get(c) for c in TABLE2_COLUMNS]])
        parts = [render_table(cols, rows, fmt, title="IV-Bench accuracy (Table 2 layout; %; P-Avg, R-Avg, Overall "
                                                     "sample-weighted)")]
        parts.append(render_table(
            ["Model", "scored", "unparseable (wrong)", "errors (not scored)", "video errors", "skipped (missing media)",
             "items w/ answer among distractors", "duplicate distractors dropped", "empty distractors dropped"],
            [[r.model, r.counts.get("n"), r.counts.get("n_unparseable"), r.counts.get("n_error"),
              r.counts.get("n_video_error"), r.counts.get("n_skipped_missing"), r.counts.get("n_items_duplicate_answer"),
              r.counts.get("n_duplicate_distractors_removed"), r.counts.get("n_empty_distractors_removed")]
             for r in results], fmt, title="Counts"))
        if any(r.metrics.get("sweep") for r in results):
            srows = []
            for r in results:
                for s in r.metrics.get("sweep", []):
                    a = s["accuracy"]
                    srows.append([r.model, s["frames"], s["resolution"] or "native", a.get("Overall"), a.get("P-Avg"),
                                  a.get("R-Avg"), s["n"], s["n_unparseable"], s["n_error"]])
            parts.append(render_table(["Model", "frames", "short side (px)", "Overall", "P-Avg", "R-Avg", "scored",
                                       "unparseable", "errors"], srows, fmt,
                                      title="Frame / resolution sweep (Sec. 4.3.2, Fig. 3(b), 4)"))
            for r in results:
                png = Path(r.run_dir) / "ivbench_sweep.png" if r.run_dir else None
                if png is not None and png.is_file() and fmt == "md":
                    parts.append(f"Sweep plot: {png}\n")
        for r in results:
            if r.counts.get("n_skipped_missing"):
                parts.append(f"Run {r.run_dir or r.model}: {r.counts['n_skipped_missing']} of "
                             f"{r.counts.get('n_queries_in_file')} queries were skipped for missing video/image "
                             "(--skip-missing); scores cover the rest only.\n")
            if not r.complete:
                parts.append(f"Run {r.run_dir or r.model} is incomplete: {r.counts.get('n_error')} record(s) not scored "
                             f"({r.counts.get('n_video_error', 0)} undecodable video, "
                             f"{r.counts.get('n_transport_error', 0)} transport); re-run with the same --out to retry.\n")
        return "\n".join(parts)


def plot_sweep(sweep: list[dict[str, Any]], path: Path, title: str = "IV-Bench sweep") -> Path | None:
    """Line plot of Overall / P-Avg / R-Avg accuracy against the sweep configs; PNG at ``path``.

    x axis: frames when only frames vary, short side when only resolution varies, else the
    config labels in order. Returns ``path`` (None for fewer than 2 configs).
    """
    if len(sweep) < 2:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frames = {s["frames"] for s in sweep}
    res = {s["resolution"] for s in sweep}
    if len(res) == 1:
        xs, xlabel, log = [s["frames"] for s in sweep], "frames", True
    elif len(frames) == 1 and None not in res:
        xs, xlabel, log = [s["resolution"] for s in sweep], "short side (px)", False
    else:
        xs, xlabel, log = list(range(len(sweep))), "frames @ short side", False
    fig, ax = plt.subplots(figsize=(6, 4), dpi=120)
    for col in ("Overall", "P-Avg", "R-Avg"):
        ys = [s["accuracy"].get(col) for s in sweep]
        ax.plot(xs, [float("nan") if y is None else y for y in ys], marker="o", label=col)
    if log:
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [str(x) for x in xs])
    elif xlabel.startswith("frames @"):
        ax.set_xticks(xs, [s["label"] for s in sweep], rotation=30)
    else:
        ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


# --------------------------------------------------------------------------- extra commands
ivbench_app = typer.Typer(help="IV-Bench tools: fetch videos, synthesize IV-Bench-style data (Sec. 4.4).",
                          no_args_is_help=True)


@ivbench_app.command("download")
def download_cmd(
    ids: Path = typer.Option(..., "--ids", help="video ids, one per line (dataset/test_video_ids.txt) or the jsonl"),
    out: Path = typer.Option(..., "--out", help="folder for <video_id>.mp4 (the run's DATA/videos)"),
    max_height: int = typer.Option(720, "--max-height", help="highest video resolution to fetch (px)"),
) -> None:
    """Download the YouTube videos with yt-dlp (the optional 'video' extra of lensbench); offline: a clear error."""
    from lensbench.core.errors import LensbenchError
    from lensbench.tools.ivbench.download import download_videos, read_ids

    try:
        res = download_videos(read_ids(ids), out, max_height=max_height)
    except LensbenchError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"downloaded {len(res['ok'])}, already present {len(res['skipped'])}, failed {len(res['failed'])}")
    if res["failed"]:
        typer.echo("failed: " + " ".join(res["failed"]), err=True)
        raise typer.Exit(3)


@ivbench_app.command("synthesize")
def synthesize_cmd(
    videoqa: Path = typer.Option(..., "--videoqa", help="video-QA jsonl: video_id, question, answer[, distractors]"),
    videos: Path = typer.Option(..., "--videos", help="folder of <video_id>.mp4"),
    llm: str = typer.Option(..., "--llm", help="rewrite model spec (openai:NAME, replay:..., ...)"),
    out: Path = typer.Option(..., "--out", help="output IV-Bench jsonl (images/ written beside it)"),
    judge: Optional[str] = typer.Option(None, "--judge", help="image-necessity judge spec (default: --llm)"),
    embedder: str = typer.Option("simple", "--embedder", help="simple | clip[:ARCH[:PRETRAINED]] | hf:MODEL_ID"),
    base_url: Optional[list[str]] = typer.Option(None, "--base-url", help="endpoint(s) of --llm"),
    judge_base_url: Optional[list[str]] = typer.Option(None, "--judge-base-url", help="endpoint(s) of --judge"),
    frames: int = typer.Option(16, "--frames", help="candidate frames per video for the image"),
    question_type: str = typer.Option("Details Event", "--question-type",
                                      help="task label for items without question_type (one of the 13)"),
    work: Optional[Path] = typer.Option(None, "--work", help="resumable work folder (default OUT.work)"),
    concurrency: int = typer.Option(8, "--concurrency", help="requests in flight"),
) -> None:
    """Rewrite entity mentions (LLM), drop items answerable without the image (judge), pick the image frame."""
    from lensbench.backends.base import BackendConfig
    from lensbench.backends.providers import make_backend
    from lensbench.run.engine import Engine
    from lensbench.core.errors import LensbenchError
    from lensbench.media.video import FrameCache
    from lensbench.tools.ivbench.synth import load_videoqa, make_embedder, synthesize
    from lensbench.run.store import RunStore

    work = work or out.with_suffix(".work")
    try:
        if question_type not in TASK_ABBREV:
            raise ConfigError(f"--question-type {question_type!r}: use one of {', '.join(TASKS)}")
        items = load_videoqa(videoqa)
        emb = make_embedder(embedder)
        backends = {"model": make_backend(llm, BackendConfig(base_urls=base_url or [])),
                    "judge": make_backend(judge or llm, BackendConfig(base_urls=judge_base_url or base_url or []))}
        work.mkdir(parents=True, exist_ok=True)
        store = RunStore(work)
        engine = Engine(backends, store, concurrency=concurrency, progress=False)

        async def main():
            try:
                return await synthesize(items, videos, out, engine.run, emb, FrameCache(work / "frames"), frames=frames,
                                        default_question_type=question_type)
            finally:
                for b in backends.values():
                    await b.aclose()

        try:
            counts = asyncio.run(main())
        finally:
            store.close()
    except LensbenchError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(json.dumps(counts))


CLI_GROUPS = {"ivbench": ivbench_app}
