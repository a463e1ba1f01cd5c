"""The in-process runner of the tests (tests/clirun.py, the ``cli`` fixture) answers as ``python -m lensbench``
does: same stdout, stderr and exit status for help at a set width, bad input, an unknown command, a report;
and a command leaves nothing behind in the test process (environment, folder, argv, signal handlers)."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from clirun import real_cli, run_cli


@pytest.fixture(scope="module")
def finished(rgbth_gen, tmp_path_factory):
    out = tmp_path_factory.mktemp("clirun") / "run"
    r = run_cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "random", "--seed", "2", "--limit",
                "12", "--out", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    return out


def test_in_process_equals_a_real_process(finished, tmp_path):
    cases = [(["run", "if-bench", "--help"], {"columns": 80}),  # rich help at the width given
             (["run", "rgb-th-bench", "--data-dir", str(tmp_path / "none"), "--model", "random", "--out",
               str(tmp_path / "x")], {}),  # bad input: one line, exit 2
             (["no-such-command"], {"columns": 80}),  # click's usage error
             (["report", str(finished), "--format", "json"], {}),
             (["report", str(finished), str(tmp_path / "missing")], {})]  # exit 3, a line per unreadable folder
    codes = set()
    for args, kw in cases:
        a, b = run_cli(*args, **kw), real_cli(*args, **kw)
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), args
        codes.add(a.returncode)
    assert codes == {0, 2, 3}


def test_env_replaces_the_environment_and_cwd_is_entered(finished, tmp_path, monkeypatch):
    monkeypatch.setenv("LENSBENCH_CLIRUN_PROBE", "1")
    (tmp_path / "here").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "LENSBENCH_CLIRUN_PROBE"}
    env["LENSBENCH_DATA"] = str(tmp_path / "home")
    a = run_cli("list", "--json", env=env, cwd=tmp_path / "here")
    b = real_cli("list", "--json", env=env, cwd=tmp_path / "here")
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout and str(tmp_path / "home") in a.stdout
    # relative paths are read from cwd
    rel = os.path.relpath(finished, tmp_path / "here")
    assert run_cli("report", rel, "--format", "json", cwd=tmp_path / "here").returncode == 0
    assert run_cli("report", rel, "--format", "json").returncode == (0 if os.path.relpath(finished) == rel else 3)


def test_nothing_leaks_into_the_test_process(finished, tmp_path):
    before = (dict(os.environ), os.getcwd(), list(sys.argv), sys.excepthook,
              signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    from lensbench.runtime import interrupt

    owned = dict(interrupt._owned)
    r = run_cli("run", "rgb-th-bench", "--data-dir", str(finished.parent / "none"), "--model", "random", "--out",
                str(tmp_path / "r"), env={"PATH": os.environ.get("PATH", ""), "LENSBENCH_X": "1"}, cwd=tmp_path)
    assert r.returncode == 2
    r = run_cli("report", str(finished))  # a rebuild runs the event loop (SIGTERM handler installed inside)
    assert r.returncode == 0, r.stderr
    after = (dict(os.environ), os.getcwd(), list(sys.argv), sys.excepthook,
             signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    assert after == before and interrupt._owned == owned
