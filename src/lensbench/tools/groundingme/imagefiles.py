"""Image files of a GroundingME construction: listing, opening, and the derived images sent to
the description model (the red-box image of Sec. 3.2.2 for SA-1B, the crop for HR-Bench)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from lensbench.core.errors import DataError

__all__ = ["IMAGE_EXTS", "list_images", "open_image", "red_box_image", "crop_image"]

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".webp", ".bmp")


def list_images(folder: Path) -> list[Path]:
    """Image files under ``folder`` (recursive), sorted by relative path. Raises DataError when
    ``folder`` is not a folder or holds none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(folder, "image folder not found")
    out = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_EXTS)
    if not out:
        raise DataError(folder, f"no images ({', '.join(IMAGE_EXTS)}) in the folder")
    return out


def open_image(path: str | Path):
    """``path`` as an RGB PIL image, EXIF orientation applied (as the engine sends it). Raises
    DataError naming the file when it cannot be read."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            return ImageOps.exif_transpose(im).convert("RGB")
    except (OSError, UnidentifiedImageError) as exc:
        raise DataError(path, f"cannot read image: {exc}", field="image") from None


def _derived(out_dir: Path, image: str | Path, box: Sequence[float], kind: str) -> Path:
    key = hashlib.sha256(f"{kind}|{Path(image).resolve()}|{[round(float(v), 2) for v in box]}".encode()).hexdigest()
    return Path(out_dir) / kind / f"{Path(image).stem}-{key[:12]}.png"


def red_box_image(image: str | Path, box: Sequence[float], out_dir: Path) -> Path:
    """The full-size image with ``box`` (x1, y1, x2, y2 pixels) framed in red (Sec. 3.2.2,
    SA-1B visual prompt), written once as PNG under ``out_dir/redbox/``; returns its path.
    Line width: max(2, round(longer side / 300)) pixels."""
    out = _derived(out_dir, image, box, "redbox")
    if not out.is_file():
        from PIL import ImageDraw

        im = open_image(image)
        lw = max(2, round(max(im.size) / 300))
        ImageDraw.Draw(im).rectangle([box[0], box[1], box[2], box[3]], outline=(255, 0, 0), width=lw)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        im.save(tmp, "PNG")
        tmp.replace(out)
    return out


def crop_image(image: str | Path, box: Sequence[float], out_dir: Path) -> Path:
    """The ``box`` region of the image (Sec. 3.2.2, HR-Bench objects "too small to be
    effectively prompted within the full image context"), written once as PNG under
    ``out_dir/crop/``; returns its path. Raises DataError for a box outside the image."""
    out = _derived(out_dir, image, box, "crop")
    if not out.is_file():
        im = open_image(image)
        x1, y1 = max(0, int(box[0])), max(0, int(box[1]))
        x2, y2 = min(im.width, int(round(box[2]))), min(im.height, int(round(box[3])))
        if x2 <= x1 or y2 <= y1:
            raise DataError(image, f"box {list(box)} lies outside the {im.width}x{im.height} image", field="bbox")
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        im.crop((x1, y1, x2, y2)).save(tmp, "PNG")
        tmp.replace(out)
    return out
