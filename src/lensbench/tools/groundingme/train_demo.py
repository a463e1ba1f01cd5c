"""Demo data of the GroundingME Sec. 5.3 recipe (``lensbench train demo-data groundingme``; no downloads).

:func:`make_grounding_demo` writes RefCOCOg-style rows (generic JSONL with image, description, xyxy box,
split), the negatives ``lensbench groundingme negatives --pool`` would write (one detail of the description
changed, ``bbox`` null; here edited by rule instead of by an LLM), and a GroundingME release in the HF
parquet layout. Images are drawn shapes (seeded); nothing here is a benchmark result.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from lensbench.tools.training.demo_boxes import COLOURS, draw_boxes

__all__ = ["make_grounding_demo"]


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
        objs = draw_boxes(img, rng)
        colour, box = objs[0]
        rows.append({"id": f"ref{i}", "image": f"images/scene{i}.png", "description": f"the {colour} box",
                     "bbox": box, "split": split})
        other = next(c for c in COLOURS if c not in {o[0] for o in objs})
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
        objs = draw_boxes(buf, rng)
        colour, box = objs[0]
        desc = f"the {colour} box" if l1 != "Rejection" else "the purple box"
        gm_rows.append({"id": f"gm-{i}", "image": {"bytes": buf.read_bytes(), "path": buf.name}, "description": desc,
                        "bbox": None if l1 == "Rejection" else box, "subtask_l1": l1, "subtask_l2": l2,
                        "width": 64, "height": 48})
    (root / "groundingme" / "data").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(gm_rows), root / "groundingme" / "data" / "test-00000-of-00001.parquet")
    paths["groundingme"] = root / "groundingme"
    return paths
