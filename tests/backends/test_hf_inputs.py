"""hf: backend without torch: spec parsing, checkpoint identity, request -> chat template inputs,
generation arguments, batch media assembly."""

from __future__ import annotations

import json

import pytest

from lensbench.backends.hf_inputs import batch_media, build_chat, generation_kwargs, template_kwargs
from lensbench.backends.hf_spec import model_identity, parse_hf_spec, resolve_dtype, resolve_video_mode
from lensbench.backends.providers import make_backend
from lensbench.core.errors import ConfigError
from lensbench.core.types import GenParams, ImagePart, Message, Request, TextPart


def img(name: str, video: str | None = None, t: float | None = None) -> ImagePart:
    return ImagePart(path=f"/d/{name}", sha256=name, video=video, t_s=t)


def req(*parts, params: GenParams = GenParams(), system: str | None = None) -> Request:
    msgs = ((Message(role="system", parts=(TextPart(text=system),)),) if system else ()) + (Message.user(*parts),)
    return Request(id="r", messages=msgs, params=params)


def test_parts_keep_protocol_order_and_images_follow_entries():
    c = build_chat(req("Look:", img("b.jpg"), "and", img("a.jpg"), "Answer?", system="Be brief."))
    assert c.conversation == [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": [{"type": "text", "text": "Look:"}, {"type": "image"}, {"type": "text", "text": "and"},
                                     {"type": "image"}, {"type": "text", "text": "Answer?"}]}]
    assert c.images == ["/d/b.jpg", "/d/a.jpg"] and c.videos == []


def test_video_frames_as_one_video_entry_per_run_of_frames():
    parts = [img(f"f{i}.jpg", "v1.mp4", i * 0.5) for i in range(4)] + ["between"] + \
            [img(f"g{i}.jpg", "v2.mp4", float(i)) for i in range(2)] + [img("still.jpg"), "Q?"]
    c = build_chat(req(*parts), "video")
    assert [e["type"] for e in c.conversation[0]["content"]] == ["video", "text", "video", "image", "text"]
    assert c.videos == [[f"/d/f{i}.jpg" for i in range(4)], ["/d/g0.jpg", "/d/g1.jpg"]]
    assert c.images == ["/d/still.jpg"]
    # two videos back to back stay two entries
    c2 = build_chat(req(img("a", "v1.mp4"), img("b", "v2.mp4")), "video")
    assert c2.videos == [["/d/a"], ["/d/b"]]


def test_video_frames_as_images_for_other_families():
    parts = [img(f"f{i}.jpg", "v1.mp4", float(i)) for i in range(3)] + ["Q?"]
    c = build_chat(req(*parts), "images")
    assert [e["type"] for e in c.conversation[0]["content"]] == ["image"] * 3 + ["text"]
    assert c.images == ["/d/f0.jpg", "/d/f1.jpg", "/d/f2.jpg"] and c.videos == []
    with pytest.raises(ValueError):
        build_chat(req("x"), "frames")


def test_thinking_switch_and_generation_arguments():
    p = GenParams(temperature=0.0, max_tokens=32, extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    r = req("x", params=p)
    assert template_kwargs(r) == {"enable_thinking": False}
    assert generation_kwargs(r, 1024) == {"max_new_tokens": 32, "do_sample": False, "temperature": None,
                                          "top_p": None, "top_k": None}
    s = req("x", params=GenParams(temperature=0.7, top_p=0.9, extra_body={"top_k": 20, "min_tokens": 2}))
    assert generation_kwargs(s, 64) == {"max_new_tokens": 64, "do_sample": True, "temperature": 0.7, "top_p": 0.9,
                                        "top_k": 20, "min_new_tokens": 2}
    assert generation_kwargs(req("x", params=GenParams(temperature=None)), 8) == {"max_new_tokens": 8}
    with pytest.raises(ConfigError, match="reasoning_effort"):
        generation_kwargs(req("x", params=GenParams(extra_body={"reasoning_effort": "low"})), 8)


def test_batch_media_nested_images_flat_videos():
    a = build_chat(req(img("1"), "q"))
    b = build_chat(req(img("2"), img("3"), "q"))
    assert batch_media([a, b]) == {"images": [["/d/1"], ["/d/2", "/d/3"]]}
    assert batch_media([build_chat(req("t"))]) == {}
    v1 = build_chat(req(img("f", "v.mp4"), img("g", "v.mp4"), "q"), "video")
    v2 = build_chat(req(img("h", "w.mp4"), "q"), "video")
    assert batch_media([v1, v2]) == {"videos": [["/d/f", "/d/g"], ["/d/h"]]}


def test_spec_options_and_errors():
    src, s = parse_hf_spec("/m/qwen?dtype=bfloat16&device=cuda:1&attn=sdpa&batch=64&video=images")
    assert src == "/m/qwen" and (s.dtype, s.device, s.attn, s.batch, s.video) == ("bfloat16", "cuda:1", "sdpa", 64, "images")
    _, d = parse_hf_spec("org/model", {"batch": 4})
    assert (d.dtype, d.device, d.batch) == ("auto", "auto", 4)
    for bad in ["", "?dtype=bfloat16", "m?dtype=int3", "m?device=tpu", "m?colour=red", "m?batch=0", "m?&&"]:
        with pytest.raises(ConfigError):
            parse_hf_spec(bad)


def test_dtype_and_video_mode_resolution():
    assert resolve_dtype("auto", {"torch_dtype": "bfloat16"}) == "bfloat16"
    assert resolve_dtype("auto", {"text_config": {"dtype": "float16"}}) == "float16"
    assert resolve_dtype("auto", {"model_type": "x"}) == "float32"
    assert resolve_dtype("auto", {}) == "auto"  # Hub id: config not read
    assert resolve_dtype("float16", {"torch_dtype": "bfloat16"}) == "float16"
    assert resolve_video_mode("auto", "qwen2_5_vl") == "video"
    assert resolve_video_mode("auto", "llava_onevision") == "images"
    assert resolve_video_mode("auto", None, "Qwen/Qwen2.5-VL-7B-Instruct") == "video"
    assert resolve_video_mode("images", "qwen2_5_vl") == "images"


def _folder(tmp_path, cfg=None, weights=b"x" * 10):
    d = tmp_path / "ckpt"
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps(cfg or {"model_type": "qwen2_5_vl", "torch_dtype": "bfloat16"}))
    (d / "model.safetensors").write_bytes(weights)
    (d / "chat_template.jinja").write_text("{{ messages }}")
    return d


def test_identity_follows_config_weights_and_template(tmp_path):
    d = _folder(tmp_path)
    base = model_identity(str(d))
    assert model_identity(str(d)) == base
    (d / "model.safetensors").write_bytes(b"y" * 10)  # same size: names + sizes only
    assert model_identity(str(d)) == base
    (d / "model.safetensors").write_bytes(b"y" * 11)
    size_changed = model_identity(str(d))
    assert size_changed != base
    (d / "chat_template.jinja").write_text("{{ other }}")
    assert model_identity(str(d)) not in (base, size_changed)
    assert model_identity("Qwen/Qwen2.5-VL-7B-Instruct", "abc123") == "hub:Qwen/Qwen2.5-VL-7B-Instruct@abc123"
    with pytest.raises(ConfigError, match="config.json"):
        model_identity(str(tmp_path))


def test_backend_is_built_without_torch_and_fingerprints_output_settings(tmp_path):
    d = _folder(tmp_path)
    b = make_backend(f"hf:{d}?batch=8")
    assert b.batch_size == 8 and b.model is None  # nothing loaded
    assert b.video_mode == "video" and b.dtype == "bfloat16"
    assert make_backend(f"hf:{d}?batch=64&device=cpu").fingerprint == b.fingerprint  # placement only
    for opt in ["dtype=float32", "attn=eager", "video=images", "max_new_tokens=8", "max_pixels=50176"]:
        assert make_backend(f"hf:{d}?{opt}").fingerprint != b.fingerprint, opt
    with pytest.raises(ConfigError):
        make_backend(f"hf:{tmp_path / 'missing'}")
