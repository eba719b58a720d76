"""Benchmark scripts (``python benchmarks/NAME.py``) and the benchmark-only library code they share
(``benchmarks.observer_paired``), importable from the repository root as the tests do."""
