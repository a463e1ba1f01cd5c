"""The package as published (issue 25): metadata a registry needs, a README that says how to install before a
release exists, and a wheel + sdist that build and pass ``twine check --strict`` with the package data inside."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_metadata_is_ready_to_publish():
    p = _pyproject()["project"]
    for key in ("name", "version", "description", "readme", "requires-python", "license", "authors", "keywords",
                "classifiers", "dependencies", "scripts"):
        assert p.get(key), key
    assert (ROOT / p["license-files"][0]).read_text().startswith("Apache License")
    versions = {c.rsplit(":: ", 1)[1] for c in p["classifiers"] if c.startswith("Programming Language :: Python :: 3.")}
    low = tuple(int(x) for x in p["requires-python"].removeprefix(">=").split("."))
    assert min(tuple(int(x) for x in v.split(".")) for v in versions) == low


def test_readme_says_how_to_install_before_a_release():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Install, download, run", 1)[1].split("\n## ", 1)[0]
    assert "pip install -e ." in section or "pip install ." in section  # from the source tree
    assert "dist/lensbench-" in section and ".whl" in section  # from a built wheel
    first = next(ln for ln in section.splitlines() if ln.startswith("pip install"))
    assert not first.startswith("pip install lensbench ")  # no registry install as the first line before a release


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to copy the tracked tree")
def test_wheel_and_sdist_build_and_pass_twine_check(tmp_path):
    pytest.importorskip("build")
    pytest.importorskip("twine")
    src = tmp_path / "src"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "list"], capture_output=True)  # git is usable here
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    for f in files:  # the tracked tree (what a release is built from), without build leftovers
        if (ROOT / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, src / f)
    r = subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path / "dist"), str(src)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    dists = sorted((tmp_path / "dist").iterdir(), key=lambda d: d.suffix)
    assert [d.suffix for d in dists] == [".gz", ".whl"]
    r = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dists)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.count("PASSED") == 2, r.stdout + r.stderr
    names = zipfile.ZipFile(dists[1]).namelist()
    for needed in ("lensbench/benchmarks/rgbth/prompts/rgb_txt.txt", "lensbench/benchmarks/ifbench/paper/table2.json",
                   "lensbench/tools/data/pins.json", "lensbench/views/viewer/assets/viewer.js"):
        assert needed in names, needed
    assert any(n.endswith("licenses/LICENSE") for n in names)
    meta = zipfile.ZipFile(dists[1]).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in meta and "Classifier: Programming Language :: Python :: 3.10" in meta
