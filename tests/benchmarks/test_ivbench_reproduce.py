"""``lensbench reproduce iv-bench`` on crafted runs in IV-Bench's record shape (videos with several queries, 13
tasks): Tab. 2 cells against values and CIs computed here, Fig. 3(a) patterns (no published numbers), the
Sec. 2.3 baselines (no image, no video, blind), the pattern claim and the frames trend (Page's test on
per-video accuracy, computed here with scipy)."""

from __future__ import annotations

import numpy as np
import pytest
from reproduce_craft import B, cells_of, check_cell, check_family, claim, cluster_ci, expected_test, micro, rec, write

from lensbench.benchmarks.ivbench.benchmark import IVBench
from lensbench.benchmarks.ivbench.data import PERCEPTION, REASONING, TASK_ABBREV
from lensbench.benchmarks.ivbench.reproduce import paper
from lensbench.benchmarks.ivbench.sweep import config_label
from lensbench.views.reproduce import reproduce

NAME = "iv-bench"
TASKS = list(TASK_ABBREV)


def _records(seed: int, p, frames=(32,)) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for v in range(60):
        for k in range(3):
            task = TASKS[(v * 3 + k) % len(TASKS)]
            for n_i, n in enumerate(frames):
                pk = p[n_i] if isinstance(p, (list, tuple)) else p
                o = "correct" if rng.random() < pk else "wrong"
                sid = f"vid{v}/{k}" + (f"@{config_label(n, None)}" if len(frames) > 1 else "")
                out.append(rec(NAME, sid, o, target="a", answer="a" if o == "correct" else "b",
                               labels={"task": task, "column": TASK_ABBREV[task], "group": "P" if task in PERCEPTION
                                       else "R", "video_id": f"vid{v}", "data_id": k, "frames": n, "resolution": None,
                                       "config": config_label(n, None)}))
    return out


def _opts(**kw):
    return {k: v for k, v in {**IVBench.Options().model_dump(mode="json"), **kw}.items()
            if k not in ("questions", "videos_dir", "images_dir", "frame_cache", "decode_workers", "skip_missing")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("iv-repro")
    write(root / "q7", NAME, "Qwen2.5-VL-7B", _records(1, 0.2), _opts())
    for i, pat in enumerate(("image-first", "text-only", "no-video", "blind")):
        write(root / f"q7-{pat}", NAME, "Qwen2.5-VL-7B", _records(10 + i, 0.15), _opts(pattern=pat))
    write(root / "big", NAME, "InternVL2.5-26B", _records(2, 0.45), _opts())
    write(root / "big-img", NAME, "InternVL2.5-26B", _records(3, 0.15), _opts(pattern="image-first"))
    write(root / "sweep", NAME, "Aria", _records(4, [0.1, 0.25, 0.4, 0.55], (8, 16, 32, 64)), _opts(frames="8,16,32,64"))
    return root


@pytest.fixture(scope="module")
def rep(runs):
    names = ["q7", *(f"q7-{p}" for p in ("image-first", "text-only", "no-video", "blind")), "big", "big-img", "sweep"]
    return reproduce(paper(), [runs / n for n in names], n_resamples=B, seed=2)


def _load(path):
    from lensbench.views.runs import read_run

    return read_run(path).records


def test_table2_cells(rep, runs):
    recs = _load(runs / "q7")
    cells = {c.column: c for c in cells_of(rep, "Tab. 2") if "(q7)" in c.row}
    assert len(cells) == 16 and {c.paper_row for c in cells.values()} == {"Qwen2.5-VL-7B"}
    for col, tasks in (("Overall", TASKS), ("P-Avg", list(PERCEPTION)), ("R-Avg", list(REASONING)),
                       ("NLI", ["NLI"])):
        items = [(r.labels["video_id"], r.labels["column"], float(r.outcome == "correct"), 1.0) for r in recs
                 if r.labels["task"] in tasks]
        val, lo, hi = cluster_ci(items, micro([TASK_ABBREV[t] for t in tasks]), seed=2)
        c = cells[col]
        assert (c.value, c.low, c.high) == (pytest.approx(val), pytest.approx(lo), pytest.approx(hi))
        check_cell(c, expected_test(items, micro([TASK_ABBREV[t] for t in tasks]), c.published, pooled=True))
    assert check_family(cells_of(rep, "Tab. 2")) > 0
    other = [c for c in cells_of(rep, "Tab. 2") if "(q7-image-first)" in c.row]
    assert all("another setting" in c.reason and "pattern=image-first" in c.reason for c in other)


def test_patterns_figure_and_baselines(rep, runs):
    fig = cells_of(rep, "Fig. 3(a)")
    rows = {c.row for c in fig}
    assert "Qwen2.5-VL-7B (q7) [video-first]" in rows and "Qwen2.5-VL-7B (q7-blind) [blind]" in rows
    assert all(c.verdict == "not comparable" and "plot without printed numbers" in c.reason for c in fig)
    base = {r[0]: r for s in rep.sections if s.id == "Necessity" for r in s.rows}
    assert set(base) == {"no image", "no video", "blind"}
    for name, folder in (("no image", "q7-text-only"), ("no video", "q7-no-video"), ("blind", "q7-blind")):
        flags = [f for f in rep.flags if f["baseline"] == name]
        assert len(flags) == 180 and sum(f["answerable"] for f in flags) == sum(
            r.outcome == "correct" for r in _load(runs / folder))
        assert base[name][1].endswith("(q7)")


def test_pattern_claim_and_frames_trend(rep, runs):
    from scipy.stats import page_trend_test

    c4 = claim(rep, "C4")  # InternVL2.5-26B: video-first above image-first
    assert len(c4.tests) == 1 and c4.tests[0].subject.startswith("InternVL2.5-26B (big) - InternVL2.5-26B (big-img)")
    assert c4.tests[0].estimate > 0
    c2 = claim(rep, "C2")
    assert len(c2.tests) == 1 and c2.tests[0].subject.startswith("Aria (sweep): frames 8, 16, 32, 64")
    recs = _load(runs / "sweep")
    per = {}
    for r in recs:
        per.setdefault(r.labels["video_id"], {}).setdefault(r.labels["frames"], []).append(r.outcome == "correct")
    data = np.array([[100 * np.mean(per[v][n]) for n in (8, 16, 32, 64)] for v in per])
    ref = page_trend_test(data, method="asymptotic")
    assert c2.tests[0].estimate == pytest.approx(ref.statistic) and c2.tests[0].p == pytest.approx(ref.pvalue)
    assert c2.tests[0].verdict == "supported"
    sweep = [c for c in cells_of(rep, "Fig. 3(b) / 4(a)") if "(sweep)" in c.row]
    assert [c.row.split("[")[1] for c in sweep] == ["8f@native]", "16f@native]", "32f@native]", "64f@native]"]
    assert claim(rep, "C3").untestable.startswith("needs runs (or one sweep run) of one model over resolution")
