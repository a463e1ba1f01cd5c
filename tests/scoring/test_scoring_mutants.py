"""Edge cases of the shared scoring helpers that mutation testing (devtools/mutate.py) found unguarded.

Every expected value is worked out by hand (shown in the comments) or by an independent library
(numpy / scipy / math.comb), never by calling the code under test twice.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from lensbench.scoring.bbox import (box_from_value, center_in_box, find_key_boxes, iou, scale_box, smart_resize,
                                    to_original_pixels)
from lensbench.scoring.metrics import binomial_threshold, correlation, mean
from lensbench.scoring.text import extract_json_object, parse_yes_no, strip_reasoning


# ------------------------------------------------------------------------------------------------ bbox
def test_key_boxes_nested_null_and_quoted_numbers():
    text = 'a {"bbox_2d": [[10, 20, 30, 40]]} b bbox_2d = null c \'bbox_2d\': ["1", \'2\', 3, 4.5] d bbox_2d: [1, 2, 3]'
    # nested list -> unwrapped; null -> None; quoted numbers read by the numeric fallback; 3 numbers skipped
    assert find_key_boxes(text) == [(10.0, 20.0, 30.0, 40.0), None, (1.0, 2.0, 3.0, 4.5)]


def test_key_box_followed_by_a_brace_is_cut_at_its_bracket():
    # the value is exactly "[1, 2, 3, 4]"; the following "}" must not be read as part of it
    assert find_key_boxes('{"bbox_2d": [1, 2, 3, 4]}') == [(1.0, 2.0, 3.0, 4.0)]
    assert find_key_boxes("bbox_2d: [5, 6, 7, 8]}") == [(5.0, 6.0, 7.0, 8.0)]


def test_box_from_value_cases():
    assert box_from_value(None) == (True, None)
    assert box_from_value([[1, 2, 3, 4]]) == (True, (1.0, 2.0, 3.0, 4.0))
    assert box_from_value(["x", 1, 2, 3]) == (False, None)
    assert box_from_value([1, 2, 3, float("nan")]) == (False, None)
    assert box_from_value([1, 2, 3]) == (False, None)
    assert box_from_value([[1, 2, 3, 4], [5, 6, 7, 8]]) == (False, None)


def test_iou_asymmetric_boxes():
    a, b = (0.0, 0.0, 4.0, 2.0), (1.0, 1.0, 5.0, 4.0)
    # overlap x 1..4 (3), y 1..2 (1) -> 3; areas 8 and 12; union 17
    assert iou(a, b) == pytest.approx(3 / 17)
    assert iou(b, a) == pytest.approx(3 / 17)
    # x1 != y1 in both boxes: areas 4x2 = 8 each, overlap x 2..5 (3) by y 2..3 (1) -> 3 / 13
    assert iou((1.0, 2.0, 5.0, 4.0), (2.0, 1.0, 6.0, 3.0)) == pytest.approx(3 / 13)
    assert iou((2.0, 1.0, 6.0, 3.0), (1.0, 2.0, 5.0, 4.0)) == pytest.approx(3 / 13)
    # b inside a: 2x1 inside 4x2 -> 2 / 8
    assert iou((0, 0, 4, 2), (1, 0.5, 3, 1.5)) == pytest.approx(0.25)


def test_iou_disjoint_degenerate_and_missing():
    # apart in x, overlapping in y: no intersection
    assert iou((0, 0, 1, 1), (2, 0, 3, 1)) == 0.0
    # apart in y, overlapping in x
    assert iou((0, 0, 1, 1), (0, 2, 1, 3)) == 0.0
    # zero-area boxes: union 0 -> 0, not 1
    assert iou((0, 0, 0, 0), (0, 0, 0, 0)) == 0.0
    assert iou(None, (0, 0, 1, 1)) == 0.0
    assert iou((0, 0, 1, 1), None) == 0.0
    assert iou((0, 0, 1, 1), (0, 0, 1, 1)) == 1.0


def test_center_in_box_inside_outside_and_borders():
    gt = (0.0, 0.0, 10.0, 20.0)
    assert center_in_box(gt, (10, 10, 10, 30)) is True        # centre (10, 20): corner, borders included
    assert center_in_box(gt, (0, 0, 0, 0)) is True            # centre (0, 0): other corner
    assert center_in_box(gt, (12, 0, 12, 2)) is False          # centre x 12 > 10
    assert center_in_box(gt, (2, 0, 4, 2)) is True             # centre (3, 1)
    assert center_in_box(gt, (2, 30, 4, 30)) is False          # centre y 30 > 20
    assert center_in_box(gt, (-4, 0, -2, 2)) is False          # centre x -3 < 0


def test_smart_resize_round_scale_down_scale_up_and_aspect_limit():
    # defaults (factor 28): round(1000/28)=36 -> 1008, round(2000/28)=71 -> 1988; 1008*1988 within bounds
    assert smart_resize(1000, 2000) == (1008, 1988)
    # over max_pixels: beta = sqrt(100*200/5000) = 2 -> floor(100/2/10)*10 = 50, floor(200/2/10)*10 = 100
    assert smart_resize(100, 200, factor=10, min_pixels=100, max_pixels=5000) == (50, 100)
    # under min_pixels: beta = sqrt(3200/800) = 2 -> ceil(20*2/10)*10 = 40, ceil(40*2/10)*10 = 80
    assert smart_resize(20, 40, factor=10, min_pixels=3200, max_pixels=10 ** 6) == (40, 80)
    # aspect ratio exactly 200 is allowed: h -> max(28, 0) = 28, w -> round(200/28)=7 -> 196
    assert smart_resize(1, 200) == (28, 196)
    with pytest.raises(ValueError):
        smart_resize(1, 201)


def test_scale_box_and_conventions():
    assert scale_box((1, 2, 3, 4), 2, 3) == (2, 6, 6, 12)
    box = (100, 200, 300, 400)
    # abs: sent 100x50, original 200x200 -> sx 2, sy 4
    assert to_original_pixels((10, 10, 20, 20), "abs", sent_size=(100, 50), orig_size=(200, 200)) == (20, 40, 40, 80)
    # rel1000 on a 2000x500 original -> sx 2, sy 0.5
    assert to_original_pixels(box, "rel1000", sent_size=(1, 1), orig_size=(2000, 500)) == (200, 100, 600, 200)
    # yxyx1000: (y1, x1, y2, x2) -> x1=200, y1=100, x2=400, y2=300, scaled 2 / 0.5
    assert to_original_pixels(box, "yxyx1000", sent_size=(1, 1), orig_size=(2000, 500)) == (400, 50, 800, 150)
    assert to_original_pixels((0.1, 0.2, 0.5, 1.0), "rel1", sent_size=(1, 1), orig_size=(200, 100)) == \
        pytest.approx((20, 20, 100, 100))
    # abs-resized: sent 2000x1000 -> smart_resize(1000, 2000) = (1008, 1988); original 1000x500
    got = to_original_pixels((1988, 1008, 1988, 1008), "abs-resized", sent_size=(2000, 1000), orig_size=(1000, 500))
    assert got == pytest.approx((1000, 500, 1000, 500))


# ------------------------------------------------------------------------------------------------ metrics
def test_mean_skips_none():
    assert mean([1.0, None, 2.0]) == 1.5
    assert mean([]) is None
    assert mean([None]) is None


def test_correlation_against_numpy_and_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    x, y = [1.0, 2.0, 2.0, 3.0, 5.0, 8.0], [2.0, 1.0, 4.0, 3.0, 5.0, 4.0]
    got = correlation(x, y)
    assert got["n"] == 6
    assert got["PLCC"] == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)
    assert got["SRCC"] == pytest.approx(scipy_stats.spearmanr(x, y)[0], abs=1e-12)
    # ranks with ties by hand: x -> 1, 2.5, 2.5, 4, 5, 6; y -> 2, 1, 4.5, 3, 6, 4.5
    assert got["SRCC"] == pytest.approx(np.corrcoef([1, 2.5, 2.5, 4, 5, 6], [2, 1, 4.5, 3, 6, 4.5])[0, 1])
    assert correlation([1, 2], [1, 2])["PLCC"] is None
    assert correlation([1, 1, 1], [1, 2, 3])["SRCC"] is None


def _exact_threshold(n: int, p: float, alpha: float) -> float:
    """Least k with P(X >= k) < alpha, from exact binomial sums (math.comb)."""
    for k in range(n + 1):
        tail = sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1))
        if tail < alpha:
            return 100.0 * k / n
    return 100.0 * (n + 1) / n


@pytest.mark.parametrize("n,p", [(20, 0.5), (30, 0.25), (7, 0.3), (12, 0.6)])
def test_binomial_threshold_exact(n, p):
    assert binomial_threshold(n, p) == pytest.approx(_exact_threshold(n, p, 0.05))
    assert binomial_threshold(n, p, 0.01) == pytest.approx(_exact_threshold(n, p, 0.01))


def test_binomial_threshold_hand_value_and_bad_input():
    # n=20, p=0.5: P(X>=15)=0.0207 < 0.05 <= P(X>=14)=0.0577 -> 15/20
    assert binomial_threshold(20, 0.5) == 75.0
    # n=1, p=0.5: P(X>=1) = 0.5 >= 0.05, so no k <= 1 is significant -> (1 + 1) / 1 = 200 %
    assert binomial_threshold(1, 0.5) == 200.0
    for n, p in ((0, 0.5), (10, 0.0), (10, 1.0)):
        with pytest.raises(ValueError, match="needs n >= 1 and 0 < p < 1"):  # the clear message, not a math error
            binomial_threshold(n, p)


# ------------------------------------------------------------------------------------------------ text
def test_strip_reasoning_open_and_dangling_tags():
    assert strip_reasoning("Hello") == "Hello"
    assert strip_reasoning("answer <think>unfinished") == "answer"
    assert strip_reasoning("trace</think> Yes") == "Yes"
    assert strip_reasoning("<think>a</think>No") == "No"
    assert parse_yes_no("yes") == "Yes"
    assert parse_yes_no("Nope, no.") == "No"


def test_extract_json_object_strings_escapes_and_nesting():
    assert extract_json_object('{"a": 1}') == '{"a": 1}'
    assert extract_json_object('x {"": "}"} y') == '{"": "}"}'
    assert extract_json_object('pre {"a": "q\\"}"} tail') == '{"a": "q\\"}"}'
    assert extract_json_object('{"a": {"b": 1}} x') == '{"a": {"b": 1}}'
    assert extract_json_object("no braces") is None
    assert extract_json_object("{ unclosed") is None


# ------------------------------------------------------------------------------------------------ bootstrap / units
from lensbench.core.records import SampleRecord  # noqa: E402
from lensbench.scoring.bootstrap import UnitTable, bootstrap_ci  # noqa: E402
from lensbench.benchmarks.registry import get_benchmark  # noqa: E402


def unit_tables(benchmark, records):
    """The benchmark's unit tables of ``records`` (each benchmark states its own)."""
    return get_benchmark(benchmark).unit_tables(records)


def test_unit_table_value_is_percent_by_default():
    t = UnitTable("acc", ["u1", "u2"], ["c"], [[1.0], [0.0]], [[1.0], [1.0]], [0], pool="micro")
    assert t.value() == 50.0
    assert t.value("all") == 50.0


def test_bootstrap_n_counts_units_not_columns():
    t = UnitTable("acc", ["u1", "u2", "u3"], ["c"], [[1.0], [0.0], [1.0]], [[1.0], [1.0], [1.0]], [0], pool="micro")
    ci = bootstrap_ci(t, n_resamples=200, seed=1, method="percentile", min_clusters=2)
    assert ci.n == 3
    assert ci.value == pytest.approx(200 / 3)
    assert ci.low < ci.value < ci.high


def test_constant_clusters_give_a_point_interval():
    # two clusters, each one right and one wrong unit: every resample of clusters gives 50 %
    t = UnitTable("acc", ["a", "b", "c", "d"], ["c"], [[1.0], [0.0], [1.0], [0.0]], [[1.0]] * 4, [0],
                  clusters=["x", "x", "y", "y"], pool="micro")
    ci = bootstrap_ci(t, n_resamples=200, seed=0, method="percentile", min_clusters=2)
    assert (ci.value, ci.low, ci.high, ci.n, ci.n_units) == (50.0, 50.0, 50.0, 2, 4)
    # clusters of unequal size: {1, 0} and {1}: resamples hold x twice (1/2), x and y (2/3) or y twice (1)
    t = UnitTable("acc", ["a", "b", "c"], ["c"], [[1.0], [0.0], [1.0]], [[1.0]] * 3, [0], clusters=["x", "x", "y"],
                  pool="micro")
    ci = bootstrap_ci(t, n_resamples=2000, seed=0, method="percentile", min_clusters=2)
    assert ci.low == pytest.approx(50.0) and ci.high == pytest.approx(100.0)


def _rg(i, scene, skill, outcome):
    return SampleRecord(benchmark="rgb-th-bench", sample_id=f"q{i}", outcome=outcome,
                        labels={"scene": scene, "abbrev": skill, "group": "G"})


def test_rgbth_unit_tables_qacc_and_sacc_by_hand():
    recs = [_rg(0, "A", "S1", "correct"), _rg(1, "A", "S1", "correct"), _rg(2, "B", "S1", "correct"),
            _rg(3, "B", "S1", "wrong"), _rg(4, "A", "S2", "correct"), _rg(5, "A", "S2", "correct")]
    t = unit_tables("rgb-th-bench", recs)
    # QAcc: S1 3/4 = 75, S2 100 -> mean over skills 87.5; SAcc: S1 units A right, B wrong -> 50, S2 100 -> 75
    assert t["QAcc"].value() == pytest.approx(87.5)
    assert t["SAcc"].value() == pytest.approx(75.0)
    assert t["SAcc"].value("S1") == pytest.approx(50.0)


def test_ifbench_unit_table_mean_of_language_means():
    def r(i, q, lang, dim, outcome):
        return SampleRecord(benchmark="if-bench", sample_id=f"s{i}", outcome=outcome,
                            labels={"qid": q, "language": lang, "dimension": dim})
    recs = [r(0, "q1", "en", "D1", "correct"), r(1, "q1", "en", "D1", "wrong"),   # en/D1 cell 0.5
            r(2, "q2", "en", "D2", "correct"),                                      # en/D2 cell 1
            r(3, "q1", "zh", "D1", "wrong"), r(4, "q2", "zh", "D2", "wrong")]        # zh cells 0
    t = unit_tables("if-bench", recs)["Score"]
    # en: mean(50, 100) = 75; zh: mean(0, 0) = 0 -> Avg 37.5
    assert t.value() == pytest.approx(37.5)
    assert t.value("en") == pytest.approx(75.0)


# ------------------------------------------------------------------ issue 26: the held-out draw's survivors
from lensbench.benchmarks.gobench.aggregate import aggregate_records, overall  # noqa: E402
from lensbench.scoring.paired import paired_difference  # noqa: E402


def _exact_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided permutation p-value by enumerating every swap of A and B within units."""
    obs, hits, flips = abs(a.mean() - b.mean()), 0, list(itertools.product([False, True], repeat=len(a)))
    for f in flips:
        f = np.array(f)
        hits += abs(np.where(f, b, a).mean() - np.where(f, a, b).mean()) >= obs - 1e-12
    return hits / len(flips)


def test_paired_difference_with_two_units_has_an_interval_and_a_p_value():
    # 2 shared units is the smallest comparison with a CI: A right on both, B on neither -> +100 points on
    # every resample (CI [100, 100]); swaps: +100, 0, 0, -100 -> |diff| >= 100 in 2 of 4 -> p = 0.5
    a, b = np.array([1.0, 1.0]), np.array([0.0, 0.0])
    t = lambda v: UnitTable("acc", ["u1", "u2"], ["c"], v.reshape(2, 1), np.ones((2, 1)), [0], pool="micro")  # noqa: E731
    r = paired_difference(t(a), t(b), n_resamples=1000, seed=0, min_clusters=2)
    assert (r.n, r.diff, r.low, r.high) == (2, 100.0, 100.0, 100.0)
    assert r.p_value == pytest.approx(_exact_p(a, b)) and r.p_value == pytest.approx(0.5)
    # one unit: no interval, no p-value
    one = paired_difference(t(a).subset(["u1"]), t(b).subset(["u1"]), n_resamples=1000, seed=0, min_clusters=2)
    assert (one.n, one.diff, one.low, one.high, one.p_value) == (1, 100.0, None, None, None)


def _go(i, outcome, sps=None, key="sps_{}"):
    scores = {} if sps is None else {key.format(d): v for d, v in zip(("authenticity", "aesthetics", "fidelity"), sps)}
    return SampleRecord(benchmark="gobench", sample_id=f"img{i}", outcome=outcome, scores=scores,
                        labels={"category": "direct_light_images"})


def test_gobench_sps_unit_table_columns_are_the_report_dimensions():
    recs = [_go(0, "scored", (1.0, 0.5, 0.0)), _go(1, "scored", (0.5, 0.5, 1.0)), _go(2, "scored", (0.0, None, 1.0)),
            _go(3, "unparseable"), _go(4, "error"), _go(5, "scored")]  # img5: no ground truth, no SPS
    t = unit_tables("gobench", recs)["SPS"]
    metrics, _counts = aggregate_records(recs)
    # the columns carry the names the report's SPS block uses (Table 3's Authenticity / Aesthetics / Fidelity)
    assert t.columns == ["Authenticity", "Aesthetics", "Fidelity"] == list(metrics["SPS"])
    assert list(t.categories) == ["mean", "Authenticity", "Aesthetics", "Fidelity"] and t.units == ["img0", "img1", "img2"]
    # by hand: Authenticity mean(1, .5, 0) = 50, Aesthetics mean(.5, .5) = 50, Fidelity mean(0, 1, 1) = 66.67
    want = {"Authenticity": 50.0, "Aesthetics": 50.0, "Fidelity": 200 / 3}
    for dim, v in want.items():
        assert t.value(dim) == pytest.approx(v) == pytest.approx(metrics["SPS"][dim])
    assert t.value() == pytest.approx(sum(want.values()) / 3) == pytest.approx(overall(metrics["SPS"]))
    # the table reads the keys GOBench writes (sps_<dim>), no other spelling: such a record is no SPS unit
    assert unit_tables("gobench", [_go(0, "scored", (1.0, 0.5, 0.0), key="SPS/{}")]) == {}


# ------------------------------------------- issue 26, second pass: survivors of the held-out draw (seed 20261126)
from fractions import Fraction  # noqa: E402

from lensbench.scoring.bbox import smart_resize as _smart_resize  # noqa: E402


def test_iou_of_boxes_under_one_unit():
    # normalised coordinates: areas .08 and .04, the smaller inside the larger -> .04 / .08
    assert iou((0, 0, 0.4, 0.2), (0, 0, 0.2, 0.2)) == pytest.approx(0.5)
    assert iou((0, 0, 0.2, 0.2), (0, 0, 0.4, 0.2)) == pytest.approx(0.5)
    assert iou((0.1, 0.1, 0.3, 0.3), (0.1, 0.1, 0.3, 0.3)) == pytest.approx(1.0)


def test_smart_resize_aspect_error_states_the_ratio():
    with pytest.raises(ValueError, match=r"aspect ratio must be <= 200, got 250\.0"):
        _smart_resize(2, 500)


@pytest.mark.parametrize("n,alpha", [(1, 0.5), (3, 0.5), (4, 0.0625)])
def test_binomial_threshold_a_tail_equal_to_alpha_is_not_significant(n, alpha):
    # exact: the least k with P(X >= k) < alpha (strictly), X ~ Binomial(n, 1/2); these tails are exact floats
    def tail(k):
        return sum(Fraction(math.comb(n, j), 2 ** n) for j in range(k, n + 1))
    k = next(k for k in range(n + 2) if k > n or tail(k) < Fraction(alpha))
    assert binomial_threshold(n, 0.5, alpha) == pytest.approx(100.0 * k / n)


def test_micro_table_over_several_columns():
    # 3 units, 2 columns; the category "c0" has units only in column 1 -> micro = 2/3 there
    t = UnitTable("acc", ["u1", "u2", "u3"], ["c0", "c1"], [[0, 1], [0, 1], [0, 0]], [[0, 1], [0, 1], [0, 1]],
                  [0, 0], pool="micro", categories={"all": [0, 1], "c1": [1], "c0": [0]})
    assert t.value() == pytest.approx(200 / 3) and t.value("c1") == pytest.approx(200 / 3)
    assert t.value("c0") is None  # no unit counts there
    ci = bootstrap_ci(t, n_resamples=2000, seed=0, method="percentile", min_clusters=2)
    # resamples of {1, 1, 0}: 0, 1/3, 2/3 or 1 right -> the 95% percentile interval is [0, 100]
    assert (ci.n, ci.low, ci.high) == (3, 0.0, 100.0)


def _iv(i, video, task, outcome, frames=32):
    return SampleRecord(benchmark="iv-bench", sample_id=f"q{i}", outcome=outcome,
                        labels={"video_id": video, "task": task, "frames": frames})


def test_ivbench_unit_table_video_units_tasks_and_group_averages():
    # Existence is a perception task (column "Exist."), Counting a reasoning one ("Cnt."): Table 2's groups
    recs = [_iv(0, "v1", "Existence", "correct"), _iv(1, "v1", "Existence", "wrong"),
            _iv(2, "v1", "Counting", "correct"), _iv(3, "v2", "Existence", "correct"),
            _iv(4, "v2", "Counting", "error"),                        # an error never counts
            _iv(5, "v2", "Counting", "correct", frames=8)]           # another configuration: left out
    tabs = unit_tables("iv-bench", recs)
    # configurations in frame order (issue 32.9): the 8-frame one is the first table, the 32-frame one the second
    assert tabs["accuracy"].units == ["q5"] and tabs["accuracy"].setting == {"frames": 8, "resolution": None}
    t = tabs["accuracy#2"]
    # units are the scored questions of their configuration; each resampled with its video (the cluster)
    assert t.units == ["q0", "q1", "q2", "q3"] and t.clusters == ["v1", "v1", "v1", "v2"]
    assert t.columns == ["Exist.", "Cnt."] and t.cluster == "video"
    # per-video sums: v1 Count 1/2, v1 Reason 1/1, v2 Count 1/1 -> Overall (sample-weighted) 3/4
    ids, num, den = t.cluster_sums()
    assert ids == ["v1", "v2"]
    assert num.tolist() == [[1.0, 1.0], [1.0, 0.0]] and den.tolist() == [[2.0, 1.0], [1.0, 0.0]]
    assert t.value() == pytest.approx(75.0)
    assert t.categories["P-Avg"] == [0] and t.categories["R-Avg"] == [1]
    assert t.value("P-Avg") == pytest.approx(200 / 3) and t.value("Cnt.") == pytest.approx(100.0)
    # the 32-frame configuration is a table of its own, named by its setting
    assert t.setting == {"frames": 32, "resolution": None}
    ci = bootstrap_ci(t, n_resamples=500, seed=0, method="percentile", min_clusters=2)
    assert ci.n == 2 and ci.low <= ci.value <= ci.high


def test_rgbth_group_categories_list_each_skill_once():
    recs = [SampleRecord(benchmark="rgb-th-bench", sample_id=f"q{i}", outcome="correct" if i % 2 else "wrong",
                         labels={"scene": f"S{i // 4}", "abbrev": sk, "group": grp})
            for i, (sk, grp) in enumerate([("OR", "RGB-Txt"), ("OC", "RGB-Txt"), ("TR", "RGB-Th-Txt"), ("OR", "RGB-Txt")] * 2)]
    t = unit_tables("rgb-th-bench", recs)["QAcc"]
    assert t.columns == ["OR", "OC", "TR"]
    assert t.categories["RGB-Txt"] == [0, 1] and t.categories["RGB-Th-Txt"] == [2]
    # OR: q0 wrong, q3 right, q4 wrong, q7 right -> 50; OC: q1 right, q5 right -> 100 -> RGB-Txt = 75
    assert t.value("RGB-Txt") == pytest.approx(75.0)


def test_ifbench_a_cell_with_a_failed_call_is_left_out():
    def r(i, q, lang, outcome):
        return SampleRecord(benchmark="if-bench", sample_id=f"s{i}", outcome=outcome,
                            labels={"qid": q, "language": lang, "dimension": "D"})
    recs = [r(0, "q1", "en", "correct"), r(1, "q1", "en", "error"),      # cell (q1, en) has a failed call
            r(2, "q2", "en", "wrong"), r(3, "q2", "en", "wrong")]
    t = unit_tables("if-bench", recs)["Score"]
    assert t.units == ["q2/en"] and t.den.tolist() == [[1.0]]   # q1's cell does not count; q2's does
    assert t.value() == 0.0                    # only q2 counts, all wrong (q1 would have added 1/2)


def test_groundingme_unit_table_total_and_l1_categories():
    recs = [SampleRecord(benchmark="groundingme", sample_id=f"g{i}", outcome=o, labels={"L-1": l1},
                         scores={} if o == "error" else {"hit@0.5": int(o == "correct")})
            for i, (o, l1) in enumerate([("correct", "Discriminative"), ("wrong", "Discriminative"),
                                         ("correct", "Rejection"), ("error", "Rejection"), ("correct", "Spatial")])]
    t = unit_tables("groundingme", recs)["Acc@0.5"]
    assert t.units == ["g0", "g1", "g2", "g4"] and t.columns == ["Discriminative", "Rejection", "Spatial"]
    assert t.value() == pytest.approx(75.0) and t.value("Discriminative") == pytest.approx(50.0)
    assert list(t.categories) == ["Total", "Discriminative", "Rejection", "Spatial"]


def test_rgbth_a_unit_with_a_failed_call_is_no_sacc_unit():
    recs = [_rg(0, "A", "S1", "correct"), _rg(1, "A", "S1", "correct"),   # unit A/S1 all right
            _rg(2, "B", "S1", "correct"), _rg(3, "B", "S1", "error")]     # unit B/S1: one call failed
    t = unit_tables("rgb-th-bench", recs)
    # SAcc: B/S1 cannot be judged (a failed call is not a wrong answer) -> only A/S1 counts -> 100
    assert t["SAcc"].units == ["A/S1"] and t["SAcc"].value() == pytest.approx(100.0)
    # QAcc: the failed question is left out, the other three are right
    assert t["QAcc"].units == ["q0", "q1", "q2"] and t["QAcc"].value() == pytest.approx(100.0)


# ------------------------------------------------------- the held-out draw of seed 20261127: its survivors
from lensbench.scoring.bbox import from_original_pixels  # noqa: E402
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES, bootstrap_stats  # noqa: E402
from lensbench.scoring.paired import pair_tables  # noqa: E402


def test_a_malformed_key_value_is_skipped_and_the_next_box_still_found():
    # "[1, 2, x, 4]" is neither JSON nor a numeric list: that value is skipped, the scan goes on to the next key
    assert find_key_boxes('{"bbox_2d": [1, 2, x, 4]} then {"bbox_2d": [10, 20, 30, 40]}') == [(10.0, 20.0, 30.0, 40.0)]
    assert find_key_boxes('{"bbox_2d": [1, 2, x, 4]}') == []


def test_training_targets_in_rel1_and_yxyx1000():
    # a (200, 300, 600, 500) box in a 2000 x 1000 image: rel1 divides x by 2000 and y by 1000
    got = from_original_pixels((200, 300, 600, 500), "rel1", sent_size=(1000, 500), orig_size=(2000, 1000))
    assert got == pytest.approx((0.1, 0.3, 0.3, 0.5))
    # yxyx1000: x * 1000 / 2000 -> 100, 300; y * 1000 / 1000 -> 300, 500; written y1, x1, y2, x2
    got = from_original_pixels((200, 300, 600, 500), "yxyx1000", sent_size=(1000, 500), orig_size=(2000, 1000))
    assert got == pytest.approx((300.0, 100.0, 500.0, 300.0))


def test_correlation_of_three_points_is_defined():
    # n = 3 is the smallest defined case: dx = (-1, 0, 1), dy = (-1, 1, 0): r = 1 / sqrt(2 * 2) = 0.5;
    # the values are their own ranks, so SRCC = 0.5 too
    c = correlation([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    assert c["n"] == 3 and c["PLCC"] == pytest.approx(0.5) and c["SRCC"] == pytest.approx(0.5)
    assert correlation([1.0, 2.0], [2.0, 1.0])["PLCC"] is None  # n = 2: undefined


def test_correlation_with_a_two_valued_side_is_defined():
    # x takes two values: dx = (-.5, -.5, .5, .5), dy = (-1.5, -.5, .5, 1.5): r = 2 / sqrt(1 * 5);
    # x's mean ranks (1.5, 1.5, 3.5, 3.5) are x shifted and scaled, so SRCC is the same
    x, y, r = [0.0, 0.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0], 2 / math.sqrt(5)
    for a, b in ((x, y), (y, x)):
        c = correlation(a, b)
        assert c["PLCC"] == pytest.approx(r) and c["SRCC"] == pytest.approx(r)


def test_the_default_resample_count_is_the_documented_2000():
    # README: --resamples defaults to 2000; a CI drawn without a count uses exactly 2000 resamples
    t = UnitTable("acc", [f"u{i}" for i in range(30)], ["c"], [[float(i % 3 == 0)] for i in range(30)],
                  [[1.0]] * 30, [0], pool="micro")
    assert DEFAULT_RESAMPLES == 2000
    assert len(bootstrap_stats(t, seed=3)) == 2000
    assert bootstrap_ci(t, seed=3) == bootstrap_ci(t, n_resamples=2000, seed=3)


def _two_col(num, den):
    return UnitTable("acc", ["u1", "u2"], ["c1", "c2"], num, den, [0, 0], pool="micro")


def test_pairing_drops_a_cell_only_one_run_scored():
    # A scored u1 only in c1 (its c2 has den 0); B scored every cell. B's (u1, c2) must not count:
    # A = 3/3 = 100 %; B on the shared cells (u1 c1, u2 c1, u2 c2) = 0/3 = 0 %, not 1/4 with B's extra cell
    a = _two_col([[1, 0], [1, 1]], [[1, 0], [1, 1]])
    b = _two_col([[0, 1], [0, 0]], [[1, 1], [1, 1]])
    pa, pb = pair_tables(a, b)
    assert pa.value() == 100.0 and pb.value() == 0.0
    assert pb.den.tolist() == [[1.0, 0.0], [1.0, 1.0]]
    r = paired_difference(a, b, n_resamples=200, seed=0)
    assert (r.a, r.b, r.diff) == (100.0, 0.0, 100.0)


def test_identical_runs_have_no_discordant_cluster_and_p_one():
    t = _two_col([[1, 0], [0, 1]], [[1, 1], [1, 1]])
    r = paired_difference(t, t, n_resamples=200, seed=0, min_clusters=2)
    assert (r.diff, r.p_value, r.exact, r.n_discordant) == (0.0, 1.0, True, 0)


def test_no_test_made_is_not_called_exact():
    # one shared unit: no CI and no p-value, so nothing was enumerated either
    t = _two_col([[1, 0], [0, 1]], [[1, 1], [1, 1]]).subset(["u1"])
    r = paired_difference(t, t, n_resamples=200, seed=0, min_clusters=2)
    assert (r.p_value, r.exact, r.n_discordant) == (None, False, 0)


from lensbench.scoring.bootstrap import Design, pooled_stat  # noqa: E402
from lensbench.scoring.text import extract_json_object  # noqa: E402,F811


def test_design_sentence_names_level_method_cluster_resamples_and_seed():
    assert Design("scene", 2000, 0).describe() == ("95% CI: BCa bootstrap over scenes (clusters resampled), "
                                                   "2000 resamples, seed 0")
    assert Design("video", 500, 7, level=0.9).describe().startswith("90% CI: BCa bootstrap over videos")


def test_a_table_without_columns_has_empty_cluster_sums_and_nan_statistics():
    t = UnitTable("acc", ["u1", "u2", "u3"], [], np.zeros((3, 0)), np.zeros((3, 0)), [], ["a", "b", "a"])
    ids, n, d = t.cluster_sums()
    assert ids == ["a", "b"] and n.shape == (2, 0) and d.shape == (2, 0)
    # a batch of 5 resamples over no columns: 5 NaNs, for either pooling
    for pool in ("macro", "micro"):
        out = pooled_stat(np.zeros((5, 0)), np.zeros((5, 0)), np.array([], int), pool)
        assert out.shape == (5,) and np.isnan(out).all()


def test_json_object_after_an_unclosed_brace_is_found():
    # the first "{" never closes; the search goes on from the next "{", not from the start again
    assert extract_json_object('note {unclosed and then {"a": 1} end') == '{"a": 1}'
    assert extract_json_object('{"a": {"b": 2}') == '{"b": 2}'


from lensbench.scoring.intervals import design_for, interval_block, intervals_from_block  # noqa: E402


def test_reply_after_the_closing_think_tag_keeps_its_first_character():
    assert strip_reasoning("<think>weigh A and B</think>B") == "B"
    assert strip_reasoning("prompted reasoning...</think>Yes, it is") == "Yes, it is"


def test_macro_pooling_leaves_out_a_column_without_units():
    # column 2 has no unit (den 0): the macro mean is over column 1 alone, not (1 + 0) / 2
    out = pooled_stat(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]]), np.array([0, 0]), "macro")
    assert out.tolist() == [1.0]


def test_stored_intervals_are_read_back_only_for_the_design_they_were_drawn_with():
    t = UnitTable("acc", ["u1", "u2", "u3"], ["c"], [[1], [0], [1]], [[1], [1], [1]], [0], ["a", "b", "c"])
    block = interval_block({"acc": t}, "unit", n_resamples=50, seed=0)
    assert intervals_from_block(block, design_for("unit", n_resamples=50, seed=0)) is not None
    assert intervals_from_block(block, design_for("unit", n_resamples=50, seed=1)) is None
    assert intervals_from_block(block, design_for("unit", n_resamples=60, seed=0)) is None
