"""Checks of a run's settings made before anything is loaded or sent (besides the folder checks of
:mod:`lensbench.runtime.checks`): what the run will need, what it cannot use, and what would
silently spoil an existing run folder.

* :func:`run_requirements` / :func:`check_run_requirements`: every optional library the run will
  import (the benchmark's own, e.g. PyAV for IV-Bench; experiment trackers), checked together
  so a missing one stops the run before the first request with a literal install hint.
* :func:`judge_flags` + :meth:`Benchmark.check_judge_flags`: a judge flag on a benchmark whose
  protocol (with these options) has no judge or parser round is refused, not silently ignored.
* :func:`check_key_env`: an API-key variable named by the user (``--api-key-env MY_KEY``) that is
  unset: refused for an endpoint off this machine (requests would go out unauthenticated), a
  warning for a loopback one (local servers often take no key).
* :func:`changed_settings`: a generation or image setting that differs from the one an existing
  run folder was made with (``--temperature 0.2`` on a folder run at the protocol's 0): every
  request would be new and be sent again into the same store, so the run is refused naming the
  setting (use another ``--out``, or a named variant in ``lensbench eval``).
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lensbench.benchmarks.base import Benchmark
from lensbench.core.errors import ConfigError
from lensbench.core.extras import Requirement, check_requirements
from lensbench.core.urls import redact_url
from lensbench.runtime.settings import DEFAULT_KEY_ENV, RunSettings

__all__ = ["run_requirements", "check_run_requirements", "judge_flags", "is_loopback", "check_key_env",
           "REQUEST_SETTINGS", "changed_settings", "check_same_settings"]

#: run settings that change every request (so a run folder made with other values cannot be resumed)
REQUEST_SETTINGS = ("temperature", "max_tokens", "top_p", "thinking", "extra_body", "image_format", "image_max_side",
                    "seed")


def run_requirements(bench: Benchmark, s: RunSettings, data_dir: Path | None) -> list[Requirement]:
    """The optional modules the run will import: the benchmark's (:meth:`Benchmark.requirements`) and the
    experiment trackers of ``--log-to``."""
    from lensbench.runtime.tracking import tracker_requirements

    return [*bench.requirements(data_dir), *tracker_requirements(s.log_to)]


def check_run_requirements(reqs: list[Requirement], warn: Callable[[str], None] | None = None) -> None:
    """:func:`lensbench.core.extras.check_requirements` (raises MissingExtraError naming every missing module)."""
    check_requirements(reqs, warn)


def judge_flags(s: RunSettings) -> list[str]:
    """The judge flags ``s`` sets (``--judge-model``, ``--judge-base-url``, ``--judge-model-arg``), as flag
    names. (The key variable's name alone sends nothing, so ``--judge-api-key-env`` is not one of them.)"""
    return [flag for flag, v in (("--judge-model", s.judge_model), ("--judge-base-url", s.judge_base_url),
                                 ("--judge-model-arg", s.judge_model_arg)) if v]


def is_loopback(url: str) -> bool:
    """True when ``url``'s host is this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_key_env(spec: str, base_urls: list[str], key_env: str, flag: str,
                  warn: Callable[[str], None] | None = None) -> None:
    """For an ``openai:`` spec whose key variable ``key_env`` was named by the user (not the default) and is
    unset or empty: raise ConfigError when an endpoint is off this machine; else ``warn`` once.

    ``flag`` names the setting in the message (``--api-key-env``, ``--judge-api-key-env``).
    """
    if key_env == DEFAULT_KEY_ENV or spec.partition(":")[0] != "openai" or os.environ.get(key_env, ""):
        return
    remote = [redact_url(u) for u in base_urls if not is_loopback(u)]
    if remote or not base_urls:
        where = ", ".join(remote) or "the default endpoint"
        raise ConfigError(f"{flag} {key_env}: the environment variable {key_env} is not set (or empty), so requests "
                          f"to {where} would go without an API key: export {key_env}=..., or leave {flag} out for "
                          "a server that takes no key")
    if warn is not None:
        warn(f"{flag} {key_env}: {key_env} is not set; sending to {', '.join(map(redact_url, base_urls))} "
             "without an API key")


def _norm(name: str, v: Any) -> Any:
    if name == "extra_body" and isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def changed_settings(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(name, old value, new value)`` for each of :data:`REQUEST_SETTINGS` recorded in ``old`` (a manifest's
    ``settings``) that differs in ``new`` (:meth:`RunSettings.recorded`). Settings the old manifest did
    not record are not compared."""
    out = []
    for name in REQUEST_SETTINGS:
        if name in old and _norm(name, old[name]) != _norm(name, new.get(name)):
            out.append((name, old[name], new.get(name)))
    return out


def check_same_settings(out: Path, old: dict[str, Any], s: RunSettings) -> None:
    """Raise ConfigError naming every request-changing setting that differs from the run in ``out``."""
    diff = changed_settings(old.get("settings") or {}, s.recorded())
    if not diff:
        return
    shown = "; ".join(f"--{n.replace('_', '-')} {'unset' if b is None else b} (the folder's run: "
                      f"{'unset' if a is None else a})" for n, a, b in diff)
    raise ConfigError(f"{out} was run with other request settings: {shown}. Every request would differ and be sent "
                      "again into the same store: use another --out for this setting (in 'lensbench eval': a "
                      "variant), or give the folder's values to resume it")
