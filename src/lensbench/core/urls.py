"""Endpoint URLs: validation and credential redaction (nothing secret is ever written or printed)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from lensbench.core.errors import ConfigError

__all__ = ["redact_url", "check_url", "split_credentials"]


def redact_url(url: str) -> str:
    """``url`` with any ``user:password@`` part replaced by ``***@`` (unparseable input is returned as is)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = "***@" + host + (f":{parts.port}" if _port(parts) else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _port(parts) -> int | None:
    try:
        return parts.port
    except ValueError:
        return None


def check_url(url: str, flag: str = "--base-url") -> str:
    """Validate an HTTP(S) endpoint URL; returns it without a trailing slash.

    Raises ConfigError naming ``flag`` (with the URL redacted) for another scheme, no host, or a
    port outside 1-65535 — a configuration error, reported before anything is sent.
    """
    shown = redact_url(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{flag} {shown!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise ConfigError(f"{flag} {shown!r} must start with http:// or https://")
    if not parts.hostname:
        raise ConfigError(f"{flag} {shown!r} has no host")
    if port is not None and not 1 <= port <= 65535:
        raise ConfigError(f"{flag} {shown!r}: port must be 1-65535")
    return url.rstrip("/")


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``(url without user:password@, (user, password) or None)``."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return (urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)),
            (parts.username or "", parts.password or ""))
