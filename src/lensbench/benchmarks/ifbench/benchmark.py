"""IF-Bench (Zhang et al.): infrared image understanding, with its full evaluation protocol.

Protocol (SPEC §1; paper Sec. 3.3, Sec. 4.1, Appendix B and D; official code
``github.com/casiatao/IF-Bench`` ``evaluate/bench_evaluate.py`` at commit 8c49d8b):

* Data: ``if_bench.json`` = ``{dimension: [record]}`` (680 four-option questions on 499
  infrared images, 10 dimensions); record fields ``dataset``, ``dst_thermal_path`` (file name
  under the image folder), ``question.{dimension, answer, en_question, en_options,
  cn_question, cn_options}``; ``pos_info`` and ``question.original_answer`` are ignored.
* Prompt: the unified prompt of Fig. 10 (English) or its Chinese twin, verbatim from the
  official code (``lensbench/prompts/ifbench_*.txt``); ``<input_question>`` -> the question,
  ``<input_options>`` -> the rotated options as a Python dict repr
  ``{'A': '...', 'B': '...', 'C': '...', 'D': '...'}`` (what the official code sends). Image(s)
  first, then the text, in one user message.
* Circular evaluation (MMBench style): rotation ``i`` (0..3) puts the original option list
  shifted right by ``i`` into slots A-D (slot ``j`` gets option ``(j - i) mod 4``), so the answer
  letter moves from index ``k`` to ``(k + i) mod 4``. x 2 languages = 8 requests per question.
* Hybrid judgment (default, ``--judge hybrid``): strip the reasoning trace; a reply that is one
  letter A-D (whitespace, a trailing period, brackets or ``**`` allowed) is the answer;
  otherwise the Fig. 11 LLM parser is asked (``--judge-model``; a ``role="judge"`` request
  through the same engine and store) and answers A-D or F. F, an empty reply, or an invalid
  parser reply = ``unparseable`` (scored 0, counted). Without a judge model only exact replies
  count ("exact match only" in the report). ``--judge official-first-char`` reproduces the
  official rule: after ``</think>``, the reply's FIRST character if it is A-D ("Answer: C"
  scores as A), else the parser.
* Scores: per question and language, soft circular score = correct rotations / 4; dimension
  score = mean over its questions; language score = macro mean over the 10 dimensions; Avg =
  mean of the English and Chinese scores (x100). Table 2's dimension columns are the mean of the
  two languages' dimension scores. Strict score (Appendix Tab. 7): a question counts 1 only if
  all 4 rotations are right, aggregated the same way. Per-language scores as in Fig. 9.
* GenViP input configurations (Sec. 4.1, Tab. 6; official ``rgbt_pair`` / ``use_prior`` /
  ``rgbt_transed_img_path``): ``if`` (Fig. 10), ``if+text`` (Fig. 10 + Fig. 13 prior), ``rgb``
  (the translated image alone, official "translated" prompt), ``if+rgb`` (Fig. 12; infrared
  then translated image), ``if+rgb+text`` (Fig. 12 + Fig. 13). Translated images are looked up
  by the infrared file's base name in ``--translated-dir``.
* ``--blind``: the same requests without any image (a language-prior baseline, labelled so).
* A transport failure (model or parser) is ``error``: never scored; the (question, language)
  unit it belongs to is left out of every score and the run is marked incomplete.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field, field_validator

from lensbench.core.errors import DataError
from lensbench.scoring.text import strip_reasoning
from lensbench.report.tables import render_table
from lensbench.core.types import GenParams, ImagePart, Message, Request
from lensbench.benchmarks.base import Benchmark, RunContext, RunResult
from lensbench.core.resources import read_text

__all__ = [
    "IFBench", "Question", "DIMENSIONS", "ABBREVS", "LETTERS", "INPUTS", "load_prompt", "template_for",
    "render_options", "rotate", "build_prompt", "exact_letter", "official_first_char", "parse_parser_reply",
    "parser_prompt", "score_records", "scale_correlation", "thinking_deltas", "parse_model_name", "paper_table",
]

#: Dimension name (as in the data) -> Table 2 abbreviation, in Table 2's column order.
DIMENSIONS: dict[str, str] = {
    "Scene Understanding": "SU",
    "Image Theme": "IT",
    "Viewpoint of Capture": "VC",
    "Target Localization": "TL",
    "Spatial Relationship Understanding": "SRU",
    "Object Counting": "OC",
    "Thermal Feature Understanding": "TFU",
    "Action Recognition": "AR",
    "Thermal Feature Reasoning": "TFR",
    "Commonsense Reasoning": "CR",
}
ABBREVS: list[str] = list(DIMENSIONS.values())
COLUMNS: list[str] = ["Avg"] + ABBREVS
LETTERS: tuple[str, ...] = ("A", "B", "C", "D")
#: language code -> (question field, options field) in the data.
LANG_FIELDS: dict[str, tuple[str, str]] = {"en": ("en_question", "en_options"), "zh": ("cn_question", "cn_options")}
LANG_NAMES = {"en": "English", "zh": "Chinese"}
#: input configuration (Tab. 6) -> (prompt template stem, images sent in order).
INPUTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "if": ("unified", ("if",)),
    "if+text": ("prior", ("if",)),
    "rgb": ("translated", ("rgb",)),
    "if+rgb": ("pair", ("if", "rgb")),
    "if+rgb+text": ("prior_pair", ("if", "rgb")),
}
INPUT_LABELS = {"if": "IF", "if+text": "IF + Text", "rgb": "RGB", "if+rgb": "IF + RGB", "if+rgb+text": "IF + RGB + Text"}
_IMG_EXTS = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff")


# --------------------------------------------------------------------------- prompts
@lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    """The template stored in ``lensbench/prompts/ifbench_<name>.txt`` (text after the header's
    ``-----`` line, byte for byte to the end of the file).

    Names: ``unified_{en,zh}`` (Fig. 10), ``prior_{en,zh}`` (Fig. 10 + Fig. 13),
    ``translated_{en,zh}`` (RGB only), ``pair_{en,zh}`` (Fig. 12), ``prior_pair_{en,zh}``
    (Fig. 12 + Fig. 13), ``parser`` (Fig. 11). Raises FileNotFoundError for another name.
    """
    text = read_text(__package__, "prompts", f"{name}.txt")
    head, sep, body = text.partition("\n-----\n")
    if not sep:
        raise ValueError(f"prompt file ifbench_{name}.txt has no '-----' separator line")
    return body


def template_for(input_config: str, lang: str) -> str:
    """The evaluation template for an input configuration (key of :data:`INPUTS`) and language
    (``en``/``zh``), as the official code picks it. Raises KeyError for unknown values."""
    stem, _ = INPUTS[input_config]
    if lang not in LANG_FIELDS:
        raise KeyError(f"unknown language {lang!r} (en or zh)")
    return load_prompt(f"{stem}_{lang}")


def render_options(options: Sequence[str]) -> str:
    """Options in slots A-D rendered as the official code does: ``str({'A': ..., 'B': ..., ...})``
    (Python dict repr; quotes chosen by ``repr`` per string). ``options`` has 4 strings."""
    return str(dict(zip(LETTERS, options)))


def rotate(options: Sequence[str], answer: str, i: int) -> tuple[tuple[str, ...], str]:
    """Rotation ``i`` (0..3) of circular evaluation (paper Sec. 3.3; official code).

    Slot ``j`` gets original option ``(j - i) mod 4`` (the list shifted right by ``i``), and the
    answer letter moves from index ``k`` to ``(k + i) mod 4``. Returns ``(slots A-D, letter)``.
    Raises ValueError for an answer outside A-D or not 4 options.
    """
    if len(options) != 4:
        raise ValueError(f"expected 4 options, got {len(options)}")
    k = LETTERS.index(answer)
    slots = tuple(options[(j - i) % 4] for j in range(4))
    return slots, LETTERS[(k + i) % 4]


def build_prompt(template: str, question: str, options: Sequence[str]) -> str:
    """Fill a template: ``<input_question>`` first, then ``<input_options>`` (official order)."""
    return template.replace("<input_question>", str(question)).replace("<input_options>", render_options(options))


def parser_prompt(response: str) -> str:
    """The Fig. 11 parser prompt with ``<input_response>`` replaced by ``response``."""
    return load_prompt("parser").replace("<input_response>", response)


# --------------------------------------------------------------------------- judging
_EXACT = re.compile(r"^\s*(?:\*\*)?\s*[(\[]?\s*([A-D])\s*[)\]]?\s*\.?\s*(?:\*\*)?\s*\.?\s*$")
_PARSER_EXACT = re.compile(r"^\s*(?:\*\*)?\s*[(\[]?\s*([A-DF])\s*[)\]]?\s*\.?\s*(?:\*\*)?\s*\.?\s*$")


def exact_letter(text: str | None) -> str | None:
    """The answer letter if the (already reasoning-stripped) reply is exactly one letter A-D.

    Allowed around the letter: whitespace, brackets ``(A)``/``[A]``, ``**A**``, a trailing
    period. Upper case only (the prompt asks for an uppercase letter). Otherwise None (SPEC §1).
    """
    if not text:
        return None
    m = _EXACT.match(text)
    return m.group(1) if m else None


def official_clean(text: str | None) -> str:
    """The official code's clean-up: ``strip()``, then the part after the last ``</think>``, stripped."""
    s = (text or "").strip()
    if "</think>" in s:
        s = s.split("</think>")[-1].strip()
    return s


def official_first_char(text: str | None) -> str | None:
    """``--judge official-first-char``: the FIRST character of :func:`official_clean` if it is A-D."""
    s = official_clean(text)
    return s[0] if s and s[0] in LETTERS else None


def parse_parser_reply(text: str | None) -> str | None:
    """The Fig. 11 parser's verdict: ``"A"``-``"D"``, ``"F"`` (no option in the reply) or None (invalid).

    Reasoning stripped; an exact single letter (same tolerance as :func:`exact_letter`, plus F),
    else a leading A-D/F followed by a non-letter (``"B."``, ``"B: ..."``), as the official code
    reads the parser's first character.
    """
    s = strip_reasoning(text)
    if not s:
        return None
    m = _PARSER_EXACT.match(s)
    if m:
        return m.group(1)
    if s[0] in "ABCDF" and (len(s) == 1 or not s[1].isalpha()):
        return s[0]
    return None


# --------------------------------------------------------------------------- samples
@dataclass(frozen=True)
class Question:
    """One IF-Bench question as published.

    ``qid`` = ``"<abbrev>-<index within its dimension list, 3 digits>"``; ``answer`` is the
    original letter; ``options`` maps language -> the 4 option texts in original A-D order;
    ``questions`` maps language -> question text; ``images`` maps ``"if"``/``"rgb"`` -> file path
    (``None`` when not needed or in blind mode).
    """

    qid: str
    dimension: str
    abbrev: str
    dataset: str
    image_name: str
    answer: str
    questions: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, tuple[str, str, str, str]], ...]
    if_path: str | None
    rgb_path: str | None

    def question(self, lang: str) -> str:
        """The question text in ``lang``."""
        return dict(self.questions)[lang]

    def option_list(self, lang: str) -> tuple[str, str, str, str]:
        """The options in ``lang``, original A-D order."""
        return dict(self.options)[lang]


def _find_json(data_dir: Path) -> Path:
    if data_dir.is_file():
        return data_dir
    for cand in (data_dir / "if_bench.json", data_dir / "evaluate" / "if_bench" / "if_bench.json",
                 data_dir / "if_bench" / "if_bench.json"):
        if cand.is_file():
            return cand
    raise DataError(data_dir, "no if_bench.json found (looked for if_bench.json, evaluate/if_bench/if_bench.json)")


def _find_image(folder: Path, name: str) -> Path | None:
    p = folder / name
    if p.is_file():
        return p
    base = folder / Path(name).name
    if base.is_file():
        return base
    for ext in _IMG_EXTS:
        q = base.with_suffix(ext)
        if q.is_file():
            return q
    return None


# --------------------------------------------------------------------------- scoring
def _mean(vals) -> float | None:
    vals = [v for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else None


def score_records(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Soft circular and strict scores (percent) from per-request records.

    Each record needs ``qid``, ``abbrev``, ``lang``, ``status``. A (question, language) unit
    with an ``error`` record is left out. Returns ``{"Score": {col}, "Strict": {col},
    "Score-<lang>": {col}, "Strict-<lang>": {col}}`` with columns ``Avg`` and the 10
    abbreviations: per language, dimension = mean over questions, Avg = macro mean over
    dimensions; overall dimension/Avg = mean over languages (paper Sec. 3.3, Tab. 2, Tab. 7).
    """
    units: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in records:
        units[(r["qid"], r["lang"])].append(r)
    soft: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    strict: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (_qid, lang), rs in units.items():
        if any(r["status"] == "error" for r in rs):
            continue
        ok = [r["status"] == "correct" for r in rs]
        soft[lang][rs[0]["abbrev"]].append(sum(ok) / len(ok))
        strict[lang][rs[0]["abbrev"]].append(1.0 if all(ok) else 0.0)
    langs = [lg for lg in LANG_FIELDS if lg in soft] + sorted(lg for lg in soft if lg not in LANG_FIELDS)
    out: dict[str, dict[str, float | None]] = {}
    for name, tab in (("Score", soft), ("Strict", strict)):
        per_lang: dict[str, dict[str, float | None]] = {}
        for lg in langs:
            dims = {a: (100.0 * sum(tab[lg][a]) / len(tab[lg][a]) if tab[lg].get(a) else None) for a in ABBREVS}
            per_lang[lg] = {"Avg": _mean(dims.values()), **dims}
            out[f"{name}-{lg}"] = per_lang[lg]
        out[name] = {c: _mean(per_lang[lg][c] for lg in langs) for c in COLUMNS}
        if not langs:
            out[name] = {c: None for c in COLUMNS}
    return out


# --------------------------------------------------------------------------- multi-run analyses
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)B(?:-A(\d+(?:\.\d+)?)B)?(?![A-Za-z0-9])")


def parse_model_name(name: str) -> dict[str, Any]:
    """Declared facts from a model name such as ``InternVL3.5-30B-A3B-Thinking``.

    Returns ``{"params_b": total parameters in billions (MoE: total, as Tab. 3 uses) or None,
    "family": name without the size token and an ``-Instruct`` suffix (``InternVL3.5-Thinking``,
    ``Qwen3-VL``) or None when no size,
    "thinking": True for a ``-Thinking`` variant (not ``Auto-Thinking``), "base": the name
    without ``-Thinking``/``-Instruct`` (pairs thinking and non-thinking variants)}``.
    """
    short = name.rsplit("/", 1)[-1].strip()
    m = _SIZE.search(short)
    params = float(m.group(1)) if m else None
    family = None
    if m:
        family = re.sub(r"-{2,}", "-", (short[: m.start()] + short[m.end():])).strip("-")
        family = re.sub(r"-Instruct$", "", family, flags=re.IGNORECASE)
    thinking = bool(re.search(r"(?<!Auto)-Thinking$", short, re.IGNORECASE))
    base = re.sub(r"-(Thinking|Instruct)$", "", short, flags=re.IGNORECASE)
    return {"params_b": params, "family": family, "thinking": thinking, "base": base}


def scale_correlation(rows: Sequence[dict[str, Any]], columns: Sequence[str] = COLUMNS,
                      min_models: int = 3) -> dict[str, Any]:
    """Tab. 3: Pearson r of score vs declared parameter count within each family, averaged.

    ``rows``: ``{"model", "family", "params_b", "thinking", <column>: score}``. The rule that
    reproduces the paper's Tab. 3 exactly (all 11 values, to 2 decimals, from its Tab. 2 rows;
    checked in the tests): non-thinking variants only, families with at least ``min_models`` (3)
    models, Pearson r on the TOTAL parameter count (MoE too), plain mean of r over families.
    A constant column within a family gives no r for it. Returns ``{"Corr": {col: mean r or
    None}, "families": {family: {"models": [...], "r": {col: r}}}}`` (scipy.stats.pearsonr).
    """
    from scipy.stats import pearsonr

    fams: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r.get("family") and r.get("params_b") and not r.get("thinking"):
            fams[r["family"]].append(r)
    detail: dict[str, Any] = {}
    per_col: dict[str, list[float]] = defaultdict(list)
    for fam, rs in sorted(fams.items()):
        if len(rs) < min_models or len({r["params_b"] for r in rs}) < 2:
            continue
        rr: dict[str, float | None] = {}
        for c in columns:
            pts = [(r["params_b"], r[c]) for r in rs if r.get(c) is not None]
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            if len(pts) < 2 or len(set(xs)) < 2 or len(set(ys)) < 2:
                rr[c] = None
                continue
            rr[c] = float(pearsonr(xs, ys)[0])
            per_col[c].append(rr[c])
        detail[fam] = {"models": [r["model"] for r in rs], "r": rr}
    return {"Corr": {c: (sum(per_col[c]) / len(per_col[c]) if per_col[c] else None) for c in columns},
            "families": detail}


def thinking_deltas(rows: Sequence[dict[str, Any]], columns: Sequence[str] = COLUMNS) -> dict[str, Any]:
    """Fig. 5: score change from thinking, per pair of variants and averaged over pairs.

    ``rows``: ``{"model", "base", "thinking": bool, <column>: score}``; a pair is one thinking
    and one non-thinking row with the same ``base``. Returns ``{"pairs": [{"base", "thinking",
    "non_thinking", "delta": {col}}], "mean": {col: mean delta or None}}``.
    """
    by_base: dict[str, dict[bool, dict]] = defaultdict(dict)
    for r in rows:
        by_base[r["base"]].setdefault(bool(r["thinking"]), r)
    pairs = []
    for base, d in by_base.items():
        if True in d and False in d:
            t, n = d[True], d[False]
            pairs.append({"base": base, "thinking": t["model"], "non_thinking": n["model"],
                          "delta": {c: (t[c] - n[c]) if t.get(c) is not None and n.get(c) is not None else None
                                    for c in columns}})
    mean = {c: _mean(p["delta"][c] for p in pairs) for c in columns}
    return {"pairs": pairs, "mean": mean}


@lru_cache(maxsize=None)
def paper_table(name: str) -> dict[str, Any]:
    """A paper table shipped as data: ``table2``, ``table3``, ``table4``, ``table5_6``, ``table7``
    (``lensbench/data/ifbench_paper_<name>.json``)."""
    text = read_text(__package__, "paper", f"{name}.json")
    return json.loads(text)


def _norm_name(name: str) -> str:
    s = name.rsplit("/", 1)[-1].strip().lower()
    return re.sub(r"-(instruct|hf)$", "", s)


# --------------------------------------------------------------------------- benchmark
class IFBench(Benchmark):
    """IF-Bench: 680 infrared-image questions, circular x bilingual, hybrid judgment (see module docs)."""

    name = "if-bench"
    title = "IF-Bench"
    answer_space = list(LETTERS)

    class Options(BaseModel):
        """IF-Bench options (protocol of paper Sec. 3.3; GenViP inputs of Sec. 4.1 / Tab. 6)."""

        languages: str = Field(default="en,zh", description="comma-separated languages to evaluate: en, zh (cn = zh)")
        circular: bool = Field(default=True, description="circular evaluation: 4 option rotations per question "
                               "(--no-circular sends only the original order)")
        judge: Literal["hybrid", "official-first-char"] = Field(
            default="hybrid", description="answer judgment: hybrid (exact single letter, else the Fig. 11 LLM "
            "parser) or official-first-char (the official code's rule: a reply's first character if A-D)")
        input: Literal["if", "if+text", "rgb", "if+rgb", "if+rgb+text"] = Field(
            default="if", description="input configuration (Tab. 6): if, if+text, rgb, if+rgb, if+rgb+text "
            "(GenViP = if+rgb+text)")
        translated_dir: Optional[str] = Field(default=None, description="folder of translated RGB images (same base "
                                              "names as the infrared files); default DATA_DIR/translated_rgb_imgs")
        image_dir: Optional[str] = Field(default=None, description="folder of the infrared images; default "
                                         "DATA_DIR/infrared_imgs, DATA_DIR/images or DATA_DIR")
        blind: bool = Field(default=False, description="send the same prompts without any image (language-prior "
                            "baseline, reported as such)")
        parser_max_tokens: Optional[int] = Field(default=None, gt=0, description="max tokens of a parser reply "
                                                 "(default: the server's)")
        parser_disable_thinking: bool = Field(default=True, description="send chat_template_kwargs.enable_thinking="
                                              "false with parser calls (paper: Qwen3-8B, thinking off); turn off for "
                                              "APIs that reject the field")
        model_family: Optional[str] = Field(default=None, description="model family for the scale correlation "
                                            "(default: the model name without its size)")
        model_params_b: Optional[float] = Field(default=None, gt=0, description="declared parameter count in "
                                                "billions (MoE: total) for the scale correlation (default: from the name)")

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

    # ----------------------------------------------------------------- load
    def load(self, data_dir: Path) -> list[Question]:
        """Questions of ``if_bench.json`` under ``data_dir`` (or the file itself), with image paths.

        Image folders: ``--image-dir`` or ``DATA_DIR/infrared_imgs``, ``DATA_DIR/images``,
        ``DATA_DIR`` (the first holding the first question's image); translated images for the
        ``rgb`` inputs in ``--translated-dir`` or ``DATA_DIR/translated_rgb_imgs``, by base name
        (another image extension with the same stem is accepted). No image is needed in blind mode.

        Raises DataError naming the file and field for malformed records, unknown dimensions,
        answers outside A-D, option sets other than A-D, or missing images.
        """
        data_dir = Path(data_dir)
        jpath = _find_json(data_dir)
        root = jpath.parent if data_dir.is_file() else data_dir
        try:
            doc = json.loads(jpath.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DataError(jpath, f"not valid JSON: {exc}") from None
        if isinstance(doc, dict):
            items = []
            for dim, lst in doc.items():
                if not isinstance(lst, list):
                    raise DataError(jpath, "expected a list of questions", field=dim)
                items += [(f"{dim}[{i}]", dim, rec) for i, rec in enumerate(lst)]
        elif isinstance(doc, list):
            items = [(f"[{i}]", None, rec) for i, rec in enumerate(doc)]
        else:
            raise DataError(jpath, "expected an object {dimension: [question]} or a list of questions")
        need = set() if self.options.blind else set(INPUTS[self.options.input][1])
        img_dir = self._image_dir(root, jpath, items) if "if" in need else None
        rgb_dir = None
        if "rgb" in need:
            rgb_dir = Path(self.options.translated_dir) if self.options.translated_dir else root / "translated_rgb_imgs"
            if not rgb_dir.is_dir():
                raise DataError(rgb_dir, f"translated image folder not found (input {self.options.input!r} needs "
                                         "--translated-dir; make one with 'lensbench genvip translate')")
        counters: dict[str, int] = defaultdict(int)
        out: list[Question] = []
        for where, dim_key, rec in items:
            out.append(self._question(jpath, where, dim_key, rec, counters, img_dir, rgb_dir))
        if not out:
            raise DataError(jpath, "no questions")
        return out

    def _image_dir(self, root: Path, jpath: Path, items) -> Path:
        first = None
        for where, _d, rec in items:
            if isinstance(rec, dict) and isinstance(rec.get("dst_thermal_path"), str):
                first = rec["dst_thermal_path"]
                break
        if self.options.image_dir:
            d = Path(self.options.image_dir)
            if not d.is_dir():
                raise DataError(d, "--image-dir is not a folder")
            return d
        cands = [root / "infrared_imgs", root / "images", root]
        for c in cands:
            if c.is_dir() and first is not None and _find_image(c, first) is not None:
                return c
        raise DataError(jpath, f"image {first!r} not found in any of: {', '.join(str(c) for c in cands)} "
                               "(download the images from HF casiatao/IF-Bench, give --image-dir, or use --blind)",
                        field="dst_thermal_path")

    def _question(self, jpath, where, dim_key, rec, counters, img_dir, rgb_dir) -> Question:
        if not isinstance(rec, dict):
            raise DataError(jpath, "question record is not an object", field=where)
        for k in ("dst_thermal_path", "question"):
            if k not in rec:
                raise DataError(jpath, "missing field", field=f"{where}.{k}")
        q = rec["question"]
        if not isinstance(q, dict):
            raise DataError(jpath, "expected an object", field=f"{where}.question")
        for k in ("dimension", "answer", "en_question", "en_options", "cn_question", "cn_options"):
            if k not in q:
                raise DataError(jpath, "missing field", field=f"{where}.question.{k}")
        dim = q["dimension"]
        if dim not in DIMENSIONS:
            raise DataError(jpath, f"unknown dimension {dim!r}", field=f"{where}.question.dimension")
        if dim_key is not None and dim_key != dim:
            raise DataError(jpath, f"listed under {dim_key!r} but its dimension is {dim!r}",
                            field=f"{where}.question.dimension")
        ans = q["answer"]
        if ans not in LETTERS:
            raise DataError(jpath, f"answer must be one of A-D, got {ans!r}", field=f"{where}.question.answer")
        opts, qs = [], []
        for lang, (qf, of) in LANG_FIELDS.items():
            o = q[of]
            if not isinstance(o, dict) or sorted(o) != list(LETTERS):
                raise DataError(jpath, f"options must have exactly the keys A, B, C, D, got {list(o) if isinstance(o, dict) else o!r}",
                                field=f"{where}.question.{of}")
            opts.append((lang, tuple(o[L] for L in LETTERS)))
            qs.append((lang, q[qf]))
        abbrev = DIMENSIONS[dim]
        idx = counters[abbrev]
        counters[abbrev] += 1
        name = rec["dst_thermal_path"]
        if_path = rgb_path = None
        if img_dir is not None:
            p = _find_image(img_dir, name)
            if p is None:
                raise DataError(jpath, f"image not found: {img_dir / name}", field=f"{where}.dst_thermal_path")
            if_path = str(p)
        if rgb_dir is not None:
            p = _find_image(rgb_dir, Path(name).name)
            if p is None:
                raise DataError(jpath, f"translated image not found: {rgb_dir / Path(name).name}",
                                field=f"{where}.dst_thermal_path")
            rgb_path = str(p)
        return Question(qid=f"{abbrev}-{idx:03d}", dimension=dim, abbrev=abbrev, dataset=str(rec.get("dataset", "")),
                        image_name=name, answer=ans, questions=tuple(qs), options=tuple(opts),
                        if_path=if_path, rgb_path=rgb_path)

    # ------------------------------------------------------------- requests
    def requests(self, questions: Sequence[Question], ctx: RunContext | None = None) -> list[Request]:
        """Model requests: per question, per language, per rotation (ids ``<qid>/<lang>/r<i>``).

        Each request is one user message: the image(s) of the input configuration (infrared,
        then translated RGB; none in blind mode), then the filled template. ``meta`` carries
        ``answer`` (rotated letter), ``answer_space`` (A-D) and the unit facts.
        """
        params = ctx.params(temperature=0.0) if ctx is not None else GenParams(temperature=0.0)
        stem, kinds = INPUTS[self.options.input]
        cache: dict[str, ImagePart] = {}

        def img(p: str) -> ImagePart:
            if p not in cache:
                cache[p] = ImagePart.of(p)
            return cache[p]

        out = []
        for q in questions:
            parts = []
            if not self.options.blind:
                for k in kinds:
                    parts.append(img(q.if_path if k == "if" else q.rgb_path))
            for lang in self.langs:
                tpl = template_for(self.options.input, lang)
                for i in range(self.rotations):
                    slots, letter = rotate(q.option_list(lang), q.answer, i)
                    text = build_prompt(tpl, q.question(lang), slots)
                    out.append(Request(id=f"{q.qid}/{lang}/r{i}", messages=(Message.user(*parts, text),), params=params,
                                       meta={"answer": letter, "answer_space": list(LETTERS), "qid": q.qid,
                                             "lang": lang, "rotation": i}))
        return out

    def _parser_params(self) -> GenParams:
        extra = {"chat_template_kwargs": {"enable_thinking": False}} if self.options.parser_disable_thinking else {}
        return GenParams(temperature=0.0, max_tokens=self.options.parser_max_tokens, extra_body=extra)

    # ------------------------------------------------------------- evaluate
    async def evaluate(self, samples: list[Question], ctx: RunContext) -> list[dict[str, Any]]:
        """Send the model requests, judge (exact / first-char, then the LLM parser), score.

        Returns one record per model request: ``id``, ``qid``, ``dimension``, ``abbrev``,
        ``lang``, ``rotation``, ``answer`` (rotated), ``status``, raw ``reply`` and
        ``reasoning``, ``parsed``, ``judged_by`` (exact | first-char | parser | None),
        ``parser_reply``, ``parser_available``, ``thinking`` (the model's enable_thinking flag
        if set), ``input``, ``blind``.
        """
        reqs = self.requests(samples, ctx)
        got = await ctx.generate(reqs, label="if-bench")
        qmeta = {q.qid: q for q in samples}
        thinking = (reqs[0].params.extra_body.get("chat_template_kwargs") or {}).get("enable_thinking") if reqs else None
        mode = self.options.judge
        records: list[dict[str, Any]] = []
        parse_reqs: list[Request] = []
        pp = self._parser_params()
        for r in reqs:
            q = qmeta[r.meta["qid"]]
            rec: dict[str, Any] = {"id": r.id, "qid": q.qid, "dimension": q.dimension, "abbrev": q.abbrev,
                                   "lang": r.meta["lang"], "rotation": r.meta["rotation"], "answer": r.meta["answer"],
                                   "image": q.image_name, "input": self.options.input, "blind": self.options.blind,
                                   "judge_mode": mode, "parser_available": ctx.has_judge, "thinking": thinking}
            resp = got.get(r.id)
            if resp is None or not resp.ok:
                rec.update(status="error", error=resp.error if resp else "no response", parsed=None, judged_by=None)
                records.append(rec)
                continue
            rec.update(reply=resp.text, reasoning=resp.reasoning)
            if mode == "hybrid":
                cleaned = strip_reasoning(resp.text)
                letter = exact_letter(cleaned)
                how = "exact"
            else:
                cleaned = official_clean(resp.text)
                letter = official_first_char(resp.text)
                how = "first-char"
            if letter is not None:
                rec.update(parsed=letter, judged_by=how, status="correct" if letter == rec["answer"] else "wrong")
            elif not cleaned:
                rec.update(parsed=None, judged_by=None, status="unparseable", note="empty reply after reasoning strip")
            elif ctx.has_judge:
                rec.update(parsed=None, judged_by="parser", status="pending", parser_input=cleaned)
                parse_reqs.append(Request(id=f"{r.id}/parser", messages=(Message.user(parser_prompt(cleaned)),),
                                          params=pp, role="judge", meta={"for": r.id}))
            else:
                rec.update(parsed=None, judged_by=None, status="unparseable", note="not a single letter (exact match only)")
            records.append(rec)
        if parse_reqs:
            pgot = await ctx.generate(parse_reqs, label="if-bench parser")
            by_id = {rec["id"]: rec for rec in records}
            for pr in parse_reqs:
                rec = by_id[pr.meta["for"]]
                presp = pgot.get(pr.id)
                rec.pop("parser_input", None)
                if presp is None or not presp.ok:
                    rec.update(status="error", error=f"parser: {presp.error if presp else 'no response'}")
                    continue
                verdict = parse_parser_reply(presp.text)
                rec["parser_reply"] = presp.text
                rec["parser_verdict"] = verdict
                if verdict in LETTERS:
                    rec.update(parsed=verdict, status="correct" if verdict == rec["answer"] else "wrong")
                else:
                    rec.update(status="unparseable", note="parser answered F" if verdict == "F" else "invalid parser reply")
        return records

    # ------------------------------------------------------------ aggregate
    def aggregate(self, records: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Scores (percent; see :func:`score_records`) and counts.

        ``metrics``: ``Score`` (Table 2 row: Avg + 10 abbreviations), ``Strict`` (Tab. 7),
        ``Score-en``/``Score-zh`` (Fig. 9), ``Strict-en``/``Strict-zh``. ``counts``: ``n``
        (requests scored), ``n_requests``, ``n_questions``, ``n_correct``, ``n_unparseable``,
        ``n_error``, ``n_exact``, ``n_first_char``, ``n_parser_calls``, ``n_parser_F``,
        ``n_parser_invalid``, ``n_parser_error``, ``n_units``/``n_units_scored``/
        ``n_units_missing`` ((question, language) units), ``judge`` (label for the report
        header), ``input``, ``blind``, ``thinking``, ``model_family``, ``model_params_b``,
        ``per_dimension`` (question counts).
        """
        metrics: dict[str, Any] = score_records(records)
        units: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for r in records:
            units[(r["qid"], r["lang"])].append(r)
        missing = sum(any(r["status"] == "error" for r in rs) for rs in units.values())
        parsed_by = [r for r in records if r.get("judged_by") == "parser"]
        has_parser = any(r.get("parser_available") for r in records)
        mode = records[0].get("judge_mode", "hybrid") if records else self.options.judge
        if mode == "official-first-char":
            label = "official first character" + (" + LLM parser (Fig. 11)" if has_parser else " only (no parser)")
        else:
            label = "hybrid: exact letter + LLM parser (Fig. 11)" if has_parser else "exact match only"
        per_dim: dict[str, int] = defaultdict(int)
        for qid in {r["qid"]: r["abbrev"] for r in records}.items():
            per_dim[qid[1]] += 1
        first = records[0] if records else {}
        counts = {
            "n": sum(r["status"] != "error" for r in records),
            "n_requests": len(records),
            "n_questions": len({r["qid"] for r in records}),
            "n_correct": sum(r["status"] == "correct" for r in records),
            "n_unparseable": sum(r["status"] == "unparseable" for r in records),
            "n_error": sum(r["status"] == "error" for r in records),
            "n_exact": sum(r.get("judged_by") == "exact" for r in records),
            "n_first_char": sum(r.get("judged_by") == "first-char" for r in records),
            "n_parser_calls": len(parsed_by),
            "n_parser_F": sum(r.get("parser_verdict") == "F" for r in parsed_by),
            "n_parser_invalid": sum("parser_reply" in r and r.get("parser_verdict") is None for r in parsed_by),
            "n_parser_error": sum(r["status"] == "error" for r in parsed_by),
            "n_units": len(units),
            "n_units_scored": len(units) - missing,
            "n_units_missing": missing,
            "judge": label,
            "judge_mode": mode,
            "input": first.get("input", self.options.input),
            "blind": bool(first.get("blind", self.options.blind)),
            "languages": sorted({r["lang"] for r in records}, key=lambda x: list(LANG_FIELDS).index(x) if x in LANG_FIELDS else 9),
            "rotations": len({r["rotation"] for r in records}),
            "thinking": first.get("thinking"),
            "model_family": self.options.model_family,
            "model_params_b": self.options.model_params_b,
            "per_dimension": {a: per_dim.get(a, 0) for a in ABBREVS},
        }
        return metrics, counts

    # --------------------------------------------------------------- render
    @staticmethod
    def _setting(r: RunResult) -> tuple[str, bool]:
        inp = r.counts.get("input") or r.options.get("input", "if")
        blind = bool(r.counts.get("blind", r.options.get("blind", False)))
        return inp, blind

    @classmethod
    def _label(cls, r: RunResult) -> str:
        inp, blind = cls._setting(r)
        tags = []
        if inp != "if":
            tags.append(INPUT_LABELS.get(inp, inp))
        if blind:
            tags.append("BLIND: no image, language prior")
        if not r.complete:
            tags.append(f"incomplete: {r.counts.get('n_error', 0)} errors")
        return r.model + (f" [{'; '.join(tags)}]" if tags else "")

    @staticmethod
    def facts(r: RunResult) -> dict[str, Any]:
        """Declared facts of a run for the multi-run analyses: family, params_b, thinking, base.

        Options ``--model-family``/``--model-params-b`` win over the name; thinking is the
        ``-Thinking`` name suffix, or the run's ``enable_thinking`` flag when it was set.
        """
        f = parse_model_name(r.model)
        fam = r.counts.get("model_family") or r.options.get("model_family")
        pb = r.counts.get("model_params_b") or r.options.get("model_params_b")
        if fam:
            f["family"] = fam
        if pb:
            f["params_b"] = float(pb)
        th = r.counts.get("thinking")
        if th is not None and bool(th) != f["thinking"]:
            f["thinking"] = bool(th)
        return f

    def tables(self, results, fmt: str = "md", with_paper: bool = False) -> str:
        """See :meth:`Benchmark.tables` (transition alias of :meth:`render`)."""
        return self.render(results, fmt, with_paper)

    def render(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Table 2 row(s) (+ the paper's row for the same model name with ``with_paper``), per
        language (Fig. 9), strict vs soft (Tab. 7), judgment counts, and for several runs: input
        configurations vs vanilla (Tab. 4 / Tab. 6 layout), model-scale correlation (Tab. 3) and
        thinking deltas (Fig. 5). ``fmt``: md or csv."""
        parts: list[str] = []
        judges = sorted({r.counts.get("judge", "?") for r in results})
        notes = [f"judgment: {', '.join(judges)}"]
        if any(self._setting(r)[1] for r in results):
            notes.append("BLIND rows: the same prompts sent without any image (a language-prior baseline, not an "
                         "image-understanding score)")
        if fmt == "md":
            parts.append("IF-Bench: soft circular score (4 rotations x languages), macro mean over dimensions, "
                         "mean of languages; " + "; ".join(notes) + "\n")
        paper2 = {_norm_name(p["model"]): p for p in paper_table("table2")["rows"]}
        rows = []
        shown: set[str] = set()
        for r in results:
            rows.append([self._label(r)] + [r.metrics["Score"].get(c) for c in COLUMNS])
            if with_paper:
                p = paper2.get(_norm_name(r.model))
                if p is not None and p["model"] not in shown:  # once per model (the paper's row is vanilla IF)
                    shown.add(p["model"])
                    rows.append([f"{p['model']} (paper)"] + [p[c] for c in COLUMNS])
        if with_paper and not any(paper2.get(_norm_name(r.model)) for r in results):
            rows += [[f"{p['model']} (paper)"] + [p[c] for c in COLUMNS] for p in paper_table("table2")["rows"]]
        parts.append(render_table(["Model"] + COLUMNS, rows, fmt, title="IF-Bench (Table 2 layout; %)"))

        lang_rows = []
        for r in results:
            en, zh = r.metrics.get("Score-en", {}).get("Avg"), r.metrics.get("Score-zh", {}).get("Avg")
            lang_rows.append([self._label(r), en, zh, (en - zh) if en is not None and zh is not None else None])
        parts.append(render_table(["Model", "English", "Chinese", "EN - ZH"], lang_rows, fmt,
                                  title="Per-language scores (Fig. 9 layout; %)"))

        strict_rows = []
        paper7 = {_norm_name(p["model"]): p for p in paper_table("table7")["rows"]}
        for r in results:
            soft, strict = r.metrics["Score"], r.metrics.get("Strict", {})
            strict_rows.append([self._label(r), "soft"] + [soft.get(c) for c in COLUMNS] + [None])
            d = (strict.get("Avg") - soft.get("Avg")) if strict.get("Avg") is not None and soft.get("Avg") is not None else None
            strict_rows.append([self._label(r), "strict"] + [strict.get(c) for c in COLUMNS] + [d])
            p = paper7.get(_norm_name(r.model)) if with_paper else None
            if p is not None:
                strict_rows.append([f"{p['model']} (paper)", "strict"] + [p["strict"][c] for c in COLUMNS]
                                   + [p["strict"]["Avg"] - p["soft"]["Avg"]])
        parts.append(render_table(["Model", "Criterion"] + COLUMNS + ["Strict - soft"], strict_rows, fmt,
                                  title="Strict vs soft circular score (Tab. 7 layout; %)"))

        parts.append(render_table(
            ["Model", "judgment", "requests", "exact", "first-char", "parser calls", "parser F", "parser invalid",
             "unparseable (scored 0)", "errors (not scored)", "units missing"],
            [[self._label(r), r.counts.get("judge"), r.counts.get("n_requests"), r.counts.get("n_exact"),
              r.counts.get("n_first_char"), r.counts.get("n_parser_calls"), r.counts.get("n_parser_F"),
              r.counts.get("n_parser_invalid"), r.counts.get("n_unparseable"), r.counts.get("n_error"),
              r.counts.get("n_units_missing")] for r in results], fmt, title="Judgment counts"))

        gv = self.render_inputs(results, fmt, with_paper)
        if gv:
            parts.append(gv)
        if len(results) > 1:
            sc = self.render_scale(results, fmt, with_paper)
            if sc:
                parts.append(sc)
            th = self.render_thinking(results, fmt)
            if th:
                parts.append(th)
        for r in results:
            if not r.complete:
                parts.append(f"Run {r.run_dir or r.model} is incomplete: {r.counts.get('n_error')} request(s) failed "
                             f"in transport (model or parser) and {r.counts.get('n_units_missing')} (question, language) "
                             "unit(s) are left out; re-run with the same --out to retry them.\n")
        return "\n".join(parts)

    def render_inputs(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Tab. 4 / Tab. 6 layout: per model, each input configuration beside the vanilla (``if``)
        run, with the Avg delta. Empty string when no run uses another input or blind mode."""
        if not any(self._setting(r) != ("if", False) for r in results):
            return ""
        by_model: dict[str, list[RunResult]] = defaultdict(list)
        names: dict[str, str] = {}
        for r in results:
            by_model[_norm_name(r.model)].append(r)
            names.setdefault(_norm_name(r.model), r.model)
        order = list(INPUTS)
        rows = []
        paper4 = {_norm_name(p["model"]): p for p in paper_table("table4")["rows"]}
        for key, rs in by_model.items():
            model = names[key]
            rs = sorted(rs, key=lambda r: (self._setting(r)[1], order.index(self._setting(r)[0])
                                            if self._setting(r)[0] in order else 99))
            base = next((r for r in rs if self._setting(r) == ("if", False)), None)
            bavg = base.metrics["Score"].get("Avg") if base else None
            for r in rs:
                inp, blind = self._setting(r)
                avg = r.metrics["Score"].get("Avg")
                delta = (avg - bavg) if (avg is not None and bavg is not None and r is not base) else None
                label = INPUT_LABELS.get(inp, inp) + (" (blind: no image)" if blind else "")
                genvip = "vanilla" if (inp, blind) == ("if", False) else ("GenViP" if inp == "if+rgb+text" and not blind else "")
                rows.append([model, label, genvip, avg, delta] + [r.metrics["Score"].get(c) for c in ABBREVS])
            p = paper4.get(_norm_name(model)) if with_paper and len(rs) > 1 else None
            if p is not None:
                rows.append([f"{p['model']} (paper)", "IF", "vanilla", p["vanilla"]["Avg"], None]
                            + [p["vanilla"][c] for c in ABBREVS])
                rows.append([f"{p['model']} (paper)", "IF + RGB + Text", "GenViP", p["genvip"]["Avg"],
                             p["genvip"]["Avg"] - p["vanilla"]["Avg"]] + [p["genvip"][c] for c in ABBREVS])
        return render_table(["Model", "Input", "GenViP", "Avg", "Δ Avg vs IF"] + ABBREVS, rows, fmt,
                            title="Input configurations vs vanilla (Tab. 4 / Tab. 6 layout; %)")

    def _vanilla_rows(self, results: Sequence[RunResult]) -> list[dict[str, Any]]:
        rows = []
        for r in results:
            if self._setting(r) != ("if", False):
                continue
            f = self.facts(r)
            rows.append({"model": r.model, **f, **r.metrics["Score"]})
        return rows

    def render_scale(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Tab. 3 layout: mean over families of Pearson r(score, parameter count); empty when no
        family has two sizes among the (vanilla, non-blind) runs."""
        corr = scale_correlation(self._vanilla_rows(results))
        if not corr["families"]:
            return ""
        rows = [["Corr (ours)"] + [corr["Corr"][c] for c in COLUMNS]]
        if with_paper:
            rows.append(["Corr (paper)"] + [paper_table("table3")["Corr"][c] for c in COLUMNS])
        fam_txt = "; ".join(f"{k}: {', '.join(v['models'])}" for k, v in corr["families"].items())
        return render_table([""] + COLUMNS, rows, fmt, title="Model scale vs score (Tab. 3 layout; Pearson r within "
                            f"families, averaged) — families: {fam_txt}")

    def render_thinking(self, results: Sequence[RunResult], fmt: str = "md") -> str:
        """Fig. 5 layout: thinking minus non-thinking score per pair and averaged; empty without pairs."""
        td = thinking_deltas(self._vanilla_rows(results))
        if not td["pairs"]:
            return ""
        rows = [[f"{p['thinking']} - {p['non_thinking']}"] + [p["delta"][c] for c in COLUMNS] for p in td["pairs"]]
        rows.append([f"mean over {len(td['pairs'])} pair(s)"] + [td["mean"][c] for c in COLUMNS])
        return render_table(["Pair"] + COLUMNS, rows, fmt, title="Thinking vs non-thinking (Fig. 5 layout; "
                            "score change, points)")
