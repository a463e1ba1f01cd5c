"""Timestep sampling and per-timestep loss weights of the GenViP editor loop (two conventions).

``diffusers`` (the default): diffusers' LoRA training examples
(``examples/dreambooth/train_dreambooth_lora_qwen_image.py``): ``u`` from
``diffusers.training_utils.compute_density_for_timestep_sampling(weighting_scheme)``, one per
sample; index ``floor(u * num_train_timesteps)`` into the *initial* grid of the pipeline's
``FlowMatchEulerDiscreteScheduler`` (for Qwen-Image's config, ``use_dynamic_shifting=True``, the
grid is unshifted: ``sigma = t / 1000``, ``t`` in 1000 .. 1); weight
``compute_loss_weighting_for_sd3(weighting_scheme, sigmas)`` (1 for ``none``).

``diffsynth``: DiffSynth-Studio's Qwen-Image trainer (read at commit
``fed7b18fac2ed4cb802796eec91970e7659bccde``): ``diffsynth/diffusion/flow_match.py``
(``FlowMatchScheduler("Qwen-Image").set_timesteps(1000, training=True)``: ``set_timesteps_qwen_image``
with ``mu = 0.8`` and ``shift_terminal = 0.02``, ``set_training_weight``, ``add_noise``,
``training_weight``) and ``diffsynth/diffusion/loss.py`` (``FlowMatchSFTLoss``: one grid index drawn
uniformly from ``0 .. 999`` with ``torch.randint``, the timestep cast to the pipeline's dtype, sigma
and weight taken at the grid point nearest to that cast timestep). Formulas are in
:func:`diffsynth_schedule`; docs/training.md compares the two.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from lensbench.core.extras import require

__all__ = ["diffsynth_schedule", "draw_timesteps", "DIFFSYNTH_MU", "DIFFSYNTH_SHIFT_TERMINAL", "DIFFSYNTH_COMMIT"]

#: The DiffSynth-Studio commit whose trainer :func:`diffsynth_schedule` follows.
DIFFSYNTH_COMMIT = "fed7b18fac2ed4cb802796eec91970e7659bccde"
#: ``set_timesteps_qwen_image``'s ``mu`` when training (no ``dynamic_shift_len``): exponential shift e^0.8.
DIFFSYNTH_MU = 0.8
#: ``set_timesteps_qwen_image``'s ``shift_terminal``: the smallest sigma of the grid.
DIFFSYNTH_SHIFT_TERMINAL = 0.02


@lru_cache(maxsize=4)
def _schedule(n: int, mu: float, shift_terminal: float):
    torch = require("torch", "train", "training an editor LoRA")
    s = torch.linspace(1.0, 0.0, n + 1)[:-1]
    s = math.exp(mu) / (math.exp(mu) + (1 / s - 1))
    one_minus = 1 - s
    s = 1 - one_minus / (one_minus[-1] / (1 - shift_terminal))
    x = s * 1000  # DiffSynth weighs on sigma * num_train_timesteps (1000), whatever n is
    y = torch.exp(-2 * ((x - 500) / 1000) ** 2)
    y = y - y.min()
    w = y * (1000 / y.sum())
    if n != 1000:  # DiffSynth's "empirical formula" for other grid sizes
        w = w * (n / 1000)
        w = w + w[1]
    return s, s * 1000, w


def diffsynth_schedule(n: int = 1000, mu: float = DIFFSYNTH_MU, shift_terminal: float = DIFFSYNTH_SHIFT_TERMINAL):
    """DiffSynth-Studio's Qwen-Image training grid: ``(sigmas, timesteps, weights)``, float32 tensors
    of shape ``(n,)``, index 0 = most noise.

    Source: ``diffsynth/diffusion/flow_match.py`` (``set_timesteps_qwen_image``, ``set_training_weight``).
    ``sigmas``: ``s_i = 1 - i / n`` (i = 0 .. n-1), shifted ``e^mu / (e^mu + 1/s - 1)``, then stretched
    so the last is ``shift_terminal``: ``1 - (1 - s) * (1 - shift_terminal) / (1 - s_last)``; range
    ``[shift_terminal, 1]``. ``timesteps = 1000 * sigmas``. ``weights``: ``exp(-2 ((t - 500) / 1000)^2)``,
    minus its minimum, scaled to sum to 1000 (mean 1 for n = 1000; the largest weight at t nearest 500,
    0 at the grid end farthest from 500). The returned tensors are shared (cached): do not modify them."""
    return _schedule(int(n), float(mu), float(shift_terminal))


def draw_timesteps(s: Any, noise_sched, bsz: int, generator=None, dtype=None):
    """One timestep per sample under ``s.loss_weighting``: ``(t, sigma, weight)``, each shape ``(bsz,)``.

    ``t``: the model's timestep in ``[0, 1000]`` (divided by 1000 before the transformer); ``sigma``:
    the noise level of ``(1 - sigma) x + sigma n`` in ``[0, 1]``; ``weight``: the per-sample factor on the
    sample's mean squared error (>= 0). ``generator``: a CPU ``torch.Generator`` (None = torch's global
    RNG). ``dtype``: the transformer's dtype; the ``diffsynth`` convention casts the drawn timestep to
    it before looking up sigma and weight, as ``FlowMatchSFTLoss`` does with ``pipe.torch_dtype``
    (bfloat16 in DiffSynth's Qwen-Image trainer), None = float32. ``noise_sched``: the pipeline's
    ``FlowMatchEulerDiscreteScheduler`` (its initial grid; used by ``diffusers`` only)."""
    torch = require("torch", "train", "training an editor LoRA")
    if s.loss_weighting == "diffsynth":
        sigmas, timesteps, weights = diffsynth_schedule()
        idx = torch.randint(0, len(timesteps), (bsz,), generator=generator)
        t = timesteps[idx].to(dtype or torch.float32)
        near = (timesteps[None, :] - t.float()[:, None]).abs().argmin(dim=1)  # first minimum, as torch.argmin
        return t.float(), sigmas[near], weights[near]
    tu = require("diffusers.training_utils", "train", "training an editor LoRA")
    if s.weighting_scheme == "none" and generator is not None:
        u = torch.rand(bsz, generator=generator)
    else:
        u = tu.compute_density_for_timestep_sampling(weighting_scheme=s.weighting_scheme, batch_size=bsz,
                                                     logit_mean=s.logit_mean, logit_std=s.logit_std,
                                                     mode_scale=s.mode_scale)
    idx = (u * noise_sched.config.num_train_timesteps).long().clamp(max=len(noise_sched.timesteps) - 1)
    sig = noise_sched.sigmas[idx]
    return noise_sched.timesteps[idx], sig, tu.compute_loss_weighting_for_sd3(weighting_scheme=s.weighting_scheme,
                                                                               sigmas=sig)
