"""Issue 29 part 3: a reply exported from a run made with images never answers a request of a blind /
no-video run (and the other way round). Each benchmark's demo data is run in both input modes, each run
exported, and each export replayed under both modes: under its own mode the metrics are the run's own,
under the other mode the run is refused (exit 2, naming both modes) before any reply is stored."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.core.replay import Media, describe_media, logged_media, request_media, same_media
from lensbench.core.types import ImagePart, Message, Request

IMG = r"image [\w.\-]+"  # one image as the refusal names it
NONE = "no image or video"
# benchmark, model for the original runs, options of the run with media and of the run without, and how the
# refusal names each mode's media
CASES = [
    ("rgb-th-bench", "random", [], ["--input", "blind"], rf"{IMG}(, then {IMG})?", NONE),
    ("if-bench", "random", [], ["--blind"], IMG, NONE),
    ("groundingme", 'constant:{"bbox_2d": [10, 20, 200, 220]}', [], ["--blind"], IMG, NONE),
    ("gobench", "random", [], ["--blind"], IMG, NONE),
    ("iv-bench", "random", [], ["--pattern", "no-video"], rf"video [\w.\-]+\.mp4, then {IMG}", IMG),
]

def _cli(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def _metrics(run_dir: Path) -> dict:
    return json.loads((run_dir / "result.json").read_text(encoding="utf-8"))["metrics"]


def _stored(run_dir: Path) -> int:
    db = run_dir / "responses.sqlite"
    if not db.is_file():
        return 0
    with sqlite3.connect(db) as con:
        return con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


@pytest.mark.parametrize("bench,model,with_media,without_media,media_words,blind_words", CASES,
                         ids=[c[0] for c in CASES])
def test_export_replays_only_under_its_own_input_mode(tmp_path, bench, model, with_media, without_media, media_words,
                                                      blind_words):
    r = _cli("data", "demo", bench, tmp_path / "data")
    assert r.exit_code == 0, r.output
    data = tmp_path / "data" / "Data" if (tmp_path / "data" / "Data").is_dir() else tmp_path / "data"
    modes = {"media": with_media, "blind": without_media}
    words = {"media": media_words, "blind": blind_words}
    exports, metrics = {}, {}
    for name, opts in modes.items():
        run = tmp_path / f"run-{name}"
        r = _cli("run", bench, "--data-dir", data, "--model", model, "--out", run, *opts)
        assert r.exit_code == 0, r.output
        metrics[name] = _metrics(run)
        exports[name] = tmp_path / f"{name}.jsonl"
        assert _cli("export", run, "--out", exports[name]).exit_code == 0
    for recorded, opts in modes.items():
        for asked, asked_opts in modes.items():
            out = tmp_path / f"replay-{recorded}-as-{asked}"
            r = _cli("run", bench, "--data-dir", data, "--model", f"replay:{exports[recorded]}", "--out", out,
                     *asked_opts)
            if recorded == asked:
                assert r.exit_code == 0, r.output
                assert _metrics(out) == metrics[recorded]
            else:
                assert r.exit_code == 2, r.output
                text = " ".join(r.output.split())
                assert "Traceback" not in r.output
                said = re.search(r"was recorded with (.*) but this run sends (.*?): a reply recorded under another "
                                 r"input mode cannot answer this one", text)
                assert said, text
                assert re.fullmatch(words[recorded], said[1]), said[1]
                assert re.fullmatch(words[asked], said[2]), said[2]
                assert str(exports[recorded]) in text
                assert _stored(out) == 0


def _req(*parts) -> Request:
    return Request(id="x", messages=(Message.user(*parts),))


def test_media_of_a_request_and_of_its_export_agree(tmp_path):
    from lensbench.core.records import log_messages

    a, b = tmp_path / "a.jpg", tmp_path / "b.jpg"
    a.write_bytes(b"first image")
    b.write_bytes(b"second image")
    frames = [tmp_path / f"f{i}.jpg" for i in range(3)]
    for i, f in enumerate(frames):
        f.write_bytes(bytes([i]) * 5)
    video = [ImagePart.of(f, video="/videos/v1.mp4", t_s=float(i)) for i, f in enumerate(frames)]
    req = _req(*video, ImagePart.of(b), "question")
    media = request_media(req)
    assert media == (Media("video", "v1.mp4"), Media("image", "b.jpg", ImagePart.of(b).sha256))
    assert logged_media(log_messages(req.messages)) == media
    assert describe_media(media) == "video v1.mp4, then image b.jpg"
    # the same bytes under another name are the same input; other bytes under the same name are not
    moved = tmp_path / "moved.jpg"
    moved.write_bytes(b"second image")
    assert same_media(media, request_media(_req(*video[:1], ImagePart.of(moved))))
    assert not same_media(media, request_media(_req(*video, ImagePart.of(a))))
    assert not same_media(media, request_media(_req(ImagePart.of(b), *video)))  # image-first is another mode
    assert not same_media(media, request_media(_req(ImagePart.of(b))))
    other = (Media("video", "v1.mp4"), Media("image", "b.jpg", "0" * 64))
    assert describe_media(other, media) == f"video v1.mp4, then image b.jpg (sha256 {'0' * 12})"
    assert describe_media(()) == "no image or video"
    assert logged_media("not messages") is None
    assert logged_media([{"role": "user", "content": [{"type": "image", "path": 5, "sha256": "x"}]}]) is None


def test_export_line_with_broken_messages_is_a_data_error(tmp_path):
    from lensbench.backends.replay import ReplayBackend
    from lensbench.core.errors import DataError

    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps({"request_id": "a", "text": "Yes", "messages": []}) + "\n"
                 + json.dumps({"request_id": "b", "text": "Yes", "messages": [{"role": "user", "content": "hi"}]})
                 + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 2: 'messages' is not a request's messages"):
        ReplayBackend(str(f))


def test_export_line_without_messages_is_not_checked(tmp_path):
    """Hand-written replay files (request id + text, no messages) keep working in any mode."""
    import asyncio

    from lensbench.backends.replay import ReplayBackend

    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps({"request_id": "x", "text": "Yes"}) + "\n", encoding="utf-8")
    img = tmp_path / "i.jpg"
    img.write_bytes(b"img")
    backend = ReplayBackend(str(f))
    assert asyncio.run(backend.generate(_req(ImagePart.of(img), "q"))).text == "Yes"
    assert asyncio.run(backend.generate(_req("q"))).text == "Yes"
