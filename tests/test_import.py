"""``import podium`` compiles nothing; a second process loads the compiled kernels from numba's disk cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, time
t = time.perf_counter()
import podium
elapsed = time.perf_counter() - t
from podium.kernels.elo import replay_likelihood
from podium.kernels.elo import pair_outcome, pairwise_gradient
from podium.ordering.luce import plackett_luce_gradient
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


PLAIN = """
import json, podium
from podium import Match, Rating
match = Match([["a"], ["b"], ["c"], ["d"], ["e"]], ranks=[1, 0, 1, None, None])
ratings = {"a": Rating(1510.0), "b": Rating(1490.0), "c": Rating(1700.0), "d": Rating(1400.0)}
out = {}
for name, model in [("pl", podium.PlackettLuce(order="elimination")), ("pw", podium.PairwiseElo(performance="gaussian"))]:
    out[name] = {p: r.mu for p, r in model.rate(match, ratings).items()}
    out[name + "_ll"] = model.log_likelihood(match, ratings)
print(json.dumps(out))
"""


def test_plain_python_mode_gives_the_compiled_results() -> None:
    # NUMBA_DISABLE_JIT=1 runs the same kernels as plain Python (for debugging and coverage).
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    plain = json.loads(subprocess.run([sys.executable, "-c", PLAIN], check=True, capture_output=True, text=True,
                                      env=env).stdout.strip().splitlines()[-1])
    compiled: dict = {}
    exec(PLAIN.replace("print(json.dumps(out))", ""), compiled)
    for key, value in compiled["out"].items():
        assert plain[key] == pytest.approx(value, rel=1e-12)
