"""Local GGUF models through llama.cpp (``llamacpp:PATH.gguf``), served by the ``xllamacpp`` wheel.

``--model llamacpp:/models/qwen2.5-0.5b-instruct.gguf`` (or ``--judge-model ...``) starts
llama.cpp's own OpenAI-compatible HTTP server in a child process on ``127.0.0.1`` (a port the
OS picks), waits until it answers ``/health``, and sends every request through
:class:`~lensbench.backends.openai_compat.OpenAIChatBackend` at that address — the same HTTP
client, body layout and failure mapping as any other OpenAI-compatible endpoint.

Server settings ride on the spec as a query string, e.g.
``llamacpp:/m/model.gguf?ctx=8192&parallel=4&threads=8&gpu_layers=0`` (see
:class:`LlamaCppSettings`; the same keys may also come from ``BackendConfig.extra["llamacpp"]``).

Lifetime: the server starts on the first request (so a fully cached run never loads the
model) and stops in :meth:`LlamaCppBackend.aclose`. The child also exits on its own when its
stdin closes, i.e. when this process dies. llama.cpp's log goes to a temporary file
(:attr:`LlamaCppBackend.log_path`; its tail is quoted when the server fails to start).

Install: ``pip install 'lensbench[llamacpp]'``. ``xllamacpp`` is imported only in the child
process, never by the core.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qsl

import aiohttp
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lensbench.core.errors import ConfigError, TransportError
from lensbench.core.types import Completion, Request
from lensbench.backends.base import Backend, BackendConfig
from lensbench.backends.openai_compat import OpenAIChatBackend

__all__ = ["LlamaCppSettings", "LlamaCppBackend", "parse_spec", "gguf_identity"]

INSTALL_HINT = "pip install 'lensbench[llamacpp]'"
_READY_TIMEOUT_S = 600.0


class LlamaCppSettings(BaseModel):
    """llama.cpp server settings (spec query keys).

    ``ctx``: total context in tokens shared by all slots (KV cache is unified, so one long
    request may use all of it); ``parallel``: server slots (requests decoded together);
    ``threads``: CPU threads (None = llama.cpp's default, the core count); ``gpu_layers``:
    layers offloaded to a GPU build (None = llama.cpp's default, -1 = all, 0 = CPU only);
    ``startup_timeout_s``: seconds to wait for the model to load; ``log``: file that keeps
    llama.cpp's log (default: a temporary file removed by ``aclose``).
    """

    model_config = ConfigDict(extra="forbid")

    ctx: int = Field(default=8192, ge=256, description="total context tokens (shared by the slots)")
    parallel: int = Field(default=2, ge=1, le=256, description="parallel server slots")
    threads: Optional[int] = Field(default=None, ge=1, description="CPU threads (default: llama.cpp's)")
    gpu_layers: Optional[int] = Field(default=None, ge=-1, description="layers on GPU (-1 all, 0 none)")
    startup_timeout_s: float = Field(default=_READY_TIMEOUT_S, gt=0, description="model load timeout (s)")
    log: Optional[str] = Field(default=None, description="keep llama.cpp's log in this file (default: a temp file, "
                                                         "deleted on close)")


def parse_spec(arg: str, extra: dict[str, Any] | None = None) -> tuple[Path, LlamaCppSettings]:
    """Split ``PATH.gguf[?key=value&...]`` into the file path and validated settings.

    ``extra`` (``BackendConfig.extra["llamacpp"]``) gives defaults the query overrides.

    Raises:
        ConfigError: empty path, unknown key or bad value (the message names the spec).
    """
    if not arg or not arg.strip():
        raise ConfigError("--model llamacpp:PATH.gguf needs the path of a GGUF file after 'llamacpp:'")
    path_s, sep, query = arg.partition("?")
    if not path_s.strip():
        raise ConfigError(f"llamacpp:{arg}: no GGUF path before '?'")
    values: dict[str, Any] = dict(extra or {})
    if sep:
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
        except ValueError:
            raise ConfigError(f"llamacpp:{arg}: cannot read settings {query!r}; use ?key=value&key=value") from None
        values.update(pairs)
    try:
        settings = LlamaCppSettings(**values)
    except ValidationError as exc:
        bad = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        known = ", ".join(LlamaCppSettings.model_fields)
        raise ConfigError(f"llamacpp:{arg}: bad server setting ({bad}); known keys: {known}") from None
    return Path(path_s).expanduser(), settings


def gguf_identity(path: Path) -> str:
    """``NAME|bytes=SIZE|head=SHA`` — file name, size in bytes and the sha256 (first 16 hex
    digits) of its first MiB: cheap, and changes with any re-quantisation or different model.

    Raises:
        ConfigError: the path does not exist, is not a file, or does not start with the GGUF magic.
    """
    if not path.exists():
        raise ConfigError(f"llamacpp: GGUF model file {path} does not exist")
    if not path.is_file():
        raise ConfigError(f"llamacpp: {path} is not a file (give the path of a .gguf model file)")
    with path.open("rb") as fh:
        head = fh.read(1 << 20)
    if head[:4] != b"GGUF":
        raise ConfigError(f"llamacpp: {path} is not a GGUF file (it does not start with the 'GGUF' magic bytes)")
    return f"{path.name}|bytes={path.stat().st_size}|head={hashlib.sha256(head).hexdigest()[:16]}"


def _stop_process(proc: subprocess.Popen, wait_s: float = 10.0) -> None:
    """Close the child's stdin (its signal to exit), then terminate / kill if it lingers."""
    if proc.poll() is not None:
        return
    try:
        if proc.stdin and not proc.stdin.closed:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=wait_s)
        return
    except subprocess.TimeoutExpired:
        pass
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def _log_tail(path: Path | None, n: int = 15) -> str:
    if path is None or not path.exists():
        return ""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join(lines[-n:])


class LlamaCppBackend(Backend):
    """A GGUF model behind a private llama.cpp server (see the module docstring).

    ``fingerprint``: ``llamacpp:`` + :func:`gguf_identity` + the image encoding — never the port
    or the server settings that do not change replies. Requests, replies and failures are those
    of :class:`OpenAIChatBackend`; a server that cannot start gives a non-retryable
    :class:`TransportError` carrying the tail of llama.cpp's log.

    Raises (constructor): ConfigError for a bad spec, a missing / non-GGUF file, or xllamacpp
    not installed.
    """

    def __init__(self, arg: str, config: BackendConfig):
        self.path, self.settings = parse_spec(arg, config.extra.get("llamacpp"))
        identity = gguf_identity(self.path)
        if importlib.util.find_spec("xllamacpp") is None:
            raise ConfigError(f"llamacpp:{arg}: the llama.cpp backend needs the 'xllamacpp' package: {INSTALL_HINT}")
        self.path = self.path.resolve()
        self.config = config
        # the delegate carries the model name used in the body; the base URL is set on start
        self._client = OpenAIChatBackend(self.path.stem, config.model_copy(update={"base_urls": ["http://127.0.0.1/v1"]}))
        self.fingerprint = f"llamacpp:{identity}|img={self._client.media.fingerprint}"
        self.display_name = self.path.stem
        self.base_url: str | None = None
        self.log_path: Path | None = None
        self._proc: subprocess.Popen | None = None
        self._finalizer: weakref.finalize | None = None
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self._failed: str | None = None
        self._tmpdir: Path | None = None

    # ------------------------------------------------------------------ server
    #: how the child is run (after ``sys.executable``); it gets one JSON argument (settings,
    #: ``model``, ``ready_file``) and must write its ``http://HOST:PORT`` address to ``ready_file``
    #: once it serves, then run until its stdin closes.
    child_args: tuple[str, ...] = ("-m", "lensbench.backends.llamacpp")

    def _command(self, ready_file: Path) -> list[str]:
        cfg = self.settings.model_dump() | {"model": str(self.path), "ready_file": str(ready_file)}
        return [sys.executable, *self.child_args, json.dumps(cfg)]

    def _spawn(self) -> tuple[subprocess.Popen, Path]:
        self._tmpdir = Path(tempfile.mkdtemp(prefix="lensbench-llamacpp-"))
        self.log_path = Path(self.settings.log).expanduser() if self.settings.log else self._tmpdir / "server.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        ready = self._tmpdir / "address"
        with self.log_path.open("ab") as logf:
            proc = subprocess.Popen(self._command(ready), stdin=subprocess.PIPE, stdout=logf, stderr=logf,
                                    close_fds=True)
        self._finalizer = weakref.finalize(self, _stop_process, proc, 2.0)
        return proc, ready

    async def _health(self, base: str) -> bool:
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as s:
                async with s.get(base + "/health") as r:
                    return r.status == 200
        except (aiohttp.ClientError, asyncio.TimeoutError):
            return False

    async def start(self) -> str:
        """Start the server (once) and return its base URL (``http://127.0.0.1:PORT/v1``).

        Raises:
            TransportError (not retryable): the child exited or did not become healthy within
            ``startup_timeout_s``; the message quotes the end of llama.cpp's log.
        """
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        async with self._lock:
            if self._failed:
                raise TransportError(self._failed, retryable=False)
            if self.base_url and self._proc is not None and self._proc.poll() is None:
                return self.base_url
            if self._proc is not None:  # it died after starting
                code = self._proc.returncode
                self._proc = None
                self._fail(f"llama.cpp server for {self.path} exited (code {code})")
            proc, ready = self._spawn()
            self._proc = proc
            deadline = time.monotonic() + self.settings.startup_timeout_s
            address = None
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    self._fail(f"llama.cpp server for {self.path} exited during start (code {proc.returncode})")
                if address is None and ready.exists():
                    text = ready.read_text(encoding="utf-8").strip()
                    address = text or None
                if address and await self._health(address):
                    break
                await asyncio.sleep(0.1)
            else:
                await asyncio.to_thread(_stop_process, proc, 2.0)
                self._fail(f"llama.cpp server for {self.path} not ready after {self.settings.startup_timeout_s:g} s")
            self.base_url = address.rstrip("/") + "/v1"
            self._client.set_base_urls([self.base_url])
            return self.base_url

    def _fail(self, message: str) -> None:
        tail = _log_tail(self.log_path)
        self._failed = message + (f"; log {self.log_path} ends:\n{tail}" if tail else "")
        raise TransportError(self._failed, retryable=False)

    # ------------------------------------------------------------------ Backend
    async def generate(self, request: Request) -> Completion:
        """Start the server if needed, then POST through :class:`OpenAIChatBackend`."""
        await self.start()
        return await self._client.generate(request)

    async def aclose(self) -> None:
        """Close the HTTP session and stop the server (waits for it to exit)."""
        await self._client.aclose()
        proc, self._proc = self._proc, None
        self.base_url = None
        if proc is not None:
            await asyncio.to_thread(_stop_process, proc)
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


def make(arg: str, config: BackendConfig) -> Backend:
    return LlamaCppBackend(arg, config)


# ---------------------------------------------------------------------- child process
def _serve(cfg: dict[str, Any]) -> int:
    """Child entry: load the model into xllamacpp's server, publish its address, run until stdin closes."""
    import xllamacpp as xlc  # only here: the core never imports it

    params = xlc.CommonParams()
    params.model.path = cfg["model"]
    params.n_ctx = int(cfg["ctx"])
    params.n_parallel = int(cfg["parallel"])
    params.kv_unified = True
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the OS picks a free port; listening_address reports it
    if cfg.get("threads"):
        params.cpuparams.n_threads = int(cfg["threads"])
        params.cpuparams_batch.n_threads = int(cfg["threads"])
    if cfg.get("gpu_layers") is not None:
        params.n_gpu_layers = int(cfg["gpu_layers"])
    server = xlc.Server(params)
    ready = Path(cfg["ready_file"])
    tmp = ready.with_suffix(".tmp")
    tmp.write_text(server.listening_address, encoding="utf-8")
    tmp.replace(ready)
    try:
        sys.stdin.buffer.read()  # blocks until the parent closes the pipe or dies
    except KeyboardInterrupt:
        pass
    del server  # ~Server stops the HTTP thread and the main loop
    return 0


if __name__ == "__main__":
    sys.exit(_serve(json.loads(sys.argv[1])))
