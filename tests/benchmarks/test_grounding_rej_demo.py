"""``grounding-rej`` (GroundingME's Sec. 5.3 variant) has demo data in its own items format: its loader reads it
and a run on it scores positives and negatives as Tab. 5 does."""

from __future__ import annotations

import json

import lensbench
from lensbench.benchmarks.registry import get_benchmark


def test_demo_is_an_items_file_its_loader_reads(tmp_path):
    cls = get_benchmark("grounding-rej")
    root = cls.write_demo(tmp_path / "demo")
    lines = [json.loads(ln) for ln in (root / "items.jsonl").read_text().splitlines()]
    samples = cls().load(root)
    assert [s.id for s in samples] == [it["id"] for it in lines]
    assert [s.subtask_l1 for s in samples] == ["Rejection" if it["bbox"] is None else "Positive" for it in lines]
    assert all((root / it["image"]).is_file() for it in lines)


def test_always_reject_on_the_demo_scores_negatives_only(tmp_path):
    root = get_benchmark("grounding-rej").write_demo(tmp_path / "demo")
    lines = [json.loads(ln) for ln in (root / "items.jsonl").read_text().splitlines()]
    n_neg = sum(it["bbox"] is None for it in lines)
    res = lensbench.run("grounding-rej", model='constant:{"bbox_2d": null}', out=tmp_path / "run", data_dir=root)
    acc = res.metrics["Acc@0.5"]
    assert (acc["demo_val"], acc["demo_rej_val"], acc["Macro_Average"]) == (0.0, 100.0, 50.0)
    assert acc["Total"] == 100.0 * n_neg / len(lines)
    assert res.counts["sets"] == {"demo_val": len(lines) - n_neg, "demo_rej_val": n_neg}
