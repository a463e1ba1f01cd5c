"""Load + downscale of 8K JPEGs to a 1-Mpx budget: Pillow draft decoding vs full decode.

GroundingME's Limited/Small items come from HR-Bench 8K (7680 px wide); lensbench downscales
each image once to the model's pixel budget (``--max-pixels``) with
:func:`lensbench.benchmarks.groundingme.downscale_image_bytes`. This script times that function
with ``draft=True`` (JPEG DCT scaling during decode) against ``draft=False`` (decode every pixel,
then resize) and reports ms per image and the peak resident memory of each mode, measured in a
fresh child process per mode (Linux ``VmHWM`` after resetting it via ``/proc/self/clear_refs``).

Test images: scikit-image's bundled photos upscaled to 7680x4320 with added sensor-like noise
(so the JPEG carries realistic high-frequency content), saved at quality 92.

Usage: ``python benchmarks/large_images.py [--n 4] [--repeat 3] [--max-pixels 1000000]``
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing as mp
import statistics
import time
from pathlib import Path


def make_images(n: int, size=(7680, 4320)) -> list[bytes]:
    """``n`` 8K JPEGs (bytes) built from scikit-image photos plus Gaussian noise (sigma 6)."""
    import numpy as np
    from PIL import Image
    from skimage import data as skdata

    photos = ["astronaut", "coffee", "chelsea", "rocket"]
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        arr = getattr(skdata, photos[i % len(photos)])()
        im = Image.fromarray(arr).convert("RGB").resize(size, Image.Resampling.BICUBIC)
        a = np.asarray(im, dtype=np.int16) + rng.normal(0, 6, (size[1], size[0], 1)).astype(np.int16)
        im = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=92)
        out.append(buf.getvalue())
    return out


def _peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _child(paths: list[str], draft: bool, repeat: int, max_pixels: int, q) -> None:
    from lensbench.media.images import downscale_image_bytes

    blobs = [Path(p).read_bytes() for p in paths]
    downscale_image_bytes(blobs[0], max_pixels, draft=draft)  # warm-up (imports, codec init)
    try:
        Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS counter
    except OSError:
        pass
    base = _peak_kib()
    times = []
    sizes = set()
    for _ in range(repeat):
        for b in blobs:
            t0 = time.perf_counter()
            im, _orig = downscale_image_bytes(b, max_pixels, draft=draft)
            times.append((time.perf_counter() - t0) * 1000)
            sizes.add(im.size)
            del im
    q.put({"ms_median": statistics.median(times), "ms_mean": statistics.fmean(times),
           "peak_rss_mib": _peak_kib() / 1024, "peak_over_base_mib": (_peak_kib() - base) / 1024,
           "out_sizes": sorted(sizes)})


def run(n: int = 4, repeat: int = 3, max_pixels: int = 1_000_000, workdir: Path | None = None) -> dict:
    """Time both modes; returns ``{"draft": {...}, "full": {...}, "speedup": float}``."""
    import tempfile

    wd = Path(workdir or tempfile.mkdtemp(prefix="lensbench-8k-"))
    paths = []
    for i, b in enumerate(make_images(n)):
        p = wd / f"img{i}.jpg"
        p.write_bytes(b)
        paths.append(str(p))
    ctx = mp.get_context("spawn")
    res = {}
    for mode in ("full", "draft"):
        q = ctx.Queue()
        pr = ctx.Process(target=_child, args=(paths, mode == "draft", repeat, max_pixels, q))
        pr.start()
        res[mode] = q.get()
        pr.join()
    res["speedup"] = res["full"]["ms_median"] / res["draft"]["ms_median"]
    res["memory_ratio"] = res["full"]["peak_over_base_mib"] / max(res["draft"]["peak_over_base_mib"], 1e-9)
    res["setup"] = {"images": n, "repeat": repeat, "size": "7680x4320", "max_pixels": max_pixels,
                    "jpeg_mib_each": round(sum(Path(p).stat().st_size for p in paths) / n / 2**20, 2)}
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-pixels", type=int, default=1_000_000)
    a = ap.parse_args()
    r = run(a.n, a.repeat, a.max_pixels)
    print(json.dumps(r, indent=2))
    print(f"full decode : {r['full']['ms_median']:.1f} ms/image, peak +{r['full']['peak_over_base_mib']:.0f} MiB")
    print(f"draft decode: {r['draft']['ms_median']:.1f} ms/image, peak +{r['draft']['peak_over_base_mib']:.0f} MiB")
    print(f"speed-up {r['speedup']:.1f}x (goal >= 3x), memory {r['memory_ratio']:.1f}x less")


if __name__ == "__main__":
    main()
