"""IF-Bench for ``lensbench reproduce if-bench``: Tab. 2, Tab. 4 (GenViP per model), Tab. 5 (editing models,
with an Editor column), Tab. 6 (inference inputs), Tab. 7 (strict criterion), Fig. 5 (thinking gain per
pair), Fig. 6 (score distribution per dimension, a box plot), the paper's claims and the blind / no-infrared
baselines, declared with :mod:`lensbench.report.reproduce.spec`.

Published values: ``paper/table2.json``, ``table4.json``, ``table5_6.json``, ``table7.json``; Fig. 5's
per-pair deltas are Tab. 2's thinking row minus its non-thinking row (the figure prints only their means,
quoted in Sec. 5.2); Fig. 6 is drawn from Tab. 2. A run without an answer parser (exact match only) is not
the paper's hybrid judgment and is never compared.
"""

from __future__ import annotations

import numpy as np

from lensbench.benchmarks.ifbench.analyses import paper_table, parse_model_name
from lensbench.benchmarks.ifbench.benchmark import IFBench
from lensbench.benchmarks.ifbench.data import ABBREVS, COLUMNS
from lensbench.benchmarks.ifbench.report import editor_of
from lensbench.report.reproduce import Section
from lensbench.report.reproduce.claims import Between, Contrast
from lensbench.report.reproduce.pairs import THINKING, difference_cells, run_pairs
from lensbench.report.reproduce.plots import boxes
from lensbench.report.reproduce.spec import Baseline, Claim, Col, Custom, Grid, Paper, Row
from lensbench.scoring.bootstrap import UnitTable

__all__ = ["paper", "extra_tables", "thinking_pairs", "fig5_section", "fig6_section"]

NAME = IFBench.name
GENVIP = "if+rgb+text"
COLS = [Col(c, c) for c in COLUMNS]
RUN = f"lensbench run {NAME} --data-dir DATA --model SPEC --judge-model PARSER --out RUN"


def extra_tables(benchmark: str, records: list, tables: dict) -> dict:
    """``Strict`` (Tab. 7): the ``Score`` unit table with a (question, language) cell counting 1 only when
    all its rotations are right (soft score 1), else 0; same clusters (images) and pooling."""
    score = tables.get("Score") if benchmark == NAME else None
    if score is None:
        return {}
    strict = np.where((score.den > 0) & (score.num >= score.den - 1e-9), 1.0, 0.0) * (score.den > 0)
    return {"Strict": UnitTable("Strict", score.units, score.columns, strict, score.den, score.groups, score.clusters,
                                score.cluster, score.pool, score.categories, score.scale)}


def _values(d: dict) -> dict:
    return {c: d.get(c) for c in COLUMNS}


def _grids() -> list[Grid]:
    t2, t4, t56, t7 = (paper_table(n) for n in ("table2", "table4", "table5_6", "table7"))
    editor = lambda v: {"Editor": editor_of(v.run.result)}  # noqa: E731
    vl7 = t56["model"]
    tab4 = []
    for r in t4["rows"]:
        tab4 += [Row(r["model"], r["model"], _values(r["vanilla"]), {"input": "if"}),
                 Row(f"{r['model']} + GenViP", r["model"], _values(r["genvip"]), {"input": GENVIP})]
    tab5 = [Row(r["name"], vl7, _values(r), {"input": "if"} if r["name"] == "Vanilla" else {"input": GENVIP},
                by_label=r["name"] != "Vanilla") for r in t56["table5"]]
    tab6 = [Row(r["name"], vl7, _values(r), {"input": r["input"]}) for r in t56["table6"]]
    return [
        Grid("Tab. 2", "Soft circular score per dimension (%)", NAME, "Score", COLS,
             [Row(r["model"], r["model"], _values(r)) for r in t2["rows"]], {"input": "if", "blind": False}, run=RUN),
        Grid("Tab. 4", "GenViP (IF + RGB + Text) vs vanilla per model (%)", NAME, "Score", COLS, tab4, run=RUN +
             " [--input if+rgb+text --translated-dir RGB]", describe=editor),
        Grid("Tab. 5", f"Editing models with {vl7}: GenViP runs by editor (%)", NAME, "Score", COLS, tab5,
             run=RUN + " --input if+rgb+text --translated-dir EDITED, then --match RUN=EDITOR (e.g. Qwen-Edit-2509-FT)",
             describe=editor),
        Grid("Tab. 6", f"Inference inputs with {vl7} (%)", NAME, "Score", COLS, tab6,
             run=RUN + " --input if|if+text|rgb|if+rgb|if+rgb+text", describe=editor),
        Grid("Tab. 7", "Strict criterion: a question counts only when all 4 rotations are right (%)", NAME, "Strict",
             COLS, [Row(r["model"], r["model"], _values(r["strict"])) for r in t7["rows"]], {"input": "if"}, run=RUN),
    ]


def thinking_pairs() -> list[tuple[str, str]]:
    """Tab. 2's (thinking, non-thinking) row pairs: the same name but for ``-Thinking`` (vs ``-Instruct`` or
    nothing), as Sec. 5.2 pairs them (14 pairs)."""
    rows = [r["model"] for r in paper_table("table2")["rows"]]
    by_base: dict[str, dict[bool, str]] = {}
    for m in rows:
        f = parse_model_name(m)
        by_base.setdefault(f["base"], {})[f["thinking"]] = m
    return [(d[True], d[False]) for d in by_base.values() if True in d and False in d]


def fig5_section(ctx) -> Section:
    """Fig. 5: per pair of runs (one matched to a thinking row of Tab. 2, one to its non-thinking row; or one
    model with ``enable_thinking`` on and off) the paired difference per column with its CI, beside Tab. 2's
    difference for that pair."""
    sec = Section("Fig. 5", "Score change from thinking, per pair (thinking - non-thinking, points)")
    t2 = {r["model"]: r for r in paper_table("table2")["rows"]}
    base = {"input": "if", "blind": False}
    pairs = run_pairs(ctx, NAME, [(a, b, (a, b)) for a, b in thinking_pairs()], base)
    difference_cells(ctx, sec, NAME, "Score", COLUMNS, pairs, {"input": "if"},
                     lambda tag, c: t2[tag[0]][c] - t2[tag[1]][c], lambda tag: f"{tag[0]} - {tag[1]}",
                     "the paper's pairs are Tab. 2 models; this pair (one model, thinking toggled) is not one",
                     "Fig. 5: needs a thinking and a non-thinking run of one model (runs matched to a pair of Tab. 2, "
                     "e.g. Qwen3-VL-8B-Thinking and Qwen3-VL-8B-Instruct, or --thinking / --no-thinking)")
    sec.notes.append("Sec. 5.2 quotes the means over its 14 pairs: TFU +4.2, TFR +4.42, TL -4.90, AR -1.68, "
                     "Avg +0.34.")
    return sec


def fig6_section(ctx) -> Section:
    """Fig. 6: the distribution of dimension scores across models: ours (runs with the paper's settings)
    beside the paper's (Tab. 2's 44 rows), as quartiles per dimension and a box plot."""
    sec = Section("Fig. 6", "Scores across models per dimension (box plot; quartiles, %)")
    paper_vals = {a: [r[a] for r in paper_table("table2")["rows"]] for a in ABBREVS}
    ours: dict[str, list[float]] = {a: [] for a in ABBREVS}
    for v in ctx.of(NAME, {"input": "if", "blind": False}):
        t = ctx.tables(v).get("Score")
        for a in ABBREVS:
            x = t.value(a) if t is not None and a in t.categories else None
            if x is not None:
                ours[a].append(x)
    sec.columns = ["dimension", "paper Q1", "paper median", "paper Q3", "paper models", "ours Q1", "ours median",
                   "ours Q3", "our runs"]
    q = lambda xs: [float(x) for x in np.percentile(xs, [25, 50, 75])] if xs else [None] * 3  # noqa: E731
    sec.rows = [[a, *q(paper_vals[a]), len(paper_vals[a]), *q(ours[a]), len(ours[a])] for a in ABBREVS]
    sec.notes.append("A distribution across models: ours and the paper's compare only over the same models, so no "
                     "verdict is given.")
    sec.figure = boxes({"paper (Tab. 2)": paper_vals, "ours": ours}, "score (%)", "IF-Bench Fig. 6")
    if not any(ours.values()):
        sec.needs.append(f"Fig. 6: needs {NAME} runs with the paper's settings: {RUN}")
    return sec


def _claims() -> list[Claim]:
    pairs = thinking_pairs()
    think = THINKING
    return [
        Claim("C1", "GenViP consistently improves performance across various models.", "Sec. 5.3, Tab. 4",
              Between(NAME, "Score", ("Avg",), ">", vary=("input", GENVIP, "if"), run=RUN + " --input if / if+rgb+text")),
        Claim("C2", "Thinking enhances performance in thermal feature understanding (+4.2) and thermal feature "
                    "reasoning (+4.42).", "Sec. 5.2, Fig. 5",
              [Between(NAME, "Score", ("TFU", "TFR"), ">", rows=pairs, settings={"input": "if"}),
               Between(NAME, "Score", ("TFU", "TFR"), ">", vary=(think, True, None), settings={"input": "if"})]),
        Claim("C3", "[Thinking] reduces accuracy in dimensions such as target localization (-4.90) and action "
                    "recognition (-1.68).", "Sec. 5.2, Fig. 5",
              [Between(NAME, "Score", ("TL", "AR"), "<", rows=pairs, settings={"input": "if"}),
               Between(NAME, "Score", ("TL", "AR"), "<", vary=(think, True, None), settings={"input": "if"})]),
        Claim("C4", "Scene understanding and image theme ..., as well as the two reasoning dimensions, are relatively "
                    "easy ... the five fine-grained perception dimensions and the viewpoint of capture dimension "
                    "exhibit notably lower performance.", "Sec. 5.2, Fig. 6",
              Contrast(NAME, "Score", ("SU", "IT", "TFR", "CR"), ("VC", "TL", "SRU", "OC", "TFU", "AR"), ">",
                       {"input": "if", "blind": False})),
        Claim("C5", "Combining both infrared and RGB images (d) consistently enhances performance across most "
                    "dimensions.", "Sec. 5.3, Tab. 6", Between(NAME, "Score", ("Avg",), ">", vary=("input", "if+rgb", "if"))),
        Claim("C6", "Using only the translated RGB image (c) causes substantial drops in image theme, thermal feature "
                    "understanding and reasoning.", "Sec. 5.3, Tab. 6",
              Between(NAME, "Score", ("IT", "TFU", "TFR"), "<", vary=("input", "rgb", "if"))),
        Claim("C7", "The stricter criterion substantially reduces accuracy.", "App. D, Tab. 7",
              Contrast(NAME, "Score", ("Avg",), ("Avg",), ">", {"input": "if"}, table_b="Strict")),
    ]


def _blockers(view) -> list[str]:
    res = view.run.result
    if res is not None and not res.extra.get("judge") and view.settings.get("answer_parsing", "hybrid") == "hybrid":
        return ["exact match only (no answer parser): the paper's hybrid judgment needs --judge-model"]
    return []


def paper() -> Paper:
    """The IF-Bench declaration (module docstring)."""
    run = RUN + " --blind"
    return Paper(
        "IF-Bench", "Zhang et al., IF-Bench: Benchmarking and Enhancing MLLMs for Infrared Images with Generative "
        "Visual Prompting", (NAME,), {NAME: IFBench.Options().model_dump(mode="json")}, {NAME: ("Score", "Avg")},
        artifacts=[*_grids(), Custom("Fig. 5", "thinking gain", fig5_section),
                   Custom("Fig. 6", "score distribution", fig6_section)],
        claims=_claims(),
        baselines=[Baseline("blind", "the image", NAME, {"blind": True}, "Score", "Avg", run=run),
                   Baseline("no infrared", "the infrared image (translated RGB only)", NAME, {"input": "rgb"},
                            "Score", "Avg", run=RUN + " --input rgb --translated-dir RGB")],
        free={NAME: frozenset({"parser_retries", "parser_max_tokens", "parser_disable_thinking"})},
        clusters={NAME: IFBench.cluster},
        tables=extra_tables, models=[m for p in thinking_pairs() for m in p], blockers=_blockers,
        notes=["Tab. 5/6 rows differ by the editor that made the RGB images, which a run records only in its "
               "translate_report.json (the Editor column): match an editor row with --match RUN=EDITOR."])
