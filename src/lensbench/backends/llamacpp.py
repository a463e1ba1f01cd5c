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
stdin closes or this process dies (:mod:`lensbench.backends.launcher`). llama.cpp's log goes to a temporary file
(``log_path`` of :class:`LlamaCppBackend`; its tail is quoted when the server fails to start).

Install: ``pip install 'lensbench[llamacpp]'``. ``xllamacpp`` is imported only in the child
process, never by the core.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lensbench.core.errors import ConfigError
from lensbench.backends.base import Backend, BackendConfig
from lensbench.backends.launcher import LaunchedServerBackend, ServerLaunch

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


class LlamaCppBackend(LaunchedServerBackend):
    """A GGUF model behind a private llama.cpp server (see the module docstring).

    ``fingerprint``: ``llamacpp:`` + :func:`gguf_identity` + the image encoding — never the port
    or the server settings that do not change replies. Requests, replies and failures are those
    of :class:`~lensbench.backends.openai_compat.OpenAIChatBackend`; a server that cannot start gives a non-retryable
    :class:`TransportError` carrying the tail of llama.cpp's log (start/stop:
    :class:`~lensbench.backends.launcher.LaunchedServerBackend`).

    Raises (constructor): ConfigError for a bad spec, a missing / non-GGUF file, or xllamacpp
    not installed.
    """

    def __init__(self, arg: str, config: BackendConfig):
        self.path, self.settings = parse_spec(arg, config.extra.get("llamacpp"))
        identity = gguf_identity(self.path)
        if importlib.util.find_spec("xllamacpp") is None:
            raise ConfigError(f"llamacpp:{arg}: the llama.cpp backend needs the 'xllamacpp' package: {INSTALL_HINT}")
        self.path = self.path.resolve()
        # the delegate carries the model name used in the body; the base URL is set on start
        super().__init__(self.path.stem, config, f"llama.cpp server for {self.path}", self.settings.log)
        self.fingerprint = f"llamacpp:{identity}|img={self._client.media.fingerprint}"
        self.display_name = self.path.stem

    #: how the child is run (after ``sys.executable``); it gets one JSON argument (settings,
    #: ``model``, ``ready_file``) and must write its ``http://HOST:PORT`` address to ``ready_file``
    #: once it serves, then run until its stdin closes.
    child_args: tuple[str, ...] = ("-m", "lensbench.backends.llamacpp")

    def launch(self, tmpdir: Path) -> ServerLaunch:
        """``python -m lensbench.backends.llamacpp JSON``; the child publishes its address in a file."""
        ready = tmpdir / "address"
        cfg = self.settings.model_dump() | {"model": str(self.path), "ready_file": str(ready)}

        def address() -> str | None:
            return (ready.read_text(encoding="utf-8").strip() or None) if ready.exists() else None

        return ServerLaunch([sys.executable, *self.child_args, json.dumps(cfg)], address, health=("/health",),
                            timeout_s=self.settings.startup_timeout_s, stdin_pipe=True)


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
