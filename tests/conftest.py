"""Shared test settings for Hypothesis.

``podium`` (the default): no wall-clock deadlines (the machine is shared and noisy) and the same examples on
every run (``derandomize``), so that ``make test`` and CI pass or fail on the code alone, never on which
examples a run happened to draw.  ``explore`` draws new examples each run, 1,000 a property unless the test sets
its own number: the search for new counterexamples (``make explore``); what it finds goes into the tests as an
``@example``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("podium", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          max_examples=1000)
settings.load_profile("podium")
