"""lensbench's SFT example file: one JSON object per line, a single-turn conversation with images.

Each line::

    {"id": "ex-1",
     "images": ["images/1.jpg"],                       # relative to the file's folder, or absolute
     "prompt": [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "..."}]}],
     "completion": [{"role": "assistant", "content": [{"type": "text", "text": "..."}]}],
     "meta": {...}}                                    # free-form (ratio, source, label ...)

``prompt`` may start with a ``system`` message; its ``{"type": "image"}`` entries are filled with
``images`` in order (as TRL's ``prepare_multimodal_messages`` does). This is TRL's conversational
prompt-completion layout, so the trainer puts the loss on the completion (the assistant turn)
only. :mod:`.exports` writes the same examples for ms-swift, LLaMA-Factory and LLaVA trainers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lensbench.core.errors import DataError
from lensbench.core.extras import require
from lensbench.core.jsonl import dumps_line, iter_jsonl

__all__ = ["make_example", "write_examples", "read_examples", "image_problem", "to_dataset", "prompt_parts",
           "answer_text"]


def make_example(ex_id: str, parts: Sequence[str | Path], answer: str, *, system: str | None = None,
                 meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """One example: ``parts`` in order, a :class:`~pathlib.Path` being an image and a ``str`` a text
    block; ``answer`` the assistant's reply; ``system`` an optional system message."""
    content, images = [], []
    for p in parts:
        if isinstance(p, Path):
            content.append({"type": "image"})
            images.append(str(p))
        else:
            content.append({"type": "text", "text": str(p)})
    prompt = ([{"role": "system", "content": [{"type": "text", "text": system}]}] if system else []) + \
        [{"role": "user", "content": content}]
    return {"id": str(ex_id), "images": images, "prompt": prompt,
            "completion": [{"role": "assistant", "content": [{"type": "text", "text": answer}]}], "meta": meta or {}}


def write_examples(path: str | Path, examples: Iterable[dict[str, Any]]) -> int:
    """Write ``examples`` as JSONL to ``path`` (atomically); image paths inside the file's folder
    are stored relative to it. Returns the number written."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    base = p.parent.resolve()
    n = 0
    tmp = p.with_name(p.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for ex in examples:
            imgs = []
            for im in ex["images"]:
                a = Path(im).resolve()
                imgs.append(os.path.relpath(a, base) if a.is_relative_to(base) else str(a))
            fh.write(dumps_line({**ex, "images": imgs}) + "\n")
            n += 1
    tmp.replace(p)
    return n


def _text_ok(content: Any) -> bool:
    """A message's content is a string, or a list of blocks whose text blocks hold a string."""
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(b, dict) and (b.get("type", "text") != "text" or isinstance(b.get("text"), str)) for b in content)


def image_problem(f: Path, seen: dict[Path, str | None] | None = None) -> str | None:
    """None when ``f`` opens as a non-empty image (its header read by Pillow), else why not (a short
    phrase); ``seen`` caches the answers per path."""
    seen = {} if seen is None else seen
    if f not in seen:
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(f) as im:
                w, h = im.size
            seen[f] = None if w > 0 and h > 0 else f"empty image ({w} x {h} px)"
        except (UnidentifiedImageError, OSError, ValueError) as exc:
            seen[f] = f"not an image Pillow can read ({type(exc).__name__})"
    return seen[f]


def _check(p: Path, ln: int, ex: Any, seen: dict[Path, str | None] | None = None) -> dict[str, Any]:
    where = f"line {ln}"
    if not isinstance(ex, dict):
        raise DataError(p, f"{where}: not a JSON object")
    for key in ("prompt", "completion"):
        msgs = ex.get(key)
        if not isinstance(msgs, list) or not msgs or not all(isinstance(m, dict) and "role" in m for m in msgs):
            raise DataError(p, f"{where}: must be a non-empty list of messages with a 'role'", field=key)
        if not all(_text_ok(m.get("content")) for m in msgs):
            raise DataError(p, f"{where}: every message needs content (a string, or blocks whose text is a string); "
                               "found null or missing text", field=key)
    if [m["role"] for m in ex["completion"]] != ["assistant"]:
        raise DataError(p, f"{where}: must be exactly one assistant message", field="completion")
    if not answer_text(ex).strip():
        raise DataError(p, f"{where}: the assistant's answer is empty (nothing to learn)", field="completion")
    if any(m["role"] not in ("system", "user", "assistant") for m in ex["prompt"]) or ex["prompt"][-1]["role"] != "user":
        raise DataError(p, f"{where}: roles must be system/user/assistant and end with a user turn", field="prompt")
    images = ex.get("images", [])
    if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
        raise DataError(p, f"{where}: must be a list of paths", field="images")
    slots = sum(1 for m in ex["prompt"] if isinstance(m.get("content"), list)
                for c in m["content"] if isinstance(c, dict) and c.get("type") == "image")
    if slots != len(images):
        raise DataError(p, f"{where}: {len(images)} image path(s) for {slots} image entr(ies) in the prompt",
                        field="images")
    resolved = []
    for im in images:
        f = Path(im) if Path(im).is_absolute() else p.parent / im
        if not f.is_file():
            raise DataError(p, f"{where}: image file not found: {f}", field="images")
        bad = image_problem(f.resolve(), seen)
        if bad:
            raise DataError(p, f"{where}: {f}: {bad}", field="images")
        resolved.append(str(f.resolve()))
    return {**ex, "id": str(ex.get("id", ln)), "images": resolved, "meta": ex.get("meta") or {}}


def read_examples(path: str | Path) -> list[dict[str, Any]]:
    """The examples of an SFT file, image paths made absolute. Every line is checked before
    anything is trained (roles, one assistant completion, one path per image entry, the image
    files exist and open as non-empty images, every message has text). Raises DataError naming the file,
    the line and the field (a file that is not UTF-8: the first line that is not)."""
    p = Path(path)
    seen: dict[Path, str | None] = {}
    try:
        out = [_check(p, ln, ex, seen) for ln, ex in iter_jsonl(p, "SFT example file")]
    except UnicodeDecodeError:
        raise DataError(p, f"line {_first_non_utf8(p)}: not UTF-8 text") from None
    if not out:
        raise DataError(p, "no examples")
    return out


def _first_non_utf8(p: Path) -> int:
    for ln, raw in enumerate(p.read_bytes().split(b"\n"), 1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return ln
    return 0


def _content(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in msgs:
        c = m["content"]
        blocks = [{"type": "text", "text": c}] if isinstance(c, str) else \
            [{"type": b.get("type", "text"), "text": b.get("text")} for b in c]
        out.append({"role": m["role"], "content": blocks})
    return out


def to_dataset(examples: Sequence[dict[str, Any]]):
    """A ``datasets.Dataset`` with columns ``prompt``, ``completion`` (conversational, content as
    typed blocks) and ``images`` (decoded from the files only when a row is read)."""
    datasets = require("datasets", "train", "SFT training")
    cols = {"prompt": [_content(e["prompt"]) for e in examples],
            "completion": [_content(e["completion"]) for e in examples],
            "images": [list(e["images"]) for e in examples]}
    return datasets.Dataset.from_dict(cols).cast_column("images", datasets.List(datasets.Image()))


def prompt_parts(example: dict[str, Any]) -> tuple[str | None, list[tuple[str, str]]]:
    """``(system text or None, [("image", path) | ("text", text), ...])`` of the user turn(s), in
    order, images paired with ``example["images"]``."""
    system, parts, imgs = None, [], iter(example["images"])
    for m in example["prompt"]:
        blocks = [{"type": "text", "text": m["content"]}] if isinstance(m["content"], str) else m["content"]
        if m["role"] == "system":
            system = "".join(b.get("text") or "" for b in blocks)
            continue
        for b in blocks:
            parts.append(("image", next(imgs)) if b.get("type") == "image" else ("text", b.get("text") or ""))
    return system, parts


def answer_text(example: dict[str, Any]) -> str:
    """The assistant's reply text of an example."""
    c = example["completion"][0]["content"]
    return c if isinstance(c, str) else "".join(b.get("text") or "" for b in c)
