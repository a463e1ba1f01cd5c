"""``lensbench data download | check`` without network: a local HTTP server stands in for GitHub
(archives with Range support, raw files), a fake ``huggingface_hub`` (folder copier) for the hub;
offline is a closed port / an unresolvable host. ``check`` runs on crafted folders always and on
the real data in ../shared/data when present."""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import sys
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from clirun import run_cli
from lensbench.core.errors import DataError
from lensbench.tools.data.check import check
from lensbench.tools.data.download import download
from lensbench.tools.data.fetch import FetchError, SourceUnreachable
from lensbench.tools.data.layouts import all_layouts

LAYOUTS = all_layouts()  # every benchmark with an official release

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
        self.cut: dict[str, int] = {}  # path -> bytes actually sent (Content-Length announces them all)
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
                self.wfile.write(body[start:outer.cut.pop(self.path, len(body))])

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


@pytest.fixture
def pin(monkeypatch):
    """``pin(key, {repo path: bytes}, complete_under=None)``: make the pinned-hash table (the shipped
    one, with source ``key`` replaced) pin crafted files, so the crafted releases below are the pinned ones."""
    from lensbench.tools.data import pins as pins_mod

    table = json.loads(json.dumps(pins_mod._table()))

    def add(key: str, files: dict[str, bytes], complete_under: str | None = None) -> None:
        table["sources"][key] = {"files": {k: {"size": len(v), "sha256": _sha(v)} for k, v in files.items()},
                                 **({"complete_under": complete_under} if complete_under else {})}

    monkeypatch.setattr(pins_mod, "_table", lambda: table)
    return add


def pin_rgbth(pin, files: dict[str, bytes]) -> None:
    pin(f"github:huhanwj/RGB-Th-Benchmark@{SHA}", {f"RGB-Th-Bench/Data/{k}": v for k, v in files.items()},
        "RGB-Th-Bench/Data/")


@pytest.fixture
def github(monkeypatch):
    srv = Server({})
    monkeypatch.setenv("LENSBENCH_GITHUB_URL", srv.url)
    monkeypatch.setenv("LENSBENCH_GITHUB_RAW_URL", srv.url)
    yield srv
    srv.close()


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def test_github_archive_download_layout_manifest(github, pin, tmp_path):
    files = rgbth_files()
    pin_rgbth(pin, files)
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


def test_github_archive_resumes_with_range(github, pin, tmp_path):
    pin_rgbth(pin, rgbth_files())
    body = zip_bytes({f"RGB-Th-Bench/Data/{k}": v for k, v in rgbth_files().items()}, f"RGB-Th-Benchmark-{SHA}/")
    github.routes[f"/huhanwj/RGB-Th-Benchmark/archive/{SHA}.zip"] = body
    dest = tmp_path / "rgb"
    part = tmp_path / ".rgb.download" / f"RGB-Th-Benchmark-{SHA}.zip.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(body[:5000])  # an interrupted earlier download
    download("rgb-th-bench", dest)
    assert github.ranges == ["bytes=5000-"]
    assert check("rgb-th-bench", dest).ok


def test_count_mismatch_fails_without_manifest(github, pin, tmp_path):
    pin_rgbth(pin, rgbth_files(28))
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


def test_hub_snapshot_archives_git_files_and_resolved_revision(github, pin, monkeypatch, tmp_path):
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
    pin("github:casiatao/IF-Bench@fc784fcabca35cee7fd655b8252b37beddfd82de", {"evaluate/if_bench/if_bench.json": bench_json})
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


# ------------------------------------------------- issue 20 item 11: nothing wrong let through, nothing half-trusted

ARCHIVE = f"/huhanwj/RGB-Th-Benchmark/archive/{SHA}.zip"
TOP = f"RGB-Th-Benchmark-{SHA}/"


def rgbth_zip(files: dict[str, bytes]) -> bytes:
    return zip_bytes({f"RGB-Th-Bench/Data/{k}": v for k, v in files.items()}, TOP)


def leftovers(root: Path) -> list[str]:
    """Partial files and the manifest: what a later run could wrongly trust."""
    return sorted(p.name for p in root.rglob("*") if p.name.endswith(".part") or p.name == "lensbench-data.json") \
        if root.exists() else []


def cli_download(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run_cli("data", "download", *args, env={"PATH": "/usr/bin:/bin", **env})


def one_error(r: subprocess.CompletedProcess) -> str:
    """The single ``error:`` line a failed command ends with (progress lines before it are fine)."""
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(errors) == 1 and lines[-1] == errors[0], r.stderr
    return errors[0]


def test_shipped_pins_cover_every_pinned_source():
    from lensbench.tools.data.pins import pinned_source, source_key, unknown_reason

    for layout in LAYOUTS.values():
        src = layout.source
        if src.kind == "github":
            pins = pinned_source(source_key("github", src.repo, src.revision))
            assert pins is not None and pins.complete_under == src.subdir + "/"
            assert sum(p.startswith(pins.complete_under) for p in pins.files) >= 90
        else:  # no hash of the hub's files could be obtained offline: named, with the reason
            assert unknown_reason(source_key("hf", src.repo, src.revision)), src.repo
        for gf in src.git_files:
            pins = pinned_source(source_key("github", gf.repo, gf.commit))
            assert pins is not None and pins.expected(gf.path) is not None, gf.path
    assert all(len(sha) == 64 and size > 0 for key in ("github:huhanwj/RGB-Th-Benchmark@" + SHA,)
               for size, sha in pinned_source(key).files.values())


@pytest.mark.skipif(not (SHARED / "RGB-Th-Bench").is_dir(), reason="no ../shared/data")
def test_shipped_pins_are_the_real_release_files():
    from lensbench.tools.data.pins import pinned_source, source_key

    folders = {"huhanwj/RGB-Th-Benchmark": "RGB-Th-Bench", "casiatao/IF-Bench": "IF-Bench",
               "multimodal-art-projection/IV-Bench": "IV-Bench", "Amber0614/GOBench": "GOBench"}
    checked = 0
    for layout in LAYOUTS.values():
        src = layout.source
        keys = ([(src.repo, src.revision)] if src.kind == "github" else []) + [(g.repo, g.commit) for g in src.git_files]
        for repo, rev in dict.fromkeys(keys):
            for path, (size, sha) in pinned_source(source_key("github", repo, rev)).files.items():
                f = SHARED / folders[repo] / path
                if f.is_file():
                    assert (f.stat().st_size, _sha(f.read_bytes())) == (size, sha), f
                    checked += 1
    assert checked == 94  # 90 RGB-Th-Bench data files + 4 single files (the 5 others are hidden files not copied)


def test_tampered_release_is_refused_and_no_manifest_written(github, pin, tmp_path):
    files = rgbth_files()
    pin_rgbth(pin, files)
    bad = dict(files)
    bad["Source 1/scene 07/rgb.jpg"] = bytes([7]) * 999 + b"X"  # same size, one byte changed
    github.routes[ARCHIVE] = rgbth_zip(bad)
    dest = tmp_path / "rgb"
    with pytest.raises(DataError, match="content differs from the pinned release github:huhanwj/RGB-Th-Benchmark@") as ei:
        download("rgb-th-bench", dest)
    assert "scene 07/rgb.jpg" in str(ei.value) and "\n" not in str(ei.value)
    assert not (dest / "Source 1" / "scene 07" / "rgb.jpg").exists() and leftovers(dest) == []
    # a file the release never had, and one it lacks
    github.routes[ARCHIVE] = rgbth_zip({**files, "Source 1/scene 00/payload.py": b"import os"})
    with pytest.raises(DataError, match="'.*scene 00/payload.py' is not a file of the pinned release"):
        download("rgb-th-bench", dest)
    github.routes[ARCHIVE] = rgbth_zip({k: v for k, v in files.items() if "scene 28" not in k})
    with pytest.raises(DataError, match=r"lacks 3 file\(s\) of the pinned release"):
        download("rgb-th-bench", dest)
    assert leftovers(dest) == []
    # a wrong file already in place (same size) is not trusted: the pinned bytes replace it
    (dest / "Source 1" / "scene 03").mkdir(parents=True, exist_ok=True)
    (dest / "Source 1" / "scene 03" / "rgb.jpg").write_bytes(b"\0" * 1000)
    github.routes[ARCHIVE] = rgbth_zip(files)
    download("rgb-th-bench", dest)
    assert (dest / "Source 1" / "scene 03" / "rgb.jpg").read_bytes() == files["Source 1/scene 03/rgb.jpg"]
    assert check("rgb-th-bench", dest).ok


def test_tampered_single_file_is_refused(github, pin, monkeypatch, tmp_path):
    hub = pytest.importorskip("huggingface_hub")
    real = json.dumps({"Scene Understanding": []}).encode()
    pin("github:casiatao/IF-Bench@fc784fcabca35cee7fd655b8252b37beddfd82de", {"evaluate/if_bench/if_bench.json": real})
    monkeypatch.setattr(hub, "HfApi", lambda endpoint=None: type("A", (), {"dataset_info": lambda self, *a, **k: type(
        "I", (), {"sha": "f" * 40})()})())
    monkeypatch.setattr(hub, "snapshot_download", lambda **kw: write_tree(Path(kw["local_dir"]), {
        "infrared_imgs.zip": zip_bytes({f"infrared_imgs/{i:03d}.jpg": b"x" for i in range(499)}, "")}))
    monkeypatch.setenv("HF_ENDPOINT", github.url)
    route = "/casiatao/IF-Bench/fc784fcabca35cee7fd655b8252b37beddfd82de/evaluate/if_bench/if_bench.json"
    github.routes[route] = real.replace(b"[]", b"[1]")
    dest = tmp_path / "if"
    with pytest.raises(DataError, match="if_bench.json.*content differs from the pinned release github:casiatao/IF-Bench@"):
        download("if-bench", dest)
    assert not (dest / "if_bench.json").exists() and leftovers(dest) == []
    github.routes[route] = real
    doc = download("if-bench", dest)
    assert (dest / "if_bench.json").read_bytes() == real
    assert doc["verification"]["not_pinned"] == ["hf:casiatao/IF-Bench@" + "f" * 40]
    assert doc["verification"]["pinned"] == [
        "github:casiatao/IF-Bench@fc784fcabca35cee7fd655b8252b37beddfd82de:evaluate/if_bench/if_bench.json"]


def bomb_zip(name: str, expanded: int = 1 << 30) -> bytes:
    """A zip of one deflated member of ``expanded`` zero bytes in about 1 MB (for 1 GiB), honest
    headers and CRC: a real zip bomb, built in a second without compressing a gigabyte."""
    import struct
    import zlib

    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    mib = bytes(1 << 20)
    block = c.compress(mib) + c.flush(zlib.Z_FULL_FLUSH)  # byte-aligned, no back-references across blocks
    data = block * (expanded >> 20) + c.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(expanded >> 20):
        crc = zlib.crc32(mib, crc)
    n = name.encode()
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 8, 0, 0x21, crc, len(data), expanded, len(n), 0) + n
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x21, crc, len(data), expanded,
                          len(n), 0, 0, 0, 0, 0, 0) + n
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    return local + data + central + end


def test_zip_bomb_is_refused_before_anything_is_written(github, tmp_path):
    body = bomb_zip(TOP + "RGB-Th-Bench/Data/Source 1/scene 00/rgb.jpg")
    assert len(body) < 1_100_000
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        assert zf.infolist()[0].file_size == 1 << 30
    github.routes[ARCHIVE] = body
    dest = tmp_path / "rgb"
    r = cli_download("rgb-th-bench", "--dest", str(dest), env={"LENSBENCH_GITHUB_URL": github.url,
                                                               "HOME": str(tmp_path)})
    line = one_error(r)
    assert "refused as a zip bomb" in line and "1073741824" in line
    assert sum(f.stat().st_size for f in dest.rglob("*") if f.is_file()) == 0


def test_whole_archive_expansion_is_bounded(tmp_path):
    from lensbench.tools.data.archive import ArchiveLimits, extract_zip

    z = tmp_path / "a.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:  # many small members, each under the member bound
        for i in range(40):
            zf.writestr(f"d/{i}.txt", bytes(1 << 20))
    with pytest.raises(DataError, match=r"a.zip: expands \d+ -> 41943040 bytes \(over 100x the archive"):
        extract_zip(z, "", tmp_path / "out")  # 40 MiB from ~45 KB: each member small, the whole a bomb
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.txt"))
    assert extract_zip(z, "", tmp_path / "ok", limits=ArchiveLimits(small=64 << 20)) == 40  # under a looser bound


def test_short_body_is_not_taken_as_complete_and_resumes(github, pin, tmp_path):
    pin_rgbth(pin, rgbth_files())
    body = rgbth_zip(rgbth_files())
    github.routes[ARCHIVE] = body
    github.cut[ARCHIVE] = 4000  # the connection closes after 4000 of len(body) bytes
    dest = tmp_path / "rgb"
    with pytest.raises(FetchError, match=f"transfer ended after 4000 of {len(body)} bytes") as ei:
        download("rgb-th-bench", dest)
    assert "run the same command again to resume" in str(ei.value)
    part = tmp_path / ".rgb.download" / f"RGB-Th-Benchmark-{SHA}.zip.part"
    assert part.stat().st_size == 4000 and not (dest / "lensbench-data.json").exists()
    assert not part.with_name(part.name[:-5]).exists()  # never under the archive's own name
    download("rgb-th-bench", dest)  # resumed from byte 4000
    assert github.ranges[-1] == "bytes=4000-" and check("rgb-th-bench", dest).ok


def test_truncated_archive_is_one_line_and_removed(github, tmp_path):
    body = rgbth_zip(rgbth_files())
    github.routes[ARCHIVE] = body[: len(body) // 2]  # a complete transfer of a cut file
    dest = tmp_path / "rgb"
    r = cli_download("rgb-th-bench", "--dest", str(dest), env={"LENSBENCH_GITHUB_URL": github.url,
                                                               "HOME": str(tmp_path)})
    line = one_error(r)
    assert "truncated or damaged zip archive" in line and "removed" in line
    assert not list((tmp_path / ".rgb.download").glob("*.zip*")) and leftovers(dest) == []


def test_html_body_instead_of_the_file(github, tmp_path):
    github.routes[ARCHIVE] = b"\n<!DOCTYPE html><html><body>Sign in to continue</body></html>"
    dest = tmp_path / "rgb"
    r = cli_download("rgb-th-bench", "--dest", str(dest), env={"LENSBENCH_GITHUB_URL": github.url,
                                                               "HOME": str(tmp_path)})
    assert "HTML page, not the file" in one_error(r)
    assert not list((tmp_path / ".rgb.download").glob("*")) and leftovers(dest) == []


class _FullDisk:
    """A file opened for writing whose writes fail with ENOSPC once ``room`` bytes were written."""

    def __init__(self, path, mode, room):
        import builtins

        self._fh, self._room = builtins.open(path, mode), room

    def write(self, b):
        import errno

        if self._room < len(b):
            raise OSError(errno.ENOSPC, "No space left on device")
        self._room -= len(b)
        return self._fh.write(b)

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self._fh.close()


def _full_disk_open(room: int):
    import builtins

    def fake(path, mode="r", *a, **k):
        return _FullDisk(path, mode, room) if "w" in mode or "a" in mode else builtins.open(path, mode, *a, **k)

    return fake


def test_full_disk_while_extracting_is_one_line_without_partial_files(github, pin, monkeypatch, tmp_path):
    from lensbench.tools.data import archive

    pin_rgbth(pin, rgbth_files())
    github.routes[ARCHIVE] = rgbth_zip(rgbth_files())
    dest = tmp_path / "rgb"
    monkeypatch.setattr(archive, "open", _full_disk_open(500), raising=False)  # room for a few bytes only
    with pytest.raises(DataError, match="no space left on the device") as ei:
        download("rgb-th-bench", dest)
    assert "\n" not in str(ei.value) and leftovers(dest) == []
    assert not [p for p in dest.rglob("*") if p.is_file()]  # no file half written
    monkeypatch.delattr(archive, "open")
    download("rgb-th-bench", dest)  # space freed: the same command completes
    assert check("rgb-th-bench", dest).ok


def test_full_disk_while_downloading_keeps_a_resumable_part(github, monkeypatch, tmp_path):
    from lensbench.tools.data import fetch

    github.routes[ARCHIVE] = rgbth_zip(rgbth_files())
    monkeypatch.setattr(fetch, "open", _full_disk_open(0), raising=False)
    with pytest.raises(FetchError, match="no space left on the device .*resume") as ei:
        download("rgb-th-bench", tmp_path / "rgb")
    assert "\n" not in str(ei.value) and leftovers(tmp_path / "rgb") == []


def test_not_enough_free_space_is_refused_before_writing(github, pin, monkeypatch, tmp_path):
    import shutil as sh

    from lensbench.tools.data import archive

    pin_rgbth(pin, rgbth_files())
    github.routes[ARCHIVE] = rgbth_zip(rgbth_files())
    monkeypatch.setattr(archive.shutil, "disk_usage", lambda p: sh._ntuple_diskusage(10 << 30, 10 << 30, 1 << 20))
    with pytest.raises(DataError, match=r"no space left on the device \(needs 0 MB, 1 MB free\)"):
        download("rgb-th-bench", tmp_path / "rgb")
    assert not any(p.is_file() for p in (tmp_path / "rgb").rglob("*"))


@pytest.mark.parametrize("members, words", [
    ([("Source 1/scene 00/link", "/etc", 0o120777), ("Source 1/scene 00/link/passwd", "x", 0o100644)],
     "'.*scene 00/link' is a symbolic link"),
    ([("Source 1/scene 00/img", "a file", 0o100644), ("Source 1/scene 00/img/x.jpg", "x", 0o100644)],
     "lies under '.*scene 00/img', which the archive holds as a file"),
    ([("Source 1/scene 00/../../../../escape.txt", "x", 0o100644)], "outside the data folder"),
])
def test_links_and_files_used_as_folders_are_refused(github, tmp_path, members, words):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, mode in members:
            info = zipfile.ZipInfo(TOP + "RGB-Th-Bench/Data/" + name)
            info.external_attr = mode << 16
            zf.writestr(info, data)
    github.routes[ARCHIVE] = buf.getvalue()
    dest = tmp_path / "rgb"
    r = cli_download("rgb-th-bench", "--dest", str(dest), env={"LENSBENCH_GITHUB_URL": github.url,
                                                               "HOME": str(tmp_path)})
    line = one_error(r)
    assert re.search(words, line), line
    assert not (tmp_path / "escape.txt").exists() and not any(p.is_file() for p in dest.rglob("*"))


def test_a_file_on_disk_where_a_folder_is_needed(github, pin, tmp_path):
    pin_rgbth(pin, rgbth_files())
    github.routes[ARCHIVE] = rgbth_zip(rgbth_files())
    dest = tmp_path / "rgb"
    (dest / "Source 1").mkdir(parents=True)
    (dest / "Source 1" / "scene 04").write_text("not a folder")
    with pytest.raises(DataError, match="a file stands where member .*scene 04/.* needs a folder") as ei:
        download("rgb-th-bench", dest)
    assert "\n" not in str(ei.value) and leftovers(dest) == []


def test_pinned_hub_snapshot_is_verified(github, pin, monkeypatch, tmp_path):
    """A hub revision with pinned hashes (none ships yet: see pins.json "unknown") is checked file by file."""
    hub = pytest.importorskip("huggingface_hub")
    rev = "e" * 40
    shards = {"data/test-00000.parquet": b"PAR1 shard 0 PAR1", "README.md": b"GroundingME"}
    pin(f"hf:lirang04/GroundingME@{rev}", shards)
    served = dict(shards)
    monkeypatch.setattr(hub, "HfApi", lambda endpoint=None: type("A", (), {"dataset_info": lambda self, *a, **k: type(
        "I", (), {"sha": rev})()})())
    monkeypatch.setattr(hub, "snapshot_download", lambda **kw: write_tree(Path(kw["local_dir"]), served))
    monkeypatch.setenv("HF_ENDPOINT", github.url)
    dest = tmp_path / "gm"
    served["data/test-00000.parquet"] = b"PAR1 shard X PAR1"  # a tampered mirror
    with pytest.raises(DataError, match="test-00000.parquet.*different from the pinned release hf:lirang04/GroundingME@"):
        download("groundingme", dest, revision=rev)
    assert not (dest / "data" / "test-00000.parquet").exists() and leftovers(dest) == []
    served["data/test-00000.parquet"] = shards["data/test-00000.parquet"]
    doc = download("groundingme", dest, revision=rev)
    assert doc["verification"] == {"pinned": [f"hf:lirang04/GroundingME@{rev}"], "not_pinned": []}


# ---------------------------------------------------------------- --from DIR against the pinned hashes
def test_from_local_copy_is_checked_against_the_pins(tmp_path, pin):
    files = rgbth_files()
    pin_rgbth(pin, files)
    src = write_tree(tmp_path / "checkout" / "RGB-Th-Bench" / "Data", files)
    (src / "Source 1" / "scene 00" / "notes.txt").write_text("no pin: taken as it is")
    bad = src / "Source 1" / "scene 07" / "rgb.jpg"
    bad.write_bytes(b"\xff" * 1000)  # the pinned size, other content
    dest = tmp_path / "rgb"
    with pytest.raises(DataError) as exc:
        download("rgb-th-bench", dest, from_dir=tmp_path / "checkout")
    msg = str(exc.value)
    assert str(bad) in msg and _sha(files["Source 1/scene 07/rgb.jpg"]) in msg and _sha(b"\xff" * 1000) in msg
    assert not dest.exists()  # nothing copied, no folder left behind
    # into an existing folder: still nothing copied, no manifest
    dest.mkdir()
    with pytest.raises(DataError):
        download("rgb-th-bench", dest, from_dir=tmp_path / "checkout")
    assert list(dest.iterdir()) == []
    bad.write_bytes(files["Source 1/scene 07/rgb.jpg"])
    doc = download("rgb-th-bench", dest, from_dir=tmp_path / "checkout")
    assert doc["verification"]["pinned"] == [f"github:huhanwj/RGB-Th-Benchmark@{SHA}"]
    assert (dest / "Source 1" / "scene 00" / "notes.txt").is_file()
    # a file already in the folder with the pinned size but other content is replaced, not kept
    (dest / "Source 1" / "scene 03" / "thermal.jpg").unlink()
    (dest / "Source 1" / "scene 03" / "thermal.jpg").write_bytes(b"\x00" * 2000)
    download("rgb-th-bench", dest, from_dir=tmp_path / "checkout")
    assert (dest / "Source 1" / "scene 03" / "thermal.jpg").read_bytes() == files["Source 1/scene 03/thermal.jpg"]


def test_from_local_copy_checks_the_pinned_single_files(tmp_path, pin):
    recs = [{"index": f"direct_light_images_1.{k}", "category": "direct_light_images",
             "image": f"direct_light_images/1.{k}.png", "title": "t", "prompt": "p",
             "Questions_reality": "1. a\n2. b\n3. c\n4. d\n5. e", "Question_aesthetics": "q",
             "Question_Instruction_consistency": "q"} for k in (1, 2, 3)]
    pinned = json.dumps(recs).encode()
    pin("github:Amber0614/GOBench@9f5c2caf4b448970fa5ec8c9d5710666275e6c77", {"data/data_total.json": pinned})
    checkout = write_tree(tmp_path / "GOBench", {"data/data_total.json": json.dumps(recs[:2]).encode()})
    with pytest.raises(DataError, match="differs from the pinned release github:Amber0614/GOBench@9f5c2ca") as exc:
        download("gobench", tmp_path / "gob", from_dir=checkout)
    assert str(checkout / "data" / "data_total.json") in str(exc.value) and _sha(pinned) in str(exc.value)
    assert not (tmp_path / "gob").exists()
    (checkout / "data" / "data_total.json").write_bytes(pinned)
    doc = download("gobench", tmp_path / "gob", from_dir=checkout)
    assert doc["verification"]["pinned"] == ["github:Amber0614/GOBench@9f5c2caf4b448970fa5ec8c9d5710666275e6c77"]
