"""Issue 33.2: a lensbench run exported as VLMEvalKit predictions (.tsv / .xlsx) or lmms-eval samples, then scored
with ``--model predictions:FILE``, gives the same metrics and the same per-sample outcomes, for all five
benchmarks on their demo data."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app

BENCHES = {  # benchmark -> (demo data folder below the demo root, model)
    "if-bench": ("", "random"),
    "rgb-th-bench": ("Data", "random"),
    "iv-bench": ("", "random"),
    "gobench": ("", "random"),
    "groundingme": ("", 'constant:{"bbox_2d": [20, 10, 90, 80]}'),
}
FORMATS = {"vlmevalkit-tsv": ".tsv", "lmms-eval": ".jsonl", "vlmevalkit-xlsx": ".xlsx"}
HAS_XLSX = importlib.util.find_spec("openpyxl") is not None


def _cli(*args: str):
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code == 0, r.output
    return r


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """benchmark -> (data folder, a finished run on its demo data)."""
    root = tmp_path_factory.mktemp("interop")
    out = {}
    for bench, (sub, model) in BENCHES.items():
        demo = root / f"demo-{bench}"
        _cli("data", "demo", bench, str(demo))
        data = demo / sub if sub else demo
        run = root / f"run-{bench}"
        _cli("run", bench, "--data-dir", str(data), "--model", model, "--out", str(run), "--no-progress")
        out[bench] = (data, run)
    return out


def _samples(run: Path) -> dict[str, tuple]:
    rows = [json.loads(x) for x in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    return {r["request_id"]: (r["reply"], r["outcome"], r["answer"], r["scores"]) for r in rows}


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("bench", list(BENCHES))
def test_export_then_import_gives_the_same_metrics(runs, tmp_path, bench, fmt):
    if fmt == "vlmevalkit-xlsx" and not HAS_XLSX:
        pytest.skip("openpyxl is not installed (pip install 'lensbench[interop]')")
    data, run = runs[bench]
    exported = tmp_path / f"{bench}_predictions{FORMATS[fmt]}"
    _cli("export", str(run), "--format", fmt, "--out", str(exported))
    n_records = len((run / "samples.jsonl").read_text(encoding="utf-8").splitlines())
    if fmt == "lmms-eval":
        lines = [json.loads(x) for x in exported.read_text(encoding="utf-8").splitlines()]
        assert len(lines) == n_records
        assert {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "doc_hash"} <= set(lines[0])
        assert lines[0]["resps"] == [[lines[0]["filtered_resps"][0]]]
    elif fmt == "vlmevalkit-tsv":
        header = next(csv.reader(exported.open(encoding="utf-8", newline=""), delimiter="\t"))
        assert header[0] == "index" and header[-1] == "prediction"
    again = tmp_path / "again"
    r = CliRunner().invoke(app, ["run", bench, "--data-dir", str(data), "--model", f"predictions:{exported}",
                                 "--out", str(again), "--no-progress"])
    assert r.exit_code == 0, r.output
    first = json.loads((run / "result.json").read_text(encoding="utf-8"))
    second = json.loads((again / "result.json").read_text(encoding="utf-8"))
    assert second["metrics"] == first["metrics"]
    assert _samples(again) == _samples(run)
    note = " ".join(second["extra"]["predictions"])
    assert f"{n_records} rows read" in note and "not used" in note  # which extraction lensbench applied


def test_export_refuses_a_format_without_a_file_and_an_unknown_format(runs, tmp_path):
    _data, run = runs["groundingme"]
    r = CliRunner().invoke(app, ["export", str(run), "--format", "vlmevalkit-tsv"])
    assert r.exit_code == 2 and "--out FILE.tsv" in r.output
    r = CliRunner().invoke(app, ["export", str(run), "--format", "csv", "--out", str(tmp_path / "x.csv")])
    assert r.exit_code == 2 and "--format must be" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["export", str(run), "--format", "lmms-eval", "--out", str(tmp_path / "x.tsv")])
    assert r.exit_code == 2 and "writes a .jsonl file" in r.output


@pytest.mark.parametrize("fmt", ["vlmevalkit-tsv", "lmms-eval"])
def test_failed_calls_stay_failures_through_export_and_import(runs, tmp_path, fmt):
    data, run = runs["rgb-th-bench"]
    own = tmp_path / "own.jsonl"
    _cli("export", str(run), "--out", str(own))
    lines = [json.loads(x) for x in own.read_text(encoding="utf-8").splitlines()]
    for rec in lines[:2]:  # two recorded transport failures, and one request with no reply at all
        rec.pop("text"), rec.update(error="HTTP 503")
    own.write_text("".join(json.dumps(x) + "\n" for x in lines[:-1]), encoding="utf-8")
    failed = tmp_path / "failed"
    r = CliRunner().invoke(app, ["run", "rgb-th-bench", "--data-dir", str(data), "--model", f"replay:{own}",
                                 "--out", str(failed), "--no-progress"])
    assert r.exit_code == 3, r.output
    exported = tmp_path / f"failed{FORMATS[fmt]}"
    _cli("export", str(failed), "--format", fmt, "--out", str(exported))
    again = tmp_path / "again"
    r = CliRunner().invoke(app, ["run", "rgb-th-bench", "--data-dir", str(data), "--model", f"predictions:{exported}",
                                 "--out", str(again), "--no-progress"])
    assert r.exit_code == 3, r.output
    first = json.loads((failed / "result.json").read_text(encoding="utf-8"))
    second = json.loads((again / "result.json").read_text(encoding="utf-8"))
    assert first["counts"]["n_error"] == second["counts"]["n_error"] == 3
    assert second["metrics"] == first["metrics"]
    outcomes = {k: v[1] for k, v in _samples(again).items()}
    assert outcomes == {k: v[1] for k, v in _samples(failed).items()}
    assert "wrong" not in {outcomes[lines[0]["request_id"]], outcomes[lines[-1]["request_id"]]}
