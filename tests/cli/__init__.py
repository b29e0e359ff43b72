"""Tests of the podium command (podium.cli)."""
