"""OpenAIChatBackend through BOTH HTTP clients (the lean one for http://, aiohttp with
LENSBENCH_HTTP_CLIENT=aiohttp) against the fake server's faults: the same replies, the same failure
mapping, the same request body; and a whole faulty run's report equals a clean one's."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import subprocess
import sys

import pytest

from lensbench.backends.base import BackendConfig
from lensbench.backends.openai_compat import CLIENT_ENV, OpenAIChatBackend, parse_chat_reply
from lensbench.core.errors import ConfigError, TransportError
from lensbench.core.types import GenParams, Message, Request, TextPart
from lensbench.testing.server import FakeOpenAIServer

CLIENTS = ["auto", "aiohttp"]


@pytest.fixture(params=CLIENTS)
def client(request, monkeypatch):
    monkeypatch.setenv(CLIENT_ENV, request.param)
    return request.param


def req(i: int = 0) -> Request:
    return Request(id=f"r{i}", messages=[Message(role="user", parts=[TextPart(text=f"question {i}")])],
                   params=GenParams(temperature=0.0, max_tokens=8))


def _used(b: OpenAIChatBackend) -> str:
    return "aiohttp" if b._session is not None else "lean" if b._lean is not None else "none"


async def _one(b: OpenAIChatBackend, r: Request):
    try:
        return await b.generate(r)
    except TransportError as exc:
        return exc
    finally:
        used = _used(b)
        await b.aclose()
        b.used = used


@pytest.mark.parametrize("fault,kind,words", [
    ("500", "http", "HTTP 500"), ("429", "http", "HTTP 429"), ("timeout", "timeout", "timeout after 0.3s"),
    ("drop", "other", "connection failed"), ("malformed", "malformed", "malformed response body"),
    ("null_content", "empty", "content null"), ("no_choices", "empty", "no choices"),
    ("error_object", "http", "server error object"),
])
def test_faults_map_to_the_same_errors(client, fault, kind, words):
    with FakeOpenAIServer(fault_plan=lambda k, a: fault, stall_s=2.0, retry_after=0.25) as srv:
        b = OpenAIChatBackend("m", BackendConfig(base_urls=[srv.url], timeout_s=0.3))
        e = asyncio.run(_one(b, req()))
    assert isinstance(e, TransportError), e
    assert e.retryable and e.kind == kind and words in str(e) and e.url == srv.url, str(e)
    assert b.used == ("lean" if client == "auto" else "aiohttp")
    if fault == "429":
        assert e.retry_after == 0.25


def test_replies_and_bodies_are_the_same_through_both_clients(monkeypatch):
    got = {}
    for name in CLIENTS:
        monkeypatch.setenv(CLIENT_ENV, name)
        with FakeOpenAIServer(lambda body: "Yes " + body["messages"][0]["content"][0]["text"]) as srv:
            b = OpenAIChatBackend("m", BackendConfig(base_urls=[srv.url]))

            async def main():
                outs = [await b.generate(req(i)) for i in range(3)]
                await b.aclose()
                return outs

            outs = asyncio.run(main())
            got[name] = ([o.text for o in outs], [o.usage for o in outs], srv.bodies)
    assert got["auto"] == got["aiohttp"]
    assert got["auto"][0] == ["Yes question 0", "Yes question 1", "Yes question 2"]


def test_authorization_headers_are_the_same(monkeypatch):
    """Basic auth from URL credentials and the bearer key: the lean client sends what aiohttp sends."""
    seen = {}
    for name in CLIENTS:
        monkeypatch.setenv(CLIENT_ENV, name)
        srv = FakeOpenAIServer()
        app = srv.app()

        async def capture(request, handler=None):
            seen.setdefault(name, []).append(request.headers.get("Authorization"))
        app.on_response_prepare.append(capture)
        srv.app = lambda app=app: app
        with srv:
            monkeypatch.delenv("OPENAI_API_KEY", raising=False)
            cred_url = srv.url.replace("http://", "http://bob:pa%20ss@")
            b = OpenAIChatBackend("m", BackendConfig(base_urls=[cred_url]))
            asyncio.run(_one(b, req()))
            monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
            b = OpenAIChatBackend("m", BackendConfig(base_urls=[cred_url]))
            asyncio.run(_one(b, req()))
    want = ["Basic " + base64.b64encode(b"bob:pa%20ss").decode(), "Bearer sk-test"]
    assert seen == {"auto": want, "aiohttp": want}


def test_bad_switch_value_is_a_config_error(monkeypatch):
    monkeypatch.setenv(CLIENT_ENV, "curl")
    with pytest.raises(ConfigError):
        OpenAIChatBackend("m", BackendConfig(base_urls=["http://127.0.0.1:1/v1"]))


def test_redirect_is_not_followed_and_not_retryable():
    with pytest.raises(TransportError) as ei:
        parse_chat_reply(302, "", None, "http://h/v1")
    assert not ei.value.retryable and "HTTP 302" in str(ei.value) and "redirect" in str(ei.value)


def test_run_path_does_not_import_aiohttp():
    code = ("import sys, lensbench.cli.main, lensbench.backends.openai_compat, lensbench.runtime.runner; "
            "print('aiohttp' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def _oracle(body: dict) -> str:
    text = [c["text"] for c in body["messages"][0]["content"] if c["type"] == "text"][0]
    return ["Yes", "No", "The answer is no."][hashlib.sha256(text.encode()).digest()[0] % 3]


def _faulty(key: str, attempt: int):
    kind = int(key[:8], 16) % 6
    if kind == 5 or attempt > 2:
        return None
    return ["500", "429", "timeout", "drop", "malformed"][(kind + attempt - 1) % 5]


def test_faulty_run_equals_clean_run(client, rgbth_gen, tmp_path):
    from lensbench.benchmarks.rgbth.benchmark import RGBThBench
    from lensbench.runtime.runner import RunSettings, run_benchmark

    def settings(url, out, **kw):
        return RunSettings(model="openai:fake-vlm", base_url=[url], out=out, data_dir=rgbth_gen, limit=8,
                           image_max_side=64, progress=False, **kw)

    with FakeOpenAIServer(_oracle) as clean:
        ref = run_benchmark(RGBThBench(), settings(clean.url, tmp_path / "clean"))
    with FakeOpenAIServer(_oracle, fault_plan=_faulty, stall_s=2.0, retry_after=0.05) as srv:
        res = run_benchmark(RGBThBench(), settings(srv.url, tmp_path / "faulty", timeout_s=0.5, concurrency=8,
                                                   max_retries=6))
        assert set(srv.faults) == {"500", "429", "timeout", "drop", "malformed"}
        assert max(srv.answered.values()) == 1
    assert res.counts["n_error"] == 0 and res.metrics == ref.metrics and res.counts == ref.counts
    manifest = json.loads((tmp_path / "faulty" / "run.json").read_text())
    assert manifest["engine"]["retries"] >= sum(srv.faults.values())
