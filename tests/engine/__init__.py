"""Tests of podium.engine."""
