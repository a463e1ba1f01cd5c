"""The shared perturbation pieces (:mod:`lensbench.media.perturb`): names validated, palette maps with the
documented pixel values, the perturbed image cached by (source hash, perturbation), seeded frame and option
orders. Expected values are computed here from the documented rules, not read back from the module."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from PIL import Image

from lensbench.media import perturb as P


def _lum(rgb):
    r, g, b = rgb  # ITU-R 601-2 weights in Pillow's 16-bit fixed point, rounded (libImaging/Convert.c, L24)
    return (r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16


@pytest.mark.parametrize("text,label", [
    ("palette:iron", "palette:iron"), (" Palette:Gray ", "palette:gray"), ("palette:inverted", "palette:inverted"),
    ("frames:shuffle", "frames:shuffle"), ("frames:drop=0.250", "frames:drop=0.25"),
    ("options:shuffle", "options:shuffle")])
def test_known_names_parse_to_their_canonical_label(text, label):
    assert P.parse_perturbation(text).label == label


@pytest.mark.parametrize("text", ["palette:rainbow", "frames", "frames:reverse", "options:sort", "blur:3", ""])
def test_unknown_names_are_refused_with_the_known_ones(text):
    with pytest.raises(ValueError) as ei:
        P.parse_perturbation(text)
    msg = str(ei.value)
    assert f"unknown perturbation {text!r}" in msg and all(k in msg for k in P.KNOWN)


@pytest.mark.parametrize("frac", ["0", "1", "1.5", "-0.1", "x"])
def test_drop_fraction_must_lie_strictly_between_0_and_1(frac):
    with pytest.raises(ValueError, match="frames:drop=F needs"):
        P.parse_perturbation(f"frames:drop={frac}")


def test_a_benchmark_refuses_the_kinds_it_does_not_take_with_its_reason():
    allowed = {"palette": "", "options": "yes/no questions have no options to shuffle"}
    assert P.check_perturbation(None, allowed, "B") is None
    assert P.check_perturbation("PALETTE:IRON", allowed, "B") == "palette:iron"
    with pytest.raises(ValueError, match="options:shuffle does not apply to B: yes/no questions have no options"):
        P.check_perturbation("options:shuffle", allowed, "B")
    with pytest.raises(ValueError, match="frames:shuffle does not apply to B: B has no frames"):
        P.check_perturbation("frames:shuffle", allowed, "B")


def test_palette_tables_have_the_documented_values():
    gray, inv, iron = P.palette_lut("gray"), P.palette_lut("inverted"), P.palette_lut("iron")
    assert gray.shape == inv.shape == iron.shape == (256, 3) and iron.dtype == np.uint8
    for v in (0, 1, 77, 200, 255):
        assert gray[v].tolist() == [v, v, v] and inv[v].tolist() == [255 - v] * 3
    # the anchors themselves, then linear interpolation between them (rounded half to even, as np.rint)
    assert iron[0].tolist() == [0, 0, 0] and iron[51].tolist() == [64, 0, 160] and iron[102].tolist() == [176, 0, 144]
    assert iron[153].tolist() == [240, 64, 16] and iron[204].tolist() == [255, 176, 0]
    assert iron[255].tolist() == [255, 255, 255]
    assert iron[25].tolist() == [round(64 * 25 / 51), 0, round(160 * 25 / 51)]  # [31, 0, 78]
    t = (128 - 102) / 51
    assert iron[128].tolist() == [round(176 + t * 64), round(t * 64), round(144 + t * (16 - 144))]
    assert all((np.diff(iron[:, 0].astype(int)) >= 0))  # red never falls: dark = cold, bright = hot
    with pytest.raises(ValueError, match="unknown palette"):
        P.palette_lut("jet")


@pytest.mark.parametrize("name", ["gray", "iron", "inverted"])
def test_perturbed_image_maps_each_pixel_through_its_luminance(tmp_path, name):
    src = tmp_path / "th.png"
    colours = [(255, 0, 0), (0, 255, 0), (10, 20, 30), (250, 240, 230)]
    im = Image.new("RGB", (4, 1))
    im.putdata(colours)
    im.save(src)
    out = P.perturbed_image(src, f"palette:{name}", tmp_path / "cache")
    assert out.suffix == ".png" and out.parent == tmp_path / "cache"
    got = [tuple(px) for px in np.asarray(Image.open(out).convert("RGB")).reshape(-1, 3).tolist()]
    ls = [_lum(c) for c in colours]
    if name == "gray":
        want = [(v, v, v) for v in ls]
    elif name == "inverted":
        want = [(255 - v,) * 3 for v in ls]
    else:
        pos = [a for a, _ in P.IRON_ANCHORS]
        want = [tuple(int(np.rint(np.interp(v, pos, [c[ch] for _, c in P.IRON_ANCHORS]))) for ch in range(3))
                for v in ls]
    assert got == want


def test_the_perturbed_image_is_made_once_per_source_hash_and_palette(tmp_path, monkeypatch):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    Image.new("RGB", (8, 8), (90, 40, 10)).save(a)
    b.write_bytes(a.read_bytes())  # the same bytes elsewhere: one cached copy
    made = []
    real = P.apply_palette
    monkeypatch.setattr(P, "apply_palette", lambda im, n: made.append(n) or real(im, n))
    cache = tmp_path / "c"
    first = P.perturbed_image(a, "palette:iron", cache)
    assert P.perturbed_image(b, "palette:iron", cache) == first and made == ["iron"]
    other = P.perturbed_image(a, "palette:gray", cache)
    assert other != first and made == ["iron", "gray"]
    assert sorted(p.name for p in cache.iterdir()) == sorted([first.name, other.name])  # no temporary left
    with pytest.raises(ValueError, match="does not change images"):
        P.perturbed_image(a, "frames:shuffle", cache)


def test_frame_orders_are_seeded_permutations_and_drops():
    sh = P.frame_order(32, "frames:shuffle", 7)
    assert sorted(sh) == list(range(32)) and sh != list(range(32))
    assert sh == P.frame_order(32, "frames:shuffle", 7) and sh != P.frame_order(32, "frames:shuffle", 8)
    expected = list(range(32))
    random.Random(7).shuffle(expected)
    assert sh == expected
    for n, f, k in [(32, 0.25, 8), (8, 0.5, 4), (3, 0.5, 2), (3, 0.1, 0), (2, 0.9, 1), (1, 0.5, 0)]:
        kept = P.frame_order(n, f"frames:drop={f}", 3)
        assert len(kept) == n - k and kept == sorted(kept) and set(kept) <= set(range(n))
    with pytest.raises(ValueError, match="does not change frames"):
        P.frame_order(4, "palette:iron", 0)


def test_non_circular_permutations_leave_the_circular_set():
    rotations = {tuple((j - i) % 4 for j in range(4)) for i in range(4)}
    seen = set()
    for s in range(200):
        p = P.non_circular_permutation(4, s)
        assert sorted(p) == [0, 1, 2, 3] and p not in rotations
        # and so are all 4 rotations of the permuted list (what circular evaluation then sends)
        assert all(tuple(p[(j - i) % 4] for j in range(4)) not in rotations for i in range(4))
        seen.add(p)
    assert len(seen) == 20 == len(list(itertools.permutations(range(4)))) - 4
    assert P.non_circular_permutation(4, 5) == P.non_circular_permutation(4, 5)
    with pytest.raises(ValueError):
        P.non_circular_permutation(2, 0)


def test_item_seeds_depend_on_seed_perturbation_and_item():
    s = P.item_seed(0, "frames:shuffle", "v/1")
    assert s == P.item_seed(0, "frames:shuffle", "v/1")
    assert len({s, P.item_seed(1, "frames:shuffle", "v/1"), P.item_seed(0, "frames:drop=0.5", "v/1"),
                P.item_seed(0, "frames:shuffle", "v/2")}) == 4
