"""``lensbench export``: a run's stored replies as replayable JSONL (``--model replay:FILE`` reads it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.report.runs import read_manifest
from lensbench.runtime.lock import RunLock
from lensbench.runtime.store import RunStore

__all__ = ["export_records"]


def export_records(run_dir: str | Path, roles: tuple[str, ...] = ("model",)) -> Iterator[dict[str, Any]]:
    """One dict per stored reply of ``roles``, in arrival order.

    Fields: ``request_id``, ``model`` (the model that wrote the reply: the evaluated model for
    ``role == "model"``, the judge / answer parser for ``role == "judge"``), ``role``, ``key``,
    ``messages`` and ``params`` (the request as sent, when stored), then ``text``/``reasoning``/``finish_reason``/``usage`` for a reply or
    ``error`` for a failed request (kept, so a replay reproduces the same incomplete run).
    Reads under the run lock, shared (a folder a run is writing is refused, naming its PID).
    Raises ConfigError when ``run_dir`` has no run store or is in use.
    """
    run_dir = Path(run_dir)
    if not (run_dir / RunStore.FILENAME).is_file():
        raise ConfigError(f"{run_dir}: no {RunStore.FILENAME} (not a lensbench run folder)")
    try:
        man = read_manifest(run_dir) or {}
    except ConfigError:
        man = {}
    names = {"model": man.get("model_name"), "judge": _judge_name(run_dir, man)}
    with RunLock(run_dir, shared=True), RunStore(run_dir, readonly=True) as store:
        for row in store.iter_rows():
            if row["role"] not in roles:
                continue
            rec: dict[str, Any] = {"request_id": row["request_id"], "model": names.get(row["role"]), "role": row["role"],
                                   "key": row["key"]}
            if row["request"]:
                req = json.loads(row["request"])
                rec["messages"] = req.get("messages")
                rec["params"] = req.get("params")
            if row["status"] == "ok":
                rec.update(text=row["text"], reasoning=row["reasoning"], finish_reason=row["finish_reason"],
                           usage=json.loads(row["usage"]) if row["usage"] else None)
            else:
                rec["error"] = row["error"]
            yield rec


def _judge_name(run_dir: Path, manifest: dict[str, Any]) -> str | None:
    """The judge's display name (``result.json``'s ``extra.judge``), else its spec without the backend prefix."""
    try:
        doc = json.loads((run_dir / "result.json").read_text(encoding="utf-8"))
        name = (doc.get("extra") or {}).get("judge")
        if isinstance(name, str) and name:
            return name
    except (OSError, ValueError, AttributeError):
        pass
    spec = manifest.get("judge_spec")
    return spec.partition(":")[2] or spec if isinstance(spec, str) else None
