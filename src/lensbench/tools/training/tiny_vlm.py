"""Image-text models with random weights, built from configs with no downloads (tests, benchmarks,
the training recipes' worked examples).

:func:`save_qwen25vl` writes a folder that ``hf:FOLDER`` (``AutoProcessor`` +
``AutoModelForImageTextToText``) loads: the model (random weights, seeded), a word-level
tokenizer made in memory carrying the family's special tokens (words ``w0`` ... and a few
English words; anything else is ``[UNK]``), ``Qwen2VLImageProcessor`` / ``Qwen2VLVideoProcessor``
and a chat template in the family's layout (images / videos where the content puts them, an
``enable_thinking`` switch that adds ``<think>\\n\\n</think>\\n\\n`` when false, like Qwen3).

Default sizes make a 0.6M-parameter model that runs on CPU in well under a second a batch;
``text`` / ``vision`` override config entries (e.g. the real 7B numbers for speed tests).

:func:`save_tiny_vlm` writes the same for the three families the training recipes use
(:data:`TINY_KINDS`: Qwen2.5-VL, Qwen3-VL, LLaVA-OneVision), with the JSON / number words of
grounding answers in the vocabulary (:data:`ANSWER_WORDS`) and a decoder that joins tokens
without spaces, so that a reply such as ``{"bbox_2d":null}`` decodes into parseable text.
Needs ``lensbench[hf]`` (torch, transformers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lensbench.core.extras import require

__all__ = ["save_qwen25vl", "build_qwen25vl", "save_tiny_vlm", "build_tiny_vlm", "TINY_KINDS", "TEMPLATE", "SPECIAL",
           "WORDS", "ANSWER_WORDS"]

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
#: LLaVA-OneVision's layout: ``<image>`` / ``<video>`` placeholders the processor expands.
LLAVA_TEMPLATE = TEMPLATE.replace("<|vision_start|><|image_pad|><|vision_end|>", "<image>\n").replace(
    "<|vision_start|><|video_pad|><|vision_end|>", "<video>\n")
#: Families :func:`build_tiny_vlm` makes.
TINY_KINDS: tuple[str, ...] = ("qwen2.5-vl", "qwen3-vl", "llava-onevision")
#: Words of grounding / multiple-choice answers (JSON punctuation as the Whitespace pre-tokenizer
#: splits it, ``null``, option letters, the numbers 0..1000).
ANSWER_WORDS = ['{"', '":', "}", "]}", "[", "]", "bbox_2d", "null", "a", "b", "c", "d", "e"] + \
    [str(i) for i in range(1001)]


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


def _tokenizer(tf, tokenizers, special: list[str], words: list[str], fuse: bool):
    vocab = {t: i for i, t in enumerate(special + ["[UNK]"] + list(dict.fromkeys(words)))}
    tk = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    if fuse:
        tk.decoder = tokenizers.decoders.Fuse()
    tok = tf.PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="<|endoftext|>",
                                     eos_token="<|im_end|>", additional_special_tokens=special[1:])
    return tok, vocab


def _text_config(vocab: dict[str, int], **extra: Any) -> dict[str, Any]:
    return dict(vocab_size=len(vocab), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                bos_token_id=vocab["<|endoftext|>"], eos_token_id=vocab["<|im_end|>"],
                pad_token_id=vocab["<|endoftext|>"], **extra)


def _make(torch, cls, cfg, dtype: str, device: str, seed: int, vocab: dict[str, int]):
    torch.manual_seed(seed)
    old = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, dtype))
    try:
        with torch.device(device):
            model = cls(cfg).eval()
    finally:
        torch.set_default_dtype(old)
    model.generation_config.eos_token_id = vocab["<|im_end|>"]
    model.generation_config.pad_token_id = vocab["<|endoftext|>"]
    model.generation_config.bos_token_id = vocab["<|endoftext|>"]
    return model


def build_qwen25vl(*, text: dict[str, Any] | None = None, vision: dict[str, Any] | None = None,
                   dtype: str = "float32", device: str = "cpu", seed: int = 0, min_pixels: int = 28 * 28 * 4,
                   max_pixels: int = 28 * 28 * 64, words: list[str] | None = None, fuse_decode: bool = False):
    """``(model, processor)`` as :func:`save_qwen25vl` saves them, the model built directly on
    ``device`` in ``dtype`` (a 7B-shaped model initialises in seconds on a GPU). ``words``: the
    vocabulary after the special tokens (default :data:`WORDS`); ``fuse_decode``: decode without
    spaces between tokens."""
    torch = require("torch", "hf", "building a test model")
    tf = require("transformers", "hf", "building a test model")
    tokenizers = require("tokenizers", "hf", "building a test model")
    tok, vocab = _tokenizer(tf, tokenizers, SPECIAL, words or WORDS, fuse_decode)
    ip = tf.Qwen2VLImageProcessor(min_pixels=min_pixels, max_pixels=max_pixels)
    extra = {}
    if hasattr(tf, "Qwen2VLVideoProcessor"):
        extra["video_processor"] = tf.Qwen2VLVideoProcessor(min_pixels=min_pixels, max_pixels=max_pixels)
    proc = tf.Qwen2_5_VLProcessor(image_processor=ip, tokenizer=tok, chat_template=TEMPLATE, **extra)
    tcfg = _text_config(vocab, rope_scaling={"type": "mrope", "rope_type": "default", "mrope_section": [4, 6, 6]})
    tcfg.update(text or {})
    vcfg = dict(depth=2, hidden_size=64, intermediate_size=128, num_heads=4, out_hidden_size=tcfg["hidden_size"],
                patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=112, fullatt_block_indexes=[1])
    vcfg.update(vision or {})
    cfg = tf.Qwen2_5_VLConfig(text_config=tcfg, vision_config=vcfg, image_token_id=vocab["<|image_pad|>"],
                              video_token_id=vocab["<|video_pad|>"], vision_start_token_id=vocab["<|vision_start|>"],
                              vision_end_token_id=vocab["<|vision_end|>"], **tcfg)
    return _make(torch, tf.Qwen2_5_VLForConditionalGeneration, cfg, dtype, device, seed, vocab), proc


def _build_qwen3vl(torch, tf, tokenizers, words: list[str], seed: int):
    tok, vocab = _tokenizer(tf, tokenizers, SPECIAL, words, True)
    px = dict(min_pixels=32 * 32 * 4, max_pixels=32 * 32 * 64, patch_size=16)
    proc = tf.Qwen3VLProcessor(image_processor=tf.Qwen2VLImageProcessor(**px), tokenizer=tok,
                               video_processor=tf.Qwen3VLVideoProcessor(**px), chat_template=TEMPLATE)
    tcfg = _text_config(vocab, head_dim=32, rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                             "mrope_section": [4, 6, 6], "mrope_interleaved": True})
    vcfg = dict(depth=2, hidden_size=64, intermediate_size=128, num_heads=2, patch_size=16, spatial_merge_size=2,
                temporal_patch_size=2, out_hidden_size=tcfg["hidden_size"], num_position_embeddings=64,
                deepstack_visual_indexes=[1])
    cfg = tf.Qwen3VLConfig(text_config=tcfg, vision_config=vcfg, image_token_id=vocab["<|image_pad|>"],
                           video_token_id=vocab["<|video_pad|>"], vision_start_token_id=vocab["<|vision_start|>"],
                           vision_end_token_id=vocab["<|vision_end|>"])
    return _make(torch, tf.Qwen3VLForConditionalGeneration, cfg, "float32", "cpu", seed, vocab), proc


def _build_llava_onevision(torch, tf, tokenizers, words: list[str], seed: int):
    tok, vocab = _tokenizer(tf, tokenizers, SPECIAL + ["<image>", "<video>"], words, True)
    grid = [[28, 28], [28, 56], [56, 28], [56, 56]]
    ip = tf.LlavaOnevisionImageProcessor(size={"height": 28, "width": 28}, crop_size={"height": 28, "width": 28},
                                         image_grid_pinpoints=grid)
    vp = tf.LlavaOnevisionVideoProcessor(size={"height": 28, "width": 28})
    proc = tf.LlavaOnevisionProcessor(image_processor=ip, tokenizer=tok, video_processor=vp, chat_template=LLAVA_TEMPLATE,
                                      num_image_tokens=4, vision_feature_select_strategy="full", image_token="<image>",
                                      video_token="<video>")
    tcfg = _text_config(vocab, model_type="qwen2")
    vcfg = dict(model_type="siglip_vision_model", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=2, image_size=28, patch_size=14)
    cfg = tf.LlavaOnevisionConfig(text_config=tcfg, vision_config=vcfg, image_token_index=vocab["<image>"],
                                  video_token_index=vocab["<video>"], image_grid_pinpoints=grid,
                                  vision_feature_select_strategy="full", vision_feature_layer=-1)
    return _make(torch, tf.LlavaOnevisionForConditionalGeneration, cfg, "float32", "cpu", seed, vocab), proc


def build_tiny_vlm(kind: str, *, seed: int = 0):
    """``(model, processor)`` of a tiny random model of family ``kind`` (:data:`TINY_KINDS`), with
    :data:`ANSWER_WORDS` in the vocabulary and space-free decoding (module docstring); 0.2-0.8M
    parameters, float32, CPU. Raises ValueError for an unknown kind."""
    torch = require("torch", "hf", "building a test model")
    tf = require("transformers", "hf", "building a test model")
    tokenizers = require("tokenizers", "hf", "building a test model")
    words = WORDS + ANSWER_WORDS
    if kind == "qwen2.5-vl":
        return build_qwen25vl(seed=seed, words=words, fuse_decode=True)
    if kind == "qwen3-vl":
        return _build_qwen3vl(torch, tf, tokenizers, words, seed)
    if kind == "llava-onevision":
        return _build_llava_onevision(torch, tf, tokenizers, words, seed)
    raise ValueError(f"unknown tiny model kind {kind!r}; known: {', '.join(TINY_KINDS)}")


def save_tiny_vlm(kind: str, out_dir: str | Path, *, seed: int = 0) -> Path:
    """Build (:func:`build_tiny_vlm`) and save model + processor into ``out_dir`` (created); returns it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model, proc = build_tiny_vlm(kind, seed=seed)
    model.save_pretrained(out)
    proc.save_pretrained(out)
    return out
