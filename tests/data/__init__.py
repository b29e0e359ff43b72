"""Tests of podium.data."""
