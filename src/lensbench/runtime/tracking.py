"""Experiment tracking: log a finished run folder to Weights & Biases or MLflow (``--log-to``, ``log_to``).

What is logged, read back from the run folder only (so ``lensbench log RUN --to ...`` logs an old
run the same way):

* settings: benchmark, model spec and name, judge, options, the run flags as recorded in
  ``run.json`` (credentials already redacted there; API keys are never in a run folder), data
  fingerprint, lensbench version;
* metrics: every number of ``result.json`` as ``<metric>/<category>``, plus the 95% bootstrap CI
  of the headline metrics (``<metric>/<category>_ci_low`` and ``_ci_high``; from
  :func:`lensbench.report.leaderboard.build_leaderboard`, so the same figures ``lensbench report``
  prints), and the same as a table (metric, category, value, ci_low, ci_high, n);
* the per-sample table: one row per ``samples.jsonl`` record (sample id, outcome, parsed answer,
  target, reply, error, labels and scores as JSON).

W&B: ``wandb.init(project=..., config=settings)``, the metrics in the run summary, both tables
logged as ``wandb.Table``; offline with ``WANDB_MODE=offline``. MLflow: the tracking URI and
experiment from the environment (``MLFLOW_TRACKING_URI``, default ``./mlruns``), settings as
params, metrics as metrics (names made MLflow-safe), the tables as JSON artifacts (``columns`` /
``data``, the layout of ``mlflow.log_table``) and ``run.json``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.core.extras import Requirement, require

__all__ = ["tracker_requirements", "run_payload", "log_run", "DEFAULT_PROJECT"]

DEFAULT_PROJECT = "lensbench"
_REQS = {"wandb": Requirement("wandb", "wandb", "--log-to wandb"),
         "mlflow": Requirement("mlflow", "mlflow", "--log-to mlflow")}
_SAMPLE_COLUMNS = ["sample_id", "outcome", "answer", "target", "reply", "error", "labels", "scores"]
_METRIC_COLUMNS = ["metric", "category", "value", "ci_low", "ci_high", "n"]


def tracker_requirements(log_to: list[str]) -> list[Requirement]:
    """The modules ``--log-to`` needs (checked with the run's other requirements before the first request)."""
    return [_REQS[t] for t in log_to if t in _REQS]


def _cell(v: Any) -> Any:
    """A table cell: numbers and strings as they are, None as empty, anything else as compact JSON."""
    if v is None or isinstance(v, (int, float, str, bool)):
        return "" if v is None else v
    return json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)


def run_payload(run_dir: str | Path) -> dict[str, Any]:
    """What a tracker gets from ``run_dir``: ``name``, ``settings`` (dict), ``metrics`` (flat name -> number),
    ``metric_rows`` / ``sample_rows`` (lists of rows in :data:`_METRIC_COLUMNS` / :data:`_SAMPLE_COLUMNS`
    order). Raises ConfigError when ``run_dir`` has no finished run (no ``result.json``)."""
    from lensbench.report.leaderboard import build_leaderboard
    from lensbench.report.runs import read_run

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
    Returns one line saying where it went. Raises ConfigError (unknown tracker, no finished run) or
    MissingExtraError (library not installed); the tracker's own errors propagate."""
    env = {"wandb": "WANDB_PROJECT", "mlflow": "MLFLOW_EXPERIMENT_NAME"}
    if tracker not in env:
        raise ConfigError(f"--log-to {tracker}: use wandb or mlflow")
    name = project or os.environ.get(env[tracker]) or DEFAULT_PROJECT
    payload = run_payload(run_dir)
    return _log_wandb(payload, name) if tracker == "wandb" else _log_mlflow(payload, name)
