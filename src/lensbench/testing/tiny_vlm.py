"""A Qwen2.5-VL model with random weights, built from a config with no downloads (tests, benchmarks).

:func:`save_qwen25vl` writes a folder that ``hf:FOLDER`` (``AutoProcessor`` +
``AutoModelForImageTextToText``) loads: the model (random weights, seeded), a word-level
tokenizer made in memory carrying the family's special tokens (words ``w0`` ... and a few
English words; anything else is ``[UNK]``), ``Qwen2VLImageProcessor`` / ``Qwen2VLVideoProcessor``
and a chat template in the family's layout (images / videos where the content puts them, an
``enable_thinking`` switch that adds ``<think>\\n\\n</think>\\n\\n`` when false, like Qwen3).

Default sizes make a 0.6M-parameter model that runs on CPU in well under a second a batch;
``text`` / ``vision`` override config entries (e.g. the real 7B numbers for speed tests).
Needs ``lensbench[hf]`` (torch, transformers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lensbench.core.extras import require

__all__ = ["save_qwen25vl", "build_qwen25vl", "TEMPLATE", "SPECIAL", "WORDS"]

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
           "<|image_pad|>", "<|video_pad|>"]
WORDS = ["yes", "no", "Yes", "No", "is", "there", "a", "the", "image", "thermal", "answer", "question", "user",
         "assistant", "system", "<think>", "</think>", "\n", ":", "?", ".", ","] + [f"w{i}" for i in range(400)]
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}{% endif %}")


def save_qwen25vl(out_dir: str | Path, *, text: dict[str, Any] | None = None, vision: dict[str, Any] | None = None,
                  dtype: str = "float32", seed: int = 0, min_pixels: int = 28 * 28 * 4,
                  max_pixels: int = 28 * 28 * 64) -> Path:
    """Build and save the model + processor into ``out_dir`` (created); returns it.

    ``text`` / ``vision``: entries of the text / vision config (defaults: hidden 128, 2 layers,
    vocab = the tokenizer's); ``dtype``: weights saved in this dtype (``float32``, ``bfloat16``);
    ``min_pixels`` / ``max_pixels``: the image processor's resize bounds (pixels).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model, proc = build_qwen25vl(text=text, vision=vision, dtype=dtype, seed=seed, min_pixels=min_pixels,
                                 max_pixels=max_pixels)
    model.save_pretrained(out)
    proc.save_pretrained(out)
    return out


def build_qwen25vl(*, text: dict[str, Any] | None = None, vision: dict[str, Any] | None = None,
                   dtype: str = "float32", device: str = "cpu", seed: int = 0, min_pixels: int = 28 * 28 * 4,
                   max_pixels: int = 28 * 28 * 64):
    """``(model, processor)`` as :func:`save_qwen25vl` saves them, the model built directly on
    ``device`` in ``dtype`` (a 7B-shaped model initialises in seconds on a GPU)."""
    torch = require("torch", "hf", "building a test model")
    tf = require("transformers", "hf", "building a test model")
    tokenizers = require("tokenizers", "hf", "building a test model")
    vocab = {t: i for i, t in enumerate(SPECIAL + ["[UNK]"] + WORDS)}
    tk = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok = tf.PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="<|endoftext|>",
                                     eos_token="<|im_end|>", additional_special_tokens=SPECIAL[1:])
    ip = tf.Qwen2VLImageProcessor(min_pixels=min_pixels, max_pixels=max_pixels)
    extra = {}
    if hasattr(tf, "Qwen2VLVideoProcessor"):
        extra["video_processor"] = tf.Qwen2VLVideoProcessor(min_pixels=min_pixels, max_pixels=max_pixels)
    proc = tf.Qwen2_5_VLProcessor(image_processor=ip, tokenizer=tok, chat_template=TEMPLATE, **extra)
    ids = {t: vocab[t] for t in SPECIAL}
    tcfg = dict(vocab_size=len(vocab), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                rope_scaling={"type": "mrope", "rope_type": "default", "mrope_section": [4, 6, 6]},
                bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"])
    tcfg.update(text or {})
    vcfg = dict(depth=2, hidden_size=64, intermediate_size=128, num_heads=4, out_hidden_size=tcfg["hidden_size"],
                patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=112, fullatt_block_indexes=[1])
    vcfg.update(vision or {})
    cfg = tf.Qwen2_5_VLConfig(text_config=tcfg, vision_config=vcfg, image_token_id=ids["<|image_pad|>"],
                              video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                              vision_end_token_id=ids["<|vision_end|>"], **tcfg)
    torch.manual_seed(seed)
    old = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, dtype))
    try:
        with torch.device(device):
            model = tf.Qwen2_5_VLForConditionalGeneration(cfg).eval()
    finally:
        torch.set_default_dtype(old)
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.generation_config.bos_token_id = ids["<|endoftext|>"]
    return model, proc
