"""Issue 33 on real replies: RGB-Th-Bench third-party result files (real models' recorded replies, ../shared/data)
replayed, exported as VLMEvalKit predictions and lmms-eval samples, and scored again: the same metrics, every
question matched (skipped when the real data is absent)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app


@pytest.mark.parametrize("name, mode", [("benchmark_results_GLM.json", "rgb+thermal"),
                                        ("benchmark_results_gpt-5_thermal_only.json", "thermal-only")])
@pytest.mark.parametrize("fmt, suffix", [("vlmevalkit-tsv", ".tsv"), ("lmms-eval", ".jsonl")])
def test_real_replies_survive_export_and_import(rgbth_data, tmp_path, name, mode, fmt, suffix):
    recorded = rgbth_data.parents[1] / name
    if not recorded.is_file():
        pytest.skip(f"{recorded} not found")
    common = ["run", "rgb-th-bench", "--data-dir", str(rgbth_data), "--input", mode, "--no-progress"]
    first = tmp_path / "first"
    r = CliRunner().invoke(app, [*common, "--model", f"replay:{recorded}", "--out", str(first)])
    assert r.exit_code in (0, 3), r.output  # a file may hold recorded failures: they stay failures
    exported = tmp_path / f"preds{suffix}"
    r = CliRunner().invoke(app, ["export", str(first), "--format", fmt, "--out", str(exported)])
    assert r.exit_code == 0, r.output
    second = tmp_path / "second"
    r = CliRunner().invoke(app, [*common, "--model", f"predictions:{exported}", "--out", str(second)])
    assert r.exit_code in (0, 3), r.output
    a, b = (json.loads((d / "result.json").read_text(encoding="utf-8")) for d in (first, second))
    assert b["metrics"] == a["metrics"] and b["counts"].get("n_error") == a["counts"].get("n_error")
    n_ok = sum(1 for line in (first / "samples.jsonl").read_text(encoding="utf-8").splitlines()
               if json.loads(line)["outcome"] != "error")
    note = " ".join(b["extra"]["predictions"])
    assert "rows were not asked for" not in note and "match no item" not in note
    assert f"{n_ok if fmt == 'lmms-eval' else 1624} rows read" in note
