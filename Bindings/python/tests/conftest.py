"""Shared fixtures. The tests import the package from this checkout's ``src`` (also set by
``pythonpath`` in pyproject.toml), so they test the code next to them, not an installed copy.
The library comes from ``OPTIMIST_LIBRARY`` or the package's documented search."""

import os
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

import optimist  # noqa: E402

#: The repository root (for the scenario corpus).
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def store():
    """A fresh in-memory store, closed after the test."""
    s = optimist.Store()
    yield s
    s.close()


def library_path() -> str:
    """The library file the package loaded (for tests that start subprocesses)."""
    return os.path.abspath(optimist.library_path)
