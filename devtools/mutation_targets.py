"""What devtools/mutate.py mutates and which tests run against each mutant: the target modules of the
current layout (``CURRENT``, plus the ``*_mutants.py`` files in ``CURRENT_EXTRA``) and of the old
whole-benchmark layout (``BASE``). One pytest call per inner list; the calls of a module run in order and
stop at the first failing one (fast ones first). Paths relative to ``src/`` (modules) and to the
repository root (tests)."""

from __future__ import annotations

import ast
from pathlib import Path
G = "tests/golden/test_golden.py"
SC = "tests/scoring/"
BM = "tests/benchmarks/"
# one pytest call per inner list; calls run in order and stop at the first failing one (fast ones first)
UT = BM + "test_unit_tables.py"  # each benchmark's unit tables = its result values; the CIs resample them
_GM = [[BM + "test_groundingme_score.py", BM + "test_groundingme_compat.py", BM + "test_groundingme_bon.py"],
       [G, "-k", "gm_"]]
_GO = [[BM + "test_gobench_scoring.py", BM + "test_gobench_vlmevalkit.py", BM + "test_gobench_protocol.py"],
       [G, "-k", "go_"]]
_IV = [[BM + "test_ivbench_protocol.py", BM + "test_ivbench.py"], [G, "-k", "iv_"]]
_IF = [[BM + "test_ifbench_protocol.py", BM + "test_ifbench_fidelity.py"], [G, "-k", "if_"]]
_RG = [[BM + "test_rgbth_protocol.py"], [G, "-k", "rgbth"]]
_SC = [["tests/scoring", "-k", "not 812"]]  # the n=812 binomial case alone takes ~35 s
_RT = [["tests/runtime/test_send_path.py", "tests/runtime/test_stream.py", "tests/runtime/test_batching.py",
        "tests/runtime/test_engine_prefetch.py"],
       ["tests/runtime/test_engine_faults.py", "tests/runtime/test_reliability.py"]]
_ST = [_RT[0] + ["tests/runtime/test_store_get_many.py", "tests/runtime/test_store_durability.py"],
       _RT[1] + ["tests/runtime/test_full_disk.py"]]  # the disk-full outage: group-commit retries, durable()


def _with(calls: list[list[str]], *first: str) -> list[list[str]]:
    """``calls`` with ``first`` (test files) added to its first pytest call."""
    return [calls[0] + list(first), *calls[1:]]


#: current layout (issue 21's one-folder benchmarks and one engine send path): module (relative to src/) ->
#: pytest calls. Every path here must exist (the baseline and ``_tests_for`` warn about a missing one).
CURRENT: dict[str, list[list[str]]] = {
    "lensbench/scoring/text.py": _SC, "lensbench/scoring/metrics.py": _SC, "lensbench/scoring/bbox.py": _SC,
    "lensbench/scoring/bootstrap.py": _SC, "lensbench/scoring/judges.py": _SC,
    "lensbench/scoring/knockout.py": _SC, "lensbench/scoring/units.py": _with(_SC, UT),
    "lensbench/scoring/paired.py": _SC, "lensbench/scoring/intervals.py": _with(_SC, UT),
    "lensbench/benchmarks/rgbth/aggregate.py": _RG, "lensbench/benchmarks/rgbth/units.py": _with(_RG, UT),
    "lensbench/benchmarks/rgbth/refusal.py": _with(_RG, BM + "test_rgbth_reproduce.py"),
    "lensbench/benchmarks/ivbench/units.py": _with(_IV, UT), "lensbench/benchmarks/gobench/units.py": _with(_GO, UT),
    "lensbench/benchmarks/groundingme/units.py": _with(_GM, UT),
    "lensbench/benchmarks/ifbench/score.py": _with(_IF, UT), "lensbench/benchmarks/ifbench/parse.py": _IF,
    "lensbench/benchmarks/ivbench/aggregate.py": _IV, "lensbench/benchmarks/ivbench/parse.py": _IV,
    "lensbench/benchmarks/ivbench/options.py": _IV,
    "lensbench/benchmarks/gobench/sps.py": _GO, "lensbench/benchmarks/gobench/parse_paper.py": _GO,
    "lensbench/benchmarks/gobench/parse_vlmevalkit.py": _GO, "lensbench/benchmarks/gobench/aggregate.py": _GO,
    "lensbench/benchmarks/groundingme/score.py": _GM, "lensbench/benchmarks/groundingme/compat.py": _GM,
    "lensbench/benchmarks/groundingme/parse.py": _GM, "lensbench/benchmarks/groundingme/aggregate.py": _GM,
    "lensbench/runtime/engine.py": _RT, "lensbench/runtime/phase.py": _RT,
    "lensbench/runtime/store.py": _ST, "lensbench/runtime/rows.py": _ST,
}

#: extra test files (written to kill mutants) run FIRST when present: one extra pytest call
CURRENT_EXTRA: dict[str, list[str]] = {
    "lensbench/scoring/": ["tests/scoring/test_scoring_mutants.py"],
    "lensbench/runtime/": ["tests/runtime/test_engine_store_mutants.py", "tests/runtime/test_engine_paths.py"],
    "lensbench/benchmarks/rgbth/": ["tests/benchmarks/test_rgbth_mutants.py"],
    "lensbench/benchmarks/ifbench/": ["tests/benchmarks/test_ifbench_mutants.py"],
    "lensbench/benchmarks/ivbench/": ["tests/benchmarks/test_ivbench_mutants.py"],
    "lensbench/benchmarks/gobench/": ["tests/benchmarks/test_gobench_mutants.py"],
    "lensbench/benchmarks/groundingme/": ["tests/benchmarks/test_groundingme_mutants.py"],
}

#: the pre-restructure layout (/work/base): whole benchmark modules held scoring, parsing and aggregation
T = "tests/"
BASE: dict[str, list[list[str]]] = {
    "lensbench/parsing.py": [[T + "test_parsing.py", T + "test_ifbench.py", T + "test_groundingme.py"]],
    "lensbench/stats.py": [[T + "test_ifbench.py", T + "test_ivbench.py", T + "test_gobench.py"]],
    "lensbench/benchmarks/rgbth.py": [[T + "test_rgbth_replay.py", T + "test_cli.py"]],
    "lensbench/benchmarks/ifbench.py": [[T + "test_ifbench.py"]],
    "lensbench/benchmarks/ivbench.py": [[T + "test_ivbench.py", T + "test_ivbench_run.py"]],
    "lensbench/benchmarks/gobench.py": [[T + "test_gobench.py"]],
    "lensbench/benchmarks/groundingme.py": [[T + "test_groundingme.py", T + "test_groundingme_e2e.py"]],
    "lensbench/engine.py": [[T + "test_engine_faults.py", T + "test_cli.py"]],
    "lensbench/store.py": [[T + "test_engine_faults.py", T + "test_cli.py"]],
}

#: in the old whole-benchmark modules only the scoring / parsing / aggregation functions are mutated
#: (the functions that moved into the current target modules); loaders, CLI and plots are left out
BASE_FUNCTION_FILTER = ("lensbench/benchmarks/",)


def _scoring_function_names(src: Path) -> set[str]:
    """Names of the functions/methods defined in the current layout's target modules (the 'moved' code)."""
    names: set[str] = set()
    for rel in CURRENT:
        p = src / rel
        if not p.is_file():
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
    # the benchmark classes' scoring entry points
    names |= {"score", "aggregate", "_score", "_aggregate"}
    return names
