"""A request's timeout grows with its body (issue 30, part 9): a 1 MB image request to a slow server is not
given up on and bought again, while a text request under the same --timeout-s still times out."""

from __future__ import annotations

import asyncio
import io
import random

import pytest

from lensbench.backends.base import TIMEOUT_S_PER_MB, BackendConfig, request_timeout
from lensbench.backends.openai_compat import OpenAIChatBackend
from lensbench.core.errors import TransportError
from lensbench.core.types import GenParams, ImagePart, Message, Request, TextPart
from lensbench.testing.server import FakeOpenAIServer


def test_allowance_per_mb_rounded_to_a_tenth():
    assert TIMEOUT_S_PER_MB == 10.0
    assert request_timeout(120.0, 1_330_000) == pytest.approx(133.3)
    assert request_timeout(0.3, 200) == 0.3  # a text request: 0.002 s rounds away, the message keeps "0.3s"
    assert request_timeout(5.0, 0) == 5.0 and request_timeout(5.0, -1) == 5.0
    assert request_timeout(5.0, 3_200_000) == pytest.approx(37.0)  # 32 frames of 100 kB


def big_jpeg(path, side: int = 700) -> int:
    from PIL import Image

    img = Image.frombytes("RGB", (side, side), random.Random(0).randbytes(side * side * 3))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=95)
    path.write_bytes(buf.getvalue())
    return len(buf.getvalue())


@pytest.mark.parametrize("client", ["lean", "aiohttp"])
def test_a_slow_image_request_is_waited_for_not_bought_twice(tmp_path, monkeypatch, client):
    monkeypatch.setenv("LENSBENCH_HTTP_CLIENT", client)
    size = big_jpeg(tmp_path / "big.jpg")
    assert size > 500_000  # ~0.9 MB as base64: an allowance of ~9 s over the 0.4 s timeout
    image = Request(id="img", messages=[Message(role="user", parts=[ImagePart(path=str(tmp_path / "big.jpg")),
                                                                     TextPart(text="Is it warm?")])],
                    params=GenParams(temperature=0))
    text = Request(id="txt", messages=[Message(role="user", parts=[TextPart(text="Is it warm?")])],
                   params=GenParams(temperature=0))

    async def ask(b: OpenAIChatBackend, r: Request):
        try:
            return await b.generate(r)
        finally:
            await b.aclose()

    with FakeOpenAIServer(lambda body: "Yes", latency=1.0) as srv:
        b = OpenAIChatBackend("fake", BackendConfig(base_urls=[srv.url], timeout_s=0.4))
        assert asyncio.run(ask(b, image)).text == "Yes"
        assert sum(srv.answered.values()) == 1 and sum(srv.received.values()) == 1
        b = OpenAIChatBackend("fake", BackendConfig(base_urls=[srv.url], timeout_s=0.4))
        with pytest.raises(TransportError, match=r"timeout after 0\.4s") as ei:
            asyncio.run(ask(b, text))
        assert ei.value.kind == "timeout"
