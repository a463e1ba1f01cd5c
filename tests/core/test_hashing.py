"""prime_sha256: parallel content hashes equal hashlib's, duplicates once, missing files named, cache filled."""

from __future__ import annotations

import hashlib

import pytest

from lensbench.core import types
from lensbench.core.hashing import prime_sha256


def test_digests_match_hashlib_and_fill_the_cache(tmp_path, monkeypatch):
    files = []
    for i in range(12):
        p = tmp_path / f"img{i}.bin"
        p.write_bytes(bytes([i]) * (100_000 + i))
        files.append(p)
    got = prime_sha256([*files, files[0], str(files[1])])
    assert list(got) == [str(p) for p in files]
    assert got == {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    # later per-file calls are cache hits: no file is opened again
    monkeypatch.setattr(types.Path, "open", lambda *a, **k: (_ for _ in ()).throw(AssertionError("re-read")))
    assert types.file_sha256(files[5]) == got[str(files[5])]


def test_missing_file_is_named(tmp_path):
    ok = tmp_path / "ok.bin"
    ok.write_bytes(b"x")
    with pytest.raises(FileNotFoundError, match="nope.jpg"):
        prime_sha256([ok, tmp_path / "nope.jpg", ok])


def test_empty_and_single():
    assert prime_sha256([]) == {}
