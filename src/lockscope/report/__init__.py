"""Renderers: terminal (rich), JSON, self-contained HTML. No engine logic, no SQL."""
