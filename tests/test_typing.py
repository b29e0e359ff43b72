"""The package's type hints are checked by mypy (a dev dependency)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "podium"


def test_mypy_finds_no_type_errors() -> None:
    pytest.importorskip("mypy")
    result = subprocess.run([sys.executable, "-m", "mypy", str(SRC)], capture_output=True, text=True,
                            cwd=SRC.parents[1])
    assert result.returncode == 0, result.stdout + result.stderr
