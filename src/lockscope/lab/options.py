"""Option checks shared by the lab scenarios: one set of bounds for PostgreSQL installations, scale,
max_locks_per_transaction, clients, durations and sampling rate, and the integer-list syntax of the CLI.

Every check raises :class:`~lockscope.errors.BadInputError` with the option's name, before any server starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import BadInputError

__all__ = [
    "MAX_CLIENTS",
    "MAX_DURATION_S",
    "MAX_HZ",
    "MAX_MLPT",
    "MAX_SCALE",
    "MIN_MLPT",
    "check_options",
    "parse_int_list",
    "pg_bins_parameter",
]

#: Upper bound on one pgbench run and on a warm-up (s).
MAX_DURATION_S = 600
#: Upper bound on pgbench clients (count).
MAX_CLIENTS = 200
#: Upper bound on the wait-event sampling rate (Hz).
MAX_HZ = 100
#: pgbench scale factor bounds (1..MAX_SCALE; 100,000 pgbench_accounts rows each).
MAX_SCALE = 1000
#: max_locks_per_transaction bounds (PostgreSQL's own minimum is 10).
MIN_MLPT = 10
MAX_MLPT = 1_000_000


def check_options(
    *,
    pg_bins: Sequence[Path | None],
    mlpts: Sequence[int] = (),
    scale: int | None = None,
    clients: int | None = None,
    duration_s: float | None = None,
    warmup_s: float = 0.0,
    sample_hz: float | None = None,
) -> None:
    """Check the options a scenario has (None / empty = the scenario has no such option).

    :param pg_bins: PostgreSQL installations to run (at least one; None = the embedded PostgreSQL 18).
    :param mlpts: max_locks_per_transaction values (each MIN_MLPT..MAX_MLPT).
    :param scale: pgbench scale factor (1..MAX_SCALE).
    :param clients: pgbench clients (1..MAX_CLIENTS).
    :param duration_s: pgbench run per point (1..MAX_DURATION_S s).
    :param warmup_s: unmeasured pgbench run per point (0..MAX_DURATION_S s).
    :param sample_hz: wait-event sampling rate (1..MAX_HZ Hz).
    :raises BadInputError: the first value out of bounds, naming its option.
    """
    if clients is not None and not 1 <= clients <= MAX_CLIENTS:
        raise BadInputError(f"--clients must be between 1 and {MAX_CLIENTS}")
    if duration_s is not None and not 1 <= duration_s <= MAX_DURATION_S:
        raise BadInputError(f"--duration must be between 1 and {MAX_DURATION_S} s")
    if not 0 <= warmup_s <= MAX_DURATION_S:
        raise BadInputError(f"--warmup must be between 0 and {MAX_DURATION_S} s")
    if sample_hz is not None and not 1 <= sample_hz <= MAX_HZ:
        raise BadInputError(f"--sample-hz must be between 1 and {MAX_HZ}")
    if scale is not None and not 1 <= scale <= MAX_SCALE:
        raise BadInputError(f"--scale must be between 1 and {MAX_SCALE}")
    if any(not MIN_MLPT <= m <= MAX_MLPT for m in mlpts):
        raise BadInputError(f"--mlpt must be between {MIN_MLPT} and {MAX_MLPT}")
    if not pg_bins:
        raise BadInputError("no PostgreSQL to run")


def pg_bins_parameter(pg_bins: Sequence[Path | None]) -> list[str]:
    """The installations as results.json records them: bin directories, ``embedded`` for the embedded one."""
    return [str(p) if p else "embedded" for p in pg_bins]


def parse_int_list(text: str, *, what: str, minimum: int = 0, maximum: int = 100_000) -> tuple[int, ...]:
    """``"0,8,32"`` or ``"0-30"`` / ``"0-30:5"`` (range with step) -> sorted distinct ints.

    :raises BadInputError: not numbers, out of ``minimum..maximum``, empty.
    """
    values: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part[1:]:
                span, _, step = part.partition(":")
                lo, hi = span.split("-", 1)
                values.update(range(int(lo), int(hi) + 1, int(step) if step else 1))
            else:
                values.add(int(part))
        except ValueError:
            raise BadInputError(f"{what}: not a list of whole numbers: {text!r}") from None
    if not values:
        raise BadInputError(f"{what}: empty list")
    bad = [v for v in values if not minimum <= v <= maximum]
    if bad:
        raise BadInputError(f"{what}: {bad[0]} is outside {minimum}..{maximum}")
    return tuple(sorted(values))
