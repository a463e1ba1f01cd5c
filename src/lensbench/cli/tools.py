"""The tool groups mounted under ``lensbench``: the papers' side pipelines, from one explicit list.

Each entry is ``(command name, "module:typer_app")``. The main app (:mod:`.main`) mounts them
lazily (:mod:`.lazy`): a group's module is imported only when that group is used, so ``lensbench
run`` pays nothing for them.
"""

from __future__ import annotations

__all__ = ["TOOL_GROUPS", "TRAIN_RECIPES"]

TOOL_GROUPS: list[tuple[str, str]] = [
    ("genvip", "lensbench.tools.ifbench.genvip.cli:genvip_app"),
    ("ifbench", "lensbench.tools.ifbench.cli:ifbench_app"),
    ("gobench", "lensbench.tools.gobench.cli:gobench_app"),
    ("ivbench", "lensbench.tools.ivbench.cli:ivbench_app"),
    ("groundingme", "lensbench.tools.groundingme.cli:groundingme_app"),
    ("review", "lensbench.tools.review.cli:review_app"),
    ("data", "lensbench.tools.data.cli:data_app"),
    ("analyze", "lensbench.tools.analysis.cli:analyze_app"),
    ("train", "lensbench.cli.train:train_app"),
]

#: ``lensbench train RECIPE``: (recipe, ``"module:typer_app"``, ``"module:demo_maker"``); each lives with its benchmark.
#: A demo maker writes the recipe's inputs in their real formats under a folder and returns ``{name: path}``.
TRAIN_RECIPES: list[tuple[str, str, str]] = [
    ("groundingme", "lensbench.tools.groundingme.sft_cli:sft_app",
     "lensbench.tools.groundingme.train_demo:make_grounding_demo"),
    ("genvip", "lensbench.tools.ifbench.genvip.editor_cli:editor_app",
     "lensbench.tools.ifbench.genvip.train_demo:make_genvip_demo"),
    ("ivbench", "lensbench.tools.ivbench.sft_cli:sft_app", "lensbench.tools.ivbench.train_demo:make_ivbench_demo"),
]
