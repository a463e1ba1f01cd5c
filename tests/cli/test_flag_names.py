"""Issue 32.9: one name per thing across ``lensbench run`` and the tool commands.

A data folder is ``--data-dir``, a model spec ``--model``, a judge's spec ``--judge-model`` (as in ``lensbench
run``). Every command of the tree is walked: no visible option carries an old name (``--data``, ``--llm``, a
spec-taking ``--judge``), every hidden old name stands beside its canonical option, and the old names still
work, with the one line ``--data is now --data-dir`` on stderr and otherwise the same outcome as the new name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from lensbench.cli.main import app
from lensbench.core.flags import RENAMED
from clirun import walk_commands

#: commands that take two data folders name each by its role (a bare --data-dir would not say which)
TWO_FOLDERS = {("train", "groundingme", "sweep"): "--groundingme"}

#: a second model of another role, beside the command's --model
ROLE_SPECS = ("--visual-check",)


@pytest.fixture(scope="module")
def tree():
    return list(walk_commands(typer.main.get_command(app)))


def _options(cmd):
    return [p for p in cmd.params if p.param_type_name == "option"]


def test_no_command_shows_an_old_name(tree):
    bad = []
    for path, cmd in tree:
        for p in _options(cmd):
            if p.hidden:
                continue
            for name in p.opts:
                spec_judge = name == "--judge" and not p.is_flag  # export's --judge/--no-judge is a switch
                if name in ("--data", "--llm") or spec_judge:
                    bad.append((" ".join(path), name))
    assert not bad
    assert len(tree) > 40  # the whole tree was walked, tool groups included


def test_data_folders_and_model_specs_use_the_run_names(tree):
    """An option whose help calls its value a data folder (outside a parenthesis) is --data-dir; one that takes a model or judge spec
    is --model / --judge-model (or a role-named option of a command that takes several, e.g. --visual-check)."""
    run_names = {p.opts[0] for p in _options(dict(tree)[("run", "iv-bench")])}
    assert {"--data-dir", "--model", "--judge-model"} <= run_names
    odd = []
    for path, cmd in tree:
        for p in _options(cmd):
            text = (p.help or "").lower().partition("(")[0]  # not "(default: the data folder)"
            if not p.hidden and "data folder" in text and p.opts[0] != "--data-dir":
                if TWO_FOLDERS.get(path) != p.opts[0]:
                    odd.append((" ".join(path), p.opts[0]))
            spec = any(w in text for w in ("model spec", "backend spec", "judge spec"))
            if not p.hidden and spec and p.opts[0] not in ("--model", "--judge-model", *ROLE_SPECS):
                odd.append((" ".join(path), p.opts[0]))
    assert not odd


def test_every_old_name_stands_beside_its_new_one(tree):
    seen = set()
    for path, cmd in tree:
        names = {n for p in _options(cmd) if not p.hidden for n in p.opts}
        for p in _options(cmd):
            if p.hidden and p.opts[0] in RENAMED:
                assert names & set(RENAMED[p.opts[0]]), (path, p.opts)
                seen.add((path, p.opts[0]))
    assert {(("ifbench", "review"), "--data"), (("ifbench", "finalize"), "--data"),
            (("groundingme", "verify"), "--data"), (("groundingme", "negatives"), "--llm"),
            (("ivbench", "synthesize"), "--llm"), (("ivbench", "synthesize"), "--judge"),
            (("train", "genvip", "loop"), "--data"), (("train", "ivbench", "variants"), "--data"),
            (("train", "ivbench", "train"), "--data"), (("train", "groundingme", "train"), "--data")} <= seen


def _same_but_the_line(cli, old_args, new_args, line):
    old, new = cli(*old_args), cli(*new_args)
    assert new.returncode == old.returncode == 2, (old.stderr, new.stderr)
    assert "Traceback" not in old.stderr + new.stderr
    assert line not in new.stderr
    lines = old.stderr.splitlines()
    assert lines.count(line) == 1, old.stderr
    lines.remove(line)
    assert lines == new.stderr.splitlines()
    return new.stderr


def test_old_data_name_still_works(cli, tmp_path):
    empty = tmp_path / "no-release"
    empty.mkdir()
    err = _same_but_the_line(cli, ["ifbench", "review", "--data", str(empty), "--db", str(tmp_path / "a.sqlite")],
                             ["ifbench", "review", "--data-dir", str(empty), "--db", str(tmp_path / "a.sqlite")],
                             "--data is now --data-dir")
    assert str(empty) in err  # the value given under the old name is the folder read
    err = _same_but_the_line(cli, ["groundingme", "verify", "--data", str(empty), "--work", str(tmp_path / "w")],
                             ["groundingme", "verify", "--data-dir", str(empty), "--work", str(tmp_path / "w")],
                             "--data is now --data-dir")
    assert str(empty) in err


def test_old_model_and_judge_names_still_work(cli, tmp_path):
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"video_id": "v1", "question": "What is the man holding?", "answer": "a cup"}) + "\n",
                  encoding="utf-8")
    base = ["ivbench", "synthesize", "--videoqa", str(qa), "--videos", str(tmp_path), "--out", str(tmp_path / "o.jsonl")]
    err = _same_but_the_line(cli, base + ["--llm", "nosuchbackend:m1"], base + ["--model", "nosuchbackend:m1"],
                             "--llm is now --model")
    assert "nosuchbackend" in err  # the spec given under the old name is the one built
    err = _same_but_the_line(cli, base + ["--model", "random", "--judge", "nosuchjudge:j"],
                             base + ["--model", "random", "--judge-model", "nosuchjudge:j"],
                             "--judge is now --judge-model")
    assert "nosuchjudge" in err


def test_both_names_or_neither_is_a_one_line_error(cli, tmp_path):
    both = cli("ifbench", "review", "--data", "a", "--data-dir", "b", "--db", str(tmp_path / "a.sqlite"))
    assert both.returncode == 2 and both.stderr.strip().splitlines() == [
        "error: --data and --data-dir are the same option (--data is its old name): give --data-dir only"]
    neither = cli("groundingme", "negatives", "--source", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "o.jsonl"))
    assert neither.returncode == 2 and neither.stderr.strip() == "error: Missing option '--model'."
    assert not Path(tmp_path / "o.jsonl").exists()


def test_old_names_where_a_command_never_had_them_name_the_new_ones(cli):
    r = cli("run", "iv-bench", "--data", "x", "--model", "random")
    assert r.returncode == 2 and "--data; a data folder is --data-dir DIR" in r.stderr
    r = cli("run", "iv-bench", "--llm", "random")
    assert r.returncode == 2 and "--llm; a model spec is --model SPEC" in r.stderr
