"""GroundingME's official release (``lensbench data download | check groundingme``): its source and the
files its loader reads (the images are inside the parquet shards, or inside VLMEvalKit's TSV, which the
loader reads as well)."""

from __future__ import annotations

from lensbench.benchmarks.layout import FileSet, Layout, Release, Source

__all__ = ["LAYOUT"]

LAYOUT = Layout(
    bench="groundingme",
    # revision as read and pinned by an independent project (public registry of sources, 2026-09-03)
    source=Source("hf", "lirang04/GroundingME", "78e3c7974b2b1db0ea52266969e40f664a38e330",
                  allow_patterns=("*.parquet", "*.md", "*.json")),
    # the loader reads either form (benchmarks/groundingme/data.py::load_groundingme)
    files=(FileSet("parquet shards or VLMEvalKit's groundingme.tsv", ("*.parquet", "*/*.parquet", "groundingme.tsv"),
                   minimum=1),),
    n_samples=1005, samples_what="samples",
    # the test split: 1,005 samples, each its own cluster
    release=Release(1005, "samples", 1005, "samples"),
    markers=("*.parquet", "*/*.parquet", "groundingme.tsv"),
)

