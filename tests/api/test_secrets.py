"""Nothing a seat may not see ever reaches it: games of every ruleset are played through the
API while every response to each seat (state, legal actions, events, errors) is checked
against the secrets the store holds; and no response before the end holds the seed."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from projections.ruleset import Ruleset, all_rulesets
from service.bootstrap import Services
from tests.api.conftest import bearer
from tests.api.playing import Interlude, play_to_the_end

#: the extra reads and refused posts happen every this many actions, and more rarely once
#: a long game is well under way (bounded CI time)
EVERY = 7
EVERY_LATER = 60
LATER = 350


def sub_objects(value: Any) -> list[Any]:
    """Every dict and list inside a JSON value, itself included."""
    found = [value] if isinstance(value, dict | list) else []
    children = (
        value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    )
    for child in children:
        found.extend(sub_objects(child))
    return found


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class SecretWatch:
    """What the store holds that each seat may not see, and the check of each response."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.game: dict[str, Any] | None = None
        self.read = 0
        #: (seats that may see it, canonical JSON of each part) of every secret so far
        self.secrets: list[tuple[set[int], set[str]]] = []
        self.seed = ""
        self.token_hashes: list[str] = []
        self.checked = 0

    def refresh(self) -> None:
        assert self.game is not None
        for envelope in self.services.store.read(self.game["id"], after=self.read):
            self.read = envelope["seq"]
            secret = envelope.get("secret")
            if not secret:
                continue
            if envelope["type"] == "game_created":
                self.seed = secret["seed"]
                self.token_hashes = list(secret["seat_token_hashes"])
            parts = {
                canonical(value)
                for key, value in secret.items()
                if key != "visible_to" and isinstance(value, dict | list) and value
            }
            self.secrets.append((set(secret.get("visible_to", [])), parts))

    def finished(self) -> bool:
        assert self.game is not None
        game = self.services.folder.load(self.game["id"])
        return bool(game.ruleset.status(game.state).get("finished"))

    def check_view(self, seat: int | None, body: dict[str, Any]) -> None:
        """The state shown is exactly this seat's view (the ruleset's ``view`` is what the
        playout conformance check proves leaks nothing), never another seat's."""
        assert self.game is not None
        game = self.services.folder.load(self.game["id"])
        if game.version != body["version"]:
            return  # an automatic step landed in between; the next round checks again
        assert body["state"] == game.ruleset.view(game.state, seat), f"not seat {seat}'s view"

    def check(self, seat: int | None, response: TestResponse, lists_actions: bool = False) -> None:
        assert self.game is not None
        self.refresh()
        if self.finished():
            return  # everything is public at the end; what came before was checked before
        text = response.get_data(as_text=True)
        assert self.seed and self.seed not in text, "the seed left the service before the end"
        for digest in self.token_hashes:
            assert digest not in text, "a token hash left the service"
        for other, ticket in enumerate(self.game["seats"]):
            if other != seat:
                assert ticket["token"] not in text, f"seat {other}'s token reached {seat}"
        body = response.get_json(silent=True)
        if body is None:
            return
        mine = set().union(*(parts for seats, parts in self.secrets if seat in seats))
        hidden = set().union(*(parts for seats, parts in self.secrets if seat not in seats))
        for found in sub_objects(body):
            if isinstance(found, dict) and found.get("secret") is not None and "seq" in found:
                assert seat in found["secret"]["visible_to"], f"event {found['seq']} to {seat}"
            if lists_actions:
                continue  # a listed legal action may well equal another seat's secret choice
            key = canonical(found)
            assert key not in hidden or key in mine, f"another seat's secret reached {seat}"
        self.checked += 1


def interlude_for(
    client: FlaskClient, watch: SecretWatch, ruleset: Ruleset, rng: random.Random
) -> Interlude:
    kinds = sorted(ruleset.action_schemas()) or ["pass"]

    def interlude(game: dict[str, Any], step: int) -> None:
        watch.game = game
        if step % (EVERY if step < LATER else EVERY_LATER):
            return
        seats: list[int | None] = [*range(len(game["seats"])), None]
        for seat in seats:
            headers = bearer(game["seats"][seat]["token"]) if seat is not None else {}
            for path in ("/state", f"/events?after={max(0, watch.read - 20)}&limit=50"):
                response = client.get(f"/games/{game['id']}{path}", headers=headers)
                assert response.status_code == 200
                watch.check(seat, response)
                if path == "/state":
                    watch.check_view(seat, response.json)
            if seat is None:
                continue
            # Refusals carry no secrets either: an action out of place (which now and then
            # happens to be legal, and is then simply played) and a malformed one.
            for body in ({"type": rng.choice(kinds)}, {"type": rng.choice(kinds), "x": 1}):
                answer = client.post(f"/games/{game['id']}/actions", json=body, headers=headers)
                assert answer.status_code in (201, 409, 422), answer.json
                watch.check(seat, answer)

    return interlude


@pytest.mark.parametrize("ruleset", all_rulesets(), ids=lambda ruleset: ruleset.id)
def test_no_response_to_a_seat_holds_another_seats_secrets_or_the_seed(
    client: FlaskClient, services: Services, ruleset: Ruleset
) -> None:
    rng = random.Random(f"secrets-{ruleset.id}")
    watch = SecretWatch(services)

    def observe(seat: int | None, response: TestResponse) -> None:
        watch.check(seat, response, lists_actions=response.request.path.endswith("legal-actions"))

    summary = play_to_the_end(
        client, services, ruleset, rng, observe, interlude_for(client, watch, ruleset, rng)
    )
    assert summary["seed"] == watch.seed
    assert watch.checked > 0
