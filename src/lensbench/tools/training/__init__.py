"""The shared training layer of the papers' recipes (written once; it names no benchmark).

* :mod:`.sft_data` — lensbench's SFT example file (JSONL: a conversational ``prompt`` / ``completion``
  pair plus image paths), read, validated and turned into a lazily decoded ``datasets.Dataset``;
* :mod:`.exports` — the same examples as ms-swift, LLaMA-Factory (ShareGPT) and LLaVA files;
* :mod:`.settings` — training settings (pydantic) for image/video LLMs and for image editors;
* :mod:`.vlm_sft` — TRL ``SFTTrainer`` + peft LoRA (or full fine-tuning) for image-text models:
  loss on the assistant turn only, images through the model's own processor, fixed seeds,
  checkpoints, resume, a JSONL progress log, and a merged model folder that ``hf:`` evaluates;
* :mod:`.editor_lora` — a diffusers + accelerate + peft flow-matching LoRA loop for
  Qwen-Image-Edit pipelines (modelled on diffusers' ``train_dreambooth_lora_qwen_image.py``);
* :mod:`.editor_weighting` — its timestep draw and per-timestep loss weight: diffusers' (default) or
  DiffSynth-Studio's Qwen-Image trainer's (``loss_weighting=diffsynth``);
* :mod:`lensbench.backends.images.lora_keys` — LoRA state dicts between DiffSynth-Studio and diffusers key names;
* :mod:`.checkpoints` — checkpoints written to ``tmp-checkpoint-N`` and renamed when complete; the
  resume scan that takes the last complete one and reports incomplete ones;
* :mod:`.guards` — finite loss / weights, LoRA targets matched on the meta device before weights load,
  the checkpoint-safe ``SFTTrainer``;
* :mod:`.measure` — wall time, samples/s and peak memory of a training run;
* :mod:`.eval_callback` — a ``TrainerCallback`` evaluating the model in memory during training (``hf:``
  around the live model, one resumable run folder per step, metrics with CIs to the trainer's loggers, a curve);
* :mod:`.tiny_vlm`, :mod:`.tiny_editor` — tiny random models built from configs (``lensbench train tiny``);
* :mod:`.demo_boxes` — the drawn boxes of the recipes' demo data (``lensbench train demo-data``).

Recipes (data -> train -> evaluate -> paper table) live with their benchmark under ``tools/<name>/``.
Heavy libraries are imported inside functions through :func:`lensbench.core.extras.require`
(``pip install 'lensbench[train]'``).
"""
