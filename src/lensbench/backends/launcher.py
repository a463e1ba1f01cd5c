"""Serving engines run as child processes: the one place that starts, health-checks and stops them.

Used by ``llamacpp:``, ``vllm:`` and ``sglang:``. A :class:`LaunchedServerBackend` starts its
server on the first request (so a fully cached run never loads the model), waits until it
answers a health URL, then sends every request through
:class:`~lensbench.backends.openai_compat.OpenAIChatBackend` at ``http://127.0.0.1:PORT/v1``.

Lifetime guarantees (Linux):

* the child runs in its own session / process group (``start_new_session``); stopping sends
  SIGTERM to the whole group (engines fork workers), then SIGKILL after a grace period;
* the child gets ``PR_SET_PDEATHSIG`` (SIGTERM) through ``prctl`` in a ``preexec_fn``: if
  lensbench dies, even by ``kill -9``, the kernel signals the child, so no orphan server keeps
  the GPUs; a ``weakref.finalize`` stops it when the backend is garbage-collected;
* a watcher (:mod:`lensbench.backends.reaper`) beside each server stops the server's whole process
  group and removes its scratch folder when lensbench dies: the workers an engine forked die too,
  not only the engine (issue 30);
* its stdout/stderr go to a log file whose last lines are quoted when it fails to start;
* its scratch folder ``<tmp>/lensbench-<engine>-<PID>-*`` is removed when it stops (Ctrl-C and
  SIGTERM included: :mod:`lensbench.runtime.interrupt` turns SIGTERM into Ctrl-C's clean stop), and
  one left by a killed lensbench (PID gone) is removed by the next run (:func:`sweep_server_tmpdirs`).
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import weakref
from abc import abstractmethod
from collections.abc import Callable
from pathlib import Path


from lensbench.backends.base import Backend, BackendConfig
from lensbench.backends.openai_compat import OpenAIChatBackend
from lensbench.backends.reaper import SERVER_TMP_PREFIXES, sweep_server_tmpdirs, sweep_stale_tmpdirs
from lensbench.core.errors import TransportError
from lensbench.core.types import Completion, Request

__all__ = ["free_port", "log_tail", "stop_process", "sweep_stale_tmpdirs", "sweep_server_tmpdirs", "ServerLaunch",
           "LaunchedServerBackend", "SERVER_TMP_PREFIXES"]

_PR_SET_PDEATHSIG = 1
_REAPER = str(Path(__file__).with_name("reaper.py"))
#: seconds the watcher waits for a server group to stop on SIGTERM before it sends SIGKILL
REAPER_GRACE_S = 10.0


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that is free now (the OS picks it; a race with other programs is possible)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _libc_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # looked up once, in the parent (no dlopen after fork)
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()


def _die_with_parent() -> None:  # runs in the child between fork and exec
    """Ask the kernel to send SIGTERM to this child when its parent dies (Linux; elsewhere nothing).
    SIGTERM, not SIGKILL, so that an engine can still stop the workers it forked."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


def log_tail(path: Path | None, n: int = 15) -> str:
    """The last ``n`` lines of a log file ("" if there is none)."""
    if path is None or not path.exists():
        return ""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join(lines[-n:])


def stop_process(proc: subprocess.Popen, wait_s: float = 10.0) -> None:
    """Stop ``proc`` and its process group: close its stdin (if piped) and wait briefly, then
    SIGTERM the group and wait ``wait_s`` seconds, then SIGKILL the group. Idempotent."""
    if proc.stdin and not proc.stdin.closed:
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=min(wait_s, 5.0))
        except subprocess.TimeoutExpired:
            pass
    for sig, wait in ((signal.SIGTERM, wait_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)  # the group: workers the engine forked go too
        except (ProcessLookupError, PermissionError):
            if proc.poll() is not None:
                return
        try:
            proc.wait(timeout=wait)
            if sig == signal.SIGTERM:  # the leader is gone; make sure no worker lingers in its group
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            return
        except subprocess.TimeoutExpired:
            continue


def _start_reaper(pgid: int, tmpdir: Path | None) -> subprocess.Popen | None:
    """The watcher of the process group ``pgid`` (:mod:`lensbench.backends.reaper`); None where it cannot run."""
    try:
        return subprocess.Popen([sys.executable, "-I", _REAPER, str(pgid), str(tmpdir or ""), str(REAPER_GRACE_S)],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                close_fds=True, start_new_session=True)
    except OSError:
        return None


def _dismiss_reaper(reaper: subprocess.Popen | None) -> None:
    """Tell the watcher the server was stopped by lensbench (it exits doing nothing) and reap it. Idempotent."""
    if reaper is None or reaper.returncode is not None:
        return
    try:
        reaper.stdin.write(b"done\n")
        reaper.stdin.close()
    except (OSError, ValueError):
        pass
    try:
        reaper.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        reaper.kill()
        reaper.wait()


def _stop_all(proc: subprocess.Popen, reaper: subprocess.Popen | None, wait_s: float) -> None:
    """Stop the server and its group (:func:`stop_process`), then dismiss its watcher."""
    try:
        stop_process(proc, wait_s)
    finally:
        _dismiss_reaper(reaper)


class ServerLaunch:
    """How to run one server: ``command`` (argv), ``address()`` -> its ``http://HOST:PORT`` once
    known (None while starting), ``health`` paths (any 200 = ready), ``timeout_s`` to get ready,
    ``stdin_pipe`` (keep a pipe to the child's stdin; closing it asks the child to exit), ``env``
    additions."""

    def __init__(self, command: list[str], address: Callable[[], str | None], *, health: tuple[str, ...] = ("/health",),
                 timeout_s: float = 600.0, stdin_pipe: bool = False, env: dict[str, str] | None = None):
        self.command, self.address, self.health = command, address, health
        self.timeout_s, self.stdin_pipe, self.env = timeout_s, stdin_pipe, env or {}


class LaunchedServerBackend(Backend):
    """Base of backends that run their own OpenAI-compatible server (see the module docstring).

    Subclasses set ``fingerprint``/``display_name``, call ``super().__init__(served_model, config,
    label, log)`` and implement :meth:`launch`. Attributes: ``base_url`` (None until started),
    ``log_path``, ``_proc`` (the child), ``_tmpdir`` (scratch folder of this server).
    A server that cannot start is a non-retryable :class:`TransportError` quoting the log's tail;
    it is not started again.
    """

    def __init__(self, served_model: str, config: BackendConfig, label: str, log: str | None = None):
        self.config = config
        self.label = label
        self._client = OpenAIChatBackend(served_model, config.model_copy(update={"base_urls": ["http://127.0.0.1/v1"]}))
        self._log_setting = log
        self.base_url: str | None = None
        self.log_path: Path | None = None
        self._proc: subprocess.Popen | None = None
        self._finalizer: weakref.finalize | None = None
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self._failed: str | None = None
        self._tmpdir: Path | None = None
        self._reaper: subprocess.Popen | None = None

    @abstractmethod
    def launch(self, tmpdir: Path) -> ServerLaunch:
        """The command line and address source of this server (``tmpdir``: its scratch folder)."""

    def _spawn(self) -> tuple[subprocess.Popen, ServerLaunch]:
        prefix = f"lensbench-{self.label.split()[0]}-"
        sweep_stale_tmpdirs(prefix)
        _dismiss_reaper(self._reaper)  # a server started again: the old watcher's group is gone
        self._tmpdir = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
        self.log_path = Path(self._log_setting).expanduser() if self._log_setting else self._tmpdir / "server.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        spec = self.launch(self._tmpdir)
        try:
            with self.log_path.open("ab") as logf:
                proc = subprocess.Popen(spec.command, stdin=subprocess.PIPE if spec.stdin_pipe else subprocess.DEVNULL,
                                        stdout=logf, stderr=logf, close_fds=True, start_new_session=True,
                                        preexec_fn=_die_with_parent, env={**os.environ, **spec.env})
        except OSError as exc:
            self._fail(f"{self.label}: cannot run {spec.command[0]!r}: {exc}")
        self._reaper = _start_reaper(proc.pid, self._tmpdir)  # the group's leader is proc (start_new_session)
        self._finalizer = weakref.finalize(self, _stop_all, proc, self._reaper, 2.0)
        return proc, spec

    async def _healthy(self, address: str, paths: tuple[str, ...]) -> bool:
        """True when ``GET address + path`` answers 200 for one of ``paths`` (5 s each; stdlib urllib in
        a thread: a few probes while the server starts need no HTTP client library on the run path)."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via $http_proxy

        def probe(url: str) -> bool:
            try:
                with opener.open(url, timeout=5) as r:
                    return r.status == 200
            except (OSError, ValueError):  # URLError / HTTPError / refused / timeout are OSErrors
                return False

        for p in paths:
            if await asyncio.to_thread(probe, address + p):
                return True
        return False

    async def start(self) -> str:
        """Start the server (once) and return its base URL (``http://127.0.0.1:PORT/v1``).

        Raises:
            TransportError (not retryable): the child could not run, exited, or was not healthy
            within the launch's timeout; the message quotes the end of its log.
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
                self._fail(f"{self.label} exited (code {code})")
            proc, spec = self._spawn()
            self._proc = proc
            deadline = time.monotonic() + spec.timeout_s
            address = None
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    self._fail(f"{self.label} exited during start (code {proc.returncode})")
                address = address or spec.address()
                if address and await self._healthy(address.rstrip("/"), spec.health):
                    break
                await asyncio.sleep(0.1)
            else:
                await asyncio.to_thread(stop_process, proc, 2.0)
                self._fail(f"{self.label} not ready after {spec.timeout_s:g} s (raise startup_timeout_s)")
            self.base_url = address.rstrip("/") + "/v1"
            self._client.set_base_urls([self.base_url])
            return self.base_url

    def _fail(self, message: str) -> None:
        tail = log_tail(self.log_path)
        self._failed = message + (f"; log {self.log_path} ends:\n{tail}" if tail else "")
        raise TransportError(self._failed, retryable=False)

    # ------------------------------------------------------------------ Backend
    def prefetch(self, request: Request) -> None:
        """Prepare the request's images ahead of need (see :class:`OpenAIChatBackend`)."""
        self._client.prefetch(request)

    def media_summary(self) -> dict | None:
        """What was done to the images sent."""
        return self._client.media_summary()

    def endpoint_summary(self) -> dict | None:
        """Requests answered by the launched server."""
        return self._client.endpoint_summary()

    async def generate(self, request: Request) -> Completion:
        """Start the server if needed, then POST through :class:`OpenAIChatBackend`."""
        await self.start()
        return await self._client.generate(request)

    async def aclose(self) -> None:
        """Close the HTTP session and stop the server and its process group (waits for it to exit)."""
        await self._client.aclose()
        proc, self._proc = self._proc, None
        self.base_url = None
        if proc is not None:
            await asyncio.to_thread(stop_process, proc)
        reaper, self._reaper = self._reaper, None
        await asyncio.to_thread(_dismiss_reaper, reaper)
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None
