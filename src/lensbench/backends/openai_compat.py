"""OpenAI-compatible chat completions over HTTP (vLLM, SGLang, LMDeploy, llama.cpp server,
Ollama, OpenAI, Gemini's and other APIs' compatible endpoints).

Images are sent as base64 data URLs in the order the protocol gives; requests are spread
round-robin over several ``--base-url`` endpoints. Every failure becomes a
:class:`~lensbench.errors.TransportError`: timeouts, refused/dropped connections, HTTP 429
(with Retry-After) and 5xx and malformed bodies are retryable; other 4xx are not.

HTTP goes through aiohttp: at high concurrency httpx's connection pool spent most of the CPU
in pool bookkeeping (``benchmarks/throughput.py`` measured 0.18 of the ideal rate at C = 64,
L = 200 ms with httpx, against >= 0.95 with aiohttp).
"""

from __future__ import annotations

import itertools
import json
import os
from email.utils import parsedate_to_datetime
import time

import asyncio

import aiohttp

from lensbench.core.errors import ConfigError, TransportError
from lensbench.media.images import ImageEncoder
from lensbench.core.types import Completion, ImagePart, Request, TextPart
from lensbench.backends.base import Backend, BackendConfig

__all__ = ["OpenAIChatBackend", "parse_retry_after"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date); None if absent/bad."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class OpenAIChatBackend(Backend):
    """Chat-completions client for model ``model`` at one or more base URLs (``.../v1``)."""

    def __init__(self, model: str, config: BackendConfig):
        if not model:
            raise ConfigError("--model openai:MODEL needs a model name after 'openai:'")
        self.model = model
        self.base_urls = [u.rstrip("/") for u in (config.base_urls or [DEFAULT_BASE_URL])]
        self._rr = itertools.cycle(range(len(self.base_urls)))
        self.api_key = os.environ.get(config.api_key_env, "")
        self.encoder = ImageEncoder(config.image_format, config.image_max_side)
        self.timeout_s = config.timeout_s
        self.fingerprint = f"openai:{model}|img={self.encoder.fingerprint}"
        self.display_name = model
        self._headers = {"Content-Type": "application/json"}
        if self.api_key:
            self._headers["Authorization"] = f"Bearer {self.api_key}"
        self._session: aiohttp.ClientSession | None = None

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers, timeout=aiohttp.ClientTimeout(total=self.timeout_s),
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300))
        return self._session

    def body(self, request: Request) -> dict:
        """The JSON body for ``request`` (messages with data-URL images, params, extra_body merged)."""
        messages = []
        for m in request.messages:
            content = []
            for p in m.parts:
                if isinstance(p, TextPart):
                    content.append({"type": "text", "text": p.text})
                elif isinstance(p, ImagePart):
                    content.append({"type": "image_url", "image_url": {"url": self.encoder.data_url(p.path, p.sha256)}})
            if all(c["type"] == "text" for c in content) and m.role != "user":
                messages.append({"role": m.role, "content": "\n".join(c["text"] for c in content)})
            else:
                messages.append({"role": m.role, "content": content})
        body: dict = {"model": self.model, "messages": messages}
        p = request.params
        for name in ("temperature", "top_p", "max_tokens", "seed"):
            v = getattr(p, name)
            if v is not None:
                body[name] = v
        body.update(p.extra_body)
        return body

    async def generate(self, request: Request) -> Completion:
        """POST ``/chat/completions``; see the module docstring for the failure mapping."""
        url = self.base_urls[next(self._rr)] + "/chat/completions"
        body = self.body(request)
        try:
            async with self._get_session().post(url, data=json.dumps(body)) as r:
                status = r.status
                raw = await r.read()
                retry_after = r.headers.get("Retry-After")
        except asyncio.TimeoutError:
            raise TransportError(f"timeout after {self.timeout_s:g}s at {url}") from None
        except aiohttp.ClientError as exc:
            raise TransportError(f"connection failed at {url}: {type(exc).__name__}: {exc}") from None
        text_body = raw.decode("utf-8", "replace")
        if status == 429 or status >= 500:
            raise TransportError(f"HTTP {status} from {url}: {text_body[:200]}",
                                 retry_after=parse_retry_after(retry_after))
        if status >= 400:
            raise TransportError(f"HTTP {status} from {url}: {text_body[:500]}", retryable=False)
        try:
            data = json.loads(text_body)
            choice = data["choices"][0]
            msg = choice["message"]
            text = msg.get("content")
            if text is None:
                text = ""
            if not isinstance(text, str):
                raise TypeError(f"content is {type(text).__name__}")
        except (json.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise TransportError(f"malformed response body from {url}: {type(exc).__name__}: {exc}; "
                                 f"body starts {text_body[:120]!r}") from None
        return Completion(text=text, reasoning=msg.get("reasoning_content") or msg.get("reasoning"),
                          finish_reason=choice.get("finish_reason"), usage=data.get("usage") or {},
                          served_model=data.get("model"))

    async def aclose(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()


def make(arg: str, config: BackendConfig) -> Backend:
    return OpenAIChatBackend(arg, config)
