"""``import podium`` compiles nothing; a second process loads the compiled kernels from numba's disk cache."""

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
from podium.models.elo import pair_outcome, pairwise_gradient
from podium.models.plackett_luce import plackett_luce_gradient
kernels = (replay_likelihood, pair_outcome, pairwise_gradient, plackett_luce_gradient)
compiled_at_import = sum(len(k.signatures) for k in kernels)
podium.PlackettLuce().rate(podium.Match.ffa(["a", "b", "c"]), {})
stats = replay_likelihood.stats
print(json.dumps({"import": elapsed, "compiled": compiled_at_import,
                  "hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values())}))
"""


def run_probe() -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_import_compiles_nothing_and_the_cache_is_reused() -> None:
    run_probe()  # fills the on-disk cache if this checkout has none yet
    probe = run_probe()
    assert probe["compiled"] == 0
    assert probe["hits"] == 1 and probe["misses"] == 0, probe
    # Importing numba dominates (about 0.5 s here); compiling anything at import would take several seconds.
    # The figure itself is measured in benchmarks/replay.py, not here.
    assert probe["import"] < 3.0, probe
