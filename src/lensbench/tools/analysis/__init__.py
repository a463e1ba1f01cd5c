"""Is the benchmark sound? ``lensbench analyze``: item analysis over many runs and judge noise (issue 34).

:mod:`.matrix` (runs -> item x run scores), :mod:`.classical` (difficulty, point-biserial), :mod:`.irt` (2PL),
:mod:`.flags` (suspect items), :mod:`.impact` (headline / ranking without them, smaller subset), :mod:`.items`
(the report and its writers), :mod:`.judge` (re-judge a run's stored replies, Cohen's kappa), :mod:`.cli`.
See docs/analysis.md.
"""
