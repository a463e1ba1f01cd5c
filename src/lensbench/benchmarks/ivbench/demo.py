"""A generated IV-Bench folder: NOT the benchmark (synthetic videos, template questions).

For trying every command offline (``lensbench data demo iv-bench DIR``; needs PyAV,
``lensbench[video]``): ``test_data.jsonl`` in the release layout (one line per video
``{video_id: [query]}``; each query ``data_id``, ``image_name``, ``question``, ``question_type``,
``granularity``, ``answer``, ``answer_location``, 9 ``distractors``), ``images/`` (a frame of the
video as the query image) and ``videos/<video_id>.mp4`` (a moving bar over changing shades,
:func:`lensbench.media.synth_video.write_test_video`). Questions cycle through the 13 tasks.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from lensbench.core.jsonl import dumps_line
from lensbench.benchmarks.ivbench.data import TASKS
from lensbench.media.synth_video import write_test_video

__all__ = ["write_demo"]


def write_demo(root: str | Path, n_videos: int = 3, queries_per_video: int = 2) -> Path:
    """Write the demo under ``root`` (``n_videos`` 4-second videos of 96 frames, ``queries_per_video``
    each) and return ``root``. Raises MissingExtraError without PyAV."""
    root = Path(root)
    (root / "videos").mkdir(parents=True, exist_ok=True)
    (root / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    k = 0
    for v in range(n_videos):
        vid = f"demo-video-{v}"
        write_test_video(root / "videos" / f"{vid}.mp4", n_frames=96, fps=24, size=(160, 96), gop=24)
        queries = []
        for j in range(queries_per_video):
            image = f"{vid}_{j}_image.png"
            Image.new("RGB", (64, 48), (40 + 60 * v, 120, 200 - 50 * j)).save(root / "images" / image)
            answer = f"second {j + 1}"
            queries.append({"data_id": j, "image_name": image, "question": f"When does the scene most resemble "
                            f"the image (demo question {k})?", "question_type": TASKS[k % len(TASKS)],
                            "granularity": "demo", "answer": answer, "answer_location": "[0, 4]",
                            "distractors": [f"second {s}" for s in range(1, 12) if f"second {s}" != answer][:9]})
            k += 1
        lines.append(dumps_line({vid: queries}))
    (root / "test_data.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root
