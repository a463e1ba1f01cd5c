"""Small synthetic data for the training recipes' worked examples and tests (no downloads).

Each maker writes, under ``root``, what the recipe's real inputs look like, in their real formats:

* :func:`make_grounding_demo` (GroundingME Sec. 5.3): RefCOCOg-style rows (generic JSONL with
  image, description, xyxy box, split), the negatives ``lensbench groundingme negatives --pool``
  would write (one detail of the description changed, ``bbox`` null; here edited by rule instead
  of by an LLM), and a GroundingME release in the HF parquet layout;
* :func:`make_genvip_demo` (IF-Bench App. C): an RGB-T pair folder for ``genvip curate``
  (``ir/``, ``rgb/``, the same shapes in both) and an IF-Bench folder (``if_bench.json``,
  ``infrared_imgs/``);
* :func:`make_ivbench_demo` (IV-Bench Sec. 4.4): videos, a ``ivbench synthesize``-style output
  (IV-Bench jsonl with ``source_question``, ``images/``) and an IV-Bench evaluation folder.

Images are drawn shapes (seeded); nothing here is a benchmark result.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

__all__ = ["make_grounding_demo", "make_genvip_demo", "make_ivbench_demo"]

_COLOURS = {"red": (220, 30, 30), "green": (40, 170, 40), "blue": (30, 60, 220), "yellow": (240, 220, 30)}


def _scene(path: Path, rng: random.Random, size=(64, 48), grey: bool = False) -> list[tuple[str, list[int]]]:
    """Draw 2-3 coloured boxes; returns ``[(colour, [x1, y1, x2, y2])]``."""
    im = Image.new("RGB", size, (rng.randint(0, 60),) * 3)
    d = ImageDraw.Draw(im)
    out = []
    for colour in rng.sample(list(_COLOURS), rng.randint(2, 3)):
        x1, y1 = rng.randint(0, size[0] - 20), rng.randint(0, size[1] - 16)
        box = [x1, y1, x1 + rng.randint(10, 19), y1 + rng.randint(8, 15)]
        d.rectangle(box, fill=_COLOURS[colour])
        out.append((colour, box))
    path.parent.mkdir(parents=True, exist_ok=True)
    (im.convert("L") if grey else im).save(path)
    return out


def make_grounding_demo(root: str | Path, n_train: int = 16, n_val: int = 6, seed: int = 0) -> dict[str, Path]:
    """Write the grounding demo (module docstring); returns its paths: ``refs`` (rows JSONL),
    ``negatives_train`` / ``negatives_val`` (grounding items), ``groundingme`` (data folder)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = Path(root)
    rng = random.Random(seed)
    rows, negs = [], {"train": [], "val": []}
    for i in range(n_train + n_val):
        split = "train" if i < n_train else "val"
        img = root / "images" / f"scene{i}.png"
        objs = _scene(img, rng)
        colour, box = objs[0]
        rows.append({"id": f"ref{i}", "image": f"images/scene{i}.png", "description": f"the {colour} box",
                     "bbox": box, "split": split})
        other = next(c for c in _COLOURS if c not in {o[0] for o in objs})
        negs[split].append({"id": f"ref{i}", "image": str(img.resolve()), "description": f"the {other} box",
                            "bbox": None, "width": 64, "height": 48, "source_description": f"the {colour} box",
                            "negative_type": "Appearance", "label": "negative"})
    refs = root / "refs.jsonl"
    refs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    paths = {"refs": refs}
    for split, items in negs.items():
        paths[f"negatives_{split}"] = root / f"negatives_{split}.jsonl"
        paths[f"negatives_{split}"].write_text("".join(json.dumps(n) + "\n" for n in items), encoding="utf-8")
    gm_rows = []
    for i, (l1, l2) in enumerate([("Discriminative", "Appearance"), ("Spatial", "Relationship"), ("Limited", "Small"),
                                  ("Rejection", "Appearance"), ("Discriminative", "Text"), ("Rejection", "State")]):
        buf = root / "gm" / f"gm{i}.png"
        objs = _scene(buf, rng)
        colour, box = objs[0]
        desc = f"the {colour} box" if l1 != "Rejection" else "the purple box"
        gm_rows.append({"id": f"gm-{i}", "image": {"bytes": buf.read_bytes(), "path": buf.name}, "description": desc,
                        "bbox": None if l1 == "Rejection" else box, "subtask_l1": l1, "subtask_l2": l2,
                        "width": 64, "height": 48})
    (root / "groundingme" / "data").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(gm_rows), root / "groundingme" / "data" / "test-00000-of-00001.parquet")
    paths["groundingme"] = root / "groundingme"
    return paths


def make_genvip_demo(root: str | Path, n_pairs: int = 6, seed: int = 0) -> dict[str, Path]:
    """Write the GenViP demo (module docstring); returns ``pairs`` and ``ifbench`` folders."""
    root = Path(root)
    rng = random.Random(seed)
    for i in range(n_pairs):
        state = rng.getstate()
        _scene(root / "pairs" / "rgb" / f"p{i}.png", rng, size=(64, 64))
        rng.setstate(state)
        _scene(root / "pairs" / "ir" / f"p{i}.png", rng, size=(64, 64), grey=True)
    dims = ["Scene Understanding", "Object Counting", "Thermal Feature Understanding"]
    bench: dict[str, list[dict[str, Any]]] = {d: [] for d in dims}
    for i in range(4):
        name = f"ir{i}.png"
        _scene(root / "ifbench" / "infrared_imgs" / name, rng, size=(64, 64), grey=True)
        d = dims[i % len(dims)]
        bench[d].append({"dataset": "demo", "dst_thermal_path": name, "question": {
            "dimension": d, "answer": "ABCD"[i % 4], "en_question": f"Q{i}: which one?",
            "en_options": {x: f"option {x}{i}" for x in "ABCD"}, "cn_question": f"问题{i}：哪一个？",
            "cn_options": {x: f"选项{x}{i}" for x in "ABCD"}}})
    (root / "ifbench" / "if_bench.json").write_text(json.dumps(bench, ensure_ascii=False), encoding="utf-8")
    return {"pairs": root / "pairs", "ifbench": root / "ifbench"}


def make_ivbench_demo(root: str | Path, n_videos: int = 2, seed: int = 0) -> dict[str, Path]:
    """Write the IV-Bench demo (module docstring; needs PyAV); returns ``synth`` (questions jsonl),
    ``videos``, ``images`` and ``ivbench`` (evaluation data folder)."""
    from lensbench.testing.video import write_test_video

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
            _scene(root / "synth" / "images" / img, rng)
            _scene(root / "ivbench" / "images" / img, rng)
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
