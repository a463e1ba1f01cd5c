"""Token, latency and cost accounting of ``lensbench reproduce`` (thinking tokens apart, --price, replayed
runs marked), against sums computed here; the price flag's parsing; the markdown and HTML carry the table."""

from __future__ import annotations

import statistics

import pytest
from reproduce_craft import B, rec, write

from lensbench.benchmarks.rgbth.data import SKILLS
from lensbench.benchmarks.rgbth.reproduce import paper
from lensbench.cli.reproduce import parse_price
from lensbench.core.errors import ConfigError
from lensbench.views.reproduce import reproduce
from lensbench.report.reproduce.accounting import usage_totals
from lensbench.views.reproduce_html import render_html
from lensbench.report.reproduce.render_md import render_markdown

NAME = "rgb-th-bench"


def _records(thinking: bool, n_scenes: int = 4) -> list:
    out = []
    for s in range(n_scenes):
        for skill, (abbrev, group) in SKILLS.items():
            for j in range(4):
                i = len(out)
                usage = {"prompt_tokens": 100 + i % 7, "completion_tokens": 5 + (40 if thinking else 0) + i % 3}
                if thinking:
                    usage["completion_tokens_details"] = {"reasoning_tokens": 40}
                out.append(rec(NAME, f"s{s}/{abbrev}/{j}", "correct" if (i % 5) else "wrong", usage=usage,
                               latency_s=0.1 * (1 + i % 10), reasoning="think" if thinking else None,
                               labels={"skill": skill, "abbrev": abbrev, "group": group, "scene": f"s{s}",
                                       "extra": False}))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("acct")
    write(root / "think", NAME, "m-think", _records(True), {"input": "rgb+thermal"})
    write(root / "plain", NAME, "m-plain", _records(False), {"input": "rgb+thermal"})
    write(root / "replay", NAME, "m-replay", _records(False), {"input": "rgb+thermal"},
          manifest={"model_spec": "replay:/x.json"})
    return root


def test_usage_totals_hand_summed():
    recs = _records(True, 1) + [rec(NAME, "e", "error", usage={"prompt_tokens": 999})]
    t = usage_totals(recs)
    scored = recs[:-1]
    assert t["requests"] == len(scored) == t["with_usage"] == t["thinking_reported"] == t["with_reasoning"]
    assert t["input"] == sum(r.usage["prompt_tokens"] for r in scored)  # the failed call is not counted
    assert t["output"] == sum(r.usage["completion_tokens"] for r in scored)
    assert t["thinking"] == 40 * len(scored)
    assert usage_totals(_records(False, 1))["thinking"] is None


def test_accounting_section(runs):
    rep = reproduce(paper(), [runs / "think", runs / "plain", runs / "replay"],
                    prices={str(runs / "think"): (2.0, 10.0)}, n_resamples=B)
    sec = next(s for s in rep.sections if s.id == "Cost")
    rows = {r[0]: dict(zip(sec.columns, r)) for r in sec.rows}
    think, plain = rows["m-think (think)"], rows["m-plain (plain)"]
    recs = _records(True)
    tin, tout = sum(r.usage["prompt_tokens"] for r in recs), sum(r.usage["completion_tokens"] for r in recs)
    assert (think["input tokens"], think["output tokens"]) == (tin, tout)
    assert think["thinking tokens"] == f"{40 * len(recs):,} ({len(recs)} replies)"
    assert plain["thinking tokens"] == "not reported apart (0 replies with reasoning)"
    assert think["output / request"] == pytest.approx(tout / len(recs))
    assert think["cost"] == f"${(tin * 2.0 + tout * 10.0) / 1e6:,.4f}"
    assert plain["cost"].startswith("no price")
    lat = [r.latency_s for r in recs]
    assert think["latency mean (s)"] == pytest.approx(statistics.fmean(lat))
    assert think["latency p95 (s)"] == pytest.approx(statistics.quantiles(lat, n=20, method="inclusive")[-1])
    assert rows["m-replay (replay)"]["latency mean (s)"] == "replayed"
    assert think["score"] == "QAcc Overall" and 0 < think["value"] < 100
    md, page = render_markdown(rep), render_html(rep)
    assert "## Cost: Tokens, latency and cost per run" in md and "| m-think (think) | QAcc Overall |" in md
    assert "Tokens, latency and cost per run" in page
    assert sec.figure is None or sec.figure.startswith(b"\x89PNG")  # accuracy vs tokens (matplotlib installed)


def test_price_flag():
    assert parse_price("runs/a=2.5,10") == ("runs/a", (2.5, 10.0))
    for bad in ("runs/a", "runs/a=2.5", "runs/a=x,1", "runs/a=-1,2"):
        with pytest.raises(ConfigError, match="RUN=IN,OUT"):
            parse_price(bad)
