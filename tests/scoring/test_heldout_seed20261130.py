"""Tests for survivors of the held-out mutation draw seed 20261130 (devtools/MUTATION.md), written after the
draw was scored: each asserts behaviour the draw showed untested, with expected values computed here."""

from __future__ import annotations

import asyncio
import math

import pytest

from lensbench.scoring.bbox import smart_resize
from lensbench.scoring.metrics import binomial_threshold


def test_smart_resize_defaults_are_qwen25vl_released_bounds():
    # Qwen2.5-VL's released preprocessor: max_pixels = 12,845,056 = 16384 * 28 * 28; an 8000 x 8000 image is scaled
    # by beta = sqrt(h * w / max_pixels) and floored to multiples of 28 (qwen-vl-utils smart_resize)
    beta = math.sqrt(8000 * 8000 / (16384 * 28 * 28))
    side = math.floor(8000 / beta / 28) * 28
    assert smart_resize(8000, 8000) == (side, side) == (3584, 3584)
    assert smart_resize(8000, 8000)[0] * smart_resize(8000, 8000)[1] <= 12_845_056


@pytest.mark.parametrize("n,p", [(1, 0.01), (2, 0.01), (1, 0.04), (30, 0.5), (406, 0.0625)])
def test_binomial_threshold_includes_k_zero(n, p):
    # the least k with P(X >= k) < alpha, from scipy; for tiny n and p even k = 1 is significant
    from scipy.stats import binom

    k = next(k for k in range(n + 2) if binom.sf(k - 1, n, p) < 0.05)
    assert binomial_threshold(n, p) == pytest.approx(100.0 * k / n)


def test_the_default_retry_policy_stops_a_refused_endpoint_after_three_attempts(tmp_path, monkeypatch):
    from lensbench.backends.base import Backend
    from lensbench.core.errors import TransportError
    from lensbench.core.types import Message, Request
    from lensbench.runtime.engine import EndpointDown, Engine, RetryPolicy
    from lensbench.runtime.store import RunStore

    calls = []

    class Refused(Backend):
        fingerprint = "refused"

        async def generate(self, request):
            calls.append(request.id)
            raise TransportError("connection refused", kind="refused", url="http://x/v1")

    async def no_wait(*_a, **_k):
        return None

    monkeypatch.setattr(asyncio, "sleep", no_wait)
    engine = Engine({"model": Refused()}, RunStore(tmp_path / "run"), concurrency=1, progress=False,
                    retry=RetryPolicy(max_retries=10, base_delay_s=0.0))
    with pytest.raises(EndpointDown):
        asyncio.run(engine.run([Request(id="r", messages=(Message.user("x"),))]))
    assert len(calls) == 3 == RetryPolicy().refused_abort_after
