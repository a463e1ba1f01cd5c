"""Experiment tracking (issue 25): a run's settings, metrics with CIs and per-sample table logged to
Weights & Biases (offline mode) and MLflow (a local file store), read back from what they wrote."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from clirun import run_cli
from lensbench.runtime.tracking import log_run, run_payload


def cli(*args, env=None, cwd=None):
    return run_cli(*args, env=env, cwd=cwd)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from lensbench.benchmarks.rgbth.demo import write_release

    # 10 scenes: the fewest with a CI (SPEC: below 10 clusters "too few clusters (n)")
    data = write_release(tmp_path_factory.mktemp("track-data"), n_scenes=10, questions_per_unit=4)
    out = tmp_path_factory.mktemp("track") / "run"
    r = cli("run", "rgb-th-bench", "--data-dir", str(data), "--model", "random", "--seed", "3", "--out", str(out),
            "--no-progress")
    assert r.returncode == 0, r.stderr
    return out


def test_payload_holds_settings_metrics_with_cis_and_every_sample(run_dir):
    pytest.importorskip("scipy")
    p = run_payload(run_dir)
    result = json.loads((run_dir / "result.json").read_text())
    samples = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert p["settings"]["benchmark"] == "rgb-th-bench" and p["settings"]["settings"]["seed"] == 3
    assert p["metrics"]["QAcc/Overall"] == pytest.approx(result["metrics"]["QAcc"]["Overall"])
    lo, hi = p["metrics"]["QAcc/Overall_ci_low"], p["metrics"]["QAcc/Overall_ci_high"]
    assert lo <= result["metrics"]["QAcc"]["Overall"] <= hi and lo < hi
    assert [r[0] for r in p["sample_rows"]] == [s["sample_id"] for s in samples]
    assert [r[1] for r in p["sample_rows"]] == [s["outcome"] for s in samples]


def test_wandb_offline(run_dir, tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    where = log_run(run_dir, "wandb", project="lb-test")
    assert where.startswith("W&B run random (seed 3)/rgb-th-bench")
    (offline,) = list((tmp_path / "wandb").glob("offline-run-*"))
    tables = {p.name.split("_")[0]: json.loads(p.read_text()) for p in (offline / "files" / "media" / "table").glob("*.json")}
    n = len((run_dir / "samples.jsonl").read_text().splitlines())
    assert tables["samples"]["columns"][:2] == ["sample_id", "outcome"] and len(tables["samples"]["data"]) == n
    metric_rows = {(r[0], r[1]): r for r in tables["metrics"]["data"]}
    qacc = json.loads((run_dir / "result.json").read_text())["metrics"]["QAcc"]["Overall"]
    assert metric_rows[("QAcc", "Overall")][2] == pytest.approx(qacc)
    log = next(offline.glob("*.wandb"))  # config and summary are in the run's record log (flushed by wandb's
    for _ in range(100):                # service process, possibly just after finish() returned)
        blob = log.read_bytes()
        if b"QAcc/Overall_ci_low" in blob:
            break
        time.sleep(0.1)
    assert b"rgb-th-bench" in blob and b"QAcc/Overall_ci_low" in blob


def test_mlflow_local_file_store(run_dir, tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    where = log_run(run_dir, "mlflow", project="lb-test")
    assert "experiment 'lb-test'" in where
    client = mlflow.tracking.MlflowClient()
    exp = client.get_experiment_by_name("lb-test")
    (run,) = client.search_runs([exp.experiment_id])
    result = json.loads((run_dir / "result.json").read_text())
    assert run.data.params["benchmark"] == "rgb-th-bench" and run.data.params["settings.seed"] == "3"
    assert run.data.metrics["QAcc/Overall"] == pytest.approx(result["metrics"]["QAcc"]["Overall"])
    assert {"samples_table.json", "metrics_table.json", "run.json"} <= {a.path for a in client.list_artifacts(run.info.run_id)}


def test_run_log_to_flag_logs_at_the_end_and_is_checked_first(rgbth_gen, tmp_path):
    pytest.importorskip("mlflow")
    env = {**os.environ, "MLFLOW_TRACKING_URI": (tmp_path / "mlruns").as_uri(), "MLFLOW_ALLOW_FILE_STORE": "true"}
    r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "random", "--limit", "2", "--out",
            str(tmp_path / "r"), "--no-progress", "--log-to", "mlflow", "--log-project", "flagged", env=env)
    assert r.returncode == 0, r.stderr
    assert "logged to MLflow run" in r.stderr and "experiment 'flagged'" in r.stderr
    assert (tmp_path / "mlruns").is_dir()
    r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "random", "--out", str(tmp_path / "x"),
            "--log-to", "tensorboard", env=env)
    assert r.returncode == 2 and "unknown tracker 'tensorboard'" in r.stderr


def test_log_command_logs_an_existing_run(run_dir, tmp_path):
    pytest.importorskip("mlflow")
    env = {**os.environ, "MLFLOW_TRACKING_URI": (tmp_path / "mlruns").as_uri(), "MLFLOW_ALLOW_FILE_STORE": "true"}
    r = cli("log", str(run_dir), "--log-to", "mlflow", "--log-project", "later", env=env)
    assert r.returncode == 0, r.stderr
    assert "logged to MLflow run" in r.stdout and "experiment 'later'" in r.stdout
    r = cli("log", str(tmp_path), "--log-to", "mlflow", env=env)
    assert r.returncode == 2 and "no finished run to log" in r.stderr
    r = cli("log", str(run_dir), "--to", "mlflow", env=env)  # the old spelling names the one flag
    assert r.returncode == 2 and "--log-to wandb|mlflow" in r.stderr and "Traceback" not in r.stderr


def _bare_env(tmp_path, **extra):
    """The environment a new user has: no tracker variables, no W&B login (an empty HOME)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "WANDB_")) and k != "NETRC"}
    env.update(HOME=str(tmp_path / "home"), **extra)
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def test_log_to_mlflow_works_with_the_default_settings(run_dir, tmp_path, monkeypatch):
    """Issue 32.5: no MLFLOW_TRACKING_URI, no MLFLOW_ALLOW_FILE_STORE: mlflow-skinny cannot open MLflow 3's
    default sqlite store, so the run goes to ./mlruns (or MLflow's default when its database store exists)."""
    mlflow = pytest.importorskip("mlflow")
    from lensbench.runtime.tracking import _has_db_store

    r = cli("log", str(run_dir), "--log-to", "mlflow", env=_bare_env(tmp_path), cwd=tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    expected = "sqlite:///mlflow.db" if _has_db_store() else (tmp_path / "mlruns").resolve().as_uri()
    assert r.stdout.strip().endswith(f"({expected})"), r.stdout
    if not _has_db_store():
        monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # reading it back here
        client = mlflow.tracking.MlflowClient(tracking_uri=expected)
        (run,) = client.search_runs([client.get_experiment_by_name("lensbench").experiment_id])
        assert run.data.params["benchmark"] == "rgb-th-bench"


def test_trackers_are_checked_before_the_first_request(rgbth_gen, tmp_path, monkeypatch):
    """Issue 32.5: W&B without a login, or an MLflow database URI without the database store, stops the run
    with one line (exit 2) before anything is sent."""
    from lensbench.runtime.tracking import _has_db_store
    from lensbench.testing.server import FakeOpenAIServer

    cases = [("wandb", _bare_env(tmp_path), "not logged in to Weights & Biases")]
    if not _has_db_store():
        cases.append(("mlflow", _bare_env(tmp_path, MLFLOW_TRACKING_URI="sqlite:///x.db"), "database store"))
    for tracker, env, says in cases:
        with FakeOpenAIServer() as srv:
            r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "openai:m", "--base-url", srv.url,
                    "--limit", "2", "--out", str(tmp_path / tracker), "--no-progress", "--log-to", tracker, env=env)
            assert sum(srv.received.values()) == 0  # nothing was sent
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    # logged in (a netrc entry for the W&B host, as 'wandb login' writes it): the check passes
    home = tmp_path / "home"
    (home / ".netrc").write_text("machine api.wandb.ai\n  login user\n  password " + "k" * 40 + "\n")
    (home / ".netrc").chmod(0o600)
    from lensbench.runtime import tracking

    for k in [k for k in os.environ if k.startswith("WANDB_") or k == "NETRC"]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(home))
    tracking.check_trackers(["wandb"])  # no error
    (home / ".netrc").unlink()
    with pytest.raises(Exception, match="wandb login"):
        tracking.check_trackers(["wandb"])
    monkeypatch.setenv("WANDB_MODE", "offline")
    tracking.check_trackers(["wandb"])
