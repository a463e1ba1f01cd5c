"""Visual check of rejection negatives (GroundingME Sec. 5.3): an image-aware model, called through
lensbench's engine (cached, resumable), confirms that an edited description matches no object
in its image. The paper's negatives were refined by people; a text-only edit can still describe
another object (``prompts/visual_check.txt``, lensbench's own wording).

Verdicts per negative (``visual_check`` field): ``no-match`` (the model said no: kept),
``matches`` (the model said yes: dropped), ``unclear`` (no yes/no in the reply) and ``error``
(transport failure, never read as a verdict): kept only with ``keep_unclear``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from lensbench.benchmarks.groundingme.prompts import template_body
from lensbench.core.resources import read_text
from lensbench.core.types import GenParams, ImagePart, Message, Request, StoredResponse
from lensbench.scoring.text import parse_yes_no

__all__ = ["check_template", "visual_check", "check_requests"]

Generate = Callable[[list[Request], str], Awaitable[dict[str, StoredResponse]]]


def check_template() -> str:
    """The check prompt (``prompts/visual_check.txt`` after its header) with ``{description}``."""
    return template_body(read_text(__package__, "prompts", "visual_check.txt"), "visual_check")


def check_requests(negatives: list[dict[str, Any]], params: GenParams | None = None) -> list[Request]:
    """One request per negative: its image, then the check prompt (id ``vcheck/<i>``)."""
    tmpl = check_template()
    p = params or GenParams(temperature=0.0, max_tokens=64)
    return [Request(id=f"vcheck/{i}", params=p,
                    messages=(Message.user(ImagePart.of(n["image"]), tmpl.replace("{description}", n["description"])),))
            for i, n in enumerate(negatives)]


async def visual_check(negatives: list[dict[str, Any]], generate: Generate, *, keep_unclear: bool = False,
                       params: GenParams | None = None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """``(kept negatives with their ``visual_check`` verdict, counts per verdict)`` (module
    docstring). ``generate(requests, label)`` is :meth:`lensbench.runtime.session.Session.generate`.
    Negatives need an ``image`` path (grounding items)."""
    reqs = check_requests(negatives, params)
    got = await generate(reqs, "visual-check")
    kept, counts = [], Counter()
    for n, r in zip(negatives, reqs):
        rep = got.get(r.id)
        if rep is None or not rep.ok:
            verdict = "error"
        else:
            yn = parse_yes_no(rep.text)
            verdict = "no-match" if yn == "No" else "matches" if yn == "Yes" else "unclear"
        counts[verdict] += 1
        if verdict == "no-match" or (keep_unclear and verdict in ("unclear", "error")):
            kept.append({**n, "visual_check": verdict})
    return kept, dict(counts)
