"""``lockscope lab``: reproduce the lock-manager cliff on scratch servers — scenarios, runner, results, compare.

Each scenario is a frozen configuration with ``plan()``, ``parameters()`` and ``run(ctx)``; :func:`run_lab`
runs one into a results directory (results.json / results.csv after every point; plots and report.html at the
end, written by ``lockscope.report.lab_report.write_lab_report``). ``lab install`` and ``--pg-bin`` live in
:mod:`lockscope.pgbin`.
"""

from .indexes import IndexesScenario
from .partitions import PartitionsScenario
from .prepared import PreparedScenario
from .replay import ReplayScenario
from .results import LabResult, load_results
from .runner import LabContext, LabProgress, NullProgress, run_lab

__all__ = [
    "IndexesScenario",
    "LabContext",
    "LabProgress",
    "LabResult",
    "NullProgress",
    "PartitionsScenario",
    "PreparedScenario",
    "ReplayScenario",
    "load_results",
    "run_lab",
]
