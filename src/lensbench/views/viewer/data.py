"""The viewer's data document: runs, samples (compact), images, comparisons, figures, tables.

Sample keys are short to keep a 20k-sample page small: ``r`` run index, ``id``, ``o`` outcome,
``l`` labels, ``m`` messages (``[role, [part]]`` with parts ``["t", text]``, ``["i", sha]``,
``["v", video path, [t_s], [sha]]``), ``rp`` reply, ``rs`` reasoning, ``a`` answer, ``t`` target,
``s`` scores, ``j`` judge calls, ``e`` error, ``x`` extra, ``lt`` latency (s).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lensbench.views.catalog import describe
from lensbench.report.coverage import run_coverage, run_status
from lensbench.report.runinfo import perturbation
from lensbench.report.runs import LoadedRun
from lensbench.views.viewer.media import ImageRegistry, frame_index

__all__ = ["build_payload", "group_defaults", "run_labels", "run_keys"]


def group_defaults(benchmarks: Sequence[str]) -> dict[str, list[str]]:
    """Per benchmark, the labels its samples are grouped by in the browser by default (the first one a
    sample has): the benchmark's ``viewer_group`` (e.g. IF-Bench: a question's rotations and languages
    together); benchmarks without one are left out."""
    out = {}
    for name in dict.fromkeys(benchmarks):
        facts = describe(name)
        if facts is not None and facts.viewer_group:
            out[name] = list(facts.viewer_group)
    return out


def _messages(rec, images: ImageRegistry, frames: dict[str, Path]) -> list[Any]:
    out = []
    for m in rec.messages:
        parts = []
        for p in m.get("content", []):
            kind = p.get("type")
            if kind == "text":
                parts.append(["t", p.get("text", "")])
            elif kind == "image":
                parts.append(["i", images.add(p.get("sha256") or p.get("path", "?"), p.get("path"))])
            elif kind == "video":
                shas = [images.add(s, frames.get(s)) for s in p.get("frames", [])]
                parts.append(["v", p.get("path"), p.get("timestamps", []), shas])
        out.append([m.get("role", "user"), parts])
    return out


def _sample(ri: int, rec, images: ImageRegistry, frames: dict[str, Path]) -> dict[str, Any]:
    d: dict[str, Any] = {"r": ri, "id": rec.sample_id, "o": rec.outcome, "l": rec.labels,
                         "m": _messages(rec, images, frames)}
    for key, val in (("rp", rec.reply), ("rs", rec.reasoning), ("a", rec.answer), ("t", rec.target),
                     ("s", rec.scores), ("e", rec.error), ("x", rec.extra), ("lt", rec.latency_s)):
        if val not in (None, {}, []):
            d[key] = val
    if rec.judge:
        d["j"] = [j.model_dump(mode="json") for j in rec.judge]
    return d


def run_labels(runs: Sequence[LoadedRun]) -> list[str]:
    """The name of each run on the page: :func:`lensbench.report.figures.plot_labels` among the runs of its
    benchmark (the model; its tag and differing settings where a model repeats), the same names the plots use,
    with ``[perturbed: ...]`` for a run of perturbed input (:mod:`lensbench.media.perturb`)."""
    from lensbench.report.figures import plot_labels

    out = [""] * len(runs)
    for bench in dict.fromkeys(r.benchmark for r in runs):
        idx = [i for i, r in enumerate(runs) if r.benchmark == bench]
        for i, name in zip(idx, plot_labels([runs[i] for i in idx])):
            p = perturbation(runs[i])
            out[i] = f"{name} [perturbed: {p}]" if p else name
    return out


def run_keys(runs: Sequence[LoadedRun]) -> list[str]:
    """The run's part of a sample link (``#sample=<key>/<sample id>``): the run folder's name, with ``~<i>``
    (its position) where two folders share a name."""
    names = [r.path.name or str(i) for i, r in enumerate(runs)]
    return [n if names.count(n) == 1 else f"{n}~{i}" for i, n in enumerate(names)]


def build_payload(runs: Sequence[LoadedRun], *, tables: dict[str, str] | None = None,
                  comparisons: Sequence[dict[str, Any]] = (), figures: Sequence[dict[str, str]] = (),
                  embed: bool = True, max_thumbs: int = 3000, items: dict[str, Any] | None = None,
                  judge: Sequence[dict[str, Any]] = ()) -> tuple[dict[str, Any], ImageRegistry]:
    """The viewer document for ``runs`` and the image registry (for ``--serve``).

    ``tables``: benchmark -> HTML of its summary tables; ``comparisons``: dicts of
    :meth:`lensbench.views.compare.Comparison.to_json` plus ``ia``/``ib`` run indices;
    ``figures``: ``{"title", "src"}`` (data URLs); ``items`` / ``judge``: the Items and Judge tabs' data
    (:mod:`lensbench.views.viewer.analysis`), empty when the page has none.
    """
    images = ImageRegistry(embed=embed, max_thumbs=max_thumbs)
    samples: list[dict[str, Any]] = []
    run_docs = []
    labels, keys = run_labels(runs), run_keys(runs)
    for ri, run in enumerate(runs):
        recs = run.records or []
        wanted = {s for r in recs for m in r.messages for p in m.get("content", []) if p.get("type") == "video"
                  for s in p.get("frames", [])}
        frames = frame_index(run.path, wanted) if wanted else {}
        res = run.result
        run_docs.append({"i": ri, "benchmark": run.benchmark, "model": run.model, "label": labels[ri], "key": keys[ri],
                         "path": str(run.path), "complete": run.finished, "problems": run.problems,
                         "status": run_status(run), "coverage": run_coverage(run).text,
                         "counts": res.counts if res else {}, "metrics": res.metrics if res else {},
                         "n": len(recs)})
        samples.extend(_sample(ri, rec, images, frames) for rec in recs)
    images.finish()
    payload = {
        "generated": time.strftime("%Y-%m-%d %H:%M:%S"),
        "runs": run_docs,
        "tables": tables or {},
        "comparisons": list(comparisons),
        "figures": list(figures),
        "items": items or {},
        "judge": list(judge),
        "groupDefault": group_defaults([r.benchmark for r in runs]),
        "images": images.items,
        "samples": samples,
    }
    return payload, images
