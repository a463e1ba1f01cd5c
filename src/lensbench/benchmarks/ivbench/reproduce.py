"""IV-Bench for ``lensbench reproduce iv-bench``: Table 2, Table 3 (SFT variants), Fig. 3(a) (inference
patterns), Fig. 3(b) / Fig. 4(a) (frames and resolution), the paper's claims and the Sec. 2.3 modality
baselines (no image, no video, blind), declared with :mod:`lensbench.report.reproduce.spec`.

Published values: ``paper/table2.json``, ``paper/table3.json``. Fig. 3 and Fig. 4 are plots without printed
numbers: their cells are computed with CIs (and plotted) and marked not comparable for that reason; the
paper's findings about them are tested as claims (trend tests, paired patterns).
"""

from __future__ import annotations

from lensbench.benchmarks.ivbench.benchmark import IVBench
from lensbench.benchmarks.ivbench.data import TABLE2_COLUMNS
from lensbench.benchmarks.ivbench.prompts import PATTERNS
from lensbench.core.resources import read_json
from lensbench.report.reproduce import Section
from lensbench.report.reproduce.cells import judge_cell
from lensbench.report.reproduce.claims import Between, Contrast, Trend
from lensbench.report.reproduce.context import show
from lensbench.report.reproduce.plots import lines
from lensbench.report.reproduce.spec import Baseline, Claim, Col, Custom, Grid, Paper, Row

__all__ = ["paper", "patterns_section", "sweep_section"]

NAME = IVBench.name
RUN = f"lensbench run {NAME} --data-dir DATA --model SPEC --out RUN"
FIG3A = ("video-first", "image-first", "text-only")
HEAD = ("Overall", "P-Avg", "R-Avg")


def _grids() -> list[Grid]:
    t2 = read_json(__package__, "paper", "table2.json")
    t3 = read_json(__package__, "paper", "table3.json")
    return [
        Grid("Tab. 2", "Accuracy per task, 32 frames, video frames + image + question (%)", NAME, "accuracy",
             [Col(c, c) for c in TABLE2_COLUMNS], [Row(r["model"], r["model"], {c: r.get(c) for c in TABLE2_COLUMNS})
                                                    for r in t2["rows"]], run=RUN),
        Grid("Tab. 3", "SFT variants of LLaVA-OneVision-7B-si (%)", NAME, "accuracy", [Col("Accuracy", "Overall")],
             [Row(r["model"], r["model"], {"Accuracy": r["accuracy"]}) for r in t3["rows"]],
             run="lensbench train ivbench variants ... (README: Train -> evaluate -> table), then --match RUN=ROW",
             decimals=2),
    ]


def patterns_section(ctx) -> Section:
    """Fig. 3(a): each model's runs across inference patterns (and the Sec. 2.3 baselines), Overall / P-Avg /
    R-Avg with CIs, one line per model in the plot. The figure prints no numbers: not comparable."""
    sec = Section("Fig. 3(a)", "Accuracy across inference patterns per model (%)")
    d = ctx.design(NAME)
    series: dict[str, list[tuple[str, float | None]]] = {}
    for v in ctx.of(NAME):
        if ctx.mismatches(v, {}, ["pattern"]):
            continue
        pattern = str(v.settings.get("pattern", "video-first"))
        t = ctx.tables(v).get("accuracy")
        block = [b for b in ctx.blockers(v, {}) if not b.startswith("pattern=")]
        for c in HEAD:
            cell = judge_cell(f"{v.label} [{pattern}]", c, t, c, None, d, blockers=block,
                              unpublished="Fig. 3(a) is a plot without printed numbers")
            sec.cells.append(cell)
            if c == "Overall":
                series.setdefault(v.model, []).append((pattern, cell.value))
    order = {p: i for i, p in enumerate(PATTERNS)}
    series = {m: sorted(pts, key=lambda x: order.get(x[0], 99)) for m, pts in series.items()}
    sec.figure = lines(series, "Overall accuracy (%)", "IV-Bench Fig. 3(a): inference patterns")
    if not any(len(pts) > 1 for pts in series.values()):
        sec.needs.append(f"Fig. 3(a): needs runs of one model with --pattern {', '.join(FIG3A)}: {RUN} --pattern P")
    return sec


def sweep_section(ctx) -> Section:
    """Fig. 3(b) / Fig. 4(a): accuracy per frame count and per resolution, from sweep runs (one table per
    configuration) or single-configuration runs, with CIs; plotted per model. No printed numbers."""
    sec = Section("Fig. 3(b) / 4(a)", "Accuracy per number of frames and per resolution (%)")
    d = ctx.design(NAME)
    series: dict[str, list[tuple[str, float | None]]] = {}
    for v in ctx.of(NAME):
        if ctx.mismatches(v, {}, ["frames", "resolution", "pairs"]):
            continue
        tabs = [t for t in ctx.tables(v).values() if t.metric == "accuracy"]
        block = [b for b in ctx.blockers(v, {}) if not b.startswith(("frames=", "resolution=", "pairs="))]
        for t in tabs:
            setting = t.setting or {"frames": v.settings.get("frames", "32"), "resolution": v.settings.get("resolution")}
            x = f"{show(setting.get('frames'))}f@{show(setting.get('resolution') or 'native')}"
            cell = judge_cell(f"{v.label} [{x}]", "Overall", t, "Overall", None, d, blockers=block,
                              unpublished="Fig. 3(b) and Fig. 4(a) are plots without printed numbers")
            sec.cells.append(cell)
            series.setdefault(v.model, []).append((x, cell.value))
    sec.figure = lines(series, "Overall accuracy (%)", "IV-Bench Fig. 3(b) / 4(a): frames and resolution")
    if not any(len(p) > 2 for p in series.values()):
        sec.needs.append(f"Fig. 3(b) / 4(a): needs a sweep run of one model: {RUN} --frames 8,16,32,64 (and "
                         "--frames 32 --resolution 72,108,144,240)")
    return sec


def _claims() -> list[Claim]:
    big = ("InternVL2.5-26B", "InternVL2.5-38B", "InternVL2.5-78B")
    small = ("Minicpm-v", "Minicpm-o")
    return [
        Claim("C1", "Overall, perception tasks generally prove easier than reasoning tasks.", "Sec. 4.2, Tab. 2",
              Contrast(NAME, "accuracy", ("P-Avg",), ("R-Avg",), ">")),
        Claim("C2", "Model performance consistently improves as frame number increases.", "Sec. 4.3.2, Fig. 3(b)",
              Trend(NAME, "accuracy", "Overall", "frames", (8, 16, 32, 64), run=RUN + " --frames 8,16,32,64")),
        Claim("C3", "Performance improves consistently as resolution increases.", "Sec. 4.3.2, Fig. 4(a)",
              Trend(NAME, "accuracy", "Overall", "resolution", (72, 108, 144, 240), settings={"frames": "32"},
                    run=RUN + " --frames 32 --resolution 72,108,144,240")),
        Claim("C4", "For models such as InternVL2.5-26B, 38B, and 78B that effectively utilize image information, "
                    "placing the image after video frames results in superior performance compared to positioning "
                    "it beforehand.", "Sec. 4.3.1, Fig. 3(a)",
              Between(NAME, "accuracy", ("Overall",), ">", vary=("pattern", "video-first", "image-first"), among=big,
                      run=RUN + " --pattern video-first / image-first, then --match RUN=InternVL2.5-26B")),
        Claim("C5", "Larger models [InternVL2.5-26B, 38B, 78B] effectively utilize image information [video-first "
                    "above text-only].", "Sec. 4.3.1, Fig. 3(a)",
              Between(NAME, "accuracy", ("Overall",), ">", vary=("pattern", "video-first", "text-only"), among=big,
                      run=RUN + " --pattern video-first / text-only")),
        Claim("C6", "MiniCPM-v/o performs suboptimally under both image-first and video-first settings compared to "
                    "the text-only query setting.", "Sec. 4.3.1, Fig. 3(a)",
              [Between(NAME, "accuracy", ("Overall",), "<", vary=("pattern", p, "text-only"), among=small,
                       run=RUN + f" --pattern {p} / text-only") for p in ("video-first", "image-first")]),
    ]


def paper() -> Paper:
    """The IV-Bench declaration (module docstring)."""
    return Paper(
        "IV-Bench", "Ma et al., IV-Bench: A Benchmark for Image-Grounded Video Perception and Reasoning in Multimodal "
        "LLMs (2025)", (NAME,), {NAME: IVBench.Options().model_dump(mode="json")}, {NAME: ("accuracy", "Overall")},
        artifacts=[*_grids(), Custom("Fig. 3(a)", "inference patterns", patterns_section),
                   Custom("Fig. 3(b) / 4(a)", "frames and resolution", sweep_section)],
        claims=_claims(),
        baselines=[Baseline(f"no {w}", f"the {w}", NAME, {"pattern": p}, "accuracy", "Overall",
                            run=f"{RUN} --pattern {p}") for w, p in (("image", "text-only"), ("video", "no-video"))]
                  + [Baseline("blind", "the image and the video", NAME, {"pattern": "blind"}, "accuracy", "Overall",
                              run=f"{RUN} --pattern blind")],
        free={NAME: frozenset({"frame_rule", "decode_workers"})}, clusters={NAME: IVBench.cluster},
        notes=["Sec. 2.3's round-2 quality check removed queries answerable without the image or the video: the "
               "baselines below flag the ones a model still answers without them."])
