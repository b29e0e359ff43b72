"""Schemathesis drives the league server in-process against the server's own OpenAPI schema.

Every built-in check is on (no 500, every status and body and header as the schema declares them, schema-valid
input accepted, schema-violating input refused, undeclared methods answered 405 with ``Allow``, writes refused
without their token, ...), with a fixed seed and a bounded number of examples per operation: the examples,
coverage and fuzzing phases per operation as admin, reporter and anonymous clients, then the stateful phase
(sequences of calls linked through the responses) as admin.  Each test starts from a fresh SQLite database
holding two leagues with matches, so that requests reach real leagues and matches, not only 404s; every league
the fuzz leaves must replay to its stored ratings.

One adjustment to the defaults: schema-valid input may be answered 422, since the schema cannot state every
rule a record follows (ranks as long as teams, one kind of time per league, distinct players, a model's
parameters).  The 422 body must still be the declared error.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402

from .conftest import auth, check_replayable  # noqa: E402

# A longer or different run: PODIUM_FUZZ_SEED=7 PODIUM_FUZZ_EXAMPLES=1000 pytest tests/server/test_schema_fuzz.py
SEED = int(os.environ.get("PODIUM_FUZZ_SEED", "45"))
MAX_EXAMPLES = int(os.environ.get("PODIUM_FUZZ_EXAMPLES", "200"))
STATEFUL_EXAMPLES = MAX_EXAMPLES * 3 // 5
STATEFUL_STEPS = 10

CONFIG = f"""
seed = {SEED}
suppress-health-check = ["all"]

[generation]
max-examples = {MAX_EXAMPLES}
with-security-parameters = false

[checks]
enabled = true
positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422"]

[phases.stateful]
enabled = true
max-steps = {STATEFUL_STEPS}
"""

#: The leagues there before the fuzz starts, and match ids in them.
LEAGUES = ("chess", "club")
MATCH_IDS = ("g1", "g2", "p1")


@dataclass
class Fuzz:
    """A fresh database made from the template: :meth:`start` serves a copy of it (the app schemathesis sends
    to), :meth:`stop` checks that every league in the copy replays to its stored ratings."""

    template: Path
    tokens: dict[str, str]
    copies: int = 0
    app: Any = None
    url: str = ""

    def start(self) -> None:
        from podium.server import Settings, create_app

        self.copies += 1
        self.url = str(self.template.with_name(f"fuzz{self.copies}.db"))
        shutil.copyfile(self.template, self.url)
        self.app = CURRENT.app = create_app(Settings(db=self.url, token_rate=0, address_rate=0, smoothing_interval=0),
                                            migrate_db=False)

    def stop(self) -> None:
        CURRENT.app = None
        self.app.state.engine.dispose()
        check_replayable(self.url)


@pytest.fixture
def fuzz(tmp_path: Path) -> Iterator[Fuzz]:
    """A template database with a recorded Elo league and a moderated TrueSkill league (one match pending,
    smoothing on), and an admin and a reporter token."""
    from fastapi.testclient import TestClient

    from podium.server import Settings, create_app
    from podium.server.store import create_token

    template = tmp_path / "template.db"
    app = create_app(Settings(db=str(template), token_rate=0, address_rate=0, smoothing_interval=0))
    tokens = {role: create_token(app.state.engine, role, f"fuzz {role}") for role in ("admin", "reporter")}
    admin = auth(tokens["admin"])
    with TestClient(app) as client:
        for body in ({"name": "chess", "model": "elo"},
                     {"name": "club", "model": "trueskill", "moderated": True, "smoothing": True}):
            assert client.post("/api/v1/leagues", json=body, headers=admin).status_code == 201
        for league, match_id in (("chess", "g1"), ("chess", "g2"), ("club", "p1")):
            response = client.post(f"/api/v1/leagues/{league}/matches", headers=admin,
                                   json={"id": match_id, "teams": [["ann"], ["bob"]], "time": 1})
            assert response.status_code in (201, 202), response.text
    app.state.engine.dispose()
    yield Fuzz(template, tokens)


class CurrentApp:
    """The ASGI app schemathesis sends to: the running test's own (schemathesis binds one app to the schema when
    the tests are collected; each test needs a fresh database)."""

    app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


CURRENT = CurrentApp()


def _served_schema() -> Any:
    """The schema an app serves (one on a scratch database it never migrates: the schema does not depend on it)."""
    from podium.server import Settings, create_app

    loaded = schemathesis.openapi.from_dict(create_app(Settings(db=str(Path(tempfile.mkdtemp()) / "schema.db")), migrate_db=False).openapi(),
                                            config=schemathesis.Config.from_str(CONFIG))
    loaded.app = CURRENT
    return loaded


schema = _served_schema()


def _pick(case: Any, choices: tuple[Any, ...], salt: str) -> Any:
    # Chosen by the case's content, so that a case replays as itself (drawing with @schema.given would turn off
    # the coverage phase).
    key = repr((salt, case.path_parameters, case.query, case.body)).encode()
    return choices[zlib.crc32(key) % len(choices)]


@pytest.fixture
def served(fuzz: Fuzz) -> Iterator[Fuzz]:
    """The template's copy served for one test."""
    fuzz.start()
    yield fuzz
    fuzz.stop()


def _aim(case: Any, leagues: set[str], matches: set[str]) -> None:
    """Half the time, send a case for a league or match nobody made to one that exists, so that the fuzz gets
    past the 404s (the choice follows the case's content, so a case replays as itself: drawing it with
    ``@schema.given`` would turn the coverage phase off)."""
    parameters = case.path_parameters or {}
    if parameters.get("name") not in leagues and _pick(case, (True, False), "league"):
        parameters["name"] = _pick(case, tuple(sorted(leagues)), "name")
    if "match_id" in parameters and parameters["match_id"] not in matches and _pick(case, (True, False), "match"):
        parameters["match_id"] = _pick(case, tuple(sorted(matches)), "match_id")


@schema.parametrize()
def test_every_operation_answers_as_its_schema_says(case: Any, served: Fuzz) -> None:
    role = _pick(case, ("admin", "reporter", None), "role")
    if case.path_parameters and "name" in case.path_parameters:
        _aim(case, set(LEAGUES), set(MATCH_IDS))
    case.call_and_validate(headers=auth(served.tokens[role]) if role else None)


def test_stateful_sequences_answer_as_the_schema_says(fuzz: Fuzz) -> None:
    headers = auth(fuzz.tokens["admin"])

    class Machine(schema.as_state_machine()):  # type: ignore[misc]
        # A fresh copy of the template per scenario: Hypothesis replays a scenario to shrink it, which needs the
        # server to answer it the same way again.
        def setup(self) -> None:
            fuzz.start()
            self.leagues, self.matches = set(LEAGUES), set(MATCH_IDS)

        def before_call(self, case: Any) -> None:
            if case.path_parameters and "name" in case.path_parameters:
                _aim(case, self.leagues, self.matches)

        def after_call(self, response: Any, case: Any) -> None:
            # What the scenario made (a link's target is left alone).
            if response.status_code in (200, 201, 202) and case.method == "POST":
                body = response.json()
                if case.path == "/api/v1/leagues":
                    self.leagues.add(body["name"])
                elif case.path.endswith("/matches"):
                    self.matches.add(body["id"])

        def teardown(self) -> None:
            fuzz.stop()

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {**super().get_call_kwargs(case), "headers": headers}

    Machine.run(settings=settings(max_examples=STATEFUL_EXAMPLES, stateful_step_count=STATEFUL_STEPS,
                                  derandomize=True, deadline=None, database=None,
                                  suppress_health_check=list(HealthCheck)))
