"""The modality-necessity settings behind ``lensbench reproduce``'s baselines send what they say: RGB-Th-Bench
``--input blind`` (no image, the paper's text), IV-Bench ``--pattern no-video`` (query image + text, no frames,
no frame prefix) and ``--pattern blind`` (text only), GOBench ``--blind`` and GroundingME ``--blind`` (the
prompt without the image, scored as usual)."""

from __future__ import annotations

import pytest
from PIL import Image

from lensbench.benchmarks.gobench.benchmark import GOBench
from lensbench.benchmarks.gobench.records import GORecord
from lensbench.benchmarks.ivbench.benchmark import IVBench
from lensbench.benchmarks.ivbench.options import build_options
from lensbench.benchmarks.rgbth.benchmark import CONTEXT, RGBThBench
from lensbench.core.types import ImagePart, StoredResponse, TextPart

INSTRUCTION = "Answer with the option's letter from the given choices directly."


def test_rgbth_blind_sends_the_paper_text_without_images(rgbth_gen):
    full = RGBThBench()
    blind = RGBThBench(RGBThBench.Options(input="blind"))
    a, b = full.expand(full.load(rgbth_gen)), blind.expand(blind.load(rgbth_gen))
    assert [r.id for r in a] == [r.id for r in b]  # the same questions, the same ids (flags pair by sample id)
    for ra, rb in zip(a, b):
        assert not [p for p in rb.messages[0].parts if isinstance(p, ImagePart)]
        assert [p.text for p in rb.messages[0].parts] == [p.text for p in ra.messages[0].parts if isinstance(p, TextPart)]
    assert b[0].messages[0].parts[0].text.startswith(CONTEXT["RGB-Txt"])


@pytest.mark.parametrize("pattern", ["no-video", "blind"])
def test_ivbench_frame_free_patterns(tmp_path, pattern):
    from test_ivbench_protocol import _ctx, _frames, _layout, _query

    data = _layout(tmp_path, [{"v1": [_query()]}])
    bench = IVBench(IVBench.Options(frames="3", pattern=pattern))
    qs = bench.load(data)
    reqs, _facts = bench.requests(qs, {"v1": {(3, None): _frames(tmp_path, "v1")}}, _ctx(tmp_path, data), seed=0)
    parts = reqs[0].messages[0].parts
    ch = build_options(qs[0], 0)
    options = "\n".join(f"{k}. {v}" for k, v in ch.options)
    assert parts[-1].text == "How many cups?？\n" + options + "\n" + INSTRUCTION  # no frame-count prefix
    images = [p for p in parts if isinstance(p, ImagePart)]
    assert all(p.video is None for p in images)
    assert len(images) == (1 if pattern == "no-video" else 0)
    if images:
        assert images[0].path == str(data / "images" / "v1_0.png")


def test_gobench_blind_critic_gets_no_image(tmp_path):
    img = tmp_path / "direct_light_images" / "1.1.png"
    img.parent.mkdir()
    Image.new("RGB", (32, 32)).save(img)
    rec = GORecord("direct_light_images_1.1", "direct_light_images", "direct_light_images/1.1.png", "t", "a lamp",
                   ("Q1?", "Q2?", "Q3?", "Q4?", "Q5?"), "direct_light_images/1", "1", image_path=str(img))
    seen = GOBench().expand([rec])[0].messages[0].parts
    blind = GOBench(GOBench.Options(blind=True)).expand([rec])[0].messages[0].parts
    assert [type(p) for p in seen] == [TextPart, ImagePart] and [type(p) for p in blind] == [TextPart]
    assert blind[0].text == seen[0].text


def test_groundingme_blind_prompt_alone(fixture_dir, tmp_path):  # noqa: F811
    from groundingme_fixture import by_id, ctx, run

    from lensbench.benchmarks.groundingme.benchmark import GroundingME
    from lensbench.benchmarks.groundingme.data import load_groundingme

    sent = []

    def gen(reqs):
        sent.extend(reqs)
        return {r.id: StoredResponse(key="k", request_id=r.id, status="ok", text='{"bbox_2d": null}') for r in reqs}

    samples = load_groundingme(fixture_dir / "hf")
    recs = by_id(run(GroundingME(GroundingME.Options(blind=True)), samples, ctx(tmp_path, gen)))
    assert sent and all([type(p) for p in r.messages[0].parts] == [TextPart] for r in sent)
    assert recs["gm-4"].outcome == "correct"  # a rejection answered without the image
    assert recs["gm-0"].outcome == "wrong" and recs["gm-0"].extra["parse"] == "rejected"


from groundingme_fixture import fixture_dir  # noqa: E402,F401  (module-scoped fixture; imports skimage)
