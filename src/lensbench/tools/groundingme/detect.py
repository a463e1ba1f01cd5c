"""GroundingDINO box annotation through transformers (paper Sec. 3.2.1, step 2).

"Based on this list [of class names], we then format a text query for the GroundingDINO model
... To optimize the generation, we adjusted the model's filtering threshold. This step outputs a
series of bounding boxes and their highest-similarity tokens, and we use the word which the
highest-similarity token belongs to as the class name for each box."

The query is GroundingDINO's usual ``"tag one. tag two. ..."`` (lower case); tag lists longer
than the model's text window (``max_text_len`` tokens, 256 for the released checkpoints) are
split into several queries whose boxes are pooled. A box's score is its highest token
similarity (sigmoid of the logit) over the tag tokens; boxes below ``box_threshold`` (the
paper's "filtering threshold", our option) are dropped. The class is the word that token lies in
(``class_name="word"``, the paper's reading) or the whole tag phrase (``"tag"``). The checkpoint
is the user's (e.g. ``IDEA-Research/grounding-dino-base`` or a local folder); torch and
transformers come from the ``hf`` extra.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.core.extras import require
from lensbench.tools.groundingme.boxes import Detection

__all__ = ["GroundingDinoDetector", "token_classes"]


def token_classes(text: str, offsets: Sequence[tuple[int, int]], tags: Sequence[str]) -> list[tuple[str, str] | None]:
    """For each token of ``text`` (its character ``offsets`` from a fast tokenizer), the
    ``(tag, word)`` it lies in, or None for special tokens and the ``.`` separators.

    ``text`` must be ``". ".join(tags) + "."`` as :meth:`GroundingDinoDetector.query_text` builds it.
    """
    spans, pos = [], 0
    for t in tags:
        spans.append((pos, pos + len(t), t))
        pos += len(t) + 2
    words = [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"[^\s.]+", text)]
    out: list[tuple[str, str] | None] = []
    for s, e in offsets:
        if e <= s:
            out.append(None)
            continue
        tag = next((t for a, b, t in spans if a <= s < b), None)
        word = next((w for a, b, w in words if a <= s < b), None)
        out.append((tag, word) if tag is not None and word is not None else None)
    return out


class GroundingDinoDetector:
    """A GroundingDINO checkpoint loaded with transformers' zero-shot object detection classes.

    Args:
        checkpoint: hub id or local folder (model + processor).
        box_threshold: minimum box score in [0, 1] (GroundingDINO's demo default 0.35).
        class_name: ``"word"`` (the word of the highest-similarity token, Sec. 3.2.1) or ``"tag"``.
        device: torch device (default: ``cuda`` when available, else ``cpu``).

    Raises:
        MissingExtraError: torch / transformers are not installed (``lensbench[hf]``).
        ConfigError: a bad option, or a checkpoint that does not load.
    """

    def __init__(self, checkpoint: str, *, box_threshold: float = 0.35, class_name: str = "word",
                 device: str | None = None):
        if not 0.0 <= box_threshold <= 1.0:
            raise ConfigError(f"--box-threshold must be in [0, 1], got {box_threshold}")
        if class_name not in ("word", "tag"):
            raise ConfigError(f"--class-name must be word or tag, got {class_name!r}")
        self.torch = require("torch", "hf", "GroundingDINO box annotation")
        tf = require("transformers", "hf", "GroundingDINO box annotation")
        self.device = device or ("cuda" if self.torch.cuda.is_available() else "cpu")
        try:
            self.processor = tf.AutoProcessor.from_pretrained(checkpoint)
            self.model = tf.AutoModelForZeroShotObjectDetection.from_pretrained(checkpoint).eval().to(self.device)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"GroundingDINO checkpoint {checkpoint!r} does not load: {exc}") from None
        self.checkpoint = str(checkpoint)
        self.box_threshold = box_threshold
        self.class_name = class_name
        self.max_text_len = int(getattr(self.model.config, "max_text_len", 256))

    @staticmethod
    def query_text(tags: Sequence[str]) -> str:
        """GroundingDINO's query: lower-case tags joined by ``". "``, ending in ``"."``."""
        return ". ".join(tags) + "."

    def chunks(self, tags: Sequence[str]) -> list[list[str]]:
        """``tags`` (lower-cased, de-duplicated, in order) split into queries that fit the text window."""
        clean = list(dict.fromkeys(t.strip().lower().replace(".", " ").strip() for t in tags if t and t.strip()))
        out: list[list[str]] = []
        cur: list[str] = []
        for t in clean:
            trial = cur + [t]
            n = len(self.processor.tokenizer(self.query_text(trial))["input_ids"])
            if n > self.max_text_len and cur:
                out.append(cur)
                cur = [t]
            else:
                cur = trial
        if cur:
            out.append(cur)
        return out

    def detect(self, image: Any, tags: Sequence[str]) -> list[Detection]:
        """Boxes for ``tags`` in a PIL ``image`` (pixels of that image), pooled over query chunks.

        Returns detections with ``score`` >= ``box_threshold``, boxes clipped to the image, in
        query order. No tags -> no boxes.
        """
        torch = self.torch
        w, h = image.size
        out: list[Detection] = []
        for chunk in self.chunks(tags):
            text = self.query_text(chunk)
            enc = self.processor.tokenizer(text, return_offsets_mapping=True)
            classes = token_classes(text, enc["offset_mapping"], chunk)
            inputs = self.processor(images=image.convert("RGB"), text=text, return_tensors="pt").to(self.device)
            with torch.no_grad():
                res = self.model(**inputs)
            n_tok = min(len(classes), res.logits.shape[-1])
            usable = torch.tensor([c is not None for c in classes[:n_tok]], device=res.logits.device)
            if not bool(usable.any()):
                continue
            probs = res.logits[0, :, :n_tok].sigmoid().masked_fill(~usable, -1.0)
            scores, tok = probs.max(dim=-1)
            for q in range(probs.shape[0]):
                s = float(scores[q])
                if s < self.box_threshold:
                    continue
                cx, cy, bw, bh = (float(v) for v in res.pred_boxes[0, q])
                box = (max(0.0, (cx - bw / 2) * w), max(0.0, (cy - bh / 2) * h),
                       min(float(w), (cx + bw / 2) * w), min(float(h), (cy + bh / 2) * h))
                if box[2] <= box[0] or box[3] <= box[1]:
                    continue
                tag, word = classes[int(tok[q])]
                out.append(Detection(box=tuple(round(v, 2) for v in box), label=word if self.class_name == "word" else tag,
                                     score=round(s, 4), tag=tag))
        return out

    def fingerprint(self) -> dict[str, Any]:
        """What determines the boxes (for the work folder's detection cache)."""
        return {"detector": "groundingdino", "checkpoint": self.checkpoint, "box_threshold": self.box_threshold,
                "class_name": self.class_name}

