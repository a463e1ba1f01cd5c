"""Each benchmark's ``--perturb`` hook sends exactly what docs/perturbations.md says, on the generated RGB-Th-Bench
data and the demo data of IF-Bench and IV-Bench (``lensbench data demo``): palette-mapped thermal / infrared pixels,
frame timestamps shuffled or dropped, option orders outside the protocol's own; deterministic by seed; refused
with a one-line reason where it does not apply."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from pydantic import ValidationError

from lensbench.benchmarks.context import RunContext
from lensbench.benchmarks.ifbench.benchmark import IFBench
from lensbench.benchmarks.ifbench.prompts import build_prompt, template_for
from lensbench.benchmarks.ivbench.benchmark import IVBench
from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.core.types import ImagePart, TextPart
from lensbench.media.frame_cache import FrameCache
from lensbench.media.perturb import palette_lut


def _ctx(tmp_path: Path, seed: int = 0, name: str = "run") -> RunContext:
    async def _gen(reqs, label):  # pragma: no cover - nothing is sent here
        raise AssertionError

    return RunContext(run_dir=tmp_path / name, data_dir=tmp_path, seed=seed, generate=_gen, has_judge=False,
                      model_name="m")


def _pixels(path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def _lum(path) -> np.ndarray:  # ITU-R 601-2 in Pillow's rounded fixed point
    a = _pixels(path)
    return (a[..., 0] * 19595 + a[..., 1] * 38470 + a[..., 2] * 7471 + 0x8000) >> 16


def _images(req) -> list[ImagePart]:
    return [p for p in req.messages[0].parts if isinstance(p, ImagePart)]


# ----------------------------------------------------------------------------------------------- RGB-Th-Bench
@pytest.mark.parametrize("palette", ["gray", "iron", "inverted"])
def test_rgbth_palette_recolours_the_thermal_image_only(rgbth_gen, tmp_path, palette):
    plain = RGBThBench()
    pert = RGBThBench(RGBThBench.Options(perturb=f"palette:{palette}"))
    ctx = _ctx(tmp_path)
    a, b = plain.expand(plain.load(rgbth_gen), ctx), pert.expand(pert.load(rgbth_gen), ctx)
    assert [r.id for r in a] == [r.id for r in b] and len(a) == 192  # the same items: paired by id
    lut = palette_lut(palette)
    n_changed = 0
    for ra, rb in zip(a, b):
        ia, ib = _images(ra), _images(rb)
        assert [p.text for p in ra.messages[0].parts if isinstance(p, TextPart)] == \
               [p.text for p in rb.messages[0].parts if isinstance(p, TextPart)]
        assert ia[0] == ib[0]  # the RGB image is sent as released
        if len(ia) == 1:  # RGB-Txt: nothing thermal to re-colour
            assert ra.key_for("m") == rb.key_for("m") and "perturb" not in rb.meta["extra"]
            continue
        n_changed += 1
        assert ra.key_for("m") != rb.key_for("m") and rb.meta["extra"]["perturb"] == f"palette:{palette}"
        assert Path(ib[1].path).parent == ctx.media_dir / "perturbed" and ib[1].sha256 != ia[1].sha256
        assert (_pixels(ib[1].path) == lut[_lum(ia[1].path)]).all()
    assert n_changed == 96  # 4 of the 8 generated skills are RGB-Th-Txt
    assert len(list((ctx.media_dir / "perturbed").iterdir())) == 6  # one per scene's thermal image, made once
    again = pert.expand(pert.load(rgbth_gen), _ctx(tmp_path, name="run2"))
    assert [r.key_for("m") for r in again] == [r.key_for("m") for r in b]  # deterministic


def test_rgbth_thermal_only_recolours_its_one_image(rgbth_gen, tmp_path):
    b = RGBThBench(RGBThBench.Options(input="thermal-only", perturb="palette:inverted"))
    reqs = b.expand(b.load(rgbth_gen), _ctx(tmp_path))
    src = rgbth_gen / "Source 1" / "Scene 0" / "thermal.jpg"
    r0 = next(r for r in reqs if r.id.startswith("Source 1/Scene 0/"))
    (img,) = _images(r0)
    assert (_pixels(img.path) == 255 - _lum(src)[..., None]).all()


@pytest.mark.parametrize("kw,needle", [
    ({"perturb": "options:shuffle"}, "options:shuffle does not apply to RGB-Th-Bench: its yes/no questions have no "
                                     "options to shuffle"),
    ({"perturb": "frames:drop=0.5"}, "frames:drop=0.5 does not apply to RGB-Th-Bench: it has no video"),
    ({"perturb": "palette:jet"}, "unknown perturbation 'palette:jet'"),
    ({"perturb": "palette:iron", "input": "rgb-only"}, "palette:iron re-colours the thermal image: --input rgb-only"),
    ({"perturb": "palette:iron", "input": "blind"}, "--input blind sends none"),
])
def test_rgbth_refuses_what_does_not_apply(kw, needle):
    with pytest.raises(ValidationError, match=needle):
        RGBThBench.Options(**kw)


# ---------------------------------------------------------------------------------------------------- IF-Bench
@pytest.fixture(scope="module")
def if_demo(tmp_path_factory) -> Path:
    return IFBench.write_demo(tmp_path_factory.mktemp("ifdemo"))


def _slots(req, q, lang) -> tuple[str, ...]:
    """The option order the prompt shows, found among all 24 orders of the released options."""
    text = req.messages[0].parts[-1].text
    hits = [p for p in itertools.permutations(q.option_list(lang))
            if build_prompt(template_for("if", lang), q.question(lang), p) == text]
    assert len(hits) == 1
    return hits[0]


def test_ifbench_options_shuffle_leaves_the_circular_set(if_demo, tmp_path):
    b = IFBench(IFBench.Options(perturb="options:shuffle"))
    qs = b.load(if_demo)
    reqs = {r.id: r for r in b.expand(qs, _ctx(tmp_path, seed=3))}
    plain = {r.id: r for r in IFBench().expand(qs, _ctx(tmp_path, seed=3))}
    assert reqs.keys() == plain.keys()
    for q in qs:
        orders = {}
        for lang in ("en", "zh"):
            orig = q.option_list(lang)
            circular = {tuple(orig[(j - i) % 4] for j in range(4)) for i in range(4)}
            for i in range(4):
                r = reqs[f"{q.qid}/{lang}/r{i}"]
                slots = _slots(r, q, lang)
                assert _slots(plain[f"{q.qid}/{lang}/r{i}"], q, lang) == tuple(orig[(j - i) % 4] for j in range(4))
                idx = tuple(q.option_list(lang).index(s) for s in slots)
                orders[(lang, i)] = idx
                # the target letter still names the released right answer
                right = q.option_list(lang)["ABCD".index(q.answer)]
                assert slots["ABCD".index(r.meta["target"])] == right
                assert r.meta["extra"]["perturb"] == "options:shuffle"
                assert slots not in circular
            # rotation i is the perturbed base order shifted right by i, as circular evaluation does
            base = orders[(lang, 0)]
            assert all(orders[(lang, i)] == tuple(base[(j - i) % 4] for j in range(4)) for i in range(4))
        assert orders[("en", 0)] == orders[("zh", 0)]  # one permutation per question, both languages
        assert list(reqs[f"{q.qid}/en/r0"].meta["extra"]["option_order"]) == ["ABCD"[j] for j in orders[("en", 0)]]
    again = IFBench(IFBench.Options(perturb="options:shuffle")).expand(qs, _ctx(tmp_path, seed=3))
    assert [r.key_for("m") for r in again] == [r.key_for("m") for r in reqs.values()]
    other = IFBench(IFBench.Options(perturb="options:shuffle")).expand(qs, _ctx(tmp_path, seed=4))
    assert [r.key_for("m") for r in other] != [r.key_for("m") for r in reqs.values()]


def test_ifbench_palette_recolours_the_infrared_image_not_the_translation(if_demo, tmp_path):
    b = IFBench(IFBench.Options(perturb="palette:iron", input="if+rgb"))
    qs = b.load(if_demo)
    r = b.expand(qs[:1], _ctx(tmp_path))[0]
    ir, rgb = _images(r)
    assert rgb.path == qs[0].rgb_path
    assert (_pixels(ir.path) == palette_lut("iron")[_lum(qs[0].if_path)]).all()


@pytest.mark.parametrize("kw,needle", [
    ({"perturb": "frames:shuffle"}, "frames:shuffle does not apply to IF-Bench: it has no video"),
    ({"perturb": "palette:gray", "input": "rgb"}, "re-colours the infrared image: --input rgb sends none"),
    ({"perturb": "palette:gray", "blind": True}, "--blind sends none"),
])
def test_ifbench_refuses_what_does_not_apply(kw, needle):
    with pytest.raises(ValidationError, match=needle):
        IFBench.Options(**kw)


# ---------------------------------------------------------------------------------------------------- IV-Bench
@pytest.fixture(scope="module")
def iv_demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("ivdemo")
    data = IVBench.write_demo(root / "data")
    bench = IVBench(IVBench.Options(frames="8"))
    qs = bench.load(data)
    return qs, bench.extract_frames(qs, FrameCache(root / "frames"))


def _frame_times(req) -> list[float]:
    return [p.t_s for p in _images(req) if p.video is not None]


@pytest.mark.parametrize("perturb", ["frames:shuffle", "frames:drop=0.25", "frames:drop=0.5"])
def test_ivbench_frames_are_shuffled_or_dropped_as_documented(iv_demo, tmp_path, perturb):
    qs, frames = iv_demo
    plain, _ = IVBench(IVBench.Options(frames="8")).requests(qs, frames, _ctx(tmp_path), seed=0)
    pb = IVBench(IVBench.Options(frames="8", perturb=perturb))
    pert, _ = pb.requests(qs, frames, _ctx(tmp_path), seed=0)
    assert [r.id for r in plain] == [r.id for r in pert] and len(plain) == len(qs)
    for ra, rb in zip(plain, pert):
        ta, tb = _frame_times(ra), _frame_times(rb)
        assert len(ta) == 8 and ta == sorted(ta)
        if perturb == "frames:shuffle":
            assert sorted(tb) == ta and len(tb) == 8
        else:
            n_drop = {"frames:drop=0.25": 2, "frames:drop=0.5": 4}[perturb]
            assert len(tb) == 8 - n_drop and tb == sorted(tb) and set(tb) <= set(ta)
            # the Appendix C prefix counts the frames sent
            assert "divided into 8 evenly spaced frames" in ra.messages[0].parts[-1].text
            assert f"divided into {8 - n_drop} evenly spaced frames" in rb.messages[0].parts[-1].text
        assert rb.meta["extra"]["perturb"] == perturb
        assert tb == [ta[i] for i in rb.meta["extra"]["frame_order"]]
        # the query image and the options are untouched
        assert [p for p in _images(rb) if p.video is None] == [p for p in _images(ra) if p.video is None]
        assert rb.meta["extra"]["options"] == ra.meta["extra"]["options"]
    if perturb == "frames:shuffle":
        assert any(_frame_times(r) != sorted(_frame_times(r)) for r in pert)
    again, _ = pb.requests(qs, frames, _ctx(tmp_path), seed=0)
    assert [r.key_for("m") for r in again] == [r.key_for("m") for r in pert]
    other, _ = pb.requests(qs, frames, _ctx(tmp_path), seed=1)
    assert [_frame_times(r) for r in other] != [_frame_times(r) for r in pert]


def test_ivbench_options_shuffle_is_a_second_seed(iv_demo, tmp_path):
    qs, frames = iv_demo
    plain, _ = IVBench(IVBench.Options(frames="8")).requests(qs, frames, _ctx(tmp_path), seed=0)
    pb = IVBench(IVBench.Options(frames="8", perturb="options:shuffle"))
    pert, _ = pb.requests(qs, frames, _ctx(tmp_path), seed=0)
    moved = 0
    for ra, rb in zip(plain, pert):
        oa, ob = ra.meta["extra"]["options"], rb.meta["extra"]["options"]
        assert sorted(oa.values()) == sorted(ob.values())  # the same options, re-lettered
        assert ob[rb.meta["target"]] == oa[ra.meta["target"]]  # the target letter follows the answer
        assert _frame_times(ra) == _frame_times(rb)
        moved += list(oa.values()) != list(ob.values())
    assert moved >= len(qs) - 1  # a 10-way shuffle rarely repeats itself
    again, _ = pb.requests(qs, frames, _ctx(tmp_path), seed=0)
    assert [r.meta["extra"]["options"] for r in again] == [r.meta["extra"]["options"] for r in pert]


@pytest.mark.parametrize("kw,needle", [
    ({"perturb": "palette:iron"}, "palette:iron does not apply to IV-Bench: its images are not thermal"),
    ({"perturb": "frames:shuffle", "pattern": "no-video"}, "--pattern no-video sends none"),
    ({"perturb": "frames:drop=2"}, "frames:drop=F needs 0 < F < 1"),
])
def test_ivbench_refuses_what_does_not_apply(kw, needle):
    with pytest.raises(ValidationError, match=needle):
        IVBench.Options(**kw)


# ----------------------------------------------------------------------------------------------------- GOBench
@pytest.mark.parametrize("value,needle", [
    ("options:shuffle", "options:shuffle does not apply to GOBench: its critic answers yes/no/cannot-determine "
                        "questions and 1-5 ratings: there are no options to shuffle (it takes: none)"),
    ("palette:gray", "palette:gray does not apply to GOBench: its images are generated photographs"),
    ("frames:shuffle", "frames:shuffle does not apply to GOBench: it has no video"),
])
def test_gobench_refuses_every_perturbation_with_its_reason(value, needle):
    from lensbench.benchmarks.gobench.benchmark import GOBench

    assert GOBench.Options().perturb is None
    with pytest.raises(ValidationError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        GOBench.Options(perturb=value)


def test_ivbench_run_logs_the_frames_as_sent(tmp_path):
    """A whole run (random baseline) on the demo: each record's video part lists the timestamps in the order
    sent, run.json records the perturbation, and the leaderboard names it."""
    import json

    from lensbench.cli.view import leaderboard_report
    from lensbench.runtime.runner import RunSettings, run_benchmark

    data = IVBench.write_demo(tmp_path / "demo")
    out = tmp_path / "run"
    run_benchmark(IVBench(IVBench.Options(frames="8", perturb="frames:drop=0.25")),
                  RunSettings(model="random", out=out, data_dir=data, progress=False))
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["options"]["perturb"] == "frames:drop=0.25"
    recs = [json.loads(x) for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert recs and all(r["outcome"] != "error" for r in recs)
    for r in recs:
        (video,) = [p for p in r["messages"][0]["content"] if p["type"] == "video"]
        assert len(video["timestamps"]) == 6 == len(r["extra"]["frame_order"])
        assert r["extra"]["perturb"] == "frames:drop=0.25"
        assert video["timestamps"] == sorted(video["timestamps"])
    assert "perturb=frames:drop=0.25" in leaderboard_report([out], "md", n_resamples=50)
