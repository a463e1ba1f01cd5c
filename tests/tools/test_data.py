"""``lensbench data download | check`` without network: a local HTTP server stands in for GitHub
(archives with Range support, raw files), a fake ``huggingface_hub`` (folder copier) for the hub;
offline is a closed port / an unresolvable host. ``check`` runs on crafted folders always and on
the real data in ../shared/data when present."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lensbench.core.errors import DataError
from lensbench.tools.data.check import check
from lensbench.tools.data.download import download
from lensbench.tools.data.fetch import SourceUnreachable
from lensbench.tools.data.layouts import LAYOUTS

SHA = LAYOUTS["rgb-th-bench"].source.revision
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
RGB_SKILLS = ["Scene Understanding", "Detailed Object Presence", "Instance Attributes",
              "Instance Location w.r.t. Image", "Instance Spatial Relation", "Instance Counting", "Instance Interaction"]
TH_SKILLS = ["Temperature to Color Mapping Understanding", "RGB-Thermal-Heatmap Alignment", "Instance Thermal Attribute",
             "Relative Thermal Attribute", "Warmest Areas Detection", "Coldest Areas Detection",
             "Risk and Anomaly Detection"]


def rgbth_files(n_scenes: int = 29) -> dict[str, bytes]:
    """A release-shaped RGB-Th-Bench Data folder: n scenes x 14 one-question units."""
    files = {}
    for i in range(n_scenes):
        scene = f"Source 1/scene {i:02d}"
        items = [{"data_type": "Single RGB Image", "skill_type": s, "data_id": f"scene {i:02d}/rgb.jpg",
                  "QAs": [{"question": f"q{i} {s}?", "answer": "Yes"}]} for s in RGB_SKILLS]
        items += [{"data_type": "RGB-Thermal Pair", "skill_type": s,
                   "data_id": [f"scene {i:02d}/rgb.jpg", f"scene {i:02d}/thermal.jpg"],
                   "QAs": [{"question": f"q{i} {s}?", "answer": "No"}]} for s in TH_SKILLS]
        files[f"{scene}/questions.json"] = json.dumps({"data": items}).encode()
        files[f"{scene}/rgb.jpg"] = bytes([i]) * 1000
        files[f"{scene}/thermal.jpg"] = bytes([i + 1]) * 2000
    return files


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def zip_bytes(files: dict[str, bytes], prefix: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for rel, data in files.items():
            zf.writestr(prefix + rel, data)
    return buf.getvalue()


class Server:
    """Serves ``routes`` (path -> bytes) with HTTP Range support; records the Range headers."""

    def __init__(self, routes: dict[str, bytes]):
        self.routes, self.ranges = routes, []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                body = outer.routes.get(self.path)
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                rng = self.headers.get("Range")
                outer.ranges.append(rng)
                start = int(rng.split("=")[1].split("-")[0]) if rng else 0
                self.send_response(206 if rng else 200)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                self.wfile.write(body[start:])

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


@pytest.fixture
def github(monkeypatch):
    srv = Server({})
    monkeypatch.setenv("LENSBENCH_GITHUB_URL", srv.url)
    monkeypatch.setenv("LENSBENCH_GITHUB_RAW_URL", srv.url)
    yield srv
    srv.close()


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def test_github_archive_download_layout_manifest(github, tmp_path):
    files = rgbth_files()
    extra = {"README.md": b"x", "benchmark_results_GLM.json": b"{}"}  # outside the Data folder: not laid out
    github.routes[f"/huhanwj/RGB-Th-Benchmark/archive/{SHA}.zip"] = zip_bytes(
        {**{f"RGB-Th-Bench/Data/{k}": v for k, v in files.items()}, **extra}, f"RGB-Th-Benchmark-{SHA}/")
    dest = tmp_path / "home" / "rgb-th-bench"
    doc = download("rgb-th-bench", dest)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == \
        sorted([*files, "lensbench-data.json"])
    man = json.loads((dest / "lensbench-data.json").read_text())
    assert man["revision"] == SHA and man["source"]["repo"] == "huhanwj/RGB-Th-Benchmark"
    assert man["files"]["Source 1/scene 03/rgb.jpg"] == {"size": 1000, "sha256": _sha(bytes([3]) * 1000)}
    assert man["counts"] == {"scene question files": 29, "RGB images": 29, "thermal images": 29}
    assert doc["fingerprint"] == man["fingerprint"] and len(man["fingerprint"]) == 16
    assert not (tmp_path / "home" / ".rgb-th-bench.download").exists()  # staging removed
    rep = check("rgb-th-bench", dest)
    assert rep.ok, rep.lines()
    assert rep.n_samples == 29 * 14 and rep.fingerprint == man["fingerprint"]


def test_github_archive_resumes_with_range(github, tmp_path):
    body = zip_bytes({f"RGB-Th-Bench/Data/{k}": v for k, v in rgbth_files().items()}, f"RGB-Th-Benchmark-{SHA}/")
    github.routes[f"/huhanwj/RGB-Th-Benchmark/archive/{SHA}.zip"] = body
    dest = tmp_path / "rgb"
    part = tmp_path / ".rgb.download" / f"RGB-Th-Benchmark-{SHA}.zip.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(body[:5000])  # an interrupted earlier download
    download("rgb-th-bench", dest)
    assert github.ranges == ["bytes=5000-"]
    assert check("rgb-th-bench", dest).ok


def test_count_mismatch_fails_without_manifest(github, tmp_path):
    github.routes[f"/huhanwj/RGB-Th-Benchmark/archive/{SHA}.zip"] = zip_bytes(
        {f"RGB-Th-Bench/Data/{k}": v for k, v in rgbth_files(28).items()}, f"RGB-Th-Benchmark-{SHA}/")
    with pytest.raises(DataError, match="scene question files: 28 .*expected 29, found 28"):
        download("rgb-th-bench", tmp_path / "rgb")
    assert not (tmp_path / "rgb" / "lensbench-data.json").exists()


def test_offline_fails_fast_with_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("LENSBENCH_GITHUB_URL", "https://no-such-host.invalid")
    t = time.monotonic()
    with pytest.raises(SourceUnreachable) as ei:
        download("rgb-th-bench", tmp_path / "rgb")
    assert time.monotonic() - t < 10
    msg = str(ei.value)
    assert "no-such-host.invalid" in msg and "huhanwj/RGB-Th-Benchmark" in msg
    assert "lensbench data download rgb-th-bench --from DIR" in msg and "\n" not in msg


def test_offline_hub_via_cli_one_line(tmp_path):
    pytest.importorskip("huggingface_hub")
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there: connection refused
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{port}", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    t = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "lensbench", "data", "download", "if-bench", "--dest", str(tmp_path / "d")],
                       capture_output=True, text=True, env={**env, "PYTHONPATH": str(Path(__file__).parents[2] / "src")},
                       timeout=60)
    assert time.monotonic() - t < 10
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "casiatao/IF-Bench" in lines[0] and "--from DIR" in lines[0]


def test_hub_snapshot_archives_git_files_and_resolved_revision(github, monkeypatch, tmp_path):
    hub = pytest.importorskip("huggingface_hub")
    mirror = tmp_path / "mirror"
    imgs = {f"infrared_imgs/{i:03d}.jpg": bytes([i % 256]) * 10 for i in range(499)}
    write_tree(mirror, {"README.md": b"IF-Bench", "infrared_imgs.zip": zip_bytes(imgs, "")})
    calls = []

    class FakeApi:
        def __init__(self, endpoint=None):
            pass

        def dataset_info(self, repo, revision=None, timeout=None):
            calls.append(("info", repo, revision))
            return type("Info", (), {"sha": "f" * 40})()

    def fake_snapshot(repo_id, repo_type, revision, local_dir, allow_patterns=None, **kw):
        calls.append(("snapshot", repo_id, revision))
        write_tree(Path(local_dir), {p.name: p.read_bytes() for p in mirror.iterdir()})
        return local_dir

    monkeypatch.setattr(hub, "HfApi", FakeApi)
    monkeypatch.setattr(hub, "snapshot_download", fake_snapshot)
    monkeypatch.setenv("HF_ENDPOINT", github.url)  # a reachable local host for the probe
    bench_json = json.dumps({"Scene Understanding": []}).encode()
    github.routes["/casiatao/IF-Bench/fc784fcabca35cee7fd655b8252b37beddfd82de/evaluate/if_bench/if_bench.json"] = bench_json
    dest = tmp_path / "if"
    doc = download("if-bench", dest)
    assert calls == [("info", "casiatao/IF-Bench", "main"), ("snapshot", "casiatao/IF-Bench", "f" * 40)]
    assert doc["revision_requested"] == "main" and doc["revision"] == "f" * 40
    assert (dest / "if_bench.json").read_bytes() == bench_json
    assert len(list((dest / "infrared_imgs").glob("*.jpg"))) == 499  # archive extracted in place
    assert doc["source"]["git_files"][0]["commit"].startswith("fc784fc")


def test_from_local_copy_finds_data_folder_and_resumes(tmp_path):
    src = write_tree(tmp_path / "checkout" / "RGB-Th-Bench" / "Data", rgbth_files()).parents[1]
    dest = tmp_path / "rgb"
    doc = download("rgb-th-bench", dest, from_dir=src, revision=SHA)
    assert doc["source"]["kind"] == "local" and doc["revision"] == SHA
    assert (dest / "Source 1" / "scene 00" / "questions.json").is_file()
    before = (dest / "Source 1" / "scene 00" / "rgb.jpg").stat().st_mtime_ns
    download("rgb-th-bench", dest, from_dir=src)  # again: files of the right size are kept
    assert (dest / "Source 1" / "scene 00" / "rgb.jpg").stat().st_mtime_ns == before
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no rgb-th-bench data"):
        download("rgb-th-bench", tmp_path / "x", from_dir=tmp_path / "empty")


def test_check_crafted_folders(tmp_path):
    root = write_tree(tmp_path / "rgb", rgbth_files())
    rep = check("rgb-th-bench", root)
    assert rep.ok and rep.n_samples == 406
    (root / "Source 1" / "scene 05" / "thermal.jpg").unlink()
    rep = check("rgb-th-bench", root)
    failed = {i.name: i.detail for i in rep.items if not i.ok}
    assert failed["files: thermal images"].startswith("28 (release: 29)")
    assert "scene 05/thermal.jpg" in failed["media"]
    assert "loader: question units" in failed  # the loader names the missing image


def test_check_detects_changed_file_against_manifest(tmp_path):
    src = write_tree(tmp_path / "src", rgbth_files())
    dest = tmp_path / "rgb"
    download("rgb-th-bench", dest, from_dir=src)
    (dest / "Source 1" / "scene 01" / "rgb.jpg").write_bytes(b"tampered")
    rep = check("rgb-th-bench", dest)
    m = next(i for i in rep.items if i.name == "manifest")
    assert not m.ok and "1 changed (e.g. Source 1/scene 01/rgb.jpg)" in m.detail
    rep = check("rgb-th-bench", dest, hash_content=False)  # sizes only: still caught (8 bytes, not 1000)
    assert not next(i for i in rep.items if i.name == "manifest").ok and rep.fingerprint is None


def test_check_ivbench_reports_missing_media(tmp_path):
    q = {"vid1": [{"data_id": 0, "image_name": "vid1_0.png", "question": "Q?", "question_type": "NLI",
                   "granularity": "Whole Video", "answer": "a", "answer_location": "x", "distractors": ["b", "c"]}]}
    root = write_tree(tmp_path / "iv", {"test_data.jsonl": (json.dumps(q) + "\n").encode(), "images/vid1_0.png": b"x"})
    rep = check("iv-bench", root)
    items = {i.name: i for i in rep.items}
    assert items["files: query images"].ok and items["files: videos"].ok
    assert not items["media"].ok and "1 of 1 videos not in videos/" in items["media"].detail
    assert items["loader: queries"].detail == "1 (release: 1686)" and not items["loader: queries"].ok


@pytest.mark.skipif(not (SHARED / "RGB-Th-Bench").is_dir(), reason="no ../shared/data")
def test_check_real_rgbth_and_layout_from_shared(tmp_path):
    real = SHARED / "RGB-Th-Bench" / "RGB-Th-Bench" / "Data"
    rep = check("rgb-th-bench", real)
    assert rep.ok, rep.lines()
    assert rep.n_samples == 406
    dest = tmp_path / "rgb"
    doc = download("rgb-th-bench", dest, from_dir=SHARED / "RGB-Th-Bench" / "RGB-Th-Bench")
    assert doc["n_files"] == 90 and doc["fingerprint"] == rep.fingerprint


@pytest.mark.skipif(not (SHARED / "GOBench").is_dir(), reason="no ../shared/data")
def test_check_real_partial_copies_name_what_is_missing():
    rep = check("gobench", SHARED / "GOBench" / "data")
    items = {i.name: i for i in rep.items}
    assert items["loader: records"].ok and items["loader: records"].detail == "999 (release: 999)"
    assert "954 of 999 images absent" in items["media"].detail
    rep = check("if-bench", SHARED / "IF-Bench" / "evaluate" / "if_bench")
    items = {i.name: i for i in rep.items}
    assert items["loader: questions"].ok and not items["files: infrared images"].ok
