"""The flags every ``lensbench run <benchmark>`` takes, as one pydantic model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lensbench.core.configcheck import SECRET_HINT, find_secrets
from lensbench.core.errors import ConfigError
from lensbench.core.urls import redact_url

__all__ = ["RunSettings", "DEFAULT_KEY_ENV", "TRACKERS", "MAX_CONCURRENCY"]

#: the API-key variable used when none is named
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
#: experiment trackers ``--log-to`` accepts
TRACKERS = ("wandb", "mlflow")
#: the most requests in flight one run (or one model of ``lensbench eval``) may ask for: far above what a
#: server serves at once, and below the open-file limits (one connection each) a larger value would exhaust
MAX_CONCURRENCY = 4096


class RunSettings(BaseModel):
    """Options every ``lensbench run <benchmark>`` takes (the CLI's shared flags).

    Units: ``timeout_s`` seconds per request; ``image_max_side`` pixels; ``limit`` = first N
    samples (after loading, in file order). Numbers must be finite (``inf`` / ``nan`` are refused)
    and ``concurrency`` at most :data:`MAX_CONCURRENCY`; a config validates with ``strict=True`` (no
    ``"2"`` or ``true`` for a count: :mod:`lensbench.runtime.matrix`).
    """

    model_config = ConfigDict(allow_inf_nan=False)

    model: str = Field(description="model backend spec: openai:MODEL, replay:PATH, random, constant:ANSWER, ...")
    model_arg: list[str] = Field(default_factory=list, description="backend argument KEY=VALUE, e.g. dtype=bfloat16 "
                                 "for hf: ('lensbench list' names each backend's keys)",
                                 json_schema_extra={"short": "-M"})
    out: Path = Field(description="run folder (created; an existing one is resumed)")
    data_dir: Path | None = Field(default=None, description="the benchmark's data folder (official release layout; "
                                                           "default: the data home's, see 'lensbench data where BENCH')")
    model_name: str | None = Field(default=None, description="display name in reports (default: from the backend)")
    base_url: list[str] = Field(default_factory=list, description="OpenAI-compatible endpoint(s); repeat to spread requests")
    api_key_env: str = Field(default=DEFAULT_KEY_ENV, description="environment variable holding the API key (a "
                             "variable named here that is unset stops a run to an endpoint off this machine)")
    replay_model: str | None = Field(default=None, description="model to take from a multi-model replay file")
    judge_model: str | None = Field(default=None, description="judge / answer-parser backend spec")
    judge_base_url: list[str] = Field(default_factory=list, description="judge endpoint(s) (default: api.openai.com, "
                                      "as for a model without --base-url)")
    judge_api_key_env: str = Field(default=DEFAULT_KEY_ENV, description="environment variable with the judge's key")
    judge_model_arg: list[str] = Field(default_factory=list, description="judge backend argument KEY=VALUE, as "
                                       "--model-arg for the model (e.g. ctx=4096 for a llamacpp: judge)")
    concurrency: int = Field(default=8, ge=1, le=MAX_CONCURRENCY, description="requests in flight at most (<= 4096)")
    limit: int | None = Field(default=None, ge=1, description="evaluate only the first N samples")
    seed: int = Field(default=0, description="run seed (baselines, shuffles, sampling)")
    temperature: float | None = Field(default=None, ge=0, description="override the protocol's temperature")
    max_tokens: int | None = Field(default=None, gt=0, description="max new tokens per reply")
    top_p: float | None = Field(default=None, gt=0, le=1, description="nucleus sampling top-p")
    thinking: bool | None = Field(default=None, description="set chat_template_kwargs.enable_thinking on servers that take it")
    extra_body: str | None = Field(default=None, description="JSON object merged into each request body (no secrets: "
                                                             "it is stored with every request)")
    image_format: Literal["auto", "jpeg", "png"] = Field(
        default="auto", description="how images are sent: auto = the released file's own bytes (JPEG, PNG, WebP, "
                                    "GIF; others and --image-max-side re-encode to JPEG); jpeg / png = always re-encode")
    image_max_side: int | None = Field(default=None, ge=16, description="downscale images to this longest side (px)")
    timeout_s: float = Field(default=120.0, gt=0, description="per-request timeout (s), sending included; grows by 10 s "
                             "per MB of request body")
    max_retries: int = Field(default=6, ge=0, description="retries of a failed call (timeouts, 429, 5xx, dropped)")
    max_retry_after: float = Field(default=120.0, ge=0, description="longest Retry-After wait obeyed (s)")
    progress: bool = Field(default=True, description="show progress (a bar on a terminal, a line every 30 s otherwise)")
    shard: str | None = Field(default=None, description="run only shard I/N of the samples (0 <= I < N: samples I, "
                                                        "I+N, ...), e.g. one per SLURM array task; join the shard "
                                                        "folders with 'lensbench merge'")
    tag: str | None = Field(default=None, description="a label for this run in report rows and leaderboard columns "
                                                      "(lensbench eval sets it to the variant)")
    log_to: list[str] = Field(default_factory=list, description="also log the run to an experiment tracker: wandb "
                              "or mlflow (settings, metrics with 95% CIs, the per-sample table)")
    log_project: str | None = Field(default=None, description="W&B project / MLflow experiment for --log-to "
                                    "(default: lensbench)")
    yes: bool = Field(default=False, description="re-send every request when the folder shows an earlier run whose "
                                                 "store is missing or empty")

    @field_validator("extra_body", mode="before")
    @classmethod
    def _check_extra_body(cls, v: Any) -> Any:
        """A table / dict (TOML or YAML config) is kept as its JSON text; a key naming a secret is refused."""
        if isinstance(v, dict):
            v = json.dumps(v, ensure_ascii=False)
        if isinstance(v, str):
            secrets = find_secrets({"extra_body": v})
            if secrets:
                raise ValueError(f"{', '.join(secrets)}: {SECRET_HINT}")
        return v

    @field_validator("model_arg", "judge_model_arg", mode="before")
    @classmethod
    def _model_args(cls, v: Any) -> Any:
        """A table / dict (config) becomes ``KEY=VALUE`` items; every item must hold ``=``."""
        if isinstance(v, dict):
            v = [f"{k}={str(x).lower() if isinstance(x, bool) else x}" for k, x in v.items()]
        if isinstance(v, str):
            v = [v]
        for item in v or []:
            if not isinstance(item, str) or "=" not in item or not item.split("=", 1)[0].strip():
                raise ValueError(f"{item!r}: give KEY=VALUE")
        return v

    @field_validator("log_to", mode="before")
    @classmethod
    def _trackers(cls, v: Any) -> Any:
        items = [v] if isinstance(v, str) else list(v or [])
        out: list[str] = []
        for item in items:
            for t in str(item).split(","):
                t = t.strip().lower()
                if t and t not in TRACKERS:
                    raise ValueError(f"unknown tracker {t!r}; use {' or '.join(TRACKERS)}")
                if t and t not in out:
                    out.append(t)
        return out

    @field_validator("shard")
    @classmethod
    def _check_shard(cls, v: str | None) -> str | None:
        if v is None:
            return v
        from lensbench.runtime.shards import parse_shard
        try:
            i, n = parse_shard(v)
        except ConfigError as exc:
            raise ValueError(str(exc).removeprefix("--shard ")) from None
        return f"{i}/{n}"

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


    def recorded(self) -> dict[str, Any]:
        """These settings as written to the manifest: endpoint credentials redacted, no secrets."""
        d = self.model_dump(mode="json")
        d["base_url"] = [redact_url(u) for u in self.base_url]
        d["judge_base_url"] = [redact_url(u) for u in self.judge_base_url]
        return d

    def failed_hint(self, rerun: str) -> str:
        """What to do about failed requests (issue 32.3): ``rerun`` (the command that resumes) retries them,
        unless every backend is a replay file, which holds the failures itself (a recorded error, or no reply
        for the request): running again replays the same, so the hint says how the run is used as it is."""
        recorded = ("replay:", "predictions:")  # a predictions file is replayed the same way (docs/interop.md)
        if self.model.startswith(recorded) and (self.judge_model is None or self.judge_model.startswith(recorded)):
            return (f"the replay file holds these failures ({self.model.partition(':')[2]}: a recorded error or no "
                    "reply for the request), so running again replays the same; the run is usable as it is: "
                    f"reports count them as failed requests ('lensbench report {self.out}') and state its coverage")
        return f"{rerun} to retry them"
