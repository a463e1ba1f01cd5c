"""A Qwen-Image-Edit-Plus pipeline (Qwen-Image-Edit-2509's class) with random weights, built from
configs with no downloads: tests, benchmarks and the GenViP editor recipe's worked example.

The text encoder is the tiny Qwen2.5-VL of :mod:`lensbench.tools.training.tiny_vlm`; the VAE
(``AutoencoderKLQwenImage``, 4 latent channels, spatial factor 4) and the transformer
(``QwenImageTransformer2DModel``, 2 layers, 92k parameters) are built from small configs, as
diffusers' own fast pipeline tests do. :func:`save_tiny_editor` writes a folder that
``DiffusionPipeline.from_pretrained`` (``--editor diffusers:FOLDER``) loads. Note: the pipeline
resizes the edited image to about 1024 x 1024 for the VAE whatever the output size, so one edit
takes seconds on a CPU even with these weights. Needs torch, transformers, diffusers.
"""

from __future__ import annotations

from pathlib import Path

from lensbench.core.extras import require

__all__ = ["build_tiny_editor", "save_tiny_editor"]


def build_tiny_editor(seed: int = 0):
    """A ``QwenImageEditPlusPipeline`` with random weights (seeded), float32, on the CPU."""
    torch = require("torch", "train", "building a test editor")
    diffusers = require("diffusers", "train", "building a test editor")
    from lensbench.tools.training.tiny_vlm import build_qwen25vl

    tf = require("transformers", "train", "building a test editor")
    text_encoder, qproc = build_qwen25vl(seed=seed)
    # the pipeline declares Qwen2VLProcessor (Qwen-Image-Edit's processor/ folder); same parts
    processor = tf.Qwen2VLProcessor(image_processor=qproc.image_processor, tokenizer=qproc.tokenizer,
                                    video_processor=qproc.video_processor, chat_template=qproc.chat_template)
    torch.manual_seed(seed)
    z = 4
    vae = diffusers.AutoencoderKLQwenImage(base_dim=16, z_dim=z, dim_mult=[1, 2, 4], num_res_blocks=1,
                                           temperal_downsample=[False, True], latents_mean=[0.0] * z,
                                           latents_std=[1.0] * z)
    transformer = diffusers.QwenImageTransformer2DModel(patch_size=2, in_channels=z * 4, out_channels=z, num_layers=2,
                                                        attention_head_dim=16, num_attention_heads=2,
                                                        joint_attention_dim=text_encoder.config.text_config.hidden_size,
                                                        axes_dims_rope=(4, 6, 6))
    return diffusers.QwenImageEditPlusPipeline(scheduler=diffusers.FlowMatchEulerDiscreteScheduler(), vae=vae,
                                               text_encoder=text_encoder, tokenizer=processor.tokenizer,
                                               processor=processor, transformer=transformer)


def save_tiny_editor(out_dir: str | Path, seed: int = 0) -> Path:
    """Build (:func:`build_tiny_editor`) and save the pipeline into ``out_dir``; returns it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    build_tiny_editor(seed).save_pretrained(out)
    return out
