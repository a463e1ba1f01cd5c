"""The benchmark steps have one shape (issue 21): ``load`` returns the samples and its counts and leaves
nothing on the benchmark object; every request names its sample in ``meta``; the base class groups the
replies by sample (never by position) and turns a missing or failed reply into an ``error`` record."""

from __future__ import annotations

import importlib.util
import random

import pytest

from contract import contract_names, data_for
from lensbench.benchmarks.registry import get_benchmark
from lensbench.benchmarks.steps import Loaded
from lensbench.core.types import StoredResponse



def _demo(name, tmp_path):
    if name == "iv-bench" and importlib.util.find_spec("av") is None:
        pytest.skip("IV-Bench demo videos need PyAV")
    if name == "groundingme" and importlib.util.find_spec("pyarrow") is None:
        pytest.skip("GroundingME parquet needs pyarrow")
    return get_benchmark(name).write_demo(tmp_path / "demo")


@pytest.mark.parametrize("contract_bench", contract_names("demo"), indirect=True)
def test_load_returns_samples_and_counts_and_leaves_no_state(contract_bench, tmp_path):
    """Every registered benchmark with demo data (plugins and tests/toybench included)."""
    name, cls = contract_bench
    data = data_for(name, cls, tmp_path)
    bench = cls()
    before = dict(vars(bench))
    loaded = bench.load(data)
    assert isinstance(loaded, Loaded) and isinstance(loaded.counts, dict) and len(loaded) > 0
    assert vars(bench).keys() == before.keys() and all(vars(bench)[k] is v for k, v in before.items())
    assert len({bench.sample_id(s) for s in loaded}) == len(loaded)  # every sample has its own id


def _reply(rid: str, text: str | None) -> StoredResponse:
    if text is None:
        return StoredResponse(key=rid, request_id=rid, status="error", text=None, error="HTTP 502")
    return StoredResponse(key=rid, request_id=rid, status="ok", text=text)


@pytest.mark.parametrize("name", ["rgb-th-bench", "if-bench"])
def test_replies_are_grouped_by_sample_not_by_position(name, tmp_path):
    bench = get_benchmark(name)()
    samples = bench.load(_demo(name, tmp_path))
    requests = bench.expand(samples, None)
    assert all(r.meta["sample_id"] in {bench.sample_id(s) for s in samples} for r in requests)
    rng = random.Random(3)
    replies = {r.id: _reply(r.id, rng.choice(["Yes", "No", "A", "B", "maybe", None])) for r in requests[1:]}
    in_order = bench.score(samples, requests, replies)
    shuffled = list(requests)
    rng.shuffle(shuffled)
    again = bench.score(samples, shuffled, replies)
    # each reply lands on its own request's record, whatever the order the requests come in ...
    assert {r.sample_id: r.model_dump() for r in again} == {r.sample_id: r.model_dump() for r in in_order}
    # ... and the records follow the samples' order (within a sample, the requests' order)
    of = {r.id: r.meta["sample_id"] for r in requests}
    order = [bench.sample_id(s) for s in samples]
    assert [of[r.sample_id] for r in again] == sorted((of[r.sample_id] for r in again), key=order.index)
    assert [r.sample_id for r in in_order] == [r.id for r in requests]  # one record per request, sample order
    # the request without a reply and the failed ones are errors, never scored, with the request's facts
    missing = next(r for r in in_order if r.sample_id == requests[0].id)
    assert missing.outcome == "error" and missing.error == "no reply" and missing.target == requests[0].meta["target"]
    failed = [r for r in in_order if r.sample_id in replies and not replies[r.sample_id].ok]
    assert failed and all(r.outcome == "error" and r.error == "HTTP 502" and r.labels for r in failed)


def test_groundingme_expands_like_the_others(tmp_path):
    """GroundingME has an ``expand`` step (35.5): ``--best-of N`` requests per item, each naming its item; the
    base class's ``score`` groups the replies into one record per item, a failed sample never selected."""
    from lensbench.benchmarks.context import RunContext

    async def _never(requests, label):  # expand sends nothing
        raise AssertionError("expand sent a request")

    cls = get_benchmark("groundingme")
    bench = cls(cls.Options(best_of=3))
    samples = bench.load(cls.write_demo(tmp_path / "demo"))
    ctx = RunContext(run_dir=tmp_path / "run", data_dir=tmp_path, seed=5, generate=_never, has_judge=False,
                     model_name="m")
    requests = bench.expand(samples, ctx)
    assert len(requests) == 3 * len(samples) and len({r.id for r in requests}) == len(requests)
    assert [r.meta["sample_id"] for r in requests] == [s.id for s in samples for _ in range(3)]
    assert [r.params.seed for r in requests[:3]] == [5, 6, 7] and {r.params.temperature for r in requests} == {0.7}
    box = samples[0].bbox
    replies = {r.id: _reply(r.id, None if r.meta["sample_index"] == 0 else
                            '{"bbox_2d": %s}' % [int(v) for v in box]) for r in requests}
    records = bench.score(samples, list(reversed(requests)), replies)
    assert [r.sample_id for r in records] == [s.id for s in samples]
    assert records[0].extra["selected_index"] == 1 and records[0].scores["hit@0.5"]
