"""`lensbench eval` (matrix config) and the Python API, on generated inputs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clirun import run_cli
import lensbench
from lensbench.core.errors import ConfigError
from lensbench.runtime.matrix import expand_cells, load_config
from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release
from lensbench.testing.server import FakeOpenAIServer


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_rgbth_release(tmp_path_factory.mktemp("d"), n_scenes=2)


def write(tmp_path: Path, text: str, name: str = "cfg.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_cells_expand_models_x_benchmarks_x_variants(tmp_path, data):
    cfg = load_config(write(tmp_path, f"""
out = "m"
[[model]]
name = "a"
spec = "random"
[[model]]
name = "b"
spec = "constant:Yes"
[[benchmark]]
name = "rgb-th-bench"
data_dir = "{data}"
limit = 3
[[benchmark.variant]]
label = "paper"
[[benchmark.variant]]
label = "extra"
options = {{ include_extra_skills = true }}
"""))
    cells = expand_cells(cfg)
    assert [(c.model, c.variant) for c in cells] == [("a", "paper"), ("a", "extra"), ("b", "paper"), ("b", "extra")]
    assert cells[1].out == tmp_path / "m" / "a" / "rgb-th-bench--extra"
    assert cells[1].options == {"include_extra_skills": True} and cells[1].settings.limit == 3


@pytest.mark.parametrize("body, needle", [
    ('out="m"\n[[model]]\nname="a"\nspec="random"\napi_key="sk-1"\n[[benchmark]]\nname="rgb-th-bench"', "model[0].api_key"),
    ('out="m"\n[[model]]\nname="a"\nspec="random"\n[[benchmark]]\nname="nope"', "unknown benchmark"),
    ('out="m"\n[[model]]\nname="a"\n[[benchmark]]\nname="rgb-th-bench"', "model.0.spec"),
    ('out="m"\n[[model]]\nname="a"\nspec="random"\n[[benchmark]]\nname="rgb-th-bench"\nconcurrency=0', "concurrency"),
])
def test_bad_configs_name_the_key(tmp_path, body, needle):
    with pytest.raises(ConfigError) as ei:
        expand_cells(load_config(write(tmp_path, body)))
    assert needle in str(ei.value) and "cfg.toml" in str(ei.value) or needle in str(ei.value)


def test_eval_shares_the_endpoint_budget_and_resumes(tmp_path, data):
    with FakeOpenAIServer(lambda body: "Yes", latency=0.05) as srv:
        cfg = write(tmp_path, f"""
out = "m"
[[model]]
name = "fake"
spec = "openai:fake"
base_url = ["{srv.url}"]
concurrency = 3
[[benchmark]]
name = "rgb-th-bench"
data_dir = "{data}"
concurrency = 8
[[benchmark.variant]]
label = "s1"
settings = {{ seed = 1 }}
[[benchmark.variant]]
label = "s2"
options = {{ include_extra_skills = false }}
settings = {{ temperature = 0.5 }}
""")
        r = run_cli("eval", str(cfg))
        assert r.returncode == 0, r.stderr
        assert "| fake |" in r.stdout
        assert srv.peak_inflight == 3  # two cells, each asking for 8, never more than the model's 3 at once
        sent = sum(srv.answered.values())
        r2 = run_cli("eval", str(cfg))
        assert r2.returncode == 0, r2.stderr
        assert sum(srv.answered.values()) == sent  # resumed as a whole: nothing sent twice
    for v in ("s1", "s2"):
        assert json.loads((tmp_path / "m" / "fake" / f"rgb-th-bench--{v}" / "result.json").read_text())["complete"]


def test_python_api_equals_cli(tmp_path, data):
    res = lensbench.run("rgb-th-bench", model="random", out=tmp_path / "api", data_dir=data, seed=5)
    r = run_cli("run", "rgb-th-bench", "--data-dir", str(data), "--model", "random", "--seed", "5", "--out",
                str(tmp_path / "cli"), "--format", "json", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["metrics"] == res.metrics
    run = lensbench.load_run(tmp_path / "api")
    assert run.result.metrics == res.metrics and len(run.records) == res.counts["n_questions"]
    assert run.manifest["benchmark"] == "rgb-th-bench"
    with pytest.raises(ConfigError, match="frames"):
        lensbench.run("rgb-th-bench", model="random", out=tmp_path / "x", data_dir=data, frames=8)


# ---------------------------------------------------------------- issue 20 item 7: nothing wrong let through

BASE = 'out = "m"\n[[model]]\nname = "a"\nspec = "random"\n[[benchmark]]\nname = "rgb-th-bench"\n'


@pytest.mark.parametrize("body, key, near", [
    (BASE + "limt = 2\n", "benchmark[0].limt", "limit"),
    (BASE.replace('spec = "random"\n', 'spec = "random"\nconcurency = 2\n'), "model[0].concurency", "concurrency"),
    (BASE + "settings = { sed = 3 }\n", "benchmark[0].settings.sed", "seed"),
    (BASE + "options = { inlcude_extra_skills = true }\n", "benchmark[0].options.inlcude_extra_skills",
     "include_extra_skills"),
    (BASE + '[[benchmark.variant]]\nlable = "x"\n', "benchmark[0].variant[0].lable", "label"),
    (BASE + '[[benchmark.variant]]\nlabel = "x"\nsettings = { temprature = 0.5 }\n',
     "benchmark[0].variant[0].settings.temprature", "temperature"),
    (BASE + '[[benchmark.variant]]\nlabel = "x"\noptions = { skip_mising = true }\n',
     "benchmark[0].variant[0].options.skip_mising", "skip_missing"),
    ("outt = 'm'\n" + BASE[len('out = "m"\n'):], "outt", "out"),
    (BASE + "max_token = 5\n", "benchmark[0].max_token", "max_tokens"),  # a typo, not a "secret"
    (BASE.replace('[[model]]', 'settings = { concurrencyy = 1 }\n[[model]]'), "settings.concurrencyy", "concurrency"),
    (BASE.replace('spec = "random"\n', 'spec = "random"\nsettings = { judge_modle = "x" }\n'),
     "model[0].settings.judge_modle", "judge_model"),
])
def test_every_unknown_key_is_refused_with_the_nearest_valid_one(tmp_path, body, key, near):
    with pytest.raises(ConfigError) as ei:
        load_config(write(tmp_path, body))
    msg = str(ei.value)
    assert f"{key}: unknown key (did you mean {near!r}?)" in msg and "cfg.toml" in msg and "secret" not in msg


def test_all_unknown_keys_are_named_at_once(tmp_path):
    body = BASE.replace('spec = "random"\n', 'spec = "random"\nconcurency = 2\n') + "limt = 2\nzzz = 1\n"
    with pytest.raises(ConfigError) as ei:
        load_config(write(tmp_path, body))
    msg = str(ei.value)
    assert "model[0].concurency" in msg and "benchmark[0].limt" in msg and "benchmark[0].zzz: unknown key" in msg


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "a/b", "../x", "a\\\\b", "", "-rf"])
def test_a_model_name_must_be_a_plain_folder_name(tmp_path, name):
    with pytest.raises(ConfigError, match=r"model\.0\.name"):
        load_config(write(tmp_path, BASE.replace('name = "a"', f'name = "{name}"')))
    assert not (tmp_path / "rgb-th-bench").exists()


@pytest.mark.parametrize("extra, clash", [
    ('[[model]]\nname = "a"\nspec = "constant:Yes"\n', "model a x benchmark rgb-th-bench"),
    ('[[model]]\nname = "A"\nspec = "constant:Yes"\n', "model A x benchmark rgb-th-bench"),  # same folder on macOS
    ('[[benchmark]]\nname = "rgb-th-bench"\nlimit = 3\n', "model a x benchmark rgb-th-bench"),
])
def test_duplicate_cells_are_refused_before_any_request(tmp_path, data, extra, clash):
    cfg = write(tmp_path, BASE.replace('name = "rgb-th-bench"', f'name = "rgb-th-bench"\ndata_dir = "{data}"') + extra)
    r = run_cli("eval", str(cfg))
    assert r.returncode == 2 and "would write the same folder" in r.stderr and clash in r.stderr, r.stderr
    assert "in use by" not in r.stderr and "cfg.toml" in r.stderr
    assert not (tmp_path / "m").exists()  # refused before any cell started


def test_duplicate_variant_labels_are_refused(tmp_path):
    cfg = load_config(write(tmp_path, BASE + '[[benchmark.variant]]\nlabel = "v"\n[[benchmark.variant]]\nlabel = "V"\n'))
    with pytest.raises(ConfigError, match="variant v and model a x benchmark rgb-th-bench x variant V|"
                                          "variant V and model a x benchmark rgb-th-bench x variant v"):
        expand_cells(cfg)


@pytest.mark.parametrize("line, path", [
    ('auth = "x"', "benchmark[0].auth"),
    ('credentials = "x"', "benchmark[0].credentials"),
    ('passwd = "x"', "benchmark[0].passwd"),
    ('password = "x"', "benchmark[0].password"),
    ('token = "x"', "benchmark[0].token"),
    ('api_key = "sk-1"', "benchmark[0].api_key"),
    ('secret = "x"', "benchmark[0].secret"),
    ('hf_token = "x"', "benchmark[0].hf_token"),
    ('settings = { openaiApiKey = "x" }', "benchmark[0].settings.openaiApiKey"),
    ('options = { Authorization = "Bearer x" }', "benchmark[0].options.Authorization"),
    ("extra_body = '{\"api_key\": \"sk-1\"}'", "benchmark[0].extra_body.api_key"),
    ("extra_body = '{\"headers\": {\"X-Api-Key\": \"k\"}}'", "benchmark[0].extra_body.headers.X-Api-Key"),
    ('extra_body = { auth = { user = "u", password = "p" } }', "benchmark[0].extra_body.auth"),
    ("settings = { extra_body = '{\"client_secret\": \"s\"}' }", "benchmark[0].settings.extra_body.client_secret"),
])
def test_secret_keys_are_refused_anywhere(tmp_path, line, path):
    with pytest.raises(ConfigError) as ei:
        load_config(write(tmp_path, BASE + line + "\n"))
    assert f"{path}: secrets never go in the config" in str(ei.value)


def test_token_counts_and_key_variable_names_are_not_secrets(tmp_path, data):
    cfg = load_config(write(tmp_path, BASE.replace('name = "rgb-th-bench"', f'name = "rgb-th-bench"\ndata_dir = "{data}"')
                            + 'max_tokens = 64\njudge_api_key_env = "JUDGE_KEY"\n'
                            'extra_body = { max_token = 3, max_new_tokens = 5, stop_token_ids = [1], '
                            'chat_template_kwargs = { enable_thinking = false } }\n'))
    [cell] = expand_cells(cfg)
    assert cell.settings.max_tokens == 64 and cell.settings.judge_api_key_env == "JUDGE_KEY"
    assert json.loads(cell.settings.extra_body) == {"max_token": 3, "max_new_tokens": 5, "stop_token_ids": [1],
                                                    "chat_template_kwargs": {"enable_thinking": False}}


def test_a_secret_in_extra_body_never_reaches_the_run_folder(tmp_path, data):
    from lensbench.runtime.settings import RunSettings

    with pytest.raises(ValueError, match="extra_body.credentials"):
        RunSettings(model="random", out=tmp_path / "r", extra_body='{"credentials": {"user": "u"}}')
    r = run_cli("run", "rgb-th-bench", "--data-dir", str(data), "--model", "random", "--out", str(tmp_path / "r"),
                "--no-progress", "--extra-body", '{"nested": {"passwd": "hunter2"}}')
    assert r.returncode == 2 and "extra_body.nested.passwd" in r.stderr and "hunter2" not in r.stderr
    assert not (tmp_path / "r").exists()


def test_eval_exits_3_when_a_cell_is_incomplete(tmp_path, data):
    replies = tmp_path / "replies.jsonl"
    replies.write_text(json.dumps({"request_id": "no-such-request", "text": "Yes"}) + "\n")
    cfg = write(tmp_path, f"""
out = "m"
[[model]]
name = "rec"
spec = "replay:{replies}"
[[benchmark]]
name = "rgb-th-bench"
data_dir = "{data}"
limit = 2
""")
    r = run_cli("eval", str(cfg))
    assert r.returncode == 3, r.stderr
    assert "incomplete" in r.stderr and "again" in r.stderr
    assert not json.loads((tmp_path / "m" / "rec" / "rgb-th-bench" / "result.json").read_text())["complete"]


def test_configs_built_in_python_are_checked_too():
    from pydantic import ValidationError

    from lensbench.runtime.matrix import MatrixConfig

    with pytest.raises(ValidationError, match=r"limt: unknown key \(did you mean 'limit'\?\)"):
        MatrixConfig(out="x", model=[{"name": "a", "spec": "random"}], benchmark=[{"name": "rgb-th-bench", "limt": 2}])
    cfg = MatrixConfig(out="x", model=[{"name": "a", "spec": "random"}],
                       benchmark=[{"name": "rgb-th-bench", "options": {"inptu": "rgb"}}])
    with pytest.raises(ConfigError, match=r"options.inptu: unknown key \(did you mean 'input'\?\)"):
        expand_cells(cfg)
