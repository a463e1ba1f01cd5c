"""Error rates of ``lensbench reproduce``'s verdict rule on the real RGB-Th-Bench structure (issue 29).

Model (one simulated "evaluation" of one model): 29 scenes x 14 skills with the real question counts of
each (scene, skill) unit (read from ``../shared/data/RGB-Th-Bench/RGB-Th-Bench/Data`` when present, else
the generated shape 29 x 14 x 4); question ``q`` of unit ``(s, k)`` is right with probability
``sigmoid(mu_k + a_s + b_sk + delta)``: ``mu_k`` the skill's level (RGB-Txt skills 80%, RGB-Th-Txt 63%,
spread +-0.3 on the logit), ``a_s ~ N(0, sigma_scene)`` a scene effect, ``b_sk ~ N(0, sigma_unit)`` a unit
effect, questions Bernoulli given the unit. The paper's value and the run are two independent draws of
the whole hierarchy (the population the cluster variance estimates; with the same items in both the true
difference varies less, so the 'differs' rate below is an upper bound). ``delta`` shifts the run: chosen
per Table 3 cell so that the cell's expected value moves by the stated points (3, 4 or 10; sign at random).

The rule is the library's: :func:`lensbench.scoring.agreement.agreement` per cell (two-estimate test,
TOST at the margin) and :func:`lensbench.report.reproduce.cells.decide` (Holm over the table's 6 cells).
Printed: for a perfect replication, the rate of 'differs' per cell and per table (any of the 6 cells;
goal <= 5%) and the rate of 'consistent'; for a run 3 and 4 points away at margin 2, the rate of
'consistent' for the shifted cell (goal <= 5%); for 10 points, the power to call 'differs'; and, for
comparison, the old rule (the paper's value outside our 95% percentile bootstrap CI = 'differs').

    python benchmarks/reproduce_verdicts.py [--reps 1000] [--shift-reps 100] [--seed 20261128] [--margin 2]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from lensbench.benchmarks.rgbth.data import RGB_TH_TXT, RGB_TXT, SKILLS, load_units
from lensbench.report.reproduce.cells import decide
from lensbench.scoring.agreement import MARGIN_POINTS, agreement
from lensbench.scoring.bootstrap import UnitTable, bootstrap_ci

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("LENSBENCH_SHARED_DATA", HERE.parent.parent / "shared" / "data"))
DATA_DIR = DATA / "RGB-Th-Bench" / "RGB-Th-Bench" / "Data"
ABBREVS = [a for a, _g in SKILLS.values()]
GROUP = {a: g for a, g in SKILLS.values()}
CELLS = [(g, m) for g in (RGB_TXT, RGB_TH_TXT, "Overall") for m in ("QAcc", "SAcc")]
LEVEL = {RGB_TXT: 0.80, RGB_TH_TXT: 0.63}
WIDE = 5.0  # a wider margin, to show what it costs


def real_shape(data_dir: Path | None = DATA_DIR) -> tuple[list[tuple[int, int, int]], str]:
    """``([(scene index, skill column, questions)], source)``: the paper's 14 skills of the release when
    ``data_dir`` holds it, else 29 scenes x 14 skills x 4 questions."""
    if data_dir is not None and data_dir.is_dir():
        units = load_units(data_dir, skip_missing=True)
        scenes = list(dict.fromkeys(u.scene_key for u in units))
        out = [(scenes.index(u.scene_key), ABBREVS.index(u.abbrev), len(u.qas)) for u in units if not u.extra]
        return out, f"the release ({len(scenes)} scenes, {sum(q for *_x, q in out)} questions)"
    return [(s, k, 4) for s in range(29) for k in range(14)], "the generated shape (29 x 14 x 4)"


class Sim:
    """The model of the module docstring on one shape; :meth:`draw` gives one evaluation's tables."""

    def __init__(self, shape: list[tuple[int, int, int]], sigma_scene: float, sigma_unit: float, seed: int):
        self.rng = np.random.default_rng(seed)
        self.unit_scene = np.array([s for s, _k, _q in shape])
        self.unit_col = np.array([k for _s, k, _q in shape])
        self.q_unit = np.repeat(np.arange(len(shape)), [q for *_x, q in shape])
        self.n_scenes = int(self.unit_scene.max()) + 1
        spread = np.linspace(-0.3, 0.3, 7)
        self.mu = np.array([np.log(LEVEL[GROUP[a]] / (1 - LEVEL[GROUP[a]])) + spread[i % 7]
                            for i, a in enumerate(ABBREVS)])
        self.sigma_scene, self.sigma_unit = sigma_scene, sigma_unit
        cats = {"Overall": list(range(14)), **{g: [i for i, a in enumerate(ABBREVS) if GROUP[a] == g]
                                               for g in (RGB_TXT, RGB_TH_TXT)}}
        self.cats = cats
        eye = np.eye(14)
        self.q_den = eye[self.unit_col[self.q_unit]]
        self.u_den = eye[self.unit_col]
        self.q_clusters = [str(s) for s in self.unit_scene[self.q_unit]]
        self.u_clusters = [str(s) for s in self.unit_scene]
        self.q_ids = [str(i) for i in range(len(self.q_unit))]
        self.u_ids = [str(i) for i in range(len(self.unit_scene))]

    def _probs(self, delta: float, n: int | None = None) -> np.ndarray:
        """Question probabilities, shape (n or 1, Q)."""
        m = 1 if n is None else n
        a = self.rng.normal(0, self.sigma_scene, (m, self.n_scenes))
        b = self.rng.normal(0, self.sigma_unit, (m, len(self.unit_scene)))
        logit = self.mu[self.unit_col] + a[:, self.unit_scene] + b + delta
        return 1 / (1 + np.exp(-logit[:, self.q_unit]))

    def draw(self, delta: float = 0.0) -> dict[str, UnitTable]:
        """One evaluation: ``{"QAcc": table, "SAcc": table}`` built as the benchmark's unit tables are."""
        hit = (self.rng.random(len(self.q_unit)) < self._probs(delta)[0]).astype(float)
        unit_all = np.ones(len(self.unit_scene))
        np.minimum.at(unit_all, self.q_unit, hit)
        q = UnitTable("QAcc", self.q_ids, ABBREVS, self.q_den * hit[:, None], self.q_den, np.zeros(14, int),
                      self.q_clusters, "scene", "macro", self.cats)
        s = UnitTable("SAcc", self.u_ids, ABBREVS, self.u_den * unit_all[:, None], self.u_den, np.zeros(14, int),
                      self.u_clusters, "scene", "macro", self.cats)
        return {"QAcc": q, "SAcc": s}

    def expected_grid(self, n: int = 200) -> tuple[np.ndarray, dict[tuple[str, str], np.ndarray]]:
        """``(deltas, {cell: expected value (%) at each delta})`` over ``n`` fixed effect draws (seed 12345),
        deltas -3 .. 3 (logit) by 0.05; a unit's all-right probability is the product of its questions'."""
        rng = np.random.default_rng(12345)
        a = rng.normal(0, self.sigma_scene, (n, self.n_scenes))
        b = rng.normal(0, self.sigma_unit, (n, len(self.unit_scene)))
        logit = (self.mu[self.unit_col] + a[:, self.unit_scene] + b)[:, self.q_unit]
        starts = np.flatnonzero(np.r_[True, np.diff(self.q_unit) != 0])
        q_onehot, u_onehot = self.q_den / self.q_den.sum(axis=0), self.u_den / self.u_den.sum(axis=0)
        deltas = np.round(np.arange(-3.0, 3.0001, 0.05), 4)
        out: dict[tuple[str, str], list[float]] = {c: [] for c in CELLS}
        for d in deltas:
            p = 1 / (1 + np.exp(-(logit + d)))
            q_skill = (p @ q_onehot).mean(axis=0)
            s_skill = (np.exp(np.add.reduceat(np.log(p), starts, axis=1)) @ u_onehot).mean(axis=0)
            for g, m in CELLS:
                out[(g, m)].append(100 * float((q_skill if m == "QAcc" else s_skill)[self.cats[g]].mean()))
        return deltas, {c: np.array(v) for c, v in out.items()}

    def shift_for(self, cell: tuple[str, str], points: float) -> float:
        """The logit shift moving ``cell``'s expected value by ``points`` (interpolated on :meth:`expected_grid`)."""
        if not hasattr(self, "_grid"):
            self._grid = self.expected_grid()
        deltas, vals = self._grid
        v = vals[cell]
        base = float(np.interp(0.0, deltas, v))
        return float(np.interp(base + points, v, deltas))


def table_verdicts(run: dict[str, UnitTable], paper: dict[str, UnitTable], margin: float,
                   reach: list | None = None) -> list[str]:
    """The rule's verdicts of the 6 Table 3 cells of ``run`` against ``paper``'s values (one Holm family);
    ``reach``: gets each cell's smallest margin that would make it consistent (max |TOST interval end|)."""
    res = [agreement(run[m], g, paper[m].value(g), margin_points=margin) for g, m in CELLS]
    tested = [r for r in res if not isinstance(r, str)]
    verdicts, _adj = decide([r.equivalent for r in tested], [r.p for r in tested])
    if reach is not None:
        reach.append([max(abs(r.low), abs(r.high)) if not isinstance(r, str) else np.inf for r in res])
    it = iter(verdicts)
    return [next(it) if not isinstance(r, str) else "not comparable" for r in res]


def old_rule(run: dict[str, UnitTable], paper: dict[str, UnitTable], b: int, seed: int) -> list[bool]:
    """The rule before issue 29: 'differs' when the paper's value lies outside our 95% bootstrap CI."""
    out = []
    for g, m in CELLS:
        iv = bootstrap_ci(run[m], g, n_resamples=b, seed=seed)
        out.append(not (iv.low - 0.005 <= paper[m].value(g) <= iv.high + 0.005))
    return out


def simulate(sim: Sim, reps: int, shift_reps: int, margin: float = MARGIN_POINTS, old_b: int = 0) -> dict:
    """Every figure of the module docstring as a dict (rates in [0, 1])."""
    differs = np.zeros(len(CELLS))
    consistent = np.zeros(len(CELLS))
    any_differs = 0
    old = np.zeros(len(CELLS))
    old_any = 0
    reach: list = []
    for i in range(reps):
        paper, run = sim.draw(), sim.draw()
        v = table_verdicts(run, paper, margin, reach)
        differs += [x == "differs" for x in v]
        consistent += [x == "consistent" for x in v]
        any_differs += "differs" in v
        if old_b:
            o = old_rule(run, paper, old_b, i)
            old += o
            old_any += any(o)
    out = {"reps": reps, "differs_cell": differs / reps, "differs_table": any_differs / reps,
           "consistent_cell": consistent / reps, "old_differs_cell": old / reps if old_b else None,
           "old_differs_table": old_any / reps if old_b else None,
           "margin_needed": np.median(np.array(reach), axis=0) if reps else None}
    for points in (3.0, 4.0, 10.0):
        cons, diff, wide = np.zeros(len(CELLS)), np.zeros(len(CELLS)), np.zeros(len(CELLS))
        for j, cell in enumerate(CELLS):
            shifts = {s: sim.shift_for(cell, s * points) for s in (1, -1)}
            g, m = cell
            for r in range(shift_reps):
                paper, run = sim.draw(), sim.draw(shifts[1 if r % 2 == 0 else -1])
                if points < 10:  # TOST is per cell (no multiplicity step): only the shifted cell is needed
                    res = agreement(run[m], g, paper[m].value(g), margin_points=margin)
                    cons[j] += not isinstance(res, str) and res.equivalent
                    wide[j] += not isinstance(res, str) and max(abs(res.low), abs(res.high)) <= WIDE
                    continue
                v = table_verdicts(run, paper, margin)[j]
                cons[j] += v == "consistent"
                diff[j] += v == "differs"
        out[f"consistent_{points:g}"] = cons / shift_reps
        out[f"differs_{points:g}"] = diff / shift_reps
        out[f"wide_{points:g}"] = wide / shift_reps
    return out


def _row(name: str, rates) -> str:
    return f"{name:<44}" + "".join(f"{100 * x:>9.1f}" for x in rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1000, help="perfect replications")
    ap.add_argument("--shift-reps", type=int, default=100, help="replicates per cell and shift")
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--sigma-scene", type=float, default=0.25, help="scene effect SD, logit")
    ap.add_argument("--sigma-unit", type=float, default=0.8, help="unit (scene x skill) effect SD, logit")
    ap.add_argument("--margin", type=float, default=MARGIN_POINTS)
    ap.add_argument("--old-resamples", type=int, default=300, help="bootstrap resamples of the old rule (0: skip)")
    a = ap.parse_args()
    t0 = time.perf_counter()
    shape, source = real_shape()
    sim = Sim(shape, a.sigma_scene, a.sigma_unit, a.seed)
    r = simulate(sim, a.reps, a.shift_reps, a.margin, a.old_resamples)
    se = {f"{g} {m}": float(np.std([agreement(sim.draw()[m], g, 0.0) .diff for _ in range(200)]))
          for g, m in CELLS}
    print(f"shape: {source}; sigma_scene {a.sigma_scene}, sigma_unit {a.sigma_unit} (logit); margin {a.margin:g} "
          f"points; seed {a.seed}; {a.reps} perfect replications, {a.shift_reps} per cell and shift")
    short = {RGB_TXT: "RGB", RGB_TH_TXT: "Th", "Overall": "All"}
    print(f"{'% of cells (Table 3)':<44}" + "".join(f"{short[g] + ' ' + m:>9}" for g, m in CELLS))
    print(_row("SD of one evaluation (points)", [se[f'{g} {m}'] / 100 for g, m in CELLS]))
    print(_row("perfect replication: differs", r["differs_cell"]))
    print(_row("perfect replication: consistent", r["consistent_cell"]))
    if r["old_differs_cell"] is not None:
        print(_row("perfect replication: differs (old rule)", r["old_differs_cell"]))
    print(_row("margin a perfect replication needs (median)", r["margin_needed"] / 100))
    for p in (3, 4):
        print(_row(f"{p} points away: consistent (margin {a.margin:g})", r[f"consistent_{p}"]))
    for p in (3, 4):
        print(_row(f"{p} points away: consistent (margin {WIDE:g})", r[f"wide_{p}"]))
    print(_row("10 points away: differs (power)", r["differs_10"]))
    print(f"perfect replication, Table 3 (6 cells, Holm): differs in {100 * r['differs_table']:.1f}% of tables"
          + (f" (old rule: {100 * r['old_differs_table']:.1f}%)" if r["old_differs_table"] is not None else ""))
    print(f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
