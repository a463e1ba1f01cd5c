"""``lensbench analyze items``: statistics checked against independent computations, flags against planted
defects (tests/analysis/items_fixture.py), the CLI's outputs and refusals, and the real RGB-Th-Bench replies."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as sst
from typer.testing import CliRunner

from items_fixture import BLIND_RIGHT, DUP, FALLS, MISKEYED, N_RUNS, items, truth, write_runs
from lensbench.cli.main import app
from lensbench.testing.runs import craft_run
from lensbench.analysis.classical import classical_stats
from lensbench.analysis.irt import fit_2pl
from lensbench.analysis.items import analyze_items


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return write_runs(tmp_path_factory.mktemp("items"))


@pytest.fixture(scope="module")
def report(runs):
    dirs, blind = runs
    return analyze_items([*dirs, blind], n_resamples=300, seed=1)


def test_classical_statistics_match_a_hand_computation():
    x = truth()
    x[5, 2] = x[9, 0] = np.nan  # a run that did not score an item
    s = classical_stats(x)
    for j in (0, 5, 9, 40):
        cols = [i for i in range(x.shape[1]) if not np.isnan(x[j, i])]
        assert s.p[j] == pytest.approx(np.mean([x[j, i] for i in cols]))
        assert s.n[j] == len(cols)
        rest = []
        for i in cols:
            others = [x[k, i] for k in range(x.shape[0]) if k != j and not np.isnan(x[k, i])]
            rest.append(sum(others) / len(others))
        xj = np.array([x[j, i] for i in cols])
        if len(set(xj)) > 1:
            assert s.r_pb[j] == pytest.approx(np.corrcoef(xj, rest)[0, 1])
        else:
            assert np.isnan(s.r_pb[j])


def test_2pl_recovers_simulated_parameters():
    rng = np.random.default_rng(3)
    n_items, n_runs = 12, 4000
    a, b, th = rng.uniform(0.6, 2.2, n_items), rng.normal(0, 0.8, n_items), rng.normal(0, 1, n_runs)
    x = (rng.random((n_items, n_runs)) < 1 / (1 + np.exp(-a[:, None] * (th[None] - b[:, None])))).astype(float)
    x[rng.random(x.shape) < 0.05] = np.nan
    fit = fit_2pl(x)
    assert fit.converged
    assert np.corrcoef(a, fit.a)[0, 1] > 0.95 and np.abs(fit.a - a).max() < 0.2  # consistent: errors shrink with runs
    assert np.abs(fit.b - b).max() < 0.2
    assert np.corrcoef(th, fit.theta)[0, 1] > 0.85


def test_flags_find_the_planted_defects(report):
    fl = report.flags.flags
    having = lambda name: {i for i, fs in fl.items() if name in fs}  # noqa: E731
    assert having("contradictory-duplicate") == set(DUP)
    assert having("no-capable-model") == {MISKEYED, FALLS}
    assert having("key-suspect") == {MISKEYED, FALLS}
    assert having("falls-with-ability") == {FALLS}
    assert having("blind-answerable") == {BLIND_RIGHT}
    assert report.matrix.blind_runs == ["blind-model"] and len(report.matrix.runs) == N_RUNS
    assert "8 of 8 capable runs answer 'Yes'; key 'No'" in " ".join(report.flags.why[MISKEYED])


def _hand_headline(x: np.ndarray, keep: set[str]) -> np.ndarray:
    """QAcc Overall by hand: per skill the share right over kept items, mean over the 3 skills, x 100."""
    ids = items()
    out = []
    for k in range(x.shape[1]):
        per = [np.mean([x[j, k] for j, (i, _s, a, _q) in enumerate(ids) if a == ab and i in keep])
               for ab in ("Scene", "ObjPr", "Attr")]
        out.append(100 * np.mean(per))
    return np.array(out)


def test_headline_without_flagged_items_matches_a_hand_computation(report):
    x = truth()
    flagged = set(report.flags.flagged())
    assert flagged == {*DUP, MISKEYED, FALLS, BLIND_RIGHT}
    every = {i for i, *_ in items()}
    full, reduced = _hand_headline(x, every), _hand_headline(x, every - flagged)
    for k, s in enumerate(report.shifts):
        assert s.full[0] == pytest.approx(full[k]) and s.reduced[0] == pytest.approx(reduced[k])
        assert s.change[0] == pytest.approx(reduced[k] - full[k])
        assert s.change[1] <= s.change[0] <= s.change[2]
    assert report.ranking.tau == pytest.approx(sst.kendalltau(full, reduced).statistic)
    assert report.ranking.low <= report.ranking.tau <= report.ranking.high
    assert report.ranking.n_clusters == 12  # scenes


def test_subset_is_named_reproducible_and_leaves_flagged_items_out(runs, report):
    sb = report.subset
    assert not set(sb.items) & set(report.flags.flagged())
    assert sb.name.startswith("rgb-th-bench-") and sb.sha256[:8] in sb.name
    again = analyze_items([*runs[0], runs[1]], n_resamples=300, seed=1, irt=False).subset
    assert (again.name, again.items) == (sb.name, sb.items)
    assert sb.ranking.tau == pytest.approx(sb.tried[-1][2]) or sb.ranking.tau >= max(t[2] for t in sb.tried) - 1e-12


def test_cli_writes_md_csv_json_and_the_subset(runs, tmp_path):
    dirs, blind = runs
    out = tmp_path / "analysis"
    r = CliRunner().invoke(app, ["analyze", "items", *map(str, dirs), str(blind), "--format", "json",
                                 "--resamples", "100", "--no-irt", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["flag_counts"] == {"contradictory-duplicate": 2, "no-capable-model": 2, "falls-with-ability": 1,
                                  "key-suspect": 2, "blind-answerable": 1}
    assert doc["items"][0]["item"] in {*DUP, MISKEYED, FALLS, BLIND_RIGHT}  # most suspect first
    assert doc["design"]["cluster"] == "scene" and doc["design"]["n_resamples"] == 100
    names = sorted(p.name for p in out.iterdir())
    assert names[:3] == ["items.csv", "items.json", "items.md"] and names[3].startswith("subset-rgb-th-bench-")
    sub = json.loads((out / names[3]).read_text())
    assert sub["n_items"] == len(sub["items"]) and sub["name"] == doc["subset"]["name"]
    md = (out / "items.md").read_text()
    assert "## Flagged items (5)" in md and "Kendall tau-b" in md


def test_cli_bad_input_is_one_line_and_exit_2(runs, tmp_path):
    dirs, _blind = runs
    not_run = tmp_path / "empty"
    not_run.mkdir()
    other = craft_run(tmp_path / "ifb", "if-bench", n=16)
    for args in ([str(dirs[0]), str(not_run)], [str(dirs[0])], [str(dirs[0]), str(dirs[1]), "--format", "xml"],
                 [str(dirs[0]), str(other)]):
        r = CliRunner().invoke(app, ["analyze", "items", *args])
        assert r.exit_code == 2, r.output
        assert r.output.strip().startswith("error:") and len(r.output.strip().splitlines()) == 1, r.output
        assert "Traceback" not in r.output
    assert "different benchmarks (if-bench, rgb-th-bench)" in r.output


def test_real_rgbth_replies_flag_the_contradictory_duplicate(rgbth_data, shared_data, tmp_path):
    from lensbench.benchmarks.rgbth.benchmark import RGBThBench
    from lensbench.runtime.runner import RunSettings, run_benchmark

    dirs = []
    for name in ("GLM", "doubao1_6_nonthink", "smolvlm2_2_2B_instruct"):
        out = tmp_path / name
        run_benchmark(RGBThBench(), RunSettings(model=f"replay:{shared_data / 'RGB-Th-Bench' / f'benchmark_results_{name}.json'}",
                                                out=out, data_dir=rgbth_data, progress=False))
        dirs.append(out)
    rep = analyze_items(dirs, n_resamples=100, irt=False)
    dup = {i for i, fs in rep.flags.flags.items() if "contradictory-duplicate" in fs}
    assert dup == {"Source 1/Fuse panel 2/Temp2Col/1", "Source 1/Fuse panel 2/Temp2Col/3"}
    assert len(rep.matrix.items) == 1624 and rep.ranking.n_clusters == 29
