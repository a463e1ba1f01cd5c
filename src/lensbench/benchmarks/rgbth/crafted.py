"""Crafted RGB-Th-Bench records (:mod:`lensbench.benchmarks.crafting`): 6 skills x 4 questions per scene,
RGB-Txt skills with the RGB image, RGB-Th-Txt ones with the pair; labels as :meth:`RGBThBench.score` writes."""

from __future__ import annotations

from lensbench.benchmarks.crafting import Crafter
from lensbench.benchmarks.rgbth.data import RGB_TH_TXT, RGB_TXT, SKILLS
from lensbench.core.records import SampleRecord

__all__ = ["craft_records"]

_ABBREVS = ["Scene", "ObjPr", "Attr", "Temp2Col", "HeatAlign", "Warmest"]
_NAME = {ab: name for name, (ab, _g) in SKILLS.items()}


def craft_records(c: Crafter) -> list[SampleRecord]:
    """About ``c.n`` question records on ``c.n // 24`` scenes (at least one)."""
    out = []
    for s in range(max(1, c.n // (4 * len(_ABBREVS)))):
        scene = f"Source 1/Scene{s}"
        rgb = c.image(f"rgb{s}.png", s)
        th = c.image(f"th{s}.png", 1000 + s)
        for sk_i, ab in enumerate(_ABBREVS):
            pair = sk_i >= 3
            for j in range(4):
                target = ["Yes", "No"][(s + sk_i + j) % 2]
                o = c.outcome()
                ans = target if o == "correct" else (None if o in ("unparseable", "error") else
                                                     ("No" if target == "Yes" else "Yes"))
                text = f"Based on this image, answer with Yes or No.\nIs there a thing number {j} in {ab}?"
                out.append(c.record(f"{scene}/{ab}/{j}", [rgb, th, {"type": "text", "text": text}]
                                    if pair else [rgb, {"type": "text", "text": text}], o, answer=ans, target=target,
                                    reply=ans or "I cannot tell", reasoning="<think>look</think>" if j == 0 else None,
                                    labels={"skill": _NAME[ab], "abbrev": ab, "group": RGB_TH_TXT if pair else RGB_TXT,
                                            "scene": scene, "extra": False}))
    return out
