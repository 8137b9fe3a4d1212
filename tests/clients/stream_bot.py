"""A random bot driven by the live streams alone: it never polls (docs/api.md, "Live streams").

It creates a game, holds every seat's token and opens each seat's own stream
(``GET /games/{id}/stream`` with that seat's token, read with httpx-sse). Every message says
where the game stands after its event and, on a seat's stream, ``you``: whether that seat must
act and the decision it faces (each action type's parameters, ``projections.decisions``'s
format). When a seat must act, the bot draws an action from the decision's exact types (an
exact type allows only legal actions) and posts it with ``?include=legal_actions``; while
the answer says the seat acts again, it goes on from the listed actions without waiting.
Only a decision with no exact type costs a ``GET .../legal-actions``. A refused post (the
game moved on meanwhile: 409, 412) waits for the next message. It counts every request it
sends, the streams included.

    python tests/clients/stream_bot.py --base-url http://127.0.0.1:8000 gutenberg impendium

prints one JSON object a game: ruleset, game id, actions, requests, requests per action.
It imports nothing of the service: plain httpx, as a third-party client would be written.
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

#: A random game ends long before this many actions.
MAX_ACTIONS = 20_000
#: Seconds to wait for a stream's next message before giving up.
MESSAGE_WAIT_SECONDS = 120.0
#: Options a game is created with (random players rarely end Impendium without a limit).
OPTIONS: dict[str, dict[str, Any]] = {"impendium": {"round_limit": 10}}
#: Tries at drawing a split that fits its totals before the bot lists the actions instead.
SPLIT_TRIES = 200


@dataclass
class Tally:
    """Requests sent by the bot, its streams' connections included."""

    requests: int = 0
    lists: int = 0
    refused: int = 0

    def count(self, request: httpx.Request) -> None:
        self.requests += 1


@dataclass
class Message:
    """One message of a seat's stream: ``version`` is the event's seq (the game's version after
    it), or the version now for the opening ``turn`` message."""

    seat: int
    version: int
    status: dict[str, Any]
    you: dict[str, Any]


@dataclass
class Streams:
    """Every seat's messages, in one queue, from one reader thread per seat."""

    messages: queue.Queue[Message | BaseException] = field(default_factory=queue.Queue)
    stop: threading.Event = field(default_factory=threading.Event)


def follow(http: httpx.Client, game_id: str, seat: int, token: str, streams: Streams) -> None:
    """Read the seat's stream until the game ends; reconnect with ``Last-Event-ID`` when the
    server ends it before that."""
    last: str | None = None
    try:
        while not streams.stop.is_set():
            headers = {"Authorization": f"Bearer {token}"}
            if last is not None:
                headers["Last-Event-ID"] = last
            with connect_sse(http, "GET", f"/games/{game_id}/stream", headers=headers) as source:
                source.response.raise_for_status()
                for event in source.iter_sse():
                    if event.event not in ("turn",) and not event.id:
                        continue  # an analysis note
                    data = json.loads(event.data)
                    if event.id:
                        last = event.id
                    version = int(data["version"] if event.event == "turn" else data["seq"])
                    streams.messages.put(Message(seat, version, data["status"], data["you"]))
                    if data["status"]["finished"]:
                        return
    except BaseException as error:  # handed to the player, which raises it
        if not streams.stop.is_set():
            streams.messages.put(error)


# -- drawing an action from a decision's description -----------------------------------------


class CannotDraw(Exception):
    """A description this bot cannot draw from (it lists the actions instead)."""


def draw(description: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A random action the (exact) description allows: each parameter in turn, a dependent
    one by the case its earlier parameters choose."""
    action: dict[str, Any] = {"type": description["type"]}
    for param in description["params"]:
        rule = param
        if "depends_on" in param:
            rule = _case(param, action)
        kind = rule.get("kind", param.get("kind", "enum"))
        if rule.get("omit") and (kind != "enum" or rng.random() < 0.5 or not rule.get("values")):
            continue
        action[param["name"]] = _value(kind, rule, rng)
    return action


def _case(param: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
    for case in param["cases"]:
        when = case["when"]
        if all(
            (name in when and action.get(name) == when[name])
            or (name not in when and name not in action)
            for name in param["depends_on"]
        ):
            return dict(case)
    raise CannotDraw(f"no case of {param['name']} fits {action}")


def _value(kind: str, rule: dict[str, Any], rng: random.Random) -> Any:
    if kind == "enum":
        if not rule["values"]:
            raise CannotDraw("an empty choice")
        return rng.choice(rule["values"])
    if kind == "range":
        return rng.randint(rule["min"], rule["max"])
    if kind == "choose":
        items, count = list(rule["from"]), rule["count"]
        if rule["distinct"]:
            return rng.sample(items, count)
        return [rng.choice(items) for _ in range(count)]
    if kind == "split":
        return _split(rule, rng)
    raise CannotDraw(f"a parameter of kind {kind!r}")


def _split(rule: dict[str, Any], rng: random.Random) -> Any:
    parts = rule["parts"]
    most = rule.get("max_per_part") or [rule["max_each"]] * len(parts)
    for _ in range(SPLIT_TRIES):
        total = rng.randint(rule["total_min"], rule["total_max"])
        values = [rule["min_each"]] * len(parts)
        room = [min(rule["max_each"], cap) - rule["min_each"] for cap in most]
        left = total - sum(values)
        while left > 0 and any(room):
            index = rng.choice([i for i, r in enumerate(room) if r > 0])
            values[index] += 1
            room[index] -= 1
            left -= 1
        if left == 0:
            if rule.get("object"):
                return {part: value for part, value in zip(parts, values, strict=True) if value}
            return values
    raise CannotDraw("no split fits its totals")


# -- playing ------------------------------------------------------------------------------------


@dataclass
class Seat:
    number: int
    token: str
    #: The actions the answer to its last post listed, and the version they are for.
    listed: list[dict[str, Any]] | None = None
    listed_at: int = -1


def choose(
    http: httpx.Client, game_id: str, seat: Seat, decision: dict[str, Any], rng: random.Random,
    tally: Tally,
) -> dict[str, Any]:  # fmt: skip
    """An action for the seat's decision: drawn from an exact type, else from the list."""
    exact = [kind for kind in decision["types"] if kind.get("exact") and kind.get("count")]
    if exact:
        weights = [kind["count"] for kind in exact]
        try:
            return draw(rng.choices(exact, weights)[0], rng)
        except CannotDraw:
            pass
    tally.lists += 1
    answer = http.get(
        f"/games/{game_id}/legal-actions", headers={"Authorization": f"Bearer {seat.token}"}
    )
    answer.raise_for_status()
    actions: list[dict[str, Any]] = answer.json()["actions"]
    return rng.choice(actions)


def post(
    http: httpx.Client, game_id: str, seat: Seat, action: dict[str, Any], version: int,
) -> httpx.Response:  # fmt: skip
    return http.post(
        f"/games/{game_id}/actions",
        params={"include": "legal_actions"},
        json=action,
        headers={"Authorization": f"Bearer {seat.token}", "If-Match": f'"{version}"'},
    )


def act_while_due(
    http: httpx.Client, game_id: str, seat: Seat, message: Message, rng: random.Random,
    tally: Tally,
) -> tuple[int, int, bool]:  # fmt: skip
    """Play the seat's turn from ``message`` while the answers say it acts again: (actions
    posted, the version after them, whether the game ended)."""
    version, decision, actions = message.version, message.you["decision"], 0
    action = choose(http, game_id, seat, decision, rng, tally)
    while actions < MAX_ACTIONS:
        answer = post(http, game_id, seat, action, version)
        if answer.status_code in (409, 412, 422):
            # The game moved on meanwhile (or a drawn action was not legal after all): the
            # streams bring where it stands now.
            tally.refused += 1
            return actions, version, False
        answer.raise_for_status()
        actions += 1
        result = answer.json()
        version, status = int(result["version"]), result["status"]
        if status["finished"]:
            return actions, version, True
        again = (
            seat.number in status["to_act"]
            and not status["awaiting_system"]
            and result.get("legal_actions")
        )
        if not again:
            return actions, version, False
        action = rng.choice(result["legal_actions"])
    raise AssertionError(f"{game_id}: not finished after {MAX_ACTIONS} actions")


def play(
    base_url: str, ruleset: str, players: int, rng: random.Random,
    admin_key: str | None = None, game_seed: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Create a game of ``ruleset`` and play it to its end from its streams; what it cost."""
    tally = Tally()
    http = httpx.Client(
        base_url=base_url, event_hooks={"request": [tally.count]}, timeout=httpx.Timeout(60)
    )
    body: dict[str, Any] = {
        "ruleset": ruleset,
        "players": [f"Bot {seat + 1}" for seat in range(players)],
        "options": OPTIONS.get(ruleset, {}),
    }
    headers = {}
    if admin_key and game_seed:
        body["seed"] = game_seed
        headers["Authorization"] = f"Bearer {admin_key}"
    created = http.post("/games", json=body, headers=headers)
    created.raise_for_status()
    game = created.json()
    game_id = game["id"]
    seats = {s["seat"]: Seat(s["seat"], s["token"]) for s in game["seats"]}
    streams = Streams()
    readers = [
        threading.Thread(
            target=follow, args=(http, game_id, seat.number, seat.token, streams), daemon=True
        )
        for seat in seats.values()
    ]
    for reader in readers:
        reader.start()
    actions, latest, finished, messages = 0, int(game["version"]), False, 0
    try:
        while not finished:
            try:
                message = streams.messages.get(timeout=MESSAGE_WAIT_SECONDS)
            except queue.Empty:
                raise TimeoutError(f"{game_id}: no message for {MESSAGE_WAIT_SECONDS} s") from None
            if isinstance(message, BaseException):
                raise message
            messages += 1
            if message.status["finished"]:
                finished = True
                break
            # Only the newest position is acted on: an older message was overtaken.
            if message.version < latest or not message.you["must_act"]:
                latest = max(latest, message.version)
                continue
            latest = message.version
            done, latest, finished = act_while_due(
                http, game_id, seats[message.seat], message, rng, tally
            )
            actions += done
            assert actions < MAX_ACTIONS, f"{game_id}: not finished after {actions} actions"
    finally:
        streams.stop.set()
        for reader in readers:
            reader.join(timeout=MESSAGE_WAIT_SECONDS)
        requests = tally.requests
        http.close()
    return {
        "ruleset": ruleset,
        "game_id": game_id,
        "players": players,
        "actions": actions,
        "requests": requests,
        "requests_per_action": round(requests / max(actions, 1), 3),
        "listed": tally.lists,
        "refused": tally.refused,
        "messages": messages,
        "finished": finished,
    }


def rulesets_and_players(base_url: str) -> Iterator[tuple[str, int]]:
    """Every ruleset the server hosts, at two players where it allows (else its minimum)."""
    listed = httpx.get(f"{base_url}/rulesets", timeout=30)
    listed.raise_for_status()
    for ruleset in listed.json()["rulesets"]:
        yield ruleset["id"], min(max(2, ruleset["min_players"]), ruleset["max_players"])


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
        seed = f"stream-bot-{ruleset}-{arguments.seed}"
        game = play(arguments.base_url, ruleset, hosted[ruleset], rng, arguments.admin_key, seed)
        print(json.dumps(game), flush=True)


if __name__ == "__main__":
    main()
