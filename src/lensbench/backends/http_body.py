"""A request body sent as its pieces, without joining them: the cached image fragments go to the socket as they are.

A chat body that carries images is mostly base64: one pass-through RGB-Th-Bench request is ~1.3 MB
of which ~40 bytes are not image fragments already prepared by :class:`~lensbench.media.transport.MediaPrep`.
Joining the pieces into one ``bytes`` (and aiohttp then slicing it to the Content-Length and joining it
with the headers, and asyncio copying what the socket did not take) copied every image 3-4 times per
request. :class:`PiecesPayload` writes small pieces coalesced and large ones as zero-copy
``memoryview`` slices of at most :data:`SLICE` bytes, each followed by aiohttp's drain (flow control),
so the only per-request work that grows with image size is the socket write itself
(``benchmarks/yardstick_passthrough.py --only scale`` measures the CPU per request).

:func:`write_plan` is shared with the lean client (:mod:`lensbench.backends.http_lean`), which needs no
aiohttp: :class:`PiecesPayload` (an aiohttp class) is built on first access, so importing this module
does not import aiohttp.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

__all__ = ["PiecesPayload", "SLICE", "write_plan"]

#: largest slice handed to the transport at once (bytes); what the socket does not take at once is
#: buffered by asyncio (a copy), so slices bound that copy while keeping writes few.
SLICE = 256 << 10
#: pieces shorter than this (bytes) are joined with their short neighbours into one write.
SMALL = 16 << 10


def write_plan(pieces: Sequence[bytes], limit: int | None = None, slice_bytes: int = SLICE) -> Iterator[bytes | memoryview]:
    """The writes for ``pieces``: runs of small pieces joined, large pieces as memoryview slices.

    Args:
        pieces: the body in order (bytes objects; not copied when large).
        limit: stop after this many bytes in all (the Content-Length), None for all of them.
        slice_bytes: largest write (>= 1).
    Yields bytes or memoryview chunks whose concatenation is ``b"".join(pieces)[:limit]``.
    """
    left = sum(map(len, pieces)) if limit is None else limit
    run: list[bytes] = []
    for piece in pieces:
        if left <= 0:
            break
        if len(piece) > left:
            piece = piece[:left]
        left -= len(piece)
        if len(piece) < SMALL:
            run.append(piece)
            continue
        if run:
            yield b"".join(run)
            run = []
        view = memoryview(piece)
        for off in range(0, len(view), slice_bytes):
            yield view[off:off + slice_bytes]
    if run:
        yield b"".join(run)


def _make_payload_class():
    from aiohttp.abc import AbstractStreamWriter
    from aiohttp.payload import Payload

    class PiecesPayload(Payload):
        """An aiohttp payload made of ``pieces`` (bytes), sent in order with Content-Length = their total size.

        Re-sendable: a retry makes a new payload from the same pieces (nothing is consumed). Content type
        ``application/json``.
        """

        def __init__(self, pieces: Sequence[bytes], content_type: str = "application/json"):
            super().__init__(list(pieces), content_type=content_type)
            self._size = sum(map(len, self._value))

        def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
            """The whole body as text (debugging; joins the pieces)."""
            return b"".join(self._value).decode(encoding, errors)

        async def write(self, writer: AbstractStreamWriter) -> None:
            """Write every piece (aiohttp < 3.12 calls this)."""
            await self.write_with_length(writer, None)

        async def write_with_length(self, writer: AbstractStreamWriter, content_length: int | None) -> None:
            """Write the pieces up to ``content_length`` bytes (None: all), draining between slices."""
            for chunk in write_plan(self._value, content_length):
                await writer.write(chunk)

    return PiecesPayload


def __getattr__(name: str):
    """``PiecesPayload`` is created (importing aiohttp) on first access."""
    if name == "PiecesPayload":
        cls = _make_payload_class()
        globals()["PiecesPayload"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
