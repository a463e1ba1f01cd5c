"""The GroundingME README's "Build your own" walk-through, line by line, on the fake server: the
commands a newcomer types, with the two page-serving steps answered as a reviewer would."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.tools.groundingme.demo_scene import DEMO_REPLIES, make_scene
from lensbench.testing.server import FakeOpenAIServer, rule_responder

README = Path(__file__).resolve().parents[2] / "src/lensbench/benchmarks/groundingme/README.md"


def _walkthrough() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Build your own", 1)[1]
    return [ln.strip() for ln in re.search(r"```bash\n(.*?)```", section, re.S).group(1).splitlines() if ln.strip()]


def test_readme_walkthrough_runs(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    from lensbench.tools.groundingme.review import selection_form, verification_form
    from lensbench.tools.groundingme.review_cli import prepare_verification
    from lensbench.tools.review import ReviewDB

    lines = _walkthrough()
    assert lines[0] == "python -m lensbench.tools.groundingme.demo_scene demo"
    assert lines[1].startswith("python -m lensbench.testing.server --port 8123 --replies demo/replies.json")
    monkeypatch.chdir(tmp_path)
    make_scene("demo")
    runner = CliRunner()
    with FakeOpenAIServer(responder=rule_responder(DEMO_REPLIES, "Yes")) as srv:
        for line in lines[2:]:
            args = shlex.split(line.replace("http://127.0.0.1:8123/v1", srv.url))
            assert args[0] == "lensbench"
            if args[1:3] == ["groundingme", "review"]:  # a reviewer accepts everything on the page
                with ReviewDB("demo/work/review.sqlite", selection_form()) as db:
                    for ln in Path("demo/work/candidates.jsonl").read_text().splitlines():
                        db.record("alice", json.loads(ln)["id"], {"decision": "accept"})
                continue
            if args[1:3] == ["groundingme", "verify"]:  # ... and judges every sampled item groundable
                o = dict(zip(args[3::2], args[4::2]))
                items = prepare_verification(Path(o["--data-dir"]), Path(o["--work"]), int(o["--n"]), 0)
                with ReviewDB(Path(o["--work"]) / "review.sqlite", verification_form()) as db:
                    for it in items:
                        db.record("alice", it.key, {"verdict": "groundable"})
                continue
            res = runner.invoke(app, args[1:])
            assert res.exit_code == 0, (line, res.output)
    result = json.loads(Path("demo/run/result.json").read_text())
    assert result["counts"]["n"] == len(Path("demo/work/candidates.jsonl").read_text().splitlines())
    assert "paper (App. C)" in res.output  # the last line: verify-score
