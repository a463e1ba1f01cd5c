"""Issue 32.3: a replay file that holds failures (a recorded error, or no reply for a request) can never be
completed by running again; the run says so and how it is used as it is, and a resume does not stop as if an
endpoint were down (before: "giving up after 32 failed requests in a row", exit 2)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from lensbench.cli.main import app


def _run(data, replies, out):
    return CliRunner().invoke(app, ["run", "rgb-th-bench", "--data-dir", str(data), "--model", f"replay:{replies}",
                                    "--out", str(out)])


def test_a_replay_with_missing_replies_says_the_file_holds_them_and_resumes_cleanly(rgbth_gen, tmp_path):
    qs = sorted(rgbth_gen.glob("Source */*/questions.json"))
    first = qs[0].parent.relative_to(qs[0].parents[1])  # one scene recorded as an error, the rest missing
    item = json.loads(qs[0].read_text())["data"][0]
    rid = f"{qs[0].parents[1].name}/{first.as_posix()}/{item['skill_type']}/0"
    replies = tmp_path / "replies.jsonl"
    replies.write_text(json.dumps({"request_id": rid, "error": "HTTP 500 upstream"}) + "\n")
    out = tmp_path / "run"
    for attempt in range(2):  # the first run and the resume say the same, and neither stops as if an endpoint were down
        r = _run(rgbth_gen, replies, out)
        assert r.exit_code == 3, r.output
        assert "the replay file holds these failures" in r.output and "running again replays the same" in r.output
        assert f"lensbench report {out}" in r.output
        assert "to retry them" not in r.output and "giving up after" not in r.output
    assert json.loads((out / "result.json").read_text())["counts"]["n_error"] == 192
