"""Distributed tests run each rank in its own process (see launcher.py)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "big: moves more than 64 MiB per rank (runs by default; deselect with -m 'not big')",
    )
