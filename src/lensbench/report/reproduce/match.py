"""Which paper row a run is: explicit ``--match RUN=ROW``, or the run's model name when it is exactly one
of the paper's, never a guess (the paper's "SmolVLM-2.3B" is not the recorded "SmolVLM2-2.2B-Instruct").

Rules (:func:`resolve_matches`):

* ``--match RUN=NAME`` (repeatable; several names per run allowed): NAME must be one of the paper's
  model names or row labels (:meth:`lensbench.report.reproduce.spec.Paper.model_names`), spelled
  exactly; RUN must be one of the run folders given. A run with an explicit match gets only those names.
* Otherwise a run is matched to a paper model name equal to its model name, or to the part of it after
  the last ``/`` (``Qwen/Qwen2.5-VL-7B-Instruct`` is the paper's ``Qwen2.5-VL-7B-Instruct``); case and
  every other character must agree. Row labels are never matched this way.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from lensbench.core.errors import ConfigError

__all__ = ["parse_match", "resolve_matches", "auto_names"]


def parse_match(item: str) -> tuple[str, str]:
    """``"RUN=NAME"`` -> ``(RUN, NAME)`` (split at the first ``=``). Raises ConfigError for another shape."""
    run, sep, name = item.partition("=")
    if not sep or not run.strip() or not name.strip():
        raise ConfigError(f"--match {item!r}: expected RUN=ROW (a run folder given, '=', a row of the paper)")
    return run.strip(), name.strip()


def _key(p: str | Path) -> str:
    return str(Path(p).resolve())


def auto_names(model: str, names: Sequence[str]) -> list[str]:
    """The paper names (from ``names``) equal to ``model`` or to its part after the last ``/``."""
    short = model.rsplit("/", 1)[-1]
    return [n for n in names if n in (model, short)]


def resolve_matches(items: Sequence[str], run_dirs: Sequence[str | Path], models: dict[str, str],
                    row_models: Sequence[str], every_name: Sequence[str]) -> dict[str, tuple[list[str], bool]]:
    """``{run folder (resolved): (paper names, explicit?)}`` for every run of ``run_dirs``.

    ``items``: the ``--match`` values; ``models``: {run folder (resolved): its model name};
    ``row_models``: names a run is matched to by its model name (the rows' models and the paper's named
    models); ``every_name``: every name ``--match`` accepts. Raises ConfigError naming an unknown RUN or
    NAME (with the nearest names) before anything is computed.
    """
    known = {_key(d): str(d) for d in run_dirs}
    explicit: dict[str, list[str]] = {}
    for item in items:
        run, name = parse_match(item)
        k = _key(run)
        if k not in known:
            raise ConfigError(f"--match {item!r}: {run} is not one of the run folders given "
                              f"({', '.join(known.values())})")
        if name not in every_name:
            near = difflib.get_close_matches(name, every_name, n=3, cutoff=0.5)
            hint = f"; nearest: {', '.join(near)}" if near else ""
            raise ConfigError(f"--match {item!r}: {name!r} is not a row of this paper (names are matched exactly"
                              f"{hint}; every name: 'lensbench reproduce PAPER --rows')")
        explicit.setdefault(k, [])
        if name not in explicit[k]:
            explicit[k].append(name)
    out: dict[str, tuple[list[str], bool]] = {}
    for k in known:
        if k in explicit:
            out[k] = (explicit[k], True)
        else:
            out[k] = (auto_names(models.get(k, ""), row_models), False)
    return out
