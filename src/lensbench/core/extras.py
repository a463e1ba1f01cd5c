"""Optional dependencies: the one way to import a module that lives in a ``lensbench[...]`` extra.

The core install (``pip install lensbench``) is what an API-only user needs: pydantic, typer,
rich, aiohttp, Pillow, numpy. Everything else is an extra named after what it enables
(``pyproject.toml``, ``[project.optional-dependencies]``):

========  ============================================  =============================================
extra     modules                                       enables
========  ============================================  =============================================
video     av, yt_dlp                                    IV-Bench frames, ``lensbench ivbench download``
data      huggingface_hub, pyarrow                      ``lensbench data download``, GroundingME parquet
stats     scipy                                         IF-Bench correlation analyses, GOBench rater
                                                        summary (CIs and paired tests need only numpy)
images    httpx                                         image-edit / text-to-image API clients
genvip    cv2, sklearn, httpx                           GenViP curation and image-edit API
review    krippendorff                                  agreement figures of the local review page
gobench   httpx, krippendorff, imagehash                GOBench generation API, rater agreement,
                                                        near-duplicate filter of generated images
plots     matplotlib                                    figures (IV-Bench frame plots)
hf        torch, transformers, diffusers, open_clip     local models (editors, generators, embedders)
train     torch, transformers, trl, peft, diffusers,    the papers' training recipes (``lensbench train``)
          accelerate, datasets
llamacpp  xllamacpp                                     ``--model llamacpp:PATH.gguf``
interop   openpyxl                                      VLMEvalKit ``.xlsx`` predictions (read and export)
========  ============================================  =============================================

Call :func:`require` inside the function that needs the module (never at module top level), so
``import lensbench.<anything>`` works on the core install and a missing extra is reported only
when the feature is used, as one line ending in the literal install hint.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import NamedTuple

from lensbench.core.errors import ConfigError

__all__ = ["declared_extras", "MissingExtraError", "Requirement", "require", "install_hint", "missing_requirements",
           "check_requirements"]


@functools.lru_cache(maxsize=1)
def declared_extras() -> frozenset[str] | None:
    """The extras the installed lensbench declares (its package metadata: ``pyproject.toml``'s
    ``[project.optional-dependencies]``), or None when it runs from a source tree that is not installed."""
    try:
        return frozenset(importlib.metadata.metadata("lensbench").get_all("Provides-Extra") or ())
    except importlib.metadata.PackageNotFoundError:
        return None


class MissingExtraError(ConfigError):
    """An optional module is not installed. ``module`` and ``extra`` name them; the message is
    one line: ``<feature> needs <module>: pip install 'lensbench[<extra>]'``. A ConfigError (an
    environment problem, not bad data), so every command that reports ConfigError prints it."""

    def __init__(self, module: str, extra: str, feature: str | None = None, cause: str | None = None):
        self.module = module
        self.extra = extra
        what = feature or "this feature"
        why = f" ({cause})" if cause else ""
        super().__init__(f"{what} needs the Python module {module!r}{why}: {install_hint(extra)}")


def install_hint(extra: str) -> str:
    """The literal install command for an extra, e.g. ``pip install 'lensbench[video]'``."""
    return f"pip install 'lensbench[{extra}]'"


def require(module_name: str, extra: str, feature: str | None = None) -> ModuleType:
    """Import ``module_name`` (dotted names allowed, e.g. ``"scipy.stats"``) and return the module.

    ``extra`` is the ``lensbench[...]`` extra that installs it (one of :func:`declared_extras`);
    ``feature`` (optional) names what the user tried to do, for the message.
    Raises :class:`MissingExtraError` (a LensbenchError, printed by the CLI as one line) when the
    module or one of its own dependencies cannot be imported. Other errors propagate.
    """
    known = declared_extras()
    if known is not None and extra not in known:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(sorted(known))}")
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        # the module itself, or a dependency of it (e.g. a broken libav), is missing
        missing = getattr(exc, "name", None) or module_name
        cause = None if missing.split(".")[0] == module_name.split(".")[0] else f"missing {missing!r}"
        raise MissingExtraError(module_name, extra, feature, cause) from None


class Requirement(NamedTuple):
    """An optional module a command will import: ``module`` (dotted allowed), the ``extra`` that installs
    it, the ``feature`` that needs it (for the message) and whether the command can go on without it
    (``optional``: a warning instead of a refusal, e.g. a plot)."""

    module: str
    extra: str
    feature: str
    optional: bool = False


def _importable(module: str) -> bool:
    """True when ``module`` can be found without importing it (``importlib.util.find_spec`` on each part)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module with no spec
        return False


def missing_requirements(reqs: Iterable[Requirement]) -> list[Requirement]:
    """The requirements whose module cannot be found, in order, each module once (nothing is imported)."""
    out: list[Requirement] = []
    seen: set[str] = set()
    for r in reqs:
        if r.module not in seen and not _importable(r.module):
            out.append(r)
        seen.add(r.module)
    return out


def check_requirements(reqs: Iterable[Requirement], warn: Callable[[str], None] | None = None) -> None:
    """Refuse, before anything is sent, when a needed module is missing: one MissingExtraError naming
    every missing module with its literal install hint (``pip install 'lensbench[video,plots]'`` when
    several extras are missing). Missing ``optional`` ones are passed to ``warn`` (one line each)."""
    missing = missing_requirements(reqs)
    for r in missing:
        if r.optional and warn is not None:
            warn(f"{r.feature} needs the Python module {r.module!r}; going on without it ({install_hint(r.extra)})")
    hard = [r for r in missing if not r.optional]
    if not hard:
        return
    extras = ",".join(dict.fromkeys(r.extra for r in hard))
    what = "; ".join(f"{r.feature} needs the Python module {r.module!r}" for r in hard)
    err = MissingExtraError(hard[0].module, extras)
    err.args = (f"{what}: {install_hint(extras)}",)
    raise err
