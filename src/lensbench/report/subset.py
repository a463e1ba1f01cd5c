"""Saved item subsets applied to runs: ``--subset FILE`` of ``lensbench report``, ``view`` and ``compare``.

``lensbench analyze items RUN... --out DIR`` writes ``subset-<name>.json``
(:meth:`lensbench.tools.analysis.impact.Subset.to_json`: ``name``, ``rule``, ``n_items``, ``sha256`` of the
sorted item ids joined by ``"\\n"``, ``kendall_tau``, ``items``). :func:`load_subset` reads and checks such a
file; :func:`apply_subset` restricts one read run (:class:`lensbench.report.runs.LoadedRun`) to the subset's
items: its records are filtered by ``sample_id``, its ``result`` is re-aggregated by its benchmark's own
:meth:`~lensbench.benchmarks.base.Benchmark.aggregate` over the kept records, its stored CIs are dropped so
that CIs are resampled from its :meth:`~lensbench.benchmarks.base.Benchmark.unit_tables` over the kept
records, and its model is labelled ``"<model> [subset <name>]"``. A subset is not the paper's measurement:
every surface says so with :attr:`SubsetApplied.label`.

:func:`lensbench.report.runs.read_folder` is the one place that calls :func:`apply_subset`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError

__all__ = ["ItemSubset", "SubsetApplied", "load_subset", "apply_subset"]


@dataclass(frozen=True)
class ItemSubset:
    """A subset file as read: ``path``, ``name`` (``<benchmark>-<rule><pct>-<sha8>``), ``items`` (the sorted
    ids, as saved) and ``sha256`` (hex digest of ``"\\n".join(items)``, checked on reading)."""

    path: Path
    name: str
    items: tuple[str, ...]
    sha256: str

    def belongs_to(self, benchmark: str) -> bool:
        """True when the subset was made from runs of ``benchmark`` (its name starts ``<benchmark>-``)."""
        return self.name.startswith(benchmark + "-")


@dataclass(frozen=True)
class SubsetApplied:
    """What a subset kept of one run: ``n`` of the run's ``total`` items (distinct ``sample_id``)."""

    subset: ItemSubset
    n: int
    total: int

    @property
    def label(self) -> str:
        """``"subset <name> (<n>/<N> items, sha256 <first 12 hex>)"``."""
        return f"subset {self.subset.name} ({self.n}/{self.total} items, sha256 {self.subset.sha256[:12]})"

    def to_json(self) -> dict[str, Any]:
        """The ``extra["subset"]`` block of a restricted result."""
        return {"name": self.subset.name, "file": str(self.subset.path), "sha256": self.subset.sha256,
                "n_items": self.n, "of_items": self.total, "label": self.label,
                "note": "an item subset: not the paper's measurement, not comparable with the full set"}


def load_subset(path: str | Path) -> ItemSubset:
    """Read and check the subset file ``path``.

    Raises ConfigError (one line naming the file and field) when it is missing, not JSON, not an object, has no
    string ``name`` or a non-empty list of string ``items`` (no duplicates), when ``n_items`` (if present) is not
    ``len(items)``, or when ``sha256`` is not the digest of ``"\\n".join(items)``.
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such subset file")
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: not a JSON subset file ({exc})") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{p}: a subset file is a JSON object (name, sha256, items)")
    name, items, sha = doc.get("name"), doc.get("items"), doc.get("sha256")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{p}: field 'name' must be a non-empty string")
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        raise ConfigError(f"{p}: field 'items' must be a non-empty list of item ids (strings)")
    if len(set(items)) != len(items):
        raise ConfigError(f"{p}: field 'items' lists an item twice")
    if "n_items" in doc and doc["n_items"] != len(items):
        raise ConfigError(f"{p}: field 'n_items' is {doc['n_items']!r} but 'items' has {len(items)}")
    if not isinstance(sha, str):
        raise ConfigError(f"{p}: field 'sha256' must be the hex sha256 of the item ids")
    digest = hashlib.sha256("\n".join(items).encode()).hexdigest()
    if sha != digest:
        raise ConfigError(f"{p}: field 'sha256' does not match its items (file says {sha[:12]}, items give "
                          f"{digest[:12]}): the file was edited")
    return ItemSubset(p, name, tuple(items), sha)


def apply_subset(run: Any, subset: ItemSubset) -> SubsetApplied | None:
    """Restrict ``run`` (a :class:`lensbench.report.runs.LoadedRun` with its records read) to ``subset`` in
    place (see the module docstring); None when the run has no result or records (its problems say why).

    Raises ConfigError naming the file and field ``items`` when the subset was made for another benchmark
    or none of its items is in the run.
    """
    if run.result is None or run.records is None:
        return None
    if not subset.belongs_to(run.benchmark):
        raise ConfigError(f"{subset.path}: field 'name' ({subset.name}): its items are not of {run.benchmark} "
                          f"({run.path})")
    ids = {r.sample_id for r in run.records}
    keep = ids.intersection(subset.items)
    if not keep:
        raise ConfigError(f"{subset.path}: field 'items': none of its {len(subset.items)} items is in {run.path}")
    facts = run.facts
    if facts is None:
        raise ConfigError(f"{subset.path}: cannot apply to {run.path}: benchmark {run.benchmark!r} is not registered")
    records = [r for r in run.records if r.sample_id in keep]
    try:
        options = facts.Options(**run.result.options)
    except (TypeError, ValueError):
        options = facts.Options()
    metrics, counts = facts(options).aggregate(records)
    applied = SubsetApplied(subset, len(keep), len(ids))
    run.records = records
    run.result = dataclasses.replace(run.result, metrics=metrics, counts=counts, ci=None,
                                     model=f"{run.result.model} [subset {subset.name}]",
                                     extra={**run.result.extra, "subset": applied.to_json()})
    run._tables, run._intervals, run._coverage = None, {}, None
    return applied
