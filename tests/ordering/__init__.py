"""Tests of podium.ordering."""
