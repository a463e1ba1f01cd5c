"""GOBench protocol pieces: records, the critic prompt, the reply parser, scores and SPS.

Sources (paper = ``seeds/GOBench.md``, arXiv 2506.00991):

* Records: ``data/data_total.json`` of github.com/Amber0614/GOBench (999 objects with ``index``,
  ``category``, ``image`` (path relative to the ``data`` folder), ``title``, ``prompt``,
  ``Questions_reality`` (5 numbered lines), ``Question_aesthetics``,
  ``Question_Instruction_consistency``). 333 scenarios x 3 generated images (``N.1``-``N.3``).
* Critic prompt: the official evaluation script (``code/Gemini2.5.py``), shipped verbatim as
  ``prompts/gobench_critic.txt``; questions have their ``"N. "`` prefix removed as that script
  does; temperature 0.1, max 1500 output tokens (Sec. 2.3).
* Scores (Sec. 2.2): Optical Authenticity = sum over the 5 questions of Yes 1 / No 0 /
  Cannot determine 0.5 (0-5); Aesthetic Quality and Instruction Fidelity 1-5.
* Scaled Proximity Score (Sec. 2.3, Eq. 1): ``SPS = 1 - |S_mllm - S_gt| / delta_max`` when the
  difference is at most ``delta_max`` (0.5), else 0; averaged per dimension (Table 3).
  VLMEvalKit computes the same ``max(0, (0.5 - diff) / 0.5)``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from lensbench.core.errors import DataError
from lensbench.scoring.text import extract_json_object, strip_reasoning
from lensbench.core.resources import read_text

__all__ = [
    "ANSWERS", "POINTS", "DIMENSIONS", "DIM_TITLES", "CATEGORIES", "DELTA_MAX",
    "GORecord", "HumanGT", "ParsedReply",
    "load_records", "find_records_file", "split_questions", "load_prompt", "reality_block", "critic_prompt",
    "normalize_answer", "authenticity_score", "parse_reply", "sps", "scenario_of",
]

#: The three answers to an Optical Authenticity question (Sec. 2.2), canonical spelling.
ANSWERS = ("Yes", "No", "Cannot determine")
#: Points per answer (Sec. 2.2): Yes 1, No 0, Cannot determine 0.5.
POINTS = {"Yes": 1.0, "No": 0.0, "Cannot determine": 0.5}
#: Dimension keys used throughout (authenticity 0-5, aesthetics 1-5, fidelity 1-5).
DIMENSIONS = ("authenticity", "aesthetics", "fidelity")
#: Column titles of Tables 1-3.
DIM_TITLES = {"authenticity": "Authenticity", "aesthetics": "Aesthetics", "fidelity": "Fidelity"}
#: ``category`` value -> display name (Fig. 2: Direct light 315, Reflect light 357, Refracted light 327).
CATEGORIES = {"direct_light_images": "Direct", "reflect_light_images": "Reflect", "refracted_light_images": "Refracted"}
#: Eq. 1's maximum permissible absolute difference.
DELTA_MAX = 0.5

_REQUIRED = ("index", "category", "image", "prompt", "Questions_reality")


@dataclass(frozen=True)
class HumanGT:
    """Human ground truth of one image: mean over raters per dimension.

    ``authenticity`` 0-5, ``aesthetics`` / ``fidelity`` 1-5 (floats: means of raters);
    ``majority`` = per-question majority label (one of :data:`ANSWERS`, or None when raters tie
    or no per-question labels exist), length 5 or empty; ``n_raters`` when known.
    """

    authenticity: float | None
    aesthetics: float | None
    fidelity: float | None
    majority: tuple[str | None, ...] = ()
    n_raters: int | None = None

    def get(self, dim: str) -> float | None:
        """The score of dimension ``dim`` (a key of :data:`DIMENSIONS`)."""
        return getattr(self, dim)


@dataclass(frozen=True)
class GORecord:
    """One GOBench-Gen-1k case (an image with its scenario's prompt and questions).

    ``index`` e.g. ``"direct_light_images_1.1"``; ``image`` the release's relative path
    (``"direct_light_images/1.1.png"``); ``scenario`` ``"direct_light_images/1"``; ``variant``
    ``"1"``-``"3"`` (which of the scenario's three generations); ``questions`` the 5 reality
    questions without their ``"N. "`` prefix; ``image_path`` the resolved file (None when
    absent); ``gt`` the human ground truth when ratings were given; ``tsv_question`` the
    VLMEvalKit TSV ``question`` cell when the TSV was given.
    """

    index: str
    category: str
    image: str
    title: str
    prompt: str
    questions: tuple[str, ...]
    scenario: str
    variant: str
    image_path: str | None = None
    gt: HumanGT | None = None
    tsv_question: str | None = None

    @property
    def category_name(self) -> str:
        """Display name of the category (Direct / Reflect / Refracted)."""
        return CATEGORIES.get(self.category, self.category)


def scenario_of(image: str) -> tuple[str, str]:
    """``(scenario, variant)`` of a release image path: ``"reflect_light_images/62.3.png"`` ->
    ``("reflect_light_images/62", "3")``. A name without a variant (``"62.png"``) gives variant ``""``."""
    cat, _, name = image.replace("\\", "/").rpartition("/")
    stem = name.rsplit(".", 1)[0] if "." in name else name
    num, _, var = stem.partition(".")
    return (f"{cat}/{num}" if cat else num), var


def split_questions(text: str) -> tuple[str, ...]:
    """The questions of a ``Questions_reality`` string: non-empty lines, ``"N. "`` prefix removed.

    Mirrors the official script's ``get_reality_questions`` (a line starting with a digit and
    containing ``". "`` loses everything up to the first ``". "``).
    """
    out = []
    for line in text.split("\n"):
        q = line.strip()
        if not q:
            continue
        if q[0].isdigit() and ". " in q:
            q = q.split(". ", 1)[1]
        out.append(q)
    return tuple(out)


def find_records_file(data_dir: Path) -> Path:
    """``data_total.json`` under ``data_dir`` (the release's ``data`` folder or the repo root).

    Raises DataError naming ``data_dir`` when neither ``data_dir/data_total.json`` nor
    ``data_dir/data/data_total.json`` exists (or ``data_dir`` is the file itself).
    """
    d = Path(data_dir)
    if d.is_file():
        return d
    for cand in (d / "data_total.json", d / "data" / "data_total.json"):
        if cand.is_file():
            return cand
    raise DataError(d, "no data_total.json here or in data/ (expected the GOBench release's data folder)")


def load_records(path: Path, images_dir: Path | None = None) -> list[GORecord]:
    """Parse ``data_total.json`` into records, resolving each image against ``images_dir``
    (default: the file's folder, as the release lays it out: ``<data>/<category>/<N.M>.png``).

    A missing image leaves ``image_path=None`` (the caller decides whether that is an error).
    Raises DataError naming the file and field for invalid JSON, a missing field, a question
    list that does not have 5 questions, or a duplicated ``index``.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(path, f"not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise DataError(path, "expected a JSON list of records")
    base = Path(images_dir) if images_dir is not None else path.parent
    out: list[GORecord] = []
    seen: set[str] = set()
    for i, r in enumerate(data):
        where = f"[{i}]"
        if not isinstance(r, dict):
            raise DataError(path, "record is not an object", field=where)
        for k in _REQUIRED:
            if not isinstance(r.get(k), str) or not r.get(k).strip():
                raise DataError(path, "missing or empty string", field=f"{where}.{k}")
        if r["index"] in seen:
            raise DataError(path, f"duplicate index {r['index']!r}", field=f"{where}.index")
        seen.add(r["index"])
        qs = split_questions(r["Questions_reality"])
        if len(qs) != 5:
            raise DataError(path, f"expected 5 reality questions, found {len(qs)}", field=f"{where}.Questions_reality")
        img_rel = r["image"].replace("\\", "/")
        p = base / img_rel
        scen, var = scenario_of(img_rel)
        out.append(GORecord(index=r["index"], category=r["category"], image=img_rel, title=str(r.get("title", "")),
                            prompt=r["prompt"], questions=qs, scenario=scen, variant=var,
                            image_path=str(p) if p.is_file() else None))
    return out


# --------------------------------------------------------------------------- prompts
@lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    """Template ``lensbench/prompts/gobench_<name>.txt`` after its header's ``-----`` line.

    Names: ``critic`` (official script), ``vlmevalkit_sys`` (VLMEvalKit's SYS). Raises
    FileNotFoundError for another name, ValueError when the separator is missing.
    """
    text = read_text(__package__, "prompts", f"{name}.txt")
    _head, sep, body = text.partition("\n-----\n")
    if not sep:
        raise ValueError(f"prompt file gobench_{name}.txt has no '-----' separator line")
    return body


def reality_block(questions: Sequence[str]) -> str:
    """The official script's question block: a header line, then ``  i. Q_EN: "q"`` per question
    (each line ends in a newline; the official Chinese column is always N/A and not shown)."""
    s = "Reality Questions to Answer (provide only 'Yes', 'No', or 'Cannot Determine' for each):\n"
    if not questions:
        return s + "  (No specific reality questions provided for this case.)\n"
    for i, q in enumerate(questions, 1):
        s += f"  {i}. Q_EN: \"{q}\"\n"
    return s


def critic_prompt(prompt: str, questions: Sequence[str], model_name: str) -> str:
    """The full critic text for one image (``prompts/gobench_critic.txt`` filled in)."""
    t = load_prompt("critic")
    return (t.replace("<ENGLISH_PROMPT>", prompt).replace("<REALITY_QUESTIONS>", reality_block(questions))
            .replace("<MODEL_NAME>", model_name))


# --------------------------------------------------------------------------- parsing
_CANNOT = re.compile(r"^(cannot|can ?not|can't|cant|unable|undetermin|not determin|indetermin|not sure|unsure|uncertain|"
                     r"unknown|unclear|n/?a\b|not applicable|can't be determined|cd\b)")


def normalize_answer(value: Any) -> str | None:
    """One of :data:`ANSWERS` from a reply's answer (``"yes"``, ``"No."``, ``"**Cannot Determine**"``,
    ``"Cannot be determined"``, ``True``/``False``), or None when it is none of them."""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if not isinstance(value, str):
        return None
    s = value.strip().strip("*_`\"'[](){}\u201c\u201d\u2018\u2019").strip().lower()
    s = re.sub(r"^(a\d*|answer\s*\d*|q\d+)\s*[:.)-]\s*", "", s)
    if not s:
        return None
    if _CANNOT.match(s):
        return "Cannot determine"
    if re.match(r"^(yes|y|true)\b", s):
        return "Yes"
    if re.match(r"^(no|n|false)\b", s):
        return "No"
    return None


def authenticity_score(answers: Sequence[str]) -> float:
    """Optical Authenticity (Sec. 2.2): sum of Yes 1 / No 0 / Cannot determine 0.5; 0-5 for 5 answers.

    Raises KeyError for an answer outside :data:`ANSWERS`.
    """
    return float(sum(POINTS[a] for a in answers))


def sps(s_model: float, s_gt: float, delta_max: float = DELTA_MAX) -> float:
    """Scaled Proximity Score of one case (Eq. 1): ``1 - |d| / delta_max`` if ``|d| <= delta_max`` else 0.

    Range [0, 1]. ``delta_max`` > 0 (raises ValueError otherwise). A difference within 1e-9 of
    ``delta_max`` counts as equal (floating-point means of raters).
    """
    if delta_max <= 0:
        raise ValueError(f"delta_max must be > 0, got {delta_max}")
    d = abs(float(s_model) - float(s_gt))
    if d > delta_max + 1e-9:
        return 0.0
    return max(0.0, 1.0 - d / delta_max)


@dataclass
class ParsedReply:
    """A critic reply read into answers and ratings.

    ``answers`` 5 entries (one of :data:`ANSWERS` or None); ``aesthetics`` / ``fidelity`` 1-5 or
    None; ``total`` a stated authenticity total (VLMEvalKit-style "Total Score: x", used only when
    the answers are missing); ``method`` ``"json"`` | ``"json-repaired"`` | ``"regex"`` | None;
    ``problems`` human-readable notes on what was missing or odd.
    """

    answers: list[str | None]
    aesthetics: float | None = None
    fidelity: float | None = None
    total: float | None = None
    method: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """All three dimension scores can be computed."""
        return self.authenticity is not None and self.aesthetics is not None and self.fidelity is not None

    @property
    def authenticity(self) -> float | None:
        """Sum of the answers' points (0-5) when all 5 are valid, else the stated total, else None."""
        if self.answers and all(a is not None for a in self.answers):
            return authenticity_score(self.answers)  # type: ignore[arg-type]
        return self.total


def _key_kind(key: str) -> str | None:
    k = re.sub(r"[^a-z]", "", key.lower())
    if "reason" in k or "model" in k:
        return None
    if "aesthetic" in k:
        return "aesthetics"
    if "consisten" in k or "fidelity" in k or "instruction" in k:
        return "fidelity"
    if "reality" in k or "answer" in k or "authentic" in k or "question" in k:
        return "answers"
    return None


def _rating(v: Any) -> float | None:
    """A 1-5 rating from an int/float/string ("4", "4/5", "4 (Good)"); None when absent or out of range."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        x = float(v)
    elif isinstance(v, str):
        m = re.search(r"\d+(?:\.\d+)?", v)
        if not m:
            return None
        x = float(m.group(0))
    else:
        return None
    if math.isnan(x) or not 1.0 <= x <= 5.0:
        return None
    return x


def _answers_from(v: Any) -> list[Any] | None:
    if isinstance(v, list):
        out = []
        for a in v:
            if isinstance(a, dict):
                cand = [a[k] for k in a if re.sub(r"[^a-z]", "", k.lower()) in ("answer", "a", "response", "value")]
                out.append(cand[0] if cand else None)
            else:
                out.append(a)
        return out
    if isinstance(v, dict):
        items = sorted(v.items(), key=lambda kv: int(m.group(0)) if (m := re.search(r"\d+", kv[0])) else 10 ** 6)
        return [a for _k, a in items]
    if isinstance(v, str):
        parts = [p for p in re.split(r"[,;\n]+", v) if p.strip()]
        return parts
    return None


def _repair_json(s: str) -> str:
    s = s.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")
    s = re.sub(r",\s*([}\]])", r"\1", s)  # trailing commas
    s = re.sub(r"//[^\n\"]*\n", "\n", s)  # line comments outside strings (best effort)
    if '"' not in s:
        s = s.replace("'", '"')
    s = re.sub(r"\bTrue\b", "true", s)
    s = re.sub(r"\bFalse\b", "false", s)
    s = re.sub(r"\bNone\b", "null", s)
    return s


_NUMBERED_KEY = re.compile(r"^(?:q|question|reality|realityquestion|realityanswer|answer|a)(\d)$")


def _from_obj(obj: dict, n: int, pr: ParsedReply) -> None:
    numbered: dict[int, Any] = {}
    for k in obj:
        m = _NUMBERED_KEY.match(re.sub(r"[^a-z0-9]", "", str(k).lower()))
        if m:
            numbered[int(m.group(1))] = obj[k]
    if numbered and not any(a is not None for a in pr.answers):
        if sorted(numbered) == list(range(1, n + 1)):
            pr.answers = [normalize_answer(numbered[i]) for i in range(1, n + 1)]
        else:
            pr.problems.append(f"numbered answers {sorted(numbered)} do not cover 1-{n}")
    for k, v in obj.items():
        if re.sub(r"[^a-z0-9]", "", str(k).lower()) and _NUMBERED_KEY.match(re.sub(r"[^a-z0-9]", "", str(k).lower())):
            continue
        kind = _key_kind(str(k))
        if kind == "answers" and not any(a is not None for a in pr.answers):
            raw = _answers_from(v)
            if raw is not None:
                pr.answers = _fit([normalize_answer(a) for a in raw], n, pr)
        elif kind == "aesthetics" and pr.aesthetics is None:
            pr.aesthetics = _rating(v)
        elif kind == "fidelity" and pr.fidelity is None:
            pr.fidelity = _rating(v)
        elif isinstance(v, dict):
            _from_obj(v, n, pr)


def _fit(answers: list[str | None], n: int, pr: ParsedReply) -> list[str | None]:
    if len(answers) != n:
        pr.problems.append(f"{len(answers)} answers for {n} questions")
        return [None] * n
    return answers


_ANS_WORD = r"(yes|no|cannot\s+(?:be\s+)?determined?|can't\s+(?:be\s+)?determined?|can\s*not\s+(?:be\s+)?determined?)"


def _regex_fill(text: str, n: int, pr: ParsedReply) -> None:
    if not any(a is not None for a in pr.answers):
        m = re.search(r"realityAnswers?[_\w]*\W{0,6}\[(.*?)\]", text, re.IGNORECASE | re.DOTALL)
        if m:
            found = re.findall(r"[\"']([^\"']*)[\"']", m.group(1)) or m.group(1).split(",")
            pr.answers = _fit([normalize_answer(a) for a in found], n, pr)
        else:
            got: dict[int, str | None] = {}
            for mm in re.finditer(r"(?im)^\W*(?:q(?:uestion)?\s*)?([1-9])\s*[.:)\]-]\s*(?:.*?[?:]\s*)?\W*" + _ANS_WORD + r"\b",
                                  text):
                i = int(mm.group(1))
                if 1 <= i <= n and i not in got:
                    got[i] = normalize_answer(mm.group(2))
            if len(got) == n:
                pr.answers = [got[i] for i in range(1, n + 1)]
    if pr.aesthetics is None:
        m = re.search(r"aesthetics?(?:\s*quality)?(?:\s*rating)?(?:_eval)?\W{0,8}(\d(?:\.\d+)?)(?:\s*/\s*5)?", text, re.IGNORECASE)
        if m:
            pr.aesthetics = _rating(m.group(1))
    if pr.fidelity is None:
        m = re.search(r"(?:instruction\s*consistency|consistency|instruction\s*fidelity|fidelity)(?:\s*rating)?(?:_eval)?"
                      r"\W{0,8}(\d(?:\.\d+)?)(?:\s*/\s*5)?", text, re.IGNORECASE)
        if m:
            pr.fidelity = _rating(m.group(1))
    if pr.total is None:
        m = re.search(r"Total Score(?: for Reality Assessment)?\W{0,8}(\d+(?:\.\d+)?)", text, re.IGNORECASE)
        if m:
            x = float(m.group(1))
            pr.total = x if 0.0 <= x <= 5.0 else None


_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def parse_reply(text: str | None, n_questions: int = 5) -> ParsedReply:
    """Read a critic reply: strict JSON first, then a repaired JSON object, then regexes.

    Steps: strip reasoning traces (:func:`lensbench.parsing.strip_reasoning`) and code fences;
    take the first balanced ``{...}``; ``json.loads`` it (else after repairs: smart quotes,
    trailing commas, single quotes, Python literals); keys are matched by meaning
    (``realityAnswers_Eval`` / ``answers`` ..., ``aestheticsRating_Eval`` / ``aesthetics``,
    ``consistencyRating_Eval`` / ``fidelity`` ...). Missing pieces are then looked for with
    regexes on the text (a ``realityAnswers_Eval`` list, numbered ``1. Yes`` lines,
    ``Aesthetics Rating: 4``, ``Instruction Consistency Rating: 3/5``, ``Total Score: 3.5``).
    Ratings must lie in 1-5 and an answer list must have exactly ``n_questions`` entries; what
    is not found stays None (see :attr:`ParsedReply.complete`). Never evaluates reply text.
    """
    pr = ParsedReply(answers=[None] * n_questions)
    s = strip_reasoning(text)
    s = re.sub(r"```(?:json|JSON)?", "", s).strip()
    s = s.translate(_SMART_QUOTES)
    if not s:
        pr.problems.append("empty reply")
        return pr
    blob = extract_json_object(s)
    if blob is not None:
        obj = None
        try:
            obj = json.loads(blob)
            pr.method = "json"
        except json.JSONDecodeError:
            try:
                obj = json.loads(_repair_json(blob))
                pr.method = "json-repaired"
            except json.JSONDecodeError:
                pr.problems.append("JSON object did not parse")
        if isinstance(obj, dict):
            _from_obj(obj, n_questions, pr)
    before = (tuple(pr.answers), pr.aesthetics, pr.fidelity)
    if not pr.complete:
        _regex_fill(s, n_questions, pr)
        if (tuple(pr.answers), pr.aesthetics, pr.fidelity) != before or pr.method is None:
            pr.method = "regex" if pr.complete else pr.method
    if any(a is None for a in pr.answers) and pr.total is None:
        bad = [i + 1 for i, a in enumerate(pr.answers) if a is None]
        pr.problems.append(f"no valid answer for question(s) {bad}")
    if pr.aesthetics is None:
        pr.problems.append("no aesthetics rating in 1-5")
    if pr.fidelity is None:
        pr.problems.append("no instruction-consistency rating in 1-5")
    return pr
