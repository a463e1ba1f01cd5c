"""IF-Bench question generation (paper Sec. 3.2 "Automatic Generation", Fig. 14): prompt, requests,
reply parsing and the release-schema check of every generated question.

Per image, 4 of the 10 dimensions are drawn (seeded by the image's key, so adding images changes
no other image's draw); an image with target annotations always gets Target Localization and the
Fig. 14 "(Optional)" paragraph with its targets. The model sees the Fig. 14 system prompt and the
image; its reply (a JSON list as in the figure's example, trailing commas and code fences
tolerated) gives at most 4 questions, each checked against the release schema
(:class:`ReleaseQuestion`, the fields of ``evaluate/if_bench/if_bench.json``).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError, field_validator

from lensbench.benchmarks.ifbench.data import DIMENSIONS
from lensbench.benchmarks.ifbench.prompts import LETTERS
from lensbench.core.resources import read_text
from lensbench.core.types import GenParams, ImagePart, Message, Request, TextPart
from lensbench.scoring.text import strip_reasoning

__all__ = ["Target", "SourceImage", "ReleaseQuestion", "generation_template", "sample_dimensions", "target_text",
           "build_prompt", "generation_request", "parse_reply", "Checked"]

TL = "Target Localization"
_OPTIONAL = re.compile(r"\n\n\(Optional\)[^\n]*")


@dataclass(frozen=True)
class Target:
    """An annotated target: ``description`` and its box ``(cx, cy, w, h)`` normalized to 0-1."""

    description: str
    cx: float
    cy: float
    w: float
    h: float


@dataclass(frozen=True)
class SourceImage:
    """A collected image: ``key`` (``<dataset>/<relative path>``), ``path``, ``dataset`` (its
    sub-folder, InfPre's source), pixel ``size`` (W, H), ``targets`` (annotations, may be empty)."""

    key: str
    path: str
    dataset: str
    size: tuple[int, int]
    targets: tuple[Target, ...] = field(default_factory=tuple)


_Dimension = Literal.__getitem__(tuple(DIMENSIONS))  # one of the 10 names
_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class ReleaseQuestion(BaseModel):
    """One question as the release stores it (``record["question"]``); extra keys are dropped.

    Raises pydantic's ValidationError naming the field: a dimension outside the 10, an empty
    question, options other than exactly A-D with distinct non-empty texts, an answer outside A-D.
    """

    model_config = ConfigDict(extra="ignore")
    dimension: _Dimension  # type: ignore[valid-type]
    en_question: _Text
    en_options: dict[str, str]
    answer: Literal["A", "B", "C", "D"]
    cn_question: _Text
    cn_options: dict[str, str]

    @field_validator("en_options", "cn_options")
    @classmethod
    def _options(cls, v: dict[str, str]) -> dict[str, str]:
        if sorted(v) != list(LETTERS):
            raise ValueError(f"options must have exactly the keys A, B, C, D, got {list(v)}")
        texts = [v[k].strip() for k in LETTERS]
        if not all(texts) or len(set(texts)) != 4:
            raise ValueError("options must be 4 distinct non-empty texts")
        return dict(zip(LETTERS, texts))

    def release(self) -> dict[str, Any]:
        """The ``question`` object in the release's key order."""
        return {"dimension": self.dimension, "en_question": self.en_question, "en_options": self.en_options,
                "answer": self.answer, "cn_question": self.cn_question, "cn_options": self.cn_options}


def generation_template() -> str:
    """The Fig. 14 system prompt (``prompts/generation.txt`` after its header), placeholders kept."""
    raw = read_text(__package__, "prompts", "generation.txt")
    _head, sep, body = raw.partition("\n-----\n")
    if not sep:
        raise ValueError("prompts/generation.txt lacks its '-----' header separator")
    return body


def sample_dimensions(key: str, seed: int, has_targets: bool, k: int = 4) -> list[str]:
    """``k`` distinct dimensions for the image ``key`` (Table 2 order), drawn by
    ``random.Random(f"{seed}:{key}")``; Target Localization always among them when ``has_targets``."""
    rng = random.Random(f"{seed}:{key}")
    names = list(DIMENSIONS)
    if has_targets:
        chosen = {TL, *rng.sample([d for d in names if d != TL], k - 1)}
    else:
        chosen = set(rng.sample(names, k))
    return [d for d in names if d in chosen]


def target_text(targets: Sequence[Target]) -> str:
    """``[(description, cx, cy, w, h), ...]`` with 2 significant digits, as the release's ``pos_info``."""
    return "[" + ", ".join(pos_info(t) for t in targets) + "]"


def pos_info(t: Target) -> str:
    """One target as the release writes it: ``(Bicycles ..., 0.38, 0.64, 0.14, 0.1)``."""
    return "(" + ", ".join([t.description] + [f"{v:.2g}" for v in (t.cx, t.cy, t.w, t.h)]) + ")"


def build_prompt(dimensions: Sequence[str], targets: Sequence[Target]) -> str:
    """The Fig. 14 system prompt for one image: the dimension list filled in; the "(Optional)"
    paragraph with ``<target_position>`` filled when there are targets, else left out."""
    text = generation_template().replace("<sampled_dimensin_list>", ", ".join(dimensions))
    if targets:
        return text.replace("<target_position>", target_text(targets))
    return _OPTIONAL.sub("", text, count=1)


def generation_request(img: SourceImage, seed: int, params: GenParams) -> Request:
    """The request for one image: system = the filled Fig. 14 prompt, user = the image."""
    dims = sample_dimensions(img.key, seed, bool(img.targets))
    return Request(id=f"gen/{img.key}", params=params,
                   messages=(Message(role="system", parts=(TextPart(text=build_prompt(dims, img.targets)),)),
                             Message.user(ImagePart.of(img.path))),
                   meta={"dimensions": dims})


@dataclass
class Checked:
    """The questions read from one reply: ``valid`` release ``question`` objects (at most 4) and
    ``rejected`` as ``(reason, detail)`` pairs (reason: ``no JSON list``, ``not an object``,
    ``schema: <field>``, ``dimension not requested``, ``repeated dimension``, ``over 4``)."""

    valid: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)


def _json_list(text: str) -> list | None:
    s = strip_reasoning(text or "")
    s = re.sub(r"```(?:json)?", "", s)
    start, end = s.find("["), s.rfind("]")
    if start < 0 or end <= start:
        return None
    body = s[start:end + 1]
    for cand in (body, re.sub(r",\s*([\]}])", r"\1", body)):
        try:
            val = json.loads(cand)
            return val if isinstance(val, list) else None
        except json.JSONDecodeError:
            continue
    return None


def parse_reply(text: str | None, requested: Sequence[str]) -> Checked:
    """Validate a generation reply against the release schema and the request's dimensions."""
    out = Checked()
    items = _json_list(text or "")
    if items is None:
        out.rejected.append(("no JSON list", (text or "")[:200]))
        return out
    seen: set[str] = set()
    for it in items:
        if not isinstance(it, dict):
            out.rejected.append(("not an object", str(it)[:200]))
            continue
        try:
            q = ReleaseQuestion.model_validate(it)
        except ValidationError as exc:
            err = exc.errors()[0]
            out.rejected.append((f"schema: {'.'.join(str(x) for x in err['loc'])}", err["msg"][:200]))
            continue
        if q.dimension not in requested:
            out.rejected.append(("dimension not requested", q.dimension))
        elif q.dimension in seen:
            out.rejected.append(("repeated dimension", q.dimension))
        elif len(out.valid) >= 4:
            out.rejected.append(("over 4", q.dimension))
        else:
            seen.add(q.dimension)
            out.valid.append(q.release())
    return out
