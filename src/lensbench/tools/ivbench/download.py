"""Fetch IV-Bench videos from YouTube with yt-dlp (optional extra ``lensbench[video]``).

The videos are not redistributed (IV-Bench README, Protocol); users online can fetch them into
``DATA/videos/<video_id>.mp4``. Offline, or without yt-dlp, this fails at once with a clear
message instead of timing out per video.
"""

from __future__ import annotations

import socket
from pathlib import Path

from lensbench.core.errors import ConfigError, DataError
from lensbench.core.extras import require
from lensbench.core.jsonl import iter_lines

__all__ = ["read_ids", "download_videos"]


def read_ids(path: str | Path) -> list[str]:
    """Video ids, one per line (``test_video_ids.txt``); blank lines and ``#`` comments skipped.

    A jsonl question file is accepted too (its line keys are the ids). Raises DataError.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(p, "id file not found")
    ids = []
    for _ln, line in iter_lines(p.read_text(encoding="utf-8")):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("{"):
            import json

            ids.extend(json.loads(s).keys())
        else:
            ids.append(s)
    return list(dict.fromkeys(ids))


def _online(host: str, port: int, timeout: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def download_videos(ids: list[str], out: Path, *, host: str = "www.youtube.com", port: int = 443,
                    timeout: float = 5.0, max_height: int = 720) -> dict[str, list[str]]:
    """Download each id to ``out/<id>.mp4`` (skipping those present); ``{"ok", "skipped", "failed"}``.

    Raises:
        ConfigError: yt-dlp is not installed, or ``host:port`` cannot be reached (offline).
    """
    yt_dlp = require("yt_dlp", "video", "lensbench ivbench download")
    if not _online(host, port, timeout):
        raise ConfigError(f"cannot reach {host}:{port} (offline?): fetch the videos on a machine with internet access "
                          f"and put them in {out}/<video_id>.mp4")
    out.mkdir(parents=True, exist_ok=True)
    res: dict[str, list[str]] = {"ok": [], "skipped": [], "failed": []}
    opts = {"format": f"bestvideo[height<={max_height}][ext=mp4]+bestaudio[ext=m4a]/best[height<={max_height}][ext=mp4]/best",
            "merge_output_format": "mp4", "outtmpl": str(out / "%(id)s.%(ext)s"), "quiet": True, "noprogress": True}
    with yt_dlp.YoutubeDL(opts) as ydl:
        for vid in ids:
            if (out / f"{vid}.mp4").is_file():
                res["skipped"].append(vid)
                continue
            try:
                ydl.download([f"https://www.youtube.com/watch?v={vid}"])
                res["ok" if (out / f"{vid}.mp4").is_file() else "failed"].append(vid)
            except Exception:  # noqa: BLE001 - unavailable / private videos: listed, the rest goes on
                res["failed"].append(vid)
    return res
