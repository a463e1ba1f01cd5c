"""GenViP editor loss weighting (issue 31.4): ``loss_weighting="diffsynth"`` equals DiffSynth-Studio's
Qwen-Image trainer (formulas of diffsynth/diffusion/flow_match.py and loss.py at commit fed7b18,
re-derived here in numpy), the default equals diffusers' ``compute_density_for_timestep_sampling`` /
``compute_loss_weighting_for_sd3`` on the scheduler's initial grid, and the option reaches the loss and
the run's recorded settings (tiny Qwen-Image-Edit-Plus)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("torch")
pytest.importorskip("diffusers")

import torch  # noqa: E402
from diffusers import FlowMatchEulerDiscreteScheduler  # noqa: E402
from diffusers.training_utils import compute_density_for_timestep_sampling, compute_loss_weighting_for_sd3  # noqa: E402

from lensbench.core.errors import ConfigError  # noqa: E402
from lensbench.tools.training.editor_weighting import diffsynth_schedule, draw_timesteps  # noqa: E402
from lensbench.tools.training.settings import EditorTrainSettings, settings_from_cli  # noqa: E402


def _settings(**kw) -> EditorTrainSettings:
    return EditorTrainSettings(model="m", out="o", **kw)


def _qwen_sched() -> FlowMatchEulerDiscreteScheduler:
    """The scheduler of Qwen-Image(-Edit)'s scheduler_config.json (dynamic exponential shift, terminal 0.02)."""
    return FlowMatchEulerDiscreteScheduler(num_train_timesteps=1000, shift=1.0, use_dynamic_shifting=True,
                                           base_shift=0.5, max_shift=0.9, base_image_seq_len=256,
                                           max_image_seq_len=8192, shift_terminal=0.02, time_shift_type="exponential")


def _diffsynth_numpy():
    """DiffSynth's set_timesteps_qwen_image(1000, training) + set_training_weight, in float64."""
    s = 1 - np.arange(1000) / 1000  # linspace(1, 0, 1001)[:-1]
    z = math.exp(0.8) * s / (math.exp(0.8) * s + 1 - s)  # e^mu / (e^mu + 1/s - 1)
    sig = 1 - (1 - z) * (1 - 0.02) / (1 - z[-1])
    y = np.exp(-2 * ((sig * 1000 - 500) / 1000) ** 2)
    return sig, sig * 1000, (y - y.min()) * 1000 / (y - y.min()).sum()


def test_diffsynth_grid_and_weights_equal_its_formulas():
    sig, t, w = (x.numpy() for x in diffsynth_schedule())
    e_sig, e_t, e_w = _diffsynth_numpy()
    assert sig.shape == t.shape == w.shape == (1000,)
    np.testing.assert_allclose(sig, e_sig, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(t, e_t, rtol=2e-6, atol=1e-4)
    np.testing.assert_allclose(w, e_w, rtol=1e-4, atol=1e-5)
    # by hand, index 500 (s = 0.5): z = e^0.8 / (e^0.8 + 1), z_last at s = 0.001
    z, z_last = math.exp(0.8) / (math.exp(0.8) + 1), math.exp(0.8) / (math.exp(0.8) + 999)
    assert sig[500] == pytest.approx(1 - (1 - z) * 0.98 / (1 - z_last), abs=1e-6)  # 0.6955
    assert sig[0] == pytest.approx(1.0) and sig[-1] == pytest.approx(0.02) and t[-1] == pytest.approx(20.0, abs=1e-4)
    assert w.sum() == pytest.approx(1000, rel=1e-5) and w[0] == 0.0  # t = 1000 is farthest from 500: weight 0
    assert abs(t[w.argmax()] - 500) == np.abs(t - 500).min()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_diffsynth_draw_is_its_randint_and_nearest_lookup(dtype):
    """One uniform grid index per sample (``torch.randint(0, 1000)``, FlowMatchSFTLoss), the timestep cast
    to the transformer's dtype, sigma and weight at the grid point nearest to it (first on ties)."""
    sig, t_grid, w = diffsynth_schedule()
    t, s, wt = draw_timesteps(_settings(loss_weighting="diffsynth"), None, 64, torch.Generator().manual_seed(3), dtype)
    idx = torch.randint(0, 1000, (64,), generator=torch.Generator().manual_seed(3)).numpy()
    cast = t_grid[idx].to(dtype).float().numpy()
    near = np.array([int(np.argmin(np.abs(t_grid.numpy() - c))) for c in cast])
    np.testing.assert_array_equal(t.numpy(), cast)
    np.testing.assert_array_equal(s.numpy(), sig.numpy()[near])
    np.testing.assert_array_equal(wt.numpy(), w.numpy()[near])
    if dtype == torch.float32:
        np.testing.assert_array_equal(near, idx)  # no rounding: the drawn grid point itself


def test_bfloat16_cast_merges_grid_points():
    """In bfloat16 (DiffSynth's pipe.torch_dtype) timesteps above 512 round to multiples of 4, so fewer
    than 1000 grid points are reachable; in float32 every one is."""
    _, t_grid, _ = diffsynth_schedule()
    g = t_grid.numpy()
    reach = {int(np.argmin(np.abs(g - c))) for c in t_grid.to(torch.bfloat16).float().numpy()}
    assert len(reach) < 1000
    assert {int(np.argmin(np.abs(g - c))) for c in g} == set(range(1000))


@pytest.mark.parametrize("scheme", ["none", "sigma_sqrt", "cosmap", "logit_normal", "mode"])
def test_default_is_diffusers_density_and_sd3_weighting(scheme):
    sched = _qwen_sched()
    s = _settings(weighting_scheme=scheme)
    torch.manual_seed(5)
    t, sig, w = draw_timesteps(s, sched, 16, None, torch.bfloat16)
    torch.manual_seed(5)
    u = compute_density_for_timestep_sampling(scheme, 16, logit_mean=0.0, logit_std=1.0, mode_scale=1.29)
    idx = np.minimum((u.numpy() * 1000).astype(np.int64), 999)
    exp_t = 1000.0 - idx  # initial grid with dynamic shifting: 1000 .. 1, unshifted
    np.testing.assert_allclose(t.numpy(), exp_t)
    np.testing.assert_allclose(sig.numpy(), exp_t / 1000, rtol=1e-6)
    np.testing.assert_allclose(w.numpy(), compute_loss_weighting_for_sd3(scheme, sigmas=torch.tensor(exp_t / 1000))
                               .numpy(), rtol=1e-5)
    if scheme == "none":
        assert (w == 1).all()


def test_default_with_generator_draws_uniform_u_from_it():
    t, _, _ = draw_timesteps(_settings(), _qwen_sched(), 8, torch.Generator().manual_seed(2))
    u = compute_density_for_timestep_sampling("none", 8, generator=torch.Generator().manual_seed(2))
    np.testing.assert_allclose(t.numpy(), 1000.0 - (u.numpy() * 1000).astype(np.int64))


def test_option_validated():
    assert settings_from_cli(EditorTrainSettings, ["loss-weighting=diffsynth"], model="m", out="o").loss_weighting \
        == "diffsynth"
    assert _settings().loss_weighting == "diffusers"
    with pytest.raises(ConfigError, match="loss_weighting.*weighting_scheme must be none"):
        settings_from_cli(EditorTrainSettings, ["weighting_scheme=cosmap", "loss_weighting=diffsynth"], model="m", out="o")
    with pytest.raises(ConfigError, match="loss_weighting"):
        settings_from_cli(EditorTrainSettings, ["loss_weighting=sd3"], model="m", out="o")


def _pair(tmp_path):
    from lensbench.tools.training.editor_lora import EditPair

    a, b = tmp_path / "ir.png", tmp_path / "rgb.png"
    Image.new("RGB", (40, 30), (90, 90, 90)).save(a)
    Image.new("RGB", (40, 30), (200, 30, 10)).save(b)
    return EditPair((a,), b, "w1 w2")


def test_diffsynth_weight_and_sigma_reach_the_loss(tiny_editor, tmp_path, monkeypatch):
    """Batch of one: the diffsynth loss is DiffSynth's weight at the drawn timestep times the unweighted MSE
    at the same sigma and timestep; and train_summary.json records the option."""
    from diffusers import DiffusionPipeline

    from lensbench.tools.training import editor_lora
    from lensbench.tools.training.editor_lora import PairDataset, flow_matching_loss, train_editor_lora

    pipe = DiffusionPipeline.from_pretrained(str(tiny_editor))
    batch = [PairDataset([_pair(tmp_path)], 32)[0]]
    s = EditorTrainSettings(model=str(tiny_editor), out=tmp_path / "run", resolution=32, batch_size=1, max_steps=1,
                            rank=4, mixed_precision="no", device="cpu", loss_weighting="diffsynth", save_steps=10)
    drawn = []
    real = editor_lora.draw_timesteps
    monkeypatch.setattr(editor_lora, "draw_timesteps", lambda *a: drawn.append(real(*a)) or drawn[-1])

    def loss():
        torch.manual_seed(0)  # the VAE's latent sample
        with torch.no_grad():
            return flow_matching_loss(pipe, pipe.transformer, batch, s, None, "cpu", torch.float32,
                                      generator=torch.Generator().manual_seed(7)).item()

    weighted = loss()
    t, sig, w = drawn[0]
    sig_g, t_g, w_g = diffsynth_schedule()
    i = int(torch.randint(0, 1000, (1,), generator=_after_noise(batch, pipe, s)).item())
    assert (t.item(), sig.item(), w.item()) == (t_g[i].item(), sig_g[i].item(), w_g[i].item())
    monkeypatch.setattr(editor_lora, "draw_timesteps", lambda *a: (t, sig, torch.ones(1)))
    unweighted = loss()
    assert w.item() != pytest.approx(1.0, abs=1e-3)
    assert weighted == pytest.approx(w.item() * unweighted, rel=1e-5)
    monkeypatch.setattr(editor_lora, "draw_timesteps", real)
    summary = train_editor_lora([_pair(tmp_path)], s)
    assert math.isfinite(summary["losses"][0])
    saved = json.loads((tmp_path / "run" / "train_summary.json").read_text(encoding="utf-8"))
    assert saved["settings"]["loss_weighting"] == "diffsynth"


def _after_noise(batch, pipe, s):
    """The loss's generator after its noise draw (the timestep index is drawn next)."""
    g = torch.Generator().manual_seed(7)
    side = s.resolution // pipe.vae_scale_factor
    torch.randn((len(batch), pipe.vae.config.z_dim, 1, side, side), generator=g)
    return g
