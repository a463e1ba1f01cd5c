"""backends/images: the shared parts of image editors and text-to-image generators."""

from __future__ import annotations

import base64
import io

import httpx
import pytest
from PIL import Image

from lensbench.backends.images.base import (ImageBackendError, OpenAIImagesClient, find_by_stem, find_image,
                                            load_diffusers_pipeline, resize_back_and_save)
from lensbench.backends.images.editors import EditError, make_editor
from lensbench.backends.images.generators import GenerationError, make_generator
from lensbench.core.errors import ConfigError
from lensbench.core.extras import MissingExtraError


def _png(colour=(10, 20, 30), size=(8, 8)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, "PNG")
    return buf.getvalue()


def test_errors_share_one_base():
    assert issubclass(EditError, ImageBackendError) and issubclass(GenerationError, ImageBackendError)


def test_folder_lookup(tmp_path):
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "1.jpg").write_bytes(b"x")
    (tmp_path / "cat_2.png").write_bytes(b"x")
    (tmp_path / "a.webp").write_bytes(b"x")
    assert find_image([tmp_path / "cat" / "1", tmp_path / "cat_1"], (".png", ".jpg")) == tmp_path / "cat" / "1.jpg"
    assert find_image([tmp_path / "cat" / "2", tmp_path / "cat_2"], (".png",)) == tmp_path / "cat_2.png"
    assert find_image([tmp_path / "cat" / "3"], (".png", ".jpg")) is None
    assert find_by_stem(tmp_path, "a.jpg") == tmp_path / "a.webp"  # same stem, other extension
    assert find_by_stem(tmp_path, "zzz.jpg") is None


def test_resize_back_and_save(tmp_path):
    src = tmp_path / "ir.png"
    Image.new("RGB", (30, 20), "white").save(src)
    out = resize_back_and_save(Image.new("RGB", (64, 64), (0, 200, 0)), src, tmp_path)
    assert out == tmp_path / "ir.jpg" and not (tmp_path / "ir.jpg.tmp").exists()
    with Image.open(out) as im:
        assert im.size == (30, 20) and im.format == "JPEG" and im.getpixel((15, 10))[1] > 180


def test_client_retries_then_returns_last_response(tmp_path):
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req.url.path)
        return httpx.Response(503 if len(calls) < 3 else 200, json={"data": [{"b64_json": base64.b64encode(_png()).decode()}]})

    api = OpenAIImagesClient("http://img.test/v1/", max_retries=2, backoff_s=0.0)
    api.http = httpx.Client(transport=httpx.MockTransport(handler))
    r = api.post("images/generations", json={})
    assert r.status_code == 200 and calls == ["/v1/images/generations"] * 3
    assert api.decode(r).getpixel((1, 1)) == (10, 20, 30)
    calls.clear()
    api.max_retries = 1
    r = api.post("images/generations", json={})  # 503 twice: the last response comes back
    assert r.status_code == 503 and len(calls) == 2


def test_client_transport_error_and_url_replies():
    def down(req):
        raise httpx.ConnectError("refused", request=req)

    api = OpenAIImagesClient("http://img.test/v1", max_retries=1, backoff_s=0.0)
    api.http = httpx.Client(transport=httpx.MockTransport(down))
    with pytest.raises(ImageBackendError, match="ConnectError: refused"):
        api.post("images/edits", data={})
    data_url = "data:image/png;base64," + base64.b64encode(_png((1, 2, 3))).decode()

    def serve(req):
        if req.url.path == "/file.png":
            return httpx.Response(200, content=_png((4, 5, 6)))
        return httpx.Response(200, json={"data": [{"url": "http://img.test/file.png"}]})

    api.http = httpx.Client(transport=httpx.MockTransport(serve))
    assert api.decode(api.post("x", json={})).getpixel((0, 0)) == (4, 5, 6)
    with pytest.raises(KeyError):  # an http URL is not fetched when the caller says so (editors)
        api.decode(api.post("x", json={}), fetch_urls=False)
    api.http = httpx.Client(transport=httpx.MockTransport(lambda req: httpx.Response(200, json={"data": [{"url": data_url}]})))
    assert api.decode(api.post("x", json={}), fetch_urls=False).getpixel((0, 0)) == (1, 2, 3)


def test_specs_and_missing_extras(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="unknown editor"):
        make_editor("paint:x")
    with pytest.raises(ConfigError, match="unknown generator"):
        make_generator("paint:x")
    with pytest.raises(ConfigError, match="not a folder"):
        make_generator(f"folder:{tmp_path / 'none'}")
    monkeypatch.setitem(__import__("sys").modules, "diffusers", None)  # as if not installed
    with pytest.raises(MissingExtraError, match=r"pip install 'lensbench\["):
        load_diffusers_pipeline("some/model", kind="DiffusionPipeline", label="--editor diffusers:some/model")
