"""Demo data of the IV-Bench Sec. 4.4 / Tab. 3 recipe (``lensbench train demo-data ivbench``; no downloads).

:func:`make_ivbench_demo` writes videos, an ``ivbench synthesize``-style output (IV-Bench jsonl with
``source_question``, ``images/``) and an IV-Bench evaluation folder. Images are drawn shapes (seeded);
nothing here is a benchmark result.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from lensbench.tools.training.demo_boxes import draw_boxes

__all__ = ["make_ivbench_demo"]


def make_ivbench_demo(root: str | Path, n_videos: int = 2, seed: int = 0) -> dict[str, Path]:
    """Write the IV-Bench demo (module docstring; needs PyAV); returns ``synth`` (questions jsonl),
    ``videos``, ``images`` and ``ivbench`` (evaluation data folder)."""
    from lensbench.media.synth_video import write_test_video

    root = Path(root)
    rng = random.Random(seed)
    videos = root / "videos"
    videos.mkdir(parents=True, exist_ok=True)
    lines_synth, lines_eval = [], []
    for v in range(n_videos):
        vid = f"vid{v}"
        write_test_video(videos / f"{vid}.mp4", n_frames=24, fps=8, size=(64, 48))
        qs_s, qs_e = [], []
        for k, task in enumerate(["Existence", "Counting"]):
            img = f"{vid}_{k}_image.png"
            draw_boxes(root / "synth" / "images" / img, rng)
            draw_boxes(root / "ivbench" / "images" / img, rng)
            base = {"data_id": k, "image_name": img, "question_type": task, "granularity": "", "answer": "two",
                    "answer_location": "", "distractors": ["one", "three", "four"]}
            qs_s.append({**base, "question": "How many times does the entity in the image appear in the video?",
                         "source_question": "How many times does the red box appear in the video?", "entity": "red box"})
            qs_e.append({**base, "question": "How many times does the object in the image appear?"})
        lines_synth.append(json.dumps({vid: qs_s}))
        lines_eval.append(json.dumps({vid: qs_e}))
    (root / "synth" / "synth.jsonl").write_text("\n".join(lines_synth) + "\n", encoding="utf-8")
    (root / "ivbench").mkdir(parents=True, exist_ok=True)
    (root / "ivbench" / "test_data.jsonl").write_text("\n".join(lines_eval) + "\n", encoding="utf-8")
    (root / "ivbench" / "videos").mkdir(exist_ok=True)
    for f in videos.iterdir():  # copies: IV-Bench refuses media that resolve outside its data folder
        shutil.copyfile(f, root / "ivbench" / "videos" / f.name)
    return {"synth": root / "synth" / "synth.jsonl", "videos": videos, "images": root / "synth" / "images",
            "ivbench": root / "ivbench"}
