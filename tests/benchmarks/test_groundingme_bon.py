"""GroundingME best-of-N (Sec. 5.2, Table 4): N samples, the pairwise knockout with the text-only
(Table 11) and multimodal (Table 10) judges, retries and the fixed rule."""

from __future__ import annotations

import pytest

from groundingme_fixture import bon_model, by_id, combined, ctx, fixture_dir, ok, run, text_judge  # noqa: F401
from lensbench.benchmarks.base import RunResult
from lensbench.benchmarks.groundingme.benchmark import GroundingME
from lensbench.benchmarks.groundingme.data import load_groundingme
from lensbench.core.errors import ConfigError

Opts = GroundingME.Options


def test_best_of_n_text_judge(fixture_dir, tmp_path):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")
    good = {"gm-0": {3}, "gm-1": set(), "gm-2": {0, 1, 2, 3, 4}, "gm-3": {4}, "gm-4": {1}, "gm-5": {0}}
    sent = []

    def spy(reqs):
        sent.extend(reqs)
        return combined(bon_model(good), text_judge())(reqs)

    bench = GroundingME(Opts(best_of=5, bon_judge="text-full-responses"))
    recs = run(bench, samples, ctx(tmp_path, spy, has_judge=True))
    model_reqs = [r for r in sent if r.role == "model"]
    assert len(model_reqs) == 6 * 5
    assert {r.params.temperature for r in model_reqs} == {0.7}
    assert len({r.params.seed for r in model_reqs}) == 5  # distinct seeds
    # N=5 knockout: 2 + 1 + 1 matches per item, one judge call each
    assert all(len(r.extra["knockout"]["matches"]) == 4 for r in recs)
    assert all(len(r.judge) == 4 and {j.kind for j in r.judge} == {"pairwise"} for r in recs)
    judge_reqs = [r for r in sent if r.role == "judge"]
    assert judge_reqs and all(not r.images for r in judge_reqs)  # text-only judge sees no image
    assert "trajectory" in judge_reqs[0].text and "<think>" in judge_reqs[0].text
    by = by_id(recs)
    for sid, ks in good.items():  # the judge finds the careful trajectory whenever there is one
        assert by[sid].extra["bon"]["selected_hit"] == bool(ks)
        assert by[sid].extra["bon"]["oracle_hit"] == bool(ks)
        assert by[sid].extra["bon"]["mean_hit"] == pytest.approx(len(ks) / 5)
        assert by[sid].request_id == f"{sid}#{by[sid].extra['selected_index']}"
    m, c = bench.aggregate(recs)
    assert m["BoN average"]["Total"] == pytest.approx(100 * (1 + 0 + 5 + 1 + 1 + 1) / 30)
    assert m["BoN selected"]["Total"] == pytest.approx(500 / 6)
    assert m["BoN oracle"]["Total"] == pytest.approx(500 / 6)
    assert m["BoN selected"]["Rejection"] == 100.0
    assert c["judge_fallbacks"] == 0 and c["judge_matches"] == 24 and c["judge_mode"] == "text"
    res = RunResult(benchmark="groundingme", model="m", metrics=m, counts=c,
                    options=bench.options.model_dump(mode="json"))
    md = bench.tables([res], with_paper=True)
    assert "Table 4" in md and "Oracle best-of-5" in md and "Deepseek-R1" in md
    assert "judge text-full-responses" in md


def test_best_of_n_judge_retry_and_fallback(fixture_dir, tmp_path):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")[:2]
    good = {"gm-0": {1}, "gm-1": {1}}
    # retry succeeds: same selections as a clean judge, no fallbacks, 2 attempts per match
    b1 = GroundingME(Opts(best_of=2, bon_judge="text-full-responses", judge_retries=1))
    recs = run(b1, samples, ctx(tmp_path / "a", combined(bon_model(good), text_judge(fail_first=True)), True))
    assert all(r.extra["bon"]["selected_hit"] for r in recs)
    assert all(mt["attempts"] == 2 and not mt["fallback"] for r in recs for mt in r.extra["knockout"]["matches"])
    assert all([j.verdict for j in r.judge] == [None, "B"] for r in recs)
    # no retries: the fixed rule (candidate A = sample 0, the bad one) decides and is counted
    b0 = GroundingME(Opts(best_of=2, bon_judge="text-full-responses", judge_retries=0))
    recs = run(b0, samples, ctx(tmp_path / "b", combined(bon_model(good), text_judge(fail_first=True)), True))
    assert all(r.extra["selected_index"] == 0 for r in recs)
    _, c = b0.aggregate(recs)
    assert c["judge_fallbacks"] == 2


def test_multimodal_judge_sees_image_and_boxes(fixture_dir, tmp_path):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")[:1]
    seen = []

    def judge(reqs):
        seen.extend(reqs)
        return {rq.id: ok(rq, "Bbox B fits.\n\\boxed{B}") for rq in reqs}

    bench = GroundingME(Opts(best_of=2, bon_judge="mm-image-boxes"))
    recs = run(bench, samples, ctx(tmp_path, combined(bon_model({"gm-0": {1}}), judge), True))
    assert len(seen) == 1 and len(seen[0].images) == 1
    assert "Bbox A: [0, 0, 5, 5]" in seen[0].text and "Bbox B: [180, 50, 330, 230]" in seen[0].text
    assert recs[0].extra["selected_index"] == 1 and recs[0].outcome == "correct"
    assert recs[0].answer == [180.0, 50.0, 330.0, 230.0]


def test_judge_needs_backend(fixture_dir, tmp_path):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")[:1]
    bench = GroundingME(Opts(best_of=2, bon_judge="text-full-responses:openai:r1"))
    assert bench.judge_spec() == "openai:r1"
    with pytest.raises(ConfigError, match="--judge-model openai:r1"):
        run(bench, samples, ctx(tmp_path, bon_model({}), has_judge=False))
    with pytest.raises(ConfigError, match="--best-of 2"):
        run(GroundingME(Opts(bon_judge="mm-image-boxes")), samples, ctx(tmp_path, bon_model({}), has_judge=True))
    for bad in ("vision", "text", "mm"):
        with pytest.raises(ValueError):
            Opts(bon_judge=bad)
