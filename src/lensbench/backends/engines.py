"""vLLM and SGLang servers launched for you: ``vllm:MODEL_OR_PATH`` and ``sglang:MODEL_OR_PATH``.

``--model vllm:Qwen/Qwen2.5-VL-7B-Instruct?tp=2&dp=4&max_len=32768`` starts ``vllm serve`` (or
``python -m sglang.launch_server`` for ``sglang:``) as a child process on ``127.0.0.1`` and a free
port, waits until ``/health`` answers, sends every request through the ``openai:`` transport, and
stops the server's whole process group on exit, Ctrl-C or error (lifetime:
:mod:`lensbench.backends.launcher`). The server starts on the first request: a fully cached re-run
never loads the model.

Spec options (query string, see :class:`EngineSettings`):

=============  ====================================  ====================================
key            vLLM flag                             SGLang flag
=============  ====================================  ====================================
tp             ``--tensor-parallel-size``            ``--tp-size``
dp             ``--data-parallel-size``              ``--dp-size``
max_len        ``--max-model-len``                   ``--context-length``
dtype          ``--dtype``                           ``--dtype``
gpu_mem        ``--gpu-memory-utilization``          ``--mem-fraction-static``
revision       ``--revision``                        ``--revision``
args           any other flags, verbatim (shell-quoted string, URL-encoded: ``%20`` for spaces)
exe            the command that starts the server (default ``vllm serve`` / ``python -m
               sglang.launch_server``; env ``LENSBENCH_VLLM_CMD`` / ``LENSBENCH_SGLANG_CMD``)
startup_timeout_s, log   seconds to wait for the model to load; keep the server log in this file
=============  ====================================  ====================================

Flags as in vLLM's ``vllm serve --help`` and SGLang's server-arguments page
(docs.sglang.io/advanced_features/server_arguments). The fingerprint covers the model (a local
folder by its file names and sizes; a hub id with its ``revision``), ``dtype``, ``max_len`` and
``args`` — everything that can change replies — never ports, memory fractions or parallel sizes.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lensbench.backends.base import Backend, BackendConfig
from lensbench.backends.launcher import LaunchedServerBackend, ServerLaunch, free_port
from lensbench.core.errors import ConfigError

__all__ = ["EngineSettings", "EngineBackend", "ENGINES", "model_identity", "make_vllm", "make_sglang"]


class EngineSettings(BaseModel):
    """Server settings of a launched engine (spec query keys; see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    tp: int = Field(default=1, ge=1, description="tensor parallel size (GPUs per replica)")
    dp: int = Field(default=1, ge=1, description="data parallel size (model replicas)")
    max_len: Optional[int] = Field(default=None, ge=16, description="max model length in tokens (prompt + reply)")
    dtype: Optional[str] = Field(default=None, description="weights/activations dtype (auto, bfloat16, float16 ...)")
    gpu_mem: Optional[float] = Field(default=None, gt=0, le=1, description="fraction of GPU memory for the engine")
    revision: Optional[str] = Field(default=None, description="hub revision (branch, tag or commit)")
    args: str = Field(default="", description="other server flags, verbatim (shell-quoted)")
    exe: Optional[str] = Field(default=None, description="command that starts the server")
    startup_timeout_s: float = Field(default=1800.0, gt=0, description="model load timeout (s)")
    log: Optional[str] = Field(default=None, description="keep the server log in this file")


#: per engine: default command, env variable overriding it, flag names, and the python module to check.
ENGINES: dict[str, dict[str, Any]] = {
    "vllm": {"cmd": ["vllm", "serve"], "env": "LENSBENCH_VLLM_CMD", "model_flag": None, "install": "pip install vllm",
             "flags": {"tp": "--tensor-parallel-size", "dp": "--data-parallel-size", "max_len": "--max-model-len",
                       "dtype": "--dtype", "gpu_mem": "--gpu-memory-utilization", "revision": "--revision"}},
    "sglang": {"cmd": [sys.executable, "-m", "sglang.launch_server"], "env": "LENSBENCH_SGLANG_CMD",
               "model_flag": "--model-path", "install": "pip install 'sglang[all]'",
               "flags": {"tp": "--tp-size", "dp": "--dp-size", "max_len": "--context-length", "dtype": "--dtype",
                         "gpu_mem": "--mem-fraction-static", "revision": "--revision"}},
}


def parse_spec(engine: str, arg: str) -> tuple[str, EngineSettings]:
    """Split ``MODEL[?key=value&...]`` into the model (hub id or path) and validated settings.

    Raises:
        ConfigError: no model, unreadable query, unknown key or bad value (names the spec and the known keys).
    """
    model, sep, query = (arg or "").partition("?")
    if not model.strip():
        raise ConfigError(f"--model {engine}:MODEL needs a hub model id or a local model folder after '{engine}:'")
    values: dict[str, Any] = {}
    if sep:
        try:
            values = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=True))
        except ValueError:
            raise ConfigError(f"{engine}:{arg}: cannot read settings {query!r}; use ?key=value&key=value") from None
    try:
        settings = EngineSettings(**values)
    except ValidationError as exc:
        bad = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"{engine}:{arg}: bad server setting ({bad}); known keys: "
                          f"{', '.join(EngineSettings.model_fields)}") from None
    try:
        shlex.split(settings.args)
    except ValueError as exc:
        raise ConfigError(f"{engine}:{arg}: args={settings.args!r} is not a valid shell-quoted string ({exc})") from None
    return model.strip(), settings


def model_identity(model: str, revision: str | None) -> str:
    """``NAME|files=SHA16`` for a local folder (file names + sizes, so a re-download or other
    checkpoint changes it; config files by content) or ``HUB_ID@REVISION`` (``@default`` when none)."""
    p = Path(model).expanduser()
    if p.exists():
        h = hashlib.sha256()
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file())
        for f in files:
            h.update(f"{f.relative_to(p) if f != p else f.name}:{f.stat().st_size}\n".encode())
            if f.suffix == ".json" and f.stat().st_size < (1 << 20):
                h.update(f.read_bytes())
        return f"{p.resolve().name}|files={h.hexdigest()[:16]}"
    return f"{model}@{revision or 'default'}"


class EngineBackend(LaunchedServerBackend):
    """A model served by a launched vLLM or SGLang server (see the module docstring).

    Raises (constructor): ConfigError for a bad spec or an engine command that is not installed.
    """

    def __init__(self, engine: str, arg: str, config: BackendConfig):
        self.engine = engine
        self.info = ENGINES[engine]
        self.model, self.settings = parse_spec(engine, arg)
        self.command_prefix = self._command_prefix()
        local = Path(self.model).expanduser()
        served = str(local.resolve()) if local.exists() else self.model
        self.served_model = served
        super().__init__(served, config, f"{engine} server for {self.model}", self.settings.log)
        s = self.settings
        outputs = [f"dtype={s.dtype or 'auto'}", f"max_len={s.max_len or 'model'}"] + ([f"args={s.args}"] if s.args else [])
        self.fingerprint = (f"{engine}:{model_identity(self.model, s.revision)}|{'|'.join(outputs)}"
                            f"|img={self._client.media.fingerprint}")
        self.display_name = Path(self.model).name or self.model

    def _command_prefix(self) -> list[str]:
        raw = self.settings.exe or os.environ.get(self.info["env"])
        cmd = shlex.split(raw) if raw else list(self.info["cmd"])
        if not cmd or (shutil.which(cmd[0]) is None and not Path(cmd[0]).is_file()):
            raise ConfigError(f"{self.engine}: cannot find {cmd[0] if cmd else '(empty command)'!r} to start the server: "
                              f"{self.info['install']}, or point exe= / ${self.info['env']} at the server command")
        if not raw and self.engine == "sglang":
            import importlib.util
            if importlib.util.find_spec("sglang") is None:
                raise ConfigError(f"sglang: the 'sglang' package is not installed in {sys.executable}: "
                                  f"{self.info['install']}, or point exe= / ${self.info['env']} at the server command")
        return cmd

    def server_args(self, port: int) -> list[str]:
        """The full command line for a server on ``127.0.0.1:port``."""
        s, flags = self.settings, self.info["flags"]
        argv = list(self.command_prefix)
        argv += [self.info["model_flag"], self.served_model] if self.info["model_flag"] else [self.served_model]
        argv += ["--host", "127.0.0.1", "--port", str(port)]
        for key, flag in flags.items():
            v = getattr(s, key)
            if v is not None and not (key in ("tp", "dp") and v == 1):
                argv += [flag, str(v)]
        return argv + shlex.split(s.args)

    def launch(self, tmpdir: Path) -> ServerLaunch:
        """``vllm serve MODEL ...`` / ``python -m sglang.launch_server --model-path MODEL ...`` on a free port."""
        port = free_port()
        address = f"http://127.0.0.1:{port}"
        return ServerLaunch(self.server_args(port), lambda: address, health=("/health", "/v1/models"),
                            timeout_s=self.settings.startup_timeout_s)

    def describe(self) -> str:
        """For the start-up line: the engine, the model and where it serves (once started)."""
        return f"{self.engine}:{self.model} ({self.base_url or 'server starts on the first request'})"


def make_vllm(arg: str, config: BackendConfig) -> Backend:
    return EngineBackend("vllm", arg, config)


def make_sglang(arg: str, config: BackendConfig) -> Backend:
    return EngineBackend("sglang", arg, config)
