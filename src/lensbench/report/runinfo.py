"""What a run's numbers cover: its protocol settings, its coverage of the benchmark, its state.

Read by the leaderboard (``lensbench report``, ``eval``, the viewer) and by ``lensbench compare``:

* :func:`protocol_settings`: every setting that changes what is measured: the benchmark's options
  (minus paths, workers and metadata: the benchmark's ``not_settings``),
  the judge/parser model, and the generation parameters the user overrode (``temperature``,
  ``max_tokens``, ``top_p``, ``extra_body`` keys, ``image_max_side``). Runs that differ in any of
  them are different columns, never one superseding the other.
* :func:`coverage`, :func:`coverage_label`: what the run covers of the benchmark's release (counted against
  the release, never the run's folder: :mod:`lensbench.report.coverage`, where a ``--limit`` / ``--shard`` /
  demo-data / part-of-the-release run is named).
* :func:`perturbation`, :func:`perturbation_header`: the input perturbation a run was made under
  (``--perturb palette:iron``, :mod:`lensbench.media.perturb`), named on every surface.
* :func:`run_state`: ``incomplete: N failed requests``,
  ``killed: N unsent requests`` (a run stopped before every request was sent and rebuilt from
  its store: the missing replies were never asked for), or ``""`` for a complete run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from lensbench.report.coverage import UNSENT, error_split, run_coverage
from lensbench.report.runs import LoadedRun

__all__ = ["protocol_settings", "settings_label", "settings_differences", "coverage", "coverage_label",
           "perturbation", "perturbation_header", "run_state", "error_split", "UNSENT"]

def _flat(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = value


def protocol_settings(run: LoadedRun) -> dict[str, Any]:
    """``{setting: value}`` of ``run`` (see the module docstring); options first, then judge and overrides."""
    res = run.result
    options = (res.options if res is not None and res.options else run.manifest.get("options")) or {}
    facts = run.facts
    skip = facts.not_settings if facts is not None else frozenset()
    out: dict[str, Any] = {k: v for k, v in options.items() if k not in skip}
    judge = (res.extra.get("judge") if res is not None else None) or run.manifest.get("judge_spec")
    if judge:
        out["judge"] = judge
    gen = run.manifest.get("generation_overrides") or {}
    for k in ("temperature", "max_tokens", "top_p"):
        if gen.get(k) is not None:
            out[k] = gen[k]
    _flat("", gen.get("extra_body") or {}, extra := {})
    out.update({f"extra_body.{k}": v for k, v in extra.items()})
    side = (run.manifest.get("settings") or {}).get("image_max_side")
    if side is not None:
        out["image_max_side"] = side
    return out


def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def settings_label(settings: Mapping[str, Any], defaults: Mapping[str, Any] | None = None,
                   shown: Sequence[str] | None = None) -> str:
    """The settings worth naming, as ``"blind; input=thermal-only; judge: qwen3-8b"`` (``""`` for none).

    A setting is named when it differs from ``defaults`` (the benchmark's default options; judge
    and generation overrides always), or, without defaults, when it is in ``shown`` (settings
    that differ between the runs being reported). ``True`` flags are named bare (``blind``).
    """
    parts = []
    for k, v in settings.items():
        if k == "judge":
            parts.append(f"judge: {v}")
            continue
        if defaults is not None and k in defaults:
            if defaults[k] == v:
                continue
        elif k in ("temperature", "max_tokens", "top_p", "image_max_side") or k.startswith("extra_body."):
            pass
        elif shown is None or k not in shown:
            continue
        parts.append(k if v is True else f"{k}={_text(v)}")
    return "; ".join(parts)


def settings_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """``["input: rgb+thermal (A) vs thermal-only (B)", ...]`` for every setting the two differ in."""
    return [f"{k}: {_text(a.get(k, '(not set)'))} (A) vs {_text(b.get(k, '(not set)'))} (B)"
            for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]


def perturbation(run: LoadedRun) -> str:
    """The run's input perturbation as recorded in its options (``"palette:iron"``), ``""`` for none."""
    res = run.result
    options = (res.options if res is not None and res.options else run.manifest.get("options")) or {}
    return str(options.get("perturb") or "")


def perturbation_header(runs: Sequence[LoadedRun]) -> str:
    """The lines ``lensbench report`` prints above a benchmark's tables for perturbed runs (``Perturbed input
    in <folder>: palette:iron (not the benchmark's input: compare it with its unperturbed twin).``); ``""``
    when none is perturbed."""
    out = [f"Perturbed input in {r.path}: {p} (not the benchmark's input: compare it with its unperturbed twin, "
           f"lensbench compare).\n" for r in runs if (p := perturbation(r))]
    return "".join(out) + ("\n" if out else "")


def coverage(run: LoadedRun) -> tuple[int, int] | None:
    """``(samples scored, samples in the release)`` (:func:`lensbench.report.coverage.run_coverage`), or None
    when the run's files do not say or the benchmark states no release size."""
    cov = run_coverage(run)
    return (cov.samples, cov.release.samples) if cov.stated and cov.counted else None


def coverage_label(run: LoadedRun) -> str:
    """``""`` for a run that is the benchmark's measurement, else what it covers of the release and why
    (``"10/29 scenes, 560/1,624 questions: the data folder holds 140 of ..."``, ``"demo data,
    not the benchmark: ..."``): :attr:`lensbench.report.coverage.Coverage.label`."""
    return run_coverage(run).label


def run_state(run: LoadedRun) -> str:
    """``""`` (every request answered), or what is missing: ``incomplete: N failed requests``,
    ``killed: N unsent requests`` (both when both), ``N replies not stored`` (the store refused them: scored,
    asked again on resume). What a run covers by design (``--limit``, demo data) is its coverage, not its state."""
    res = run.result
    if res is None:
        return "unfinished: no result.json"
    parts = []
    failed, unsent = error_split(run)
    if unsent:
        parts.append(f"killed: {unsent} unsent request{'s' * (unsent != 1)} (run the same command to finish)")
    if failed:
        hint = "re-run to retry them" if "failures_recorded" not in res.extra else "held by the replay file"
        parts.append(f"incomplete: {failed} failed request{'s' * (failed != 1)} ({hint})")
    if n := int(res.counts.get("n_not_stored") or 0):
        parts.append(f"{n} repl{'ies' if n != 1 else 'y'} not stored (asked again on resume)")
    return "; ".join(parts)
