"""SFT examples (:mod:`.sft_data`) for trainers outside lensbench.

* ms-swift: JSONL, ``{"messages": [{"role", "content"}...], "images": [...]}`` with one ``<image>``
  tag per image in the text (ms-swift's custom-dataset format, docs "Custom Dataset");
* LLaMA-Factory: a ShareGPT-style JSON list, ``{"messages": [...], "images": [...]}`` with
  ``<image>`` tags, plus the ``dataset_info.json`` entry that declares it
  (``formatting: sharegpt``; its ``data/mllm_demo.json`` layout);
* LLaVA (LLaVA-NeXT / LLaVA-Video training scripts): a JSON list of ``{"id", "conversations":
  [{"from": "human", "value"}, {"from": "gpt", "value"}], "image": [...]}`` plus any ``meta`` keys
  named in ``extra_keys`` (e.g. ``video``).

Image paths are written absolute (the files stay where they are).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lensbench.core.jsonl import dumps_line
from lensbench.tools.training.sft_data import answer_text, prompt_parts

__all__ = ["EXPORT_FORMATS", "user_text", "to_swift", "to_llamafactory", "to_llava", "export"]

EXPORT_FORMATS = ("swift", "llamafactory", "llava")


def user_text(example: dict[str, Any], tag: str = "<image>") -> str:
    """The user turn as one text: each image as ``tag``, parts joined by newlines."""
    _, parts = prompt_parts(example)
    return "\n".join(tag if kind == "image" else text for kind, text in parts)


def _messages(example: dict[str, Any]) -> list[dict[str, str]]:
    system, _ = prompt_parts(example)
    msgs = [{"role": "system", "content": system}] if system else []
    return msgs + [{"role": "user", "content": user_text(example)},
                   {"role": "assistant", "content": answer_text(example)}]


def _write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)


def to_swift(examples: Sequence[dict[str, Any]], out: Path) -> Path:
    """ms-swift JSONL at ``out``; returns it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for ex in examples:
            fh.write(dumps_line({"messages": _messages(ex), "images": list(ex["images"])}) + "\n")
    return out


def to_llamafactory(examples: Sequence[dict[str, Any]], out: Path, name: str | None = None) -> Path:
    """LLaMA-Factory ShareGPT JSON at ``out`` and its entry (``name``, default the file stem) merged
    into ``dataset_info.json`` beside it; returns ``out``."""
    _write_json(out, [{"messages": _messages(ex), "images": list(ex["images"])} for ex in examples])
    info_path = out.parent / "dataset_info.json"
    info = json.loads(info_path.read_text(encoding="utf-8")) if info_path.is_file() else {}
    info[name or out.stem] = {"file_name": out.name, "formatting": "sharegpt",
                              "columns": {"messages": "messages", "images": "images"},
                              "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user",
                                       "assistant_tag": "assistant", "system_tag": "system"}}
    _write_json(info_path, info)
    return out


def to_llava(examples: Sequence[dict[str, Any]], out: Path, extra_keys: Sequence[str] = ()) -> Path:
    """LLaVA conversations JSON at ``out`` (``meta[k]`` copied for ``k`` in ``extra_keys``); returns it."""
    rows = []
    for ex in examples:
        row: dict[str, Any] = {"id": ex["id"], "image": list(ex["images"]),
                               "conversations": [{"from": "human", "value": user_text(ex)},
                                                 {"from": "gpt", "value": answer_text(ex)}]}
        row.update({k: ex["meta"][k] for k in extra_keys if k in ex.get("meta", {})})
        rows.append(row)
    _write_json(out, rows)
    return out


def export(examples: Sequence[dict[str, Any]], fmt: str, out: Path, **kw: Any) -> Path:
    """Dispatch to :func:`to_swift` / :func:`to_llamafactory` / :func:`to_llava` by ``fmt``
    (:data:`EXPORT_FORMATS`). Raises ValueError for an unknown format."""
    if fmt == "swift":
        return to_swift(examples, out)
    if fmt == "llamafactory":
        return to_llamafactory(examples, out, kw.get("name"))
    if fmt == "llava":
        return to_llava(examples, out, kw.get("extra_keys", ()))
    raise ValueError(f"unknown export format {fmt!r}; known: {', '.join(EXPORT_FORMATS)}")
