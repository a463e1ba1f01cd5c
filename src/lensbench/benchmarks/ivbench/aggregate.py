"""IV-Bench metrics from SampleRecords: Table 2 accuracy per task, P-Avg / R-Avg / Overall, sweeps.

Paper Table 2 and IV-Bench README, Protocol: accuracy (%) per task; P-Avg, R-Avg and Overall are sample-weighted
(micro) means over the perception / reasoning / all scored items, not means of the task
columns. Unparseable replies are scored wrong (counted); ``error`` records (transport failure,
undecodable video) are left out of every score and counted.

Record fields read: ``outcome``, ``labels.task`` (``question_type``), ``labels.frames``,
``labels.resolution``, ``labels.video_id``, ``labels.data_id``, ``extra.n_options``,
``extra.error_kind`` and the ``extra`` de-duplication counts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from lensbench.benchmarks.ivbench.data import PERCEPTION, REASONING, TABLE2_COLUMNS, TASK_ABBREV
from lensbench.benchmarks.ivbench.sweep import config_key, config_label
from lensbench.benchmarks.ivbench.units import accuracy_table, config_of, table2_block
from lensbench.core.records import SampleRecord, count_outcomes

__all__ = ["table2_accuracy", "aggregate_records"]

Config = tuple[int, Any]


def table2_accuracy(records: Sequence[SampleRecord]) -> tuple[dict[str, float | None], dict[str, float | None],
                                                              dict[str, int]]:
    """``(accuracy, chance, n)`` per Table 2 column over the non-error records of one configuration.

    ``accuracy[col]``: 100 * correct / scored, from the configuration's unit table
    (:func:`~lensbench.benchmarks.ivbench.units.accuracy_table`; None for a column with no scored
    record); ``chance[col]``: expected accuracy of a uniform random guess, 100 * mean(1 / n_options);
    ``n[col]``: scored records. Columns: :data:`TABLE2_COLUMNS`.
    """
    acc, n = table2_block(accuracy_table(records))
    scored = [r for r in records if r.outcome != "error"]
    members = {"Overall": scored, "P-Avg": [r for r in scored if r.labels["task"] in PERCEPTION],
               "R-Avg": [r for r in scored if r.labels["task"] in REASONING],
               **{ab: [r for r in scored if r.labels["task"] == task] for task, ab in TASK_ABBREV.items()}}
    chance = {c: 100.0 * sum(1.0 / r.extra["n_options"] for r in members[c]) / len(members[c]) if members[c] else None
              for c in TABLE2_COLUMNS}
    return acc, chance, n


def aggregate_records(records: Sequence[SampleRecord], configs: Sequence[Config], *, frame_rule: str, pattern: str,
                      noted: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(metrics, counts)`` of a run: Table 2 columns for the first config, a ``sweep`` for all.

    ``metrics = {"accuracy": {col: %}, "chance": {col: %}, "config": {frames, resolution,
    frame_rule, pattern}, "sweep": [...] (only with more than one config)}``; configs (those of
    ``configs`` and any other found in the records) in :func:`~lensbench.benchmarks.ivbench.sweep.config_key` order:
    frames, then short side. ``counts``: ``n`` scored,
    ``n_records``, ``n_correct``, ``n_unparseable``, ``n_error`` (transport + video),
    ``n_video_error``, ``n_transport_error``, ``n_items``, ``n_configs``, de-duplication counts
    per item, ``per_task`` scored counts (first config), then ``noted`` (what loading and decoding counted:
    skipped media, videos decoded ...).
    """
    by_cfg: dict[Config, list[SampleRecord]] = defaultdict(list)
    for r in records:
        by_cfg[config_of(r)].append(r)
    order = sorted(by_cfg, key=config_key)
    sweep = []
    for c in order:
        rs = by_cfg[c]
        acc, _chance, n = table2_accuracy(rs)
        oc = count_outcomes(rs)
        sweep.append({"frames": c[0], "resolution": c[1], "label": config_label(*c), "accuracy": acc,
                      "n": n["Overall"], "n_unparseable": oc["n_unparseable"], "n_error": oc["n_error"]})
    first = by_cfg[order[0]] if order else []
    acc, chance, n = table2_accuracy(first)
    metrics: dict[str, Any] = {"accuracy": acc, "chance": chance,
                               "config": {"frames": order[0][0] if order else None,
                                          "resolution": order[0][1] if order else None,
                                          "frame_rule": frame_rule, "pattern": pattern}}
    if len(order) > 1:
        metrics["sweep"] = sweep
    items = {(r.labels["video_id"], r.labels["data_id"]): r.extra for r in records}
    oc = count_outcomes(records)
    kinds = [r.extra.get("error_kind") for r in records if r.outcome == "error"]
    counts: dict[str, Any] = {
        "n": oc["n"],
        "n_records": len(records),
        "n_correct": oc["n_correct"],
        "n_unparseable": oc["n_unparseable"],
        "n_error": oc["n_error"],
        "n_video_error": kinds.count("video"),
        "n_transport_error": kinds.count("transport"),
        "n_items": len(items),
        "n_configs": len(order),
        "n_duplicate_answers_removed": sum(e["dup_answer_removed"] for e in items.values()),
        "n_items_duplicate_answer": sum(e["dup_answer_removed"] > 0 for e in items.values()),
        "n_duplicate_distractors_removed": sum(e["dup_distractor_removed"] for e in items.values()),
        "n_empty_distractors_removed": sum(e["empty_distractor_removed"] for e in items.values()),
        "per_task": {ab: n[ab] for ab in TABLE2_COLUMNS if ab not in ("Overall", "P-Avg", "R-Avg")},
    }
    for k, v in (noted or {}).items():
        counts.setdefault(k, v)
    return metrics, counts
