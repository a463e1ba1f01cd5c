"""Issue 32.9: an unknown host is reported as one (not as "connection refused"), by both HTTP clients."""

from __future__ import annotations

import asyncio

import pytest

from lensbench.backends.openai_compat import OpenAIChatBackend
from lensbench.backends.base import BackendConfig
from lensbench.core.errors import TransportError
from lensbench.core.types import Message, Request


@pytest.mark.parametrize("client", ["lean", "aiohttp"])
def test_an_unknown_host_says_so(monkeypatch, client):
    monkeypatch.setenv("LENSBENCH_HTTP_CLIENT", client)
    backend = OpenAIChatBackend("m", BackendConfig(base_urls=["http://no-such-host.invalid:8000/v1"], timeout_s=10))

    async def go():
        try:
            return await backend.generate(Request(id="r", messages=(Message.user("hi"),)))
        finally:
            await backend.aclose()

    with pytest.raises(TransportError) as ei:
        asyncio.run(go())
    assert ei.value.kind == "refused" and "unknown host: cannot resolve the host of" in str(ei.value)
    assert "connection refused" not in str(ei.value)
