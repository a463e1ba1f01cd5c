"""Issue 32.2: the other tools' habits get the lensbench spelling, not click's closest string."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app


def lb(*args: str):
    r = CliRunner().invoke(app, list(args), prog_name="lensbench")
    return r.exit_code, " ".join(r.output.replace("│", " ").split())  # the rich error box unwrapped


@pytest.mark.parametrize("opt,says", [
    ("--output-path", "--out RUN_DIR"), ("--output_path", "--out RUN_DIR"), ("--log-dir", "--out RUN_DIR"),
    ("--work-dir", "--out RUN_DIR"), ("--tasks", "lensbench run BENCHMARK"), ("--model_args", "-M KEY=VALUE"),
    ("--max-samples", "--limit N"), ("--batch_size", "-M batch=N"),
])
def test_another_harness_option_names_ours(opt, says):
    code, out = lb("run", "rgb-th-bench", "--model", "random", opt, "x")
    assert code == 2 and f"No such option: {opt}; " in out and says in out
    assert "Possible options" not in out  # click's closest string ('--output-path' -> '--top-p') is gone


@pytest.mark.parametrize("args,means", [
    (("run", "rgbth"), "lensbench run rgb-th-bench"), (("run", "IF-Bench"), "lensbench run if-bench"),
    (("run", "ivbench"), "lensbench run iv-bench"), (("rgb-th-bench",), "lensbench run rgb-th-bench"),
    (("gobenc",), "lensbench gobench"), (("reprodce",), "lensbench reproduce"),
])
def test_a_wrong_command_name_gets_the_command_it_means(args, means):
    code, out = lb(*args)
    assert code == 2 and f"No such command {args[-1]!r}; did you mean '{means}'?" in out


def test_a_tool_group_named_like_a_benchmark_given_run_options_points_to_run():
    code, out = lb("ifbench", "--model", "openai:x")
    assert code == 2 and "'lensbench ifbench' is a tool group; to run the benchmark: 'lensbench run if-bench ...'" in out


def test_dash_h_is_help_everywhere():
    for args in ((), ("run",), ("run", "rgb-th-bench"), ("report",), ("data",)):
        code, out = lb(*args, "-h")
        assert code == 0 and "Usage: lensbench" in out, (args, out[:200])


def test_a_provider_slash_model_spec_suggests_the_colon(tmp_path, rgbth_gen):
    code, out = lb("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "openai/gpt-4o",
                   "--out", str(tmp_path / "r"))
    assert code == 2 and "(did you mean openai:gpt-4o?)" in out
