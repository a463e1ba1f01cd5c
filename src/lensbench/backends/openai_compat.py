"""OpenAI-compatible chat completions over HTTP (vLLM, SGLang, LMDeploy, llama.cpp server,
Ollama, OpenAI, Gemini's and other APIs' compatible endpoints).

Images are sent as base64 data URLs in the order the protocol gives; requests are spread
over several ``--base-url`` endpoints by least outstanding requests, an endpoint that keeps
failing set aside for a while (:mod:`lensbench.backends.endpoints`). Every failure becomes a
:class:`~lensbench.core.errors.TransportError`: timeouts, refused/dropped connections, HTTP 429
(with Retry-After) and 5xx and malformed bodies are retryable; other 4xx are not. An empty answer
(content ``""``, docs/protocol.md, general rules) is not a failure: it is asked once more (a provider glitch
answers the second time), then returned as the model's answer ``""`` (:meth:`OpenAIChatBackend.generate`).

HTTP: ``http://`` endpoints (local inference servers) go through the lean keep-alive client
:class:`~lensbench.backends.http_lean.LeanClient` (no aiohttp import: ~0.17 s less start-up, and less
Python per request); ``https://`` ones through aiohttp, imported only then (at high concurrency
httpx's connection pool spent most of the CPU in pool bookkeeping: ``benchmarks/throughput.py``
measured 0.18 of the ideal rate at C = 64, L = 200 ms with httpx, against >= 0.95 with aiohttp).
Both send the body as its pieces and map failures the same way. The environment variable
``LENSBENCH_HTTP_CLIENT`` picks the client: ``auto`` (default; lean for http, aiohttp for https) or
``aiohttp`` (every endpoint through aiohttp; tests use it to keep that path covered); ``lean`` is
accepted and means the same as auto (https:// always needs aiohttp: the lean client has no TLS).
"""

from __future__ import annotations

import json
import os
from email.utils import parsedate_to_datetime
import time

import asyncio

from lensbench.core.errors import ConfigError, TransportError
from lensbench.core.urls import check_url, redact_url, split_credentials
from lensbench.media.transport import MediaPrep
from lensbench.core.types import Completion, ImagePart, Request, TextPart
from lensbench.backends.base import Backend, BackendConfig, request_timeout
from lensbench.backends.endpoints import EndpointPool, connect_failure
from lensbench.backends.http_lean import LeanClient, basic_auth

__all__ = ["OpenAIChatBackend", "parse_retry_after", "parse_chat_reply", "is_empty_answer"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: environment variable choosing the HTTP client (see the module docstring).
CLIENT_ENV = "LENSBENCH_HTTP_CLIENT"


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
        self.api_key = os.environ.get(config.api_key_env, "")
        if not config.base_urls and not self.api_key:
            raise ConfigError(f"openai:{model} with no --base-url targets {DEFAULT_BASE_URL}, but ${config.api_key_env} "
                              "is not set: set it (or --api-key-env NAME), or give --base-url for your own server")
        self.api_key_env = config.api_key_env
        self.http_client = os.environ.get(CLIENT_ENV, "").strip().lower() or "auto"
        if self.http_client not in ("auto", "lean", "aiohttp"):
            raise ConfigError(f"${CLIENT_ENV}={self.http_client!r}: use auto (lean client for http://, aiohttp for "
                              "https://) or aiohttp")
        self.set_base_urls(config.base_urls or [DEFAULT_BASE_URL])
        self.media = MediaPrep(config.image_format, config.image_max_side)
        self.timeout_s = config.timeout_s
        self.fingerprint = f"openai:{model}|img={self.media.fingerprint}"
        self.display_name = model
        self._headers = {"Content-Type": "application/json"}
        if self.api_key:
            self._headers["Authorization"] = f"Bearer {self.api_key}"
        self._session = None  # aiohttp.ClientSession, for https:// endpoints (or all with LENSBENCH_HTTP_CLIENT=aiohttp)
        self._lean: LeanClient | None = None
        self._lean_loop = None

    def set_base_urls(self, urls: list[str]) -> None:
        """Validate and use ``urls`` (credentials in a URL become HTTP basic auth unless a bearer key is set;
        they are never shown: :attr:`shown_urls` is redacted). Raises ConfigError for a bad URL."""
        urls = [check_url(u) for u in urls]
        self.base_urls, self._auth_headers, self._use_lean = [], [], []
        for u in urls:
            plain, cred = split_credentials(u)
            self.base_urls.append(plain)
            hdrs = {}
            if self.api_key:
                hdrs["Authorization"] = f"Bearer {self.api_key}"
            elif cred:
                hdrs["Authorization"] = basic_auth(*cred)  # the header aiohttp.BasicAuth sent
            self._auth_headers.append(hdrs)
            self._use_lean.append(plain.startswith("http://") and self.http_client != "aiohttp")
        self.shown_urls = [redact_url(u) for u in urls]
        self.pool = EndpointPool(self.shown_urls)

    def describe(self) -> str:
        """Where requests go and which key variable is used (no secrets): for the start-up line."""
        key = f"key from ${self.api_key_env}" if self.api_key else f"no key (${self.api_key_env} unset)"
        return f"openai:{self.model} at {', '.join(self.shown_urls)} ({key})"

    def _get_session(self):
        import aiohttp

        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers, timeout=aiohttp.ClientTimeout(total=self.timeout_s),
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300))
        return self._session

    def prefetch(self, request: Request) -> None:
        """Start preparing the request's images in the media pool (the engine calls this ahead of need)."""
        for m in request.messages:
            for p in m.parts:
                if isinstance(p, ImagePart):
                    self.media.prefetch(p.path, p.sha256)

    def _head(self, request: Request) -> bytes:
        body: dict = {"model": self.model}
        p = request.params
        for name in ("temperature", "top_p", "max_tokens", "seed"):
            v = getattr(p, name)
            if v is not None:
                body[name] = v
        body.update(p.extra_body)
        return json.dumps(body).encode()

    @staticmethod
    def _message(role: str, parts: list[bytes], texts: list[str] | None) -> bytes:
        if texts is not None and role != "user":  # text-only non-user messages: plain string content
            return json.dumps({"role": role, "content": "\n".join(texts)}).encode()
        return b'{"role":' + json.dumps(role).encode() + b',"content":[' + b",".join(parts) + b"]}"

    async def body_pieces(self, request: Request) -> list[bytes]:
        """The JSON body for ``request`` as pieces in order: messages from cached content-part fragments
        (images as data URLs, in protocol order), then the model, params and ``extra_body``.

        The pieces are sent as they are (:class:`~lensbench.backends.http_body.PiecesPayload`): the
        image fragments are never copied per request."""
        out = [b'{"messages":[']
        for j, m in enumerate(request.messages):
            if j:
                out.append(b",")
            if m.role != "user" and all(isinstance(p, TextPart) for p in m.parts):
                out.append(self._message(m.role, [], [p.text for p in m.parts]))
                continue
            out.append(b'{"role":' + json.dumps(m.role).encode() + b',"content":[')
            for i, p in enumerate(m.parts):
                if i:
                    out.append(b",")
                if isinstance(p, TextPart):
                    out.append(json.dumps({"type": "text", "text": p.text}).encode())
                else:
                    out.append(await self.media.fragment(p.path, p.sha256))
            out.append(b"]}")
        out.append(b"],")
        out.append(self._head(request)[1:])
        return out

    def body(self, request: Request) -> dict:
        """The JSON body for ``request`` as a dict (tests, debugging; the transport sends :meth:`body_pieces`)."""
        msgs = []
        for m in request.messages:
            parts, texts = [], []
            for p in m.parts:
                if isinstance(p, TextPart):
                    parts.append(json.dumps({"type": "text", "text": p.text}).encode())
                    if texts is not None:
                        texts.append(p.text)
                else:
                    parts.append(self.media.fragment_sync(p.path, p.sha256))
                    texts = None
            msgs.append(self._message(m.role, parts, texts))
        return json.loads(b'{"messages":[' + b",".join(msgs) + b"]," + self._head(request)[1:])

    async def generate(self, request: Request) -> Completion:
        """POST ``/chat/completions``; see the module docstring for the failure mapping.

        An empty answer (:func:`is_empty_answer`) is asked once more at once; if that is empty
        too, or fails, the empty answer is returned: a model that stops at once does so again at
        temperature 0, and its "" is its answer (docs/protocol.md, general rules), never a server failure.
        """
        body = await self.body_pieces(request)
        reply = await self._send(body)
        if is_empty_answer(reply):
            try:
                again = await self._send(body)
            except TransportError:
                return reply
            return again
        return reply

    async def _send(self, body: list[bytes]) -> Completion:
        """One POST of ``body`` to the next endpoint (pool bookkeeping included)."""
        i = self.pool.acquire()
        try:
            reply = await self._post(i, body)
        except TransportError as exc:
            self.pool.release(i, ok=False, counts_as_failure=exc.retryable)
            raise
        except BaseException:  # cancelled: neither served nor failed
            self.pool.release(i, ok=False, counts_as_failure=False)
            self.pool.stats[i].failed -= 1
            raise
        self.pool.release(i, ok=True)
        return reply

    async def _post(self, i: int, pieces: list[bytes]) -> Completion:
        url = self.base_urls[i] + "/chat/completions"
        shown = self.shown_urls[i]
        timeout_s = request_timeout(self.timeout_s, sum(map(len, pieces)))  # larger bodies: more time
        if self._use_lean[i]:
            loop = asyncio.get_running_loop()
            if self._lean is None or self._lean_loop is not loop:
                self._lean, self._lean_loop = LeanClient(), loop
            status, headers, raw = await self._lean.post(url, self._auth_headers[i], pieces, timeout_s, shown)
            return parse_chat_reply(status, raw.decode("utf-8", "replace"), headers.get("retry-after"), shown)
        return await self._post_aiohttp(url, shown, self._auth_headers[i], pieces, timeout_s)

    async def _post_aiohttp(self, url: str, shown: str, auth: dict[str, str], pieces: list[bytes],
                            timeout_s: float) -> Completion:
        import aiohttp

        from lensbench.backends.http_body import PiecesPayload

        body = PiecesPayload(pieces)
        try:
            async with self._get_session().post(url, data=body, headers=auth,
                                                timeout=aiohttp.ClientTimeout(total=timeout_s)) as r:
                status = r.status
                raw = await r.read()
                retry_after = r.headers.get("Retry-After")
        except asyncio.TimeoutError:
            raise TransportError(f"timeout after {timeout_s:g}s at {shown}", kind="timeout", url=shown) from None
        except aiohttp.ClientConnectorError as exc:
            raise connect_failure(shown, exc.os_error if isinstance(exc.os_error, OSError) else exc) from None
        except aiohttp.ClientError as exc:
            raise TransportError(f"connection failed at {shown}: {type(exc).__name__}: {exc}", url=shown) from None
        return parse_chat_reply(status, raw.decode("utf-8", "replace"), retry_after, shown)

    def media_summary(self) -> dict:
        """Which images were passed through and which re-encoded (for the run manifest)."""
        return self.media.summary()

    def endpoint_summary(self) -> dict:
        """How many requests each endpoint answered / failed / was set aside (for the run manifest)."""
        return self.pool.summary()

    async def aclose(self) -> None:
        """Close the HTTP clients and the media pool."""
        if self._session is not None:
            await self._session.close()
        if self._lean is not None:
            lean, self._lean = self._lean, None
            if self._lean_loop is asyncio.get_running_loop():
                await lean.close()
        self.media.close()


def is_empty_answer(c: Completion) -> bool:
    """Whether a completion is an empty answer: content ``""``, no reasoning, not cut by the token limit."""
    return c.text == "" and not c.reasoning and c.finish_reason != "length"


def parse_chat_reply(status: int, text_body: str, retry_after: str | None, url: str) -> Completion:
    """A :class:`Completion` from an HTTP status and chat-completions body, or a TransportError.

    docs/protocol.md, general rules: 429/5xx, a body with an ``error`` object, or a 200 with no answer (content
    null/absent or no choices) AND no reasoning AND a finish_reason other than "length" are server
    failures (retryable; an ``error`` outcome once retries run out). A reply cut by the token limit
    or with reasoning only IS the model's answer (text "" then), and so is an empty string (content
    ``""``): the model stopped at once. Other 4xx and 3xx (redirects are not followed) are not retryable.
    """
    if status == 429 or status >= 500:
        raise TransportError(f"HTTP {status} from {url}: {text_body[:200]}", kind="http", url=url,
                             retry_after=parse_retry_after(retry_after), status=status)
    if status >= 300:  # 4xx; or a redirect, which is not followed (fix the --base-url)
        note = " (redirects are not followed: give the final URL as --base-url)" if status < 400 else ""
        raise TransportError(f"HTTP {status} from {url}{note}: {text_body[:500]}", retryable=False, kind="http",
                             url=url, status=status)
    try:
        data = json.loads(text_body)
        if not isinstance(data, dict):
            raise TypeError(f"body is a JSON {type(data).__name__}")
    except (json.JSONDecodeError, TypeError) as exc:
        raise TransportError(f"malformed response body from {url}: {exc}; body starts {text_body[:120]!r}",
                             kind="malformed", url=url) from None
    if data.get("error"):
        raise TransportError(f"server error object from {url}: {str(data['error'])[:300]}", kind="http", url=url)
    choices = data.get("choices")
    if not choices:
        raise TransportError(f"empty reply from {url}: no choices", kind="empty", url=url)
    choice = choices[0]
    msg = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(msg, dict):
        raise TransportError(f"malformed response body from {url}: choice without a message object",
                             kind="malformed", url=url)
    text = msg.get("content")
    if text is not None and not isinstance(text, str):
        raise TransportError(f"malformed response body from {url}: content is {type(text).__name__}",
                             kind="malformed", url=url)
    reasoning = msg.get("reasoning_content") or msg.get("reasoning") or None
    finish = choice.get("finish_reason")
    if text is None and not reasoning and finish != "length":
        raise TransportError(f"empty reply from {url}: content null, finish_reason {finish!r}", kind="empty",
                             url=url)
    return Completion(text=text or "", reasoning=reasoning, finish_reason=finish, usage=data.get("usage") or {},
                      served_model=data.get("model"))


def make(arg: str, config: BackendConfig) -> Backend:
    return OpenAIChatBackend(arg, config)
