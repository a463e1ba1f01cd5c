"""Test helpers shipped with lensbench (a local OpenAI-compatible server for tests and benchmarks)."""
