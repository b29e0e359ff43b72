"""Tests of podium.integrity."""
