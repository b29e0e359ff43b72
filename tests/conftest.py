"""Shared test settings: Hypothesis without wall-clock deadlines (the machine is shared and noisy)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("podium", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("podium")
