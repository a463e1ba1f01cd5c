"""A perturbed run against its unperturbed twin, end to end over HTTP: a scripted model (FakeOpenAIServer) that
answers right only when every image it is sent is a released file (it looks at the bytes) gives, in ``compare``,
a paired effect of +100 points on every thermal skill and 0 on the RGB-only ones; the perturbation is recorded in
run.json and named by the leaderboard, the report header, the viewer's run table and ``reproduce`` (not
comparable); a bad ``--perturb`` exits 2 with one line before anything is sent."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.benchmarks.rgbth.reproduce import paper
from lensbench.cli.main import app
from lensbench.cli.view import leaderboard_report
from lensbench.views.compare import compare_runs
from lensbench.views.reproduce import reproduce
from lensbench.views.runs import read_run
from lensbench.views.viewer.data import build_payload
from lensbench.runtime.runner import RunSettings, run_benchmark
from lensbench.testing.server import FakeOpenAIServer

ROW = "GPT4o-20241120"  # a Table 3 row to match the perturbed run to


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture(scope="module")
def twins(rgbth_gen, tmp_path_factory):
    """(unperturbed run, palette:iron run, the units, how many requests carried a changed image)."""
    units = list(RGBThBench().load(rgbth_gen))
    gold = {q: a for u in units for q, a in u.qas}
    released = {_sha(p.read_bytes()) for p in Path(rgbth_gen).rglob("*.jpg")}
    changed = []

    def respond(body: dict) -> str:
        content = body["messages"][-1]["content"]
        images = [base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) for p in content
                  if p.get("type") == "image_url"]
        right = gold[[p["text"] for p in content if p.get("type") == "text"][-1].splitlines()[-1]]
        if all(_sha(b) in released for b in images):
            return right
        changed.append(1)
        return "No" if right == "Yes" else "Yes"

    root = tmp_path_factory.mktemp("twins")
    with FakeOpenAIServer(respond) as srv:
        out = {}
        for name, opts in (("plain", RGBThBench.Options()), ("iron", RGBThBench.Options(perturb="palette:iron"))):
            out[name] = root / name
            run_benchmark(RGBThBench(opts), RunSettings(model="openai:fake", base_url=[srv.url], out=out[name],
                                                        data_dir=rgbth_gen, progress=False))
    return out["plain"], out["iron"], units, len(changed)


def test_compare_gives_the_paired_effect_per_category(twins):
    a, b, units, n_changed = twins
    th_skills = sorted({u.abbrev for u in units if u.group == "RGB-Th-Txt"})
    rgb_skills = sorted({u.abbrev for u in units if u.group == "RGB-Txt"})
    n_th_questions = sum(len(u.qas) for u in units if u.group == "RGB-Th-Txt")
    assert n_changed == n_th_questions == 96  # only the thermal questions carried a re-coloured image
    cmp = compare_runs(read_run(a), read_run(b), n_resamples=200)
    assert cmp.n_shared == 192 and cmp.n_only_a == cmp.n_only_b == 0  # the same items, paired
    rows = {(r["metric"], r["category"]): r for r in cmp.rows}
    for metric in ("QAcc", "SAcc"):
        for s in th_skills:
            r = rows[(metric, s)]
            assert (r["a"], r["b"], r["diff"]) == pytest.approx((100.0, 0.0, 100.0))
        for s in rgb_skills:
            r = rows[(metric, s)]
            assert (r["a"], r["b"], r["diff"]) == pytest.approx((100.0, 100.0, 0.0))
        assert rows[(metric, "RGB-Th-Txt")]["diff"] == pytest.approx(100.0)
        assert rows[(metric, "RGB-Txt")]["diff"] == pytest.approx(0.0)
        # Overall is the mean of the skills (Sec. 3.4): the thermal skills' share of the 100 points
        share = len(th_skills) / (len(th_skills) + len(rgb_skills))
        assert rows[(metric, "Overall")]["diff"] == pytest.approx(100.0 * share)
    # 6 scenes: below the 10 clusters a p needs (scoring.bootstrap.MIN_CLUSTERS), so no CI and no p
    assert rows[("QAcc", "RGB-Th-Txt")]["too_few_clusters"] == 6 and rows[("QAcc", "RGB-Th-Txt")]["p_value"] is None
    assert any("Perturbation twins: run B is the same model under the same settings with a perturbed input "
               "(palette:iron); A - B (unperturbed - perturbed) is the perturbation's paired effect" in n
               for n in cmp.notes)
    # the other way round, the sign flips and the note says so
    back = compare_runs(read_run(b), read_run(a), n_resamples=200)
    assert {(r["metric"], r["category"]): r["diff"] for r in back.rows}[("QAcc", "RGB-Th-Txt")] == pytest.approx(-100.0)
    assert any("run A is the same model" in n and "(perturbed - unperturbed)" in n for n in back.notes)


def test_the_perturbation_is_recorded_and_labelled_on_every_surface(twins):
    a, b, _units, _n = twins
    man = json.loads((b / "run.json").read_text(encoding="utf-8"))
    assert man["options"]["perturb"] == "palette:iron"
    recs = [json.loads(x) for x in (b / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["extra"].get("perturb") for r in recs if r["labels"]["group"] == "RGB-Th-Txt"} == {"palette:iron"}
    assert all("perturb" not in r["extra"] for r in recs if r["labels"]["group"] == "RGB-Txt")
    # leaderboard: the perturbed run is its own column, named
    board = leaderboard_report([a, b], "md", n_resamples=50)
    assert "perturb=palette:iron" in board and board.count("perturb=") == board.count("perturb=palette:iron")
    # lensbench report: the header
    rep = CliRunner().invoke(app, ["report", str(b)], catch_exceptions=False)
    assert rep.exit_code == 0, rep.output
    assert f"Perturbed input in {b}: palette:iron (not the benchmark's input" in rep.stdout
    plain = CliRunner().invoke(app, ["report", str(a)], catch_exceptions=False)
    assert "Perturbed input" not in plain.stdout
    # the viewer's run table
    payload, _ = build_payload([read_run(a), read_run(b)], embed=False)
    assert [r["label"].endswith("[perturbed: palette:iron]") for r in payload["runs"]] == [False, True]
    # reproduce: never the paper's measurement
    cells = next(s for s in reproduce(paper(), [b], [f"{b}={ROW}"], n_resamples=50).sections if s.id == "Tab. 3").cells
    assert {c.verdict for c in cells} == {"not comparable"}
    assert all("perturbed input (palette:iron)" in c.reason for c in cells)


@pytest.mark.parametrize("value,needle", [
    ("palette:rainbow", "unknown perturbation 'palette:rainbow' (known: palette:gray, palette:iron"),
    ("options:shuffle", "options:shuffle does not apply to RGB-Th-Bench: its yes/no questions have no options"),
])
def test_a_bad_perturbation_exits_2_with_one_line_before_any_request(rgbth_gen, tmp_path, value, needle):
    out = tmp_path / "bad"
    r = CliRunner().invoke(app, ["run", "rgb-th-bench", "--model", "random", "--data-dir", str(rgbth_gen),
                                 "--out", str(out), "--perturb", value])
    assert r.exit_code == 2
    assert needle in r.output and "--perturb" in r.output and "Traceback" not in r.output
    assert not out.exists()


def test_recorded_third_party_replies_are_not_replayed_into_a_perturbed_run(rgbth_data, tmp_path):
    """The third-party result files answered the released images: under a palette they would score replies to
    other input, so the replay is refused before anything is replayed."""
    from lensbench.core.errors import ConfigError

    replies = rgbth_data.parent.parent / "benchmark_results_GLM.json"
    with pytest.raises(ConfigError, match=r"sends perturbed input \(--perturb palette:gray\): replay it without"):
        run_benchmark(RGBThBench(RGBThBench.Options(perturb="palette:gray")),
                      RunSettings(model=f"replay:{replies}", out=tmp_path / "x", data_dir=rgbth_data, progress=False))
