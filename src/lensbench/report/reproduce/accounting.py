"""Tokens, latency and cost per run, thinking tokens apart, and accuracy against tokens.

Read from the runs' sample records (``usage`` as the server returned it, ``latency_s`` of the final
attempt): the model requests recorded in ``samples.jsonl``; answer-parser and judge calls are not
counted (they are not in the records' usage). Token fields: ``prompt_tokens`` / ``completion_tokens``
(OpenAI-compatible servers) or ``input_tokens`` / ``output_tokens``; thinking tokens from
``completion_tokens_details.reasoning_tokens`` (or ``output_tokens_details`` / a top-level
``reasoning_tokens``). A run whose server did not report thinking tokens apart shows how many replies
carried reasoning instead. Cost: ``--price RUN=IN,OUT`` in US dollars per million input / output tokens
(thinking tokens are billed as output). A replayed run (``--model replay:``) has the replay's latency,
not the model's: marked.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from lensbench.core.records import SampleRecord
from lensbench.report.reproduce.context import Context, RunView
from lensbench.report.reproduce.model import Section
from lensbench.report.reproduce.plots import scatter
from lensbench.scoring.bootstrap import bootstrap_ci

__all__ = ["usage_totals", "accounting_section"]


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _thinking(u: Mapping[str, Any]) -> int | None:
    for k in ("completion_tokens_details", "output_tokens_details"):
        d = u.get(k)
        if isinstance(d, Mapping) and _int(d.get("reasoning_tokens")) is not None:
            return _int(d.get("reasoning_tokens"))
    return _int(u.get("reasoning_tokens"))


def usage_totals(records: list[SampleRecord]) -> dict[str, Any]:
    """Totals over the records with a reply: ``requests``, ``with_usage``, ``input``, ``output``, ``thinking``
    (None when no reply reported it), ``thinking_reported`` (replies that did), ``with_reasoning`` (replies
    carrying reasoning text or a ``<think>`` block), ``latency`` (seconds, list)."""
    out: dict[str, Any] = {"requests": 0, "with_usage": 0, "input": 0, "output": 0, "thinking": None,
                           "thinking_reported": 0, "with_reasoning": 0, "latency": []}
    for r in records:
        if r.outcome == "error":
            continue
        out["requests"] += 1
        if r.reasoning or (r.reply and "<think>" in r.reply):
            out["with_reasoning"] += 1
        if r.latency_s is not None:
            out["latency"].append(float(r.latency_s))
        u = r.usage or {}
        inp = _int(u.get("prompt_tokens", u.get("input_tokens")))
        outp = _int(u.get("completion_tokens", u.get("output_tokens")))
        if inp is None and outp is None:
            continue
        out["with_usage"] += 1
        out["input"] += inp or 0
        out["output"] += outp or 0
        th = _thinking(u)
        if th is not None:
            out["thinking"] = (out["thinking"] or 0) + th
            out["thinking_reported"] += 1
    return out


def _cost(t: Mapping[str, Any], price: tuple[float, float] | None) -> str:
    if price is None:
        return "no price (--price RUN=IN,OUT)"
    if not t["with_usage"]:
        return "no token counts"
    return f"${(t['input'] * price[0] + t['output'] * price[1]) / 1e6:,.4f}"


def _headline(ctx: Context, view: RunView) -> tuple[str, float | None, float | None, float | None]:
    key, cat = ctx.paper.headline.get(view.benchmark, ("", ""))
    t = ctx.tables(view).get(key)
    if t is None or cat not in t.categories:
        return f"{key} {cat}".strip(), None, None, None
    d = ctx.design(view.benchmark)
    iv = bootstrap_ci(t, cat, n_resamples=d.n_resamples, seed=d.seed, level=d.level)
    return f"{key} {cat}", iv.value, iv.low, iv.high


def accounting_section(ctx: Context) -> Section:
    """The accounting section (module docstring): one row per run, and accuracy vs mean output tokens as a
    figure when matplotlib is installed."""
    sec = Section("Cost", "Tokens, latency and cost per run (thinking tokens apart); accuracy vs tokens")
    sec.columns = ["run", "score", "value", "95% CI", "requests", "input tokens", "output tokens", "thinking tokens",
                   "output / request", "latency mean (s)", "latency p95 (s)", "cost"]
    points = []
    for v in ctx.views:
        t = usage_totals(ctx.records(v))
        name, val, lo, hi = _headline(ctx, v)
        lat = t["latency"]
        p95 = statistics.quantiles(lat, n=20, method="inclusive")[-1] if len(lat) >= 2 else (lat[0] if lat else None)
        per = t["output"] / t["with_usage"] if t["with_usage"] else None
        if t["thinking"] is not None:
            thinking = f"{t['thinking']:,} ({t['thinking_reported']} replies)"
        else:
            thinking = f"not reported apart ({t['with_reasoning']} replies with reasoning)"
        replay = str(v.run.manifest.get("model_spec") or "").startswith("replay:")
        sec.rows.append([v.label, name, val, None if lo is None else f"[{lo:.2f}, {hi:.2f}]", t["requests"],
                         t["input"] if t["with_usage"] else "not reported", t["output"] if t["with_usage"] else
                         "not reported", thinking, per,
                         (statistics.fmean(lat) if lat else None) if not replay else "replayed",
                         p95 if not replay else "replayed", _cost(t, ctx.prices.get(str(v.path.resolve())))])
        if per is not None and val is not None:
            points.append((v.label, per, val))
    sec.notes.append("Model requests recorded in samples.jsonl; answer-parser and judge calls are not counted. "
                     "Latency of a replayed run is the replay's, not the model's.")
    if len(points) >= 2:
        sec.figure = scatter(points, "output tokens per request (thinking included)", "score", "Accuracy vs tokens")
    elif ctx.views:
        sec.notes.append("Accuracy vs tokens needs two or more runs whose server reported token counts.")
    return sec
