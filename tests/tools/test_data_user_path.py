"""Data commands on the user path (issue 25): check finds the data folder the README gives to download --from,
agrees with the loader, passes media a run skips by default; a failed download leaves no empty folder;
console text keeps its brackets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import run_cli
from lensbench.tools.data.check import check


def cli(*args, env=None):
    return run_cli(*args, env=env)


def test_check_finds_the_data_folder_inside_a_checkout(rgbth_gen):
    checkout = rgbth_gen.parent  # <root>/Data: the repository layout given to 'download --from'
    rep = check("rgb-th-bench", checkout, hash_content=False)
    assert rep.items[0].name == "data folder" and str(rgbth_gen) in rep.items[0].detail
    assert rep.root == rgbth_gen
    from lensbench.benchmarks.rgbth.data import load_units

    loader = next(i for i in rep.items if i.name.startswith("loader"))
    assert loader.ok is False and loader.detail.startswith(f"{len(load_units(rgbth_gen))} ")  # a small set
    files = next(i for i in rep.items if i.name == "files: scene question files")
    n_files = len(list(rgbth_gen.glob("*/*/questions.json")))
    assert n_files > 0 and files.detail.startswith(f"{n_files} ")  # the folder found, as the loader reads it


def test_check_question_file_agrees_with_the_loader(tmp_path):
    """The IF-Bench json one level down (the official repository's evaluate/if_bench/): the check looks there too."""
    r = cli("data", "demo", "if-bench", str(tmp_path / "evaluate" / "if_bench"))
    assert r.returncode == 0, r.stderr
    rep = check("if-bench", tmp_path / "evaluate", hash_content=False)
    items = {i.name: i for i in rep.items}
    assert items["files: question file"].ok and items["loader: questions"].detail.startswith("20")


def test_check_passes_missing_media_a_run_skips_by_default(tmp_path):
    recs = [{"index": f"1.{k}", "category": "direct_light_images", "image": f"direct_light_images/1.{k}.png",
             "title": "t", "prompt": "p", "Questions_reality": "1. a\n2. b\n3. c\n4. d\n5. e",
             "Question_aesthetics": "q", "Question_Instruction_consistency": "q"} for k in (1, 2)]
    (tmp_path / "data_total.json").write_text(json.dumps(recs))
    rep = check("gobench", tmp_path, hash_content=False)
    media = next(i for i in rep.items if i.name == "media")
    assert media.ok and "2 of 2 images absent" in media.detail and "skips them by default" in media.detail


def test_check_still_fails_missing_media_a_run_refuses(tmp_path):
    r = cli("data", "demo", "if-bench", str(tmp_path / "if"))
    assert r.returncode == 0
    for p in (tmp_path / "if" / "infrared_imgs").iterdir():
        p.unlink()
    rep = check("if-bench", tmp_path / "if", hash_content=False)
    assert not next(i for i in rep.items if i.name == "media").ok


def test_failed_offline_download_leaves_no_empty_folder(tmp_path, monkeypatch):
    from lensbench.tools.data.download import download
    from lensbench.tools.data.fetch import SourceUnreachable

    for var in ("HF_ENDPOINT", "LENSBENCH_GITHUB_URL", "LENSBENCH_GITHUB_RAW_URL"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")  # nothing listens: refused at once
    dest = tmp_path / "home" / "rgb-th-bench"
    with pytest.raises(SourceUnreachable):
        download("rgb-th-bench", dest, probe_timeout=1.0)
    assert not dest.exists()
    # an existing folder (the user's) is never removed
    dest.mkdir(parents=True)
    with pytest.raises(SourceUnreachable):
        download("rgb-th-bench", dest, probe_timeout=1.0)
    assert dest.is_dir()


def test_console_prints_install_hints_literally(capsys):
    from lensbench.core.console import err_console, warn

    err_console.print("needs 'av': pip install 'lensbench[video]'")
    warn("plots skipped: pip install 'lensbench[plots]'")
    err = capsys.readouterr().err
    assert "pip install 'lensbench[video]'" in err and "pip install 'lensbench[plots]'" in err
