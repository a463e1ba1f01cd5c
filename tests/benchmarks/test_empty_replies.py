"""An empty reply (content "", finish_reason "stop") is the model's answer (SPEC General rules).

It is re-asked once, then stored as "" and scored as the protocol scores a reply with no answer
in it; the run completes (exit 0, not 3) and the report counts the empty replies apart. Checked on
the RGB-Th-Bench reference check (the real release, a deterministic model over a real HTTP server,
figures counted here from the release's questions.json files) and on the backend itself. The
IF-Bench reference check is tests/benchmarks/test_ifbench_protocol.py::test_parser_path_against_local_server.
Null content, no choices and an error object stay server failures (tests/runtime/test_reliability.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import zlib
from collections import defaultdict

import pytest

from clirun import run_cli
from lensbench.backends.base import BackendConfig
from lensbench.backends.openai_compat import OpenAIChatBackend
from lensbench.core.types import GenParams, Message, Request, TextPart
from lensbench.testing.server import FakeOpenAIServer
from test_rgbth_replay import PAPER_SKILLS_BY_GROUP, independent_scores

PAPER_SKILLS = {s for ss in PAPER_SKILLS_BY_GROUP.values() for s in ss}


def model_reply(question: str) -> str:
    """The deterministic 'model': "" for about 1 question in 25, else Yes/No by a hash of the question."""
    h = zlib.crc32(question.strip().encode())
    return "" if h % 25 == 0 else ("Yes." if h % 2 else "No.")


def _question(body: dict) -> str:
    return body["messages"][-1]["content"][-1]["text"].rsplit("\n", 1)[-1]


def expected(data_dir, tmp_path):
    """Group and Overall QAcc/SAcc and the number of empty replies, counted by hand from the release's
    questions.json files (:func:`test_rgbth_replay.independent_scores`: a reply with no Yes/No is Fail)."""
    rows = []
    for f in sorted(data_dir.glob("*/*/questions.json")):
        scene = f"{f.parent.parent.name}/{f.parent.name}"
        for item in json.loads(f.read_text(encoding="utf-8"))["data"]:
            rows += [{"file": f"{scene}/image.jpg", "skill": item["skill_type"], "question": qa["question"],
                      "vlm_response_raw": model_reply(qa["question"])} for qa in item["QAs"]]
    (tmp_path / "model.json").write_text(json.dumps(rows), encoding="utf-8")
    want, _fails = independent_scores(data_dir, tmp_path / "model.json")
    return want, sum(1 for r in rows if r["vlm_response_raw"] == "" and r["skill"] in PAPER_SKILLS)


def test_rgbth_reference_check_completes_with_empty_replies(rgbth_data, tmp_path):
    want, n_empty = expected(rgbth_data, tmp_path)
    assert n_empty > 20  # a few percent of the 1,624 replies
    arrivals: dict[str, int] = defaultdict(int)

    def responder(body):
        q = _question(body)
        if model_reply(q) == "":
            arrivals[q] += 1
        return model_reply(q)

    with FakeOpenAIServer(responder) as srv:
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        r = run_cli("run", "rgb-th-bench", "--data-dir", str(rgbth_data), "--model", "openai:stops-early", "--base-url",
                    srv.url, "--out", str(tmp_path / "run"), "--image-max-side", "64", "--concurrency", "32",
                    "--no-progress", "--format", "json", env=env)
    assert r.returncode == 0, r.stderr[-2000:]  # complete: the empty replies are answers, not failures
    doc = json.loads(r.stdout)
    assert doc["complete"] and doc["counts"]["n_error"] == 0 and doc["counts"]["n"] == 1624
    assert doc["counts"]["n_empty"] == n_empty
    # result.json holds the run's CIs with their design (scenes resampled)
    assert doc["ci"]["design"] == {"cluster": "scene", "method": "BCa bootstrap", "n_resamples": 2000, "seed": 0,
                                   "level": 0.95, "min_clusters": 10}
    value, low, high, n_scenes, _n_units = doc["ci"]["tables"]["QAcc"]["intervals"]["Overall"]
    assert value == pytest.approx(doc["metrics"]["QAcc"]["Overall"]) and low < value < high and n_scenes == 29
    for metric in ("QAcc", "SAcc"):
        for col, v in want[metric].items():
            assert doc["metrics"][metric][col] == pytest.approx(v, abs=1e-9), (metric, col)
    # every empty reply asked exactly twice (re-asked once) per distinct request
    assert arrivals and all(n % 2 == 0 for n in arrivals.values())
    recs = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    empties = [x for x in recs if x["reply"] == ""]
    assert len(empties) == n_empty and all(x["outcome"] == "unparseable" for x in empties)
    report = run_cli("report", str(tmp_path / "run"))
    assert report.returncode == 0 and f"{n_empty} empty replies" in report.stdout


def _req() -> Request:
    return Request(id="r", messages=[Message(role="user", parts=[TextPart(text="Is it warm?")])],
                   params=GenParams(temperature=0.0, max_tokens=8))


def _ask(srv_responder):
    with FakeOpenAIServer(srv_responder) as srv:
        b = OpenAIChatBackend("m", BackendConfig(base_urls=[srv.url]))

        async def main():
            try:
                return await b.generate(_req())
            finally:
                await b.aclose()

        return asyncio.run(main()), sum(srv.received.values())


def test_backend_reasks_an_empty_reply_once_then_keeps_it():
    c, n = _ask(lambda body: "")
    assert (c.text, c.finish_reason, n) == ("", "stop", 2)
    calls = iter(["", "Yes"])  # a provider glitch: the second ask answers
    c, n = _ask(lambda body: next(calls))
    assert (c.text, n) == ("Yes", 2)
    c, n = _ask(lambda body: "No")
    assert (c.text, n) == ("No", 1)


def test_recorded_empty_reply_is_an_answer_and_a_null_one_a_failure(rgbth_data, tmp_path):
    """Replay: a recorded "" is the model's answer (Fail, counted apart); a recorded null has no content:
    a server failure, never scored."""
    from lensbench.benchmarks.rgbth.benchmark import RGBThBench
    from lensbench.runtime.runner import RunSettings, run_benchmark

    rows = json.loads((rgbth_data.parent.parent / "benchmark_results_GLM.json").read_text(encoding="utf-8"))
    for i in range(0, len(rows), 45):
        rows[i]["vlm_response_raw"] = ""
    empty = tmp_path / "benchmark_results_empty.json"
    empty.write_text(json.dumps(rows), encoding="utf-8")
    res = run_benchmark(RGBThBench(), RunSettings(model=f"replay:{empty}", out=tmp_path / "e", data_dir=rgbth_data,
                                                  progress=False))
    want, fails = independent_scores(rgbth_data, empty)  # "" has no Yes/No: Fail
    n_empty = sum(1 for r in rows if r["vlm_response_raw"] == "" and r["skill"] in PAPER_SKILLS)
    assert res.complete and res.counts["n_empty"] == n_empty > 20 and res.counts["n_unparseable"] == fails
    for metric in ("QAcc", "SAcc"):
        assert res.metrics[metric]["Overall"] == pytest.approx(want[metric]["Overall"], abs=1e-9)
    rows[3]["vlm_response_raw"] = None
    null = tmp_path / "benchmark_results_null.json"
    null.write_text(json.dumps(rows), encoding="utf-8")
    res = run_benchmark(RGBThBench(), RunSettings(model=f"replay:{null}", out=tmp_path / "n", data_dir=rgbth_data,
                                                  progress=False))
    assert res.counts["n_error"] == 1 and not res.complete
