"""The tool groups mounted under ``lensbench``: the papers' side pipelines, from one explicit list.

Each entry is ``(command name, "module:typer_app")``. The main app (:mod:`.main`) mounts them
lazily (:mod:`.lazy`): a group's module is imported only when that group is used, so ``lensbench
run`` pays nothing for them.
"""

from __future__ import annotations

__all__ = ["TOOL_GROUPS"]

TOOL_GROUPS: list[tuple[str, str]] = [
    ("genvip", "lensbench.tools.genvip.cli:genvip_app"),
    ("ifbench", "lensbench.tools.ifbench.cli:ifbench_app"),
    ("gobench", "lensbench.tools.gobench.cli:gobench_app"),
    ("ivbench", "lensbench.tools.ivbench.cli:ivbench_app"),
    ("groundingme", "lensbench.tools.groundingme.cli:groundingme_app"),
    ("review", "lensbench.tools.review.cli:review_app"),
    ("data", "lensbench.tools.data.cli:data_app"),
    ("train", "lensbench.cli.train:train_app"),
]
