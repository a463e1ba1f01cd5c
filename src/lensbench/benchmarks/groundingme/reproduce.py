"""GroundingME for ``lensbench reproduce groundingme``: Tab. 3 (with "w/o Rejection"), Tab. 8 (stricter IoU),
Tab. 4 (best-of-N), Tab. 6 and Fig. 5 (thinking), Tab. 5 (in-domain sets through ``grounding-rej`` runs),
Tab. 7 and Fig. 6 (the data-mixture checkpoints), the paper's claims and a blind baseline, declared with
:mod:`lensbench.report.reproduce.spec` (metric tables: :mod:`.reproduce_tables`).

Published values: ``paper/table3.json`` ... ``table8.json``, ``fig6.json`` (its points derived from Tab. 7,
as noted there). Rows that differ from another row of the same model by something a run cannot record (a
thinking variant, a best-of-N judge model, a fine-tuning ratio) are matched by label only: ``--match
RUN='Qwen3-VL-8B (thinking)'``, ``--match RUN='Text-only: Deepseek-R1'``, ``--match RUN=1:8``.
"""

from __future__ import annotations

from lensbench.benchmarks.groundingme.benchmark import GroundingME
from lensbench.benchmarks.groundingme.reproduce_tables import (L1, MAIN, SETS, WITHOUT, extra_tables, fig5_section,
                                                               thinking_rows)
from lensbench.core.resources import read_json
from lensbench.report.reproduce.claims import Between, Contrast, Trend
from lensbench.report.reproduce.spec import ANY, Baseline, Claim, Col, Custom, Grid, Paper, Row

__all__ = ["paper"]

RUN = f"lensbench run {MAIN} --data-dir DATA --model SPEC --bbox-format FORMAT --out RUN"
BASE = "Qwen3-VL-8B-Instruct"
RATIOS = ("1:8", "1:4", "1:2", "1:1", "2:1")
L1_COLS = [Col("Total", "Total"), *[Col(c, c) for c in L1]]
BON = {"best_of": ANY, "bon_judge": ANY}
JUDGE_MODE = {"Text-only": "text-full-responses", "Multimodal": "mm-image-boxes"}


def _json(name: str) -> dict:
    return read_json(__package__, "paper", f"{name}.json")


def _grids() -> list[Grid]:
    t3, t4, t5, t7, t8, f6 = (_json(n) for n in ("table3", "table4", "table5", "table7", "table8", "fig6"))
    bon_model = "Qwen3-VL-235B-A22B-Thinking"
    tab4 = [Row("Average" if r["type"] == "Average" else f"{r['type']}: {r['judge']}", bon_model, r["values"],
                BON if r["type"] == "Average" else {"best_of": 16, "bon_judge": JUDGE_MODE[r["type"]]},
                by_label=r["type"] != "Average") for r in t4["rows"]]
    tab5 = [Row("Origin" if c == "Origin" else c, BASE, {k: v[i] for k, v in t5["rows"].items()}, by_label=c != "Origin")
            for i, c in enumerate(t5["columns"])]
    return [
        Grid("Tab. 3", "Acc@0.5 per subtask, no thinking (%)", MAIN, "Acc@0.5", [Col(c, c) for c in t3["columns"]],
             [Row(r["model"], r["model"], r["values"]) for r in t3["rows"]], run=RUN),
        Grid("Tab. 3 (w/o Rejection)", "Acc@0.5 without the Rejection category (Sec. 5.3) (%)", MAIN, "Acc@0.5",
             [Col(WITHOUT, WITHOUT)], run=RUN,
             unpublished="the paper prints 'w/o Rejection' only for Qwen3-VL-8B-Instruct (Fig. 6 baseline, 38.8)"),
        Grid("Tab. 8", "Acc@0.75, Acc@0.9 and mAcc over IoU 0.50:0.05:0.95 (%)", MAIN, "Acc@0.75",
             [Col(c, c.split("/")[0], c.split("/")[1]) for c in t8["columns"]],
             [Row(r["model"], r["model"], r["values"]) for r in t8["rows"]], run=RUN),
        Grid("Tab. 4", f"Best-of-16 with {bon_model}: average sample and judge-selected (%)", MAIN, "Acc@0.5",
             [Col(c.name, c.category, "BoN-average") for c in L1_COLS], tab4[:1], run=RUN + " --best-of 16"),
        Grid("Tab. 4 (judge)", "Best-of-16: the judge's pick (%)", MAIN, "Acc@0.5", L1_COLS, tab4[1:],
             run=RUN + " --best-of 16 --bon-judge text-full-responses|mm-image-boxes --judge-model JUDGE, then "
                       "--match RUN='Text-only: Deepseek-R1'"),
        Grid("Tab. 6", "Acc@0.5 with thinking enabled (%)", MAIN, "Acc@0.5", L1_COLS,
             [Row(f"{m} (thinking)", m, v, by_label=True) for m, v in thinking_rows()],
             run=RUN + " --thinking (or a thinking model), then --match RUN='MODEL (thinking)'"),
        Grid("Tab. 5", f"In-domain sets of the data-mixture study, {BASE} per SFT ratio (%)", SETS, "Acc@0.5",
             [Col(k, k) for k in t5["rows"]], tab5,
             run=f"lensbench run {SETS} --data-dir ITEMS --model CHECKPOINT --out RUN (sets named RefCOCOg_val, "
                 "RefCOCOg_rej_val), then --match RUN=1:8"),
        Grid("Tab. 7", f"GroundingME Acc@0.5 of {BASE} fine-tuned per SFT ratio (%)", MAIN, "Acc@0.5", L1_COLS,
             [Row(r["ratio"], BASE, r["values"], by_label=True) for r in t7["rows"]],
             run="lensbench train groundingme sweep ... (README), then --match RUN=1:8"),
        Grid("Fig. 6", f"'w/o Rejection' and Rejection of {BASE} per SFT ratio (%)", MAIN, "Acc@0.5",
             [Col(WITHOUT, WITHOUT), Col("Rejection", "Rejection")],
             [Row(p["ratio"] if p["ratio"] != "Baseline" else BASE, BASE,
                  {WITHOUT: p["without_rejection"], "Rejection": p["rejection"]}, by_label=p["ratio"] != "Baseline")
              for p in f6["points"]], run="lensbench train groundingme sweep ... (README), then --match RUN=1:8"),
    ]


def _claims() -> list[Claim]:
    t6 = [m for m, _v in thinking_rows()]
    pairs = [(f"{m} (thinking)", m) for m in t6]
    think = ("extra_body.chat_template_kwargs.enable_thinking", True, None)
    return [
        Claim("C1", "Thinking mode universally leads to better performance on GroundingME, with every tested model "
                    "achieving a significant performance gain.", "Sec. 5.1, Fig. 5",
              [Between(MAIN, "Acc@0.5", ("Total",), ">", rows=pairs), Between(MAIN, "Acc@0.5", ("Total",), ">",
                                                                              vary=think)]),
        Claim("C2", "Models can learn to reject by thinking ... all models successfully demonstrate some level of "
                    "rejection behavior.", "Sec. 5.1, Tab. 6",
              [Between(MAIN, "Acc@0.5", ("Rejection",), ">", rows=pairs),
               Between(MAIN, "Acc@0.5", ("Rejection",), ">", vary=think)]),
        Claim("C3", "TTS based on the thinking trajectory significantly boosts performance [the judge's pick of N "
                    "samples above their average].", "Sec. 5.2, Tab. 4",
              Contrast(MAIN, "Acc@0.5", ("Total",), ("Total",), ">", BON, table_b="BoN-average")),
        Claim("C4", "Models are generally most proficient at Discriminative category, followed by Spatial or Limited "
                    "categories, while all models demonstrate poor performance on Rejection category.",
              "Sec. 4.3.2, Tab. 3",
              [Contrast(MAIN, "Acc@0.5", ("Discriminative",), ("Spatial", "Limited"), ">"),
               Contrast(MAIN, "Acc@0.5", ("Spatial", "Limited"), ("Rejection",), ">")]),
        Claim("C5", "The performance trend on the Rejection category of GroundingME aligns with the in-domain "
                    "results, showing a clear growth as the ratio of negative samples increases.", "Sec. 5.3, Fig. 6",
              Trend(MAIN, "Acc@0.5", "Rejection", rows=RATIOS, run="runs matched to 1:8 ... 2:1")),
        Claim("C6", "The performance on GroundingME w/o Rejection demonstrates a clear degradation compared to the "
                    "pre-fine-tuned baseline.", "Sec. 5.3, Fig. 6",
              Between(MAIN, "Acc@0.5", (WITHOUT,), "<", rows=[(r, BASE) for r in RATIOS])),
        Claim("C7", "As the proportion of negative data increases in the fine-tuning set, the model's performance on "
                    "the rejection task improves incrementally, while simultaneously impacting the original positive "
                    "grounding performance to some extent.", "Sec. 5.3, Tab. 5",
              [Trend(SETS, "Acc@0.5", "RefCOCOg_rej_val", rows=RATIOS),
               Trend(SETS, "Acc@0.5", "RefCOCOg_val", rows=RATIOS, expect="<")]),
    ]


def paper() -> Paper:
    """The GroundingME declaration (module docstring)."""
    defaults = GroundingME.Options().model_dump(mode="json")
    free = frozenset({"bbox_format", "resize_factor", "resize_min_pixels", "resize_max_pixels", "judge_retries"})
    grids = _grids()
    return Paper(
        "GroundingME", "Li et al., GroundingME: Exposing the Visual Grounding Gap in MLLMs through Multi-Dimensional "
        "Evaluation (arXiv 2512.17495)", (MAIN, SETS), {MAIN: defaults, SETS: defaults},
        {MAIN: ("Acc@0.5", "Total"), SETS: ("Acc@0.5", "Macro_Average")},
        artifacts=[*grids[:6], Custom("Fig. 5", "thinking gain", fig5_section), *grids[6:]],
        claims=_claims(),
        baselines=[Baseline("blind", "the image", MAIN, {"blind": True}, "Acc@0.5", "Total",
                            run=RUN + " --blind")],
        free={MAIN: free, SETS: free}, tables=extra_tables, models=[BASE],
        clusters={MAIN: GroundingME.cluster, SETS: GroundingME.cluster},
        notes=["A box format (--bbox-format) is the model's own convention, never a different setting; "
               "--max-pixels (downscaled images) is one: the paper sends the originals."])
