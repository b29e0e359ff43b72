"""Where the tests find the project and the shared real histories (``../shared/data`` beside the checkout; a test
that needs one skips cleanly where it is absent)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import podium

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"


def load(folder: str) -> podium.Matches:
    """A shared history by its folder name (records podium refuses skipped), or the test skipped if it is absent."""
    path = SHARED / folder / "matches.jsonl.gz"
    if not path.exists():
        pytest.skip(f"{path} is not present (the real data sets live in ../shared/data)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # some sets hold records podium refuses; skip those
        return podium.read_matches(path, errors="skip")
