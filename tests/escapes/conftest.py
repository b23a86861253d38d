"""The module-scoped `lab` fixture for the escape tests (defined once in tests/lab/helpers.py)."""

from __future__ import annotations

from tests.lab.helpers import lab

__all__ = ["lab"]
