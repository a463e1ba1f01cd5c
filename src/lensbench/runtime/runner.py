"""One benchmark run, end to end: load -> evaluate (engine) -> aggregate -> run folder files.

Run folder layout (``--out``):

* ``responses.sqlite`` — the run store (source of truth; see :mod:`lensbench.runtime.store`).
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

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
from lensbench.runtime.checks import check_earlier_run, check_out_dir, recover_manifest, reusable
from lensbench.core.writes import WriteFailed
from lensbench.runtime.preflight import (check_key_env, check_run_requirements, check_same_settings, judge_flags,
                                         run_requirements)
from lensbench.report.runs import MANIFEST, RESULT
from lensbench.runtime.folder import write_json, write_samples
from lensbench.runtime.interrupt import run_async
from lensbench.runtime.lock import RunLock
from lensbench.runtime.store import RunStore
from lensbench.runtime.session import EndpointSettings, Session, build_backend
from lensbench.runtime.shards import select_shard

__all__ = ["RunSettings", "run_benchmark", "arun_benchmark", "build_backends"]


def _fingerprint(samples: list[Any]) -> str:
    h = hashlib.sha256()
    for s in samples:
        h.update(repr(s).encode("utf-8", "replace"))
    return h.hexdigest()[:16]


def build_backends(bench: Benchmark, s: RunSettings, warn=None) -> dict[str, Backend]:
    """The ``model`` (and, if given, ``judge``) backends for a run (``--model-arg`` items applied to the
    model spec, ``--judge-model-arg`` items to the judge's). Raises ConfigError, also for judge arguments without
    a judge and for a named API-key variable that is unset (:func:`~lensbench.runtime.preflight.check_key_env`;
    ``warn`` gets the warning for a local endpoint)."""
    cfg = BackendConfig(timeout_s=s.timeout_s, image_format=s.image_format, image_max_side=s.image_max_side,
                        replay_model=s.replay_model, seed=s.seed, answer_space=bench.answer_space,
                        replay_formats=bench.replay_formats)
    if s.model.partition(":")[0] == "random" and bench.no_random_baseline:
        raise ConfigError(f"--model random: {bench.title}: {bench.no_random_baseline}")
    check_key_env(s.model, s.base_url, s.api_key_env, "--api-key-env", warn)
    backends = {"model": build_backend(EndpointSettings(spec=apply_model_args(s.model, s.model_arg),
                                                        base_urls=s.base_url, api_key_env=s.api_key_env), cfg)}
    judge = s.judge_model or bench.judge_spec()
    if s.judge_model_arg and not judge:
        raise ConfigError(f"--judge-model-arg: {bench.name} runs no judge here (give --judge-model)")
    if judge:
        check_key_env(judge, s.judge_base_url, s.judge_api_key_env, "--judge-api-key-env", warn)
        backends["judge"] = build_backend(EndpointSettings(spec=apply_model_args(judge, s.judge_model_arg,
                                                                                 "--judge-model-arg"),
                                                           base_urls=s.judge_base_url,
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
    if s.log_to:
        from lensbench.runtime.tracking import check_trackers

        check_trackers(s.log_to)  # a W&B login or an MLflow store checked now, not after the run
    if is_demo(data_dir):
        say(f"{data_dir}: generated demo data, NOT {bench.title}: its scores mean nothing")
    backends = backends or build_backends(bench, s, say)
    bench = adopt_model_options(bench, backends["model"], say)
    out.mkdir(parents=True, exist_ok=True)
    with RunLock(out):
        old = recover_manifest(out, console)
        if old is not None and not reusable(out):  # an attempt that stored nothing never blocks (issue 32.1)
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
        return await _run_locked(_Run(bench, s, out, data_dir, samples, n_loaded, backends, console, offline,
                                      limiters, shard, display, noted))


@dataclass
class _Run:
    """One run once its folder is locked: the benchmark and settings, the folder, the data, the samples to
    run (after --limit / --shard; ``n_loaded`` before), the backends by role, the console (None: the API),
    whether it sends nothing (``offline``), the role limiters and progress display of ``lensbench eval``,
    the shard it is (None: the whole set) and what loading counted (``noted``: samples left out ...)."""

    bench: Benchmark
    settings: RunSettings
    out: Path
    data_dir: Path
    samples: list
    n_loaded: int
    backends: dict[str, Backend]
    console: Any = None
    offline: bool = False
    limiters: dict[str, asyncio.Semaphore] | None = None
    shard: dict | None = None
    display: Any = None
    noted: dict[str, Any] | None = None
    not_stored: list[str] = field(default_factory=list)  # replies the store refused (RunStore.bad_rows)

    @property
    def model_name(self) -> str:
        return self.settings.model_name or self.backends["model"].display_name or self.settings.model

    @property
    def judge(self) -> str | None:
        return self.settings.judge_model or self.bench.judge_spec()


async def _run_locked(run: _Run) -> RunResult:
    """Evaluate, score and write the folder. ``run.json`` is written twice: at the start (with a copy in
    the store, so a killed run can be resumed and its manifest rebuilt) and once the run ended, finished
    (after ``samples.jsonl`` and ``result.json``) or stopped (what it did so far, then the error)."""
    s, out = run.settings, run.out
    session = Session(out, run.backends, concurrency=s.concurrency,
                      progress=run.display if run.display is not None else s.progress, console=run.console,
                      seed=s.seed, retry=RetryPolicy(max_retries=s.max_retries, max_retry_after_s=s.max_retry_after),
                      offline=run.offline, limiters=run.limiters)
    manifest = _manifest(run)
    _save_manifest(out, session.store, manifest)
    t0 = time.time()
    try:
        records, noted = await _evaluate(run, session, manifest)
        manifest["wall_s"] = round(time.time() - t0, 3)
        result = _score(run, records, noted)
    except BaseException:
        manifest.setdefault("wall_s", round(time.time() - t0, 3))
        try:
            write_json(out / MANIFEST, manifest)
        except WriteFailed:
            pass  # the failure that stopped the run is the one to report (a full disk, most likely)
        raise
    if run.not_stored:
        _warner(run.console)(result.extra["not_stored"])
    manifest["counts"] = result.counts
    manifest["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    _save_manifest(out, None, manifest)
    if s.log_to and not run.offline:
        _track(out, s, run.console)
    return result


def _manifest(run: _Run) -> dict[str, Any]:
    """``run.json`` as the run starts: what was run, on what, with which settings. Never API keys."""
    s, backends = run.settings, run.backends
    manifest: dict[str, Any] = {
        "benchmark": run.bench.name, "lensbench_version": __version__, "python": platform.python_version(),
        "data_dir": str(run.data_dir.resolve()), "data_fingerprint": _fingerprint(run.samples),
        "n_samples": len(run.samples), "n_samples_loaded": run.n_loaded, "model_spec": s.model,
        "model_name": run.model_name, "model_fingerprint": backends["model"].fingerprint, "judge_spec": run.judge,
        "judge_fingerprint": backends["judge"].fingerprint if "judge" in backends else None,
        "base_urls": [redact_url(u) for u in s.base_url], "generation_overrides": s.overrides(), "seed": s.seed,
        "limit": s.limit, "options": run.bench.options.model_dump(mode="json"), "settings": s.recorded(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    if is_demo(run.data_dir):
        manifest["demo_data"] = True
    if run.shard is not None:
        manifest["shard"] = run.shard
    return manifest


async def _evaluate(run: _Run, session: Session, manifest: dict[str, Any]) -> tuple[list, dict[str, Any]]:
    """The benchmark's evaluate through ``session`` (closed after): its records and the counts noted outside
    them (loading's, then evaluating's). The store's and engine's counts, and what the model backend did to
    images and endpoints, go into ``manifest`` even when it fails."""
    s, backends = run.settings, run.backends
    ctx = RunContext(run_dir=run.out, data_dir=run.data_dir, seed=s.seed, generate=session.generate,
                     generate_stream=session.generate_stream, has_judge="judge" in backends,
                     model_name=run.model_name, param_overrides=s.overrides(), console=run.console,
                     image_max_side=s.image_max_side, image_format=s.image_format, counts=run.noted)
    async with session:
        try:
            return await run.bench.evaluate(run.samples, ctx), ctx.counts
        finally:
            manifest["store_counts"] = session.store.counts()
            run.not_stored = list(session.store.bad_rows)
            if run.not_stored:
                manifest["store_counts"]["not_stored"] = len(run.not_stored)
            manifest["engine"] = vars(session.engine.stats) | {"by_label": session.engine.stats.by_label}
            media = backends["model"].media_summary()
            if media is not None:
                manifest["media"] = media
            endpoints = backends["model"].endpoint_summary()
            if endpoints is not None:
                manifest["endpoints"] = endpoints


def _score(run: _Run, records: list, noted: dict[str, Any]) -> RunResult:
    """Aggregate ``records`` (with the counts ``noted`` outside them), write ``samples.jsonl`` and
    ``result.json``; the result."""
    s, bench = run.settings, run.bench
    metrics, counts = bench.aggregate(records, noted)
    if n_empty := count_empty_replies(r for r in records if isinstance(r, SampleRecord)):
        counts["n_empty"] = n_empty  # the model's own "" answers, scored and counted apart (docs/protocol.md)
    write_samples(run.out, records)
    extra = _errors(records)
    if extra.get("first_error") and all(b.recorded for b in run.backends.values()):
        extra["failures_recorded"] = "the replay file holds these failures: running again replays the same"
    if notes := getattr(run.backends.get("model"), "notes", None):  # another harness's predictions (docs/interop.md)
        extra["predictions"] = notes
    if run.not_stored:
        counts["n_not_stored"] = len(run.not_stored)
        extra["not_stored"] = _not_stored_line(run.not_stored)
    if "judge" in run.backends:
        extra["judge"] = run.backends["judge"].display_name or run.judge
    if s.tag:
        extra["tag"] = s.tag
    if is_demo(run.data_dir):
        extra["demo_data"] = "generated demo data, not the benchmark"
    n_run, partial = len(run.samples), s.limit is not None and len(run.samples) < run.n_loaded
    if partial:
        extra["partial"] = f"first {n_run} of {run.n_loaded} samples (--limit)"
    if run.shard is not None:
        partial = True
        extra["partial"] = (f"shard {run.shard['index']}/{run.shard['count']}: {n_run} of "
                            f"{run.shard['n_samples_unsharded']} samples (--shard; join the shards with 'lensbench merge')")
    result = RunResult(benchmark=bench.name, model=run.model_name, metrics=metrics, counts=counts,
                       options=bench.options.model_dump(mode="json"),
                       complete=counts.get("n_error", 0) == 0 and not partial, run_dir=str(run.out), extra=extra,
                       ci=_intervals(bench, records))
    write_json(run.out / RESULT, result.to_json())
    return result


def _not_stored_line(bad_rows: list[str]) -> str:
    """The one line a run with replies its store refused (:attr:`RunStore.bad_rows`) says on its console and in
    ``result.json``'s extra: how many, the first, and that they are asked again on resume."""
    n = len(bad_rows)
    return (f"{n} repl{'ies' if n != 1 else 'y'} could not be stored (first: {bad_rows[0]}); scored in this run, "
            f"{'they' if n != 1 else 'it'} will be asked again when the run is resumed (same --out)")


def _errors(records: list) -> dict[str, Any]:
    """``first_error`` (one that is not "not sent" when there is one) and ``not_sent`` (requests never sent:
    the run was stopped; reports say "not sent", not "failed") of ``result.json``'s extra."""
    errors = [e for e in map(_first_error, records) if e]
    first_error = next((e for e in errors if NOT_SENT not in e), errors[0] if errors else None)
    extra: dict[str, Any] = {"first_error": first_error} if first_error else {}
    not_sent = sum(NOT_SENT in e for e in errors)
    if not_sent:
        extra["not_sent"] = not_sent
    return extra


def _track(out: Path, s: RunSettings, console) -> None:
    """``--log-to``: log the finished folder to each tracker; a tracker failure is a warning (the run is kept)."""
    from lensbench.runtime.tracking import log_run

    for tracker in s.log_to:
        try:
            where = log_run(out, tracker, project=s.log_project)
        except Exception as exc:  # noqa: BLE001 - a tracker must never lose a finished run
            _warner(console)(f"--log-to {tracker}: logging failed ({type(exc).__name__}: {exc}); the run folder is "
                             f"complete: log it again with 'lensbench log {out} --log-to {tracker}'")
            continue
        if console is not None:
            console.print(f"logged to {where}", highlight=False, markup=False)


def adopt_model_options(bench: Benchmark, backend: Backend, say) -> Benchmark:
    """``bench`` with the options its model declares (``backend.option_defaults``: a checkpoint written
    by ``lensbench train`` records its box convention, which ``hf:`` reads) in place of options left at
    their default; a value given that differs from the default wins. Says what it adopted. Raises
    ConfigError when a declared value is not valid for the benchmark."""
    declared = getattr(backend, "option_defaults", None) or {}
    fields = type(bench.options).model_fields
    upd = {k: v for k, v in declared.items()
           if k in fields and getattr(bench.options, k) == fields[k].default and v != fields[k].default}
    if not upd:
        return bench
    try:
        options = type(bench.options)(**{**bench.options.model_dump(), **upd})
    except ValidationError as exc:
        raise ConfigError(f"the model's recorded options {upd} do not fit {bench.name}: "
                          f"{exc.errors()[0]['msg']}") from None
    say(f"{', '.join(f'{k}={v}' for k, v in upd.items())}: as the model's checkpoint records "
        f"(lensbench_train.json); give {', '.join('--' + k.replace('_', '-') for k in upd)} to choose otherwise")
    return type(bench)(options)


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
