"""``lensbench merge RUN_DIR... --out RUN``: join the folders of a ``--shard I/N`` job into one run.

Checks first (nothing is written when one fails): every folder is a shard run (manifest with a
``shard`` entry) with a store; all are the same benchmark, options, model and judge fingerprints,
generation overrides, seed, ``--limit`` and data (``data_fingerprint_unsharded``) and the same
shard count ``N``; shards ``0..N-1`` are each present exactly once; ``--out`` is new or empty.
Every shard's run lock is held (shared) while it is read and ``--out``'s exclusively, so a shard
that is still running is refused, naming its PID; a shard that did not finish (killed, or with
failed requests) is refused unless ``allow_incomplete``, and then the merged result says which
shards were incomplete (``extra["incomplete_shards"]``); their requests without a stored reply are
"not sent", stored errors keep their own reason (issue 20).

Then every stored row goes into one fresh store: a key stored by several shards (the same request
in two samples) is kept once when the ok replies are identical, an ``ok`` row wins over an
``error`` row, and two different ``ok`` replies for one key are a conflict (an error naming both
folders). Finally the merged run is re-scored offline from its store
(:func:`lensbench.runtime.rebuild.rebuild_result`): the same code path as an unsharded run, so
its ``result.json`` equals the unsharded run's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.core.results import RunResult
from lensbench.core.types import StoredResponse
from lensbench.runtime.checks import recover_manifest
from lensbench.report.runs import MANIFEST, RESULT, load_result
from lensbench.runtime.folder import write_json
from lensbench.runtime.lock import RunLock
from lensbench.runtime.rebuild import rebuild_result
from lensbench.runtime.store import RunStore

__all__ = ["merge_runs", "MUST_AGREE"]

#: manifest entries every shard of one job must share (``shard.*`` entries are checked apart).
MUST_AGREE = ("benchmark", "options", "model_fingerprint", "judge_fingerprint", "generation_overrides", "seed",
              "limit")


def _unfinished(d: Path, m: dict[str, Any]) -> str | None:
    """Why shard folder ``d`` (manifest ``m``) is not a finished, complete shard run, or None."""
    if not m.get("finished"):
        return "did not finish (killed or stopped before the end)"
    try:
        n_error = load_result(d).counts.get("n_error", 0)
    except ConfigError:
        return f"has no readable {RESULT}"
    return f"finished with {n_error} failed request(s)" if n_error else None


def _shard_manifests(run_dirs: Sequence[Path]) -> list[dict[str, Any]]:
    if not run_dirs:
        raise ConfigError("lensbench merge: give the shard run folders to merge")
    manifests = []
    for d in run_dirs:
        m = recover_manifest(d)
        if m is None or not (d / RunStore.FILENAME).is_file():
            raise ConfigError(f"{d}: not a run folder (no {MANIFEST} + {RunStore.FILENAME})")
        if not isinstance(m.get("shard"), dict):
            raise ConfigError(f"{d}: not a shard run (it was not run with --shard I/N)")
        manifests.append(m)
    first = manifests[0]
    for d, m in zip(run_dirs[1:], manifests[1:]):
        for k in MUST_AGREE + ("shard.count", "shard.data_fingerprint_unsharded"):
            a, b = (_get(first, k), _get(m, k))
            if a != b:
                raise ConfigError(f"{run_dirs[0]} and {d} are not shards of one job: {k} differs ({a!r} vs {b!r})")
    n = first["shard"]["count"]
    seen: dict[int, Path] = {}
    for d, m in zip(run_dirs, manifests):
        i = m["shard"]["index"]
        if i in seen:
            raise ConfigError(f"shard {i}/{n} given twice: {seen[i]} and {d}")
        seen[i] = d
    missing = [f"{i}/{n}" for i in range(n) if i not in seen]
    if missing:
        raise ConfigError(f"shards missing: {', '.join(missing)} (a merged run needs all {n} shards)")
    return manifests


def _get(m: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        m = m.get(part) if isinstance(m, dict) else None
    return m


def _merge_rows(run_dirs: Sequence[Path], out: Path) -> dict[str, int]:
    """Copy every row into ``out``'s store (rules in the module docstring); returns row counts."""
    kept: dict[str, tuple[str, str | None, str | None, Path]] = {}  # key -> (status, text, reasoning, folder)
    counts = {"rows_read": 0, "duplicates": 0, "errors_replaced": 0}
    with RunStore(out) as dst:
        for d in run_dirs:
            with RunStore(d) as src:
                for row in src.iter_rows():
                    counts["rows_read"] += 1
                    key, status = row["key"], row["status"]
                    prev = kept.get(key)
                    if prev is not None:
                        if status == "error" or (prev[0] == "ok" and (prev[1], prev[2]) == (row["text"],
                                                                                            row["reasoning"])):
                            counts["duplicates"] += 1
                            continue
                        if prev[0] == "ok":
                            raise ConfigError(f"conflict: request {row['request_id']} (key {key[:12]}) has different "
                                              f"replies in {prev[3]} and {d}: {prev[1]!r} vs {row['text']!r}")
                        counts["errors_replaced"] += 1
                    kept[key] = (status, row["text"], row["reasoning"], d)
                    resp = StoredResponse(key=key, request_id=row["request_id"], status=status, text=row["text"],
                                          reasoning=row["reasoning"], error=row["error"], attempts=row["attempts"],
                                          latency_s=row["latency_s"], finish_reason=row["finish_reason"],
                                          usage=json.loads(row["usage"]) if row["usage"] else {})
                    dst.put(resp, role=row["role"], request_json=row["request"])
    counts["rows_merged"] = len(kept)
    return counts


def merge_runs(run_dirs: Sequence[str | Path], out: str | Path, console=None, *,
               allow_incomplete: bool = False) -> RunResult:
    """Merge the shard folders ``run_dirs`` into the new run folder ``out`` and score it; returns its result.

    ``out`` gets ``responses.sqlite`` (all rows), ``run.json`` (shard 0's manifest without the
    shard entry, the unsharded sample count and data fingerprint, ``merged_from``: the folders and
    row counts), ``result.json`` and ``samples.jsonl``. Needs the benchmark's data (as ``lensbench
    report`` does for a rebuild), found as the shard runs found it. ``allow_incomplete``: merge
    shards that did not finish or have failed requests too, labelled in the result.

    Raises:
        ConfigError: a check in the module docstring fails, a shard is in use by another process or
        (without ``allow_incomplete``) unfinished, or two shards hold different ok replies for one
        request (``out`` is then left without a manifest, so it is not taken for a run).
    """
    dirs = [Path(d) for d in run_dirs]
    out = Path(out)
    with ExitStack() as locks:
        for d in dict.fromkeys(dirs):
            if d.is_dir():
                locks.enter_context(RunLock(d, shared=True))
        manifests = _shard_manifests(dirs)
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise ConfigError(f"--out {out} exists and is not empty; give a new folder for the merged run")
        if any(out.resolve() == d.resolve() for d in dirs):
            raise ConfigError(f"--out {out} is one of the shard folders")
        incomplete = {}
        for d, m in zip(dirs, manifests):
            why = _unfinished(d, m)
            if why is not None:
                incomplete[f"{m['shard']['index']}/{m['shard']['count']}"] = f"{d} {why}"
        if incomplete and not allow_incomplete:
            raise ConfigError("; ".join(f"shard {k}: {v}" for k, v in incomplete.items())
                              + ". Finish it (run its command again) or merge with --allow-incomplete (the merged "
                              "result is then labelled incomplete)")
        order = sorted(range(len(dirs)), key=lambda j: manifests[j]["shard"]["index"])
        dirs, manifests = [dirs[j] for j in order], [manifests[j] for j in order]
        locks.enter_context(RunLock(out))
        try:
            counts = _merge_rows(dirs, out)
        except ConfigError:
            (out / RunStore.FILENAME).unlink(missing_ok=True)
            raise
        return _score(out, manifests[0], dirs, counts, incomplete, console)


def _score(out: Path, first: dict[str, Any], dirs: list[Path], counts: dict[str, int], incomplete: dict[str, str],
           console) -> RunResult:
    """Write the merged manifest and re-score ``out`` offline; label shards merged incomplete."""
    manifest = dict(first)
    shard = manifest.pop("shard")
    manifest.update({
        "data_fingerprint": shard["data_fingerprint_unsharded"], "n_samples": shard["n_samples_unsharded"],
        "settings": {**manifest["settings"], "shard": None, "out": str(out)},
        "merged_from": {"folders": [str(d) for d in dirs], "shards": shard["count"], **counts},
        "merged": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    })
    if incomplete:
        manifest["merged_from"]["incomplete_shards"] = incomplete
    for k in ("endpoints", "engine", "counts", "wall_s", "finished"):
        manifest.pop(k, None)
    _save(out, manifest)
    result = rebuild_result(out, console)  # the runner writes a fresh manifest: add where it came from
    rebuilt = recover_manifest(out) or manifest
    rebuilt["merged_from"] = manifest["merged_from"]
    _save(out, rebuilt)
    if incomplete:
        result.extra["incomplete_shards"] = ("merged with --allow-incomplete: "
                                             + "; ".join(f"shard {k}: {v}" for k, v in incomplete.items()))
        result.complete = False
        write_json(out / RESULT, result.to_json())
    return result


def _save(out: Path, manifest: dict[str, Any]) -> None:
    write_json(out / MANIFEST, manifest)
    with RunStore(out) as st:
        st.put_meta("manifest", json.dumps(manifest, default=str, ensure_ascii=False))
