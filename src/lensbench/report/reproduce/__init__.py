"""``lensbench reproduce PAPER RUN...``: does a set of runs reproduce a paper, table by table, figure by
figure, claim by claim?

The shared machinery lives here and never names a benchmark; each paper's artifacts, claims and
baselines are declared in its benchmark's folder (``benchmarks/<name>/reproduce.py``, read through
:meth:`lensbench.benchmarks.base.Benchmark.reproduction`) with :mod:`.spec`. Modules: :mod:`.spec`
(declarations), :mod:`.match` (run -> paper row), :mod:`.context` (runs, settings, comparability),
:mod:`.tables` (the one adapter to the unit tables), :mod:`.cells` (value, CI, verdict), :mod:`.grid`
(table artifacts), :mod:`.claims` (claim tests, Holm), :mod:`.stats`, :mod:`.accounting` (tokens,
latency, cost), :mod:`.necessity` (modality baselines), :mod:`.render_md`, :mod:`.plots`. The report over run folders is
built above the benchmarks (:func:`lensbench.views.reproduce.reproduce`, HTML: :mod:`lensbench.views.reproduce_html`).
"""

from lensbench.report.reproduce.model import (CONSISTENT, DIFFERS, INCONCLUSIVE, NOT_COMPARABLE, VERDICTS, Cell, Report,
                                              Section)
from lensbench.report.reproduce.spec import Baseline, Claim, Col, Custom, Grid, Paper, Row

__all__ = ["Paper", "Grid", "Custom", "Row", "Col", "Claim", "Baseline", "Report", "Section", "Cell",
           "CONSISTENT", "DIFFERS", "INCONCLUSIVE", "NOT_COMPARABLE", "VERDICTS"]
