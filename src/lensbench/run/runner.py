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

from pydantic import BaseModel, Field

from lensbench import __version__
from lensbench.backends.base import Backend, BackendConfig
from lensbench.benchmarks.base import Benchmark, RunContext
from lensbench.core.errors import ConfigError
from lensbench.core.records import SampleRecord
from lensbench.core.results import RunResult
from lensbench.run.engine import RetryPolicy
from lensbench.run.folder import MANIFEST, RESULT, load_result, read_manifest, write_json, write_samples
from lensbench.run.session import EndpointSettings, Session, build_backend

__all__ = ["RunSettings", "run_benchmark", "build_backends", "load_result"]


class RunSettings(BaseModel):
    """Options every ``lensbench run <benchmark>`` takes (the CLI's shared flags).

    Units: ``timeout_s`` seconds per request; ``image_max_side`` pixels; ``limit`` = first N
    samples (after loading, in file order).
    """

    model: str = Field(description="model backend spec: openai:MODEL, replay:PATH, random, constant:ANSWER, ...")
    out: Path = Field(description="run folder (created; an existing one is resumed)")
    data_dir: Path = Field(description="the benchmark's data folder (official release layout)")
    model_name: str | None = Field(default=None, description="display name in reports (default: from the backend)")
    base_url: list[str] = Field(default_factory=list, description="OpenAI-compatible endpoint(s); repeat to spread requests")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="environment variable holding the API key")
    replay_model: str | None = Field(default=None, description="model to take from a multi-model replay file")
    judge_model: str | None = Field(default=None, description="judge / answer-parser backend spec")
    judge_base_url: list[str] = Field(default_factory=list, description="judge endpoint(s)")
    judge_api_key_env: str = Field(default="OPENAI_API_KEY", description="environment variable with the judge's key")
    concurrency: int = Field(default=8, ge=1, description="requests in flight at most")
    limit: int | None = Field(default=None, ge=1, description="evaluate only the first N samples")
    seed: int = Field(default=0, description="run seed (baselines, shuffles, sampling)")
    temperature: float | None = Field(default=None, ge=0, description="override the protocol's temperature")
    max_tokens: int | None = Field(default=None, gt=0, description="max new tokens per reply")
    top_p: float | None = Field(default=None, gt=0, le=1, description="nucleus sampling top-p")
    thinking: bool | None = Field(default=None, description="set chat_template_kwargs.enable_thinking on servers that take it")
    extra_body: str | None = Field(default=None, description="JSON object merged into each request body")
    image_format: str = Field(default="jpeg", description="image transport encoding: jpeg or png")
    image_max_side: int | None = Field(default=None, ge=16, description="downscale images to this longest side (px)")
    timeout_s: float = Field(default=120.0, gt=0, description="per-request timeout (s)")
    max_retries: int = Field(default=6, ge=0, description="retries of a failed call (timeouts, 429, 5xx, dropped)")
    progress: bool = Field(default=True, description="show the progress bar")

    def overrides(self) -> dict[str, Any]:
        """Generation-parameter overrides given by the user (None = keep the protocol's)."""
        extra: dict[str, Any] = {}
        if self.extra_body:
            try:
                extra = json.loads(self.extra_body)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"--extra-body is not valid JSON: {exc}") from None
            if not isinstance(extra, dict):
                raise ConfigError("--extra-body must be a JSON object")
        if self.thinking is not None:
            ctk = dict(extra.get("chat_template_kwargs", {}))
            ctk["enable_thinking"] = self.thinking
            extra["chat_template_kwargs"] = ctk
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "top_p": self.top_p,
                "extra_body": extra}


def _fingerprint(samples: list[Any]) -> str:
    h = hashlib.sha256()
    for s in samples:
        h.update(repr(s).encode("utf-8", "replace"))
    return h.hexdigest()[:16]


def build_backends(bench: Benchmark, s: RunSettings) -> dict[str, Backend]:
    """The ``model`` (and, if given, ``judge``) backends for a run. Raises ConfigError."""
    cfg = BackendConfig(timeout_s=s.timeout_s, image_format=s.image_format, image_max_side=s.image_max_side,
                        replay_model=s.replay_model, seed=s.seed, answer_space=bench.answer_space)
    backends = {"model": build_backend(EndpointSettings(spec=s.model, base_urls=s.base_url,
                                                        api_key_env=s.api_key_env), cfg)}
    judge = s.judge_model or bench.judge_spec()
    if judge:
        backends["judge"] = build_backend(EndpointSettings(spec=judge, base_urls=s.judge_base_url,
                                                           api_key_env=s.judge_api_key_env),
                                          cfg.model_copy(update={"replay_model": None}))
    return backends


def run_benchmark(bench: Benchmark, settings: RunSettings, *, console=None) -> RunResult:
    """Run ``bench`` as configured and write the run folder; returns the :class:`RunResult`.

    Resuming: an existing run folder of the same benchmark and model is continued (only
    requests without a stored reply are sent). Raises ConfigError when the folder holds a
    different benchmark or model, DataError for bad data (nothing stored is lost).
    """
    s = settings
    out = Path(s.out)
    data_dir = Path(s.data_dir)
    if not data_dir.exists():
        raise ConfigError(f"--data-dir {data_dir} does not exist")
    samples = bench.load(data_dir)
    if s.limit:
        samples = samples[: s.limit]
    backends = build_backends(bench, s)
    model_name = s.model_name or backends["model"].display_name or s.model
    manifest_path = out / MANIFEST
    old = read_manifest(out)
    if old is not None:
        if old.get("benchmark") != bench.name:
            raise ConfigError(f"{out} holds a {old.get('benchmark')!r} run; use another --out for {bench.name!r}")
        if old.get("model_fingerprint") != backends["model"].fingerprint:
            raise ConfigError(f"{out} holds a run of model {old.get('model_spec')!r} "
                              f"({old.get('model_fingerprint')}); use another --out for {s.model!r}")
    out.mkdir(parents=True, exist_ok=True)
    session = Session(out, backends, concurrency=s.concurrency, retry=RetryPolicy(max_retries=s.max_retries),
                      progress=s.progress, console=console, seed=s.seed)
    engine, store = session.engine, session.store
    manifest: dict[str, Any] = {
        "benchmark": bench.name, "lensbench_version": __version__, "python": platform.python_version(),
        "data_dir": str(data_dir.resolve()), "data_fingerprint": _fingerprint(samples), "n_samples": len(samples),
        "model_spec": s.model, "model_name": model_name, "model_fingerprint": backends["model"].fingerprint,
        "judge_spec": s.judge_model or bench.judge_spec(), "judge_fingerprint": backends["judge"].fingerprint if "judge" in backends else None,
        "base_urls": s.base_url, "generation_overrides": s.overrides(), "seed": s.seed, "limit": s.limit,
        "options": bench.options.model_dump(mode="json"), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_json(manifest_path, manifest)

    ctx = RunContext(run_dir=out, data_dir=data_dir, seed=s.seed, generate=session.generate, has_judge="judge" in backends,
                     model_name=model_name, param_overrides=s.overrides(), console=console,
                     image_max_side=s.image_max_side, image_format=s.image_format)

    async def _main():
        async with session:
            try:
                return await bench.evaluate(samples, ctx)
            finally:
                manifest["store_counts"] = store.counts()

    t0 = time.time()
    try:
        records = asyncio.run(_main())
    finally:
        manifest["engine"] = vars(engine.stats) | {"by_label": engine.stats.by_label}
        manifest["wall_s"] = round(time.time() - t0, 3)
        write_json(manifest_path, manifest)
        store.close()
    metrics, counts = bench.aggregate(records)
    write_samples(out, records)
    first_error = next((_first_error(r) for r in records if _first_error(r)), None)
    result = RunResult(benchmark=bench.name, model=model_name, metrics=metrics, counts=counts,
                       options=bench.options.model_dump(mode="json"), complete=counts.get("n_error", 0) == 0,
                       run_dir=str(out), extra={"first_error": first_error} if first_error else {})
    write_json(out / RESULT, result.to_json())
    manifest["counts"] = counts
    manifest["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    write_json(manifest_path, manifest)
    return result


def _first_error(r) -> str | None:
    if isinstance(r, SampleRecord):
        return r.error if r.outcome == "error" else None
    return r.get("error") if r.get("status") == "error" else None
