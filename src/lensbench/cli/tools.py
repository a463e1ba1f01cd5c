"""The tool groups mounted under ``lensbench``: the papers' side pipelines, from one explicit list.

Each entry is ``(command name, "module:typer_app")``; modules are imported when the CLI is
built (they hold typer apps only and import their heavy parts inside the commands).
"""

from __future__ import annotations

import importlib

import typer

__all__ = ["TOOL_GROUPS", "mount_tools"]

TOOL_GROUPS: list[tuple[str, str]] = [
    ("genvip", "lensbench.tools.genvip.cli:genvip_app"),
    ("gobench", "lensbench.tools.gobench.cli:gobench_app"),
    ("ivbench", "lensbench.tools.ivbench.cli:ivbench_app"),
    ("groundingme", "lensbench.tools.groundingme.cli:groundingme_app"),
    ("data", "lensbench.tools.data.cli:data_app"),
]


def mount_tools(app: typer.Typer) -> None:
    """Add every group of :data:`TOOL_GROUPS` to ``app``."""
    for name, target in TOOL_GROUPS:
        mod, _, attr = target.partition(":")
        app.add_typer(getattr(importlib.import_module(mod), attr), name=name)
