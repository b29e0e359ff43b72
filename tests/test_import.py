"""``import podium`` compiles nothing and is quick; a second process reuses the compiled cache."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, time
t = time.perf_counter()
import podium
elapsed = time.perf_counter() - t
from podium.league import replay_likelihood
from podium.models.elo import pairwise_gradient
compiled_at_import = len(replay_likelihood.signatures) + len(pairwise_gradient.signatures)
t = time.perf_counter()
podium.Elo().rate(podium.Match([["a"], ["b"]]), {})
first_call = time.perf_counter() - t
print(json.dumps({"import": elapsed, "compiled": compiled_at_import, "first_call": first_call}))
"""


def run_probe() -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_import_compiles_nothing_and_the_cache_is_reused() -> None:
    run_probe()  # fills the on-disk cache if this checkout has none yet
    probe = run_probe()
    assert probe["compiled"] == 0
    # Compiling the replay kernels takes seconds; loading them from numba's cache takes milliseconds.
    assert probe["first_call"] < 1.0, probe
    assert probe["import"] < 2.0, probe
