"""``lockscope diagnose``: watch + audit + forecast composed into one answer (:mod:`.engine`)."""

from .engine import DiagnoseOptions, Diagnosis, run_diagnose

__all__ = ["DiagnoseOptions", "Diagnosis", "run_diagnose"]
