"""Issue 32.9: an IV-Bench frame sweep is shown in numeric order (8f, 16f, 32f, 64f), never as text (16f, 32f, 64f, 8f).

End to end on the demo data (``lensbench data demo iv-bench``, ``run --frames 8,16,32,64 --model random``): the
report's Table 2 rows, its sweep table, the leaderboard's columns and the tidy CSV's rows all follow frames; the
pieces (``sweep_configs``, ``config_key``, ``sweep_in_order``) on orders given out of order.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from lensbench.benchmarks.ivbench.sweep import config_key, sweep_configs, sweep_in_order

FRAMES = [8, 16, 32, 64]


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory, cli):
    root = tmp_path_factory.mktemp("ivsweep")
    r = cli("data", "demo", "iv-bench", str(root / "data"))
    assert r.returncode == 0, r.stderr
    r = cli("run", "iv-bench", "--data-dir", str(root / "data"), "--frames", "8,16,32,64", "--model", "random",
            "--out", str(root / "run"), "--no-progress")
    assert r.returncode == 0, r.stderr
    return root / "run"


def _frames_in(texts, pattern):
    return [int(m.group(1)) for t in texts if (m := re.search(pattern, t))]


def test_result_and_report_rows_follow_frames(sweep_run, cli):
    sweep = json.loads((sweep_run / "result.json").read_text())["metrics"]["sweep"]
    assert [e["frames"] for e in sweep] == FRAMES
    md = cli("report", str(sweep_run)).stdout
    table2 = [ln for ln in md.splitlines() if ln.startswith("| random")]
    assert _frames_in(table2, r"\((\d+)f@native\)") == FRAMES  # Table 2 layout, one row per config
    assert _frames_in(table2, r"^\| random \(seed \d+\) \| (\d+) \| native \|") == FRAMES  # the sweep table


def test_leaderboard_columns_and_tidy_csv_follow_frames(sweep_run, cli):
    lb = cli("report", str(sweep_run), "--leaderboard").stdout
    header = next(ln for ln in lb.splitlines() if ln.startswith("| Model"))
    cols = re.findall(r"; (\d+)f@native\]", header)
    assert [int(c) for c in cols] == FRAMES
    assert cols == sorted(cols, key=int)  # numeric order, not text order (16f, 32f, 64f, 8f before the fix)
    rows = list(csv.DictReader(io.StringIO(cli("report", str(sweep_run), "--format", "csv").stdout)))
    settings = [row for row in rows if re.search(r"\d+f@native", " ".join(row.values()))]
    got = _frames_in([" ".join(r.values()) for r in settings], r"; (\d+)f@native")
    assert list(dict.fromkeys(got)) == FRAMES and got == sorted(got)  # each config's rows together, in frame order


def test_configs_are_sorted_by_frames_then_short_side_native_last():
    assert sweep_configs("64,8,32,16", None, None) == [(8, None), (16, None), (32, None), (64, None)]
    assert sweep_configs("32,8", "native,240,72", None) == [(8, 72), (8, 240), (8, None), (32, 72), (32, 240),
                                                           (32, None)]
    assert sweep_configs(32, None, "16x480,8x720,8xnative") == [(8, 720), (8, None), (16, 480)]
    cfgs = [(16, None), (8, 144), (8, 72), (128, 72)]
    assert sorted(cfgs, key=config_key) == [(8, 72), (8, 144), (16, None), (128, 72)]


def test_an_old_result_with_configs_in_given_order_is_shown_sorted():
    old = [{"frames": 32}, {"frames": 8, "resolution": None}, {"frames": 8, "resolution": 240}, {"frames": 16}]
    assert [(e["frames"], e.get("resolution")) for e in sweep_in_order(old)] == [(8, 240), (8, None), (16, None),
                                                                                (32, None)]
