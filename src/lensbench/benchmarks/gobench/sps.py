"""GOBench scores: Optical Authenticity from the five answers, and the Scaled Proximity Score.

* Optical Authenticity (paper Sec. 2.2): Yes 1 / No 0 / Cannot determine 0.5, summed (0-5).
* Scaled Proximity Score (Sec. 2.3, Eq. 1): ``SPS = 1 - |S_mllm - S_gt| / delta_max`` when the
  difference is at most ``delta_max`` (0.5), else 0; averaged per dimension (Table 3).
  VLMEvalKit computes the same ``max(0, (0.5 - diff) / 0.5)`` (``vlmeval/dataset/gobench.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from lensbench.benchmarks.gobench.records import DELTA_MAX, POINTS

__all__ = ["authenticity_score", "sps"]


def authenticity_score(answers: Sequence[str]) -> float:
    """Optical Authenticity (Sec. 2.2): sum of Yes 1 / No 0 / Cannot determine 0.5; 0-5 for 5 answers.

    Raises KeyError for an answer outside :data:`ANSWERS`.
    """
    return float(sum(POINTS[a] for a in answers))


def sps(s_model: float, s_gt: float, delta_max: float = DELTA_MAX) -> float:
    """Scaled Proximity Score of one case (Eq. 1): ``1 - |d| / delta_max`` if ``|d| <= delta_max`` else 0.

    Range [0, 1]. ``delta_max`` > 0 (raises ValueError otherwise). A difference within 1e-9 of
    ``delta_max`` counts as equal (floating-point means of raters).
    """
    if delta_max <= 0:
        raise ValueError(f"delta_max must be > 0, got {delta_max}")
    d = abs(float(s_model) - float(s_gt))
    if d > delta_max + 1e-9:
        return 0.0
    return max(0.0, 1.0 - d / delta_max)
