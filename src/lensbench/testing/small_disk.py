"""A small disk that fills on demand, for full-disk tests and the chaos script (Linux only).

:class:`SmallDisk` mounts a tmpfs of a few MiB in a private mount namespace (``unshare -rm``: no
root needed where unprivileged user namespaces are allowed) held open by an idle process.
Commands run inside it through ``nsenter``; the test reaches its files from outside through
``/proc/<holder>/root``. :meth:`SmallDisk.fill` writes a filler file until the disk is full
(ENOSPC, as a real full disk answers), :meth:`SmallDisk.free` removes it. :func:`small_disk_available`
says whether this machine can do it (tests skip otherwise).
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["SmallDisk", "small_disk_available"]


def _holder_argv(mount: Path, size_kib: int) -> list[str]:
    return ["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o size={size_kib}k tmpfs "$0" && echo ready && '
            "exec sleep 3600", str(mount)]


def small_disk_available() -> bool:
    """True when ``unshare -rm`` + a tmpfs mount + ``nsenter`` work here (Linux with user namespaces)."""
    if not sys.platform.startswith("linux") or not (shutil.which("unshare") and shutil.which("nsenter")):
        return False
    try:
        with SmallDisk(64):
            return True
    except (OSError, RuntimeError, subprocess.SubprocessError):
        return False


class SmallDisk:
    """A ``size_kib`` KiB tmpfs at :attr:`path` inside a private mount namespace; a context manager."""

    def __init__(self, size_kib: int = 4096):
        self.size_kib = size_kib
        self.path = Path(tempfile.mkdtemp(prefix="lensbench-small-disk-"))
        self._holder: subprocess.Popen | None = None

    def __enter__(self) -> "SmallDisk":
        self._holder = subprocess.Popen(_holder_argv(self.path, self.size_kib), stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        line = self._holder.stdout.readline()
        if line.strip() != "ready":
            err = self._holder.stderr.read() if self._holder.poll() is not None else ""
            self.__exit__()
            raise RuntimeError(f"cannot mount a tmpfs in a private namespace: {err.strip() or line.strip()}")
        return self

    def __exit__(self, *exc) -> None:
        if self._holder is not None:
            self._holder.kill()
            self._holder.wait()
            self._holder = None
        shutil.rmtree(self.path, ignore_errors=True)

    def prefix(self) -> list[str]:
        """The argv prefix that runs a command inside the namespace (it sees the tmpfs at :attr:`path`)."""
        assert self._holder is not None, "use SmallDisk as a context manager"
        pid = str(self._holder.pid)
        return ["nsenter", "-t", pid, "-m"] if os.geteuid() == 0 else \
            ["nsenter", "-t", pid, "-U", "-m", "--preserve-credentials"]

    def outside(self, inner: str | Path = "") -> Path:
        """A path inside the tmpfs, as this process reaches it (``/proc/<holder>/root/...``)."""
        assert self._holder is not None, "use SmallDisk as a context manager"
        return Path(f"/proc/{self._holder.pid}/root") / str(self.path / inner).lstrip("/")

    def fill(self, leave_bytes: int = 0) -> int:
        """Write a filler file until fewer than ``leave_bytes`` bytes are free (0: the disk is full).
        Returns the bytes written."""
        filler = self.outside("filler")
        n = 0
        with open(filler, "ab", buffering=0) as fh:
            chunk = b"\0" * 4096
            while True:
                st = os.statvfs(self.outside())
                if leave_bytes and st.f_bavail * st.f_frsize <= leave_bytes:
                    return n
                try:
                    n += fh.write(chunk)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    return n

    def outage(self, seconds: float | None) -> None:
        """Fill the disk; with ``seconds``, free it again after that long (a transient full disk)."""
        self.fill()
        if seconds is not None:
            time.sleep(seconds)
            self.free()

    def free(self) -> None:
        """Remove the filler: the disk has room again."""
        try:
            self.outside("filler").unlink()
        except FileNotFoundError:
            pass

    def wait_for(self, inner: str, timeout_s: float = 60.0) -> bool:
        """Wait until ``inner`` exists on the disk; True when it does."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.outside(inner).exists():
                return True
            time.sleep(0.02)
        return False
