"""The user path, second pass (issue 25): what a new user meets on the command line, each checked end to end."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from clirun import real_cli, run_cli
from contract import contract_names, has_demo
from lensbench.testing.server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, env=None, columns: int | None = None, **kw):
    return run_cli(*args, env=env, columns=columns, **kw)


def no_key_env(**extra):
    e = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "MY_KEY")}
    e.update(extra)
    return e


# ---------------------------------------------------------------- help
def test_usage_lines_name_arguments_plainly():
    for args, usage in ((["report"], "RUN_DIR..."), (["view"], "RUN_DIR..."), (["show"], "RUN_DIR"),
                        (["merge"], "RUN_DIR...")):
        r = cli(*args, "--help", columns=80)
        assert r.returncode == 0, r.stderr
        line = next(ln for ln in r.stdout.splitlines() if "Usage:" in ln)
        assert "{" not in line and "}" not in line and usage in line, line
        assert "RUN_DIR......" not in r.stdout and "run_dirs" not in r.stdout


def test_top_level_commands_are_grouped_in_order():
    r = cli("--help", columns=80)
    out = r.stdout
    titles = [t for t in re.findall(r"╭─ (\w+) ─", out)]
    assert titles == ["Options", "Run", "Results", "Data", "Tools"]
    pos = {name: out.index(f"│ {name} ") for name in ("run", "eval", "merge", "list", "report", "view", "compare",
                                                     "show", "export", "log", "data", "repair", "genvip")}
    assert pos["run"] < pos["eval"] < pos["list"] < pos["report"] < pos["view"] < pos["log"] < pos["data"] \
        < pos["repair"] < pos["genvip"]


def test_run_help_is_readable_at_80_columns():
    r = cli("run", "if-bench", "--help", columns=80)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    # each option's help starts on its own line or beside a name column of at most 30 characters, so the help
    # column is wide: the description of --judge-model is on one line with its name
    row = next(ln for ln in lines if "--judge-model MODEL" in ln)
    assert "judge / answer-parser backend spec" in row
    # long option names (the --no- form) keep their full help below them, not squeezed into ~20 columns
    i = next(i for i, ln in enumerate(lines) if "--parser-disable-thinking" in ln)
    widths = [len(ln.strip("│ ").rstrip()) for ln in lines[i + 1:i + 3]]
    assert max(widths) > 50


# ---------------------------------------------------------------- judge flags, export --judge
def test_judge_flag_refused_on_a_benchmark_without_a_judge_round(rgbth_gen, tmp_path):
    r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "random", "--judge-model", "constant:Yes",
            "--out", str(tmp_path / "r"), "--no-progress")
    assert r.returncode == 2
    assert "--judge-model: rgb-th-bench has no judge or answer-parser round" in r.stderr
    assert not (tmp_path / "r").exists()  # refused before anything was written


def test_export_judge_labels_parser_replies_with_the_judge(tmp_path):
    data = tmp_path / "if"
    assert cli("data", "demo", "if-bench", str(data)).returncode == 0
    with FakeOpenAIServer(lambda body: "I pick A." if body["model"] == "vlm" else "A") as srv:
        r = cli("run", "if-bench", "--data-dir", str(data), "--model", "openai:vlm", "--base-url", srv.url,
                "--judge-model", "openai:parser-8b", "--judge-base-url", srv.url, "--limit", "2", "--languages", "en",
                "--out", str(tmp_path / "run"), "--no-progress", env=no_key_env())
        assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in cli("export", str(tmp_path / "run"), "--judge").stdout.splitlines()]
    by_role = {role: {x["model"] for x in rows if x["role"] == role} for role in ("model", "judge")}
    assert by_role == {"model": {"vlm"}, "judge": {"parser-8b"}}


# ---------------------------------------------------------------- show, data hints
def test_show_with_nothing_to_draw_leaves_no_folder(rgbth_gen, tmp_path):
    out = tmp_path / "run"
    assert cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "random", "--out", str(out),
               "--no-progress").returncode == 0
    sid = json.loads((out / "samples.jsonl").read_text().splitlines()[0])["sample_id"]
    r = cli("show", str(out), "--id", sid)
    assert r.returncode == 2 and "nothing to draw for rgb-th-bench" in r.stderr
    assert not (out / "show").exists()


def test_empty_default_data_folder_gives_the_download_hint(tmp_path):
    home = tmp_path / "home"
    (home / "if-bench").mkdir(parents=True)  # what a failed offline download used to leave
    r = cli("run", "if-bench", "--model", "constant:A", "--out", str(tmp_path / "run"), "--no-progress",
            env={**os.environ, "LENSBENCH_DATA": str(home)})
    assert r.returncode == 2
    assert "is empty: run 'lensbench data download if-bench'" in r.stderr and "if_bench.json" not in r.stderr


def test_ifbench_missing_image_hint_names_the_real_flag(tmp_path):
    data = tmp_path / "if"
    assert cli("data", "demo", "if-bench", str(data)).returncode == 0
    for p in (data / "infrared_imgs").iterdir():
        p.unlink()
    r = cli("run", "if-bench", "--data-dir", str(data), "--model", "constant:A", "--out", str(tmp_path / "run"),
            "--no-progress")
    assert r.returncode == 2 and "--images-dir" in r.stderr and "--image-dir," not in r.stderr
    # and the flag it names exists
    assert "--images-dir" in cli("run", "if-bench", "--help", columns=200).stdout


# ---------------------------------------------------------------- hints printed literally, missing libraries
def test_install_hints_keep_their_brackets(tmp_path):
    """A missing optional library found before the first request: one line, the extra in brackets."""
    data = tmp_path / "iv"
    data.mkdir()
    (data / "test_data.jsonl").write_text("")
    blocker = tmp_path / "noav"
    blocker.mkdir()
    (blocker / "av.py").write_text("raise ImportError('blocked for the test')\n")
    (blocker / "sitecustomize.py").write_text(
        "import importlib.abc, sys\n"
        "class B(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'av' or name.startswith('av.'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, B())\n")
    env = {**os.environ, "PYTHONPATH": str(blocker) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with FakeOpenAIServer() as srv:
        r = real_cli("run", "iv-bench", "--data-dir", str(data), "--model", "openai:m", "--base-url", srv.url,
                     "--out", str(tmp_path / "run"), "--no-progress", env=env)  # a new interpreter: sitecustomize
        assert sum(srv.received.values()) == 0  # nothing was sent
    assert r.returncode == 2
    assert "IV-Bench frame sampling needs the Python module 'av': pip install 'lensbench[video]'" in r.stderr


# ---------------------------------------------------------------- API keys, changed settings
def test_named_key_variable_unset_is_refused_for_a_remote_endpoint(rgbth_gen, tmp_path):
    r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "openai:m", "--base-url",
            "http://gpu1.invalid:8000/v1", "--api-key-env", "MY_KEY", "--out", str(tmp_path / "r"), "--no-progress",
            env=no_key_env())
    assert r.returncode == 2
    assert "--api-key-env MY_KEY: the environment variable MY_KEY is not set" in r.stderr


def test_named_key_variable_unset_is_a_warning_for_a_local_server(rgbth_gen, tmp_path):
    with FakeOpenAIServer() as srv:
        r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "openai:m", "--base-url", srv.url,
                "--api-key-env", "MY_KEY", "--limit", "1", "--out", str(tmp_path / "r"), "--no-progress",
                env=no_key_env())
        assert sum(srv.received.values()) > 0
    assert r.returncode == 0, r.stderr
    assert "MY_KEY is not set; sending to" in r.stderr and "without an API key" in r.stderr


def test_changed_generation_setting_on_an_existing_folder_is_refused(rgbth_gen, tmp_path):
    out = tmp_path / "r"
    with FakeOpenAIServer() as srv:
        base = ["run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "openai:m", "--base-url", srv.url,
                "--limit", "1", "--out", str(out), "--no-progress"]
        assert cli(*base, env=no_key_env()).returncode == 0
        sent = sum(srv.received.values())
        r = cli(*base, "--temperature", "0.2", env=no_key_env())
        assert r.returncode == 2
        assert "--temperature 0.2 (the folder's run: unset)" in r.stderr and "use another --out" in r.stderr
        assert sum(srv.received.values()) == sent  # nothing sent again
        # the folder's own settings resume it (all cached)
        assert cli(*base, env=no_key_env()).returncode == 0
        assert sum(srv.received.values()) == sent


# ---------------------------------------------------------------- catalogue, demo data
def test_list_catalogue_json(tmp_path):
    home = tmp_path / "home"
    assert cli("data", "demo", "groundingme", str(home / "groundingme")).returncode == 0
    r = cli("list", "--json", env={**os.environ, "LENSBENCH_DATA": str(home)})
    doc = json.loads(r.stdout)
    benches = {b["name"]: b for b in doc["benchmarks"]}
    from lensbench.benchmarks.registry import all_benchmarks

    for name, cls in all_benchmarks().items():
        b = benches[name]
        assert (b["title"], b["n_samples"], b["headline"], b["description"]) == \
            (cls.title, cls.n_samples, cls.headline, cls.description)
        assert b["description"] and b["headline"] and (b["n_samples"] is None or b["n_samples"] > 0)
    assert benches["groundingme"]["data"] == "demo" and benches["if-bench"]["data"] == "missing"
    assert benches["if-bench"]["judge"] and benches["rgb-th-bench"]["judge"] is None
    backends = {b["prefix"]: b for b in doc["backends"]}
    assert "dtype" in backends["hf"]["model_args"] and backends["openai"]["model_args"] == []
    table = cli("list", columns=100, env={**os.environ, "LENSBENCH_DATA": str(home)}).stdout
    assert "1,624" in table and "QAcc / SAcc" in table and "demo" in table


@pytest.mark.parametrize("contract_bench", contract_names(), indirect=True)
def test_list_shows_every_registered_benchmark(contract_bench):
    """Every registered benchmark (plugins and tests/toybench included) is listed with its class's facts:
    ``description`` and ``headline`` non-empty, ``n_samples`` a positive count or None (unknown: shown as -)."""
    name, cls = contract_bench
    (b,) = [b for b in json.loads(cli("list", "--json").stdout)["benchmarks"] if b["name"] == name]
    assert (b["title"], b["n_samples"], b["headline"], b["description"]) == \
        (cls.title, cls.n_samples, cls.headline, cls.description)
    assert b["description"] and b["headline"] and (b["n_samples"] is None or b["n_samples"] > 0)
    row = next(ln for ln in cli("list", columns=200).stdout.splitlines() if f"│ {name}: " in ln)
    assert (f"{cls.n_samples:,}" if cls.n_samples else " - ") in row, row


#: a model that answers in the benchmark's reply format where ``random`` does not
DEMO_MODEL = {"groundingme": 'constant:{"bbox_2d": [10, 10, 40, 40]}', "grounding-rej": 'constant:{"bbox_2d": null}'}


@pytest.mark.parametrize("contract_bench", contract_names("demo"), indirect=True)
def test_demo_data_runs_every_benchmark_offline(contract_bench, tmp_path):
    """Every registered benchmark (plugins and tests/toybench included): its demo data runs offline; one without
    demo data (no ``demo`` piece) is refused in one line."""
    bench, cls = contract_bench
    model = DEMO_MODEL.get(bench, "random")
    data = tmp_path / "demo"
    r = cli("data", "demo", bench, str(data))
    if not has_demo(cls):
        assert r.returncode == 2 and r.stderr.strip() == f"error: {bench} has no demo data set", r.stderr
        return
    if r.returncode != 0 and "pip install" in r.stderr:
        pytest.skip(r.stderr.strip())  # e.g. IV-Bench's demo videos without PyAV
    assert r.returncode == 0, r.stderr
    folder = Path(r.stdout.strip())
    assert "NOT THE BENCHMARK" in (folder / "DEMO-DATA-NOT-THE-BENCHMARK.txt").read_text()
    run = tmp_path / "run"
    r = cli("run", bench, "--data-dir", str(folder), "--model", model, "--out", str(run), "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "generated demo data, NOT" in r.stderr
    man = json.loads((run / "run.json").read_text())
    assert man["demo_data"] is True and man["n_samples"] > 0
    assert json.loads((run / "result.json").read_text())["extra"]["demo_data"]
    assert cli("report", str(run)).returncode == 0
    # a second demo into the same (non-empty) folder is refused
    assert cli("data", "demo", bench, str(data)).returncode == 2


# ---------------------------------------------------------------- model arguments
def test_model_args_reach_the_spec_and_are_checked(rgbth_gen, tmp_path):
    r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "openai:m", "--base-url",
            "http://127.0.0.1:9/v1", "-M", "dtype=bfloat16", "--out", str(tmp_path / "a"), "--no-progress")
    assert r.returncode == 2 and "the openai: backend takes no model arguments" in r.stderr
    r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "llamacpp:/nonexistent.gguf",
            "-M", "ctxx=4096", "--out", str(tmp_path / "b"), "--no-progress")
    assert r.returncode == 2 and "ctxx: unknown argument of llamacpp:" in r.stderr and "ctx" in r.stderr


def test_judge_model_args_are_checked_like_the_model_args(rgbth_gen, tmp_path):
    # a judge flag where the protocol has no judge round is refused like --judge-model
    r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "random", "--judge-model-arg", "ctx=4096",
            "--out", str(tmp_path / "r"), "--no-progress")
    assert r.returncode == 2 and "--judge-model-arg: rgb-th-bench has no judge or answer-parser round" in r.stderr
    assert not (tmp_path / "r").exists()
    demo = tmp_path / "if"
    assert cli("data", "demo", "if-bench", str(demo)).returncode == 0
    base = ["run", "if-bench", "--data-dir", str(demo), "--model", "random", "--no-progress"]
    # the judge's backend validates its keys as the model's does, naming the judge flag
    r = cli(*base, "--judge-model", "openai:j", "--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model-arg",
            "dtype=bfloat16", "--out", str(tmp_path / "a"))
    assert r.returncode == 2 and "--judge-model-arg: the openai: backend takes no model arguments" in r.stderr
    r = cli(*base, "--judge-model", "llamacpp:/nonexistent.gguf", "--judge-model-arg", "ctxx=4096", "--out",
            str(tmp_path / "b"))
    assert r.returncode == 2 and "--judge-model-arg ctxx: unknown argument of llamacpp:" in r.stderr
    r = cli(*base, "--judge-model", "llamacpp:/nonexistent.gguf", "--judge-model-arg", "ctx", "--out",
            str(tmp_path / "c"))
    assert r.returncode == 2 and "give KEY=VALUE" in r.stderr
    assert "--judge-model-arg KEY=VALUE" in cli("run", "if-bench", "--help", columns=200).stdout


def test_judge_model_args_reach_the_judge_spec_only(monkeypatch):
    from lensbench.benchmarks.ifbench.benchmark import IFBench
    from lensbench.core.errors import ConfigError
    from lensbench.runtime import runner
    from lensbench.runtime.settings import RunSettings

    specs = {}
    monkeypatch.setattr(runner, "build_backend", lambda ep, cfg: specs.setdefault(len(specs), ep.spec))
    s = RunSettings(model="llamacpp:/m.gguf", model_arg=["ctx=2048"], judge_model="llamacpp:/j.gguf?threads=2",
                    judge_model_arg={"ctx": 4096, "parallel": 1}, out="x")
    runner.build_backends(IFBench(), s)
    assert specs == {0: "llamacpp:/m.gguf?ctx=2048", 1: "llamacpp:/j.gguf?threads=2&ctx=4096&parallel=1"}
    with pytest.raises(ConfigError, match="--judge-model-arg: rgb-th-bench runs no judge"):
        from lensbench.benchmarks.rgbth.benchmark import RGBThBench

        runner.build_backends(RGBThBench(), RunSettings(model="random", judge_model_arg=["ctx=1"], out="x"))


def test_model_args_doc_is_generated():
    from lensbench.backends.providers import model_args_doc

    assert (ROOT / "docs" / "model-args.md").read_text(encoding="utf-8") == model_args_doc() + "\n", \
        "docs/model-args.md is stale: regenerate it from lensbench.backends.providers.model_args_doc()"
