"""ToyCount: a sixth benchmark added without editing lensbench (docs/adding-a-benchmark.md)."""
