"""GroundingME Sec. 5.3 data-mixture SFT data: training examples, ratio mixtures, the in-domain
evaluation set.

Each example is the paper's Table 9 prompt (``benchmarks/groundingme/prompts/prompt.txt``, the
image first) and the answer the protocol expects: ``{"bbox_2d": [x1, y1, x2, y2]}`` in the trained
model's coordinate convention (``--bbox-format``: Qwen2.5-VL ``abs-resized`` pixels of the
resized image, Qwen3-VL ``rel1000`` ...; :func:`lensbench.scoring.bbox.from_original_pixels`,
integers; ``rel1`` three decimals), or ``{"bbox_2d": null}`` for a negative. The images are sent
as stored, so the training frame is the original image.

Mixtures (Sec. 5.3): ``total`` items drawn from the positive + negative pool at each neg:pos ratio
(paper: 1:8, 1:4, 1:2, 1:1, 2:1) by :func:`~lensbench.tools.groundingme.negatives.mix_negatives`,
one seeded draw per ratio. The paper fixes 30,000 instances for every ratio, so that the ratio is
the only thing that changes between the fine-tuning sets; without a ``total`` every mixture has the
same size (:func:`common_total`): 30,000, or the most the pools allow at the most demanding ratio.
(Letting each ratio take all the pools allow gives 18 / 20 / 24 / 32 / 24 items on the demo and
33,750-60,000 at the paper's pool sizes: ratio confounded with data size; ``per_ratio_max`` keeps
that old behaviour, labelled.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lensbench.benchmarks.groundingme.prompts import build_prompt
from lensbench.scoring.bbox import from_original_pixels
from lensbench.core.errors import ConfigError
from lensbench.tools.groundingme.negatives import PAPER_RATIOS, mix_negatives, parse_ratio
from lensbench.tools.groundingme.refexp import write_items_file
from lensbench.tools.training.sft_data import make_example, write_examples

__all__ = ["PAPER_TOTAL", "SET_NAMES", "ratio_slug", "answer_for", "sft_example", "common_total", "write_mixtures",
           "write_eval_set"]

#: Sec. 5.3: 30,000 instances per fine-tuning set.
PAPER_TOTAL = 30_000
#: Tab. 5 rows: the positives and the curated negatives of the RefCOCOg validation split.
SET_NAMES = ("RefCOCOg_val", "RefCOCOg_rej_val")


def ratio_slug(ratio: str) -> str:
    """``"1:8"`` -> ``"1-8"`` (file and folder names). Raises ConfigError for a bad ratio."""
    neg, pos = parse_ratio(ratio)
    return f"{neg}-{pos}"


def _num(v: float, fmt: str) -> float | int:
    return round(v, 3) if fmt == "rel1" else int(round(v))


def _neg_id(item: dict[str, Any]) -> str:
    """A negative's id, distinct from the positive it was edited from (which has the same ``id``)."""
    sid = str(item["id"])
    return sid if sid.startswith("neg/") else f"neg/{sid}"


def answer_for(item: dict[str, Any], bbox_format: str, resize: dict[str, int] | None = None) -> str:
    """The assistant's answer for a grounding item: its box (original pixels) in ``bbox_format``,
    or null for a negative (``bbox`` null)."""
    if item.get("bbox") is None:
        return json.dumps({"bbox_2d": None})
    size = (int(item["width"]), int(item["height"]))
    box = from_original_pixels(item["bbox"], bbox_format, sent_size=size, orig_size=size, resize=resize)
    return json.dumps({"bbox_2d": [_num(v, bbox_format) for v in box]})


def sft_example(item: dict[str, Any], bbox_format: str, resize: dict[str, int] | None = None) -> dict[str, Any]:
    """The SFT example (:func:`lensbench.tools.training.sft_data.make_example`) of one item: image,
    Table 9 prompt, answer."""
    meta = {"label": "negative" if item.get("bbox") is None else "positive", "bbox_format": bbox_format}
    for k in ("source_description", "negative_type", "visual_check"):
        if k in item:
            meta[k] = item[k]
    return make_example(item["id"], [Path(item["image"]), build_prompt(item["description"], bbox_format)],
                        answer_for(item, bbox_format, resize), meta=meta)


def _fits(n_pos: int, n_neg: int, ratio: str, total: int) -> bool:
    neg, pos = parse_ratio(ratio)
    k = round(total * neg / (neg + pos))  # mix_negatives' split
    return k <= n_neg and total - k <= n_pos


def common_total(n_pos: int, n_neg: int, ratios: tuple[str, ...], cap: int = PAPER_TOTAL) -> int:
    """The one mixture size every ratio can have: ``cap`` (Sec. 5.3: 30,000), or less when the pools
    (``n_pos`` positives, ``n_neg`` negatives) cannot give that many at some ratio (then the most the
    pools allow at the most demanding ratio). Raises ConfigError when a pool is empty."""
    if not ratios:
        raise ConfigError("no ratios given")
    total = cap
    for r in ratios:
        neg, pos = parse_ratio(r)
        total = min(total, n_neg * (neg + pos) // neg, n_pos * (neg + pos) // pos)
    while total > 0 and not all(_fits(n_pos, n_neg, r, total) for r in ratios):
        total -= 1
    if total <= 0:
        raise ConfigError(f"no mixture possible from {n_pos} positives and {n_neg} negatives")
    return total


def write_mixtures(out_dir: Path, positives: list[dict[str, Any]], negatives: list[dict[str, Any]], *,
                   ratios: tuple[str, ...] = PAPER_RATIOS, total: int | None = None, seed: int = 0,
                   bbox_format: str = "rel1000", resize: dict[str, int] | None = None,
                   per_ratio_max: bool = False) -> dict[str, Any]:
    """Write ``mix_<neg>-<pos>.jsonl`` (SFT examples) per ratio and ``mixtures.json`` (what was
    drawn) into ``out_dir``; returns the manifest ``{"ratios": {ratio: {"file", "n_negative",
    "n_positive"}}, "total", "total_rule", "seed", "bbox_format", "pool": {...}}``. ``total`` None =
    :func:`common_total` (the same size for every ratio, 30,000 at most: Sec. 5.3);
    ``per_ratio_max`` = each ratio as large as the pools allow (sizes then differ between ratios).
    Raises ConfigError when a pool is too small."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pos = [{**it, "label": "positive"} for it in positives]
    neg = [{**it, "id": _neg_id(it), "bbox": None, "label": "negative"} for it in negatives]
    if per_ratio_max:
        rule = "per ratio: the most the pools allow (sizes differ between ratios)"
        total = None
    elif total is None:
        total = common_total(len(pos), len(neg), ratios)
        rule = ("the paper's 30,000 for every ratio" if total == PAPER_TOTAL else
                f"the same for every ratio: the most the pools allow at every ratio (paper: {PAPER_TOTAL:,})")
    else:
        rule = "given (--total)"
    manifest: dict[str, Any] = {"total": total, "total_rule": rule, "seed": seed, "bbox_format": bbox_format,
                                "resize": resize, "pool": {"positives": len(pos), "negatives": len(neg)}, "ratios": {}}
    for r in ratios:
        mix = mix_negatives(pos, neg, r, seed, total)
        f = out_dir / f"mix_{ratio_slug(r)}.jsonl"
        write_examples(f, (sft_example(it, bbox_format, resize) for it in mix))
        n_neg = sum(1 for it in mix if it["bbox"] is None)
        manifest["ratios"][r] = {"file": f.name, "n_negative": n_neg, "n_positive": len(mix) - n_neg}
    (out_dir / "mixtures.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return manifest


def write_eval_set(out_dir: Path, positives: list[dict[str, Any]], negatives: list[dict[str, Any]],
                   names: tuple[str, str] = SET_NAMES) -> Path:
    """The in-domain evaluation set (Tab. 5) as a ``grounding-rej`` data folder: ``items.jsonl``
    with the positives (``set`` = ``names[0]``) and the negatives (``bbox`` null, ``set`` =
    ``names[1]``). Returns ``out_dir``."""
    items = [{**it, "set": names[0]} for it in positives] + \
        [{**it, "id": _neg_id(it), "bbox": None, "set": names[1]} for it in negatives]
    write_items_file(Path(out_dir) / "items.jsonl", items)
    return Path(out_dir)
