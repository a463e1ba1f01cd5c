"""The core install stays importable: every lensbench module imports with the optional
libraries blocked (``sys.modules[name] = None``, as if not installed), the CLI's help works, and
using a feature whose extra is missing prints one line with the literal install hint."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

HEAVY = ["av", "cv2", "sklearn", "matplotlib", "pyarrow", "datasets", "huggingface_hub", "torch", "transformers",
         "diffusers", "krippendorff", "httpx", "scipy", "pandas", "yt_dlp", "open_clip", "xllamacpp", "skimage",
         "skvideo"]

PRELUDE = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(SRC)!r})
    for name in {HEAVY!r}:
        sys.modules[name] = None
""")


def _run(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code), *args], capture_output=True,
                          text=True, timeout=timeout)


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return _run("""
        from lensbench.cli.main import app
        sys.argv = ["lensbench", *sys.argv[1:]]
        app()
    """, *argv)


def test_every_module_imports_without_optional_libraries():
    r = _run("""
        import importlib, pkgutil, lensbench
        bad = []
        for m in pkgutil.walk_packages(lensbench.__path__, "lensbench."):
            try:
                importlib.import_module(m.name)
            except Exception as exc:
                bad.append(f"{m.name}: {type(exc).__name__}: {exc}")
        print("\\n".join(bad))
        assert not bad, bad
        n = sum(1 for _ in pkgutil.walk_packages(lensbench.__path__, "lensbench."))
        print("modules", n)
    """)
    assert r.returncode == 0, r.stdout + r.stderr
    assert int(r.stdout.split("modules")[-1]) > 50


def test_cli_help_works_without_optional_libraries():
    for argv in (["--help"], ["run", "rgb-th-bench", "--help"], ["data", "--help"], ["list"]):
        r = _cli(*argv)
        assert r.returncode == 0, (argv, r.stdout + r.stderr)


def test_missing_extra_is_one_line_with_literal_hint(tmp_path):
    r = _cli("data", "download", "groundingme", "--dest", str(tmp_path / "gm"))
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert "pip install 'lensbench[data]'" in lines[0]  # brackets printed literally, not eaten as markup
    assert "huggingface_hub" in lines[0]


def test_library_feature_raises_missing_extra(tmp_path):
    r = _run(f"""
        from lensbench.core.extras import MissingExtraError
        from lensbench.media import video
        try:
            video.probe({str(tmp_path / 'x.mp4')!r})
        except MissingExtraError as exc:
            print("HINT", exc)
    """)
    assert "HINT" in r.stdout and "pip install 'lensbench[video]'" in r.stdout, r.stdout + r.stderr


def test_rgbth_report_path_needs_no_scipy():
    """The main job's significance row (binomial threshold) works with scipy blocked."""
    r = _run("""
        from lensbench.scoring.metrics import binomial_threshold, correlation
        print(binomial_threshold(406, 0.0625), correlation([1, 2, 3, 4], [1, 3, 2, 4])["SRCC"])
    """)
    assert r.returncode == 0, r.stderr
    thr, srcc = r.stdout.split()
    assert float(thr) == 100 * 35 / 406  # k = 35 (exact tail sums in tests/scoring/test_metrics_pure.py)
    assert float(srcc) == 0.8  # ranks 1,2,3,4 vs 1,3,2,4: 1 - 6*2/(4*15)


def test_tool_group_prints_hint_literally(tmp_path):
    """A tool group's own error printer keeps the brackets too (GOBench summary needs krippendorff)."""
    ratings = tmp_path / "r.csv"
    ratings.write_text("rater,image,reality,aesthetics,instruction\nA,x.png,5,4,3\nB,x.png,4,4,3\n")
    r = _cli("gobench", "summary", "--ratings", str(ratings))
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stdout + r.stderr
    assert lines[0].endswith("needs the Python module 'krippendorff': pip install 'lensbench[gobench]'")
