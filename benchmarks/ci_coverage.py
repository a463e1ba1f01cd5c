"""Coverage of lensbench's 95% cluster-bootstrap CIs on RGB-Th-Bench's shape (issue 29: "the 95% CI covers 92.4%").

A seeded simulation. The design is the real benchmark's: 29 scenes (the resampled clusters), 14 skills,
each (scene, skill) unit with its own number of questions, read from
``../shared/data/RGB-Th-Bench/RGB-Th-Bench/Data`` (``--data``) when present, else 29 x 14 units of 4
questions (the release's 1,624 / 406). A simulated model answers question q of unit (scene i, skill c)
right with probability ``expit(b_c + s_i + u_ic + e_q)``: skill intercepts ``b_c`` (fixed, accuracies
between ~45% and ~90%), a strong scene effect ``s_i ~ N(0, --scene-sd)``, a unit effect ``u_ic ~ N(0,
--unit-sd)`` and a question effect ``e_q ~ N(0, --question-sd)`` (logit scale). The estimand is the
metric's expectation over scenes with this design: QAcc Overall = mean over skills of
``E[expit(b_c + x)]``, SAcc Overall = mean over skills of the units' ``E[P(all n questions right)]``,
computed by Gauss-Hermite quadrature (no simulation error).

Each of ``--replicates`` simulated runs is scored into lensbench's own unit tables (one row per scene,
which the cluster bootstrap sums to the same cluster sums) and three 95% intervals are drawn with
``--resamples`` resamples: ``percentile`` and ``bca`` (:func:`lensbench.scoring.bootstrap.bootstrap_ci`,
the library's code) and ``t`` (bootstrap-t, written here: each resample's standard error by
linearisation of the mean-of-ratios over clusters). Prints, per metric and method, the coverage (%, with
its Monte-Carlo standard error), the mean width, how often the truth fell below / above and how often a
bound was infinite (bootstrap-t, when a resample has no spread: a skill at 0% or 100%), then the method
closest to 95%. ``--per-skill``: the same for each skill's own CI (the per-skill rows of the report).

    python benchmarks/ci_coverage.py [--replicates 2000] [--resamples 2000] [--seed 20261128] [--per-skill]
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lensbench.scoring.bootstrap import UnitTable, bootstrap_ci, cluster_counts

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("LENSBENCH_SHARED_DATA", HERE.parent.parent / "shared" / "data")) / "RGB-Th-Bench" / \
    "RGB-Th-Bench" / "Data"
#: logit intercepts of the 14 skills (accuracies ~45% to ~90% at the mean scene)
SKILL_LOGITS = np.array([2.2, 1.4, 1.0, 0.6, 0.3, -0.2, 0.8, 0.0, 0.4, 1.2, 0.2, 1.6, 1.8, 0.9])
METHODS = ("percentile", "bca", "t")


@dataclass
class Shape:
    """The design: ``n_q`` (S, C) questions per (scene, skill) unit (0 = no unit); where it came from."""

    n_q: np.ndarray
    source: str


def real_shape(data: Path = DATA) -> Shape:
    """RGB-Th-Bench's 29 x 14 design (the paper's 14 skills) from the release, else 29 x 14 x 4 questions."""
    if data.is_dir():
        from lensbench.benchmarks.rgbth.data import PAPER_ABBREVS, load_units

        units = [u for u in load_units(data, skip_missing=True) if not u.extra]
        scenes = list(dict.fromkeys(u.scene_key for u in units))
        n_q = np.zeros((len(scenes), len(PAPER_ABBREVS)), int)
        for u in units:
            n_q[scenes.index(u.scene_key), PAPER_ABBREVS.index(u.abbrev)] = len(u.qas)
        return Shape(n_q, f"{data} ({len(scenes)} scenes, {len(units)} units, {int(n_q.sum())} questions)")
    return Shape(np.full((29, 14), 4), "29 scenes x 14 skills x 4 questions (release absent)")


def truth(shape: Shape, scene_sd: float, unit_sd: float, question_sd: float) -> dict[str, float]:
    """The estimands (percent): QAcc and SAcc Overall, the mean over skills of each skill's expected value;
    ``"QAcc/skill<j>"``, ``"SAcc/skill<j>"``: each skill's own."""
    gx, gw = np.polynomial.hermite_e.hermegauss(60)
    gw = gw / gw.sum()
    x = gx * np.hypot(scene_sd, unit_sd)  # scene + unit effect, one normal
    e = gx * question_sd
    q_acc, s_acc = [], []
    for c, b in enumerate(SKILL_LOGITS):
        g = (1.0 / (1.0 + np.exp(-(b + x[:, None] + e[None, :])))) @ gw  # E over the question effect, per x
        q_acc.append(float(g @ gw))
        sizes = shape.n_q[:, c][shape.n_q[:, c] > 0]
        s_acc.append(float(np.mean([(g ** n) @ gw for n in sizes])))
    out = {"QAcc": 100 * float(np.mean(q_acc)), "SAcc": 100 * float(np.mean(s_acc))}
    for j, (q, s_) in enumerate(zip(q_acc, s_acc)):
        out[f"QAcc/skill{j}"], out[f"SAcc/skill{j}"] = 100 * q, 100 * s_
    return out


def simulate(shape: Shape, rng: np.random.Generator, scene_sd: float, unit_sd: float,
             question_sd: float) -> dict[str, UnitTable]:
    """One simulated run as lensbench's QAcc and SAcc tables (one row per scene: its sums per skill)."""
    s, c = shape.n_q.shape
    logit = SKILL_LOGITS[None, :] + rng.normal(0, scene_sd, (s, 1)) + rng.normal(0, unit_sd, (s, c))
    qn, sn = np.zeros((s, c)), np.zeros((s, c))
    n_max = int(shape.n_q.max())
    p = 1.0 / (1.0 + np.exp(-(logit[..., None] + rng.normal(0, question_sd, (s, c, n_max)))))
    right = (rng.random((s, c, n_max)) < p) & (np.arange(n_max) < shape.n_q[..., None])
    qn[:] = right.sum(-1)
    sn[:] = (right.sum(-1) == shape.n_q) & (shape.n_q > 0)
    cols = [f"skill{j}" for j in range(c)]
    scenes = [f"scene{i}" for i in range(s)]
    cats = {"Overall": list(range(c)), **{col: [j] for j, col in enumerate(cols)}}
    mk = lambda m, n, d: UnitTable(m, scenes, cols, n, d, np.zeros(c, int), scenes, "scene", "macro", cats)
    return {"QAcc": mk("QAcc", qn, shape.n_q.astype(float)), "SAcc": mk("SAcc", sn, (shape.n_q > 0).astype(float))}


def bootstrap_t(table: UnitTable, n_resamples: int, seed: int, level: float = 0.95,
                category: str = "Overall") -> tuple[float, float]:
    """Bootstrap-t interval (percent) of a one-group macro table's category: t* = (theta* - theta) / se*, se by
    linearisation over clusters (``sum_k w_k l_k^2`` with ``l_k = mean_c (N_kc - r_c D_kc) / D_c``, K/(K-1)).
    A resample with se* = 0 away from theta gives t* = +-inf, and then an infinite bound."""
    _ids, n, d = table.cluster_sums()
    cols = table.categories[category]
    n, d = n[:, cols], d[:, cols]
    k, c = n.shape

    def est_se(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nt, dt = w @ n, w @ d                         # (B, C) resampled column totals
        r = nt / dt
        theta = r.mean(-1)
        lin = (n[None, :, :] - r[:, None, :] * d[None, :, :]) / dt[:, None, :]  # (B, K, C)
        lk = lin.mean(-1)                                                       # (B, K)
        return theta, np.sqrt(k / (k - 1) * (w * lk ** 2).sum(-1))

    th, se = est_se(np.ones((1, k)))
    w = cluster_counts(np.random.default_rng(seed), k, n_resamples)
    tb, seb = est_se(w)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(seb > 0, (tb - th[0]) / seb, np.where(tb == th[0], 0.0, np.sign(tb - th[0]) * np.inf))
    a = (1 - level) / 2
    with np.errstate(invalid="ignore"):
        lo_q, hi_q = np.quantile(t, [a, 1 - a])
        return 100 * float(th[0] - hi_q * se[0]), 100 * float(th[0] - lo_q * se[0])


def coverage(shape: Shape, *, replicates: int, resamples: int, seed: int, scene_sd: float = 1.0,
             unit_sd: float = 0.5, question_sd: float = 0.5, methods: tuple[str, ...] = METHODS,
             per_skill: bool = False) -> dict:
    """``{"truth": {metric: %}, metric: {method: {"cover", "below", "above", "width", "infinite"}}, "estimates":
    {metric: [...]}}``: shares in percent over ``replicates`` seeded runs (``seed``: the simulation; resample
    seeds run on from it). ``per_skill``: the metrics ``"QAcc per skill"`` / ``"SAcc per skill"`` instead,
    pooled over the 14 skills' own CIs (their truths: ``truth()``'s ``"<metric>/skill<j>"``)."""
    tr = truth(shape, scene_sd, unit_sd, question_sd)
    rng = np.random.default_rng(seed)
    names = [f"{m} per skill" if per_skill else m for m in ("QAcc", "SAcc")]
    hits = {m: {k: np.zeros(4) for k in methods} for m in names}
    width = {m: {k: 0.0 for k in methods} for m in names}
    est: dict[str, list[float]] = {m: [] for m in names}
    n_cells = 0
    for rep in range(replicates):
        tables = simulate(shape, rng, scene_sd, unit_sd, question_sd)
        for name, (m, t) in zip(names, tables.items()):
            cats = [c for c in t.categories if c != "Overall"] if per_skill else ["Overall"]
            est[name].append(float(t.value()))
            for cat in cats:
                truth_c = tr[m if cat == "Overall" else f"{m}/{cat}"]
                n_cells += name == names[0]
                for k in methods:
                    if k == "t":
                        lo, hi = bootstrap_t(t, resamples, seed + rep, category=cat)
                    else:
                        iv = bootstrap_ci(t, cat, n_resamples=resamples, seed=seed + rep, method=k, min_clusters=2)
                        lo, hi = iv.low, iv.high
                    hits[name][k] += [lo <= truth_c <= hi, truth_c < lo, truth_c > hi,
                                      not (np.isfinite(lo) and np.isfinite(hi))]
                    width[name][k] += hi - lo if np.isfinite(hi - lo) else 0.0
    out: dict = {"truth": tr, "estimates": est, "cells": n_cells}
    for m in names:
        out[m] = {k: {"cover": 100 * hits[m][k][0] / n_cells, "below": 100 * hits[m][k][1] / n_cells,
                      "above": 100 * hits[m][k][2] / n_cells, "infinite": 100 * hits[m][k][3] / n_cells,
                      "width": width[m][k] / max(1, n_cells - hits[m][k][3])}
                  for k in methods}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--scene-sd", type=float, default=1.0)
    ap.add_argument("--unit-sd", type=float, default=0.5)
    ap.add_argument("--question-sd", type=float, default=0.5)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--per-skill", action="store_true", help="each skill's own CI (14 per run) instead of Overall")
    ns = ap.parse_args()
    shape = real_shape(ns.data)
    t0 = time.perf_counter()
    res = coverage(shape, replicates=ns.replicates, resamples=ns.resamples, seed=ns.seed, scene_sd=ns.scene_sd,
                   unit_sd=ns.unit_sd, question_sd=ns.question_sd, per_skill=ns.per_skill)
    print(f"design: {shape.source}; scene sd {ns.scene_sd}, unit sd {ns.unit_sd}, question sd {ns.question_sd} "
          f"(logit); {ns.replicates} replicates x {ns.resamples} resamples, seed {ns.seed}")
    mc = 100 * np.sqrt(0.95 * 0.05 / res["cells"])
    indep = " if independent" if ns.per_skill else ""
    for m in [k for k in res if k.startswith(("QAcc", "SAcc"))]:
        base = m.split()[0]
        sd = float(np.std(res["estimates"][m]))
        print(f"{m}{'' if ns.per_skill else ' Overall'}: {res['cells']} intervals; Overall truth "
              f"{res['truth'][base]:.2f}, estimates mean {np.mean(res['estimates'][m]):.2f} sd {sd:.2f}")
        for k, r in res[m].items():
            print(f"  {k:10s} coverage {r['cover']:5.1f}% (MC se {mc:.1f}{indep})  truth below {r['below']:4.1f}%  "
                  f"above {r['above']:4.1f}%  mean width {r['width']:.2f}  infinite bound {r['infinite']:.1f}%")
        best = min(res[m], key=lambda k: abs(res[m][k]["cover"] - 95))
        print(f"  closest to 95%: {best}")
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
