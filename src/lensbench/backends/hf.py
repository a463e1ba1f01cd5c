"""Local image-text models in-process through Hugging Face transformers (``hf:MODEL_OR_PATH``).

``--model 'hf:/models/Qwen2.5-VL-7B-Instruct?dtype=bfloat16&device=cuda&attn=sdpa&batch=32'``
loads ``AutoProcessor`` + ``AutoModelForImageTextToText`` from the folder (or Hub id) and
generates with the processor's own chat template. Settings: :class:`~lensbench.backends.hf_spec.HFSettings`;
request mapping (messages, images in protocol order, video frames, greedy / sampling, thinking
switch): :mod:`lensbench.backends.hf_inputs`.

Batching: ``batch_size`` (= ``?batch=N``, default 16) makes the engine hand this backend batches
of requests with the same image / frame count and similar text length
(:mod:`lensbench.runtime.batching`); a batch is one left-padded ``generate`` call, run in a worker
thread so the event loop keeps committing replies. At most two batches are in the backend at
once (``pipeline_depth``): one generating on the device while the next one's images are read
and processed.

Lifetime: nothing is imported or loaded until the first batch (a fully cached run never loads
the model); :meth:`HFBackend.aclose` drops the model. Install: ``pip install 'lensbench[hf]'``.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lensbench.backends.base import Backend, BackendConfig
from lensbench.backends.hf_inputs import batch_media, build_chat, generation_kwargs, template_kwargs
from lensbench.backends.hf_spec import (model_identity, parse_hf_spec, read_model_config, recorded_eval_options,
                                        resolve_dtype, resolve_video_mode)
from lensbench.core.errors import ConfigError, LensbenchError, TransportError
from lensbench.core.extras import require
from lensbench.core.types import Completion, Request

__all__ = ["HFBackend", "make", "weights_fingerprint"]

#: the :class:`~lensbench.backends.hf_spec.HFSettings` keys :meth:`HFBackend.from_live` takes
_LIVE_KEYS = frozenset({"batch", "max_new_tokens", "video", "min_pixels", "max_pixels"})


class HFBackend(Backend):
    """A transformers image-text-to-text model in this process (see the module docstring).

    ``option_defaults``: the benchmark options a ``lensbench train`` checkpoint records (its box
    convention; :func:`~lensbench.backends.hf_spec.recorded_eval_options`), which a run adopts where
    the user left the option at its default.
    ``fingerprint``: ``hf:`` + checkpoint identity (:func:`~lensbench.backends.hf_spec.model_identity`)
    + dtype, attention implementation, video mode and default max new tokens.
    Failures of a batch (bad image file, out of device memory, template error) come back as
    non-retryable TransportErrors per request; a missing ``lensbench[hf]`` install or a checkpoint
    that cannot be loaded raise ConfigError (the run stops before storing anything wrong).

    Raises (constructor): ConfigError for a bad spec or a local path without config.json.
    """

    #: batches inside the backend at once; None = 2 when ``batch > 1`` (one generating while the next
    #: one is prepared) and 1 for single requests (preparing beside a one-request ``generate``, whose
    #: step is bound by Python launching kernels, slows it more than it saves)
    pipeline_depth: int | None = None

    def __init__(self, arg: str, config: BackendConfig):
        self.source, self.settings = parse_hf_spec(arg, config.extra.get("hf"))
        cfg = read_model_config(self.source)
        self.model_type: str | None = cfg.get("model_type")
        self.option_defaults: dict[str, Any] = recorded_eval_options(self.source)
        self.dtype = resolve_dtype(self.settings.dtype, cfg)
        self.video_mode = resolve_video_mode(self.settings.video, self.model_type, self.source)
        s = self.settings
        self.fingerprint = (f"hf:{model_identity(self.source, s.revision)}|dtype={self.dtype}|attn={s.attn or 'default'}"
                            f"|video={self.video_mode}|max_new={s.max_new_tokens}"
                            + ("|remote_code" if s.trust_remote_code else "")
                            + (f"|pixels={s.min_pixels}-{s.max_pixels}" if s.min_pixels or s.max_pixels else ""))
        self.display_name = Path(self.source).name if cfg else self.source
        self.batch_size = s.batch
        self.seed = config.seed
        self.model: Any = None
        self.processor: Any = None
        self.device: str | None = None
        self._load_lock = threading.Lock()
        self._prep_pool: ThreadPoolExecutor | None = None  # reads images, runs the processor
        self._gen_pool: ThreadPoolExecutor | None = None  # loads the model, runs generate (one at a time)
        self._slots: asyncio.Semaphore | None = None  # batches inside the backend (pipeline_depth)
        self._slots_loop: asyncio.AbstractEventLoop | None = None
        self._proc_kw: dict[str, int] = {}  # pixel bounds passed with every processor call

    @classmethod
    def from_live(cls, model: Any, processor: Any, *, name: str = "live", step: int | None = None,
                  config: BackendConfig | None = None, **settings: Any) -> "HFBackend":
        """A backend around a model already in memory (a training loop's), with no load and no copy.

        ``model``: the transformers (or peft-wrapped) image-text model object itself: the backend keeps a
        reference to it, so its parameters are the ones the trainer updates (same storage); ``processor``:
        its ``AutoProcessor``. ``name``: display name; ``step``: the training step it is evaluated at;
        ``settings``: :class:`~lensbench.backends.hf_spec.HFSettings` keys (``batch``, ``max_new_tokens``,
        ``video``, ``min_pixels``, ``max_pixels``; device, dtype and attention are the model's own).
        ``fingerprint``: ``hf-live:NAME|step=N|weights=W|dtype=...`` where W is :func:`weights_fingerprint`
        (cheap, changes when the weights do), so a run folder of one step is resumed only with the same weights.

        Like :meth:`load`, it puts the model in eval mode and sets the tokenizer's left padding (and a pad
        token when it has none): a caller that trains on afterwards restores them
        (:mod:`lensbench.tools.training.eval_callback` does). :meth:`aclose` drops the references, never the
        model. Raises ConfigError for an unknown or bad setting (``device``, ``dtype`` ... included).
        """
        bad = sorted(settings.keys() - _LIVE_KEYS)
        if bad:
            raise ConfigError(f"HFBackend.from_live: {', '.join(bad)}: not a setting of a live model (its device, "
                              f"dtype and attention are its own); known: {', '.join(sorted(_LIVE_KEYS))}")
        self = cls.__new__(cls)
        self.source, self.settings = parse_hf_spec(name, settings)
        cfg = getattr(model, "config", None)
        self.model_type = getattr(cfg, "model_type", None)
        self.option_defaults = {}
        param = next(iter(model.parameters()), None)
        self.dtype = str(param.dtype).replace("torch.", "") if param is not None else "float32"
        self.video_mode = resolve_video_mode(self.settings.video, self.model_type, name)
        s = self.settings
        self.fingerprint = (f"hf-live:{name}|step={step}|weights={weights_fingerprint(model)}|dtype={self.dtype}"
                            f"|video={self.video_mode}|max_new={s.max_new_tokens}"
                            + (f"|pixels={s.min_pixels}-{s.max_pixels}" if s.min_pixels or s.max_pixels else ""))
        self.display_name = name
        self.batch_size = s.batch
        self.seed = (config or BackendConfig()).seed
        self.model = self.processor = None
        self.device = None
        self._load_lock = threading.Lock()
        self._prep_pool = self._gen_pool = None
        self._slots, self._slots_loop = None, None
        self._set_pixel_bounds(processor)
        self._attach(model, processor)
        return self

    # ------------------------------------------------------------------ loading
    def load(self) -> None:
        """Import torch/transformers and load processor + model (once; thread-safe).

        Raises:
            MissingExtraError (a ConfigError): torch or transformers not installed.
            ConfigError: the checkpoint cannot be loaded (message names the source and the cause).
        """
        with self._load_lock:
            if self.model is not None:
                return
            torch = require("torch", "hf", "the hf: backend")
            tf = require("transformers", "hf", "the hf: backend")
            s = self.settings
            dev = s.device
            if dev == "auto":
                dev = "cuda" if torch.cuda.is_available() else "cpu"
            kw: dict[str, Any] = {"trust_remote_code": s.trust_remote_code}
            if s.revision:
                kw["revision"] = s.revision
            mkw = dict(kw)
            mkw["dtype" if _major(tf.__version__) >= 5 else "torch_dtype"] = \
                self.dtype if self.dtype == "auto" else getattr(torch, self.dtype)
            if s.attn:
                mkw["attn_implementation"] = s.attn
            if dev == "map":
                mkw["device_map"] = "auto"
            try:
                processor = tf.AutoProcessor.from_pretrained(self.source, **kw)
                model = tf.AutoModelForImageTextToText.from_pretrained(self.source, **mkw)
            except (OSError, ValueError, ImportError, KeyError) as exc:
                raise ConfigError(f"hf:{self.source}: cannot load the model: {type(exc).__name__}: {exc}") from None
            if dev != "map":
                model = model.to(dev)
            self._set_pixel_bounds(processor)
            self._attach(model, processor)

    def _set_pixel_bounds(self, processor: Any) -> None:
        """Check that the processor has pixel bounds when ``min_pixels`` / ``max_pixels`` are given
        (they are then passed with every processor call, which sets them for images and videos
        alike: the Qwen-VL processors take them as call arguments). Raises ConfigError otherwise."""
        s = self.settings
        self._proc_kw = {k: v for k, v in (("min_pixels", s.min_pixels), ("max_pixels", s.max_pixels)) if v is not None}
        if not self._proc_kw:
            return
        ip = getattr(processor, "image_processor", None)
        size = getattr(ip, "size", None)
        has = hasattr(ip, "max_pixels") or getattr(size, "longest_edge", None) is not None or \
            (isinstance(size, dict) and "longest_edge" in size)
        if not has:
            raise ConfigError(f"hf:{self.source}: min_pixels / max_pixels given, but this model's image processor "
                              f"({type(ip).__name__}) has no pixel bounds")

    def _attach(self, model: Any, processor: Any) -> None:
        model.eval()
        tok = getattr(processor, "tokenizer", processor)
        tok.padding_side = "left"  # decoder-only generation pads on the left (reset by from_pretrained)
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        if model.generation_config.pad_token_id is None:
            model.generation_config.pad_token_id = tok.pad_token_id
        self.device = str(model.device)
        self.processor, self.model = processor, model

    # ------------------------------------------------------------------ Backend
    async def generate(self, request: Request) -> Completion:
        """One request as a batch of one. Raises TransportError on failure."""
        (res,) = await self.generate_batch([request])
        if isinstance(res, TransportError):
            raise res
        return res

    async def generate_batch(self, requests: list[Request]) -> list[Completion | TransportError]:
        """Generate ``requests`` in one left-padded batch (see the module docstring).

        Requests must share their generation parameters (the engine's batch plan guarantees it).
        Images are read and processed on one backend thread and ``generate`` runs on another, both
        long-lived (torch keeps per-thread device state such as cuBLAS handles: a fresh thread per
        call costs more than a small model's whole step), so the event loop stays free and batch
        i+1 is prepared while batch i generates.
        """
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots_loop is not loop:
            depth = self.pipeline_depth or (2 if self.batch_size > 1 else 1)
            self._slots, self._slots_loop = asyncio.Semaphore(depth), loop
        prep_pool, gen_pool = self._pools()
        requests = list(requests)
        async with self._slots:
            await loop.run_in_executor(gen_pool, self.load)
            prepared = await loop.run_in_executor(prep_pool, self._prepare_safe, requests)
            if isinstance(prepared, list):
                return prepared
            return await loop.run_in_executor(gen_pool, self._generate_safe, prepared, requests)

    def _pools(self) -> tuple[ThreadPoolExecutor, ThreadPoolExecutor]:
        if self._prep_pool is None or self._gen_pool is None:
            self._prep_pool = ThreadPoolExecutor(1, thread_name_prefix="lensbench-hf-prepare")
            self._gen_pool = ThreadPoolExecutor(1, thread_name_prefix="lensbench-hf-generate")
        return self._prep_pool, self._gen_pool

    def _prepare_safe(self, requests: list[Request]):
        """:meth:`_prepare`, or one non-retryable TransportError per request when the batch cannot be built."""
        try:
            return self._prepare(requests)
        except TransportError:
            raise
        except LensbenchError as exc:
            return [TransportError(str(exc), retryable=False)] * len(requests)
        except (OSError, ValueError, TypeError) as exc:
            return [TransportError(f"hf: cannot prepare the batch: {type(exc).__name__}: {exc}",
                                   retryable=False)] * len(requests)

    def _generate_safe(self, prepared, requests: list[Request]) -> list[Completion | TransportError]:
        inputs, gen_kw = prepared
        try:
            return self._generate(inputs.to(self.model.device), gen_kw, requests)
        except Exception as exc:  # noqa: BLE001 - e.g. torch.OutOfMemoryError; kept per request
            hint = " (lower ?batch=N)" if "out of memory" in str(exc).lower() else ""
            return [TransportError(f"hf: generate failed{hint}: {type(exc).__name__}: {exc}",
                                   retryable=False)] * len(requests)

    def _prepare(self, requests: list[Request]):
        """Chat template + processor for the batch (CPU side): returns (inputs on device, generate kwargs)."""
        from PIL import Image

        chats = [build_chat(r, self.video_mode) for r in requests]
        prompts = [self.processor.apply_chat_template(c.conversation, add_generation_prompt=True, tokenize=False,
                                                      **template_kwargs(r)) for c, r in zip(chats, requests)]

        def load(path: str):
            with Image.open(path) as im:
                return im.convert("RGB")

        media = batch_media(chats)
        if "images" in media:
            media["images"] = [[load(p) for p in imgs] for imgs in media["images"]]
        if "videos" in media:
            media["videos"] = [[load(p) for p in frames] for frames in media["videos"]]
        inputs = self.processor(text=prompts, padding=True, return_tensors="pt", **media, **self._proc_kw)
        gen_kw = generation_kwargs(requests[0], self.settings.max_new_tokens)
        return inputs, gen_kw

    def _generate(self, inputs, gen_kw: dict[str, Any], requests: list[Request]) -> list[Completion]:
        import torch

        if gen_kw.get("do_sample"):
            seed = requests[0].params.seed
            torch.manual_seed(self.seed if seed is None else seed)
        with torch.inference_mode():
            out = self.model.generate(**inputs, **gen_kw)
        n_in = inputs["input_ids"].shape[1]
        new = out[:, n_in:].tolist()
        eos = self.model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, (list, tuple)) else [eos] if eos is not None else [])
        prompt_lens = inputs["attention_mask"].sum(dim=1).tolist()
        tok = getattr(self.processor, "tokenizer", self.processor)
        results = []
        for row, n_prompt in zip(new, prompt_lens):
            end = next((i for i, t in enumerate(row) if t in eos_ids), None)
            kept = row if end is None else row[:end]
            text = tok.decode(kept, skip_special_tokens=True)
            n_gen = len(row) if end is None else end + 1
            results.append(Completion(text=text, finish_reason="length" if end is None else "stop",
                                      usage={"prompt_tokens": int(n_prompt), "completion_tokens": n_gen,
                                             "total_tokens": int(n_prompt) + n_gen},
                                      served_model=self.display_name))
        return results

    async def aclose(self) -> None:
        """Drop the model and processor (frees device memory once nothing else holds them) and stop
        the backend's threads (made again if the backend is used afterwards)."""
        for pool in (self._prep_pool, self._gen_pool):
            if pool is not None:
                pool.shutdown(wait=False)
        self._prep_pool = self._gen_pool = None
        self.model = self.processor = None


def weights_fingerprint(model: Any, n_per_tensor: int = 64) -> str:
    """A cheap fingerprint of a model's current weights (16 hex digits of SHA-256): every parameter's
    name, shape and dtype, and ``n_per_tensor`` elements taken at an even stride through it (read from the
    device in one small copy per tensor; the whole model is never copied). Training changes it (a step
    moves every element of a trained tensor); two models with equal weights give the same value. Not a
    proof of equality: two weight sets differing only between the sampled elements collide."""
    import torch

    h = hashlib.sha256()
    with torch.no_grad():
        for name, p in model.named_parameters():
            flat = p.detach().reshape(-1)
            step = max(1, flat.numel() // n_per_tensor)
            sample = flat[::step][:n_per_tensor].to("cpu", torch.float32).numpy().tobytes()
            h.update(f"{name}|{tuple(p.shape)}|{p.dtype}|".encode())
            h.update(sample)
    return h.hexdigest()[:16]


def _major(version: str) -> int:
    try:
        return int(version.split(".")[0])
    except ValueError:
        return 0


def make(arg: str, config: BackendConfig) -> Backend:
    """Factory for ``hf:`` specs (see :mod:`lensbench.backends.providers`)."""
    return HFBackend(arg, config)
