"""``lensbench show`` for GroundingME: the ground truth and the prediction drawn on the image."""

from __future__ import annotations

from pathlib import Path

from lensbench.core.errors import DataError
from lensbench.core.records import SampleRecord

__all__ = ["draw_record"]


def draw_record(record: SampleRecord, out_png: Path, image_path: str | None = None) -> Path:
    """Draw the ground truth (``target``, green) and the prediction (``answer``, red; the
    selected sample's box) of one record on the image it was sent with, and write a PNG.

    Boxes are in original pixels and are scaled to the stored image (which may be the
    downscaled copy in the run's media folder). A caption names the sample, its L-1/L-2, the
    outcome and how the reply was read. Returns ``out_png``.

    Raises:
        DataError: the image file is missing (e.g. the run folder was moved).
    """
    from PIL import Image, ImageDraw

    path = image_path or record.extra.get("image")
    if not path or not Path(path).is_file():
        raise DataError(path or "?", f"image of record {record.sample_id!r} not found (run folder moved?)", field="image")
    with Image.open(path) as im0:
        im = im0.convert("RGB")
    ow, oh = record.extra.get("width") or im.width, record.extra.get("height") or im.height
    sx, sy = im.width / ow, im.height / oh
    draw = ImageDraw.Draw(im)
    lw = max(2, round(max(im.size) / 300))

    def rect(box, color, text):
        x1, y1, x2, y2 = box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy
        draw.rectangle([min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)], outline=color, width=lw)
        draw.text((min(x1, x2) + lw, max(0, min(y1, y2) - 12)), text, fill=color)

    if record.target:
        rect(record.target, (0, 200, 0), "GT")
    if record.answer:
        iou_v = record.scores.get("iou")
        rect(record.answer, (230, 0, 0), "pred" + (f" IoU={iou_v:.2f}" if isinstance(iou_v, float) else ""))
    caption = (f"{record.sample_id} [{record.labels.get('L-1')}/{record.labels.get('L-2')}] {record.outcome}: "
               f"{record.extra.get('parse')}")
    draw.rectangle([0, 0, im.width, 16], fill=(0, 0, 0))
    draw.text((4, 2), caption[:200], fill=(255, 255, 255))
    out_png = Path(out_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    im.save(out_png, "PNG")
    return out_png
