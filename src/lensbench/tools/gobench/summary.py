"""GOBench generation summaries: per-generator means (Table 2), PLCC/SRCC between the three
dimensions (Table 1) and inter-rater agreement (Krippendorff's alpha, ``krippendorff`` package).

Human sources: rating CSVs, the rate page's SQLite, or VLMEvalKit's ``GOBench.tsv`` (the public
human ground truth: per-image rater means in its ``answer`` cell; the release variant ``.1``-``.3``
of each image names its generator slot, see ``--generator-map``).
Per image, a source's score is the mean over its raters (Sec. 2.2); Table 2 averages those per
generator; Table 1 correlates the per-image means between dimensions over all images
(scipy.stats.pearsonr / spearmanr). Alpha is computed over the raters x images matrix (interval
level for the three scores; nominal for the 5 per-question answers, units = image x question).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lensbench.benchmarks.gobench.humans import is_vlmevalkit_tsv, read_rating_rows, tsv_rating_rows
from lensbench.benchmarks.gobench.ratings import RatingRow
from lensbench.benchmarks.gobench.records import ANSWERS, DIM_TITLES, DIMENSIONS, GORecord, scenario_of
from lensbench.benchmarks.gobench.report import paper_table
from lensbench.core.errors import DataError
from lensbench.core.jsonl import iter_jsonl
from lensbench.report.tables import render_table
from lensbench.scoring.metrics import correlation
from lensbench.tools.review.agreement import krippendorff_alpha

__all__ = ["rows_from_run", "parse_generator_map", "summarize", "render_summary", "krippendorff_alpha", "Source"]

_PAIRS = (("aesthetics", "authenticity"), ("authenticity", "fidelity"), ("aesthetics", "fidelity"))


@dataclass
class Source:
    """A set of ratings: ``name`` (``humans`` or a judge model), rows, and whether raters are people."""

    name: str
    rows: list[RatingRow]
    human: bool = True


def parse_generator_map(text: str | None) -> dict[str, str]:
    """``"1=GPT-4o-Image,2=Seedream 3.0"`` -> ``{"1": "GPT-4o-Image", "2": "Seedream 3.0"}``. Raises ValueError."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        k, sep, v = part.partition("=")
        if not sep or not k.strip() or not v.strip():
            raise ValueError(f"--generator-map entries look like 1=NAME, got {part!r}")
        out[k.strip()] = v.strip()
    return out


def _generator(row: RatingRow, gmap: dict[str, str]) -> str:
    if row.generator:
        return row.generator
    # a record index "direct_light_images_1.2" names the image "direct_light_images/1.2.png" (variant 2)
    ref = row.key if "/" in row.key else (row.record or row.key).replace("_images_", "_images/") + ".png"
    _scen, var = scenario_of(ref)
    if var:
        return gmap.get(var, f"variant .{var}")
    return "unknown"


def rows_from_run(run_dir: Path) -> Source:
    """Ratings an MLLM judge gave in a ``lensbench run gobench`` folder (``samples.jsonl``: the
    ``scored`` SampleRecords; key = ``labels["image"]``, generator from ``labels["variant"]`` or,
    for ``--layout scenario`` runs, the ``--images-dir`` folder name).

    Raises DataError when the folder holds no GOBench samples.
    """
    run_dir = Path(run_dir)
    p = run_dir / "samples.jsonl"
    if not p.is_file():
        raise DataError(run_dir, "no samples.jsonl (not a finished lensbench run)")
    manifest = json.loads((run_dir / "run.json").read_text()) if (run_dir / "run.json").is_file() else {}
    if manifest.get("benchmark") not in (None, "gobench"):
        raise DataError(run_dir, f"holds a {manifest.get('benchmark')!r} run, not gobench")
    name = manifest.get("model_name") or manifest.get("model_spec") or run_dir.name
    gen = None
    images_dir = (manifest.get("options") or {}).get("images_dir")
    if images_dir:
        gen = Path(images_dir).name
    rows = []
    for _ln, r in iter_jsonl(p, "samples file", kind=dict):
        if r.get("outcome") != "scored":  # unparseable and transport errors carry no ratings
            continue
        s, labels = r.get("scores") or {}, r.get("labels") or {}
        rows.append(RatingRow(key=labels.get("image", r.get("sample_id")), rater=name,
                              answers=tuple((r.get("answer") or {}).get("answers") or ()),
                              authenticity=s.get("authenticity"), aesthetics=s.get("aesthetics"),
                              fidelity=s.get("fidelity"), generator=gen if not labels.get("variant") else None,
                              record=r.get("sample_id")))
    return Source(name=f"judge: {name}", rows=rows, human=False)


def summarize(sources: Sequence[Source], gmap: dict[str, str] | None = None) -> dict[str, Any]:
    """Tables 1-2 and agreement per source. Returns ``{source: {"table2": {generator: {dim: mean,
    "n": images}}, "table1": {pair: {PLCC, SRCC, n}}, "alpha": {dim or "answers": alpha},
    "n_raters": k, "n_images": n}}``."""
    gmap = gmap or {}
    out: dict[str, Any] = {}
    for src in sources:
        per_img: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        gen_of: dict[str, str] = {}
        for r in src.rows:
            gen_of[r.key] = _generator(r, gmap)
            for d in DIMENSIONS:
                v = getattr(r, d)
                if v is not None:
                    per_img[r.key][d].append(v)
        means = {k: {d: float(np.mean(v[d])) for d in DIMENSIONS if v.get(d)} for k, v in per_img.items()}
        t2: dict[str, dict[str, Any]] = {}
        for gen in sorted(set(gen_of.values())):
            ks = [k for k in means if gen_of[k] == gen]
            t2[gen] = {DIM_TITLES[d]: (float(np.mean([means[k][d] for k in ks if d in means[k]]))
                                       if any(d in means[k] for k in ks) else None) for d in DIMENSIONS}
            t2[gen]["n"] = len(ks)
        t1 = {}
        for a, b in _PAIRS:
            ks = [k for k in means if a in means[k] and b in means[k]]
            t1[f"{DIM_TITLES[a]} vs {DIM_TITLES[b]}"] = correlation([means[k][a] for k in ks], [means[k][b] for k in ks])
        raters = sorted({r.rater for r in src.rows if r.rater})
        keys = sorted(per_img)
        alpha: dict[str, float | None] = {}
        if len(raters) >= 2:
            ri, ki = {r: i for i, r in enumerate(raters)}, {k: i for i, k in enumerate(keys)}
            for d in DIMENSIONS:
                m = np.full((len(raters), len(keys)), np.nan)
                for r in src.rows:
                    if r.rater and getattr(r, d) is not None:
                        m[ri[r.rater], ki[r.key]] = getattr(r, d)
                alpha[DIM_TITLES[d]] = krippendorff_alpha(m, "interval", "gobench")
            code = {a: i for i, a in enumerate(ANSWERS)}
            m = np.full((len(raters), len(keys) * 5), np.nan)
            for r in src.rows:
                if r.rater:
                    for qi, a in enumerate(r.answers or ()):
                        if a is not None:
                            m[ri[r.rater], ki[r.key] * 5 + qi] = code[a]
            alpha["Answers (nominal)"] = krippendorff_alpha(m, "nominal", "gobench")
        out[src.name] = {"table2": t2, "table1": t1, "alpha": alpha, "n_raters": len(raters), "n_images": len(keys)}
    return out


def render_summary(summary: dict[str, Any], fmt: str = "md", with_paper: bool = False) -> str:
    """Tables 2 and 1 and the agreement table, as ``md`` or ``csv``."""
    dims = ["Aesthetics", "Fidelity", "Authenticity"]
    rows = []
    if with_paper:
        rows += [["paper (human experts)", p["generator"], *[p[d] for d in dims], None] for p in paper_table(2)["rows"]]
    for name, s in summary.items():
        for gen, t in s["table2"].items():
            rows.append([name, gen, *[t.get(d) for d in dims], t["n"]])
    parts = [render_table(["rated by", "generator", *dims, "images"], rows, fmt,
                          title="Average evaluation scores per generator (Table 2 layout)")]
    rows = []
    if with_paper:
        rows += [["paper (human experts)", p["pair"], p["PLCC"], p["SRCC"], None] for p in paper_table(1)["rows"]]
    for name, s in summary.items():
        for pair, c in s["table1"].items():
            rows.append([name, pair, c["PLCC"], c["SRCC"], c["n"]])
    parts.append(render_table(["rated by", "pair", "PLCC", "SRCC", "images"], rows, fmt,
                              title="Correlation between rating dimensions (Table 1 layout)", digits=4))
    cols = ["Authenticity", "Aesthetics", "Fidelity", "Answers (nominal)"]
    parts.append(render_table(["rated by", "raters", "images", *[f"alpha {c}" for c in cols]],
                              [[n, s["n_raters"], s["n_images"], *[s["alpha"].get(c) for c in cols]]
                               for n, s in summary.items()], fmt,
                              title="Inter-rater agreement (Krippendorff's alpha; interval for scores, nominal for answers)",
                              digits=4))
    return "\n".join(parts)


def load_sources(ratings: Sequence[Path], runs: Sequence[Path], records: list[GORecord] | None = None) -> list[Source]:
    """Rating files (one human source per file, named by the file) and judge runs.

    A VLMEvalKit ``GOBench.tsv`` gives one row per image (the rater means of its ``answer``
    cell); its numbered rows are matched to ``records`` (``--data-dir``). Raises DataError for a
    file with no usable rating (never an empty table).
    """
    out = []
    for p in ratings:
        rows = tsv_rating_rows(p, records) if is_vlmevalkit_tsv(p) else read_rating_rows(p)
        if not any(getattr(r, d) is not None for r in rows for d in DIMENSIONS):
            raise DataError(Path(p), "no authenticity, aesthetics or fidelity score in any row", field="ratings")
        out.append(Source(name=f"humans: {Path(p).name}", rows=rows))
    out += [rows_from_run(Path(r)) for r in runs]
    return out
