"""Crafted IF-Bench data for tests: a tiny if_bench.json with distinct images, and a fake run context.

Nothing here computes an expected score: tests do that by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from lensbench.benchmarks.base import RunContext
from lensbench.core.types import StoredResponse

L = "ABCD"


def question(dim: str, answer: str, n: int, image: str) -> dict:
    """One record in the release layout; options ``"<dim> opt <X><n>"`` / ``"选项<X><n>"``."""
    return {"dataset": "FLIR", "dst_thermal_path": image,
            "question": {"dimension": dim, "answer": answer, "en_question": f"Q{n}: which one?",
                         "en_options": {x: f"{dim} opt {x}{n}" for x in L},
                         "cn_question": f"问题{n}：哪一个？", "cn_options": {x: f"选项{x}{n}" for x in L}}}


def write_bench(root: Path, records: dict[str, list[dict]]) -> Path:
    """``root/if_bench.json`` + ``root/infrared_imgs`` + ``root/translated_rgb_imgs`` (8x8 images,
    distinct per file); returns ``root``."""
    (root / "infrared_imgs").mkdir(parents=True, exist_ok=True)
    (root / "translated_rgb_imgs").mkdir(parents=True, exist_ok=True)
    names = sorted({r["dst_thermal_path"] for lst in records.values() for r in lst})
    for i, n in enumerate(names):
        Image.new("L", (8, 8), 10 + i).save(root / "infrared_imgs" / n)
        Image.new("RGB", (8, 8), (200, 10 + i, 30)).save(root / "translated_rgb_imgs" / n)
    (root / "if_bench.json").write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return root


class FakeGenerate:
    """``ctx.generate`` stand-in: ``reply(request) -> str`` (or an Exception instance = transport
    error). Records every request it was given, in order."""

    def __init__(self, reply):
        self.reply = reply
        self.sent = []

    async def __call__(self, requests, label):
        out = {}
        for r in requests:
            self.sent.append(r)
            v = self.reply(r)
            if isinstance(v, Exception):
                out[r.id] = StoredResponse(key=r.id, request_id=r.id, status="error", text=None, error=str(v))
            else:
                out[r.id] = StoredResponse(key=r.id, request_id=r.id, status="ok", text=v)
        return out


def fake_ctx(tmp_path: Path, reply, has_judge: bool = True) -> tuple[RunContext, FakeGenerate]:
    """A RunContext whose generate is a :class:`FakeGenerate` over ``reply``."""
    gen = FakeGenerate(reply)
    ctx = RunContext(run_dir=tmp_path / "run", data_dir=tmp_path, seed=0, generate=gen, has_judge=has_judge,
                     model_name="fake")
    return ctx, gen


def shown_options(text: str) -> dict[str, str]:
    """The options dict a prompt shows (its last ``{...}``), read with ast.literal_eval."""
    import ast
    return ast.literal_eval(text[text.rindex("{'A'"): text.rindex("}") + 1])
