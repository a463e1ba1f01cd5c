"""Issue 32.11: 'lensbench --help' imports only what help needs (measured by benchmarks/startup.py)."""

from __future__ import annotations

import re
import subprocess
import sys

import typer

from lensbench.cli.lazy import static_help
from lensbench.cli.tools import TOOL_GROUPS


def _imported(*args: str) -> set[str]:
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "lensbench", *args], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return {m.group(1) for m in re.finditer(r"^import time:.*\|\s*(\S+)\s*$", r.stderr, re.M)}


def test_top_level_help_imports_no_run_machinery_and_no_tool_module():
    mods = _imported("--help")
    assert "lensbench.cli.main" in mods  # the trace is real
    heavy = {"numpy", "aiohttp", "pydantic", "lensbench.benchmarks.registry", "lensbench.runtime.runner",
             "lensbench.core.records", "lensbench.report.runs", "lensbench.views.runs"}
    assert not heavy & mods, heavy & mods
    assert not [m for m in mods if m.startswith("lensbench.tools.")]


def test_a_run_command_help_imports_its_own_benchmark_only():
    mods = _imported("run", "rgb-th-bench", "--help")
    assert [m for m in mods if m.startswith("lensbench.benchmarks.rgbth.")]
    assert not [m for m in mods if m.startswith(("lensbench.benchmarks.ifbench", "lensbench.benchmarks.ivbench",
                                                 "lensbench.tools."))]


def test_tool_group_summaries_read_from_source_are_the_groups_help():
    """The top-level help lists tool groups from their modules' source; that text is the loaded group's help."""
    import importlib

    found = 0
    for name, target in TOOL_GROUPS:
        mod, _, attr = target.partition(":")
        group = typer.main.get_group(getattr(importlib.import_module(mod), attr))
        text = static_help(target)  # None (not a plain literal, e.g. an f-string): the group is imported to list it
        assert text is None or text == group.help, name
        found += text is not None
    assert found >= len(TOOL_GROUPS) - 2
    assert static_help("lensbench.cli.tools:NOPE") is None and static_help("json:dumps") is None
