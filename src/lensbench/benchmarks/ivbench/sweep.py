"""IV-Bench frame / resolution configurations of a run (ablations of Sec. 4.3.2, Fig. 3(b), 4).

``--frames 8,16,32,64``, ``--resolution 72,108,144,240`` (the product is run) or ``--pairs``
(``fig4b`` = the equal-visual-token pairs of Fig. 4(b), or explicit ``FRAMESxRES`` pairs).

Configurations are ordered numerically, by frames then short side (native last): :func:`config_key`. Every
table, plot and leaderboard cell of a sweep follows that order (issue 32.9: columns came out as text,
16f, 32f, 64f, 8f).
"""

from __future__ import annotations

import re

from typing import Any

from lensbench.core.errors import ConfigError

__all__ = ["FIG4B_PAIRS", "parse_int_list", "sweep_configs", "config_label", "config_key", "sweep_in_order"]

#: Fig. 4(b): (frames, short side) pairs of roughly equal visual-token count.
FIG4B_PAIRS: list[tuple[int, int]] = [(8, 720), (16, 480), (32, 360), (64, 240), (128, 144), (256, 108), (512, 72)]


def parse_int_list(value: str | int | None, what: str, allow_native: bool = False) -> list[int | None]:
    """``"8,16,32"`` -> ``[8, 16, 32]``; ``None``/``""``/``"native"`` -> ``[None]`` when allowed.

    Raises ConfigError naming the option for a bad element or a value < 1.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        if allow_native:
            return [None]
        raise ConfigError(f"--{what} needs a value")
    if isinstance(value, int):
        items = [str(value)]
    else:
        items = [v.strip() for v in str(value).split(",") if v.strip()]
    out: list[int | None] = []
    for v in items:
        if allow_native and v.lower() in ("native", "none", "0"):
            out.append(None)
            continue
        try:
            n = int(v)
        except ValueError:
            raise ConfigError(f"--{what}: {v!r} is not an integer (give e.g. 32 or 8,16,32,64)") from None
        if n < 1:
            raise ConfigError(f"--{what}: {n} must be >= 1")
        out.append(n)
    return list(dict.fromkeys(out))


def sweep_configs(frames: str | int, resolution: str | int | None, pairs: str | None) -> list[tuple[int, int | None]]:
    """The (frames, short side or None) configurations of a run, sorted by :func:`config_key` (frames, then
    short side, native last), whatever order they were given in.

    ``pairs`` (``"fig4b"`` or ``"8x720,16x480"``) gives them explicitly; otherwise the product of
    the ``frames`` and ``resolution`` lists. Raises ConfigError for bad syntax.
    """
    return sorted(_given_configs(frames, resolution, pairs), key=config_key)


def _given_configs(frames: str | int, resolution: str | int | None, pairs: str | None) -> list[tuple[int, int | None]]:
    if pairs:
        if pairs.strip().lower() == "fig4b":
            return list(FIG4B_PAIRS)
        out = []
        for tok in pairs.split(","):
            m = re.fullmatch(r"\s*(\d+)\s*[x@]\s*(\d+|native)\s*p?\s*", tok, re.IGNORECASE)
            if not m:
                raise ConfigError(f"--pairs: {tok!r} is not FRAMESxRESOLUTION (e.g. 32x360) or 'fig4b'")
            out.append((int(m.group(1)), None if m.group(2).lower() == "native" else int(m.group(2))))
        return list(dict.fromkeys(out))
    fr = parse_int_list(frames, "frames")
    rs = parse_int_list(resolution, "resolution", allow_native=True)
    return [(n, r) for n in fr for r in rs]


def config_label(n: int, r: int | None) -> str:
    """Short name of a config: ``"32f@360p"``, or ``"32f@native"`` for native resolution."""
    return f"{n}f@{r}p" if r else f"{n}f@native"


def _num(v: Any) -> tuple[int, float, str]:
    """Sort key of one number of a config: numbers ascending, then None (native), then anything else as text."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, float(v), "")
    return (1, 0.0, "") if v is None else (2, 0.0, str(v))


def config_key(cfg: tuple[Any, Any]) -> tuple:
    """Sort key of a ``(frames, short side)`` configuration: by frames, then by short side, numerically; a
    native resolution (None) after every short side. Safe on any values (e.g. labels of an old run)."""
    return _num(cfg[0]), _num(cfg[1])


def sweep_in_order(sweep: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of a ``result.json`` sweep (``{"frames", "resolution", ...}``) in :func:`config_key` order (a
    run written before the order was fixed may hold them as given on the command line)."""
    return sorted(sweep, key=lambda e: config_key((e.get("frames"), e.get("resolution"))))
