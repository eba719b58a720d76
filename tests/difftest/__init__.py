"""Differential testing of lockscope's lock model against PostgreSQL (the oracle).

- :mod:`.render`: the drawn structures (schemas, statements, workloads: frozen dataclasses) and their SQL.
- :mod:`.strategies`: Hypothesis strategies that draw them, valid by construction (a small simulation of each
  table's keys keeps inserted keys fresh, foreign-key values existing and deletes/key updates allowed by the
  constraints' actions).
- :mod:`.harness`: runs a case on a scratch server (the model first, EXPLAIN only; then the truth, executed and
  rolled back), compares them per execution and per lock, and classifies the differences.

Used by ``tests/test_differential.py`` (the CI sample) and ``benchmarks/differential.py`` (the long run).
"""
