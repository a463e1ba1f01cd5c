"""Rejection negatives for GroundingME's data-mixing study (paper Sec. 5.3, Table 5).

An LLM edits the description of each RefCOCOg-style item so that it no longer matches the
object (one of the four Rejection L-2 error types: Appearance, Component, Text, State); the
negatives (``bbox: null``) are mixed with positives at a NEG:POS ratio. The editing prompt
(``prompts/negative.txt``) is lensbench's own: the paper does not publish one.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lensbench.benchmarks.groundingme.parse import FENCE
from lensbench.benchmarks.groundingme.prompts import template_body
from lensbench.core.errors import ConfigError, DataError
from lensbench.core.resources import read_text
from lensbench.core.types import GenParams, Message, Request, StoredResponse
from lensbench.scoring.text import extract_json_object, strip_reasoning
from lensbench.core.extras import require
from lensbench.core.jsonl import read_jsonl

__all__ = ["NEG_ATTRIBUTES", "PAPER_RATIOS", "parse_ratio", "read_refexp_source", "parse_edit_reply",
           "mix_negatives", "build_negatives", "negative_template"]

NEG_ATTRIBUTES: tuple[str, ...] = ("Appearance", "Component", "Text", "State")
#: neg:pos ratios of Sec. 5.3 / Table 5.
PAPER_RATIOS: tuple[str, ...] = ("1:8", "1:4", "1:2", "1:1", "2:1")


def parse_ratio(ratio: str) -> tuple[int, int]:
    """``"NEG:POS"`` -> (neg, pos), both positive ints. Raises ConfigError."""
    m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", ratio or "")
    if not m or int(m.group(1)) <= 0 or int(m.group(2)) <= 0:
        raise ConfigError(f"--ratio must be NEG:POS with positive integers (e.g. 1:2), got {ratio!r}")
    return int(m.group(1)), int(m.group(2))


def read_refexp_source(path: Path) -> list[dict[str, Any]]:
    """RefCOCOg-style items from JSON (list, or {"annotations"/"data"/"items": [...]}), JSONL or
    parquet. Each item needs a description (``description``, ``sentence``, ``sent``, ``caption``,
    ``expression``, ``ref``, or ``sentences[0].sent``) and keeps every other field.
    Raises DataError naming the file and the missing field."""
    p = Path(path)
    if not p.is_file():
        raise DataError(p, "source file not found")
    if p.suffix.lower() == ".parquet":
        pq = require("pyarrow.parquet", "data", "reading parquet files")

        items = pq.read_table(p).to_pylist()
    elif p.suffix.lower() == ".jsonl":
        items = read_jsonl(p, "items file")
    else:
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DataError(p, f"not valid JSON: {exc}") from None
        if isinstance(data, dict):
            for k in ("annotations", "data", "items", "refs"):
                if isinstance(data.get(k), list):
                    data = data[k]
                    break
        if not isinstance(data, list):
            raise DataError(p, "expected a list of items (or an object with an 'annotations' list)")
        items = data
    out = []
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            raise DataError(p, f"item {i} is not an object")
        desc = None
        for k in ("description", "sentence", "sent", "caption", "expression", "ref", "raw"):
            if isinstance(it.get(k), str) and it[k].strip():
                desc = it[k]
                break
        if desc is None and isinstance(it.get("sentences"), list) and it["sentences"]:
            s0 = it["sentences"][0]
            desc = s0.get("sent") or s0.get("raw") if isinstance(s0, dict) else (s0 if isinstance(s0, str) else None)
        if not desc:
            raise DataError(p, f"item {i} has no description", field="description")
        out.append({**it, "description": desc})
    return out


def parse_edit_reply(text: str | None) -> str | None:
    """The edited description from the builder LLM's reply (``{"description": "..."}``, tolerant
    of reasoning and fences; a bare line of text is accepted); None when empty."""
    s = FENCE.sub("", strip_reasoning(text)).strip()
    obj = extract_json_object(s)
    if obj:
        for cand in (obj, obj.replace("'", '"')):
            try:
                d = json.loads(cand)
                if isinstance(d, dict) and isinstance(d.get("description"), str) and d["description"].strip():
                    return d["description"].strip()
            except json.JSONDecodeError:
                continue
    s = s.strip().strip('"').strip()
    return s or None


def mix_negatives(positives: list[dict[str, Any]], negatives: list[dict[str, Any]], ratio: str, seed: int,
                  total: int | None = None) -> list[dict[str, Any]]:
    """Sample a mixture with ``neg:pos`` = ``ratio`` (Sec. 5.3: 1:8 ... 2:1), seeded.

    ``total`` items (default: as many as the pools allow at that ratio); counts are
    ``round(total * neg / (neg + pos))`` negatives and the rest positives, drawn without
    replacement by ``random.Random(seed)`` and shuffled together. Raises ConfigError when a
    pool is too small for the request."""
    neg, pos = parse_ratio(ratio)
    max_total = min(len(negatives) * (neg + pos) // neg, len(positives) * (neg + pos) // pos)
    total = max_total if total is None else total
    n_neg = round(total * neg / (neg + pos))
    n_pos = total - n_neg
    if n_neg > len(negatives) or n_pos > len(positives):
        raise ConfigError(f"ratio {ratio} with {total} items needs {n_neg} negatives and {n_pos} positives; "
                          f"have {len(negatives)} and {len(positives)}")
    rng = random.Random(seed)
    mix = rng.sample(negatives, n_neg) + rng.sample(positives, n_pos)
    rng.shuffle(mix)
    return mix


def negative_template() -> str:
    """The editing prompt (``prompts/negative.txt`` after its header), with ``{description}``
    and ``{attribute}`` placeholders."""
    return template_body(read_text(__package__, "prompts", "negative.txt"), "negative")


async def build_negatives(items: list[dict[str, Any]],
                          generate: Callable[[list[Request]], Awaitable[dict[str, StoredResponse]]], *, seed: int = 0,
                          params: GenParams | None = None, kinds: list[str] | None = None) -> list[dict[str, Any]]:
    """Edit each item's description into a Rejection negative with an LLM (Sec. 5.3).

    The attribute type (Appearance / Component / Text / State) is drawn per item by
    ``random.Random(seed)`` unless ``kinds`` gives one per item (GroundingME construction keeps
    the L-2 of the Discriminative item it edits); ``generate(requests) -> {id: StoredResponse}`` sends the requests
    (e.g. :meth:`lensbench.runtime.session.Session.generate`). Returns negatives: the item with
    the edited ``description``, ``bbox: null``, ``source_description``, ``negative_type``;
    items whose edit failed or came back unchanged are skipped (``skipped`` counts in the caller)."""
    rng = random.Random(seed)
    tmpl = negative_template()
    kinds = list(kinds) if kinds is not None else [rng.choice(NEG_ATTRIBUTES) for _ in items]
    if len(kinds) != len(items) or not set(kinds) <= set(NEG_ATTRIBUTES):
        raise ValueError(f"kinds: one of {NEG_ATTRIBUTES} per item needed, got {kinds!r}")
    reqs = []
    for i, (it, kind) in enumerate(zip(items, kinds)):
        text = tmpl.replace("{description}", it["description"]).replace("{attribute}", kind)
        reqs.append(Request(id=f"neg/{i}", messages=(Message.user(text),), params=params or GenParams(temperature=0.0),
                            meta={"negative_type": kind}))
    out = await generate(reqs)
    negs = []
    for i, (it, kind) in enumerate(zip(items, kinds)):
        r = out[f"neg/{i}"]
        edited = parse_edit_reply(r.text) if r.ok else None
        if not edited or edited.strip() == it["description"].strip():
            continue
        neg = {k: v for k, v in it.items() if k not in ("sentences",)}
        neg.update({"description": edited, "bbox": None, "source_description": it["description"],
                    "negative_type": kind, "label": "negative"})
        negs.append(neg)
    return negs
