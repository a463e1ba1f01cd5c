"""GOBench for ``lensbench reproduce gobench``: Table 3 (SPS of the MLLM critic), Table 1 (PLCC / SRCC between
the human dimensions, recomputed from a run's ground truth), Fig. 5 (several models' answers per question
against the human answer), the paper's claims and a blind baseline, declared with
:mod:`lensbench.report.reproduce.spec`.

Published values: ``paper/table3.json``, ``paper/table1.json``. Table 2 (the generators' mean human scores)
is a summary of the ratings, not of a model run: ``lensbench gobench summary --ratings GOBench.tsv
--generator-map ...``.
"""

from __future__ import annotations

from lensbench.benchmarks.gobench.benchmark import GOBench
from lensbench.benchmarks.gobench.records import DIM_TITLES, DIMENSIONS
from lensbench.core.resources import read_json
from lensbench.report.reproduce import CONSISTENT, DIFFERS, Cell, Section
from lensbench.report.reproduce.claims import Between, Versus
from lensbench.report.reproduce.spec import Baseline, Claim, Col, Custom, Grid, Paper, Row
from lensbench.scoring.metrics import correlation

__all__ = ["paper", "table1_section", "fig5_section"]

NAME = GOBench.name
RUN = f"lensbench run {NAME} --data-dir DATA --human-ratings GOBench.tsv --model SPEC --out RUN"
TITLE = {v: k for k, v in DIM_TITLES.items()}


def table1_section(ctx) -> Section:
    """Table 1 from each run's human ground truth (the records' ``target``): PLCC / SRCC between the three
    human dimensions over the images rated. The paper computed it on the same ratings, so a run with all 999
    rated images must give the printed figures: consistent within half a unit of the 4th decimal, else
    differs (deterministic: no sampling); a run over fewer images is not comparable."""
    sec = Section("Tab. 1", "PLCC / SRCC between the human rating dimensions")
    rows = read_json(__package__, "paper", "table1.json")["rows"]
    for v in ctx.of(NAME):
        gts = [r.target for r in ctx.records(v) if isinstance(r.target, dict)]
        for row in rows:
            a, b = (TITLE[x.strip()] for x in row["pair"].split(" vs "))
            pts = [(g[a], g[b]) for g in gts if g.get(a) is not None and g.get(b) is not None]
            corr = correlation([p[0] for p in pts], [p[1] for p in pts])
            for m in ("PLCC", "SRCC"):
                cell = Cell(v.label, f"{row['pair']} {m}", corr[m], n=len(pts), published=row[m], paper_row="Table 1")
                if corr[m] is None:
                    cell.reason = "fewer than 3 images with both human scores"
                elif len(pts) < 999:
                    cell.reason = f"human scores on {len(pts)} of the 999 images (the paper: all)"
                else:
                    cell.verdict = CONSISTENT if abs(corr[m] - row[m]) <= 5e-5 else DIFFERS
                    cell.reason = "deterministic: the same human ratings"
                sec.cells.append(cell)
    if not ctx.of(NAME):
        sec.needs.append(f"Tab. 1: needs a {NAME} run with the human ground truth: {RUN}")
    return sec


def fig5_section(ctx, limit: int = 15) -> Section:
    """Fig. 5: the Optical Authenticity answers of several models per question beside the human answer (the
    raters' majority, where the ground truth has per-rater labels): agreement per run and question number,
    and the first ``limit`` questions answered by every run, one answer column per run."""
    sec = Section("Fig. 5", "Several models' answers per authenticity question against the human answer")
    runs = ctx.of(NAME)
    recs = {v.label: {r.sample_id: r for r in ctx.records(v) if r.outcome == "scored"} for v in runs}
    sec.columns = ["image", "question", "human", *recs, "runs agreeing"]
    shown = 0
    first = recs[runs[0].label] if runs else {}
    for sid, r0 in first.items():
        gt = (r0.target or {}).get("majority") or []
        for q, h in enumerate(gt):
            answers = [((recs[k].get(sid).answer or {}).get("answers") or [None] * 5)[q] if recs[k].get(sid) else None
                       for k in recs]
            if h is None or shown >= limit or any(a is None for a in answers):
                continue
            sec.rows.append([r0.labels.get("image", sid), f"Q{q + 1}", h, *answers, sum(a == h for a in answers)])
            shown += 1
    for v in runs:
        agree = [x for r in recs[v.label].values() for x in (r.extra.get("q_agree") or []) if x is not None]
        sec.notes.append(f"{v.label}: agrees with the human answer on {sum(agree)} of {len(agree)} questions"
                         + (f" ({100.0 * sum(agree) / len(agree):.1f}%)" if agree else ""))
    if not sec.rows:
        sec.needs.append("Fig. 5: needs per-question human answers (a ratings CSV with q1..q5 per rater, or the "
                         f"'lensbench gobench rate' SQLite file, as --human-ratings) and {NAME} runs of several models")
    return sec


def _claims(models: list[str]) -> list[Claim]:
    lead = "Gemini-2.5Pro (0506)"
    return [
        Claim("C1", "Even advanced MLLMs find optical understanding challenging ... These top scores, considerably "
                    "below 50%, highlight the substantial difficulty MLLMs [have] in correctly judg[ing] the optical "
                    "phenomena.", "Sec. 3.3, Tab. 3", Versus(NAME, "SPS", "Authenticity", 50.0, "<")),
        Claim("C2", "Gemini-2.5Pro (0506) leads in Optical Authenticity SPS.", "Sec. 3.3, Tab. 3",
              Between(NAME, "SPS", ("Authenticity",), ">", rows=[(lead, m) for m in models if m != lead], run=RUN)),
    ]


def _blockers(view) -> list[str]:
    res = view.run.result
    if res is not None and not res.counts.get("n_with_gt"):
        return ["no human ground truth (--human-ratings GOBench.tsv): no SPS"]
    return []


def paper() -> Paper:
    """The GOBench declaration (module docstring)."""
    t3 = read_json(__package__, "paper", "table3.json")
    models = [r["model"] for r in t3["rows"]]
    cols = [Col(c, c) for c in t3["columns"]]
    return Paper(
        "GOBench", "Zhu et al., GOBench: Benchmarking Geometric Optics Generation and Understanding of MLLMs (arXiv "
        "2506.00991)", (NAME,), {NAME: GOBench.Options().model_dump(mode="json")}, {NAME: ("SPS", "mean")},
        artifacts=[Grid("Tab. 3", "Scaled Proximity Score of the MLLM critic against the people (%)", NAME, "SPS", cols,
                        [Row(r["model"], r["model"], {c: r[c] for c in t3["columns"]}) for r in t3["rows"]],
                        run=RUN, decimals=2),
                   Custom("Tab. 1", "human dimensions", table1_section), Custom("Fig. 5", "answers", fig5_section)],
        claims=_claims(models),
        baselines=[Baseline("blind", "the image", NAME, {"blind": True}, "SPS", "Authenticity", run=RUN + " --blind",
                            hit=lambda r: (r.scores.get(f"sps_{DIMENSIONS[0]}") or 0) > 0)],
        free={NAME: frozenset({"layout", "ratings_generator"})}, blockers=_blockers, models=models,
        clusters={NAME: GOBench.cluster},
        notes=["Blind baseline: an image counts as 'answerable without the image' when the blind critic's "
               "Authenticity score is within 0.5 of the people's (SPS > 0).",
               "Tab. 2 (the generators' mean human scores) comes from the ratings: lensbench gobench summary "
               "--ratings GOBench.tsv --data-dir DATA --generator-map 1=...,2=...,3=..."])
