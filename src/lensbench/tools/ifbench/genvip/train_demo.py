"""Demo data of the GenViP editor recipe, IF-Bench App. C (``lensbench train demo-data genvip``; no downloads).

:func:`make_genvip_demo` writes an RGB-T pair folder for ``genvip curate`` (``ir/``, ``rgb/``, the same
shapes in both) and an IF-Bench folder (``if_bench.json``, ``infrared_imgs/``). Images are drawn shapes
(seeded); nothing here is a benchmark result.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from lensbench.tools.training.demo_boxes import draw_boxes

__all__ = ["make_genvip_demo"]


def make_genvip_demo(root: str | Path, n_pairs: int = 6, seed: int = 0) -> dict[str, Path]:
    """Write the GenViP demo (module docstring); returns ``pairs`` and ``ifbench`` folders."""
    root = Path(root)
    rng = random.Random(seed)
    for i in range(n_pairs):
        state = rng.getstate()
        draw_boxes(root / "pairs" / "rgb" / f"p{i}.png", rng, size=(64, 64))
        rng.setstate(state)
        draw_boxes(root / "pairs" / "ir" / f"p{i}.png", rng, size=(64, 64), grey=True)
    dims = ["Scene Understanding", "Object Counting", "Thermal Feature Understanding"]
    bench: dict[str, list[dict[str, Any]]] = {d: [] for d in dims}
    for i in range(4):
        name = f"ir{i}.png"
        draw_boxes(root / "ifbench" / "infrared_imgs" / name, rng, size=(64, 64), grey=True)
        d = dims[i % len(dims)]
        bench[d].append({"dataset": "demo", "dst_thermal_path": name, "question": {
            "dimension": d, "answer": "ABCD"[i % 4], "en_question": f"Q{i}: which one?",
            "en_options": {x: f"option {x}{i}" for x in "ABCD"}, "cn_question": f"问题{i}：哪一个？",
            "cn_options": {x: f"选项{x}{i}" for x in "ABCD"}}})
    (root / "ifbench" / "if_bench.json").write_text(json.dumps(bench, ensure_ascii=False), encoding="utf-8")
    return {"pairs": root / "pairs", "ifbench": root / "ifbench"}
