"""The workload: pg_stat_statements read over an interval and each top statement probed, for audit, forecast and
diagnose alike.

- :mod:`.statements`: two snapshots of pg_stat_statements counters, calls/s and times of the top statements, their
  texts, and pg_locks snapshots of the locks their backends hold during the interval (:func:`read_workload`);
- :mod:`.probes`: each statement probed with the footprint engine (custom plan, generic plan build, the cached
  generic plan's reuse derived), its calls split by plan-cache phase (:func:`probe_statements`), a probed plan as a
  statement shape (:func:`shape_from_plan`);
- :mod:`.phases`: which plan-cache phase the calls ran, from what the server records;
- :mod:`.params`: parameter values for a ``$n`` text's custom plan, from pg_stats;
- :mod:`.standins`: typed stand-ins for the constants pg_stat_statements replaced, when PREPARE cannot type the
  normalized text as it stands;
- :mod:`.coverage`: the share of the interval's calls and execution time a model holds.

Imports flow probes -> statements -> phases; nothing here imports audit, forecast or diagnose.
"""
