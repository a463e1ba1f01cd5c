"""IF-Bench ``--perturb options:shuffle`` against its unperturbed twin, end to end over HTTP, on the demo data: a
scripted model that is right only on the option orders of circular evaluation (it knows those prompts) and picks
the next letter on any other order gives, in ``compare``, +100 points on every dimension and language."""

from __future__ import annotations

import pytest

from lensbench.benchmarks.context import RunContext
from lensbench.benchmarks.ifbench.benchmark import IFBench
from lensbench.views.compare import compare_runs
from lensbench.views.runs import read_run
from lensbench.runtime.runner import RunSettings, run_benchmark
from lensbench.testing.server import FakeOpenAIServer


def _ctx(tmp_path) -> RunContext:
    async def _gen(reqs, label):  # pragma: no cover - nothing is sent here
        raise AssertionError

    return RunContext(run_dir=tmp_path / "x", data_dir=tmp_path, seed=0, generate=_gen, has_judge=False, model_name="m")


def test_option_order_shuffle_paired_effect(tmp_path):
    data = IFBench.write_demo(tmp_path / "demo")
    qs = list(IFBench().load(data))
    known = {r.messages[0].parts[-1].text: r.meta["target"] for r in IFBench().expand(qs, _ctx(tmp_path))}
    shuffled = IFBench(IFBench.Options(perturb="options:shuffle")).expand(qs, _ctx(tmp_path))
    other = {r.messages[0].parts[-1].text: "ABCD"[("ABCD".index(r.meta["target"]) + 1) % 4] for r in shuffled}
    assert not known.keys() & other.keys()  # no perturbed prompt shows an order of circular evaluation

    def respond(body: dict) -> str:
        text = [p["text"] for p in body["messages"][-1]["content"] if p.get("type") == "text"][-1]
        return known.get(text) or other[text]

    with FakeOpenAIServer(respond) as srv:
        for name, perturb in (("plain", None), ("shuffled", "options:shuffle")):
            run_benchmark(IFBench(IFBench.Options(perturb=perturb)),
                          RunSettings(model="openai:fake", base_url=[srv.url], out=tmp_path / name, data_dir=data,
                                      progress=False))
    cmp = compare_runs(read_run(tmp_path / "plain"), read_run(tmp_path / "shuffled"), n_resamples=200)
    assert cmp.n_shared == len(qs) * 2 * 4 and cmp.n_only_a == cmp.n_only_b == 0
    assert any("perturbed input (options:shuffle)" in n for n in cmp.notes)
    dims = sorted({q.abbrev for q in qs})
    diffs = {(r["metric"], r["category"]): (r["a"], r["b"], r["diff"]) for r in cmp.rows}
    headline = [k for k in diffs if k[1] in dims or k[1] in ("Avg", "en", "zh")]
    assert {k[1] for k in headline} == {*dims, "Avg", "en", "zh"}
    for k in headline:
        assert diffs[k] == pytest.approx((100.0, 0.0, 100.0))
    assert all(v[2] == pytest.approx(100.0) for v in diffs.values() if v[2] is not None)
    # the IF-Bench tables tag the perturbed run's row, not the plain one
    table = IFBench().tables([read_run(tmp_path / "shuffled").result, read_run(tmp_path / "plain").result])
    rows = [line for line in table.splitlines() if line.startswith("| fake")]
    assert any("perturbed input: options:shuffle" in line for line in rows)
    assert any("perturbed" not in line for line in rows)
