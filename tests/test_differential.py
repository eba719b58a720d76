"""Differential test of lockscope's lock model: drawn schemas and statements, PostgreSQL 18 as the oracle.

Hypothesis draws cases (:mod:`tests.difftest.strategies`: 2-5 tables, plain, partitioned or sub-partitioned, with
indexes, foreign keys in every direction and with every action, PL/pgSQL triggers, views, sequences, identity
and serial columns, TOAST-sized values; then transactions of 1-5 statements valid by construction, with the
simple or the prepared protocol in each plan_cache_mode). Each workload runs on this module's own scratch server
(max_locks_per_transaction 16, autovacuum off): lockscope's model first (EXPLAIN only), then the statements for
real, 8 executions on one connection, rolled back (:mod:`tests.difftest.harness`).

The invariant: **no execution that lockscope labels exact differs from the server** in any (relation, mode,
fast-path flag); lockscope must also not fail (crash, raise an error of its own, or not end) on a statement the
server runs. The sample is fixed (``derandomize``) and bounded (about a minute); the long run is
``python -m benchmarks.differential``. A failure prints every class of difference (:func:`harness.signature`)
and the smallest case of each: its schema, statements, parameters, protocol, mode and the per-lock difference.

``LOCKSCOPE_DIFFTEST_SHRINK=1`` makes the test stop at the first violating case and let Hypothesis shrink it to a
minimal one (minutes while the model is wrong on many shapes).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, Phase, Verbosity, given, settings

from lockscope.server import ScratchServer

from .difftest.harness import SETTINGS, CaseRunner, WorkloadResult, census, summarize
from .difftest.render import Case
from .difftest.strategies import cases
from .fix_versions import bin_dir_of
from .servers import DataTemplates

MAJOR = 18
#: Cases drawn (each a schema with 1-3 workloads): about a minute on PG 18 on a 2-core machine.
MAX_EXAMPLES = 150
SHRINK = os.environ.get("LOCKSCOPE_DIFFTEST_SHRINK") == "1"
#: At most this share of the drawn workloads may fail for real (a generator that draws invalid statements tests
#: nothing).
MAX_INVALID_SHARE = 0.1
#: lockscope failing on a statement the server runs: an exception of its own, a crash, a loop that does not end.
LOCKSCOPE_FAILURES = ("model-error", "crash", "model-hang")
#: Classes of difference whose smallest case the failure message prints in full (all are listed).
EXAMPLES = 10


@pytest.fixture(scope="module")
def diff_server(data_templates: DataTemplates) -> Iterator[ScratchServer]:
    """This module's own PostgreSQL 18 (its schemas come and go: one per case)."""
    with ScratchServer(bin_dir_of(MAJOR), SETTINGS) as server:
        if server.major != MAJOR:
            pytest.fail(f"{server.bin_dir} is PostgreSQL {server.major}, not {MAJOR}", pytrace=False)
        yield server


def _failures(results: list[WorkloadResult]) -> list[WorkloadResult]:
    """Workloads that break the invariant: an execution labelled exact that differs, or lockscope failing on a
    statement the server ran."""
    return [r for r in results if r.status in LOCKSCOPE_FAILURES
            or any(e.wrong_and_exact for e in r.executions)]


def _message(results: list[WorkloadResult], failing: list[WorkloadResult]) -> str:
    s = summarize(results)
    execs = sum(e.wrong_and_exact for r in failing for e in r.executions)
    lines = [f"{len(failing)} of {len(results)} workloads break the invariant: {execs} executions "
             f"labelled exact differ from PostgreSQL {MAJOR}; "
             f"{sum(r.status in LOCKSCOPE_FAILURES for r in failing)} lockscope failures "
             f"(exact share {s['exact_share']:.1%}, labelled unknown {s['labelled_unknown_share']:.1%} of "
             f"{s['executions_compared']} executions)"]
    crashes = [r for r in failing if r.status in LOCKSCOPE_FAILURES]
    classes = census([r for r in failing if r.status == "compared"])
    for n, c in enumerate(classes, 1):
        lines.append(f"{n:2}. {c['workloads']} workloads, {c['labelled_exact']} executions labelled exact: "
                     f"{c['statement']} | {c['difference']} | {c['protocol']} | executions "
                     f"{c['differing_executions']}")
    for n, c in enumerate(classes[:EXAMPLES], 1):
        lines += ["", f"--- class {n}, smallest case:", c["example"]["report"]]
    for r in crashes[:3]:
        lines += ["", "--- lockscope failed:", r.report()]
    return "\n".join(lines)


@pytest.mark.slow
def test_executions_labelled_exact_match_the_server(diff_server: ScratchServer) -> None:
    runner = CaseRunner(diff_server)
    results: list[WorkloadResult] = []
    seen: set[str] = set()
    phases = (Phase.explicit, Phase.generate, Phase.shrink) if SHRINK else (Phase.explicit, Phase.generate)

    @settings(derandomize=True, max_examples=MAX_EXAMPLES, deadline=None, database=None, phases=phases,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet if not SHRINK else Verbosity.normal)
    @given(case=cases(MAJOR, max_workloads=3))
    def run_case(case: Case) -> None:
        key = repr(case)
        if key in seen and not SHRINK:
            return  # Hypothesis drew the same case twice: its result is in already
        seen.add(key)
        found = runner.run(case)
        results.extend(found)
        if SHRINK:
            failing = _failures(found)
            assert not failing, _message(found, failing)

    run_case()
    broken = [r for r in results if r.status == "schema-error"]
    if broken:
        pytest.fail("the generator drew a schema PostgreSQL refuses:\n" + broken[0].report(), pytrace=False)
    harness = [r for r in results if r.status == "harness-error"]
    if harness:
        pytest.fail("the executed truth failed (a harness error, not the model's):\n" + harness[0].report(),
                    pytrace=False)
    invalid = [r for r in results if r.status == "invalid"]
    if len(invalid) > MAX_INVALID_SHARE * len(results):
        pytest.fail(f"{len(invalid)} of {len(results)} drawn workloads failed for real (the generator should draw "
                    "valid ones):\n" + "\n\n".join(r.report() for r in invalid[:3]), pytrace=False)
    failing = _failures(results)
    if failing:
        pytest.fail(_message(results, failing), pytrace=False)
