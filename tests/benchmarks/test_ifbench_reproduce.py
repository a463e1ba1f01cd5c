"""``lensbench reproduce if-bench`` on crafted runs in IF-Bench's record shape (10 dimensions, 2 languages x 4
rotations, two questions per image): Tab. 2 / 5 / 7 cells and Fig. 5 thinking differences against values
and CIs computed here, the Editor column, the exact-match-only blocker, GenViP and thinking claims, Fig. 6
quartiles, blind flags."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as st
from reproduce_craft import B, cells_of, check_cell, check_family, claim, cluster_ci, expected_test, rec, write

from lensbench.benchmarks.ifbench.analyses import paper_table
from lensbench.benchmarks.ifbench.benchmark import IFBench
from lensbench.benchmarks.ifbench.data import ABBREVS
from lensbench.benchmarks.ifbench.reproduce import paper, thinking_pairs
from lensbench.views.reproduce import reproduce

NAME = "if-bench"
LANGS = ("en", "zh")


def _records(seed: int, p: float, inp: str = "if", blind: bool = False, tilt: dict | None = None) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for d_i, dim in enumerate(ABBREVS):
        for k in range(8):
            qid = f"{dim}-{k:03d}"
            pq = min(1.0, p + (tilt or {}).get(dim, 0.0))
            for lang in LANGS:
                for rot in range(4):
                    o = "correct" if rng.random() < pq else "wrong"
                    out.append(rec(NAME, f"{qid}/{lang}/r{rot}", o, target="A", answer="A" if o == "correct" else "B",
                                   labels={"qid": qid, "dimension": dim, "language": lang, "rotation": rot,
                                           "input": inp, "blind": blind},
                                   extra={"image": f"img{d_i}-{k // 2}.png"}))
    return out


def _opts(**kw):
    return {**IFBench.Options().model_dump(mode="json"), **kw}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("if-repro")
    edited = root / "edited"
    edited.mkdir()
    (edited / "translate_report.json").write_text(json.dumps({"editor": "diffusers:Qwen-Image-Edit-2509|lora=ft"}))
    judge = "openai:Qwen/Qwen3-8B"
    write(root / "van", NAME, "Qwen2.5-VL-7B", _records(1, 0.71), _opts(), judge)
    write(root / "gv", NAME, "Qwen2.5-VL-7B", _records(2, 0.85), _opts(input="if+rgb+text", translated_dir=str(edited)),
          judge)
    write(root / "exact", NAME, "Qwen2.5-VL-7B", _records(3, 0.70), _opts())
    write(root / "blind", NAME, "Qwen2.5-VL-7B", _records(4, 0.3, blind=True), _opts(blind=True), judge)
    write(root / "think", NAME, "Qwen3-VL-8B-Thinking", _records(5, 0.7, tilt={"TFU": 0.25, "TFR": 0.25}), _opts(),
          judge)
    write(root / "inst", NAME, "Qwen/Qwen3-VL-8B-Instruct", _records(6, 0.7, tilt={"TL": 0.25, "AR": 0.25}), _opts(),
          judge)
    return root


@pytest.fixture(scope="module")
def rep(runs):
    dirs = [runs / x for x in ("van", "gv", "exact", "blind", "think", "inst")]
    return reproduce(paper(), dirs, [f"{runs / 'gv'}=Qwen-Edit-2509-FT", f"{runs / 'gv'}=Qwen2.5-VL-7B"], n_resamples=B,
                     seed=1)


def _items(records, strict=False, dims=ABBREVS):
    """(image, language/dimension, soft or strict score, 1) per (question, language) of ``dims``: the clusters
    counting in a category are those with its units (as the documented bootstrap draws them)."""
    cells = {}
    for r in records:
        cells.setdefault((r.labels["qid"], r.labels["language"]), []).append(r)
    out = []
    for (_q, lang), rs in cells.items():
        if rs[0].labels["dimension"] not in dims:
            continue
        ok = [r.outcome == "correct" for r in rs]
        out.append((rs[0].extra["image"], f"{lang}/{rs[0].labels['dimension']}",
                    float(all(ok)) if strict else sum(ok) / len(ok), 1.0))
    return out


def _score(dims):
    def f(t):
        per = []
        for lang in LANGS:
            r = [t[f"{lang}/{d}"][0] / t[f"{lang}/{d}"][1] for d in dims if t.get(f"{lang}/{d}", (0, 0))[1] > 0]
            if r:
                per.append(sum(r) / len(r))
        return 100 * sum(per) / len(per) if per else None
    return f


def _load(path):
    from lensbench.views.runs import read_run

    return read_run(path).records


@pytest.mark.parametrize(("sid", "row", "strict"), [("Tab. 2", "Qwen2.5-VL-7B", False), ("Tab. 7", "Qwen2.5-VL-7B", True),
                                                   ("Tab. 5", "Vanilla", False), ("Tab. 6", "(a) IF", False)])
def test_vanilla_cells(rep, runs, sid, row, strict):
    recs = _load(runs / "van")
    cells = [c for c in cells_of(rep, sid) if "(van)" in c.row]
    assert len(cells) == 11 and {c.paper_row for c in cells} == {row}
    for c in cells:
        dims = ABBREVS if c.column == "Avg" else [c.column]
        val, lo, hi = cluster_ci(_items(recs, strict, dims), _score(dims), seed=1)
        assert (c.value, c.low, c.high) == (pytest.approx(val), pytest.approx(lo), pytest.approx(hi))
        check_cell(c, expected_test(_items(recs, strict, dims), _score(dims), c.published))
    assert check_family(cells_of(rep, sid)) > 0


def test_editor_rows_need_a_label_and_show_the_editor(rep, runs):
    ft = [c for c in cells_of(rep, "Tab. 5") if "(gv)" in c.row]
    assert {c.paper_row for c in ft} == {"Qwen-Edit-2509-FT"}
    pub = next(r for r in paper_table("table5_6")["table5"] if r["name"] == "Qwen-Edit-2509-FT")
    assert all(c.published == pub[c.column] for c in ft)
    tab5 = next(s for s in rep.sections if s.id == "Tab. 5")
    assert tab5.columns == ["run", "Editor"]
    assert dict(tab5.rows)["Qwen2.5-VL-7B (gv)"] == "diffusers:Qwen-Image-Edit-2509; lora=ft"
    g4 = {c.paper_row for c in cells_of(rep, "Tab. 4") if "(gv)" in c.row}
    assert g4 == {"Qwen2.5-VL-7B + GenViP"}  # matched to the model too: its input picks the GenViP row
    assert {c.paper_row for c in cells_of(rep, "Tab. 6") if "(gv)" in c.row} == {"(e) IF + RGB + Text"}


def test_exact_match_only_is_not_the_paper_judgment(rep):
    cells = [c for c in cells_of(rep, "Tab. 2") if "(exact)" in c.row]
    assert cells and all(c.verdict == "not comparable" and "exact match only" in c.reason for c in cells)


def test_fig5_thinking_pair(rep, runs):
    t2 = {r["model"]: r for r in paper_table("table2")["rows"]}
    assert ("Qwen3-VL-8B-Thinking", "Qwen3-VL-8B-Instruct") in thinking_pairs() and len(thinking_pairs()) == 14
    cells = {c.column: c for c in cells_of(rep, "Fig. 5")}
    a, b = _load(runs / "think"), _load(runs / "inst")
    for col in ("Avg", "TFU", "TL"):
        dims = ABBREVS if col == "Avg" else [col]
        want = cluster_ci(_items(a), _score(dims), b=10)[0] - cluster_ci(_items(b), _score(dims), b=10)[0]
        c = cells[col]
        assert c.value == pytest.approx(want)
        assert c.published == pytest.approx(t2["Qwen3-VL-8B-Thinking"][col] - t2["Qwen3-VL-8B-Instruct"][col])
        if col != "Avg":  # 8 questions on 4 images per dimension: no test below 10 clusters (SPEC)
            assert c.n == 4 and c.verdict == "not comparable" and "too few clusters (4)" in c.reason
            continue
        # paired difference against the published one: t test with twice the paired bootstrap variance; the
        # 90% interval is centred on ours - published and its p is the t test of the same standard error
        assert (c.d_low + c.d_high) / 2 == pytest.approx(c.value - c.published)
        sd = (c.d_high - c.d_low) / 2 / st.t.ppf(0.95, c.n - 1)
        assert c.p == pytest.approx(2 * st.t.sf(abs(c.value - c.published) / sd, c.n - 1))
    check_family(cells_of(rep, "Fig. 5"))
    c2 = claim(rep, "C2")  # tilted: the thinking run is better on TFU and TFR
    assert len(c2.tests) == 2 and all(t.estimate > 0 for t in c2.tests)
    assert all(t.estimate < 0 for t in claim(rep, "C3").tests)


def test_genvip_claim_pairs_the_same_model(rep, runs):
    c1 = claim(rep, "C1")
    assert [t.subject.split(" (input")[0] for t in c1.tests] == ["Qwen2.5-VL-7B (gv) - Qwen2.5-VL-7B (van)",
                                                                 "Qwen2.5-VL-7B (gv) - Qwen2.5-VL-7B (exact)"]
    want = cluster_ci(_items(_load(runs / "gv")), _score(ABBREVS), b=10)[0] - \
        cluster_ci(_items(_load(runs / "van")), _score(ABBREVS), b=10)[0]
    assert c1.tests[0].estimate == pytest.approx(want) and c1.tests[0].verdict == "supported"


def test_fig6_quartiles_and_blind_flags(rep, runs):
    fig6 = next(s for s in rep.sections if s.id == "Fig. 6")
    ours = {r[0]: r for r in fig6.rows}
    vals = [cluster_ci(_items(_load(runs / x)), _score(["OC"]), b=10)[0] for x in ("van", "exact", "think", "inst")]
    assert ours["OC"][5:9] == pytest.approx([*np.percentile(vals, [25, 50, 75]), 4])
    paper_oc = [r["OC"] for r in paper_table("table2")["rows"]]
    assert ours["OC"][1:5] == pytest.approx([*np.percentile(paper_oc, [25, 50, 75]), len(paper_oc)])
    blind = [f for f in rep.flags if f["baseline"] == "blind"]
    assert len(blind) == 10 * 8 * 8 and sum(f["answerable"] for f in blind) == sum(
        r.outcome == "correct" for r in _load(runs / "blind"))
