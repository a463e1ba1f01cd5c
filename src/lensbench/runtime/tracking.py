"""Experiment tracking: log a finished run folder to Weights & Biases or MLflow (``--log-to``, ``log_to``).

What is logged, read back from the run folder only (so ``lensbench log RUN --log-to ...`` logs an old
run the same way):

* settings: benchmark, model spec and name, judge, options, the run flags as recorded in
  ``run.json`` (credentials already redacted there; API keys are never in a run folder), data
  fingerprint, lensbench version;
* metrics: every number of ``result.json`` as ``<metric>/<category>``, plus the 95% bootstrap CI
  of the headline metrics (``<metric>/<category>_ci_low`` and ``_ci_high``; from
  :func:`lensbench.views.leaderboard.build_leaderboard`, so the same figures ``lensbench report``
  prints), and the same as a table (metric, category, value, ci_low, ci_high, n);
* the per-sample table: one row per ``samples.jsonl`` record (sample id, outcome, parsed answer,
  target, reply, error, labels and scores as JSON).

W&B: ``wandb.init(project=..., config=settings)``, the metrics in the run summary, both tables
logged as ``wandb.Table``; offline with ``WANDB_MODE=offline``. MLflow: the tracking URI and
experiment from the environment (``MLFLOW_TRACKING_URI``; unset: :func:`mlflow_uri`), settings as
params, metrics as metrics (names made MLflow-safe), the tables as JSON artifacts (``columns`` /
``data``, the layout of ``mlflow.log_table``) and ``run.json``.

:func:`check_trackers` runs before the first request (issue 32.5): a W&B that is not logged in, or an
MLflow store this installation cannot open, stops the run then, not after it. The ``mlflow`` extra is
``mlflow-skinny``, which has no database store: MLflow 3's own default (``sqlite:///mlflow.db``)
cannot be opened by it, so with ``MLFLOW_TRACKING_URI`` unset lensbench logs to the local file store
``./mlruns`` (MLflow's file backend, opted into with its ``MLFLOW_ALLOW_FILE_STORE`` switch) unless the
database store is installed (full ``mlflow``), where MLflow's default is kept.
"""

from __future__ import annotations

import importlib.util
import json
import netrc
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lensbench.core.errors import ConfigError
from lensbench.core.extras import Requirement, require

__all__ = ["tracker_requirements", "check_trackers", "mlflow_uri", "run_payload", "log_run", "DEFAULT_PROJECT"]

DEFAULT_PROJECT = "lensbench"
_REQS = {"wandb": Requirement("wandb", "wandb", "--log-to wandb"),
         "mlflow": Requirement("mlflow", "mlflow", "--log-to mlflow")}
_SAMPLE_COLUMNS = ["sample_id", "outcome", "answer", "target", "reply", "error", "labels", "scores"]
_METRIC_COLUMNS = ["metric", "category", "value", "ci_low", "ci_high", "n"]


def tracker_requirements(log_to: list[str]) -> list[Requirement]:
    """The modules ``--log-to`` needs (checked with the run's other requirements before the first request)."""
    return [_REQS[t] for t in log_to if t in _REQS]


#: MLflow store schemes that need MLflow's database store (sqlalchemy; in ``mlflow``, not ``mlflow-skinny``)
_DB_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")
_OFF = ("0", "false", "no", "off")


def _has_db_store() -> bool:
    return importlib.util.find_spec("sqlalchemy") is not None


def mlflow_uri() -> str:
    """The MLflow tracking URI a log goes to: ``$MLFLOW_TRACKING_URI`` when set; else MLflow's own default
    (``sqlite:///mlflow.db``) when its database store is installed, else the file store ``./mlruns`` (as a
    ``file:`` URI of the current folder)."""
    uri = os.environ.get("MLFLOW_TRACKING_URI")
    if uri:
        return uri
    return "sqlite:///mlflow.db" if _has_db_store() else Path("mlruns").resolve().as_uri()


def _wandb_logged_in() -> bool:
    """True when W&B will not ask for a login: offline/disabled mode, an API key or identity token in the
    environment, or a ``.netrc`` entry for the W&B host (``$WANDB_BASE_URL``, default api.wandb.ai) where
    ``wandb login`` writes it (``$NETRC``, else ``~/.netrc``)."""
    if os.environ.get("WANDB_MODE", "").lower() in ("offline", "disabled", "dryrun"):
        return True
    if os.environ.get("WANDB_API_KEY") or os.environ.get("WANDB_IDENTITY_TOKEN_FILE"):
        return True
    host = urlsplit(os.environ.get("WANDB_BASE_URL") or "https://api.wandb.ai").hostname or "api.wandb.ai"
    path = Path(os.environ.get("NETRC") or Path.home() / ".netrc")
    try:
        return netrc.netrc(str(path)).authenticators(host) is not None
    except (OSError, netrc.NetrcParseError):
        return False


def check_trackers(log_to: list[str]) -> None:
    """Refuse, before anything is sent, a tracker of ``--log-to`` that would fail after the run.

    W&B: not logged in (see :func:`_wandb_logged_in`; ``wandb login`` or ``WANDB_MODE=offline``). MLflow:
    a database URI (``sqlite:``, ``postgresql:`` ...) without MLflow's database store installed, or a file
    store with ``MLFLOW_ALLOW_FILE_STORE`` switched off. A remote tracking server (``http(s)://``) is not
    contacted here. Raises ConfigError (one line, naming the variable to set)."""
    if "wandb" in log_to and not _wandb_logged_in():
        raise ConfigError("--log-to wandb: not logged in to Weights & Biases (no WANDB_API_KEY, no ~/.netrc entry "
                          "for the W&B host): run 'wandb login' first, or set WANDB_MODE=offline to log locally")
    if "mlflow" in log_to:
        uri = mlflow_uri()
        scheme = urlsplit(uri).scheme.split("+")[0]
        if scheme in _DB_SCHEMES and not _has_db_store():
            raise ConfigError(f"--log-to mlflow: MLFLOW_TRACKING_URI={uri} needs MLflow's database store, which "
                              "mlflow-skinny lacks (pip install mlflow); or unset it to log to ./mlruns, or name a "
                              "tracking server (http://...)")
        if scheme in ("", "file") and os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() in _OFF:
            raise ConfigError(f"--log-to mlflow: {uri} is MLflow's file store and MLFLOW_ALLOW_FILE_STORE is off; "
                              "unset it, or set MLFLOW_TRACKING_URI to a tracking server or database")


def _cell(v: Any) -> Any:
    """A table cell: numbers and strings as they are, None as empty, anything else as compact JSON."""
    if v is None or isinstance(v, (int, float, str, bool)):
        return "" if v is None else v
    return json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)


def run_payload(run_dir: str | Path) -> dict[str, Any]:
    """What a tracker gets from ``run_dir``: ``name``, ``settings`` (dict), ``metrics`` (flat name -> number),
    ``metric_rows`` / ``sample_rows`` (lists of rows in :data:`_METRIC_COLUMNS` / :data:`_SAMPLE_COLUMNS`
    order). Raises ConfigError when ``run_dir`` has no finished run (no ``result.json``)."""
    from lensbench.views.leaderboard import build_leaderboard
    from lensbench.views.runs import read_run

    run = read_run(run_dir)
    if run.result is None:
        raise ConfigError(f"{run_dir}: no finished run to log ({'; '.join(run.problems) or 'no result.json'})")
    m = run.manifest or {}
    settings = {"benchmark": run.benchmark, "model": run.model, "model_spec": m.get("model_spec"),
                "judge_spec": m.get("judge_spec"), "options": m.get("options") or run.result.options,
                "settings": m.get("settings") or {}, "n_samples": m.get("n_samples"),
                "data_fingerprint": m.get("data_fingerprint"), "lensbench_version": m.get("lensbench_version"),
                "complete": run.result.complete, "run_dir": str(Path(run_dir).resolve())}
    if m.get("demo_data"):
        settings["demo_data"] = True
    metrics: dict[str, float] = {}
    for key, block in run.result.metrics.items():
        if isinstance(block, dict):
            for cat, v in block.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    metrics[f"{key}/{cat}"] = float(v)
        elif isinstance(block, (int, float)) and not isinstance(block, bool):
            metrics[key] = float(block)
    rows = []
    for c in build_leaderboard([run]).cells:
        rows.append([c.metric, c.category, c.value, c.ci_low, c.ci_high, c.n])
        if c.ci_low is not None and c.ci_high is not None:
            metrics[f"{c.metric}/{c.category}_ci_low"] = float(c.ci_low)
            metrics[f"{c.metric}/{c.category}_ci_high"] = float(c.ci_high)
    samples = [[_cell(getattr(r, col)) for col in _SAMPLE_COLUMNS] for r in (run.records or [])]
    tag = run.result.extra.get("tag")
    return {"name": f"{run.model}/{run.benchmark}" + (f"--{tag}" if tag else ""), "settings": settings,
            "metrics": metrics, "metric_rows": rows, "sample_rows": samples, "manifest_path": Path(run_dir) / "run.json"}


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in d.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flat(v, name + "."))
        else:
            out[name] = str(v)[:500]
    return out


def _log_wandb(p: dict[str, Any], project: str) -> str:
    wandb = require("wandb", "wandb", "--log-to wandb")
    run = wandb.init(project=project, name=p["name"], config=p["settings"], job_type="eval", reinit="create_new")
    try:
        run.summary.update(p["metrics"])
        run.log({"metrics": wandb.Table(columns=_METRIC_COLUMNS, data=[[_cell(v) for v in r] for r in p["metric_rows"]]),
                 "samples": wandb.Table(columns=_SAMPLE_COLUMNS, data=p["sample_rows"])})
        where = getattr(run, "url", None) or getattr(run, "dir", None) or project
    finally:
        run.finish()
    return f"W&B run {p['name']} ({where})"


def _log_mlflow(p: dict[str, Any], project: str) -> str:
    mlflow = require("mlflow", "mlflow", "--log-to mlflow")
    check_trackers(["mlflow"])
    uri = mlflow_uri()
    if urlsplit(uri).scheme in ("", "file"):  # the file store is opted into by MLflow's own switch
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment(project)
    safe = {re.sub(r"[^A-Za-z0-9_\-. /]", "_", k): v for k, v in p["metrics"].items()}
    with mlflow.start_run(run_name=p["name"]) as run:
        mlflow.set_tags({"lensbench.benchmark": p["settings"]["benchmark"], "lensbench.model": p["settings"]["model"]})
        mlflow.log_params(_flat(p["settings"]))
        if safe:
            mlflow.log_metrics(safe)
        mlflow.log_dict({"columns": _METRIC_COLUMNS, "data": p["metric_rows"]}, "metrics_table.json")
        mlflow.log_dict({"columns": _SAMPLE_COLUMNS, "data": p["sample_rows"]}, "samples_table.json")
        if Path(p["manifest_path"]).is_file():
            mlflow.log_artifact(str(p["manifest_path"]))
        rid = run.info.run_id
    return f"MLflow run {rid} in experiment {project!r} ({mlflow.get_tracking_uri()})"


def log_run(run_dir: str | Path, tracker: str, project: str | None = None) -> str:
    """Log the run in ``run_dir`` to ``tracker`` (``wandb`` or ``mlflow``) under ``project`` (W&B project /
    MLflow experiment; default ``$WANDB_PROJECT`` / ``$MLFLOW_EXPERIMENT_NAME``, else ``lensbench``).
    Returns one line saying where it went. Raises ConfigError (unknown tracker, no finished run, a tracker
    :func:`check_trackers` refuses) or MissingExtraError (library not installed); the tracker's own errors
    propagate."""
    env = {"wandb": "WANDB_PROJECT", "mlflow": "MLFLOW_EXPERIMENT_NAME"}
    if tracker not in env:
        raise ConfigError(f"--log-to {tracker}: use wandb or mlflow")
    name = project or os.environ.get(env[tracker]) or DEFAULT_PROJECT
    check_trackers([tracker])
    payload = run_payload(run_dir)
    return _log_wandb(payload, name) if tracker == "wandb" else _log_mlflow(payload, name)
