"""``lensbench reproduce rgb-th-bench`` on crafted runs (29 scenes x 14 skills x 4 questions, the paper's
shape): every Table 3 / Fig. 4 / Fig. 5 / Sec. 4.3 cell's value, CI and verdict computed independently here;
explicit matching (model name exact or after the org prefix, never a guess, --match); settings, baselines,
claims with Holm; and the refusal rule."""

from __future__ import annotations

import numpy as np
import pytest
from reproduce_craft import B, cells_of, check_cell, check_family, claim, cluster_ci, expected_test, macro, rec, write

from lensbench.benchmarks.rgbth.data import RGB_TH_TXT, RGB_TXT, SKILLS
from lensbench.benchmarks.rgbth.refusal import NON_COMPLIANCE, REFUSAL, fail_kind
from lensbench.benchmarks.rgbth.report import paper_rows
from lensbench.benchmarks.rgbth.reproduce import paper
from lensbench.core.errors import ConfigError
from lensbench.views.reproduce import reproduce

NAME = "rgb-th-bench"
ABBR = {a: g for a, g in SKILLS.values()}
GROUP_SKILLS = {g: [a for a, gg in ABBR.items() if gg == g] for g in (RGB_TXT, RGB_TH_TXT)}
GROUP_SKILLS["Overall"] = list(ABBR)


def _records(seed: int, p: dict[str, float], fails: list[str] = ()) -> list:
    rng = np.random.default_rng(seed)
    out = []
    fails = list(fails)
    for s in range(29):
        scene = f"Source 1/scene{s:02d}"
        for skill, (abbrev, group) in SKILLS.items():
            for j in range(4):
                target = ("Yes", "No")[(s + j) % 2]
                o = "correct" if rng.random() < p[group] else "wrong"
                reply = target if o == "correct" else ("No" if target == "Yes" else "Yes")
                if fails and s == 3:
                    o, reply = "unparseable", fails.pop()
                out.append(rec(NAME, f"{scene}/{abbrev}/{j}", o, reply=reply, target=target,
                               answer=None if o == "unparseable" else reply,
                               labels={"skill": skill, "abbrev": abbrev, "group": group, "scene": scene,
                                       "extra": False}))
    return out


REFUSALS = ["I'm sorry, but I can't help with that.", "I am sorry, I cannot assist with this request.",
            "I can\u2019t help with identifying that.", "I apologize, but I won't answer that.",
            "I must decline to answer this question.", "This request violates our content policy."]
NON_COMPLIANT = ["The image shows a wall with a fuse box.", "I cannot determine the temperature from this image.",
                 "", "Maybe.", "<think>yes or no?</think>It is unclear.", "Cannot tell.", "Probably warm."]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("rgbth-repro")
    opts = {"include_extra_skills": False, "input": "rgb+thermal", "skip_missing": False}
    write(root / "a", NAME, "InternVL2.5-8B", _records(1, {RGB_TXT: 0.80, RGB_TH_TXT: 0.63}), opts)
    write(root / "b", NAME, "Qwen/Qwen2.5-VL-7B-Instruct", _records(2, {RGB_TXT: 0.97, RGB_TH_TXT: 0.97}), opts)
    write(root / "c", NAME, "SmolVLM2-2.2B-Instruct", _records(3, {RGB_TXT: 0.69, RGB_TH_TXT: 0.53}), opts)
    write(root / "d", NAME, "InternVL2.5-8B", _records(4, {RGB_TXT: 0.8, RGB_TH_TXT: 0.55}), {**opts, "input": "rgb-only"})
    write(root / "e", NAME, "my-chameleon", _records(5, {RGB_TXT: 0.3, RGB_TH_TXT: 0.3}, REFUSALS[:5] + NON_COMPLIANT),
          opts)
    return root


@pytest.fixture(scope="module")
def rep(runs):
    return reproduce(paper(), [runs / x for x in "abcde"], [f"{runs / 'e'}=Chameleon-7B"], n_resamples=B, seed=3)


def _q_items(records, skills):
    return [(r.labels["scene"], r.labels["abbrev"], float(r.outcome == "correct"), 1.0) for r in records
            if r.labels["abbrev"] in skills]


def _s_items(records, skills):
    units = {}
    for r in records:
        if r.labels["abbrev"] in skills:
            units.setdefault((r.labels["scene"], r.labels["abbrev"]), []).append(r.outcome == "correct")
    return [(s, a, float(all(v)), 1.0) for (s, a), v in units.items()]


@pytest.mark.parametrize("run", ["a", "b"])
def test_table3_cells_against_independent_bootstrap(rep, runs, run):
    from lensbench.views.runs import read_run

    recs = read_run(runs / run).records
    row = {"a": "InternVL2.5-8B", "b": "Qwen2.5-VL-7B-Instruct"}[run]  # b: matched after its org prefix
    pub = next(p for p in paper_rows() if p["model"] == row)
    cells = [c for c in cells_of(rep, "Tab. 3") if c.row.endswith(f"({run}) = {row}")]
    assert len(cells) == 6
    verdicts = set()
    for c in cells:
        group, metric = c.column.rsplit(" ", 1)
        items = (_q_items if metric == "QAcc" else _s_items)(recs, GROUP_SKILLS[group])
        val, lo, hi = cluster_ci(items, macro(GROUP_SKILLS[group]), seed=3)
        assert c.value == pytest.approx(val, abs=1e-9)
        assert (c.low, c.high) == (pytest.approx(lo, abs=1e-6), pytest.approx(hi, abs=1e-6))
        assert c.published == pub[metric][group] and c.paper_row == row
        check_cell(c, expected_test(items, macro(GROUP_SKILLS[group]), c.published))
        assert c.p is not None and 0 < c.p <= 1
        verdicts.add(c.verdict)
    assert check_family(cells_of(rep, "Tab. 3")) == 18  # runs a, b and e (as Chameleon-7B); c, d not comparable
    if run == "b":  # 97% right everywhere: far above every published figure of that row
        assert verdicts == {"differs"} and all(c.p_holm < 0.01 for c in cells)
    else:  # drawn at the row's own levels: no cell differs, and 29 scenes cannot show equivalence within 2 points
        assert verdicts == {"inconclusive"}


def test_never_guessed_and_other_settings_not_comparable(rep):
    c_cells = [c for c in cells_of(rep, "Tab. 3") if "(c)" in c.row]
    assert len(c_cells) == 6 and all(c.verdict == "not comparable" and "another model" in c.reason for c in c_cells)
    assert next(r for r in rep.runs if r["run"].endswith("/c"))["matched"] == []  # not SmolVLM-2.3B
    d_cells = [c for c in cells_of(rep, "Tab. 3") if "(d)" in c.row]
    assert all(c.verdict == "not comparable" and "input=rgb-only (the paper: rgb+thermal)" in c.reason
               for c in d_cells)


def test_every_figure_cell_has_a_verdict_or_a_reason(rep):
    for fig in ("Fig. 4", "Fig. 5"):
        cells = cells_of(rep, fig)
        assert len(cells) == 5 * 14
        assert all(c.verdict == "not comparable" and c.reason for c in cells)
        paper_setting = [c for c in cells if "(d)" not in c.row]
        assert all("heat map" in c.reason for c in paper_setting)
        assert all(c.value is not None and c.low <= c.value <= c.high for c in cells)


def test_refusals_counted_apart(rep, runs):
    from lensbench.views.runs import read_run

    cells = {c.column: c for c in cells_of(rep, "Sec. 4.3") if "(e)" in c.row}
    assert cells["refusals"].value == pytest.approx(5) and cells["non-compliance"].value == pytest.approx(7)
    assert cells["non-compliance"].published == 712 and cells["non-compliance"].paper_row == "Chameleon-7B"
    items = [(r.labels["scene"], "count", float(fail_kind(r) == NON_COMPLIANCE), 1.0)
             for r in read_run(runs / "e").records]
    want = expected_test(items, lambda t: len(items) * t["count"][0] / t["count"][1], 712, scale=len(items),
                         pooled=True)
    assert want["exact"] and want["p"] < 1e-10  # 7 of 1,624 against the paper's 712: Fisher's exact test
    check_cell(cells["non-compliance"], want)
    check_family(cells_of(rep, "Sec. 4.3"))
    assert cells["non-compliance"].verdict == "differs"
    assert cells["refusals"].verdict == "not comparable"  # the paper prints no refusal count for Chameleon


@pytest.mark.parametrize("reply", REFUSALS)
def test_refusal_rule_refusals(reply):
    assert fail_kind(rec(NAME, "x", "unparseable", reply=reply)) == REFUSAL


@pytest.mark.parametrize("reply", NON_COMPLIANT)
def test_refusal_rule_other_fails(reply):
    assert fail_kind(rec(NAME, "x", "unparseable", reply=reply)) == NON_COMPLIANCE


def test_refusal_rule_answers_and_errors_are_not_fails():
    assert fail_kind(rec(NAME, "x", "correct", reply="I'm sorry, but yes.")) is None  # an answer was read
    assert fail_kind(rec(NAME, "x", "error", reply=None)) is None


def test_claims_tested_with_holm(rep, runs):
    from lensbench.views.runs import read_run

    c1 = claim(rep, "C1")
    subjects = [t.subject for t in c1.tests]
    assert len(c1.tests) == 8 and not any("(d)" in s for s in subjects)  # d ran another input
    assert any("(d) left out: input=rgb-only" in n for n in c1.notes)
    recs = read_run(runs / "a").records
    t = next(t for t in c1.tests if "(a)" in t.subject and "QAcc" in t.subject)
    qa = cluster_ci(_q_items(recs, GROUP_SKILLS[RGB_TXT]), macro(GROUP_SKILLS[RGB_TXT]), b=10)[0]
    qt = cluster_ci(_q_items(recs, GROUP_SKILLS[RGB_TH_TXT]), macro(GROUP_SKILLS[RGB_TH_TXT]), b=10)[0]
    assert t.estimate == pytest.approx(qa - qt)
    every = [t for c in rep.claims for t in c.tests]
    ps = sorted(t.p for t in every)
    m = len(ps)
    first = min(every, key=lambda t: t.p)
    assert first.p_holm == pytest.approx(min(1.0, m * ps[0]))
    for t in every:
        assert t.p_holm >= t.p
        want = ("supported" if (t.estimate > 0) == (t.expect == ">") else "contradicted") if t.p_holm < 0.05 \
            else "not shown"
        assert t.verdict == want
    c2 = claim(rep, "C2")  # about the paper's best models: only the run matched to Qwen2.5-VL-7B-Instruct
    assert [t.subject.split(":")[0] for t in c2.tests] == ["Qwen/Qwen2.5-VL-7B-Instruct (b)"]
    c4 = claim(rep, "C4")  # b (Qwen2.5-VL-7B-Instruct) against every other run matched to a paper row: a and e
    assert sorted(t.subject.split(" (")[1][:1] for t in c4.tests) == ["b", "b"]
    assert {t.subject.split(" - ")[1].split(" (")[1][:1] for t in c4.tests} == {"a", "e"}
    assert claim(rep, "C5").untestable.startswith("needs runs matched to GPT4o-20241120 and one of")


def test_necessity_flags(rep, runs):
    from lensbench.views.runs import read_run

    base = [r for r in read_run(runs / "d").records if r.labels["group"] == RGB_TH_TXT]
    flags = [f for f in rep.flags if f["baseline"] == "no thermal"]
    assert len(flags) == len(base) == 29 * 7 * 4
    assert sum(f["answerable"] for f in flags) == sum(r.outcome == "correct" for r in base)
    row = next(r for s in rep.sections if s.id == "Necessity" for r in s.rows)
    assert row[0] == "no thermal" and row[1].endswith("(a)") and row[2].endswith("(d)")
    a = {r.sample_id: r for r in read_run(runs / "a").records}
    yes = [f["sample_id"] for f in flags if f["answerable"]]
    assert row[8] == pytest.approx(100.0 * sum(a[s].outcome == "correct" for s in yes) / len(yes))
    assert any("blind (without any image): no baseline run" in n for n in rep.needs)


def test_match_errors_name_the_nearest_row(runs):
    with pytest.raises(ConfigError, match="nearest: SmolVLM-2.3B"):
        reproduce(paper(), [runs / "c"], [f"{runs / 'c'}=SmolVLM2"], n_resamples=B)
    with pytest.raises(ConfigError, match="not one of the run folders given"):
        reproduce(paper(), [runs / "c"], [f"{runs / 'a'}=SmolVLM-2.3B"], n_resamples=B)
    rep = reproduce(paper(), [runs / "c"], [f"{runs / 'c'}=SmolVLM-2.3B"], n_resamples=B)
    assert {c.paper_row for c in cells_of(rep, "Tab. 3")} == {"SmolVLM-2.3B"}


def test_wider_margin_makes_a_replication_consistent(runs):
    """Run a drawn at InternVL2.5-8B's levels, at --margin 12: its cells' 90% intervals of ours - paper lie
    inside +-12 points (checked against the rule written again), so they are consistent; b (97% everywhere)
    still differs."""
    from lensbench.views.runs import read_run

    rep = reproduce(paper(), [runs / "a", runs / "b"], n_resamples=B, seed=3, margin=12.0)
    recs = read_run(runs / "a").records
    cells = [c for c in cells_of(rep, "Tab. 3") if "(a)" in c.row]
    for c in cells:
        group, metric = c.column.rsplit(" ", 1)
        items = (_q_items if metric == "QAcc" else _s_items)(recs, GROUP_SKILLS[group])
        check_cell(c, expected_test(items, macro(GROUP_SKILLS[group]), c.published, margin=12.0))
        assert c.margin == 12.0
    check_family(cells_of(rep, "Tab. 3"))
    assert [c.verdict for c in cells].count("consistent") >= 4
    assert {c.verdict for c in cells_of(rep, "Tab. 3") if "(b)" in c.row} == {"differs"}
    assert "within +-12 points" in rep.rule
    with pytest.raises(ValueError):
        reproduce(paper(), [runs / "a"], margin=0)


def test_baseline_models_are_never_evidence_for_claims(runs, tmp_path):
    """A ``random`` run (its recorded model spec) matched to a paper row: not comparable, and left out of
    every claim test with a note; the model run beside it is still tested."""
    rnd = write(tmp_path / "rnd", NAME, "random (seed 0)", _records(9, {RGB_TXT: 0.5, RGB_TH_TXT: 0.5}),
                {"include_extra_skills": False, "input": "rgb+thermal", "skip_missing": False},
                manifest={"model_spec": "random"})
    rep = reproduce(paper(), [runs / "a", rnd], [f"{rnd}=Chameleon-7B"], n_resamples=B, seed=3)
    mine = [c for c in cells_of(rep, "Tab. 3") if "(rnd)" in c.row]
    assert len(mine) == 6 and all(c.verdict == "not comparable" and "a random baseline, not a model" in c.reason
                                  for c in mine)
    c1 = claim(rep, "C1")
    assert not any("(rnd)" in t.subject for t in c1.tests) and any("(a)" in t.subject for t in c1.tests)
    assert any("random (seed 0) (rnd) left out: a random baseline, never evidence" in n for n in c1.notes)


def test_cli_margin_must_be_positive(runs):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "lensbench", "reproduce", NAME, str(runs / "a"), "--margin", "0"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--margin 0" in r.stderr and "Traceback" not in r.stderr
