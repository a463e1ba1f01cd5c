"""The papers' baselines: a seeded uniform-random answerer and a constant answerer."""

from __future__ import annotations

import hashlib
import random

from lensbench.core.errors import ConfigError
from lensbench.core.types import Completion, Request
from lensbench.backends.base import Backend, BackendConfig

__all__ = ["RandomBackend", "ConstantBackend"]


class RandomBackend(Backend):
    """Uniform over the request's answer space (``request.meta["answer_space"]``, else the
    benchmark's default); the draw is seeded by (seed, request id), so runs repeat exactly.

    Raises ConfigError when no answer space is known.
    """

    def __init__(self, seed: int, answer_space: list[str] | None):
        self.seed = seed
        self.answer_space = answer_space
        self.fingerprint = f"random:seed={seed}"
        self.display_name = f"random (seed {seed})"

    async def generate(self, request: Request) -> Completion:
        space = request.meta.get("answer_space") or self.answer_space
        if not space:
            raise ConfigError(f"random baseline: no answer space for request {request.id!r}")
        h = hashlib.sha256(f"{self.seed}|{request.id}".encode()).digest()
        return Completion(text=random.Random(h).choice(list(space)))


class ConstantBackend(Backend):
    """Always answers ``answer`` (e.g. ``constant:Yes``)."""

    def __init__(self, answer: str):
        if not answer:
            raise ConfigError("--model constant:ANSWER needs an answer after 'constant:'")
        self.answer = answer
        self.fingerprint = f"constant:{answer}"
        self.display_name = f"Constant '{answer}'"

    async def generate(self, request: Request) -> Completion:
        return Completion(text=self.answer)


def make_random(arg: str, config: BackendConfig) -> Backend:
    return RandomBackend(int(arg) if arg else config.seed, config.answer_space)


def make_constant(arg: str, config: BackendConfig) -> Backend:
    return ConstantBackend(arg)
