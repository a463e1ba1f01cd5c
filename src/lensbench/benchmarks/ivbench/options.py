"""IV-Bench answer options: de-duplication, per-item shuffle, letters (IV-Bench README, Protocol).

Official code (``inference.py`` of multimodal-art-projection/IV-Bench): options are
``distractors + [answer]`` (empty distractors dropped), shuffled, lettered with
``get_option_letter`` (``a``, ``b``, ...). We additionally drop distractors that repeat the answer
or an earlier distractor (21 public items repeat the answer; counted in the report) and seed the
shuffle per item so a run is reproducible. Option texts are sent byte for byte as released
(surrounding spaces included); only the de-duplication compares stripped text.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from lensbench.benchmarks.ivbench.data import Query

__all__ = ["option_letter", "Choices", "item_seed", "build_options"]


def option_letter(i: int) -> str:
    """Letter of the ``i``-th option (0-based) as the official code writes it: ``a``, ``b``, ..."""
    return chr(ord("a") + i)


@dataclass(frozen=True)
class Choices:
    """Shuffled, lettered options of one query.

    ``options``: ((letter, text as released), ...) in letter order; ``correct``: the answer's
    letter; ``dup_answer``: distractors dropped for repeating the answer; ``dup_other``:
    distractors dropped for repeating an earlier distractor; ``empty``: empty (or blank)
    distractors dropped.
    """

    options: tuple[tuple[str, str], ...]
    correct: str
    dup_answer: int
    dup_other: int
    empty: int

    @property
    def as_dict(self) -> dict[str, str]:
        """``{letter: text}``."""
        return dict(self.options)


def item_seed(seed: int, q: Query) -> int:
    """Per-item shuffle seed: first 8 bytes of SHA-256(``"{seed}|{video_id}|{data_id}"``) as int (big endian)."""
    return int.from_bytes(hashlib.sha256(f"{seed}|{q.video_id}|{q.data_id}".encode()).digest()[:8], "big")


def build_options(q: Query, seed: int) -> Choices:
    """Options of ``q``: de-duplicated ``distractors + [answer]`` shuffled by :func:`item_seed`.

    Texts are compared after ``str.strip()``: blank distractors are dropped (official code),
    distractors equal to the answer or to an earlier distractor are dropped (IV-Bench README, Protocol); the first
    occurrence's released text is kept unchanged. The list is permuted as
    ``random.Random(item_seed(seed, q)).shuffle`` permutes it and lettered a, b, ...
    """
    key = q.answer.strip()
    kept: list[str] = []
    seen: set[str] = set()
    dup_answer = dup_other = empty = 0
    for d in q.distractors:
        t = d.strip()
        if not t:
            empty += 1
        elif t == key:
            dup_answer += 1
        elif t in seen:
            dup_other += 1
        else:
            kept.append(d)
            seen.add(t)
    opts = kept + [q.answer]
    order = list(range(len(opts)))
    random.Random(item_seed(seed, q)).shuffle(order)  # same permutation as shuffling opts itself
    lettered = tuple((option_letter(i), opts[j]) for i, j in enumerate(order))
    return Choices(lettered, option_letter(order.index(len(opts) - 1)), dup_answer, dup_other, empty)
