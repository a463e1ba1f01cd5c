"""Replies the store refused (``RunStore.bad_rows``, issue 20 item 4) are shown to the user: one line on the run's
console, counted in run.json / result.json, mentioned by ``lensbench report``; a resume asks exactly those again."""

from __future__ import annotations

import io
import json

from rich.console import Console

from clirun import run_cli
from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.runtime import runner
from lensbench.runtime import store as store_mod
from lensbench.runtime.settings import RunSettings
from lensbench.runtime.store import RunStore


def _refuse(monkeypatch, refused: set[str]) -> None:
    """Rows of ``refused`` requests pass the row checks yet SQLite refuses them (a status its CHECK forbids), as in
    tests/runtime/test_store_durability.py::test_a_row_sqlite_itself_refuses_is_left_out_alone."""
    real = store_mod.make_row
    monkeypatch.setattr(store_mod, "make_row", lambda resp, role, rj: real(resp, role, rj)
                        if resp.request_id not in refused
                        else (resp.key, resp.request_id, role, "maybe", None, None, None, 1, None, None, None, None, 0.0))


def cli(*args):
    return run_cli(*args)


def test_a_run_with_replies_the_store_refused_says_so(rgbth_gen, tmp_path, monkeypatch):
    out = tmp_path / "run"
    settings = RunSettings(model="constant:Yes", out=out, data_dir=rgbth_gen, limit=8, progress=False)
    requests = RGBThBench().expand(RGBThBench().load(rgbth_gen)[:8], None)
    n_requests = len(requests)
    refused = {requests[0].id, requests[3].id}
    _refuse(monkeypatch, refused)
    buf = io.StringIO()
    res = runner.run_benchmark(RGBThBench(), settings, console=Console(file=buf, width=400))
    # the console: one line, how many and that they are asked again on resume
    said = [ln for ln in buf.getvalue().splitlines() if "could not be stored" in ln]
    assert len(said) == 1 and said[0].startswith("2 replies could not be stored") and "asked again" in said[0]
    # result.json and run.json count them; the store holds the others only
    doc = json.loads((out / "result.json").read_text())
    assert doc["counts"]["n_not_stored"] == 2 and "asked again" in doc["extra"]["not_stored"]
    man = json.loads((out / "run.json").read_text())
    assert man["counts"]["n_not_stored"] == 2 and man["store_counts"]["not_stored"] == 2
    assert res.counts["n_not_stored"] == 2
    with RunStore(out) as st:
        assert st.counts()["ok"] == n_requests - 2
    # lensbench report mentions it (the paper tables, and the leaderboard's run state)
    r = cli("report", str(out))
    assert r.returncode == 0, r.stderr
    assert "2 replies could not be stored" in r.stderr and "asked again" in r.stderr
    r = cli("report", "--leaderboard", str(out))
    assert "2 replies not stored (asked again on resume)" in r.stdout
    # resuming asks exactly those two again, stores them, and says nothing more
    monkeypatch.undo()
    buf = io.StringIO()
    res = runner.run_benchmark(RGBThBench(), settings, console=Console(file=buf, width=400))
    man = json.loads((out / "run.json").read_text())
    assert man["engine"]["sent"] == 2 and man["engine"]["cached"] == n_requests - 2
    assert "could not be stored" not in buf.getvalue() and "n_not_stored" not in res.counts
    assert "not_stored" not in json.loads((out / "result.json").read_text())["extra"]
    assert "could not be stored" not in cli("report", str(out)).stderr


def test_a_run_without_refused_replies_has_no_such_count(rgbth_gen, tmp_path):
    out = tmp_path / "run"
    buf = io.StringIO()
    res = runner.run_benchmark(RGBThBench(), RunSettings(model="constant:Yes", out=out, data_dir=rgbth_gen, limit=4,
                                                         progress=False), console=Console(file=buf, width=400))
    assert "n_not_stored" not in res.counts and "not_stored" not in json.loads((out / "run.json").read_text())[
        "store_counts"]
    assert "could not be stored" not in buf.getvalue()
