"""One run-folder reader (issue 21): ``lensbench.load_run`` (strict, the public API) and ``read_run`` (lenient,
for reports over many runs) read the same files the same way, and what the API returns goes into the
leaderboard and ``compare`` as it is."""

from __future__ import annotations

import json

import pytest

import lensbench
from lensbench.core.errors import ConfigError
from lensbench.views.compare import compare_runs
from lensbench.views.leaderboard import build_leaderboard, render_leaderboard
from lensbench.views.runs import LoadedRun, read_run
from lensbench.runtime.runner import run_benchmark
from lensbench.runtime.settings import RunSettings
from lensbench.benchmarks.rgbth.benchmark import RGBThBench


@pytest.fixture
def runs(rgbth_gen, tmp_path):
    out = []
    for spec in ("constant:Yes", "constant:No"):
        d = tmp_path / spec.replace(":", "-")
        run_benchmark(RGBThBench(), RunSettings(model=spec, out=d, data_dir=rgbth_gen, limit=12, progress=False))
        out.append(d)
    return out


def test_the_api_run_is_a_loaded_run_for_reports(runs):
    a, b = (lensbench.load_run(d) for d in runs)
    assert isinstance(a, LoadedRun) and not a.problems and a.records_loaded
    lenient = read_run(runs[0])
    assert (a.result.metrics, a.manifest, a.records) == (lenient.result.metrics, lenient.manifest, lenient.records)
    assert render_leaderboard(build_leaderboard([a, b], n_resamples=50), "md") == \
        render_leaderboard(build_leaderboard([read_run(d) for d in runs], n_resamples=50), "md")
    assert compare_runs(a, b, n_resamples=50).to_json() == compare_runs(read_run(runs[0]), read_run(runs[1]),
                                                                        n_resamples=50).to_json()
    assert "QAcc" in a.table()


def test_strict_and_lenient_name_the_same_defect(runs):
    d = runs[0]
    lines = (d / "samples.jsonl").read_text().splitlines()
    (d / "samples.jsonl").write_text("\n".join([lines[0], '{"not": "a record"}'] + lines[2:]) + "\n")
    with pytest.raises(ConfigError) as strict:
        lensbench.load_run(d)
    lenient = read_run(d)
    assert lenient.records is None and str(strict.value) in lenient.problems
    assert str(strict.value).startswith(f"{d}: samples.jsonl line 2 is not a sample record (")


def test_a_missing_result_is_rebuilt_by_the_api_and_listed_by_reports(runs):
    d = runs[0]
    before = json.loads((d / "result.json").read_text())
    (d / "result.json").unlink()
    assert read_run(d).result is None and f"{d}: no result.json (unfinished or not a run folder)" in read_run(d).problems
    assert lensbench.load_run(d).result.metrics == before["metrics"]


def test_not_a_run_folder(tmp_path):
    with pytest.raises(ConfigError):
        lensbench.load_run(tmp_path)
    assert read_run(tmp_path / "nope").problems == [f"{tmp_path / 'nope'}: not a folder"]


def test_only_the_reader_above_the_benchmarks_looks_the_benchmark_up(runs):
    """report/ sits below the benchmarks (issue 35.2): a run it reads by itself knows no benchmark (no tables, no
    facts); the cross-benchmark reader hands the run the registry's lookup, and the API's run has it too."""
    from lensbench.benchmarks.registry import get_benchmark
    from lensbench.report.runs import read_folder, run_tables

    low, high, api = read_folder(runs[0]), read_run(runs[0]), lensbench.load_run(runs[0])
    assert low.facts is None and run_tables(low) == {}
    assert high.facts is get_benchmark("rgb-th-bench") is api.facts
    expected = RGBThBench.unit_tables(high.records)
    assert sorted(run_tables(high)) == sorted(expected) == sorted(run_tables(api)) and expected
