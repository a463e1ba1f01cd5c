"""Is the benchmark sound? ``lensbench analyze``: item analysis over many runs and judge noise (issue 34).

The item analysis computation lives in :mod:`lensbench.analysis` (views layer, shared with the viewer's Items
tab); here: :mod:`.judge` (re-judge a run's stored replies, Cohen's kappa) and :mod:`.cli`. See docs/analysis.md.
"""
