"""Issue 29.2 on compare: a run over part of the release says so in the comparison (md and JSON notes)."""

from __future__ import annotations

from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.report.coverage import run_coverage
from lensbench.runtime.runner import RunSettings, run_benchmark
from lensbench.views.compare import compare_runs, render_comparison
from lensbench.views.runs import read_run


def test_compare_states_each_runs_coverage(rgbth_gen, tmp_path):
    for name, model in (("a", "constant:Yes"), ("b", "constant:No")):
        run_benchmark(RGBThBench(), RunSettings(model=model, out=tmp_path / name, data_dir=rgbth_gen, progress=False,
                                                limit=12))
    a, b = read_run(tmp_path / "a"), read_run(tmp_path / "b")
    cov = run_coverage(a).text
    assert cov.startswith("2/29 scenes, 48/1,624 questions")  # 12 units of 4 questions, 8 skills per scene
    cmp = compare_runs(a, b, n_resamples=50)
    assert f"Coverage of A ({a.path}): {cov}." in cmp.notes and f"Coverage of B ({b.path}): {run_coverage(b).text}." \
        in cmp.notes
    assert f"Coverage of A ({a.path}): {cov}." in render_comparison(cmp, "md")
