"""Issue 32.4: every command's help and the progress lines read well at 80 and 120 columns.

Help: paragraphs are filled greedily (a line ends early only where its paragraph ends), nothing is
wider than the terminal, and no word of a command's help text is lost (typer's rich markup mode ate
``[a|b]``; markdown ate ``<id>``). Progress: the counts and the ETA are never cut, whatever the names.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import re

import pytest
import typer
from rich.console import Console

from lensbench.cli.main import app
from lensbench.runtime.matrix_progress import MatrixProgress
from lensbench.runtime.progress import BarProgress
from clirun import walk_commands

BOX = "│╭╮╰╯─"


def _help(group, path, columns, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        with pytest.raises(SystemExit) as exc:
            group.main([*path, "--help"], prog_name="lensbench")
    assert exc.value.code == 0, path
    return buf.getvalue()


def _prose(text: str) -> list[list[str]]:
    """The help's description paragraphs (lines outside the panels), each a list of its lines."""
    paras, cur = [], []
    for line in text.splitlines():
        s = line.strip()
        if not s or s[0] in BOX or s.startswith("Usage:"):
            if cur:
                paras.append(cur)
            cur = []
            continue
        cur.append(s)
    return paras + ([cur] if cur else [])


@pytest.mark.parametrize("columns", [80, 120])
def test_every_command_help_is_filled_and_complete(columns, monkeypatch):
    group = typer.main.get_command(app)
    seen = 0
    for path, cmd in list(walk_commands(group)):
        out = _help(group, path, columns, monkeypatch)
        seen += 1
        assert all(len(line) <= columns for line in out.splitlines()), (path, out)
        usable = columns - 2  # one space of margin each side
        for para in _prose(out):
            for line, nxt in zip(para, para[1:]):
                # greedy fill: the next line's first word would not have fitted on this line
                assert len(line) + 1 + len(nxt.split()[0]) > usable - 1, (path, line, nxt)
        words = set(re.findall(r"\S+", re.sub(f"[{BOX}]", " ", out)))
        text = inspect.cleandoc(cmd.help or "").partition("\f")[0]
        text = re.sub(r"\\([<\[\]])", r"\1", text)  # markdown's escapes show the character
        missing = [w for w in text.split() if w not in words]
        assert not missing, (path, missing)
    assert seen > 40  # every command and tool subcommand was rendered


def test_reproduce_help_keeps_a_paragraph_on_one_flow():
    """The paragraph that broke mid-line at 80 columns (issue 32.4) now fills its lines."""
    group = typer.main.get_command(app)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.raises(SystemExit):
        group.main(["reproduce", "--help"], prog_name="lensbench")
    for line in buf.getvalue().splitlines():
        assert not re.fullmatch(r"\s*\S.{0,50}(consistent|the paper's|baselines,)\s*", line), line


def _rows(progress, columns: int) -> list[str]:
    out = Console(width=columns, file=io.StringIO(), color_system=None)
    out.print(progress.make_tasks_table(progress.tasks))
    return out.file.getvalue().splitlines()


@pytest.mark.parametrize("columns", [80, 120])
def test_matrix_progress_keeps_counts_and_eta(columns):
    names = ["qwen2.5-vl-72b-instruct/rgb-th-bench--thermal-only", "qwen2.5-vl-72b-instruct/if-bench--thinking"]
    con = Console(width=columns, file=io.StringIO(), force_terminal=True, color_system=None)
    with MatrixProgress(names, con, terminal=True) as m:
        a, b = m.cell(names[0]), m.cell(names[1])
        a.start("model answers", 1624, 600)
        for _ in range(7):
            a.advance(2)
        b.start("model answers", 5440, 0)
        b.note("waiting 30 s (Retry-After from http://localhost:8000/v1)")
        rows = _rows(m._bar, columns)
    assert all(len(r) <= columns for r in rows)
    # expected counts: started cells' requests (1624 + 5440), done = 600 cached + 7
    assert "607/7064" in rows[0] and "607/1624" in rows[1] and "0/5440" in rows[2], rows
    assert all(re.search(r"(\d+:\d\d:\d\d|-:--:--)$", r) for r in rows), rows  # the ETA column is whole
    assert "errors 2" in rows[1] and "errors 0" in rows[2]
    assert "…" in rows[1] if columns == 80 else names[0] in rows[1]


@pytest.mark.parametrize("columns", [80, 120])
def test_run_bar_keeps_counts_and_shows_notes_as_text(columns):
    con = Console(width=columns, file=io.StringIO(), force_terminal=True, color_system=None)
    bar = BarProgress(con)
    bar.start("rgb-th-bench: model answers", 1624, 600)
    bar.advance(3)
    bar.note("waiting 30 s")
    rows = _rows(bar._p, columns)
    bar.stop()
    assert len(rows) == 1 and len(rows[0]) <= columns
    assert "601/1624" in rows[0] and "cached 600" in rows[0] and "errors 3" in rows[0]
    if columns == 120:
        assert "[waiting 30 s]" in rows[0]  # a note is plain text, not rich markup
