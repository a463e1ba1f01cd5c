"""Exceptions with messages that name the file, field or URL at fault."""

from __future__ import annotations

__all__ = ["LensbenchError", "DataError", "ConfigError", "TransportError", "Interrupted", "NOT_SENT"]

#: the ``error`` of a request a rebuild found no stored row for: the run stopped (killed, interrupted, a
#: shard merged unfinished) before sending it. Reports count these as "not sent", not as transport failures.
NOT_SENT = "not sent: the run stopped before sending this request"


class LensbenchError(Exception):
    """Base class: a user-facing error; the CLI prints its message and exits non-zero."""


class DataError(LensbenchError):
    """Bad or missing benchmark data. The message names the file and the field."""

    def __init__(self, path, message: str, field: str | None = None):
        self.path = str(path)
        self.field = field
        where = f"{self.path}" + (f" [field {field!r}]" if field else "")
        super().__init__(f"{where}: {message}")


class ConfigError(LensbenchError):
    """Bad command-line or config input (unknown backend, bad spec, conflicting run folder)."""


class TransportError(LensbenchError):
    """A failed model call: timeout, refused or dropped connection, HTTP 429 / 5xx, malformed body.

    ``retryable`` says whether the engine should try again; ``retry_after`` (seconds) is the
    server's Retry-After when it sent one; ``kind`` is what failed: ``"refused"`` (nothing listens /
    DNS), ``"timeout"``, ``"http"`` (status code), ``"malformed"`` (unreadable body), ``"empty"`` (a
    200 with no answer: docs/protocol.md, general rules) or ``"other"``; ``url``: the endpoint (shown redacted);
    ``status``: the HTTP status code of a ``"http"`` failure (None otherwise). Never scored as an answer.
    """

    def __init__(self, message: str, *, retryable: bool = True, retry_after: float | None = None,
                 kind: str = "other", url: str | None = None, status: int | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.kind = kind
        self.url = url
        self.status = status


class Interrupted(LensbenchError):
    """A command stopped by Ctrl-C (SIGINT) or SIGTERM after cleaning up; the message says how many replies
    are stored and the command that resumes. ``exit_code``: 128 + the signal number (130, 143)."""

    def __init__(self, message: str, exit_code: int = 130):
        super().__init__(message)
        self.exit_code = exit_code
