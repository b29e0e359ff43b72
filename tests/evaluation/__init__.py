"""Tests of podium.evaluation."""
