"""A two-parameter logistic (2PL) item response model, fitted by marginal maximum likelihood with scipy.

Model (Birnbaum 1968): run i has ability ``theta_i ~ N(0, 1)``; item j is answered right with
``P(x_ij = 1 | theta) = 1 / (1 + exp(-(a_j theta + c_j)))``; discrimination ``a_j``, difficulty
``b_j = -c_j / a_j`` (the ability at which P = 1/2). Marginal likelihood (Bock & Aitkin 1981): theta is
integrated out on a fixed grid of :data:`N_NODES` equally spaced nodes on [-:data:`GRID`, +GRID] with
N(0, 1) weights (a rectangle rule: a run answers hundreds of items, so its posterior over theta is
narrow, and Gauss-Hermite's few wide-spaced nodes would snap every ability onto one node); missing cells (NaN) drop out of the product. With a few runs (an LLM benchmark has tens of models, not
thousands of examinees) an item every run answers right has no finite maximum, so weak Gaussian priors
are added (marginal maximum a posteriori, Mislevy 1986): ``a_j ~ N(1, 1)``, ``c_j ~ N(0, 2^2)``; the
prior mean of ``a`` also fixes the sign of the scale (abilities grow with proportion correct). The
objective and its exact gradient go to ``scipy.optimize.minimize(method="L-BFGS-B")``. Abilities are
EAP estimates (posterior means over the nodes).

Why not a library: of the maintained IRT packages, ``girth`` (MML, numpy/scipy) and ``py-irt`` (pyro,
variational) are not installed in lensbench's environment and the machines that run it are offline;
this is the textbook estimator in ~60 lines, checked in tests/analysis against simulated data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lensbench.core.extras import require

__all__ = ["TwoPL", "fit_2pl", "N_NODES", "GRID", "PRIOR_A", "PRIOR_C"]

#: nodes of the ability grid, and its half-width (ability units)
N_NODES = 161
GRID = 4.0
#: prior (mean, sd) of the discrimination a_j and of the intercept c_j
PRIOR_A = (1.0, 0.5)
PRIOR_C = (0.0, 2.0)


@dataclass(frozen=True)
class TwoPL:
    """A fitted 2PL: ``a`` (I,) discriminations, ``b`` (I,) difficulties (ability units; NaN where
    ``a`` is 0), ``c`` (I,) intercepts, ``theta`` (R,) EAP abilities, ``converged`` and ``message``
    from the optimiser, ``n_iter`` its iterations, ``neg_log_post`` the final objective."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    theta: np.ndarray
    converged: bool
    message: str
    n_iter: int
    neg_log_post: float


def fit_2pl(x: np.ndarray, n_nodes: int = N_NODES, max_iter: int = 500) -> TwoPL:
    """Fit the 2PL of the module docstring to an (I, R) matrix of 1.0 / 0.0 / NaN (items x runs).

    Deterministic (fixed start: ``a = 1``, ``c`` = logit of the item's smoothed proportion correct).
    Raises ValueError for an empty matrix, MissingExtraError without scipy.
    """
    opt = require("scipy.optimize", "stats", "the 2PL item response model")
    x = np.asarray(x, float)
    if x.ndim != 2 or 0 in x.shape:
        raise ValueError(f"need a non-empty (items, runs) matrix, got shape {x.shape}")
    n_items = x.shape[0]
    m = (~np.isnan(x)).astype(float)            # (I, R) observed
    y = np.where(m > 0, x, 0.0)                 # (I, R)
    nodes = np.linspace(-GRID, GRID, n_nodes)
    logw = -0.5 * nodes ** 2
    logw -= np.log(np.exp(logw).sum())          # N(0, 1) weights on the grid
    (ma, sa), (mc, sc) = PRIOR_A, PRIOR_C

    def parts(params: np.ndarray):
        a, c = params[:n_items], params[n_items:]
        z = a[:, None] * nodes[None, :] + c[:, None]            # (I, Q)
        log_p, log_q = -np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)
        # per run and node: sum over observed items of the log-likelihood, (R, Q)
        ll = y.T @ log_p + (m - y).T @ log_q
        joint = ll + logw[None, :]
        top = joint.max(axis=1, keepdims=True)
        lse = top[:, 0] + np.log(np.exp(joint - top).sum(axis=1))
        post = np.exp(joint - lse[:, None])                      # (R, Q) posterior over nodes
        return a, c, z, lse, post

    def objective(params: np.ndarray) -> tuple[float, np.ndarray]:
        a, c, z, lse, post = parts(params)
        p = 1.0 / (1.0 + np.exp(-z))                             # (I, Q)
        # d/dz of sum_i log L_i: sum_r post[r, q] * (y_jr - m_jr * p_jq)
        resid = y @ post - p * (m @ post)                        # (I, Q)
        g_a = (resid * nodes[None, :]).sum(axis=1) - (a - ma) / sa ** 2
        g_c = resid.sum(axis=1) - (c - mc) / sc ** 2
        prior = ((a - ma) ** 2).sum() / (2 * sa ** 2) + ((c - mc) ** 2).sum() / (2 * sc ** 2)
        return float(-lse.sum() + prior), -np.concatenate([g_a, g_c])

    n_obs = m.sum(axis=1)
    p0 = (y.sum(axis=1) + 0.5) / (n_obs + 1.0)
    start = np.concatenate([np.ones(n_items), np.log(p0 / (1 - p0))])
    res = opt.minimize(objective, start, jac=True, method="L-BFGS-B", options={"maxiter": max_iter, "ftol": 1e-12, "gtol": 1e-7})
    a, c, _z, _lse, post = parts(res.x)
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(a != 0, -c / a, np.nan)
    return TwoPL(a, b, c, post @ nodes, bool(res.success), str(res.message), int(res.nit), float(res.fun))
