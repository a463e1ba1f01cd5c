"""GroundingME construction, Sec. 3.2.1 steps 1-2: the tag parser, the engine tagger through a
Session, the token -> word / tag mapping, and GroundingDINO through transformers on a tiny random
config on the CPU (skipped without torch)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.testing.server import FakeOpenAIServer
from lensbench.tools.groundingme.detect import token_classes
from lensbench.tools.groundingme.tags import EngineTagger, make_tagger, parse_tags

sys.path.insert(0, str(Path(__file__).parent))
from gm_build_fixture import ScriptedBuilder, make_scene  # noqa: E402


@pytest.mark.parametrize("reply,want", [
    ('{"classes": ["Traffic Cone", "person", "person", "a.b"]}', ["traffic cone", "person", "a b"]),
    ('<think>hm</think>```json\n["dog", "cat"]\n```', ["dog", "cat"]),
    ("dog, cat\nfire hydrant", ["dog", "cat", "fire hydrant"]),
    ('{"classes": []}', []),
    ('{"classes": ["a very long class name here"]}', []),
    ("", None),
    ('{"oops": 1}', None),
])
def test_parse_tags(reply, want):
    assert parse_tags(reply) == want


def test_token_classes_maps_tokens_to_word_and_tag():
    tags = ["cat", "traffic cone", "dog"]
    text = "cat. traffic cone. dog."
    # offsets as a BERT fast tokenizer gives them: [CLS] cat . traffic cone . dog . [SEP]
    offs = [(0, 0), (0, 3), (3, 4), (5, 12), (13, 17), (17, 18), (19, 22), (22, 23), (0, 0)]
    assert token_classes(text, offs, tags) == [None, ("cat", "cat"), None, ("traffic cone", "traffic"),
                                               ("traffic cone", "cone"), None, ("dog", "dog"), None, None]
    # a word split into two word pieces: both pieces belong to the word
    assert token_classes("hydrant.", [(0, 0), (0, 3), (3, 7), (7, 8), (0, 0)], ["hydrant"])[1:3] == \
        [("hydrant", "hydrant"), ("hydrant", "hydrant")]


def test_engine_tagger_through_a_session(tmp_path):
    from lensbench.tools.groundingme.build_cli import open_session

    scene = make_scene(tmp_path)
    model = ScriptedBuilder()
    with FakeOpenAIServer(responder=model) as srv:
        async def go():
            async with open_session(tmp_path / "w", "openai:tagger", [srv.url], "OPENAI_API_KEY", 2, 0) as s:
                return await EngineTagger().tag({"a": scene["images"] / "a.png"}, s.generate)

        assert asyncio.run(go()) == {"a": ["cone", "flag", "traffic light"]}
        assert asyncio.run(go()) == {"a": ["cone", "flag", "traffic light"]}
        assert sum(srv.answered.values()) == 1  # the second call came from the store
    prompt = (Path(__file__).resolve().parents[2] / "src/lensbench/tools/groundingme/prompts/tags.txt").read_text()
    assert model.texts == [prompt.split("\n-----\n", 1)[1].rstrip("\n")]


def test_ram_plus_without_its_package_says_how_to_install():
    pytest.importorskip("torch")
    import importlib.util

    if importlib.util.find_spec("ram") is not None:
        pytest.skip("RAM++ is installed here")
    from lensbench.core.errors import ConfigError

    with pytest.raises(ConfigError, match="recognize-anything"):
        make_tagger("ram++", "ram_plus.pth")
    with pytest.raises(ConfigError, match="--tagger-checkpoint"):
        make_tagger("ram++", None)


@pytest.fixture(scope="module")
def tiny_gdino(tmp_path_factory):
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("transformers")
    d = tmp_path_factory.mktemp("gdino")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "cone", "flag", "traffic", "light"]
    tok = tf.BertTokenizerFast(vocab={w: i for i, w in enumerate(words)})
    proc = tf.GroundingDinoProcessor(image_processor=tf.GroundingDinoImageProcessor(
        size={"shortest_edge": 64, "longest_edge": 96}), tokenizer=tok)
    cfg = tf.GroundingDinoConfig(
        backbone_config=tf.SwinConfig(image_size=64, patch_size=4, embed_dim=8, depths=[1, 1, 1, 1],
                                      num_heads=[1, 1, 1, 1], window_size=4, out_indices=[2, 3, 4]),
        text_config=tf.BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32, max_position_embeddings=64),
        d_model=32, encoder_layers=1, decoder_layers=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        encoder_attention_heads=2, decoder_attention_heads=2, num_queries=30, num_feature_levels=3,
        encoder_n_points=2, decoder_n_points=2, max_text_len=8)
    torch.manual_seed(0)
    tf.GroundingDinoForObjectDetection(cfg).save_pretrained(d)
    proc.save_pretrained(d)
    return d


def test_groundingdino_detector_on_a_tiny_random_config(tiny_gdino, tmp_path):
    from PIL import Image

    from lensbench.tools.groundingme.detect import GroundingDinoDetector

    det = GroundingDinoDetector(str(tiny_gdino), box_threshold=0.0, device="cpu")
    # window of 8 tokens: [CLS] cone . flag . [SEP] = 6 fit; "traffic light ." would make 9 -> a second query
    assert det.chunks(["Cone", "flag", "cone", "traffic light"]) == [["cone", "flag"], ["traffic light"]]
    im = Image.new("RGB", (120, 80), (90, 90, 90))
    boxes = det.detect(im, ["cone", "flag", "traffic light"])
    assert len(boxes) == 2 * 30  # every query of both chunks passes threshold 0
    assert {b.label for b in boxes} <= {"cone", "flag", "traffic", "light"}
    assert {b.tag for b in boxes if b.label in ("traffic", "light")} <= {"traffic light"}
    assert all(0 <= b.box[0] < b.box[2] <= 120 and 0 <= b.box[1] < b.box[3] <= 80 for b in boxes)
    hi = GroundingDinoDetector(str(tiny_gdino), box_threshold=0.99, device="cpu", class_name="tag")
    assert all(b.score >= 0.99 for b in hi.detect(im, ["cone"]))
    tags = GroundingDinoDetector(str(tiny_gdino), box_threshold=0.0, device="cpu", class_name="tag")
    assert {b.label for b in tags.detect(im, ["traffic light"])} == {"traffic light"}


def test_build_with_tagger_and_groundingdino(tiny_gdino, tmp_path):
    scene = make_scene(tmp_path)
    work = tmp_path / "work"
    model = ScriptedBuilder()
    runner = CliRunner()
    args = ["groundingme", "build", "--work", str(work), "--model", "openai:b", "--images", str(scene["images"]),
            "--detector", str(tiny_gdino), "--box-threshold", "0.0", "--device", "cpu", "--max-per-image", "2",
            "--rejection-share", "0", "--max-area-ratio", "1.0"]
    with FakeOpenAIServer(responder=model) as srv:
        res = runner.invoke(app, [*args, "--base-url", srv.url])
        assert res.exit_code == 0, res.output
        n = sum(srv.answered.values())
        lines = [json.loads(x) for x in (work / "detections.jsonl").read_text().splitlines()]
        assert [ln["image"] for ln in lines] == ["a.png", "b.png"]
        assert all(ln["tags"] == ["cone", "flag", "traffic light"] for ln in lines)
        assert all(d["label"] in ("cone", "flag", "traffic", "light") for ln in lines for d in ln["detections"])
        counts = json.loads((work / "build.json").read_text())["counts"]
        assert counts["n_boxes"] == sum(len(ln["detections"]) for ln in lines) and counts["n_images"] == 2
        assert counts["n_items"] <= 4 and n == 2 + counts["n_candidates"]  # 2 tag requests + descriptions
        res = runner.invoke(app, [*args, "--base-url", srv.url])  # cached detections, cached replies
        assert res.exit_code == 0, res.output
        assert sum(srv.answered.values()) == n
        assert len((work / "detections.jsonl").read_text().splitlines()) == 2


def test_fake_server_rule_replies():
    from lensbench.tools.groundingme.demo_scene import DEMO_REPLIES
    from lensbench.testing.server import rule_responder

    r = rule_responder(DEMO_REPLIES, "Yes")
    body = {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}},
                                                      {"type": "text", "text": "... was detected as: flag.\n..."}]}]}
    assert json.loads(r(body))["category"] == "relationship"
    assert r({"messages": [{"role": "user", "content": "Original description: An orange cone"}]}).startswith(
        '{"description": "A purple')
    assert r({"messages": [{"role": "user", "content": "hello"}]}) == "Yes"
    with pytest.raises(ValueError, match="rule 0"):
        rule_responder([{"contains": 1}], "Yes")
