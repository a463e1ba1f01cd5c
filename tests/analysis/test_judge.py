"""``lensbench analyze judge``: a second judge re-reads a run's stored replies through the engine (fake OpenAI
server with scripted judges), the model is never called again, and kappa / disagreements / the headline's change
match figures computed here from the two runs' records."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.testing.server import FakeOpenAIServer
from lensbench.tools.analysis.judge import cohen_kappa

NO_KEY = {"OPENAI_API_KEY": None}


def cli(*args):
    return CliRunner().invoke(app, list(args), env=NO_KEY)


def _records(path):
    return {r["sample_id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_cohen_kappa_matches_sklearn_with_and_without_weights():
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    a = list(rng.choice(["A", "B", "C", "None"], 60))
    b = [x if rng.random() < 0.7 else str(rng.choice(["A", "B", "C", "None"])) for x in a]
    assert float(cohen_kappa(a, b)) == pytest.approx(sk.cohen_kappa_score(a, b))
    w = rng.integers(0, 4, (3, 60)).astype(float)
    got = cohen_kappa(a, b, w)
    for k in range(3):
        assert got[k] == pytest.approx(sk.cohen_kappa_score(a, b, sample_weight=w[k]))
    assert np.isnan(cohen_kappa(["A", "A"], ["A", "A"]))  # one category: kappa undefined


def _if_responder(counts):
    def respond(body):
        counts[body["model"]] = counts.get(body["model"], 0) + 1
        text = json.dumps(body["messages"])
        if body["model"] == "vlm":  # a free-form reply: the parser must read it
            return "I would say option " + "ABCD"[int(hashlib.sha256(text.encode()).hexdigest(), 16) % 4] + "."
        letter = (re.findall(r"say option ([A-D])", text) or ["F"])[-1]
        return letter if body["model"] == "j1" or letter != "D" else "F"  # the second judge never reads D
    return respond


def test_ifbench_parser_rejudged_kappa_disagreements_and_headline(tmp_path):
    data, run = tmp_path / "data", tmp_path / "run"
    assert cli("data", "demo", "if-bench", str(data)).exit_code == 0
    counts: dict[str, int] = {}
    with FakeOpenAIServer(_if_responder(counts)) as srv:
        r = cli("run", "if-bench", "--data-dir", str(data), "--model", "openai:vlm", "--base-url", srv.url,
                "--judge-model", "openai:j1", "--judge-base-url", srv.url, "--out", str(run), "--no-progress")
        assert r.exit_code == 0, r.output
        model_calls = counts["vlm"]
        r = cli("analyze", "judge", str(run), "--judge-model", "openai:j2", "--judge-base-url", srv.url,
                "--no-progress", "--resamples", "300", "--format", "json")
        assert r.exit_code == 0, r.output
        assert counts["vlm"] == model_calls  # only the judge was called again
        j2_calls = counts["j2"]
        assert j2_calls > 0
        again = cli("analyze", "judge", str(run), "--judge-model", "openai:j2", "--judge-base-url", srv.url,
                    "--no-progress", "--resamples", "300", "--format", "json")
        assert again.exit_code == 0 and counts["j2"] == j2_calls  # resumed from the store, nothing paid twice
    doc = json.loads(r.stdout[r.stdout.index("{"):])
    first = _records(run / "samples.jsonl")
    second = _records(run / "analysis" / "judge-openai-j2" / "run" / "samples.jsonl")
    ids = [i for i, x in first.items() if x["judge"]]
    assert doc["n_judged"] == len(ids) == len(first)  # every reply is free-form
    va = [str(first[i]["answer"]) for i in ids]
    vb = [str(second[i]["answer"]) for i in ids]
    assert vb == ["None" if a == "D" else a for a in va]
    # kappa by hand: observed agreement minus chance agreement from the two marginals
    cats = sorted(set(va) | set(vb))
    po = np.mean([x == y for x, y in zip(va, vb)])
    pe = sum(va.count(c) / len(va) * vb.count(c) / len(vb) for c in cats)
    assert doc["kappa"][0] == pytest.approx((po - pe) / (1 - pe))
    assert doc["kappa"][1] < doc["kappa"][0] < doc["kappa"][2]
    assert {d["sample_id"] for d in doc["disagreements"]} == {i for i, a in zip(ids, va) if a == "D"}
    res_a = json.loads((run / "result.json").read_text())["metrics"]
    res_b = json.loads((run / "analysis" / "judge-openai-j2" / "run" / "result.json").read_text())["metrics"]
    head = doc["headline"]
    assert head["first"] == pytest.approx(res_a["Score"]["Avg"]) and head["second"] == pytest.approx(res_b["Score"]["Avg"])
    assert head["change"] == pytest.approx(head["second"] - head["first"]) and head["change"] < 0
    assert head["low"] <= head["change"] <= head["high"]
    assert doc["design"]["cluster"] == "image" and doc["n_clusters"] > 10
    assert (run / "analysis" / "judge-openai-j2" / "judge-noise.md").is_file()


def test_groundingme_best_of_n_knockout_rejudged(tmp_path):
    data, run = tmp_path / "data", tmp_path / "run"
    assert cli("data", "demo", "groundingme", str(data)).exit_code == 0
    counts: dict[str, int] = {}

    def respond(body):
        counts[body["model"]] = counts.get(body["model"], 0) + 1
        if body["model"] == "vlm":
            x = int(hashlib.sha256((json.dumps(body["messages"]) + str(body.get("seed"))).encode()).hexdigest(), 16) % 200
            return '<think>look</think>{"bbox_2d": [%d, %d, %d, %d]}' % (x, x, x + 300, x + 300)
        return "\\boxed{A}" if body["model"] == "j1" else "\\boxed{B}"  # first judge: slot A wins; second: slot B

    with FakeOpenAIServer(respond) as srv:
        r = cli("run", "groundingme", "--data-dir", str(data), "--model", "openai:vlm", "--base-url", srv.url,
                "--best-of", "3", "--bon-judge", "text-full-responses", "--judge-model", "openai:j1",
                "--judge-base-url", srv.url, "--out", str(run), "--no-progress")
        assert r.exit_code == 0, r.output
        model_calls = counts["vlm"]
        r = cli("analyze", "judge", str(run), "--judge-model", "openai:j2", "--judge-base-url", srv.url, "--name", "j2",
                "--no-progress", "--resamples", "200", "--format", "json")
        assert r.exit_code == 0, r.output
        assert counts["vlm"] == model_calls and counts["j2"] > 0
        j1_calls = counts["j1"]
        # the run's own judge, each pair shown swapped: a judge that always picks slot A now picks the later one
        p = cli("analyze", "judge", str(run), "--permute", "--judge-base-url", srv.url, "--no-progress",
                "--resamples", "200", "--format", "json")
        assert p.exit_code == 0, p.output
        assert counts["vlm"] == model_calls and counts["j1"] > j1_calls
    doc = json.loads(r.stdout[r.stdout.index("{"):])
    swapped = _records(run / "analysis" / "judge-openai-j1-permuted" / "run" / "samples.jsonl")
    assert {x["extra"]["selected_index"] for x in swapped.values()} == {2}
    pdoc = json.loads(p.stdout[p.stdout.index("{"):])
    assert pdoc["judges"] == ["j1", "j1"] and len(pdoc["disagreements"]) == pdoc["n_judged"] == 12
    first = _records(run / "samples.jsonl")
    second = _records(run / "analysis" / "judge-j2" / "run" / "samples.jsonl")
    # knockout of candidates 0, 1, 2: slot A always wins -> 0; slot B always wins -> 2
    assert {x["extra"]["selected_index"] for x in first.values()} == {0}
    assert {x["extra"]["selected_index"] for x in second.values()} == {2}
    assert doc["n_judged"] == len(first) and len(doc["disagreements"]) == len(first)
    assert doc["kappa"][0] == 0.0 and doc["agreement"] == 0.0  # p_o = p_e = 0
    assert doc["design"]["cluster"] == "sample"


def test_permute_is_refused_where_the_judge_sees_no_order(tmp_path):
    data, run = tmp_path / "data", tmp_path / "run"
    assert cli("data", "demo", "if-bench", str(data)).exit_code == 0
    counts: dict[str, int] = {}
    with FakeOpenAIServer(_if_responder(counts)) as srv:
        assert cli("run", "if-bench", "--data-dir", str(data), "--model", "openai:vlm", "--base-url", srv.url,
                   "--judge-model", "openai:j1", "--judge-base-url", srv.url, "--out", str(run), "--limit", "2",
                   "--no-progress").exit_code == 0
        r = cli("analyze", "judge", str(run), "--permute", "--judge-base-url", srv.url)
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert "--permute: if-bench's judge sees no choices in an order that could be changed" in r.output


def test_a_run_without_a_judge_round_is_refused_in_one_line(rgbth_gen, tmp_path):
    run = tmp_path / "run"
    r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "random", "--out", str(run), "--no-progress")
    assert r.exit_code == 0, r.output
    r = cli("analyze", "judge", str(run), "--judge-model", "openai:j2", "--judge-base-url", "http://127.0.0.1:9/v1")
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [r.output.strip()] and "has no judge round to re-run" in r.output
    assert not (run / "analysis").exists()
