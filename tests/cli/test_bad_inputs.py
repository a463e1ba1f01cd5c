"""Bad inputs end in one line and exit 2, before anything is written (issue 30, part 6): eval configs with
wrong types or infinite values or binary bytes, files where folders are wanted, a missing or busy run
folder, a run with an empty samples.jsonl or a damaged store, prices that are not finite."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.benchmarks.rgbth.demo import write_release
from lensbench.cli.main import app
from lensbench.cli.reproduce import parse_price
from lensbench.core.errors import ConfigError
from lensbench.runtime.matrix import expand_cells, load_config
from lensbench.runtime.settings import MAX_CONCURRENCY, RunSettings
from lensbench.testing.runs import craft_run


def invoke(*args: str):
    r = CliRunner().invoke(app, list(args))
    assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit), r.exception
    return r


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return write_release(tmp_path_factory.mktemp("rgbth"), n_scenes=2)


def config(tmp_path: Path, data: Path, settings: str = "", model: str = "") -> Path:
    p = tmp_path / "eval.toml"
    p.write_text(f'out = "runs"\n{settings}\n[[model]]\nname = "m"\nspec = "random"\n{model}\n'
                 f'[[benchmark]]\nname = "rgb-th-bench"\ndata_dir = "{data}"\n', encoding="utf-8")
    return p


@pytest.mark.parametrize("settings, model, key, why", [
    ('[settings]\nlimit = "2"', "", "limit", "valid integer"),
    ("[settings]\nlimit = true", "", "limit", "valid integer"),
    ("[settings]\ntemperature = inf", "", "temperature", "finite number"),
    ("[settings]\ntimeout_s = inf", "", "timeout_s", "finite number"),
    ("[settings]\nmax_retry_after = nan", "", "max_retry_after", "finite number"),
    ("[settings]\nconcurrency = 1e12", "", "concurrency", "valid integer"),
    ("", "concurrency = 1e12", "model.0.concurrency", "valid integer"),
    ("", f"concurrency = {MAX_CONCURRENCY + 1}", "model.0.concurrency", f"less than or equal to {MAX_CONCURRENCY}"),
])
def test_eval_config_values_are_checked(tmp_path, data, settings, model, key, why):
    p = config(tmp_path, data, settings, model)
    r = invoke("eval", str(p), "--dry-run")
    assert r.exit_code == 2
    assert f"{p}:" in r.output and f"{key}: " in r.output and why in r.output
    assert not (tmp_path / "runs").exists()


def test_eval_config_good_values_still_pass(tmp_path, data):
    p = config(tmp_path, data, "[settings]\nlimit = 2\ntemperature = 0\ntimeout_s = 30", "concurrency = 64")
    (cell,) = expand_cells(load_config(p), p)
    assert (cell.settings.limit, cell.settings.temperature, cell.settings.timeout_s) == (2, 0.0, 30.0)
    assert cell.settings.concurrency == 64


def test_binary_eval_config_is_one_line(tmp_path):
    p = tmp_path / "eval.toml"
    p.write_bytes(bytes(range(256)))
    with pytest.raises(ConfigError, match=r"eval\.toml: not valid TOML"):
        load_config(p)
    p.write_bytes(b'out = "x"\x00\n')  # UTF-8, but a NUL byte
    with pytest.raises(ConfigError, match="NUL"):
        load_config(p)
    r = invoke("eval", str(p), "--dry-run")
    assert r.exit_code == 2 and r.output.startswith("error: ")


def test_run_flags_refuse_infinity():
    for key in ("temperature", "timeout_s", "max_retry_after"):
        with pytest.raises(ValueError, match="finite"):
            RunSettings(model="random", out="x", **{key: math.inf})
    with pytest.raises(ValueError, match="less than or equal"):
        RunSettings(model="random", out="x", concurrency=10 ** 12)


def test_figure_and_plot_folders_that_are_files(tmp_path, data):
    run = craft_run(tmp_path / "run", "rgb-th-bench", n=12)
    f = tmp_path / "a-file"
    f.write_text("x")
    r = invoke("view", str(run), "--out", str(tmp_path / "v.html"), "--figures-dir", str(f))
    assert r.exit_code == 2 and "--figures-dir" in r.output and "is a file" in r.output
    assert not (tmp_path / "v.html").exists()
    r = invoke("data", "stats", "rgb-th-bench", str(data), "--plots", str(f))
    assert r.exit_code == 2 and f"--plots {f} is a file" in r.output


def test_view_of_a_missing_folder_or_a_run_being_written(tmp_path):
    r = invoke("view", str(tmp_path / "nowhere"), "--out", str(tmp_path / "v.html"))
    assert r.exit_code == 2 and "no such run folder" in r.output and not (tmp_path / "v.html").exists()
    busy = craft_run(tmp_path / "busy", "rgb-th-bench", n=12)
    holder = subprocess.Popen([sys.executable, "-c", "import time; from lensbench.runtime.lock import RunLock; "
                               f"RunLock({str(busy)!r}); print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        r = invoke("view", str(busy), "--out", str(tmp_path / "v.html"))
        assert r.exit_code == 2 and "still being written" in r.output and not (tmp_path / "v.html").exists()
    finally:
        holder.kill()
        holder.wait()
    r = invoke("view", str(busy), "--out", str(tmp_path / "v.html"))  # finished: viewed
    assert r.exit_code == 0 and (tmp_path / "v.html").is_file()


def test_reproduce_refuses_empty_records_and_a_damaged_store(tmp_path):
    empty = craft_run(tmp_path / "empty", "rgb-th-bench", n=12)
    (empty / "samples.jsonl").write_text("\n \n")
    r = invoke("reproduce", "rgb-th-bench", str(empty))
    assert r.exit_code == 2 and "samples.jsonl: empty" in r.output
    damaged = craft_run(tmp_path / "damaged", "rgb-th-bench", n=12)
    (damaged / "responses.sqlite").write_bytes(b"not a database" * 300)
    r = invoke("reproduce", "rgb-th-bench", str(damaged))
    assert r.exit_code == 2 and "responses.sqlite: damaged" in r.output and "lensbench repair" in r.output
    r = invoke("reproduce", "rgb-th-bench", str(tmp_path / "nowhere"))
    assert r.exit_code == 2 and "no such run folder" in r.output


@pytest.mark.parametrize("bad", ["R=nan,inf", "R=inf,1", "R=1,nan", "R=-1,1", "R=1", "R1,2"])
def test_price_must_be_finite(bad):
    with pytest.raises(ConfigError, match="finite, non-negative"):
        parse_price(bad)


def test_price_good():
    assert parse_price("runs/a=2.5,10") == ("runs/a", (2.5, 10.0))
