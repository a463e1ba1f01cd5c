"""Defaults of the statistics that the command line shows in its help (kept free of numpy, so that
``lensbench --help`` does not import it)."""

__all__ = ["DEFAULT_RESAMPLES", "MARGIN_POINTS"]

#: bootstrap resamples of every CI and p-value (the same in report, view, compare and reproduce)
DEFAULT_RESAMPLES = 2000
#: equivalence margin of reproduce's 'consistent' verdict, in points of a percentage
MARGIN_POINTS = 2.0
