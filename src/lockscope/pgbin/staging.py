"""Stage, then rename: how a directory that other processes may read (a cached installation, a relocated copy of
binaries, a built test program) comes into being whole or not at all.

The directory is filled in a temporary directory beside its final place (:func:`staging_dir`: same file system),
a completion marker is written into it last, and one ``os.rename`` publishes it (:func:`publish`). A reader checks
the marker (:func:`is_complete`), so it never sees half a copy; two processes filling the same directory at once
both finish, and the second one's rename fails harmlessly (the first one's complete directory stays).

Users: :func:`lockscope.pgbin.relocate.runnable_bin_dir` (the system user's copy of a bin directory), the ``lab
install`` cache (:mod:`lockscope.pgbin.install`, :mod:`lockscope.pgbin.sources`), and the test suite's driver
programs (``tests/drivers``).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["is_complete", "publish", "staging_dir"]


def is_complete(final: Path, marker: str) -> bool:
    """Whether ``final`` was published (its ``marker`` file exists)."""
    return (final / marker).exists()


@contextlib.contextmanager
def staging_dir(final: Path) -> Iterator[Path]:
    """A new empty directory beside ``final`` (``FINAL_PARENT/.NAME-XXXX``; the parent is created), removed at the
    end of the ``with`` block unless :func:`publish` renamed it to ``final``.

    :raises OSError: the parent cannot be created or written.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def publish(staging: Path, final: Path, *, marker: str, text: str, replace: bool = False) -> None:
    """Write ``marker`` (``text``) into ``staging`` and rename ``staging`` to ``final``.

    An incomplete ``final`` (a killed run's half copy) is removed first; a complete one is kept (another process
    published first: the rename then fails and that is not an error) unless ``replace``, which removes it (the
    caller serialises replacing runs, e.g. with a lock). ``staging`` and ``final`` must be on one file system
    (:func:`staging_dir` makes it so).

    :raises OSError: the rename failed and ``final`` is not complete (or ``replace`` was asked).
    """
    (staging / marker).write_text(text)
    if final.exists() and (replace or not is_complete(final, marker)):
        shutil.rmtree(final, ignore_errors=True)
    try:
        staging.rename(final)
    except OSError:
        if replace or not is_complete(final, marker):
            raise
