"""Best-of-N test-time scaling (paper Sec. 5.2, Table 4): N samples per item and a judge that
picks one of them in a pairwise knockout (:mod:`lensbench.scoring.knockout`).

Judges (``--bon-judge``):

* ``text-full-responses`` (Table 11): a text-only LLM reads the instruction and the two full
  responses, reasoning included;
* ``mm-image-boxes`` (Table 10): a multimodal LLM sees the image, the instruction and the two
  boxes as written by the model.

The first judge call of a match is greedy; a retry (no ``\\boxed{A|B}`` verdict) is sent with
temperature 0.7 and seed = attempt number. After ``--judge-retries`` retries candidate A (the
lower sample index) advances.
"""

from __future__ import annotations

import json
from typing import Any

from lensbench.benchmarks.groundingme.data import GMSample
from lensbench.benchmarks.groundingme.parse import full_response, parse_judge_verdict
from lensbench.benchmarks.groundingme.prompts import load_prompt
from lensbench.benchmarks.context import RunContext
from lensbench.core.types import GenParams, ImagePart, Message, Request, StoredResponse
from lensbench.scoring.knockout import Knockout, run_knockouts

__all__ = ["JUDGE_MODES", "judge_kind", "candidate_id", "bon_summary", "run_tournament"]

#: ``--bon-judge`` values -> the judge's input kind (``"text"``: Table 11, ``"mm"``: Table 10).
JUDGE_MODES: dict[str, str] = {"text-full-responses": "text", "mm-image-boxes": "mm"}
FALLBACK_RULE = "candidate A (lower sample index) advances"


def judge_kind(mode: str) -> str:
    """``"text"`` or ``"mm"`` for a ``--bon-judge`` value. Raises KeyError for an unknown one."""
    return JUDGE_MODES[mode]


def candidate_id(sample_id: str, k: int, n: int) -> str:
    """Request id of sample ``k`` of ``n`` for an item: the item id when ``n == 1``, else ``id#k``."""
    return sample_id if n == 1 else f"{sample_id}#{k}"


def _box_text(c: dict[str, Any]) -> str:
    """A candidate's answer as shown to the multimodal judge: its box as written, ``null`` for
    a rejection, or a note that no box could be read."""
    if c.get("parse") == "rejected":
        return "null"
    if c.get("raw_bbox") is None:
        return "none (no box could be parsed)"
    return json.dumps([int(v) if float(v).is_integer() else v for v in c["raw_bbox"]])


def _judge_request(s: GMSample, a: int, b: int, rnd: int, attempt: int, *, tmpl: str, kind: str,
                   cands: list[dict[str, Any]], replies: dict[str, StoredResponse], part: ImagePart, prompt: str,
                   n: int, bench_name: str) -> Request:
    if kind == "text":
        text = (tmpl.replace("{instruction}", prompt)
                .replace("{response_a}", full_response(replies[candidate_id(s.id, a, n)]))
                .replace("{response_b}", full_response(replies[candidate_id(s.id, b, n)])))
        msg = Message.user(text)
    else:
        text = (tmpl.replace("{instruction}", prompt).replace("{bbox_a}", _box_text(cands[a]))
                .replace("{bbox_b}", _box_text(cands[b])))
        msg = Message.user(part, text)
    params = GenParams(temperature=0.0) if attempt == 0 else GenParams(temperature=0.7, seed=attempt)
    return Request(id=f"judge/{s.id}/r{rnd}/{a}v{b}/t{attempt}", messages=(msg,), params=params, role="judge",
                   meta={"benchmark": bench_name, "sample_id": s.id, "judge_mode": kind, "pair": [a, b]})


async def run_tournament(samples: list[GMSample], cands_all: dict[str, list[dict[str, Any]]],
                         replies: dict[str, StoredResponse], parts: dict[str, tuple[ImagePart, str]],
                         ctx: RunContext, *, mode: str, retries: int, n: int,
                         bench_name: str = "groundingme", swap: bool = False) -> dict[str, Knockout]:
    """One knockout per item over its candidates (``cands_all[id][k]``, dicts with ``status``,
    ``parse``, ``raw_bbox``). Candidates whose request failed in transport are dropped before
    the first round (an item with none left keeps candidate 0). ``parts[id]`` = (image, prompt)
    as sent to the model. ``swap``: each pair is shown with the later candidate as A (``--bon-judge-order
    swapped``) and the verdict is mapped back, so a judge without position bias picks the same winners.
    Returns ``{item id: Knockout}``."""
    kind = judge_kind(mode)
    tmpl = load_prompt("judge_text" if kind == "text" else "judge_mm")
    by_id = {s.id: s for s in samples}
    entrants = {}
    for s in samples:
        ok = [c["sample_index"] for c in cands_all[s.id] if c["status"] != "error"]
        entrants[s.id] = ok or [0]

    def make(item: str, a: int, b: int, rnd: int, attempt: int) -> Request:
        part, prompt = parts[item]
        first, second = (b, a) if swap else (a, b)
        return _judge_request(by_id[item], first, second, rnd, attempt, tmpl=tmpl, kind=kind, cands=cands_all[item],
                              replies=replies, part=part, prompt=prompt, n=n, bench_name=bench_name)

    def verdict(text: str | None) -> str | None:
        v = parse_judge_verdict(text)
        return {"A": "B", "B": "A"}.get(v, v) if swap and v is not None else v

    async def gen(reqs, label):
        return await ctx.generate(reqs, label=label)

    return await run_knockouts(entrants, make, gen, verdict, retries=retries, label="groundingme-judge")


def bon_summary(cands: list[dict[str, Any]], selected: int, n: int) -> dict[str, Any]:
    """Table 4 facts of one item: ``n``, ``n_valid`` (replies without transport error),
    ``mean_hit`` (fraction of valid samples correct at 0.5; None without any), ``oracle_hit``
    (any valid sample correct), ``selected_hit`` (the selected sample's correctness; None when
    it failed in transport) and the per-sample ``samples`` list."""
    valid = [c for c in cands if c["status"] != "error"]
    pick = cands[selected]
    return {
        "n": n, "n_valid": len(valid),
        "mean_hit": (sum(c["hit"] for c in valid) / len(valid)) if valid else None,
        "oracle_hit": any(c["hit"] for c in valid),
        "selected_hit": bool(pick["hit"]) if pick["status"] != "error" else None,
        "samples": [{"i": c["sample_index"], "status": c["status"], "outcome": c["parse"],
                     "raw_bbox": c.get("raw_bbox"), "pred_bbox": c.get("pred_bbox"), "iou": c.get("iou"),
                     "hit": c["hit"]} for c in cands],
    }
