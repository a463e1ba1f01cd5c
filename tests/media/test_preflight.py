"""Pre-flight image check: truncation found without decoding JPEG/PNG (issue 11)."""

from __future__ import annotations

import struct
import zlib

import pytest
from PIL import Image

from lensbench.core.errors import DataError
from lensbench.media.preflight import check_image


def _jpeg(path, size=(64, 48)):
    im = Image.new("RGB", size)
    im.putdata([(x % 256, y % 256, (x * y) % 256) for y in range(size[1]) for x in range(size[0])])
    im.save(path, "JPEG", quality=90)
    return path.read_bytes()


def _png(path, size=(64, 48)):
    Image.new("RGB", size, (10, 200, 30)).save(path, "PNG")
    return path.read_bytes()


def test_whole_images_pass(tmp_path):
    _jpeg(tmp_path / "a.jpg")
    _png(tmp_path / "b.png")
    assert check_image(tmp_path / "a.jpg") == (64, 48) and check_image(tmp_path / "b.png") == (64, 48)


@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_truncated_jpeg_and_png_are_found(tmp_path, keep):
    raw = _jpeg(tmp_path / "a.jpg")
    (tmp_path / "a.jpg").write_bytes(raw[: int(len(raw) * keep)])
    with pytest.raises(DataError, match="a.jpg"):
        check_image(tmp_path / "a.jpg")
    raw = _png(tmp_path / "b.png")
    (tmp_path / "b.png").write_bytes(raw[: int(len(raw) * keep)])
    with pytest.raises(DataError, match="b.png"):
        check_image(tmp_path / "b.png")


def test_png_with_a_damaged_chunk_is_found(tmp_path):
    raw = bytearray(_png(tmp_path / "b.png"))
    i = raw.index(b"IDAT") + 6  # a byte of the compressed data; the chunk's CRC no longer matches
    raw[i] ^= 0xFF
    (tmp_path / "b.png").write_bytes(bytes(raw))
    with pytest.raises(DataError, match="CRC"):
        check_image(tmp_path / "b.png")


def test_jpeg_with_trailing_bytes_is_decoded_and_passes(tmp_path):
    raw = _jpeg(tmp_path / "a.jpg")
    (tmp_path / "a.jpg").write_bytes(raw + b"\0\0trailer")
    assert check_image(tmp_path / "a.jpg") == (64, 48)


def test_bomb_and_zero_sides_are_refused_from_the_header(tmp_path):
    def chunk(kind, payload):
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))
    p = tmp_path / "bomb.png"
    p.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 30000, 30000, 8, 0, 0, 0, 0))
                  + chunk(b"IDAT", zlib.compress(b"\0" * 16)) + chunk(b"IEND", b""))
    with pytest.raises(DataError, match="bomb"):
        check_image(p)
