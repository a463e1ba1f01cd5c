"""``lensbench data stats BENCH``: each benchmark's statistics on the real data (../shared/data,
skipped when absent), on the golden GroundingME fixture and on a folder the GroundingME pipeline
built; every expected figure is counted here from the raw files, independently of the loaders."""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.benchmarks.base import Benchmark
from lensbench.cli.main import app
from lensbench.core.errors import ConfigError
from lensbench.report.datastats import quartiles, render_stats
from lensbench.tools.data.stats import benchmark_stats

GM_FIXTURE = Path(__file__).resolve().parents[1] / "golden" / "fixtures" / "gm" / "hf"


def _rows(st, key):
    return {r[0]: r[1:] for r in st.table(key).rows}


def test_ifbench_fig1_fig8_on_real_data(shared_data):
    raw = json.loads((shared_data / "IF-Bench/evaluate/if_bench/if_bench.json").read_text())
    st = benchmark_stats("if-bench", shared_data / "IF-Bench")
    dims = _rows(st, "fig1_dimensions")
    for dim, recs in raw.items():
        assert dims[dim][0] == len(recs)
    assert dims["Total"] == [sum(len(v) for v in raw.values()), 680]
    imgs: dict[str, set] = {}
    for recs in raw.values():
        for r in recs:
            imgs.setdefault(r["dataset"], set()).add(r["dst_thermal_path"])
    sub = _rows(st, "fig8_subdatasets")
    assert {k: v[0] for k, v in sub.items() if k != "Total"} == {k: len(v) for k, v in imgs.items()}
    assert _rows(st, "totals")["Sub-datasets"] == [len(imgs), 23]
    tasks = _rows(st, "fig1_tasks")
    assert tasks["Image reasoning"][0] == len(raw["Thermal Feature Reasoning"]) + len(raw["Commonsense Reasoning"])


def test_ivbench_fig1_on_real_data(shared_data):
    per_type, videos = Counter(), set()
    for line in (shared_data / "IV-Bench/dataset/test_data.jsonl").read_text().splitlines():
        for vid, qs in json.loads(line).items():
            videos.add(vid)
            per_type.update(q["question_type"] for q in qs)
    st = benchmark_stats("iv-bench", shared_data / "IV-Bench")
    tasks = _rows(st, "fig1b_tasks")
    assert {k: v[0] for k, v in tasks.items() if k != "Total"} == dict(per_type)
    assert _rows(st, "totals")["Videos"] == [len(videos), 967]
    assert _rows(st, "fig1b_groups")["Reasoning"][0] == 6


def test_gobench_fig2_on_real_data(shared_data):
    recs = json.loads((shared_data / "GOBench/data/data_total.json").read_text())
    scen = Counter(r["category"] for r in {r["index"].rsplit(".", 1)[0]: r for r in recs}.values())
    st = benchmark_stats("gobench", shared_data / "GOBench")
    rows = _rows(st, "fig2_scenarios")
    assert rows["Direct"] == [scen["direct_light_images"], 108]
    assert rows["Reflect"] == [scen["reflect_light_images"], 121]
    assert rows["Total"] == [sum(scen.values()), 340]
    assert _rows(st, "fig2_images")["Total"][0] == len(recs)


def test_rgbth_counts_on_real_data(shared_data):
    data = shared_data / "RGB-Th-Bench/RGB-Th-Bench/Data"
    per_skill, scenes = Counter(), set()
    for f in data.glob("*/*/questions.json"):
        scenes.add(f.parent)
        for it in json.loads(f.read_text())["data"]:
            per_skill[it["skill_type"]] += len(it["QAs"])
    st = benchmark_stats("rgb-th-bench", data)
    skills = _rows(st, "skills")
    assert len(skills) == 15 and all(skills[k][0] == per_skill[k] for k in skills if k != "Total")
    extra = _rows(st, "extra_skills")
    assert skills["Total"][0] + extra["Total"][0] == sum(per_skill.values())
    assert _rows(st, "totals")["RGB-thermal pairs (scenes)"] == [len(scenes), 29]


def test_groundingme_table2_fig3_on_the_golden_fixture():
    pq = pytest.importorskip("pyarrow.parquet")
    rows = pq.read_table(next(GM_FIXTURE.rglob("*.parquet")), columns=["description", "bbox", "subtask_l1",
                                                                       "width", "height"]).to_pylist()
    st = benchmark_stats("groundingme", GM_FIXTURE)
    pos = [r for r in rows if r["subtask_l1"] != "Rejection" and r["bbox"]]
    inst = [math.sqrt((b[2] - b[0]) * (b[3] - b[1])) for b in (r["bbox"] for r in pos)]
    ratio = [100 * (r["bbox"][2] - r["bbox"][0]) * (r["bbox"][3] - r["bbox"][1]) / (r["width"] * r["height"])
             for r in pos]
    img = [math.sqrt(r["width"] * r["height"]) for r in rows]
    nums = _rows(st, "tab2_numbers")
    assert nums["Instance size (px)"][0] == len(pos) and nums["Instance size (px)"][1] == pytest.approx(min(inst))
    assert nums["Instance area ratio (%)"][2:5] == pytest.approx(statistics.quantiles(ratio, n=4, method="inclusive"))
    tab2 = _rows(st, "tab2")
    assert tab2["Image Size"] == [f"{round(min(img)):,} - {round(max(img)):,}", "1,500 - 7,680"]
    assert tab2["Object Class"] == [None, 241] and tab2["Intra-Class Count Quartile"][0] is None
    l1 = _rows(st, "fig3_l1")
    assert l1["Rejection"] == [sum(r["subtask_l1"] == "Rejection" for r in rows), 201]
    assert l1["Total"] == [len(rows), 1005]
    assert sum(v[1] for k, v in _rows(st, "fig3_l2").items() if k != "Total") == 1005  # the paper's L-2 sum


def test_groundingme_on_a_pipeline_built_folder(tmp_path):
    pytest.importorskip("pyarrow")
    from lensbench.testing.server import FakeOpenAIServer

    sys.path.insert(0, str(Path(__file__).parent))
    from gm_build_fixture import ScriptedBuilder, make_scene

    scene = make_scene(tmp_path)
    runner = CliRunner()
    with FakeOpenAIServer(responder=ScriptedBuilder()) as srv:
        res = runner.invoke(app, ["groundingme", "build", "--work", str(tmp_path / "w"), "--model", "openai:b",
                                  "--base-url", srv.url, "--images", str(scene["images"]), "--boxes",
                                  str(scene["boxes"]), "--small-boxes", str(scene["small"]), "--max-per-image", "10"])
        assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["groundingme", "export", "--work", str(tmp_path / "w"), "--out", str(tmp_path / "rel"),
                              "--unreviewed"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["data", "stats", "groundingme", str(tmp_path / "rel"), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    tab2 = {r[0]: r[1] for r in next(t for t in doc["tables"] if t["key"] == "tab2")["rows"]}
    # classes: cone, flag, kite; intra-class counts without the HR-Bench kite: 4 cones (4) and 8 flags (8):
    # sorted [4]*4 + [8]*8 -> Q1 at 2.75 = 4, median at 5.5 = 8, Q3 at 8.25 = 8
    assert tab2["Object Class"] == 3 and tab2["Intra-Class Count Quartile"] == "(4, 8, 8)"
    # image sizes: sqrt(200*150) = 173.2, sqrt(240*160) = 196.0, sqrt(400*300) = 346.4
    assert tab2["Image Size"] == "173 - 346"


def test_cli_errors_and_plots(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["data", "stats", "nope", str(tmp_path)])
    assert res.exit_code != 0 and "unknown benchmark" in res.output
    res = runner.invoke(app, ["data", "stats", "groundingme", str(tmp_path / "missing")])
    assert res.exit_code != 0 and "missing" in res.output
    pytest.importorskip("matplotlib")
    pytest.importorskip("pyarrow")
    res = runner.invoke(app, ["data", "stats", "groundingme", str(GM_FIXTURE), "--plots", str(tmp_path / "p")])
    assert res.exit_code == 0, res.output
    names = sorted(p.name for p in (tmp_path / "p").iterdir())
    assert "GroundingME_fig3_l1.png" in names and "GroundingME_hist_Description_length_words.png" in names
    assert "### Statistics (Table 2)" in res.output


def test_a_benchmark_without_stats_and_the_writers():
    class NoStats(Benchmark):
        name = "nostats"
        __module__ = "lensbench.benchmarks.nostats.benchmark"

        def load(self, data_dir):
            return []

        def aggregate(self, records):
            return {}, {}

        def tables(self, results, fmt="md", with_paper=False):
            return ""

    with pytest.raises(ConfigError, match="no statistics for nostats"):
        NoStats().dataset_stats(Path("."))
    assert quartiles([]) is None and quartiles([1, 2, 3, 4]) == (1.75, 2.5, 3.25)
    st = benchmark_stats("groundingme", GM_FIXTURE) if GM_FIXTURE.is_dir() else None
    if st is not None:
        csv = render_stats(st, "csv")
        assert csv.startswith("# tab2: Statistics\nStatistic,This data,Paper\n")
        with pytest.raises(ValueError):
            render_stats(st, "xml")
