"""Tests of podium.models."""
