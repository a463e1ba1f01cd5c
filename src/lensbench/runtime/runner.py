"""One benchmark run, end to end: load -> evaluate (engine) -> aggregate -> run folder files.

Run folder layout (``--out``):

* ``responses.sqlite`` — the run store (source of truth; see :mod:`lensbench.store`).
* ``run.json`` — the manifest: benchmark, options, data fingerprint, model spec and
  fingerprint, generation overrides, seed, lensbench version, timings, counts. Never API keys.
* ``samples.jsonl`` — one scored record per unit (raw reply kept, parsed answer, status).
* ``result.json`` — metrics and counts (what ``lensbench report`` reads).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import platform
import time
from pathlib import Path
from typing import Any

from lensbench.core.version import __version__
from lensbench.backends.base import Backend, BackendConfig
from lensbench.benchmarks.base import Benchmark, RunContext
from lensbench.backends.providers import apply_model_args
from lensbench.core.datahome import is_demo, resolve_data_dir
from lensbench.core.errors import NOT_SENT, ConfigError
from lensbench.core.records import SampleRecord, count_empty_replies
from lensbench.core.results import RunResult
from lensbench.runtime.engine import RetryPolicy
from lensbench.runtime.settings import RunSettings
from lensbench.core.urls import redact_url
from lensbench.runtime.checks import check_earlier_run, check_out_dir, recover_manifest
from lensbench.core.writes import WriteFailed
from lensbench.runtime.preflight import (check_key_env, check_run_requirements, check_same_settings, judge_flags,
                                         run_requirements)
from lensbench.runtime.folder import MANIFEST, RESULT, load_result, write_json, write_samples
from lensbench.runtime.interrupt import run_async
from lensbench.runtime.lock import RunLock
from lensbench.runtime.store import RunStore
from lensbench.runtime.session import EndpointSettings, Session, build_backend
from lensbench.runtime.shards import select_shard

__all__ = ["RunSettings", "run_benchmark", "arun_benchmark", "build_backends", "load_result"]


def _fingerprint(samples: list[Any]) -> str:
    h = hashlib.sha256()
    for s in samples:
        h.update(repr(s).encode("utf-8", "replace"))
    return h.hexdigest()[:16]


def build_backends(bench: Benchmark, s: RunSettings, warn=None) -> dict[str, Backend]:
    """The ``model`` (and, if given, ``judge``) backends for a run (``--model-arg`` items applied to the
    model spec). Raises ConfigError, also for a named API-key variable that is unset
    (:func:`~lensbench.runtime.preflight.check_key_env`; ``warn`` gets the warning for a local endpoint)."""
    cfg = BackendConfig(timeout_s=s.timeout_s, image_format=s.image_format, image_max_side=s.image_max_side,
                        replay_model=s.replay_model, seed=s.seed, answer_space=bench.answer_space,
                        replay_formats=bench.replay_formats)
    check_key_env(s.model, s.base_url, s.api_key_env, "--api-key-env", warn)
    backends = {"model": build_backend(EndpointSettings(spec=apply_model_args(s.model, s.model_arg),
                                                        base_urls=s.base_url, api_key_env=s.api_key_env), cfg)}
    judge = s.judge_model or bench.judge_spec()
    if judge:
        check_key_env(judge, s.judge_base_url, s.judge_api_key_env, "--judge-api-key-env", warn)
        backends["judge"] = build_backend(EndpointSettings(spec=judge, base_urls=s.judge_base_url,
                                                           api_key_env=s.judge_api_key_env),
                                          cfg.model_copy(update={"replay_model": None}))
    return backends


def run_benchmark(bench: Benchmark, settings: RunSettings, *, console=None, offline: bool = False,
                  backends: dict[str, Backend] | None = None) -> RunResult:
    """Run ``bench`` as configured and write the run folder; returns the :class:`RunResult`.

    The synchronous form of :func:`arun_benchmark` (its own event loop). Ctrl-C or SIGTERM stop it
    cleanly and raise :class:`~lensbench.core.errors.Interrupted` (see :mod:`lensbench.runtime.interrupt`).
    """
    return run_async(arun_benchmark(bench, settings, console=console, offline=offline, backends=backends))


async def arun_benchmark(bench: Benchmark, settings: RunSettings, *, console=None, offline: bool = False,
                         backends: dict[str, Backend] | None = None,
                         limiters: dict[str, asyncio.Semaphore] | None = None, display=None) -> RunResult:
    """Run ``bench`` as configured and write the run folder; returns the :class:`RunResult`.

    Resuming: an existing run folder of the same benchmark and model is continued (only
    requests without a stored reply are sent). ``offline``: send nothing (rebuild the files from
    the store; missing replies are errors); ``limiters`` (role -> semaphore) share an endpoint's
    concurrency budget between runs in one event loop (``lensbench eval``); ``display`` (a
    :class:`~lensbench.runtime.progress.NullProgress` subclass) replaces the run's own progress
    display (``lensbench eval`` shows all cells in one). One process owns the folder at a time (a lock).
    Raises ConfigError for a bad --out, a folder holding another benchmark or model, or a
    lock held by another process; DataError for bad data — all before the first request, and
    nothing stored is ever lost.
    """
    s = settings
    out = Path(s.out)
    check_out_dir(out)
    bench.check_judge_flags(judge_flags(s))
    data_dir = resolve_data_dir(bench.name, s.data_dir)
    if not data_dir.exists():
        raise ConfigError(f"--data-dir {data_dir} does not exist")
    say = _warner(console)
    check_run_requirements(run_requirements(bench, s, data_dir), say)
    if is_demo(data_dir):
        say(f"{data_dir}: generated demo data, NOT {bench.title}: its scores mean nothing")
    backends = backends or build_backends(bench, s, say)
    out.mkdir(parents=True, exist_ok=True)
    with RunLock(out):
        old = recover_manifest(out, console)
        if old is not None:
            if old.get("benchmark") != bench.name:
                raise ConfigError(f"{out} holds a {old.get('benchmark')!r} run; use another --out for {bench.name!r}")
            if old.get("model_fingerprint") != backends["model"].fingerprint:
                raise ConfigError(f"{out} holds a run of model {old.get('model_spec')!r} "
                                  f"({old.get('model_fingerprint')}); use another --out for {s.model!r}")
            check_same_settings(out, old, s)
            if (old.get("settings") or {}).get("shard") != s.shard:
                raise ConfigError(f"{out} holds shard {(old.get('settings') or {}).get('shard')} of a run, not "
                                  f"{s.shard}; use one --out per shard")
        if not offline:
            check_earlier_run(out, s.yes)
        samples = bench.load(data_dir)
        noted = samples.counts  # what loading counted (samples left out ...): folded into the result's counts
        n_loaded = len(samples)
        if s.limit:
            samples = samples[: s.limit]
        shard = None
        if s.shard:
            samples, shard = select_shard(samples, s.shard, _fingerprint)
        return await _run_locked(bench, s, out, data_dir, samples, n_loaded, backends, console, offline,
                                 limiters, shard, display, noted)


async def _run_locked(bench, s: RunSettings, out: Path, data_dir: Path, samples, n_loaded: int, backends, console,
                      offline: bool, limiters, shard: dict | None = None, display=None,
                      noted: dict[str, Any] | None = None) -> RunResult:
    model_name = s.model_name or backends["model"].display_name or s.model
    session = Session(out, backends, concurrency=s.concurrency, progress=display if display is not None else s.progress,
                      console=console, seed=s.seed,
                      retry=RetryPolicy(max_retries=s.max_retries, max_retry_after_s=s.max_retry_after),
                      offline=offline, limiters=limiters)
    engine, store = session.engine, session.store
    judge = s.judge_model or bench.judge_spec()
    manifest: dict[str, Any] = {
        "benchmark": bench.name, "lensbench_version": __version__, "python": platform.python_version(),
        "data_dir": str(data_dir.resolve()), "data_fingerprint": _fingerprint(samples), "n_samples": len(samples),
        "n_samples_loaded": n_loaded, "model_spec": s.model, "model_name": model_name,
        "model_fingerprint": backends["model"].fingerprint, "judge_spec": judge,
        "judge_fingerprint": backends["judge"].fingerprint if "judge" in backends else None,
        "base_urls": [redact_url(u) for u in s.base_url], "generation_overrides": s.overrides(), "seed": s.seed,
        "limit": s.limit, "options": bench.options.model_dump(mode="json"), "settings": s.recorded(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    if is_demo(data_dir):
        manifest["demo_data"] = True
    if shard is not None:
        manifest["shard"] = shard
    _save_manifest(out, store, manifest)
    ctx = RunContext(run_dir=out, data_dir=data_dir, seed=s.seed, generate=session.generate,
                     generate_stream=session.generate_stream,
                     has_judge="judge" in backends, model_name=model_name, param_overrides=s.overrides(),
                     console=console, image_max_side=s.image_max_side, image_format=s.image_format, counts=noted)

    async def _main():
        async with session:
            try:
                return await bench.evaluate(samples, ctx)
            finally:
                manifest["store_counts"] = store.counts()
                manifest["engine"] = vars(engine.stats) | {"by_label": engine.stats.by_label}
                media = backends["model"].media_summary()
                if media is not None:
                    manifest["media"] = media
                endpoints = backends["model"].endpoint_summary()
                if endpoints is not None:
                    manifest["endpoints"] = endpoints

    t0 = time.time()
    try:
        records = await _main()
    except BaseException:
        manifest["wall_s"] = round(time.time() - t0, 3)
        try:
            write_json(out / MANIFEST, manifest)
        except WriteFailed:
            pass  # the failure that stopped the run is the one to report (a full disk, most likely)
        raise
    manifest["wall_s"] = round(time.time() - t0, 3)
    write_json(out / MANIFEST, manifest)
    metrics, counts = bench.aggregate(records, ctx.counts)
    if n_empty := count_empty_replies(r for r in records if isinstance(r, SampleRecord)):
        counts["n_empty"] = n_empty  # the model's own "" answers, scored and counted apart (SPEC)
    write_samples(out, records)
    errors = [e for e in map(_first_error, records) if e]
    first_error = next((e for e in errors if NOT_SENT not in e), errors[0] if errors else None)
    extra: dict[str, Any] = {"first_error": first_error} if first_error else {}
    not_sent = sum(NOT_SENT in e for e in errors)
    if not_sent:
        extra["not_sent"] = not_sent  # never sent (the run was stopped): reports say "not sent", not "failed"
    if "judge" in backends:
        extra["judge"] = backends["judge"].display_name or judge
    if s.tag:
        extra["tag"] = s.tag
    if manifest.get("demo_data"):
        extra["demo_data"] = "generated demo data, not the benchmark"
    partial = s.limit is not None and len(samples) < n_loaded
    if partial:
        extra["partial"] = f"first {len(samples)} of {n_loaded} samples (--limit)"
    if shard is not None:
        partial = True
        extra["partial"] = (f"shard {shard['index']}/{shard['count']}: {len(samples)} of "
                            f"{shard['n_samples_unsharded']} samples (--shard; join the shards with 'lensbench merge')")
    result = RunResult(benchmark=bench.name, model=model_name, metrics=metrics, counts=counts,
                       options=bench.options.model_dump(mode="json"),
                       complete=counts.get("n_error", 0) == 0 and not partial, run_dir=str(out), extra=extra,
                       ci=_intervals(bench, records))
    write_json(out / RESULT, result.to_json())
    manifest["counts"] = counts
    manifest["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    _save_manifest(out, None, manifest)
    if s.log_to and not offline:
        _track(out, s, console)
    return result


def _track(out: Path, s: RunSettings, console) -> None:
    """``--log-to``: log the finished folder to each tracker; a tracker failure is a warning (the run is kept)."""
    from lensbench.runtime.tracking import log_run

    for tracker in s.log_to:
        try:
            where = log_run(out, tracker, project=s.log_project)
        except Exception as exc:  # noqa: BLE001 - a tracker must never lose a finished run
            _warner(console)(f"--log-to {tracker}: logging failed ({type(exc).__name__}: {exc}); the run folder is "
                             f"complete: log it again with 'lensbench log {out} --to {tracker}'")
            continue
        if console is not None:
            console.print(f"logged to {where}", highlight=False, markup=False)


def _warner(console):
    """One-line warnings: on ``console`` (yellow, literal), else as Python warnings (the API)."""
    if console is not None:
        from rich.text import Text

        return lambda msg: console.print(Text(msg, style="yellow"), soft_wrap=True)
    import warnings

    return lambda msg: warnings.warn(msg, UserWarning, stacklevel=3)


def _save_manifest(out: Path, store, manifest: dict[str, Any]) -> None:
    """Write ``run.json`` and keep a copy in the store (rebuilds a damaged ``run.json``)."""
    write_json(out / MANIFEST, manifest)
    if store is not None:
        store.put_meta("manifest", json.dumps(manifest, default=str, ensure_ascii=False))
    else:
        with RunStore(out, check=False) as st:
            st.put_meta("manifest", json.dumps(manifest, default=str, ensure_ascii=False))


def _intervals(bench: Benchmark, records: list) -> dict[str, Any] | None:
    """The run's CIs with the default design (``result.json["ci"]``; reports read them instead of
    resampling). Never fails the run: a problem is recorded in place of the CIs."""
    from lensbench.scoring.intervals import interval_block

    try:
        return interval_block(bench.unit_tables([r for r in records if isinstance(r, SampleRecord)]), bench.cluster)
    except Exception as exc:  # noqa: BLE001 - the run's own files come first
        return {"error": f"{type(exc).__name__}: {exc}"}


def _first_error(r) -> str | None:
    if isinstance(r, SampleRecord):
        return r.error if r.outcome == "error" else None
    return r.get("error") if r.get("status") == "error" else None
