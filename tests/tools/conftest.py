"""Tiny random models for the training-recipe tests, built once per session (no downloads)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_vlm(tmp_path_factory):
    """``kind -> saved folder`` of :func:`lensbench.tools.training.tiny_vlm.save_tiny_vlm` (each built once)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from lensbench.tools.training.tiny_vlm import save_tiny_vlm

    made: dict[str, object] = {}

    def get(kind: str):
        if kind not in made:
            made[kind] = save_tiny_vlm(kind, tmp_path_factory.mktemp(kind.replace(".", "")))
        return made[kind]

    return get


@pytest.fixture(scope="session")
def tiny_editor(tmp_path_factory):
    """A saved tiny Qwen-Image-Edit-Plus pipeline folder."""
    pytest.importorskip("torch")
    pytest.importorskip("diffusers")
    from lensbench.tools.training.tiny_editor import save_tiny_editor

    return save_tiny_editor(tmp_path_factory.mktemp("editor"))
