"""The user path, second pass (issue 25), below the command line: progress, preflight, eval keys, the API."""

from __future__ import annotations

import io
import json
import os
import warnings
from pathlib import Path

import pytest
from rich.console import Console

import lensbench
from lensbench.core.errors import ConfigError
from lensbench.core.extras import MissingExtraError, Requirement, check_requirements
from lensbench.runtime.matrix import load_config, run_matrix
from lensbench.runtime.matrix_progress import MatrixProgress
from lensbench.runtime.progress import PlainProgress, eta_text
from lensbench.testing.server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- progress
def test_eta_is_never_nan():
    assert eta_text(10, 0.0) == "ETA unknown"
    assert eta_text(0, 0.0) == "ETA 0 s"
    assert eta_text(10, 2.0) == "ETA 5 s"


def test_refused_endpoint_progress_line_has_no_nan():
    buf = io.StringIO()
    p = PlainProgress(Console(file=buf, width=200), every_s=0.0)
    p.start("rgb-th-bench", 10, 0)
    p.stop()  # nothing answered (a refused endpoint): no rate
    assert "nan" not in buf.getvalue() and "ETA unknown" in buf.getvalue()


def test_matrix_progress_off_a_terminal_prints_the_matrix_and_each_running_cell():
    buf = io.StringIO()
    mp = MatrixProgress(["m/a", "m/b"], Console(file=buf, width=200), every_s=0.0, terminal=False)
    with mp:
        a, b = mp.cell("m/a"), mp.cell("m/b")
        a.start("a", 4, 1)
        a.advance(0)
        a.advance(1)
        block = mp.plain_block()
        assert block.splitlines()[0].startswith("matrix: 0/2 cells done, 1 running; requests 3/4 (1 cached)")
        assert "1 errors" in block and "(+1 cell(s) not started)" in block
        assert block.splitlines()[1].startswith("  m/a (a): 3/4, ") and "ETA" in block
        a.advance(1)
        b.start("b", 2, 0)
        b.advance(0)
        b.advance(0)
        a.start("a judge", 2, 0)  # a second phase adds to the cell's totals
        a.advance(1)
        a.advance(2)
        mp.finish_cell("m/a", "incomplete (3 errors)")
        mp.finish_cell("m/b", "complete")
    out = buf.getvalue()
    assert "m/a: started a (4 requests, 1 cached)" in out and "m/b: started b (2 requests, 0 cached)" in out
    assert "m/a: incomplete (3 errors) (6/6 requests" in out and "m/b: complete (2/2 requests" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("matrix: 2/2 cells done, 0 running; requests 8/8 (1 cached)") and "3 errors" in last
    assert "nan" not in out


def test_matrix_progress_on_a_terminal_draws_bars_per_cell_and_for_the_matrix():
    buf = io.StringIO()
    con = Console(file=buf, width=120, force_terminal=True)
    mp = MatrixProgress(["m/a", "m/b"], con, every_s=0.0)
    assert mp.terminal
    with mp:
        a = mp.cell("m/a")
        a.start("a", 3, 0)
        a.advance(0)
        assert set(mp._tasks) == {"_matrix", "m/a"}
        task = next(t for t in mp._bar.tasks if t.id == mp._tasks["m/a"])
        assert (task.total, task.completed) == (3, 1)
        total = next(t for t in mp._bar.tasks if t.id == mp._tasks["_matrix"])
        assert total.description == "matrix: 0/2 cells, 1 waiting" and total.total == 3
        mp.finish_cell("m/a", "complete")
        assert "m/a" not in mp._tasks
    assert "m/a: complete" in buf.getvalue()


# ---------------------------------------------------------------- requirements
def test_missing_requirements_are_named_together_with_one_install_line():
    with pytest.raises(MissingExtraError) as ei:
        check_requirements([Requirement("lensbench_no_such_mod_a", "video", "IV-Bench frames"),
                            Requirement("json", "stats", "json is there"),
                            Requirement("lensbench_no_such_mod_b", "plots", "a plot")])
    msg = str(ei.value)
    assert "IV-Bench frames needs the Python module 'lensbench_no_such_mod_a'" in msg
    assert "a plot needs the Python module 'lensbench_no_such_mod_b'" in msg
    assert msg.endswith("pip install 'lensbench[video,plots]'")
    seen = []
    check_requirements([Requirement("lensbench_no_such_mod_c", "plots", "a plot", optional=True)], seen.append)
    assert seen and "going on without it (pip install 'lensbench[plots]')" in seen[0]


def test_eval_checks_every_cells_libraries_before_any_request(tmp_path, monkeypatch):
    import lensbench.benchmarks.ifbench.benchmark as ifb

    monkeypatch.setattr(ifb.IFBench, "requirements",
                        lambda self, data_dir=None: [Requirement("lensbench_no_such_mod", "video", "a test need")],
                        raising=False)
    (tmp_path / "d").mkdir()
    with FakeOpenAIServer() as srv:
        (tmp_path / "m.toml").write_text(f'out = "runs"\n[[model]]\nname = "m"\nspec = "openai:x"\n'
                                         f'base_url = ["{srv.url}"]\n[[benchmark]]\nname = "rgb-th-bench"\n'
                                         f'data_dir = "d"\n[[benchmark]]\nname = "if-bench"\ndata_dir = "d"\n')
        with pytest.raises(MissingExtraError, match=r"a test need needs .*pip install 'lensbench\[video\]'"):
            run_matrix(load_config(tmp_path / "m.toml"))
        assert sum(srv.received.values()) == 0
    assert not (tmp_path / "runs").exists()


def test_eval_refuses_a_judge_on_a_benchmark_without_one(tmp_path):
    (tmp_path / "m.toml").write_text('out = "runs"\n[[model]]\nname = "m"\nspec = "random"\n'
                                     '[[benchmark]]\nname = "rgb-th-bench"\njudge_model = "openai:j"\n')
    from lensbench.runtime.matrix import expand_cells

    with pytest.raises(ConfigError, match=r"model m x benchmark rgb-th-bench: judge_model: rgb-th-bench has no judge"):
        expand_cells(load_config(tmp_path / "m.toml"), tmp_path / "m.toml")


def test_eval_judge_model_args_go_to_cells_with_a_judge_only(tmp_path):
    from lensbench.runtime.matrix import expand_cells

    (tmp_path / "m.toml").write_text('out = "runs"\nsettings = { judge_model = "llamacpp:/j.gguf", judge_model_arg = '
                                     '{ ctx = 4096 } }\n[[model]]\nname = "m"\nspec = "random"\n[[benchmark]]\n'
                                     'name = "rgb-th-bench"\n[[benchmark]]\nname = "if-bench"\n')
    rgbth, ifb = expand_cells(load_config(tmp_path / "m.toml"))
    assert rgbth.settings.judge_model_arg == [] and ifb.settings.judge_model_arg == ["ctx=4096"]
    (tmp_path / "n.toml").write_text('out = "runs"\n[[model]]\nname = "m"\nspec = "random"\n[[benchmark]]\n'
                                     'name = "rgb-th-bench"\njudge_model_arg = ["ctx=4096"]\n')
    with pytest.raises(ConfigError, match=r"rgb-th-bench: judge_model_arg: rgb-th-bench has no judge"):
        expand_cells(load_config(tmp_path / "n.toml"), tmp_path / "n.toml")
    (tmp_path / "o.toml").write_text('out = "runs"\n[[model]]\nname = "m"\nspec = "random"\n[[benchmark]]\n'
                                     'name = "if-bench"\njudge_model_arg = ["ctx"]\n')
    with pytest.raises(ConfigError, match=r"judge_model_arg.*give KEY=VALUE"):
        expand_cells(load_config(tmp_path / "o.toml"), tmp_path / "o.toml")


# ---------------------------------------------------------------- eval keys reference
def test_eval_keys_reference_is_generated_and_documents_every_key():
    from lensbench.benchmarks.registry import BENCHMARKS, get_benchmark
    from lensbench.runtime.matrix import BenchmarkEntry, MatrixConfig, ModelEntry, Variant
    from lensbench.runtime.matrix_keys import MATRIX_SET, config_reference
    from lensbench.runtime.settings import RunSettings

    ref = config_reference()
    assert (ROOT / "docs" / "eval-config.md").read_text(encoding="utf-8") == ref + "\n", \
        "docs/eval-config.md is stale: regenerate it with 'lensbench eval --keys > docs/eval-config.md'"
    for model in (MatrixConfig, ModelEntry, BenchmarkEntry, Variant):
        for k, f in model.model_fields.items():
            assert f"| `{k}` |" in ref and f.description, k
    flags = ref.split("## Run flags", 1)[1].split("## Benchmark `options`", 1)[0]
    for k in RunSettings.model_fields:
        assert (f"| `{k}` |" in flags) == (k not in MATRIX_SET), k
    for name in BENCHMARKS:  # the built-in ones: a plugin's options are not in lensbench's reference page
        cls = get_benchmark(name)
        section = ref.split(f"### `{name}`", 1)[1].split("###", 1)[0]
        for k in cls.Options.model_fields:
            assert f"| `{k}` |" in section, (name, k)
    # the keys the README example needs to run against local servers are documented
    for k in ("judge_base_url", "data_dir", "options"):
        assert f"| `{k}` |" in ref


def test_every_key_of_the_reference_is_accepted_by_the_loader(tmp_path):
    """The reference and the loader agree: a config using a key from each table loads."""
    (tmp_path / "m.toml").write_text(
        'out = "runs"\nsettings = { limit = 2, log_to = ["wandb"] }\n[[model]]\nname = "m"\nspec = "hf:/x"\n'
        'model_args = { dtype = "bfloat16" }\nconcurrency = 2\n[[benchmark]]\nname = "if-bench"\ndata_dir = "d"\n'
        'judge_model = "openai:j"\njudge_base_url = ["http://127.0.0.1:1/v1"]\noptions = { languages = "en" }\n'
        '[[benchmark.variant]]\nlabel = "t0"\nsettings = { temperature = 0.0 }\n')
    from lensbench.runtime.matrix import expand_cells

    (c,) = expand_cells(load_config(tmp_path / "m.toml"))
    assert c.settings.model_arg == ["dtype=bfloat16"] and c.settings.log_to == ["wandb"]
    assert c.settings.judge_base_url == ["http://127.0.0.1:1/v1"] and c.settings.temperature == 0.0


# ---------------------------------------------------------------- the Python API names Python arguments
def test_api_errors_name_python_arguments(tmp_path, rgbth_gen):
    with pytest.raises(ConfigError) as ei:
        lensbench.run("rgb-th-bench", model="random", out=tmp_path / "r", data_dir=tmp_path / "nope")
    assert "data_dir=" in str(ei.value) and "--data-dir" not in str(ei.value)
    with pytest.raises(ConfigError) as ei:
        lensbench.run("rgb-th-bench", model="random", out=tmp_path / "r", data_dir=rgbth_gen, judge_model="random")
    assert "'judge_model': rgb-th-bench has no judge" in str(ei.value) and "--" not in str(ei.value)
    with pytest.raises(ConfigError) as ei:
        lensbench.run("rgb-th-bench", model="random", out=tmp_path / "r", data_dir=rgbth_gen, temperature=-1)
    assert "temperature:" in str(ei.value) and "\n" not in str(ei.value)
    lensbench.run("rgb-th-bench", model="random", out=tmp_path / "r2", data_dir=rgbth_gen, limit=1)
    with pytest.raises(ConfigError) as ei:
        lensbench.run("rgb-th-bench", model="random", out=tmp_path / "r2", data_dir=rgbth_gen, limit=1, temperature=0.5)
    assert "temperature=0.5 (the folder's run: unset)" in str(ei.value) and "another 'out'" in str(ei.value)


def test_api_warns_for_an_unset_key_variable_on_a_local_server(tmp_path, rgbth_gen, monkeypatch):
    monkeypatch.delenv("MY_KEY", raising=False)
    with FakeOpenAIServer() as srv, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lensbench.run("rgb-th-bench", model="openai:m", base_url=[srv.url], api_key_env="MY_KEY", out=tmp_path / "r",
                      data_dir=rgbth_gen, limit=1)
    assert any("MY_KEY is not set" in str(w.message) for w in caught)


def test_a_judge_shared_by_every_cell_applies_only_where_the_protocol_has_one(tmp_path):
    from lensbench.runtime.matrix import expand_cells

    (tmp_path / "m.toml").write_text('out = "runs"\nsettings = { judge_model = "openai:j" }\n[[model]]\nname = "m"\n'
                                     'spec = "random"\n[[benchmark]]\nname = "rgb-th-bench"\n'
                                     '[[benchmark]]\nname = "if-bench"\n')
    rgbth, ifb = expand_cells(load_config(tmp_path / "m.toml"))
    assert rgbth.settings.judge_model is None and ifb.settings.judge_model == "openai:j"
