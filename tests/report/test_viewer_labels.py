"""Issue 32.8 without a browser: every run named distinctly in plots and on the page (the configuration tag where
a model name repeats), CI error bars read from result.json, every pair of runs compared, sample-link keys, and
the reproduce appendix's layout (contents, collapsed sections, tables in scrolling wrappers)."""

from __future__ import annotations

import json
from itertools import combinations

import pytest

from lensbench.cli.view import write_viewer
from lensbench.report.figures import plot_labels, run_cis
from lensbench.views.figures import headline_bars
from lensbench.views.runs import read_run
from lensbench.views.viewer.html import read_page_data
from lensbench.testing.runs import craft_run


def _retag(run, tag=None, **options):
    """Give a crafted run a --tag and/or options in its result.json (what `lensbench run --tag` writes)."""
    p = run / "result.json"
    doc = json.loads(p.read_text(encoding="utf-8"))
    if tag:
        doc.setdefault("extra", {})["tag"] = tag
    doc["options"] = {**doc.get("options", {}), **options}
    p.write_text(json.dumps(doc), encoding="utf-8")
    return run


@pytest.fixture
def runs(tmp_path):
    return [_retag(craft_run(tmp_path / "a", "gobench", "same-model", n=24, seed=1), "first"),
            _retag(craft_run(tmp_path / "b", "gobench", "same-model", n=24, seed=2, accuracy=0.9), "second"),
            craft_run(tmp_path / "c", "gobench", "other-model", n=24, seed=3),
            craft_run(tmp_path / "d", "gobench", "twin", n=24, seed=4),
            craft_run(tmp_path / "dd" / "d", "gobench", "twin", n=24, seed=5)]


def test_plot_labels_carry_the_tag_only_where_a_model_repeats(runs):
    loaded = [read_run(r) for r in runs]
    # alike in model, tag and settings: the folder names them (both folders here are 'd', so they stay alike)
    assert plot_labels(loaded) == ["same-model [first]", "same-model [second]", "other-model", "twin (d)", "twin (d)"]
    assert plot_labels(loaded[2:4]) == ["other-model", "twin"]


def test_differing_settings_name_the_runs(tmp_path):
    a = _retag(craft_run(tmp_path / "x", "rgb-th-bench", "m", n=24, seed=1), input="rgb+thermal")
    b = _retag(craft_run(tmp_path / "y", "rgb-th-bench", "m", n=24, seed=1), input="thermal-only")
    assert plot_labels([read_run(a), read_run(b)]) == ["m [input=rgb+thermal]", "m [input=thermal-only]"]


def test_page_names_runs_like_the_plots_and_compares_every_pair(runs, tmp_path):
    html, _images, loaded = write_viewer(runs, tmp_path / "v.html", n_resamples=50, figures=False)
    doc = read_page_data(html)
    assert [r["label"] for r in doc["runs"]] == plot_labels(loaded)
    assert [r["key"] for r in doc["runs"]] == ["a", "b", "c", "d~3", "d~4"]  # unique sample-link keys
    assert sorted((c["ia"], c["ib"]) for c in doc["comparisons"]) == list(combinations(range(5), 2))


def test_run_cis_are_result_jsons_and_drawn_as_error_bars(rgbth_data, tmp_path):
    from lensbench.benchmarks.rgbth.benchmark import RGBThBench
    from lensbench.runtime.runner import RunSettings, run_benchmark

    files = rgbth_data.parent.parent
    run_benchmark(RGBThBench(), RunSettings(model=f"replay:{files / 'benchmark_results_GLM.json'}", out=tmp_path / "glm",
                                            data_dir=rgbth_data, progress=False, tag="paper-prompt"))
    run = read_run(tmp_path / "glm")
    stored = json.loads((tmp_path / "glm" / "result.json").read_text(encoding="utf-8"))["ci"]["tables"]
    cis = run_cis(run)
    assert cis[("QAcc", "Overall")] == tuple(stored["QAcc"]["intervals"]["Overall"][1:3])
    assert cis[("SAcc", "Anomaly")] == tuple(stored["SAcc"]["intervals"]["Anomaly"][1:3])
    low, high = cis[("QAcc", "Overall")]
    assert low < run.result.metrics["QAcc"]["Overall"] < high
    png = headline_bars([run], "rgb-th-bench")
    assert png is not None and png.startswith(b"\x89PNG")
    assert plot_labels([run, run]) == ["zai-org/GLM-4.5V [paper-prompt] (glm)"] * 2


def test_no_error_bar_below_ten_clusters(tmp_path):
    run = craft_run(tmp_path / "r", "rgb-th-bench", "m", n=48, seed=1)
    p = run / "result.json"
    doc = json.loads(p.read_text(encoding="utf-8"))
    doc["ci"] = {"design": {"cluster": "scene"}, "tables": {"QAcc": {"metric": "QAcc", "setting": None, "intervals": {
        "Overall": [60.0, 50.0, 70.0, 12, 48], "Scene": [55.0, 40.0, 70.0, 9, 12], "ObjPr": [50.0, None, None, 1, 4]}},
        "QAcc@sweep": {"metric": "QAcc", "setting": {"frames": 8}, "intervals": {"Attr": [1.0, 0.0, 2.0, 30, 90]}}}}
    p.write_text(json.dumps(doc), encoding="utf-8")
    assert run_cis(read_run(run)) == {("QAcc", "Overall"): (50.0, 70.0)}  # 9 clusters, none, a sweep point: left out
    del doc["ci"]
    p.write_text(json.dumps(doc), encoding="utf-8")
    loaded = read_run(run)
    scenes = len({r.labels["scene"] for r in loaded.records})
    assert scenes < 10 and run_cis(loaded) == {}  # drawn afresh: a crafted run's few scenes carry no CI
