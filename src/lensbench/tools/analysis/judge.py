"""``lensbench analyze judge``: judge noise. Re-judge a run's stored replies with a second judge and measure
how much the verdicts and the headline move.

Only the judge is called again, never the model: the run's model replies are exported from its store
(:func:`lensbench.runtime.export.export_records`) to ``RUN/analysis/judge-<name>/model-replies.jsonl``
and the benchmark is run again into ``RUN/analysis/judge-<name>/run`` with ``--model replay:`` that file
(same data folder, options, seed and generation settings as the run's manifest) and the second
``--judge-model``. That folder is an ordinary run folder: every judge call is stored there, and a second
``analyze judge`` resumes it instead of paying again. Benchmarks with a judge round: IF-Bench (the Fig. 11
answer parser, for replies that are not one letter) and GroundingME with best-of-N (the Sec. 5.2 pairwise
knockout judge).

Agreement (:func:`judge_noise`), on the records both runs scored (no ``error``) that a judge decided in
either run (a record with judge calls):

* the *verdict* of a record is what the judge decided: GroundingME best-of-N the selected candidate
  (``extra.selected_index``), otherwise the parsed answer (IF-Bench: the letter, ``None`` = F / unreadable);
* Cohen's kappa (Cohen 1960): ``(p_o - p_e) / (1 - p_e)`` over the verdict categories, with a percentile
  bootstrap CI resampling the benchmark's clusters (docs/protocol.md, general rules: IF-Bench the image; each record
  weighted by its cluster's count in the draw of :func:`lensbench.scoring.bootstrap.cluster_counts`);
* the records where the verdicts differ;
* the headline's change (second judge - first) as a paired cluster-bootstrap difference with a paired
  permutation p (:func:`lensbench.scoring.paired.paired_difference`), each run scored by its own records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lensbench.benchmarks.registry import get_benchmark
from lensbench.core.errors import ConfigError
from lensbench.core.jsonl import dumps_line
from lensbench.core.records import SampleRecord
from lensbench.core.writes import write_atomically
from lensbench.views.runs import iter_samples, read_manifest, read_run, run_tables
from lensbench.runtime.export import export_records
from lensbench.scoring.bootstrap import Design, cluster_counts, percentile_interval
from lensbench.scoring.paired import PairedResult, paired_difference
from lensbench.analysis.matrix import item_clusters

__all__ = ["rejudge_folder", "rejudge", "JudgeNoise", "judge_noise", "cohen_kappa", "verdict_of", "permutable"]

def permutable() -> list[str]:
    """The registered benchmarks whose judge can be shown its choices in another order
    (:attr:`~lensbench.benchmarks.base.Benchmark.judge_permutation`)."""
    from lensbench.benchmarks.registry import all_benchmarks

    return [n for n, c in all_benchmarks().items() if getattr(c, "judge_permutation", None)]


def rejudge_folder(run_dir: Path, judge_spec: str, name: str | None = None) -> Path:
    """``RUN/analysis/judge-<name>``: ``name`` (default the judge spec) with every character outside
    ``[A-Za-z0-9._-]`` replaced by ``-``."""
    return Path(run_dir) / "analysis" / ("judge-" + re.sub(r"[^A-Za-z0-9._-]+", "-", name or judge_spec).strip("-"))


def rejudge(run_dir: str | Path, judge_spec: str | None, *, permute: bool = False, name: str | None = None,
            judge_base_url: list[str] | None = None,
            judge_api_key_env: str = "OPENAI_API_KEY", judge_model_arg: list[str] | None = None,
            data_dir: Path | None = None, concurrency: int = 8, progress: bool = False, console=None) -> Path:
    """Re-judge ``run_dir``'s stored model replies with ``judge_spec`` (None: the run's own judge), with the
    choices shown in another order when ``permute`` (the benchmark's ``judge_permutation``); returns the new run folder (default
    name: the spec, plus ``-permuted``). Raises ConfigError (naming the folder) when it is no finished run, its
    benchmark has no judge round with its options, ``permute`` is asked where the protocol has no order to
    change, no judge is given or recorded, or its data folder is gone (give ``data_dir``)."""
    from lensbench.runtime.runner import run_benchmark
    from lensbench.runtime.settings import RunSettings

    run_dir = Path(run_dir)
    man = read_manifest(run_dir)
    if man is None:
        raise ConfigError(f"{run_dir}: no run.json (not a lensbench run folder)")
    cls = get_benchmark(str(man.get("benchmark")))
    options = dict(man.get("options") or {})
    if permute:
        if not getattr(cls, "judge_permutation", None):
            raise ConfigError(f"{run_dir}: --permute: {cls.name}'s judge sees no choices in an order that could be "
                              f"changed (permutable: {', '.join(permutable())})")
        key, value = cls.judge_permutation
        options[key] = value
    bench = cls(cls.Options(**options))
    if bench.judge_use() is None:
        raise ConfigError(f"{run_dir}: this {cls.name} run has no judge round to re-run ({bench.no_judge_reason()})")
    judge_spec = judge_spec or man.get("judge_spec")
    if not judge_spec:
        raise ConfigError(f"{run_dir}: run.json records no judge: give --judge-model")
    data = Path(data_dir or man.get("data_dir") or "")
    if not data.is_dir():
        raise ConfigError(f"{run_dir}: run.json 'data_dir' {str(data)!r} is not a folder: give --data-dir")
    folder = rejudge_folder(run_dir, judge_spec + ("-permuted" if permute else ""), name)
    folder.mkdir(parents=True, exist_ok=True)
    replies = folder / "model-replies.jsonl"
    lines = [dumps_line(r) + "\n" for r in export_records(run_dir)]
    if not lines:
        raise ConfigError(f"{run_dir}: its store holds no model replies to re-judge")
    write_atomically(replies, lambda fh: fh.write("".join(lines)))
    s = man.get("settings") or {}
    gen = man.get("generation_overrides") or {}
    settings = RunSettings(model=f"replay:{replies}", out=folder / "run", data_dir=data,
                           model_name=man.get("model_name"), judge_model=judge_spec,
                           judge_base_url=list(judge_base_url or []), judge_api_key_env=judge_api_key_env,
                           judge_model_arg=list(judge_model_arg or []), concurrency=concurrency,
                           limit=man.get("limit"), seed=int(man.get("seed") or 0), temperature=gen.get("temperature"),
                           max_tokens=gen.get("max_tokens"), top_p=gen.get("top_p"),
                           image_format=s.get("image_format", "auto"), image_max_side=s.get("image_max_side"),
                           shard=s.get("shard"), progress=progress)
    run_benchmark(bench, settings, console=console)
    return folder / "run"


def verdict_of(r: SampleRecord) -> str:
    """What the judge decided for record ``r``: best-of-N's selected candidate, else the parsed answer
    (``"None"`` when none was read)."""
    if isinstance(r.extra, dict) and r.extra.get("selected_index") is not None:
        return f"candidate {r.extra['selected_index']}"
    return str(r.answer)


def cohen_kappa(a: list[str], b: list[str], weights: np.ndarray | None = None) -> np.ndarray:
    """Cohen's kappa of two raters' labels ``a``, ``b`` (N each); ``weights``: (N,) or (B, N) non-negative
    record weights (a bootstrap draw) -> a scalar array or (B,). NaN where ``p_e == 1`` (one category only).
    Raises ValueError for lists of different length."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} and {len(b)} labels")
    cats = sorted(set(a) | set(b))
    pos = {c: i for i, c in enumerate(cats)}
    ha, hb = np.zeros((len(a), len(cats))), np.zeros((len(b), len(cats)))
    ha[np.arange(len(a)), [pos[x] for x in a]] = 1
    hb[np.arange(len(b)), [pos[x] for x in b]] = 1
    w = np.ones(len(a)) if weights is None else np.asarray(weights, float)
    tot = w.sum(axis=-1, keepdims=True)
    po = (w @ (ha * hb).sum(axis=1)) / tot[..., 0]
    pe = ((w @ ha) / tot * (w @ hb) / tot).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pe < 1, (po - pe) / np.where(pe < 1, 1 - pe, 1), np.nan)


@dataclass
class JudgeNoise:
    """The two judges compared: ``n`` records decided by a judge in either run, ``kappa`` ``(value, low, high)``,
    ``agreement`` (share of equal verdicts), ``disagreements`` ``[(sample_id, verdict 1, verdict 2, outcome 1,
    outcome 2)]``, ``headline`` the paired change of the headline (second - first), ``metric`` its name,
    ``design``, ``n_clusters``, ``judges`` (first, second)."""

    n: int
    kappa: tuple[float, float | None, float | None]
    agreement: float
    disagreements: list[tuple[str, str, str, str, str]]
    headline: PairedResult | None
    metric: str
    design: Design
    n_clusters: int
    judges: tuple[str, str]

    def to_json(self) -> dict[str, Any]:
        """JSON-able dict (an undefined kappa, e.g. one category only, is null)."""
        h = self.headline
        kappa = [None if v is None or np.isnan(v) else float(v) for v in self.kappa]
        return {"judges": list(self.judges), "n_judged": self.n, "kappa": kappa, "agreement": self.agreement,
                "design": self.design.to_json(), "n_clusters": self.n_clusters,
                "headline": None if h is None else {"metric": self.metric, "first": h.b, "second": h.a, "change": h.diff,
                                                    "low": h.low, "high": h.high, "p_value": h.p_value},
                "disagreements": [dict(zip(("sample_id", "first", "second", "outcome_first", "outcome_second"), d))
                                  for d in self.disagreements]}


def _judge_name(run_dir: Path) -> str:
    run = read_run(run_dir, with_records=False)
    extra = run.result.extra if run.result is not None else {}
    return str(extra.get("judge") or run.manifest.get("judge_spec") or "?")


def judge_noise(first: str | Path, second: str | Path, *, n_resamples: int = 2000, seed: int = 0,
                level: float = 0.95) -> JudgeNoise:
    """Compare the judge verdicts of run ``first`` with its re-judged copy ``second`` (module docstring).
    Raises ConfigError when either is no readable run or no record was decided by a judge."""
    ra = {r.sample_id: r for r in iter_samples(first)}
    rb = {r.sample_id: r for r in iter_samples(second)}
    ids = [i for i, r in ra.items() if i in rb and r.outcome != "error" and rb[i].outcome != "error"
           and (r.judge or rb[i].judge)]
    if not ids:
        raise ConfigError(f"{second}: no record was decided by a judge in either run (nothing to compare)")
    va, vb = [verdict_of(ra[i]) for i in ids], [verdict_of(rb[i]) for i in ids]
    run_a, run_b = read_run(first), read_run(second)
    ta, tb = next(iter(run_tables(run_a).values()), None), next(iter(run_tables(run_b).values()), None)
    clusters = item_clusters(ta, ids)
    design = Design(ta.cluster if ta is not None else "sample", n_resamples, seed, level)
    index: dict[str, int] = {}
    cl = np.array([index.setdefault(clusters[i], len(index)) for i in ids])
    k = float(cohen_kappa(va, vb))
    low = high = None
    if len(index) >= 2:
        w = cluster_counts(np.random.default_rng(seed), len(index), n_resamples)[:, cl]
        boot = cohen_kappa(va, vb, w)
        boot = boot[~np.isnan(boot)]
        if len(boot) >= 2:
            low, high = percentile_interval(boot, level)
    dis = [(i, x, y, ra[i].outcome, rb[i].outcome) for i, x, y in zip(ids, va, vb) if x != y]
    head = None
    if ta is not None and tb is not None:
        head = paired_difference(tb, ta, n_resamples=n_resamples, seed=seed, level=level)
    return JudgeNoise(len(ids), (k, low, high), float(np.mean([x == y for x, y in zip(va, vb)])), dis, head,
                      ta.metric if ta is not None else "?", design, len(index),
                      (_judge_name(Path(first)), _judge_name(Path(second))))


def to_markdown(noise: JudgeNoise, top: int = 30) -> str:
    """A short report: agreement, kappa with CI, the headline's paired change, the first ``top`` disagreements."""
    def ci(v: float | None, lo: float | None, hi: float | None, nd: int = 3) -> str:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return "-"
        return f"{v:.{nd}f}" + ("" if lo is None else f" [{lo:.{nd}f}, {hi:.{nd}f}]")

    h = noise.headline
    out = [f"# Judge noise: {noise.judges[0]} vs {noise.judges[1]}", "",
           f"{noise.n} replies decided by a judge in either run, over {noise.n_clusters} {noise.design.cluster} "
           f"clusters; {noise.design.describe()}.", "",
           f"- same verdict: {100 * noise.agreement:.1f}% ({noise.n - len(noise.disagreements)} of {noise.n})",
           f"- Cohen's kappa: {ci(*noise.kappa)}"]
    if h is not None:
        out.append(f"- {noise.metric} headline: {ci(h.b, None, None, 2)} (first judge) -> {ci(h.a, None, None, 2)} "
                   f"(second); change {ci(h.diff, h.low, h.high, 2)}, paired permutation p = "
                   + ("-" if h.p_value is None else f"{h.p_value:.3g}"))
    out += ["", f"## Disagreements ({len(noise.disagreements)}, first {min(top, len(noise.disagreements))})", "",
            "| sample | first judge | second judge | outcome (first) | outcome (second) |", "|---|---|---|---|---|"]
    out += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in noise.disagreements[:top]]
    return "\n".join(out) + "\n"
