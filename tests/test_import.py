"""Start-up: ``import podium`` loads nothing heavy, a single match runs without a compiler (interpreted, the same
numbers as compiled), and a history compiles its kernels once and loads them from numba's disk cache after."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("numba", "llvmlite", "scipy", "matplotlib", "pandas", "pyarrow", "fastapi", "sqlalchemy", "rich", "typer")


def run(code: str, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line last."""
    environment = {k: v for k, v in os.environ.items() if k not in ("PODIUM_JIT", "NUMBA_DISABLE_JIT")}
    environment.update(env)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_podium_loads_nothing_heavy() -> None:
    loaded = run(f"""
import json, sys
import podium
print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m == 'numpy')))
""")
    assert loaded == []


def test_the_public_names_resolve_lazily() -> None:
    import podium

    for name in podium.__all__:
        assert getattr(podium, name) is not None, name
    assert podium.plot is __import__("podium.evaluation.plot").evaluation.plot
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        podium.nothing  # noqa: B018


# Every model's single-match calls, a 500-duel League replay and a small smoothing; printed to compare.
CALLS = """
import json, sys, random
import podium
from podium import League, Match, Rating
duel, ffa, teams = [["a"], ["b"]], [["a"], ["b"], ["c"], ["d"]], [["a", "b"], ["c", "d"]]
ratings = {"a": Rating(26.0, 7.0), "b": Rating(24.0, 6.0), "c": Rating(27.0, 5.0)}
out = {}
models = {"Elo": podium.Elo(), "PairwiseElo": podium.PairwiseElo(), "PlackettLuce": podium.PlackettLuce(),
          "Thurstone": podium.Thurstone(), "TrueSkill": podium.TrueSkill(), "Glicko2": podium.Glicko2(),
          "EloMMR": podium.EloMMR()}
for name, model in models.items():
    r = {p: (x if model.prior.sigma else Rating(x.mu * 40 + 500)) for p, x in ratings.items()}
    if name == "Glicko2":
        r = {p: Rating(1500 + 40 * (x.mu - 25), 30 * x.sigma) for p, x in ratings.items()}
    if name == "EloMMR":
        r = {p: Rating(1500 + 40 * (x.mu - 25), 30 * x.sigma) for p, x in ratings.items()}
    shapes = (duel, ffa) if name not in ("Elo", "Glicko2") else (duel,)
    for shape in shapes:
        key = f"{name}/{len(shape)}"
        m = Match(shape, ranks=list(range(len(shape))))
        out[key + "/rate"] = {p: [x.mu, x.sigma] for p, x in model.rate(m, r).items()}
        out[key + "/ll"] = model.log_likelihood(m, r)
        out[key + "/win"] = model.win_probabilities(shape, r).tolist()
        out[key + "/quality"] = model.quality(shape, r)
    if name not in ("Elo", "Glicko2"):
        out[name + "/teams"] = {p: [x.mu, x.sigma] for p, x in model.rate(Match(teams), r).items()}
rng = random.Random(7)
history = [Match([[f"p{rng.randrange(40)}"], [f"q{rng.randrange(40)}"]], time=t) for t in range(500)]
for name in ("Elo", "TrueSkill"):
    board = League(models[name]).record_many(history).leaderboard(top=3)
    out[name + "/league"] = [[row.player, row.mu, row.sigma] for row in board]
smoothed = podium.TrueSkillThroughTime().smooth(history[:40])  # (from 50 it asks numba whether its kernels are cached)
out["ttt"] = {p: [x.mu, x.sigma] for p, x in sorted(smoothed.ratings().items())[:5]}
out["loaded"] = sorted(m.split(".")[0] for m in sys.modules if m.split(".")[0] in ("numba", "scipy"))
print(json.dumps(out))
"""


def test_single_matches_run_without_a_compiler_and_agree_with_the_compiled_kernels(tmp_path: Path) -> None:
    # A fresh install: numba's cache directory empty.  The interpreted path must not import numba at all.
    fresh = run(CALLS, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    assert fresh.pop("loaded") == []
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.nbi"))
    compiled = run(CALLS, PODIUM_JIT="compiled")
    assert "numba" in compiled.pop("loaded")
    # JSON carries each float's shortest repr, which reads back as the same double: equal to the last bit
    assert fresh == compiled


CACHED = """
import json
import podium
from podium.kernels.elo import replay_likelihood
podium.PlackettLuce().rate(podium.Match.ffa(["a", "b", "c"]), {})
stats = replay_likelihood.dispatcher().stats
print(json.dumps({"hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values())}))
"""


def test_compiled_kernels_are_cached_on_disk_and_loaded_by_the_next_process() -> None:
    run(CACHED, PODIUM_JIT="compiled")  # fills the on-disk cache if this checkout has none yet
    probe = run(CACHED, PODIUM_JIT="compiled")
    assert probe["hits"] == 1 and probe["misses"] == 0, probe


CACHE_STATE = """
import json
import podium
from podium import jit
from podium.kernels.elo import replay_likelihood
before = replay_likelihood.cached()
jit.set_mode("compiled")
podium.League(podium.Elo()).record_many([podium.Match([["a"], ["b"]])])
print(json.dumps({"before": before, "after": replay_likelihood.cached()}))
"""


def test_a_kernel_counts_as_cached_once_numba_cache_holds_it(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    first = run(CACHE_STATE, NUMBA_CACHE_DIR=cache)
    assert first == {"before": False, "after": True}  # an empty cache; then compiled in this process
    second = run(CACHE_STATE, NUMBA_CACHE_DIR=cache)
    assert second["before"] is True  # the next process finds it on disk before running it


@pytest.mark.parametrize(("in_cache", "expected"), [(True, [True] * 4 + [False]), (False, [True] * 10)])
def test_a_history_runs_interpreted_longer_when_its_kernels_would_have_to_compile(
        monkeypatch: pytest.MonkeyPatch, in_cache: bool, expected: list[bool]) -> None:
    """1,000 items of 10 ms each (10 s interpreted), in pieces of 1, 2, 4, ...: with the kernels in the cache the
    rest goes compiled once the pace is known (after the piece of 8, the rest would take over ``budget``); with
    them not in the cache, the whole history stays interpreted (under ``cold_budget``)."""
    from podium import jit
    from podium.kernels.elo import replay_likelihood

    clock = [0.0]
    calls: list[tuple[int, int, bool]] = []

    def run_items(start: int, stop: int) -> None:
        small = getattr(jit._local, "small", 0) > 0
        calls.append((start, stop, small))
        if small:
            clock[0] += 0.01 * (stop - start)
            jit._local.entered.add(replay_likelihood)

    monkeypatch.setattr(jit, "_mode", "auto")
    monkeypatch.setattr(jit, "_clock", lambda: clock[0])
    monkeypatch.setattr(jit, "cached", lambda *entries: in_cache and entries == (replay_likelihood,))
    jit.adaptive(1_000, run_items, budget=2.0, cold_budget=100.0)
    assert [small for _, _, small in calls] == expected
    assert calls[0][0] == 0 and calls[-1][1] == 1_000 and all(a[1] == b[0] for a, b in zip(calls, calls[1:]))
    calls.clear()
    jit.adaptive(100_000, run_items, budget=2.0, cold_budget=100.0)  # 1,000 s interpreted: compiled either way
    assert [small for _, _, small in calls] == [True] * 4 + [False]


BACKGROUND = """
import json, time
import podium
from podium import jit
from podium.kernels.elo import replay_likelihood
jit.BUDGET = 0.0  # the first interpreted call spends it: the kernel is queued for the background thread
model, match = podium.Elo(), podium.Match([["a"], ["b"]])
first = model.rate(match, {})
was = replay_likelihood.compiled
deadline = time.time() + 1000
while not replay_likelihood.compiled and time.time() < deadline:
    model.rate(match, {})
    time.sleep(0.05)
later = model.rate(match, {})
print(json.dumps({"was": was, "now": replay_likelihood.compiled, "first": first["a"].mu, "later": later["a"].mu}))
"""


def test_a_busy_kernel_is_compiled_in_the_background_and_then_runs_compiled() -> None:
    probe = run(BACKGROUND)
    assert probe["was"] is False and probe["now"] is True
    assert probe["later"] == probe["first"]


PLAIN = """
import json, podium
from podium import Match, Rating
match = Match([["a"], ["b"], ["c"], ["d"], ["e"]], ranks=[1, 0, 1, None, None])
ratings = {"a": Rating(1510.0), "b": Rating(1490.0), "c": Rating(1700.0), "d": Rating(1400.0)}
out = {}
history = [Match([["a"], ["b"], ["c"]], ranks=[i % 3, (i + 1) % 3, (i + 2) % 3]) for i in range(300)]
for name, model in [("pl", podium.PlackettLuce(order="elimination")), ("pw", podium.PairwiseElo(performance="gaussian"))]:
    out[name] = {p: r.mu for p, r in model.rate(match, ratings).items()}
    out[name + "_ll"] = model.log_likelihood(match, ratings)
    league = podium.League(model).record_many(history)
    out[name + "_history"] = {p: r.mu for p, r in league.ratings.items()}
print(json.dumps(out))
"""


@pytest.mark.parametrize("switch", [{"PODIUM_JIT": "interpreted"}, {"NUMBA_DISABLE_JIT": "1"}])
def test_interpreted_mode_gives_the_compiled_results(switch: dict[str, str]) -> None:
    plain = run(PLAIN, **switch)
    compiled = run(PLAIN, PODIUM_JIT="compiled")
    for key, value in compiled.items():
        assert plain[key] == value, key


def test_an_unknown_mode_is_refused_by_name() -> None:
    code = "import podium; podium.Elo()"
    environment = dict(os.environ, PODIUM_JIT="fast")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment)
    assert done.returncode != 0
    assert "PODIUM_JIT must be one of auto, compiled, interpreted. Got 'fast'." in done.stderr


EDGES = [0.0, -0.0, -1.0, -1e-300, 1e-300, 0.5, 1.0, 2.0, 700.0, 709.9, 710.0, 1e10, 1e308, -1e308, math.inf,
         -math.inf, math.nan]


@pytest.mark.parametrize("name", ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "lgamma", "sinh",
                                  "cosh", "atanh", "asinh", "acosh"])
def test_interpreted_math_gives_the_compiled_libm_results(name: str) -> None:
    # The reference is numba's compiled math (C's libm), the one the compiled kernels call.
    numba = pytest.importorskip("numba")
    from podium.jit import ieee

    compiled = numba.njit("float64(float64)")(eval(f"lambda x: math.{name}(x)", {"math": math}))
    for x in EDGES:
        want, got = compiled(x), getattr(ieee, name)(x)
        # the same special values; finite ones to a few units in the last place (Python has its own lgamma)
        assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want, rel=1e-15, abs=0.0), (name, x, got, want)


def test_interpreted_hypot_and_pow_give_the_compiled_results() -> None:
    numba = pytest.importorskip("numba")
    from podium.jit import ieee

    hypot = numba.njit("float64(float64, float64)")(lambda x, y: math.hypot(x, y))
    power = numba.njit("float64(float64, float64)")(lambda x, y: math.pow(x, y))
    for x in EDGES:
        for y in (0.0, -1.0, 0.5, 2.0, 1e300, -1e300, math.inf, math.nan):
            for f, g in ((hypot, ieee.hypot), (power, ieee.pow)):
                want, got = f(x, y), g(x, y)
                assert (math.isnan(want) and math.isnan(got)) or got == want, (g.__name__, x, y, got, want)


COMPILED_REPLAY = """
import json, podium
from podium.kernels.elo import replay_likelihood
history = [podium.Match([[f"p{i % 7}"], [f"q{i % 5}"]]) for i in range(50)]
league = podium.League(podium.Elo()).record_many(history)
print(json.dumps({"compiled": replay_likelihood.compiled, "top": league.leaderboard(top=1)[0].player}))
"""


def test_numba_cache_dir_takes_the_compiled_kernels_out_of_the_installation(tmp_path: Path) -> None:
    # A read-only installation: podium's source copied where no process has run it, numba told to cache elsewhere.
    import shutil

    source = Path(__file__).resolve().parent.parent / "src" / "podium"
    shutil.copytree(source, tmp_path / "site" / "podium", ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    probe = run(COMPILED_REPLAY, PODIUM_JIT="compiled", NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(tmp_path / "site"),
                PYTHONDONTWRITEBYTECODE="1")
    assert probe["compiled"] is True
    assert any(cache.rglob("*.nbi")), "numba wrote no cache index in NUMBA_CACHE_DIR"
    assert not any((tmp_path / "site").rglob("*.nb[ic]")), "numba wrote into the installation"
