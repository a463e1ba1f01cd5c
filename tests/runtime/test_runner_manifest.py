"""run.json is written as few times as correctness needs (issue 21): once as the run starts (with a copy in
the store, so a killed run resumes and its manifest can be rebuilt) and once when it ends, finished or stopped."""

from __future__ import annotations

import json

import pytest

from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.runtime import folder, runner
from lensbench.runtime.engine import EndpointDown
from lensbench.runtime.settings import RunSettings
from lensbench.runtime.store import RunStore


@pytest.fixture
def writes(monkeypatch) -> list[dict]:
    """Every run.json written by the runner (a copy of the document at each write)."""
    seen: list[dict] = []
    real = folder.write_json

    def spy(path, obj):
        if path.name == folder.MANIFEST:
            seen.append(json.loads(json.dumps(obj, default=str)))
        real(path, obj)

    monkeypatch.setattr(runner, "write_json", spy)
    return seen


def test_a_finished_run_writes_its_manifest_twice(rgbth_gen, tmp_path, writes):
    out = tmp_path / "run"
    res = runner.run_benchmark(RGBThBench(), RunSettings(model="constant:Yes", out=out, data_dir=rgbth_gen,
                                                         limit=16, progress=False))
    assert len(writes) == 2
    start, end = writes
    assert "wall_s" not in start and "finished" not in start and start["n_samples"] == 16
    assert end["counts"] == res.counts and end["engine"]["unique"] == res.counts["n_questions"] and end["wall_s"] >= 0 and end["finished"]
    on_disk = json.loads((out / "run.json").read_text())
    with RunStore(out) as store:
        assert json.loads(store.get_meta("manifest")) == on_disk == end  # the store's copy is the finished one


def test_a_stopped_run_writes_what_it_did_then_stops(rgbth_gen, tmp_path, writes, monkeypatch):
    monkeypatch.setenv("LENSBENCH_TEST_KEY", "x")
    out = tmp_path / "run"
    s = RunSettings(model="openai:m", base_url=["http://127.0.0.1:9/v1"], out=out, data_dir=rgbth_gen, limit=8,
                    progress=False, max_retries=0, api_key_env="LENSBENCH_TEST_KEY")
    with pytest.raises(EndpointDown):
        runner.run_benchmark(RGBThBench(), s)
    assert len(writes) == 2
    end = json.loads((out / "run.json").read_text())
    assert end == writes[-1] and "finished" not in end and "counts" not in end
    # two refused requests stored as errors, the third refused connection stopped the run
    assert end["wall_s"] >= 0 and end["engine"]["errors"] == 2 and end["store_counts"] == {"ok": 0, "error": 2}
