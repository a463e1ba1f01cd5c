"""IF-Bench release files: answer-letter balancing and ``if_bench.json`` in the release layout.

Layout (as ``evaluate/if_bench/if_bench.json`` of github.com/casiatao/IF-Bench): ``{dimension:
[{"dataset", "dst_thermal_path", ["pos_info"], "question": {"dimension", "en_question",
"en_options", "answer", "cn_question", "cn_options"}}]}``, 4-space indented, dimensions in Table 2
order; images beside it in ``infrared_imgs/`` named by the MD5 of their bytes (as the release
names them), so ``lensbench run if-bench --data-dir <folder>`` reads the folder directly.

Balancing (Sec. 3.2: "The order of options is randomly shuffled so that the correct answers are
evenly distributed among options A-D"): the records are visited dimension by dimension, each
dimension's records in a seeded random order, and given target letters from one seeded
permutation of A-D repeated; each record's options are permuted (the same permutation in both
languages) so its right option lands on its target letter, the other three in a seeded random
order. Over the whole set and within each dimension the letter counts differ by at most one.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from lensbench.benchmarks.ifbench.data import DIMENSIONS
from lensbench.benchmarks.ifbench.prompts import LETTERS
from lensbench.core.files import link_or_copy

__all__ = ["Record", "balance_letters", "letter_counts", "image_name", "place_image", "write_release",
           "read_release"]

Record = dict[str, Any]


def _permuted(q: dict[str, Any], target: str, rng: random.Random) -> dict[str, Any]:
    others = [L for L in LETTERS if L != q["answer"]]
    rng.shuffle(others)
    rest = iter(others)
    old_of = {new: (q["answer"] if new == target else next(rest)) for new in LETTERS}
    out = dict(q)
    for lang in ("en_options", "cn_options"):
        out[lang] = {new: q[lang][old_of[new]] for new in LETTERS}
    out["answer"] = target
    return out


def balance_letters(by_dim: dict[str, list[Record]], seed: int = 0) -> dict[str, list[Record]]:
    """New records with options permuted so the right letters are balanced (module docstring);
    the order of records within each dimension is kept. Deterministic for a given ``seed``."""
    rng = random.Random(seed)
    cycle = list(LETTERS)
    rng.shuffle(cycle)
    k = 0
    out: dict[str, list[Record]] = {}
    for dim, recs in by_dim.items():
        order = list(range(len(recs)))
        rng.shuffle(order)
        new = list(recs)
        for i in order:
            new[i] = {**recs[i], "question": _permuted(recs[i]["question"], cycle[k % 4], rng)}
            k += 1
        out[dim] = new
    return out


def letter_counts(by_dim: dict[str, list[Record]]) -> dict[str, int]:
    """Right answers per letter over all records: ``{"A": n, ..., "D": n}``."""
    c = Counter(r["question"]["answer"] for recs in by_dim.values() for r in recs)
    return {L: c[L] for L in LETTERS}


def image_name(path: str | Path) -> str:
    """The release's file name for an image: the MD5 of its bytes + its extension (lower case)."""
    h = hashlib.md5(Path(path).read_bytes(), usedforsecurity=False).hexdigest()
    return h + Path(path).suffix.lower()


def place_image(src: str | Path, folder: Path, name: str) -> None:
    """``folder/name`` = the file ``src`` (:func:`lensbench.core.files.link_or_copy`; kept when present)."""
    link_or_copy(src, Path(folder) / name)


def write_release(folder: Path, by_dim: dict[str, list[Record]]) -> Path:
    """Write ``folder/if_bench.json`` (atomic: a temporary file renamed), dimensions in Table 2
    order, empty dimensions left out. Returns the path."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = {d: by_dim[d] for d in DIMENSIONS if by_dim.get(d)}
    path = folder / "if_bench.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False, indent=4) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_release(path: Path) -> dict[str, list[Record]]:
    """``{dimension: [record]}`` of an ``if_bench.json`` (checked by the benchmark's loader first:
    raises its DataError naming the file and field for anything the evaluation would refuse)."""
    from lensbench.benchmarks.ifbench.data import load_questions

    load_questions(path, blind=True)
    return json.loads(Path(path).read_text(encoding="utf-8"))
