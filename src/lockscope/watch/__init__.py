"""Active-session sampling for ``lockscope watch`` (and the lab's wait-event figures)."""
