"""The official GroundingME scorers' rules, reimplemented for ``--official-compat``.

Two published rules (``--compat-rule``):

* ``evaluate`` (default): the release's ``evaluate.py`` (github.com/lirang04/GroundingME;
  VLMEvalKit's ``vlmeval/dataset/groundingme.py`` scores the same way). The prediction is read
  by :func:`official_parse`; Rejection items have the ground truth [0, 0, 0, 0], which scores 1
  iff the prediction is [0, 0, 0, 0]; otherwise the IoU is the best over two readings of the
  prediction: ``raw`` pixels and ``normalized`` (all four numbers <= 1: times width/height;
  else /999 times width/height).
* ``lmms-eval``: the lmms-eval task (``lmms_eval/tasks/groundingme/utils.py``, also shipped in
  the release's ``lmms_eval_task/``): the same parse and the same two readings plus two more,
  ``mimo`` and ``qwen`` (the box read as pixels of the image after MiMo-VL's / Qwen2.5-VL's
  smart resize of the original). As written there, the resize returns (height, width) but is
  unpacked as (width, height): x is divided by the resized HEIGHT and y by the resized WIDTH.
  We keep that. lmms-eval also reports ``Center_ACC``: the centre of the chosen reading lies
  in the ground-truth box (borders included; for Rejection items the box [0, 0, 0, 0]).

Where our sent image is smaller than the original (``--max-pixels``), each reading is taken in
the frame of the sent image and scaled to original pixels (the official code always sends the
original, so there both frames coincide). Our own code; nothing copied.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from lensbench.scoring.bbox import center_in_box, iou, scale_box, smart_resize

__all__ = ["COMPAT_RULES", "ZERO", "CompatParse", "CompatScore", "official_parse",
           "smart_resize_mimo", "compat_score"]

#: ``--compat-rule`` values (see the module docstring).
COMPAT_RULES: tuple[str, ...] = ("evaluate", "lmms-eval")
#: The official scorers' rejection answer (and ground truth of Rejection items).
ZERO = [0.0, 0.0, 0.0, 0.0]
#: The official normalisation divisor for boxes not in 0..1 (``/ 999``, not 1000).
NORM_DIVISOR = 999

_JSON_SPAN = re.compile(r'\{.*"bbox_2d".*\}', re.DOTALL)
_FOUR_NUMBERS = re.compile(r"(-?\d+(?:\.\d+)?)[\s,]+(-?\d+(?:\.\d+)?)[\s,]+(-?\d+(?:\.\d+)?)[\s,]+(-?\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class CompatParse:
    """The official parse of one reply: ``box`` (4 floats; [0, 0, 0, 0] = a rejection) and how
    it was read: ``"json"`` (the ``bbox_2d`` list), ``"json-null"`` (``bbox_2d: null``),
    ``"numbers"`` (the last four numbers of the reply) or ``"none"`` (nothing: [0, 0, 0, 0]; we
    count this as unparseable, the official scorers as a rejection)."""

    box: list[float]
    method: Literal["json", "json-null", "numbers", "none"]


def official_parse(text: str | None) -> CompatParse:
    """The official ``parse_bbox`` (``evaluate.py``; lmms-eval's is the same rule).

    1. The greedy span from the first ``{`` to the last ``}`` around a ``"bbox_2d"`` (double
       quotes) is read as JSON; ``null`` -> [0, 0, 0, 0]; a list of 4 -> those numbers.
    2. Otherwise (no span, bad JSON, missing key, wrong length): the LAST run of four numbers
       separated by spaces/commas anywhere in the raw reply (reasoning included).
    3. Otherwise [0, 0, 0, 0].

    lmms-eval's version would stop with an exception where the JSON is an object without a
    top-level ``bbox_2d`` or holds a non-number; we take the fallback there (as evaluate.py does).
    """
    t = text or ""
    m = _JSON_SPAN.search(t)
    if m:
        try:
            data = json.loads(m.group(0))
            box = data["bbox_2d"]
            if box is None:
                return CompatParse(list(ZERO), "json-null")
            if isinstance(box, list) and len(box) == 4:
                return CompatParse([float(c) for c in box], "json")
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            pass
    matches = _FOUR_NUMBERS.findall(t)
    if matches:
        return CompatParse([float(c) for c in matches[-1]], "numbers")
    return CompatParse(list(ZERO), "none")


def smart_resize_mimo(height: int, width: int, factor: int = 28, min_pixels: int = 28 * 28 * 8,
                      max_pixels: int = 28 * 28 * 4096) -> tuple[int, int]:
    """The MiMo-VL resize of lmms-eval's GroundingME task, as written; returns ``(h, w)``.

    Like :func:`lensbench.scoring.bbox.smart_resize` with MiMo's pixel bounds (6,272 ..
    3,211,264) and no ``factor`` floor, plus a small-image branch: when the shorter side is
    below ``factor`` it becomes ``factor`` while the other side keeps its value (the official
    line meant to scale it reads the already replaced side, so it multiplies by 1).
    Raises ValueError when both sides are below 10 px or the aspect ratio exceeds 200.
    """
    if max(height, width) < 10:
        raise ValueError(f"image too small for the MiMo resize: {width}x{height}")
    if min(height, width) < factor:
        if height < width:
            height = factor
        else:
            width = factor
    elif max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio must be <= 200, got {max(height, width) / min(height, width):.1f}")
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = math.floor(height / beta / factor) * factor
        w_bar = math.floor(width / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


@dataclass(frozen=True)
class CompatScore:
    """One prediction scored by an official rule: ``iou`` in [0, 1], the ``chosen`` reading
    (original pixels; [0, 0, 0, 0] = a rejection), its name ``reading`` (``raw``,
    ``normalized``, ``mimo``, ``qwen``) and ``center_hit`` (lmms-eval's Center_ACC criterion)."""

    iou: float
    chosen: list[float]
    reading: str
    center_hit: bool


def _readings(p: list[float], rule: str, sent_size: tuple[int, int],
              orig_size: tuple[int, int]) -> list[tuple[str, list[float]]]:
    """The candidate readings of prediction ``p`` under ``rule``, in the official order."""
    ow, oh = orig_size
    sw, sh = sent_size
    sx, sy = ow / sw, oh / sh
    raw = list(scale_box(p, sx, sy)) if p != ZERO else list(ZERO)
    if all(c <= 1 for c in p):
        norm = [p[0] * ow, p[1] * oh, p[2] * ow, p[3] * oh]
    else:
        norm = [p[0] / NORM_DIVISOR * ow, p[1] / NORM_DIVISOR * oh, p[2] / NORM_DIVISOR * ow,
                p[3] / NORM_DIVISOR * oh]
    out = [("raw", raw), ("normalized", norm)]
    if rule == "lmms-eval":
        for name, resize in (("mimo", smart_resize_mimo), ("qwen", smart_resize)):
            try:
                first, second = resize(sh, sw)  # (h, w) ...
            except ValueError:
                continue  # the official task would stop here; we skip the reading
            x_div, y_div = first, second  # ... unpacked as (width, height), as written
            out.append((name, list(scale_box([p[0] / x_div * sw, p[1] / y_div * sh, p[2] / x_div * sw,
                                              p[3] / y_div * sh], sx, sy))))
    return out


def compat_score(pred: Sequence[float], gt: Sequence[float] | None, *, rule: str = "evaluate",
                 sent_size: tuple[int, int], orig_size: tuple[int, int]) -> CompatScore:
    """Score an official-parse prediction ``pred`` against ``gt`` (original pixels; None for a
    Rejection item, i.e. [0, 0, 0, 0]) under ``rule`` (:data:`COMPAT_RULES`).

    The best IoU over the rule's readings wins (the first on ties, as ``list.index(max(...))``).
    Raises ValueError for an unknown rule.
    """
    if rule not in COMPAT_RULES:
        raise ValueError(f"unknown compat rule {rule!r}; known: {', '.join(COMPAT_RULES)}")
    p = [float(v) for v in pred]
    gt_box = list(ZERO) if gt is None else [float(v) for v in gt]
    if gt is None and rule == "evaluate":
        return CompatScore(1.0 if p == ZERO else 0.0, p, "raw", center_in_box(gt_box, p))
    cands = _readings(p, rule, sent_size, orig_size)
    if gt is None:
        ious = [1.0 if c == ZERO else 0.0 for _, c in cands]
    else:
        ious = [iou(gt_box, c) for _, c in cands]
    k = ious.index(max(ious))
    name, chosen = cands[k]
    return CompatScore(ious[k], chosen, name, center_in_box(gt_box, chosen))
