"""Issue 32.7: long commands show progress: a download's bytes, a sweep's steps, view and reproduce."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest
from rich.console import Console

from lensbench.runtime.progress import Activity


def _console(terminal: bool, width: int = 80) -> Console:
    return Console(file=io.StringIO(), force_terminal=terminal, width=width, color_system=None)


def test_activity_off_a_terminal_prints_start_progress_and_end():
    con = _console(False)
    with Activity(con, "download x", total=4 * 2**20, unit="B", every_s=0) as a:
        a.advance(2**20)
        a.advance(2**20)
    lines = con.file.getvalue().splitlines()
    assert lines[0] == "download x ..."
    assert lines[1].startswith("download x: 1.0 MiB of 4.0 MiB, ") and lines[2].startswith("download x: 2.0 MiB of")
    assert re.fullmatch(r"download x: done in \d+\.\d s", lines[-1])


def test_activity_says_when_it_stopped_on_an_error():
    con = _console(False)
    with pytest.raises(RuntimeError), Activity(con, "reproduce"):
        raise RuntimeError("boom")
    assert re.search(r"^reproduce: stopped after \d+\.\d s$", con.file.getvalue(), re.M)


def test_activity_on_a_terminal_keeps_the_byte_counts_at_80_columns():
    con = _console(True)
    with Activity(con, "github:huhanwj/RGB-Th-Benchmark@0123456789 (a long label that must shrink)", unit="B") as a:
        a.set_total(300 * 2**20)
        a.advance(150 * 2**20)
        out = Console(file=io.StringIO(), width=80, color_system=None)
        out.print(a._p.make_tasks_table(a._p.tasks))
    row = out.file.getvalue().splitlines()[0]
    assert len(row) <= 80 and "157.3/314.6 MB" in row  # rich's DownloadColumn: decimal megabytes, both whole


def test_http_download_reports_every_byte(tmp_path):
    """The GitHub download path tells its display the size announced and every block received."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    import threading

    from lensbench.tools.data.fetch import http_download

    body = bytes(range(256)) * 12_000  # ~3 MB: several 1 MiB blocks

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        seen = {"total": None, "steps": []}

        class Probe:
            def set_total(self, n):
                seen["total"] = n

            def advance(self, n):
                seen["steps"].append(n)

        out = http_download(f"http://127.0.0.1:{srv.server_address[1]}/f.zip", tmp_path / "f.zip", progress=Probe())
    finally:
        srv.shutdown()
    assert out.read_bytes() == body
    assert seen["total"] == len(body) and sum(seen["steps"]) == len(body) and len(seen["steps"]) >= 3


def test_sweep_log_lines_name_their_step(monkeypatch, tmp_path):
    from lensbench.tools.groundingme import sweep

    (tmp_path / "mix").mkdir()
    (tmp_path / "mix" / "mixtures.json").write_text(json.dumps({"bbox_format": "qwen3", "ratios": {
        "1:8": {"file": "a.jsonl"}, "1:1": {"file": "b.jsonl"}}}))
    monkeypatch.setattr(sweep, "_evaluate", lambda *a, **k: {})
    monkeypatch.setattr(sweep, "read_examples", lambda path: [])  # the mixtures' check (30.3) is tested elsewhere
    monkeypatch.setattr(sweep, "train_vlm", lambda path, settings, note=None: {"model_dir": str(tmp_path / "m"),
                                                                             "steps": 1})

    class Train:
        model = "base-model"
        lora = False

        def model_copy(self, update):
            return self

    plan = sweep.SweepPlan(train=Train(), mixtures=tmp_path / "mix", eval_set=tmp_path / "e",
                                           out=tmp_path / "out", groundingme=None, ratios=None, eval={}, batch=1)
    lines: list[str] = []
    sweep.run_sweep(plan, log=lines.append)
    assert [re.match(r"\[(\d)/3\] ", ln).group(1) for ln in lines] == ["1", "2", "2", "3", "3"]
    assert lines[0] == "[1/3] baseline: evaluating base-model"
    assert lines[-1].startswith("[3/3] ratio 1:1: trained (1 steps); evaluating")


def test_view_shows_its_progress_off_a_terminal(tmp_path):
    from lensbench.testing.runs import craft_run

    run = craft_run(tmp_path / "a", "groundingme", "ma", n=8, seed=1)
    r = subprocess.run([sys.executable, "-m", "lensbench", "view", str(run), "--out", str(tmp_path / "v.html"),
                        "--no-figures"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "view: building the page of 1 run folder(s) ..." in r.stderr
    assert re.search(r"view: building the page of 1 run folder\(s\): done in \d+\.\d s", r.stderr)
