"""A random bot written the way a third-party integrator would write one: against the client
that openapi-python-client generates from openapi.yaml (package ``meeple_ledger_client``),
with no hand-written model and no cast.

It creates a game, holds every seat's token, follows the game's live stream
(``GET /games/{id}/stream``, read with httpx-sse) to learn when an automatic step has run,
and plays for whichever seat is to act: one of that seat's legal actions, posted back
verbatim, until the game ends. It counts every HTTP request it sends.

The bot reads the action answer's ``status`` and ``legal_actions`` when the service sends
them (``?include=legal_actions``, docs/api.md), and falls back to ``GET /games/{id}``
and ``GET .../legal-actions`` when it does not; so the same code needs fewer requests per
action as soon as the service answers with more.

    python tests/clients/python_bot.py --base-url http://127.0.0.1:8000 gutenberg restoration

prints one JSON object a game: ruleset, game id, actions, requests, requests per action.
``tests/clients/test_python_client.py`` generates the client, checks this file with
``mypy --strict`` and runs it against a live server.
"""

from __future__ import annotations

import argparse
import json
import queue
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from httpx_sse import connect_sse
from meeple_ledger_client import AuthenticatedClient
from meeple_ledger_client.api.games import create_game, get_game
from meeple_ledger_client.api.history import export_game
from meeple_ledger_client.api.play import get_legal_actions, post_action
from meeple_ledger_client.api.rulesets import list_rulesets
from meeple_ledger_client.models import (
    ActionResult,
    BotSeat,
    CreatedGame,
    CreateGame,
    CreateGameOptions,
    GameStatus,
    GameSummary,
    LegalActions,
    OpenSeat,
    RulesetList,
)
from meeple_ledger_client.types import File, Unset

#: a random game ends long before this many actions
MAX_ACTIONS = 20_000
#: Options a game is created with. Random players rarely bring Impendium to its end (40 to
#: 170 rounds); its ``round_limit`` ends it after a round with the normal ranking, the way
#: docs/rules/impendium.md gives to bound timed play and simulations.
OPTIONS: dict[str, dict[str, Any]] = {"impendium": {"round_limit": 10}}
#: seconds to wait for the stream to bring an automatic step
STEP_WAIT_SECONDS = 60.0


@dataclass
class Tally:
    """Requests sent, by everyone the bot runs (the stream's connections included)."""

    requests: int = 0

    def count(self, request: httpx.Request) -> None:
        self.requests += 1


@dataclass
class Seen:
    """The latest version the stream has shown, handed from its reader thread."""

    versions: queue.Queue[int] = field(default_factory=queue.Queue)
    #: every seq the stream brought, in order
    seqs: list[int] = field(default_factory=list)
    failure: queue.Queue[BaseException] = field(default_factory=queue.Queue)
    #: how often the bot waited on the stream for an automatic step
    waits: int = 0


def anonymous_client(base_url: str, tally: Tally) -> AuthenticatedClient:
    """A client that sends no token.

    openapi-python-client types every operation whose ``security`` names a scheme as needing
    an ``AuthenticatedClient``, even where ``{}`` makes the token optional (its issue 1372),
    so the anonymous client is an ``AuthenticatedClient`` whose httpx client sends no
    ``Authorization`` header.
    """
    client = AuthenticatedClient(base_url=base_url, token="")
    http = httpx.Client(base_url=base_url, event_hooks={"request": [tally.count]}, timeout=30)
    return client.set_httpx_client(http)


def seat_client(
    base_url: str, token: str, tally: Tally, params: dict[str, str] | None = None
) -> AuthenticatedClient:
    """A seat's client; ``params`` go with every request it sends."""
    return AuthenticatedClient(
        base_url=base_url,
        token=token,
        httpx_args={"event_hooks": {"request": [tally.count]}, "params": params or {}},
        timeout=httpx.Timeout(30),
    )


#: Sent with each action: the answer then carries the seat's next legal actions
#: (docs/api.md, The typed play loop). A client-wide parameter, so the bot needs no particular
#: generated signature; a service that does not know it ignores it.
INCLUDE = {"include": "legal_actions"}


def follow_stream(http: httpx.Client, game_id: str, seen: Seen) -> None:
    """Read the game's live stream to its end, handing each event's seq to ``seen``; on a
    server-side end before the game's last event, reconnect with ``Last-Event-ID``."""
    last = "0"
    try:
        while True:
            headers = {"Last-Event-ID": last}
            with connect_sse(http, "GET", f"/games/{game_id}/stream", headers=headers) as source:
                source.response.raise_for_status()
                for event in source.iter_sse():
                    if not event.id:
                        continue
                    last = event.id
                    seen.seqs.append(int(event.id))
                    seen.versions.put(int(event.id))
            if _game_over(http, game_id):
                return
    except BaseException as error:  # handed to the player, which raises it
        seen.failure.put(error)


def _game_over(http: httpx.Client, game_id: str) -> bool:
    answer = http.get(f"/games/{game_id}")
    answer.raise_for_status()
    finished: bool = answer.json()["status"]["finished"]
    return finished


def wait_for_version_after(seen: Seen, version: int) -> int:
    """Block until the stream shows an event past ``version``; the newest seq shown."""
    seen.waits += 1
    newest = version
    while newest <= version:
        if not seen.failure.empty():
            raise seen.failure.get()
        try:
            newest = max(newest, seen.versions.get(timeout=STEP_WAIT_SECONDS))
        except queue.Empty:
            raise TimeoutError(f"no event after version {version} came on the stream") from None
    while not seen.versions.empty():
        newest = max(newest, seen.versions.get_nowait())
    return newest


def play(
    base_url: str,
    ruleset: str,
    players: int,
    rng: random.Random,
    admin_key: str | None = None,
    game_seed: str | None = None,
) -> dict[str, Any]:
    """Create a game of ``ruleset`` and play it to its end; what it cost. With the admin
    key the game's seed is ``game_seed``, so the same seeds replay the same game."""
    tally = Tally()
    anonymous = anonymous_client(base_url, tally)
    names: list[BotSeat | OpenSeat | str] = [f"Bot {seat + 1}" for seat in range(players)]
    options = CreateGameOptions.from_dict(OPTIONS.get(ruleset, {}))
    body = CreateGame(ruleset=ruleset, players=names, options=options)
    creator = anonymous
    if admin_key and game_seed:
        body.seed = game_seed
        creator = seat_client(base_url, admin_key, tally)
    created = create_game.sync(client=creator, body=body)
    assert isinstance(created, CreatedGame), created
    # every seat was given a name, so each has its token (open and bot seats have none)
    tokens = {seat.seat: seat.token for seat in created.seats if isinstance(seat.token, str)}
    assert len(tokens) == players, created
    seats = {seat: seat_client(base_url, token, tally) for seat, token in tokens.items()}
    posters = {seat: seat_client(base_url, token, tally, INCLUDE) for seat, token in tokens.items()}
    game_id, version = created.id, created.version

    seen = Seen()
    stream_http = httpx.Client(
        base_url=base_url, event_hooks={"request": [tally.count]}, timeout=httpx.Timeout(30)
    )
    reader = threading.Thread(target=follow_stream, args=(stream_http, game_id, seen))
    reader.start()
    try:
        actions = _play_loop(anonymous, seats, posters, game_id, version, seen, rng)
        summary = get_game.sync(game_id, client=anonymous)
        assert isinstance(summary, GameSummary) and summary.status.finished, summary
        reader.join(timeout=STEP_WAIT_SECONDS)
        assert not reader.is_alive(), "the stream did not end after the game's last event"
        if not seen.failure.empty():
            raise seen.failure.get()
        exported = export_game.sync(game_id, client=anonymous)
        assert isinstance(exported, File), exported
        lines = exported.payload.read().decode().splitlines()
        assert [json.loads(line)["seq"] for line in lines] == list(range(1, summary.version + 1))
    finally:
        stream_http.close()
    return {
        "ruleset": ruleset,
        "game_id": game_id,
        "players": players,
        "actions": actions,
        "requests": tally.requests,
        "requests_per_action": round(tally.requests / max(actions, 1), 3),
        "waits_on_stream": seen.waits,
        "events_on_stream": len(seen.seqs),
        "stream_in_order": seen.seqs == list(range(1, summary.version + 1)),
        "version": summary.version,
        "exported_lines": len(lines),
    }


def _play_loop(
    anonymous: AuthenticatedClient,
    seats: dict[int, AuthenticatedClient],
    posters: dict[int, AuthenticatedClient],
    game_id: str,
    version: int,
    seen: Seen,
    rng: random.Random,
) -> int:
    """Play until the game ends; the number of actions posted."""
    status: GameStatus | None = None
    # The legal actions the bot picks from, and the version and seat they are for: read with
    # GET legal-actions, or taken from the answer to the seat's last action.
    choices = None
    chosen_at = (-1, -1)
    for actions in range(MAX_ACTIONS):
        if status is None:
            summary = get_game.sync(game_id, client=anonymous)
            assert isinstance(summary, GameSummary), summary
            status, version = summary.status, summary.version
        if status.finished:
            return actions
        if status.awaiting_system or not status.to_act:
            version = wait_for_version_after(seen, version)
            status = None
            continue
        seat = status.to_act[0]
        if choices is None or chosen_at != (version, seat):
            answer = get_legal_actions.sync(game_id, client=seats[seat])
            assert isinstance(answer, LegalActions), answer
            choices, chosen_at = answer.actions, (answer.version, seat)
        assert choices, f"seat {seat} is to act at version {version} with no legal action"
        result = post_action.sync(
            game_id,
            client=posters[seat],
            body=rng.choice(choices),
            if_match=f'"{chosen_at[0]}"',
        )
        assert isinstance(result, ActionResult), result
        version, status = result.version, result.status
        if not isinstance(result.legal_actions, Unset):
            # the answer lists what this seat may do next (?include=legal_actions)
            choices, chosen_at = result.legal_actions, (version, seat)
    raise AssertionError(f"{game_id}: not finished after {MAX_ACTIONS} actions")


def rulesets_and_players(base_url: str) -> Iterator[tuple[str, int]]:
    """Every ruleset the server hosts, at two players where it allows (else its minimum)."""
    listed = list_rulesets.sync(client=anonymous_client(base_url, Tally()))
    assert isinstance(listed, RulesetList), listed
    for ruleset in listed.rulesets:
        yield ruleset.id, min(max(2, ruleset.min_players), ruleset.max_players)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--seed", type=int, default=12, help="the bot's choices")
    parser.add_argument("--admin-key", help="to choose each game's seed: the same run again")
    parser.add_argument("rulesets", nargs="*", help="ruleset ids (default: every one hosted)")
    arguments = parser.parse_args()
    hosted = dict(rulesets_and_players(arguments.base_url))
    for ruleset in arguments.rulesets or sorted(hosted):
        rng = random.Random(f"{arguments.seed}-{ruleset}")
        seed = f"python-bot-{ruleset}-{arguments.seed}"
        game = play(arguments.base_url, ruleset, hosted[ruleset], rng, arguments.admin_key, seed)
        print(json.dumps(game), flush=True)


if __name__ == "__main__":
    main()
