"""Item analysis over many runs of one benchmark, the computation (issue 34), at the views layer so both
``lensbench analyze items`` (:mod:`lensbench.tools.analysis`) and the viewer's Items tab use it.

:mod:`.matrix` (runs -> item x run scores), :mod:`.classical` (difficulty, point-biserial), :mod:`.irt` (2PL),
:mod:`.flags` (suspect items), :mod:`.impact` (headline / ranking without them, smaller subset), :mod:`.items`
(the report and its writers). See docs/analysis.md.
"""
