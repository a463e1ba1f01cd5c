"""Crafted IV-Bench records (:mod:`lensbench.benchmarks.crafting`): 4 queries per video (two perception, two
reasoning tasks), frames cached under ``media/frames`` as the frame cache lays them out; labels as
:meth:`IVBench.score` writes."""

from __future__ import annotations

from lensbench.benchmarks.crafting import Crafter
from lensbench.benchmarks.ivbench.data import PERCEPTION, TASK_ABBREV
from lensbench.core.records import SampleRecord

__all__ = ["craft_records"]

_TASKS = ["Existence", "Spatial relationship", "Counting", "Summary"]


def craft_records(c: Crafter) -> list[SampleRecord]:
    """``c.n // 4`` videos (at least one), 4 queries each, 4 frames per video."""
    out = []
    for v in range(max(1, c.n // 4)):
        folder = c.media / "frames" / f"vid{v}-abc" / "centers_n4_rnative"
        frames = [c.image(f"frame_{k:03d}.jpg", 300 + v * 10 + k, (160, 90), folder)["sha256"] for k in range(4)]
        video = {"type": "video", "path": f"/data/videos/vid{v}.mp4", "timestamps": [0.5, 1.5, 2.5, 3.5],
                 "frames": frames}
        for t, task in enumerate(_TASKS):
            target = "ABCD"[(v + t) % 4]
            o = c.outcome()
            ans = target if o == "correct" else (None if o in ("unparseable", "error") else "ABCD"[(v + t + 2) % 4])
            out.append(c.record(f"vid{v}/{t}", [video, {"type": "text", "text": f"{task} question {t}?"}], o,
                                answer=ans, target=target, reply=ans or "unsure",
                                labels={"task": task, "column": TASK_ABBREV[task],
                                        "group": "P" if task in PERCEPTION else "R", "video_id": f"vid{v}",
                                        "data_id": t, "frames": 4, "resolution": None},
                                extra={"n_options": 4, "dup_answer_removed": 0, "dup_distractor_removed": 0,
                                       "empty_distractor_removed": 0}))
    return out
