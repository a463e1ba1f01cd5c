"""Each headline metric is computed once: a benchmark's result values are its unit tables' values, to the
last bit, and the CIs resample those tables (issue 21). grounding-rej gets its leaderboard column and CI
through the same mechanism."""

from __future__ import annotations

import json
import random

import pytest

from contract import contract_names, data_for, scored_records
from lensbench.benchmarks.crafting import Crafter
from lensbench.benchmarks.registry import get_benchmark
from lensbench.core.errors import ConfigError
from lensbench.core.records import SampleRecord
from lensbench.views.leaderboard import build_leaderboard
from lensbench.views.runs import read_run
from lensbench.scoring.intervals import interval_block
from lensbench.testing.runs import write_run

def _records(name, cls, seed, tmp_path):
    """Its crafted records (``crafted`` module), else records of its own steps on its demo (or the toy's) data."""
    try:
        return cls.craft_records(Crafter(name, 120, random.Random(seed), 0.55, 0.05, tmp_path))
    except ConfigError:
        return scored_records(cls, data_for(name, cls, tmp_path), seed)


@pytest.mark.parametrize("contract_bench", contract_names(), indirect=True)
@pytest.mark.parametrize("seed", [0, 7])
def test_result_values_are_the_unit_table_values_bit_for_bit(contract_bench, seed, tmp_path):
    """Every registered benchmark (plugins and tests/toybench included)."""
    name, cls = contract_bench
    recs = _records(name, cls, seed, tmp_path)
    metrics, _counts = cls().aggregate(recs)
    tables = cls.unit_tables(recs)
    assert tables and cls.headlines
    compared = 0
    for h in cls.headlines:
        t = tables[h.metric]
        block = metrics[h.metric]
        assert cls.headline_value(block, h.column) == t.value(h.category)  # exact, not approx
        for cat in t.categories:
            if cat in block:
                assert block[cat] == t.value(cat), (name, h.metric, cat)
                compared += 1
    assert compared >= 3
    # the CI block stores the same point values
    block = interval_block(tables, cls.cluster, n_resamples=50)
    for key, t in block["tables"].items():
        for cat, (value, *_rest) in t["intervals"].items():
            assert value == tables[key].value(cat)


def _item(i: int, negative: bool, right: bool) -> SampleRecord:
    hit = int(right)
    return SampleRecord(benchmark="grounding-rej", sample_id=f"it{i}", outcome="correct" if right else "wrong",
                        scores={"iou": None if negative else (0.8 if right else 0.1), "hit@0.5": hit},
                        labels={"L-1": "Rejection" if negative else "Positive",
                                "L-2": "RefCOCOg_rej_val" if negative else "RefCOCOg_val"},
                        extra={"rejected": negative == right})


def test_grounding_rej_headline_is_the_macro_average_with_a_ci(tmp_path):
    cls = get_benchmark("grounding-rej")
    # positives 6 of 8 right (75 %), negatives 1 of 4 (25 %): Macro_Average 50, Total 7 / 12
    recs = [_item(i, False, i < 6) for i in range(8)] + [_item(8 + i, True, i < 1) for i in range(4)]
    metrics, counts = cls().aggregate(recs)
    acc = metrics["Acc@0.5"]
    assert (acc["Positives"], acc["Negatives"], acc["Macro_Average"]) == (75.0, 25.0, 50.0)
    assert acc["Total"] == pytest.approx(700 / 12) and counts["n"] == 12
    run = write_run(tmp_path / "rej", "grounding-rej", "m", recs, metrics)
    doc = json.loads((run / "result.json").read_text())
    doc["ci"] = interval_block(cls.unit_tables(recs), cls.cluster)
    (run / "result.json").write_text(json.dumps(doc))
    lb = build_leaderboard([read_run(run)], n_resamples=200)
    head = [c for c in lb.cells if c.headline]
    assert [(c.benchmark, c.metric, c.category, c.value) for c in head] == [
        ("grounding-rej", "Acc@0.5", "Macro_Average", 50.0)]
    assert head[0].ci_low is not None and head[0].ci_low <= 50.0 <= head[0].ci_high and head[0].n == 12
    assert not lb.unfinished
