"""The ``llamacpp:PATH.gguf`` backend.

Without a model: spec / file checks, the fingerprint (recomputed here with hashlib), and the
whole server lifecycle (start, readiness, delegation to the OpenAI-compatible client, stop,
start failure) with a stand-in child process that serves an OpenAI-compatible fake in place
of llama.cpp. With ``LENSBENCH_GGUF=/path/model.gguf`` and xllamacpp installed, one real
Fig. 11 parser request goes to the real model.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
import socket
import sys
import textwrap
from pathlib import Path

import pytest

from lensbench.backends import llamacpp as lc
from lensbench.backends.base import BackendConfig
from lensbench.backends.providers import PROVIDERS as BACKENDS, make_backend
from lensbench.benchmarks.ifbench.parse import parse_parser_reply
from lensbench.benchmarks.ifbench.prompts import parser_prompt
from lensbench.core.errors import ConfigError, TransportError
from lensbench.core.types import GenParams, Message, Request


def fake_gguf(path: Path, n: int = (1 << 20) + 4096, seed: int = 0) -> Path:
    """A file with the GGUF magic and ``n`` bytes in all (content depends on ``seed``)."""
    body = hashlib.sha256(str(seed).encode()).digest() * (n // 32 + 1)
    path.write_bytes((b"GGUF" + body)[:n])
    return path


def parser_request(reply: str, rid: str = "q/en/r0/parser") -> Request:
    return Request(id=rid, messages=(Message.user(parser_prompt(reply)),),
                   params=GenParams(temperature=0.0, extra_body={"chat_template_kwargs": {"enable_thinking": False}}),
                   role="judge")


# ------------------------------------------------------------------ spec and file checks
def test_registered_and_core_does_not_import_xllamacpp():
    make_backend("random")  # loads the built-in backends
    assert "llamacpp" in BACKENDS
    assert "xllamacpp" not in sys.modules


@pytest.mark.parametrize("spec", ["llamacpp", "llamacpp:", "llamacpp:  ", "llamacpp:?ctx=4096"])
def test_empty_path_is_a_config_error(spec):
    with pytest.raises(ConfigError, match="GGUF"):
        make_backend(spec)


def test_missing_file_names_the_path(tmp_path):
    p = tmp_path / "nope" / "model.gguf"
    with pytest.raises(ConfigError, match=str(p).replace(".", r"\.") + " does not exist"):
        make_backend(f"llamacpp:{p}")


def test_directory_and_non_gguf_file(tmp_path):
    with pytest.raises(ConfigError, match="not a file"):
        make_backend(f"llamacpp:{tmp_path}")
    txt = tmp_path / "model.gguf"
    txt.write_text("not a model")
    with pytest.raises(ConfigError, match="not a GGUF file"):
        make_backend(f"llamacpp:{txt}")


@pytest.mark.parametrize("query, match", [("ctx=abc", "ctx"), ("parallel=0", "parallel"), ("colour=red", "colour"),
                                          ("ctx", "key=value")])
def test_bad_settings(tmp_path, query, match):
    p = fake_gguf(tmp_path / "m.gguf")
    with pytest.raises(ConfigError, match=match):
        make_backend(f"llamacpp:{p}?{query}")


def test_settings_from_query_and_config_extra(tmp_path):
    p = fake_gguf(tmp_path / "m.gguf")
    path, s = lc.parse_spec(f"{p}?ctx=4096&parallel=3&threads=2&gpu_layers=0", {"parallel": 5, "threads": 7})
    assert path == p and (s.ctx, s.parallel, s.threads, s.gpu_layers) == (4096, 3, 2, 0)
    _, s2 = lc.parse_spec(str(p), {"parallel": 5})
    assert (s2.ctx, s2.parallel, s2.threads) == (8192, 5, None)


def test_missing_xllamacpp_says_how_to_install(tmp_path, monkeypatch):
    p = fake_gguf(tmp_path / "m.gguf")
    real = importlib.util.find_spec
    monkeypatch.setattr(lc.importlib.util, "find_spec", lambda name, *a: None if name == "xllamacpp" else real(name, *a))
    with pytest.raises(ConfigError, match=r"pip install 'lensbench\[llamacpp\]'"):
        make_backend(f"llamacpp:{p}")


# ------------------------------------------------------------------ fingerprint
@pytest.fixture
def have_xllamacpp(monkeypatch):
    """Pretend xllamacpp is installed (the stand-in child never imports it)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(lc.importlib.util, "find_spec",
                        lambda name, *a: object() if name == "xllamacpp" else real(name, *a))


def test_fingerprint_is_file_identity_not_settings(tmp_path, have_xllamacpp):
    p = fake_gguf(tmp_path / "qwen.gguf")
    data = p.read_bytes()
    want = f"qwen.gguf|bytes={len(data)}|head={hashlib.sha256(data[: 1 << 20]).hexdigest()[:16]}"
    b1 = make_backend(f"llamacpp:{p}")
    b2 = make_backend(f"llamacpp:{p}?ctx=2048&parallel=4")
    assert b1.fingerprint == b2.fingerprint
    assert b1.fingerprint.startswith(f"llamacpp:{want}|img=")
    assert b1.display_name == "qwen"
    fake_gguf(p, seed=1)  # same name and size, other content
    assert make_backend(f"llamacpp:{p}").fingerprint != b1.fingerprint
    fake_gguf(p, n=len(data) + 1)  # same first MiB, other size
    assert make_backend(f"llamacpp:{p}").fingerprint != b1.fingerprint


# ------------------------------------------------------------------ lifecycle with a stand-in server
FAKE_CHILD = textwrap.dedent('''
    import json, sys
    from pathlib import Path
    from aiohttp import web
    from lensbench.testing.server import FakeOpenAIServer

    cfg = json.loads(sys.argv[1])
    Path(cfg["ready_file"]).with_name("config.json").write_text(json.dumps(cfg))
    if cfg.get("threads") == 13:
        print("boom: cannot load model", file=sys.stderr, flush=True)
        sys.exit(3)

    class Server(FakeOpenAIServer):
        def app(self):
            a = super().app()
            async def health(request):
                return web.json_response({"status": "ok"})
            a.router.add_get("/health", health)
            return a

    def reply(body):
        text = body["messages"][0]["content"][0]["text"]
        return "C" if "option C" in text else "F"

    with Server(responder=reply) as srv:
        Path(cfg["ready_file"]).write_text(f"http://127.0.0.1:{srv.port}")
        sys.stdin.buffer.read()
''')


@pytest.fixture
def fake_child(tmp_path, monkeypatch, have_xllamacpp):
    script = tmp_path / "fake_llama_server.py"
    script.write_text(FAKE_CHILD)
    monkeypatch.setattr(lc.LlamaCppBackend, "child_args", (str(script),))
    return script


def _port_open(url: str) -> bool:
    host, port = url.split("//")[1].split("/")[0].split(":")
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((host, int(port))) == 0


def test_lifecycle_with_stand_in_server(tmp_path, fake_child):
    p = fake_gguf(tmp_path / "m.gguf")
    log = tmp_path / "logs" / "server.log"
    b = make_backend(f"llamacpp:{p}?ctx=4096&parallel=3&log={log}")
    assert b.base_url is None  # nothing started before the first request

    async def main():
        outs = await asyncio.gather(*(b.generate(parser_request(t, f"r{i}")) for i, t in
                                      enumerate(["The answer is option C because it is warm.", "No idea."] * 3)))
        url = b.base_url
        cfg = json.loads((Path(b._tmpdir) / "config.json").read_text())
        proc = b._proc
        assert _port_open(url)
        await b.aclose()
        return outs, url, cfg, proc

    outs, url, cfg, proc = asyncio.run(main())
    assert [o.text for o in outs] == ["C", "F"] * 3
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert (cfg["model"], cfg["ctx"], cfg["parallel"]) == (str(p.resolve()), 4096, 3)
    assert proc.poll() is not None and not _port_open(url)  # one server for all requests, stopped
    assert log.exists()  # a log path given by the user is kept
    assert b.fingerprint.startswith("llamacpp:m.gguf|")


def test_start_failure_is_a_non_retryable_transport_error(tmp_path, fake_child):
    p = fake_gguf(tmp_path / "m.gguf")
    b = make_backend(f"llamacpp:{p}?threads=13")

    async def main():
        errs = []
        for _ in range(2):
            with pytest.raises(TransportError) as ei:
                await b.generate(parser_request("x"))
            errs.append(ei.value)
        await b.aclose()
        return errs

    e1, e2 = asyncio.run(main())
    assert not e1.retryable and "code 3" in str(e1) and "boom: cannot load model" in str(e1)
    assert str(e2) == str(e1)  # the server is not started again


def test_child_exits_when_parent_pipe_closes(tmp_path, fake_child):
    """Stopping works through stdin EOF alone (what happens when the parent dies)."""
    p = fake_gguf(tmp_path / "m.gguf")
    b = make_backend(f"llamacpp:{p}")

    async def main():
        await b.start()
        proc = b._proc
        proc.stdin.close()
        await asyncio.to_thread(proc.wait, 10)
        rc = proc.returncode
        await b.aclose()
        return rc

    assert asyncio.run(main()) == 0


# ------------------------------------------------------------------ the real model (opt-in)
GGUF = os.environ.get("LENSBENCH_GGUF")


@pytest.mark.skipif(not GGUF or not Path(GGUF).is_file() or importlib.util.find_spec("xllamacpp") is None,
                    reason="set LENSBENCH_GGUF=/path/model.gguf and pip install 'lensbench[llamacpp]'")
def test_real_gguf_answers_the_fig11_parser():
    b = make_backend(f"llamacpp:{GGUF}?ctx=2048&parallel=1", BackendConfig(timeout_s=300))

    async def main():
        try:
            return await b.generate(parser_request("After looking at the heat pattern, the answer is option C, "
                                                   "the person standing near the car."))
        finally:
            await b.aclose()

    c = asyncio.run(main())
    assert parse_parser_reply(c.text) in {"A", "B", "C", "D", "F"}, c.text
    assert c.usage.get("prompt_tokens", 0) > 100  # the whole Fig. 11 prompt went through
