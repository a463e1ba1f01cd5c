"""``view --serve`` serves nothing a crafted run folder names outside its own folders, nothing whose
content does not hash to its record, nothing to a foreign Host (DNS rebinding); a busy port is one
line (issue 20 item 8)."""

from __future__ import annotations

import asyncio
import hashlib
import http.client
import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lensbench.cli.view import write_viewer
from lensbench.views.viewer.serve import allowed_hosts, inside, make_app, serve_roots
from lensbench.testing.runs import craft_run

aiohttp_test = pytest.importorskip("aiohttp.test_utils")


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _point_images_at(run: Path, targets: list[tuple[Path | str, str]]) -> None:
    """Rewrite the run's samples.jsonl so its first image parts name ``targets`` (path, sha256)."""
    lines = (run / "samples.jsonl").read_text().splitlines()
    out, k = [], 0
    for line in lines:
        rec = json.loads(line)
        for m in rec["messages"]:
            for part in m["content"]:
                if part.get("type") == "image" and k < len(targets):
                    part["path"], part["sha256"] = str(targets[k][0]), targets[k][1]
                    k += 1
        out.append(json.dumps(rec))
    assert k == len(targets)
    (run / "samples.jsonl").write_text("\n".join(out) + "\n")


def test_crafted_paths_outside_the_run_and_wrong_hashes_are_refused(tmp_path):
    run = craft_run(tmp_path / "run", "rgb-th-bench", "m", n=12)
    secret = tmp_path / "home" / "secret.png"
    secret.parent.mkdir()
    secret.write_bytes(b"private bytes of another folder")
    secret2 = tmp_path / "home" / "secret2.png"
    secret2.write_bytes(b"more private bytes")
    good = sorted((run / "media").glob("*.png"))[0]
    other = sorted((run / "media").glob("*.png"))[1]
    sneaky = run / "media" / ".." / ".." / "home" / "secret2.png"  # climbs out of the run folder
    targets = [(secret, _sha(secret)),                   # outside, even with its true hash
               (sneaky, _sha(secret2)),                  # through '..', with its true hash
               (other, "ab" * 32),                       # inside, but not the recorded content
               (good, _sha(good))]                       # the only one that may be served
    passwd = Path("/etc/passwd")
    if passwd.is_file():
        targets.append((passwd, _sha(passwd)))
    _point_images_at(run, targets)
    html, images, runs = write_viewer([run], None, embed=False, figures=False, compare=False)
    assert secret in images.paths.values()  # the page registers it; the server must refuse it

    async def go():
        app = make_app(html, images.paths, serve_roots(runs))
        async with aiohttp_test.TestClient(aiohttp_test.TestServer(app)) as client:
            r = await client.get(f"/media/{_sha(secret)}")
            assert r.status == 403 and b"private" not in await r.read()
            assert (await client.get(f"/thumb/{_sha(secret)}")).status == 403
            r = await client.get(f"/media/{_sha(secret2)}")
            assert r.status == 403 and b"private" not in await r.read()
            assert (await client.get(f"/media/{'ab' * 32}")).status == 403  # content does not match the record
            r = await client.get(f"/media/{_sha(good)}")
            assert r.status == 200 and await r.read() == good.read_bytes()
            assert r.headers["Content-Type"] == "image/png"
            if passwd.is_file():
                r = await client.get(f"/media/{_sha(passwd)}")
                assert r.status == 403 and b"root" not in await r.read()
            good.write_bytes(secret.read_bytes())  # swapped after the page was built: not served
            assert (await client.get(f"/media/{_sha(secret)}")).status == 403
            assert (await client.get(f"/media/{targets[3][1]}")).status == 403

    asyncio.run(go())


def test_data_folder_from_run_json_is_an_allowed_root(tmp_path):
    run = craft_run(tmp_path / "run", "rgb-th-bench", "m", n=12)
    data = tmp_path / "data"
    data.mkdir()
    img = data / "x.png"
    img.write_bytes((run / "media" / sorted(p.name for p in (run / "media").glob("*.png"))[0]).read_bytes())
    man = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**man, "data_dir": str(data)}))
    _point_images_at(run, [(img, _sha(img))])
    html, images, runs = write_viewer([run], None, embed=False, figures=False, compare=False)
    assert set(serve_roots(runs)) == {run, data}

    async def go():
        async with aiohttp_test.TestClient(aiohttp_test.TestServer(make_app(html, images.paths,
                                                                            serve_roots(runs)))) as client:
            assert (await client.get(f"/media/{_sha(img)}")).status == 200
            assert (await client.get(f"/thumb/{_sha(img)}")).status == 200

    asyncio.run(go())


def test_inside_collapses_dotdot_and_follows_links(tmp_path):
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (tmp_path / "out.txt").write_text("x")
    assert not inside(root / "a" / ".." / ".." / "out.txt", [root])
    assert not inside(tmp_path / "rootx" / "f", [root])  # a sibling with the root's name as prefix
    assert inside(root / "a" / "f", [root])
    (root / "link").symlink_to(tmp_path / "out.txt")
    assert inside(root / "link", [root])  # a link inside the data folder (the content hash decides)


@pytest.mark.parametrize("bind, header, ok", [
    ("127.0.0.1", "127.0.0.1:8765", True),
    ("127.0.0.1", "localhost:8765", True),
    ("127.0.0.1", "LOCALHOST:8765", True),
    ("127.0.0.1", "[::1]:8765", True),
    ("127.0.0.1", "evil.example:8765", False),  # DNS rebinding: an attacker's name resolving to 127.0.0.1
    ("127.0.0.1", "localhost.evil.example:8765", False),
    ("127.0.0.1", "127.0.0.1:9999", False),
    ("127.0.0.1", "127.0.0.1", False),  # port 80 implied
    ("127.0.0.1", "", False),
    ("0.0.0.0", "10.1.2.3:8765", True),  # a wildcard bind: any address literal
    ("0.0.0.0", "evil.example:8765", False),
    ("10.1.2.3", "10.1.2.3:8765", True),
    ("10.1.2.3", "evil.example:8765", False),
])
def test_host_header_check(bind, header, ok):
    assert allowed_hosts(bind, 8765)(header) is ok


def _start_view(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lensbench", "view", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_serve_refuses_a_foreign_host_end_to_end(tmp_path):
    run = craft_run(tmp_path / "run", "rgb-th-bench", "m", n=12)
    proc = _start_view([str(run), "--serve", "--port", "0", "--no-figures"])
    try:
        line = ""
        deadline = time.monotonic() + 60
        while "serving" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, proc.stderr.read()
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", line).group(1))

        def get(host: str) -> int:
            for _ in range(100):
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    c.putrequest("GET", "/", skip_host=True)
                    c.putheader("Host", host)
                    c.endheaders()
                    status = c.getresponse().status
                    c.close()
                    return status
                except ConnectionRefusedError:
                    time.sleep(0.05)
            raise AssertionError("server did not answer")

        assert get(f"127.0.0.1:{port}") == 200
        assert get(f"localhost:{port}") == 200
        assert get(f"rebind.evil.example:{port}") == 403
    finally:
        proc.kill()
        proc.wait(10)


def test_busy_port_is_one_line(tmp_path):
    run = craft_run(tmp_path / "run", "rgb-th-bench", "m", n=12)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "lensbench", "view", str(run), "--serve", "--port", str(port),
                            "--no-figures"], capture_output=True, text=True, timeout=120)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert lines[-1].startswith("error: cannot serve on 127.0.0.1:") and "in use" in lines[-1] and "--port" in lines[-1]
