"""The shape of the code: one package per layer, one direction of dependency, no import cycle, no module over 600 lines.

The import graph is read with ``ast`` from the source, every ``import`` statement counted wherever it stands (a
function's deferred import is a dependency too: it is how the old circle between the engine and the models hid).
The layers are the packages of ``src/podium/`` and the picture in ``docs/design.md`` ("Layers and files"): a
package may import its own modules (without a cycle) and the packages below it, never one above, and no name with
a leading underscore from another package.  A module outside every package fails the test, so a new module is
placed in a layer when it is written.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
MAX_LINES = 600

# Lowest first; a package may import its own layer (without a cycle) and the layers below, never one above.
LAYERS: list[tuple[str, str]] = [
    ("compiler", r"podium\.jit(\.\w+)*"),  # how kernels run, compiled or interpreted
    ("data", r"podium\.data(\.\w+)*"),
    ("ordering engine", r"podium\.ordering(\.\w+)*"),
    ("kernels", r"podium\.kernels(\.\w+)*"),
    ("models", r"podium\.models(\.\w+)*"),
    ("replay engine", r"podium\.engine(\.\w+)*"),
    ("evaluation", r"podium\.evaluation(\.\w+)*"),
    ("integrity", r"podium\.integrity(\.\w+)*"),
    ("applications", r"podium(\.cli(\.\w+)*|\.server(\.\w+)*)?"),  # podium itself: its __init__ lists the public names
]

# The public names as issue 30 found them: the layout may add names, never lose one.
PUBLIC = {
    "podium": ["AbuseSimulation", "Audit", "Components", "ConvergenceWarning", "Elo", "EloMMR", "FitResult", "Flag",
               "Glicko2", "League", "LeaderboardRow", "Match", "MatchError", "Matches", "Model", "PairwiseElo",
               "PlackettLuce", "PlayerState", "Rating", "Report", "Simulation", "SmoothTrajectory", "Smoothed",
               "ThinLink", "Thurstone", "Trajectory", "TrueSkill", "TrueSkillThroughTime", "audit", "components",
               "evaluate", "fit", "read_matches", "scan_matches", "simulate", "simulate_abuse", "write_matches"],
    "podium.ordering": ["DENSITIES", "log_order", "log_outcome", "log_win_probabilities", "rank_probabilities"],
    "podium.plot": ["trajectories"],
}


def modules() -> dict[str, Path]:
    """Every module under ``src/`` by dotted name (a package by its own name)."""
    found = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` imports anywhere in its body (``from a import b`` names the module
    ``a.b`` when that is a module, else ``a``)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + (node.module.split(".") if node.module else []))
            targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module for alias in node.names]
        else:
            continue
        out.update(t for t in targets if t in known and t != name)
    return out


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imported(name, path, set(found)) for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def layer(name: str) -> int:
    for i, (_, pattern) in enumerate(LAYERS):
        if re.fullmatch(pattern, name):
            return i
    raise AssertionError(f"{name} is in no layer of tests/test_layers.py (and of docs/design.md's picture)")


def package(name: str) -> str:
    """The layer package a module belongs to (``podium`` itself for the top-level ``__init__``)."""
    return ".".join(name.split(".")[:2])


def private_imports(name: str, path: Path) -> list[str]:
    """``from a import _b`` statements in ``path`` whose module ``a`` is in another package than ``name``."""
    package_parts = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = package_parts[: len(package_parts) - node.level + 1] if node.level else []
            module = ".".join(base + (node.module.split(".") if node.module else []))
            found += [f"{name} imports {alias.name} from {module}" for alias in node.names
                      if alias.name.startswith("_") and not alias.name.startswith("__")
                      and module.startswith("podium") and package(module) != package(name)]
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    # the old circle in miniature: the engine imports a kernel whose module imports the engine back
    edges = {"league": {"elo"}, "elo": {"base"}, "base": {"league"}, "io": {"league"}}
    assert cycles(edges) == [["base", "elo", "league"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_deferred_imports_count(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from .other import thing\n    return thing\n")
    assert imported("podium.m", path, {"podium.m", "podium.other"}) == {"podium.other"}
    path.write_text("from . import other\nfrom .pkg import sub as s\n")
    assert imported("podium.m", path, {"podium.m", "podium.other", "podium.pkg", "podium.pkg.sub"}) == {
        "podium.other", "podium.pkg.sub"}


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_the_top_of_the_tree_is_the_layers() -> None:
    # what a newcomer sees in src/podium/: the public names' __init__ and one package per layer, nothing loose
    entries = sorted(p.name for p in (SRC / "podium").iterdir() if p.name not in ("__pycache__", "py.typed"))
    assert len(entries) <= 11, entries  # __init__.py, a package per layer (the applications have two)
    loose = [e for e in entries if e != "__init__.py" and not (SRC / "podium" / e / "__init__.py").exists()]
    assert loose == []
    for e in entries:  # each a layer of LAYERS (layer() raises for a package in none)
        if e != "__init__.py":
            layer(f"podium.{e}")


def test_no_private_name_crosses_a_package(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("from ..data.matches import _Hidden, Public\nfrom .sibling import _fine\n")
    assert private_imports("podium.engine.m", path) == ["podium.engine.m imports _Hidden from podium.data.matches"]
    assert [line for name, path in modules().items() for line in private_imports(name, path)] == []


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_the_public_names_import_as_before(module: str) -> None:
    imported_module = importlib.import_module(module)
    missing = [name for name in PUBLIC[module] if not hasattr(imported_module, name)]
    assert missing == []
    if module == "podium":
        assert set(PUBLIC[module]) <= set(imported_module.__all__)


def test_imports_go_down_the_layers() -> None:
    upward = [f"{a} ({LAYERS[layer(a)][0]}) imports {b} ({LAYERS[layer(b)][0]})"
              for a, targets in graph().items() for b in sorted(targets) if layer(b) > layer(a)]
    assert upward == []


def test_the_engine_knows_no_model_by_name() -> None:
    models = {name for name in modules() if name.startswith(("podium.models.", "podium.kernels."))} - {
        "podium.models.base", "podium.kernels.common"}
    assert graph()["podium.engine.league"] & models == set()
    tree = ast.parse((SRC / "podium" / "engine" / "league.py").read_text())
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    used |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    # no model class, and no dispatch on a model's kind (what league.py did before the kernels layer)
    assert used & {"Elo", "PairwiseElo", "PlackettLuce", "Thurstone", "TrueSkill", "Glicko2", "_kind", "PAIRWISE",
                   "PLACKETT_LUCE"} == set()


@pytest.mark.parametrize("name", sorted(modules()))
def test_module_length(name: str) -> None:
    lines = len(modules()[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name}: {lines} lines"


def test_every_package_has_an_init() -> None:
    # setuptools' find_packages ships only directories with an __init__.py; a namespace package imports from a
    # checkout and is missing from the installed wheel
    # (Alembic's migration scripts are data that the server reads from its directory, shipped as package data)
    bare = sorted(str(d.relative_to(SRC)) for d in SRC.rglob("*") if d.is_dir() and any(d.glob("*.py"))
                  and not (d / "__init__.py").exists() and "migrations" not in d.parts)
    assert bare == []
