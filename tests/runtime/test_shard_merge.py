"""--shard I/N and lensbench merge: shards cover every sample once; the merged run equals an unsharded
run (metrics, counts, samples); conflicts, missing shards and mismatched jobs are refused."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from clirun import run_cli
from lensbench.benchmarks.registry import get_benchmark
from lensbench.core.errors import ConfigError
from lensbench.runtime.merge import merge_runs
from lensbench.runtime.runner import run_benchmark
from lensbench.runtime.settings import RunSettings
from lensbench.runtime.shards import parse_shard
from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release
from lensbench.testing.server import FakeOpenAIServer


def reply(body: dict) -> str:
    """Deterministic, content-dependent replies (so wrong answers appear too)."""
    text = json.dumps(body["messages"])
    return "Yes" if sum(map(ord, text)) % 3 else "No"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_rgbth_release(tmp_path_factory.mktemp("d"), n_scenes=3, questions_per_unit=3)


def run(data: Path, out: Path, url: str, **kw):
    bench = get_benchmark("rgb-th-bench")(None)
    return run_benchmark(bench, RunSettings(model="openai:m", base_url=[url], data_dir=data, out=out, progress=False,
                                            **kw))


def samples(run_dir: Path) -> list[dict]:
    rows = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    for r in rows:
        r.pop("latency_s", None)
    return rows


@pytest.mark.parametrize("text, want", [("0/1", (0, 1)), ("2/3", (2, 3)), (" 1 / 4 ", (1, 4))])
def test_parse_shard(text, want):
    assert parse_shard(text) == want


@pytest.mark.parametrize("text", ["3/3", "1/0", "-1/3", "a/b", "1", ""])
def test_bad_shards_are_refused(text):
    with pytest.raises(ConfigError):
        parse_shard(text)
    with pytest.raises(Exception, match="shard"):
        RunSettings(model="random", out="x", shard=text)


@pytest.fixture(scope="module")
def shard_job(data, tmp_path_factory):
    root = tmp_path_factory.mktemp("job")
    with FakeOpenAIServer(reply) as srv:
        full = run(data, root / "full", srv.url)
        n_full = sum(srv.answered.values())
        srv.answered.clear()
        shards = [run(data, root / f"s{i}", srv.url, shard=f"{i}/3") for i in range(3)]
        answered = dict(srv.answered)
    return root, full, n_full, shards, answered


def test_shards_cover_every_sample_once_and_are_partial(shard_job):
    root, full, n_full, shards, answered = shard_job
    ids = [r["sample_id"] for i in range(3) for r in samples(root / f"s{i}")]
    assert sorted(ids) == sorted(r["sample_id"] for r in samples(root / "full"))
    assert len(ids) == len(set(ids))
    assert all(not s.complete and "shard" in s.extra["partial"] for s in shards)
    man = json.loads((root / "s1" / "run.json").read_text())
    assert man["shard"]["index"] == 1 and man["shard"]["count"] == 3
    assert man["shard"]["n_samples_unsharded"] == man["n_samples_loaded"] > man["n_samples"]
    # each request answered once over the three shards, and as many as the unsharded run sent
    assert set(answered.values()) == {1} and len(answered) == n_full


def test_merged_run_equals_the_unsharded_run(shard_job):
    root, full, _, _, _ = shard_job
    merged = merge_runs([root / "s2", root / "s0", root / "s1"], root / "merged")
    assert merged.metrics == full.metrics and merged.counts == full.counts
    assert merged.complete and "partial" not in merged.extra
    assert samples(root / "merged") == samples(root / "full")
    man = json.loads((root / "merged" / "run.json").read_text())
    assert "shard" not in man and man["merged_from"]["shards"] == 3
    assert man["n_samples"] == json.loads((root / "full" / "run.json").read_text())["n_samples"]
    # the report command reads it like any run
    r = run_cli("report", str(root / "merged"), "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["metrics"] == full.metrics


def _copy(src: Path, dst: Path) -> Path:
    import shutil
    shutil.copytree(src, dst)
    return dst


def test_duplicate_rows_are_kept_once_and_ok_beats_error(shard_job, tmp_path):
    root = shard_job[0]
    s0, s1, s2 = (_copy(root / f"s{i}", tmp_path / f"s{i}") for i in range(3))
    with sqlite3.connect(s0 / "responses.sqlite") as a, sqlite3.connect(s1 / "responses.sqlite") as b:
        row = a.execute("SELECT * FROM responses LIMIT 1").fetchone()
        cols = ",".join("?" * len(row))
        b.execute(f"INSERT INTO responses VALUES ({cols})", row)  # the same ok row in two shards
        err = a.execute("SELECT * FROM responses LIMIT 1 OFFSET 1").fetchone()
        b.execute(f"INSERT INTO responses VALUES ({cols})",
                  (err[0], err[1], err[2], "error", None, None, "HTTP 500", *err[7:]))  # an error row for an ok key
    merged = merge_runs([s0, s1, s2], tmp_path / "m")
    assert merged.counts == shard_job[1].counts
    info = json.loads((tmp_path / "m" / "run.json").read_text())["merged_from"]
    assert info["duplicates"] == 2 and info["rows_merged"] == info["rows_read"] - 2


def test_conflicting_replies_name_both_folders(shard_job, tmp_path):
    root = shard_job[0]
    s0, s1, s2 = (_copy(root / f"s{i}", tmp_path / f"s{i}") for i in range(3))
    with sqlite3.connect(s0 / "responses.sqlite") as a, sqlite3.connect(s2 / "responses.sqlite") as b:
        row = list(a.execute("SELECT * FROM responses LIMIT 1").fetchone())
        row[4] = "Maybe"
        b.execute(f"INSERT INTO responses VALUES ({','.join('?' * len(row))})", row)
    with pytest.raises(ConfigError, match="conflict") as ei:
        merge_runs([s0, s1, s2], tmp_path / "m")
    assert str(s0) in str(ei.value) and str(s2) in str(ei.value)
    assert not (tmp_path / "m" / "run.json").exists()


def test_missing_duplicate_and_foreign_shards_are_refused(shard_job, data, tmp_path):
    root = shard_job[0]
    with pytest.raises(ConfigError, match=r"shards missing: 1/3"):
        merge_runs([root / "s0", root / "s2"], tmp_path / "a")
    with pytest.raises(ConfigError, match=r"shard 0/3 given twice"):
        merge_runs([root / "s0", root / "s0", root / "s1", root / "s2"], tmp_path / "b")
    with pytest.raises(ConfigError, match="not a shard run"):
        merge_runs([root / "full", root / "s0"], tmp_path / "c")
    with FakeOpenAIServer(reply) as srv:
        run(data, tmp_path / "t1", srv.url, shard="1/3", temperature=0.5)
    with pytest.raises(ConfigError, match="generation_overrides differs"):
        merge_runs([root / "s0", tmp_path / "t1", root / "s2"], tmp_path / "d")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    with pytest.raises(ConfigError, match="not empty"):
        merge_runs([root / "s0", root / "s1", root / "s2"], tmp_path / "busy")


def test_a_shard_folder_is_not_resumed_as_another_shard(shard_job, data):
    root = shard_job[0]
    with pytest.raises(ConfigError, match="holds shard 0/3"):
        run(data, root / "s0", "http://127.0.0.1:9/v1", shard="1/3")


def test_cli_shard_and_merge(data, tmp_path):
    with FakeOpenAIServer(reply) as srv:
        for i in range(2):
            r = run_cli("run", "rgb-th-bench", "--data-dir", str(data), "--model", "openai:m", "--base-url", srv.url,
                        "--out", str(tmp_path / f"s{i}"), "--shard", f"{i}/2", "--no-progress")
            assert r.returncode == 0, r.stderr
            assert "partial run: shard" in r.stderr
    r = run_cli("merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "m"))
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "m" / "result.json").read_text())["complete"] is True
    r = run_cli("run", "rgb-th-bench", "--data-dir", str(data), "--model", "random", "--out", str(tmp_path / "x"),
                "--shard", "2/2")
    assert r.returncode == 2 and "--shard" in r.stderr and "0 <= I < N" in r.stderr


# ------------------------------------------------------------------ issue 20 item 3: unfinished shards
HOLD = ("import sys, time\nfrom lensbench.runtime.lock import RunLock\n"
        "lock = RunLock(sys.argv[1])\nprint('held', flush=True)\ntime.sleep(60)\n")


def _kill_midway(shard: Path, drop: int) -> None:
    """Make ``shard`` look like a run killed before its end: the last ``drop`` replies never stored, no
    'finished' stamp, no result.json."""
    with sqlite3.connect(shard / "responses.sqlite") as db:
        db.execute("DELETE FROM responses WHERE rowid IN (SELECT rowid FROM responses ORDER BY rowid DESC LIMIT ?)",
                   (drop,))
    man = json.loads((shard / "run.json").read_text())
    man.pop("finished", None)
    (shard / "run.json").write_text(json.dumps(man))
    with sqlite3.connect(shard / "responses.sqlite") as db:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('manifest', ?)", (json.dumps(man),))
    (shard / "result.json").unlink()


def test_merge_refuses_a_shard_that_is_still_running(shard_job, tmp_path):
    root = shard_job[0]
    s0, s1, s2 = (_copy(root / f"s{i}", tmp_path / f"s{i}") for i in range(3))
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(s1)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "held"
        with pytest.raises(ConfigError, match=f"PID {p.pid}"):
            merge_runs([s0, s1, s2], tmp_path / "m", allow_incomplete=True)
    finally:
        p.kill()
        p.wait()
    assert not (tmp_path / "m").exists()


def test_merge_refuses_an_unfinished_shard_unless_allowed_and_labels_it(shard_job, tmp_path):
    root, full = shard_job[0], shard_job[1]
    s0, s1, s2 = (_copy(root / f"s{i}", tmp_path / f"s{i}") for i in range(3))
    _kill_midway(s1, drop=5)
    with pytest.raises(ConfigError, match=r"shard 1/3: .*did not finish.*--allow-incomplete"):
        merge_runs([s0, s1, s2], tmp_path / "m")
    assert not (tmp_path / "m").exists()
    merged = merge_runs([s0, s1, s2], tmp_path / "m", allow_incomplete=True)
    assert merged.complete is False and "shard 1/3" in merged.extra["incomplete_shards"]
    assert merged.counts["n_error"] == merged.extra["not_sent"] == 5  # the 5 replies never stored: not sent
    assert merged.counts["n_questions"] == full.counts["n_questions"]
    doc = json.loads((tmp_path / "m" / "result.json").read_text())
    assert doc["complete"] is False and "--allow-incomplete" in doc["extra"]["incomplete_shards"]
    man = json.loads((tmp_path / "m" / "run.json").read_text())
    assert "1/3" in man["merged_from"]["incomplete_shards"]


def test_merge_keeps_the_reason_of_every_stored_error(shard_job, tmp_path):
    root = shard_job[0]
    s0, s1, s2 = (_copy(root / f"s{i}", tmp_path / f"s{i}") for i in range(3))
    with sqlite3.connect(s2 / "responses.sqlite") as db:
        rid = db.execute("SELECT request_id FROM responses WHERE status='ok' LIMIT 1").fetchone()[0]
        db.execute("UPDATE responses SET status='error', text=NULL, error='HTTP 503: overloaded (test)' "
                   "WHERE request_id=?", (rid,))
    merged = merge_runs([s0, s1, s2], tmp_path / "m")
    assert merged.counts["n_error"] == 1 and not merged.extra.get("not_sent")
    errs = [r for r in samples(tmp_path / "m") if r["outcome"] == "error"]
    assert len(errs) == 1 and errs[0]["error"] == "HTTP 503: overloaded (test)"


def test_cli_merge_allow_incomplete(shard_job, tmp_path):
    root = shard_job[0]
    s0, s1, s2 = (_copy(root / f"s{i}", tmp_path / f"s{i}") for i in range(3))
    _kill_midway(s0, drop=3)
    r = run_cli("merge", str(s0), str(s1), str(s2), "--out", str(tmp_path / "m"))
    assert r.returncode == 2 and "--allow-incomplete" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("merge", str(s0), str(s1), str(s2), "--out", str(tmp_path / "m"), "--allow-incomplete")
    assert r.returncode == 0, r.stderr
    assert "incomplete: merged with --allow-incomplete: shard 0/3" in r.stderr
