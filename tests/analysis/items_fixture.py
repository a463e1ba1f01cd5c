"""Synthetic RGB-Th-Bench run folders with known response patterns, in the benchmark's own record shape.

12 scenes x 3 skills x 4 questions = 144 items; run k (0..15) has ability k / 15 and answers item j right
iff ``u_j < 0.3 + 0.7 * ability`` (``u_j`` uniform on [0, 0.9), seed 0: every item but the planted
ones is answered by at least 2 of the 8 capable runs), except for the planted defects:

* ``Source 1/S0/Scene/0`` and ``/1`` ask the same question of the same image with keys Yes and No
  (a contradictory duplicate);
* ``Source 1/S1/ObjPr/2``: every run answers "Yes", the key is "No" (mis-keyed: no run is right);
* ``Source 1/S2/Attr/3``: only the six weakest of the 16 runs are right (correctness falls with ability; no capable
  run is right, so it is also unanswered and a key suspect).
A blind run (``--input blind``) is right on ``Source 1/S3/Scene/0`` only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lensbench.benchmarks.rgbth.data import RGB_TXT, SKILLS
from lensbench.core.records import SampleRecord
from lensbench.testing.runs import write_run

SKILL = {"Scene": "Scene Understanding", "ObjPr": "Detailed Object Presence", "Attr": "Instance Attributes"}
N_SCENES, N_Q, N_RUNS = 12, 4, 16
DUP = ("Source 1/S0/Scene/0", "Source 1/S0/Scene/1")
MISKEYED = "Source 1/S1/ObjPr/2"
FALLS = "Source 1/S2/Attr/3"
BLIND_RIGHT = "Source 1/S3/Scene/0"


def items() -> list[tuple[str, str, str, int]]:
    """``[(item id, scene, abbrev, question index)]`` in a fixed order."""
    return [(f"Source 1/S{s}/{ab}/{q}", f"Source 1/S{s}", ab, q) for s in range(N_SCENES) for ab in SKILL
            for q in range(N_Q)]


def truth() -> np.ndarray:
    """(I, R) 1/0 matrix of the planted responses (see the module docstring)."""
    u = 0.9 * np.random.default_rng(0).random(len(items()))
    ab = np.arange(N_RUNS) / (N_RUNS - 1)
    x = (u[:, None] < 0.3 + 0.7 * ab[None, :]).astype(float)
    ids = [i for i, *_ in items()]
    x[ids.index(MISKEYED)] = 0.0
    x[ids.index(FALLS)] = (np.arange(N_RUNS) < 6).astype(float)
    return x


def _record(item: str, scene: str, ab: str, q: int, right: bool, blind: bool = False) -> SampleRecord:
    question = f"Is there object {q} ({ab}) in scene {scene}?"
    target = "Yes" if (q + len(scene)) % 2 else "No"
    if item in DUP:  # one question, two keys
        question, target = "Is this a kitchen?", "Yes" if item == DUP[0] else "No"
    if item == MISKEYED:
        target = "No"
    other = "No" if target == "Yes" else "Yes"
    answer = "Yes" if item == MISKEYED else (target if right else other)
    content = [] if blind else [{"type": "image", "path": f"{scene}/rgb.jpg", "sha256": f"sha-{scene}"}]
    content.append({"type": "text", "text": "Answer Yes or No.\n" + question})
    assert SKILLS[SKILL[ab]] == (ab, RGB_TXT)
    return SampleRecord(benchmark="rgb-th-bench", sample_id=item, request_id=item,
                        messages=[{"role": "user", "content": content}], reply=answer, answer=answer, target=target,
                        outcome="correct" if answer == target else "wrong",
                        labels={"skill": SKILL[ab], "abbrev": ab, "group": RGB_TXT, "scene": scene, "extra": False},
                        extra={"question": question})


def write_runs(root: Path) -> tuple[list[Path], Path]:
    """Write the 16 runs and the blind run under ``root``; returns (run folders, blind run folder)."""
    x = truth()
    dirs = []
    for k in range(N_RUNS):
        recs = [_record(i, s, ab, q, bool(x[j, k])) for j, (i, s, ab, q) in enumerate(items())]
        dirs.append(write_run(root / f"run{k}", "rgb-th-bench", f"model-{k}", recs, {},
                              manifest={"options": {"input": "rgb+thermal"}}))
    blind = [_record(i, s, ab, q, i == BLIND_RIGHT, blind=True) for i, s, ab, q in items()]
    for r in blind:  # a blind model that is right only where planted
        if r.sample_id != BLIND_RIGHT and r.outcome == "correct":
            r.outcome, r.answer = "wrong", ("No" if r.target == "Yes" else "Yes")
    b = write_run(root / "blind", "rgb-th-bench", "blind-model", blind, {}, manifest={"options": {"input": "blind"}})
    return dirs, b
