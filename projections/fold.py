"""Folding a game's events into its state: from scratch, from a snapshot, or from a cache.

The effective history is the list of step events (``action`` and ``system``) that count
after undo and redo: ``undone`` removes the last effective step and puts it on the redo
stack; ``redone`` puts the top of the redo stack back; a new step empties the redo stack.
The step at position p (1-based in the effective history) always draws from
``derive_rng(seed, p)``, so undo-then-redo draws the same cards.

A snapshot is an optimisation only: folding from one gives the same state as folding
from the first event (tests/unit/test_fold.py checks it on thousands of events).

A branch's log begins with a header: its own ``branched_from``, then the source's first N
events copied (a branch of a branch therefore starts with two ``branched_from``, and so on,
down to the root game's ``game_created``). That is the log as read: the store keeps the
copies by reference (events.copies), and ``Folder`` loads the states among them from the
source's snapshots. Copied events keep their data, so an ``undone``
copied k times names a seq k lower than where its target now stands: the fold adds the
offset back. Which seed a step draws from depends on where its event stands: copied steps
draw from the seed they were played with; the branch's own steps from the branch's new seed
when it was reseeded, else exactly as the source would have at that seq. A branch that
redraws a seat's unseen information (``resampled_seat``) does so once, right after the
branch point; docs/history.md explains it with an example.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from events.envelope import Envelope, NewEvent, canonical_json
from events.store import EventStore
from events.upcasting import upcast
from projections.rng import derive_rng, seed_commitment
from projections.ruleset import Action, IllegalAction, Ruleset, State, get_ruleset

DEFAULT_SNAPSHOT_INTERVAL = 100
STEP_TYPES = ("action", "system")


class ReplayError(Exception):
    """A stored log cannot be folded (a broken rule of the log, not of the game)."""

    def __init__(self, seq: int, reason: str) -> None:
        super().__init__(f"seq {seq}: {reason}")
        self.seq = seq
        self.reason = reason


class RulesVersionMismatch(ReplayError):
    """The game was played under rules this build does not have; folding would lie."""


#: What orjson must not write as if it were plain JSON: a subclass of str, int, dict or list,
#: a dataclass, a date (each would come back as another type); it refuses them, and pickle
#: copies the value instead.
_COPY_AS_JSON = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)


def copy_state(value: Any) -> Any:
    """A deep copy of plain data. A state round-trips through JSON exactly, types included
    (the ruleset contract; ``tests/sim/conformance.py`` checks every state of the playouts),
    so a round trip through orjson copies it, in about half the time pickle takes (as a
    snapshot's JSON would, a tuple comes back a list and an enum its value: no state holds
    either). Whatever orjson refuses (an integer past 64 bits, a key that is not a string,
    a subclass of str ...) is copied by pickle, exactly."""
    try:
        return orjson.loads(orjson.dumps(value, option=_COPY_AS_JSON))
    except orjson.JSONEncodeError:
        return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def public_hash(ruleset: Ruleset, state: State) -> str:
    """sha256 of the spectator view: recorded with each automatic step, rechecked by audits."""
    return hashlib.sha256(canonical_json(ruleset.view(state, None))).hexdigest()


class Game:
    """A folded game: its state and where it stands in its log.

    After an ``undone`` the state is rebuilt only when something reads it: a run of k
    ``undone`` events (``undo?steps=k``, or catching up over them) costs one rebuild from the
    nearest snapshot, not k (docs/history.md, "What undo and redo cost").
    """

    def __init__(
        self,
        ruleset: Ruleset,
        meta: dict[str, Any],
        state: State,
        version: int = 0,
        effective: list[int] | None = None,
        redo: list[int] | None = None,
    ) -> None:
        self.ruleset = ruleset
        self.meta = meta
        self._state = state
        #: (rebuild, before): how to rebuild the state after the effective history, if stale
        self._pending: tuple[Rebuild, int] | None = None
        self.version = version
        self.effective: list[int] = effective if effective is not None else []
        self.redo: list[int] = redo if redo is not None else []

    def __repr__(self) -> str:
        return f"Game({self.meta.get('game_id')!r}, version={self.version})"

    @property
    def state(self) -> State:
        """The state after the effective history (rebuilt now if an undo left it stale)."""
        self.settle()
        return self._state

    @state.setter
    def state(self, value: State) -> None:
        self._state = value
        self._pending = None

    @property
    def stale(self) -> bool:
        """Whether the state waits to be rebuilt (after an undo nobody has looked at yet)."""
        return self._pending is not None

    def settle(self) -> None:
        """Rebuild a stale state now (before the game is shared, say)."""
        if self._pending is not None:
            rebuild, before = self._pending
            self._state = rebuild(list(self.effective), before)
            self._pending = None

    def defer_rebuild(self, rebuild: Rebuild, before: int) -> None:
        """Mark the state stale: ``rebuild(effective, before)`` gives it when it is read."""
        self._pending = (rebuild, before)

    @property
    def open_seats(self) -> list[int]:
        """Seats nobody has joined yet: the game waits for them before its first step."""
        return list(self.meta.get("open_seats") or [])

    def bot_of(self, seat: int) -> dict[str, Any] | None:
        """The bot's configuration when a bot plays ``seat`` (``{"agent", ...}``), else None."""
        bots = self.meta.get("bots") or []
        found = bots[seat] if 0 <= seat < len(bots) else None
        return dict(found) if found else None

    @property
    def position(self) -> int:
        """How many steps the effective history holds."""
        return len(self.effective)

    @property
    def seed(self) -> str:
        """The seed this game's own new steps draw from (revealed once the game ends)."""
        return str(self.meta["seed"])

    def seed_for(self, seq: int) -> str:
        """The seed of the step event at ``seq`` (the same for every seq outside branches)."""
        lineage = self.meta.get("lineage")
        if not lineage:
            return str(self.meta["seed"])
        for level in lineage:
            if seq > level["until"] and level["seed"] is not None:
                return str(level["seed"])
        return str(self.meta["root_seed"])

    def offset(self, seq: int) -> int:
        """How many times the event now at ``seq`` was copied into branches (0: our own)."""
        copies = 0
        for level in self.meta.get("lineage") or ():
            if seq > level["until"]:
                break
            copies += 1
        return copies

    @property
    def floor(self) -> int:
        """The last seq undo may not cross (0: none): where a branch redrew hidden
        information, as undo never crosses a reveal, and below the branch point of a branch
        of an unfinished game, which keeps that game's secrets."""
        return int(self.meta.get("branch", {}).get("floor", 0))

    @property
    def sealed_until(self) -> int:
        """The last seq whose secrets stay sealed (0: none): events copied from a game that
        was unfinished when branched keep its secrets, shown to the admin alone."""
        return int(self.meta.get("branch", {}).get("sealed_until", 0))

    def copy(self) -> Game:
        """An independent copy; a stale state stays stale (the rebuild reads only the store)."""
        game = Game(
            self.ruleset,
            self.meta,
            {} if self._pending is not None else copy_state(self._state),
            self.version,
            list(self.effective),
            list(self.redo),
        )
        game._pending = self._pending
        return game

    def share(self) -> Game:
        """A copy that shares this game's state: the state must then only ever be replaced
        (as deciding and appending do: ``decide_action`` applies to a copy of its own), never
        changed in place (as folding does: use ``copy`` for that)."""
        game = Game(
            self.ruleset,
            self.meta,
            self._state,
            self.version,
            list(self.effective),
            list(self.redo),
        )
        game._pending = self._pending
        return game

    def to_snapshot(self) -> dict[str, Any]:
        # The state travels as a JSON string: stores keep payloads as canonical JSON, whose
        # sorted keys would change the order a ruleset iterates its dicts in, and with it
        # which card a shuffle or refill draws; the string keeps the order the fold made.
        return {
            "meta": self.meta,
            "state_json": json.dumps(self.state, ensure_ascii=False, allow_nan=False),
            # As runs of consecutive seqs: the effective history is nearly every seq of the
            # log, and a snapshot late in a long game must load as fast as an early one.
            "effective_runs": _runs(self.effective),
            "redo": self.redo,
        }

    @classmethod
    def from_snapshot(cls, seq: int, payload: dict[str, Any]) -> Game:
        ruleset = _ruleset_for(payload["meta"], seq)
        state = (
            json.loads(payload["state_json"])
            if "state_json" in payload
            else copy_state(payload["state"])
        )
        return cls(
            ruleset,
            payload["meta"],
            state,
            seq,
            snapshot_effective(payload),
            list(payload["redo"]),
        )


def _runs(seqs: list[int]) -> list[list[int]]:
    """[1, 2, 3, 7, 8] -> [[1, 3], [7, 8]]"""
    runs: list[list[int]] = []
    for seq in seqs:
        if runs and runs[-1][1] == seq - 1:
            runs[-1][1] = seq
        else:
            runs.append([seq, seq])
    return runs


def snapshot_effective(payload: dict[str, Any]) -> list[int]:
    """The effective history a snapshot was taken with."""
    if "effective_runs" not in payload:
        return list(payload["effective"])
    return [seq for first, last in payload["effective_runs"] for seq in range(first, last + 1)]


def branch_snapshot(payload: dict[str, Any], header: dict[str, Any], levels: int) -> dict[str, Any]:
    """A source's snapshot as its branch's, ``levels`` branch levels out: the state after the
    same steps, each ``levels`` seqs later (every level's ``branched_from`` stands in front of
    its copies), under the branch's meta (``header``: what its header says) with the names of
    the seats as the copied events left them (``change_seat``: the one part of a branch's meta
    its events change)."""
    if "effective_runs" in payload:
        runs = [[first + levels, last + levels] for first, last in payload["effective_runs"]]
    else:
        runs = _runs([seq + levels for seq in payload["effective"]])
    translated = {key: value for key, value in payload.items() if key in ("state", "state_json")}
    translated.update(
        meta={**header, "players": list(payload["meta"]["players"])},
        effective_runs=runs,
        redo=[seq + levels for seq in payload["redo"]],
    )
    return translated


# -- deciding new events -------------------------------------------------------------


def game_created_event(
    ruleset: Ruleset,
    players: list[str],
    options: dict[str, Any],
    seed: str,
    sandbox: bool = False,
    seat_token_hashes: list[str] | None = None,
    lobby: dict[str, Any] | None = None,
) -> NewEvent:
    """The first event of a game; the seed stays secret (visible to nobody) until the end,
    and so do the hashes of the seats' bearer tokens (the tokens themselves are never kept).

    ``lobby`` (only when a seat is open or a bot): ``{"open_seats": [seats], "bots":
    [config or None per seat]}``, public (docs/api.md, "Lobby")."""
    merged = {**ruleset.options, **options}
    data: dict[str, Any] = {
        "ruleset": ruleset.id,
        "rules_version": ruleset.rules_version,
        "players": list(players),
        "options": merged,
        "seed_commitment": seed_commitment(seed),
        "sandbox": sandbox,
    }
    if lobby:
        data["lobby"] = {
            "open_seats": sorted(lobby.get("open_seats", [])),
            "bots": list(lobby.get("bots") or [None] * len(players)),
        }
    return NewEvent(
        type="game_created",
        actor={"system": "service"},
        data=data,
        secret={
            "visible_to": [],
            "seed": seed,
            "seat_token_hashes": list(seat_token_hashes or []),
        },
    )


def decide_action(game: Game, seat: int, action: Action) -> tuple[NewEvent, State]:
    """Validate a seat's action on a copy of the state: the event to append and the new state.

    Raises IllegalAction (with the ruleset's code) and leaves ``game`` untouched.
    """
    body = {key: value for key, value in action.items() if key != "seat"}
    if not isinstance(body.get("type"), str):
        raise IllegalAction("missing_action_type", "An action needs a 'type'.")
    state = copy_state(game.state)
    ruleset = game.ruleset
    rng = derive_rng(game.seed_for(game.version + 1), game.position + 1)
    ruleset.apply(state, {**body, "seat": seat}, rng)
    public = ruleset.public_action(game.state, {**body, "seat": seat})
    secret = None
    data: dict[str, Any] = {"action": body}
    if public is not None:
        data = {"action": {key: value for key, value in public.items() if key != "seat"}}
        secret = {"visible_to": [seat], "action": body}
    # Recorded so the undo rule can tell, without refolding, whether undo may cross it.
    data["reveals_hidden"] = bool(ruleset.reveals_hidden(game.state, {**body, "seat": seat}))
    return NewEvent(type="action", actor={"seat": seat}, data=data, secret=secret), state


def decide_system(game: Game) -> tuple[NewEvent, State] | None:
    """The automatic step due now as an event, with the state after it; None if none is due."""
    ruleset = game.ruleset
    if game.open_seats:
        return None  # the game waits for its players before its first step (the lobby)
    action = ruleset.system_action(game.state)
    if action is None:
        return None
    state = copy_state(game.state)
    rng = derive_rng(game.seed_for(game.version + 1), game.position + 1)
    ruleset.apply(state, {**action, "seat": None}, rng)
    event = NewEvent(
        type="system",
        actor={"system": str(action["type"])},
        data={
            "action": action,
            "public_hash": public_hash(ruleset, state),
            "reveals_hidden": bool(ruleset.reveals_hidden(game.state, {**action, "seat": None})),
        },
    )
    return event, state


# -- folding -------------------------------------------------------------------------


def step_action(envelope: Envelope) -> Action:
    """The full action a step event carries, with ``seat`` (None for automatic steps)."""
    secret = envelope.get("secret") or {}
    action = secret.get("action", envelope["data"]["action"])
    seat = envelope["actor"].get("seat") if envelope["type"] == "action" else None
    return {**action, "seat": seat}


Fetch = Callable[[int], Envelope]
Rebuild = Callable[[list[int], int], State]


def start(envelope: Envelope, fetch: Fetch | None = None) -> Game:
    """The game as its log's header sets it up (position 0 of the effective history).

    A plain game's header is its ``game_created``; a branch's is every leading
    ``branched_from`` and then the root's ``game_created``, read through ``fetch`` (seq ->
    envelope). The game returned stands at the header's last seq.
    """
    envelope = upcast(envelope)
    if envelope["seq"] != 1 or envelope["type"] not in ("game_created", "branched_from"):
        raise ReplayError(
            envelope["seq"], "a game's log must begin with game_created or branched_from"
        )
    markers: list[Envelope] = []
    created = envelope
    while created["type"] == "branched_from":
        markers.append(created)
        if fetch is None:
            raise ReplayError(created["seq"], "a branch's header needs the events after it")
        created = upcast(fetch(created["seq"] + 1))
        if created["type"] not in ("game_created", "branched_from"):
            raise ReplayError(created["seq"], "a branch's header must end in game_created")
    data = created["data"]
    secret = created.get("secret") or {}
    if "seed" not in secret:
        raise ReplayError(created["seq"], "game_created carries no seed")
    meta = {
        "game_id": envelope["game_id"],
        "ruleset": data["ruleset"],
        "rules_version": data["rules_version"],
        "players": list(data["players"]),
        "options": dict(data["options"]),
        "seed": secret["seed"],
        "seed_commitment": data["seed_commitment"],
        "sandbox": bool(data.get("sandbox", False)),
        "seat_token_hashes": list(secret.get("seat_token_hashes", [])),
        "open_seats": list(data.get("lobby", {}).get("open_seats", [])),
        "bots": list(data.get("lobby", {}).get("bots") or [None] * len(data["players"])),
        # When the log began (its first event's time): the game index's ``created_at``.
        "created_at": envelope.get("recorded_at"),
    }
    if markers:
        _branch_meta(meta, markers)
    ruleset = _ruleset_for(meta, created["seq"])
    root_seed = meta.get("root_seed", meta["seed"])
    state = ruleset.setup(list(meta["players"]), dict(meta["options"]), derive_rng(root_seed, 0))
    game = Game(ruleset, meta, state, version=created["seq"])
    _resample_at(game, game.version)
    return game


def _branch_meta(meta: dict[str, Any], markers: list[Envelope]) -> None:
    """Fill in what a branch's header says: its lineage (outermost first), seeds, floor."""
    lineage = []
    for depth, marker in enumerate(markers, start=1):
        data = marker["data"]
        secret = marker.get("secret") or {}
        if data.get("reseed") and "seed" not in secret:
            raise ReplayError(marker["seq"], "a reseeded branch carries no seed")
        lineage.append(
            {
                # the last seq (in this log) of the events this level copied from its source
                "until": depth + int(data["at"]),
                "seed": secret["seed"] if data.get("reseed") else None,
                "seed_commitment": data.get("seed_commitment"),
                "resampled_seat": data.get("resampled_seat"),
            }
        )
    own, secret = markers[0]["data"], markers[0].get("secret") or {}
    branch_point = lineage[0]["until"]
    meta["root_seed"] = meta["seed"]
    meta["root_seed_commitment"] = meta["seed_commitment"]
    meta["lineage"] = lineage
    # The seed the branch's own new steps draw from, and the one revealed when it ends.
    for level in lineage:
        if level["seed"] is not None:
            meta["seed"], meta["seed_commitment"] = level["seed"], level["seed_commitment"]
            break
    meta["sandbox"] = True
    # The source's seat tokens do not act here: the branch's one token acts for every seat.
    meta["seat_token_hashes"] = []
    # Nor does its lobby: the holder plays every seat, open or a bot's in the source.
    meta["open_seats"] = []
    meta["bots"] = [None] * len(meta["players"])
    meta["sandbox_token_hash"] = secret.get("sandbox_token_hash")
    meta["branch"] = {
        "source": own["source"],
        "at": int(own["at"]),
        "source_hash": own["source_hash"],
        "reseed": bool(own.get("reseed")),
        "resampled_seat": own.get("resampled_seat"),
        "source_finished": bool(own.get("source_finished")),
        "branch_point": branch_point,
        "header": len(markers) + 1,
        "sealed_until": _sealed_until(markers),
        "floor": max(
            [_sealed_until(markers)]
            + [level["until"] for level in lineage if level["resampled_seat"] is not None]
        ),
    }


def _sealed_until(markers: list[Envelope]) -> int:
    """The highest branch point of a level branched before its source finished (0: none)."""
    points = [
        depth + int(marker["data"]["at"])
        for depth, marker in enumerate(markers, start=1)
        if not marker["data"].get("source_finished")
    ]
    return max(points, default=0)


def _resample_at(game: Game, seq: int) -> None:
    """Redraw a seat's unseen information where a level of the branch says so (once, right
    after its branch point); the redo stack empties as after any new step."""
    for level in game.meta.get("lineage") or ():
        if level["until"] == seq and level["resampled_seat"] is not None:
            rng = derive_rng(str(level["seed"]), 0)
            game.state = game.ruleset.resample_hidden(game.state, level["resampled_seat"], rng)
            game.redo.clear()


def _resample_points(game: Game) -> list[tuple[int, int, str]]:
    return sorted(
        (level["until"], level["resampled_seat"], str(level["seed"]))
        for level in game.meta.get("lineage") or ()
        if level["resampled_seat"] is not None
    )


def advance(game: Game, envelope: Envelope, fetch: Fetch, rebuild: Rebuild) -> None:
    """Fold one more event (seq = game.version + 1) into ``game`` in place."""
    envelope = upcast(envelope)
    seq = envelope["seq"]
    if seq != game.version + 1:
        raise ReplayError(seq, f"expected seq {game.version + 1}")
    kind = envelope["type"]
    if kind in STEP_TYPES:
        apply_step(game, envelope)
        game.effective.append(seq)
        game.redo.clear()
    elif kind == "undone":
        target = envelope["data"]["seq"] + game.offset(seq)
        if not game.effective or game.effective[-1] != target:
            raise ReplayError(seq, f"undone names seq {target}, not the last effective step")
        if target <= game.floor < seq:
            raise ReplayError(seq, "undone reaches behind the branch point of a sealed branch")
        game.effective.pop()
        game.redo.append(target)
        # Rebuilt when next read: the next undone would throw this state away at once.
        game.defer_rebuild(rebuild, seq)
    elif kind == "redone":
        target = envelope["data"]["seq"] + game.offset(seq)
        if not game.redo or game.redo[-1] != target:
            raise ReplayError(seq, f"redone names seq {target}, not the last undone step")
        apply_step(game, fetch(target))
        game.effective.append(game.redo.pop())
    elif kind == "seat_changed":
        change_seat(game, envelope)
    elif kind in ("game_created", "branched_from"):
        raise ReplayError(seq, f"{kind} may only open a log")
    else:
        raise ReplayError(seq, f"unknown event type {kind!r}")
    game.version = seq
    _resample_at(game, seq)


#: What a ``seat_changed`` event may say; the first three only before the first step.
SEAT_CHANGES = ("joined", "left", "bot_seated", "token_rotated", "token_reissued")


def open_seat_name(seat: int) -> str:
    """The name an open seat goes by until someone joins it."""
    return f"Open seat {seat + 1}"


def change_seat(game: Game, envelope: Envelope) -> None:
    """Fold a lobby event: who sits at a seat (before the first step), or its new token.

    The meta is replaced, never changed in place (copies of the game share it). Before the
    first step a change of who sits sets the game up again under the new names, from the
    same seed, so the state is as if the game had been created with them. A branch copies
    these events for the names but keeps its own one token (``sandbox_token_hash``).
    """
    seq, data = envelope["seq"], envelope["data"]
    change, seat = data.get("change"), data.get("seat")
    meta = dict(game.meta)
    players = list(meta["players"])
    if change not in SEAT_CHANGES or not isinstance(seat, int) or not 0 <= seat < len(players):
        raise ReplayError(seq, f"seat_changed names no change {change!r} of a seat {seat!r}")
    token_hash = (envelope.get("secret") or {}).get("token_hash")
    hashes = list(meta.get("seat_token_hashes") or [""] * len(players))
    open_seats = set(meta.get("open_seats") or [])
    bots = list(meta.get("bots") or [None] * len(players))
    if change in ("joined", "left", "bot_seated"):
        if game.effective or game.redo:
            raise ReplayError(seq, "who sits at a seat changes only before the first step")
        if change == "left":
            players[seat] = open_seat_name(seat)
            open_seats.add(seat)
            hashes[seat] = ""
        else:
            players[seat] = str(data["name"])
            open_seats.discard(seat)
            hashes[seat] = str(token_hash or "")
            bots[seat] = dict(data["bot"]) if change == "bot_seated" else None
    else:
        hashes[seat] = str(token_hash or "")
    meta["players"] = players
    if "branch" not in meta:
        meta.update(seat_token_hashes=hashes, open_seats=sorted(open_seats), bots=bots)
    game.meta = meta
    if change in ("joined", "left", "bot_seated"):
        root_seed = meta.get("root_seed", meta["seed"])
        game.state = game.ruleset.setup(
            list(players), dict(meta["options"]), derive_rng(root_seed, 0)
        )


def apply_step(game: Game, envelope: Envelope) -> None:
    envelope = upcast(envelope)
    rng = derive_rng(game.seed_for(envelope["seq"]), game.position + 1)
    try:
        game.ruleset.apply(game.state, step_action(envelope), rng)
    except IllegalAction as error:
        raise ReplayError(envelope["seq"], f"stored action is illegal: {error.code}") from error


def refold_steps(base: Game, effective: list[int], fetch: Fetch, before: int) -> State:
    """The state after ``effective`` (which extends ``base.effective``), folding on ``base``
    in place; a branch's redraw at its branch point (< ``before``) is redone in its place,
    after the last step at or before it (undo never crosses it, so that is where it was)."""
    points = [point for point in _resample_points(base) if base.version < point[0] < before]
    for step in effective[len(base.effective) :]:
        while points and step > points[0][0]:
            _redraw(base, points.pop(0))
        apply_step(base, fetch(step))
        base.effective.append(step)
    for point in points:
        _redraw(base, point)
    return base.state


def _redraw(game: Game, point: tuple[int, int, str]) -> None:
    _, seat, seed = point
    game.state = game.ruleset.resample_hidden(game.state, seat, derive_rng(seed, 0))


def refold(by_seq: dict[int, Envelope], effective: list[int], before: int | None = None) -> State:
    """The state after exactly the ``effective`` steps of an in-memory log, from scratch,
    as it stood just before event ``before`` (default: after the last event held)."""
    again = start(by_seq[1], by_seq.__getitem__)
    limit = before if before is not None else max(by_seq) + 1
    return refold_steps(again, effective, by_seq.__getitem__, limit)


def replay(envelopes: list[Envelope], game: Game) -> Iterator[tuple[Game, Envelope]]:
    """Fold an in-memory log into ``game`` (started from its header), yielding (the game
    just before each later event, that event); ``game`` is folded in place.

    An undo rebuilds from the nearest of the positions the fold kept (``Checkpoints``), so
    it costs at most one snapshot interval of folding, as with a store's snapshots."""
    by_seq = {envelope["seq"]: envelope for envelope in envelopes}
    marks = Checkpoints()

    def rebuild(effective: list[int], before: int) -> State:
        base = marks.base(effective)
        if base is None:
            base = start(by_seq[1], by_seq.__getitem__)
        return refold_steps(base, effective, by_seq.__getitem__, before)

    for envelope in envelopes:
        if envelope["seq"] <= game.version:
            continue
        yield game, envelope
        advance(game, envelope, by_seq.__getitem__, rebuild)
        marks.note(game)


class Checkpoints:
    """Copies of a game kept while it is folded in memory, one every ``every`` positions of
    its effective history, for undo to rebuild from (the in-memory kin of snapshots).

    A step event always stands at the same position on top of the same steps (undo pops the
    last step, redo puts back exactly it, a new step ends the redo stack), so the copy kept
    at position p holds for any effective history whose p-th step is the copy's last one.
    """

    def __init__(self, every: int = DEFAULT_SNAPSHOT_INTERVAL) -> None:
        self.every = every
        self._at: dict[int, Game] = {}

    def note(self, game: Game) -> None:
        """Keep a copy of ``game`` if it stands on a kept position with a new last step."""
        position = game.position
        if position == 0 or position % self.every or game.stale:
            return
        held = self._at.get(position)
        if held is None or held.effective[-1] != game.effective[-1]:
            self._at[position] = game.copy()

    def base(self, effective: list[int]) -> Game | None:
        """A copy of the latest kept game that ``effective`` extends, or None."""
        position = len(effective) - len(effective) % self.every
        while position > 0:
            held = self._at.get(position)
            if held is not None and held.effective[-1] == effective[position - 1]:
                return held.copy()
            position -= self.every
        return None


def fold(envelopes: Iterable[Envelope], upto: int | None = None) -> Game:
    """Fold a whole log held in memory (no store, no snapshots): the reference fold."""
    log = [e for e in envelopes if upto is None or e["seq"] <= upto]
    if not log:
        raise ReplayError(1, "the log is empty")
    by_seq = {envelope["seq"]: envelope for envelope in log}

    def fetch(seq: int) -> Envelope:
        if seq not in by_seq:
            raise ReplayError(seq, "the log ends inside a branch's header")
        return by_seq[seq]

    game = start(log[0], fetch)
    for _step in replay(log, game):
        pass
    return game


def _ruleset_for(meta: dict[str, Any], seq: int) -> Ruleset:
    try:
        ruleset = get_ruleset(meta["ruleset"])
    except KeyError:
        raise ReplayError(seq, f"unknown ruleset {meta['ruleset']!r}") from None
    if ruleset.rules_version != meta["rules_version"]:
        raise RulesVersionMismatch(
            seq,
            f"played under {meta['ruleset']} rules {meta['rules_version']}, "
            f"this build has {ruleset.rules_version}",
        )
    return ruleset


# -- the store-backed folder ---------------------------------------------------------


#: How many games' headers (whether each is a branch, and its meta) a Folder remembers.
HEADERS_REMEMBERED = 4096


class Folder:
    """Loads games from a store: nearest snapshot + fold, snapshots every K events, and an
    in-process cache of the latest state of recently used games.

    A branch's states up to its branch point are its source's, a seq later (the same events
    folded the same way behind its ``branched_from``): it loads them from the source's
    snapshots (``_snapshot``) and writes none of its own there while those are at most one
    interval behind, only one at its branch point; so a branch's snapshots, like its stored
    events (events.copies), do not grow with the length of the source's past.
    """

    def __init__(
        self,
        store: EventStore,
        snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL,
        cache_size: int = 256,
        observe: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.snapshot_interval = snapshot_interval
        self.cache_size = cache_size
        #: Told where each load's fold started: ``cache``, ``snapshot`` or ``scratch`` (the
        #: service counts them; service.monitoring.metrics).
        self.observe = observe
        self._cache: OrderedDict[str, Game] = OrderedDict()
        self._lock = threading.Lock()
        self._headers: OrderedDict[str, dict[str, Any] | None] = OrderedDict()

    def load(self, game_id: str, at: int | None = None, *, shared: bool = False) -> Game:
        """The game after event ``at`` (default: its latest). The caller owns the copy;
        with ``shared``, its state may be the cache's (``Game.share``), for a caller that
        only reads the game or replaces its state, as deciding and appending do: one deep
        copy of the state fewer, or two when the cached game is already the latest."""
        with self._lock:
            cached = self._cache.get(game_id)
        if cached is not None and (at is None or cached.version <= at):
            # A version at or after the cached one (the one just appended, say) folds on
            # from the cache rather than from a snapshot.
            following = self._following(game_id, cached.version, at)
            if following:
                game = cached.copy()
                self._fold_on(game, following)
            else:
                game = cached
            self._remember(game)
            self._observe("cache")
            return game.share() if shared else game.copy()
        game = self._from_nearest_snapshot(game_id, at)
        self._catch_up(game, at)
        if at is None:
            self._remember(game)
            return game.share() if shared else game.copy()
        return game

    def load_through(self, game_id: str, envelopes: list[Envelope]) -> Game:
        """The game at least as far as the last of ``envelopes`` (some of its events in seq
        order, as a feed gives them), for a caller that only reads it (``Game.share``): the
        cached game when it is that far already, else the cached game folded on with them
        when they continue it, without reading the store; else ``load``."""
        with self._lock:
            cached = self._cache.get(game_id)
        if cached is None or not envelopes:
            return self.load(game_id)
        if cached.version >= envelopes[-1]["seq"]:
            self._observe("cache")
            return cached.share()
        following = [envelope for envelope in envelopes if envelope["seq"] > cached.version]
        if following[0]["seq"] != cached.version + 1:
            return self.load(game_id)
        game = cached.copy()
        fetch, rebuild = self.stepper(game_id)
        for envelope in following:
            advance(game, envelope, fetch, rebuild)
            self._maybe_snapshot(game)
        self._remember(game)
        self._observe("cache")
        return game.share()

    def cached(self, game_id: str) -> Game | None:
        """The cached latest game, without asking the store whether it moved on (for a caller
        that knows it did not, or that checks when it appends), sharing its state with the
        cache (``Game.share``: never change it in place); None if not cached."""
        with self._lock:
            cached = self._cache.get(game_id)
        return cached.share() if cached is not None else None

    def adopt(self, game: Game) -> None:
        """``remember`` without a copy: the caller hands the game over and changes it no more
        (reading it is fine)."""
        self._remember(game)
        self._maybe_snapshot(game)

    def remember(self, game: Game) -> None:
        """Put a game the caller just advanced (e.g. after an append) into the cache."""
        self._remember(game.copy())
        self._maybe_snapshot(game)

    def forget(self, game_id: str) -> None:
        with self._lock:
            self._cache.pop(game_id, None)

    def stepper(self, game_id: str) -> tuple[Fetch, Rebuild]:
        """What ``advance`` needs to fold this game's events one by one (e.g. a timeline):
        reading one event, and rebuilding after an undo from the nearest snapshot."""
        return (
            lambda seq: self._fetch(game_id, seq),
            lambda effective, before: self._rebuild(game_id, effective, before),
        )

    # internals

    def _observe(self, source: str) -> None:
        if self.observe is not None:
            self.observe(source)

    def _remember(self, game: Game) -> None:
        game_id = game.meta["game_id"]
        # Rebuilt once here rather than by every request that copies it from the cache.
        game.settle()
        with self._lock:
            current = self._cache.get(game_id)
            if current is None or current.version <= game.version:
                self._cache[game_id] = game
                self._cache.move_to_end(game_id)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def _from_nearest_snapshot(self, game_id: str, at: int | None) -> Game:
        limit = at if at is not None else self.store.version(game_id)
        if limit < 1:
            raise KeyError(game_id)
        snapshot = self._snapshot(game_id, limit)
        if snapshot is not None:
            seq, payload = snapshot
            self._observe("snapshot")
            return Game.from_snapshot(seq, payload)
        first = self.store.read(game_id, after=0, limit=1)
        if not first:
            raise KeyError(game_id)
        self._observe("scratch")
        return start(first[0], lambda seq: self._fetch(game_id, seq))

    def _catch_up(self, game: Game, at: int | None) -> None:
        self._fold_on(game, self._following(game.meta["game_id"], game.version, at))

    def _following(self, game_id: str, version: int, at: int | None) -> list[Envelope]:
        """The stored events after ``version``, up to ``at`` (default: all)."""
        remaining = None if at is None else at - version
        if remaining is not None and remaining <= 0:
            return []
        return list(self.store.read(game_id, after=version, limit=remaining))

    def _fold_on(self, game: Game, envelopes: list[Envelope]) -> None:
        """Fold ``envelopes`` (the events right after the game's version) into ``game``."""
        game_id = game.meta["game_id"]
        for envelope in envelopes:
            advance(
                game,
                envelope,
                lambda seq: self._fetch(game_id, seq),
                lambda effective, seq: self._rebuild(game_id, effective, seq),
            )
            self._maybe_snapshot(game)

    def _maybe_snapshot(self, game: Game) -> None:
        """A snapshot every ``snapshot_interval`` events (what ``load(at=N)`` starts from),
        and wherever a step event brings the effective history to a multiple of it (what
        ``_rebuild`` looks for first after an undo)."""
        every = self.snapshot_interval
        at_position = bool(game.effective) and game.effective[-1] == game.version
        due = game.version % every == 0 or (at_position and game.position % every == 0)
        lineage = game.meta.get("lineage")
        if lineage and game.version <= int(lineage[0]["until"]):
            # A branch's copied past: its source's snapshots serve it (``_snapshot``) where
            # they are at most an interval back; its branch point's state is its own (the
            # source's cannot stand for it, nor for anything after it).
            due = game.version == int(lineage[0]["until"]) or (
                due and not self._source_snapshot_near(game)
            )
        if due:
            self.store.save_snapshot(game.meta["game_id"], game.version, game.to_snapshot())

    def _source_snapshot_near(self, game: Game) -> bool:
        """Whether a snapshot (its source's, as ``_snapshot`` gives it) stands less than one
        interval before ``game``."""
        found = self._snapshot(game.meta["game_id"], game.version)
        return found is not None and found[0] > game.version - self.snapshot_interval

    def _snapshot(self, game_id: str, at_most: int) -> tuple[int, dict[str, Any]] | None:
        """The latest snapshot for ``game_id`` at or before ``at_most``: its own, or, where a
        branch's own is older, its source's (or its source's source's ...) as the branch's
        (``branch_snapshot``): the branch's seqs before its branch point's ``until`` (where a
        redraw would happen) stand for the source's states, a seq later."""
        best: tuple[int, dict[str, Any], int] | None = None
        game, limit, level = game_id, at_most, 0
        while limit >= 1:
            own = self.store.load_snapshot(game, limit)
            if own is not None and (best is None or own[0] + level > best[0]):
                best = (own[0] + level, own[1], level)
            meta = own[1]["meta"] if own is not None else self._header_meta(game)
            if meta is None or "branch" not in meta:
                break
            reach = min(limit, int(meta["lineage"][0]["until"]) - 1)
            if own is not None and own[0] >= reach:
                break  # nothing further back can be later than this one
            game, limit, level = str(meta["branch"]["source"]), reach - 1, level + 1
        if best is None:
            return None
        seq, payload, level = best
        if level == 0:
            return seq, payload
        header = self._header_meta(game_id)
        assert header is not None
        return seq, branch_snapshot(payload, header, level)

    def _header_meta(self, game_id: str) -> dict[str, Any] | None:
        """The meta a game's header sets up (None for an unknown game), remembered: a log's
        header never changes."""
        with self._lock:
            if game_id in self._headers:
                self._headers.move_to_end(game_id)
                return self._headers[game_id]
        first = self.store.read(game_id, after=0, limit=1)
        if not first:
            return None
        meta = start(first[0], lambda seq: self._fetch(game_id, seq)).meta
        with self._lock:
            self._headers[game_id] = meta
            while len(self._headers) > HEADERS_REMEMBERED:
                self._headers.popitem(last=False)
        return meta

    def _fetch(self, game_id: str, seq: int) -> Envelope:
        found = self.store.read(game_id, after=seq - 1, limit=1)
        if not found or found[0]["seq"] != seq:
            raise ReplayError(seq, "event is missing from the store")
        return found[0]

    def _rebuild(self, game_id: str, effective: list[int], before: int) -> State:
        """The state after exactly ``effective``, from the latest snapshot it extends: first
        the one taken where its step brought the effective history to the last multiple of
        the interval within ``effective`` (at most one interval of steps to fold again),
        else the latest one before ``before`` that ``effective`` extends."""
        base = self._position_snapshot(game_id, effective)
        limit = before - 1
        while base is None and limit >= 1:
            snapshot = self._snapshot(game_id, limit)
            if snapshot is None:
                break
            seq, payload = snapshot
            prefix = snapshot_effective(payload)
            if effective[: len(prefix)] == prefix:
                base = Game.from_snapshot(seq, payload)
                break
            limit = seq - 1
        if base is None:
            base = start(self._fetch(game_id, 1), lambda seq: self._fetch(game_id, seq))
        steps = self.read_events(game_id, effective[len(base.effective) :])
        return refold_steps(base, effective, steps.__getitem__, before)

    def read_events(self, game_id: str, seqs: list[int]) -> dict[int, Envelope]:
        """The events at ``seqs`` (seq -> envelope): in one read when they lie close together
        (the steps an undo folds again, or takes back, usually do), else one by one."""
        if not seqs:
            return {}
        first, last = min(seqs), max(seqs)
        if last - first >= 4 * len(seqs):
            return {seq: self._fetch(game_id, seq) for seq in seqs}
        wanted = set(seqs)
        read = self.store.read(game_id, after=first - 1, limit=last - first + 1)
        found = {envelope["seq"]: envelope for envelope in read if envelope["seq"] in wanted}
        if len(found) != len(wanted):
            missing = min(wanted - set(found))
            raise ReplayError(missing, "event is missing from the store")
        return found

    def _position_snapshot(self, game_id: str, effective: list[int]) -> Game | None:
        # A step stands at one position on top of the same steps whenever it is effective
        # (see Checkpoints), so the snapshot at its own seq holds for ``effective``.
        position = len(effective) - len(effective) % self.snapshot_interval
        if position == 0:
            return None
        seq = effective[position - 1]
        snapshot = self._snapshot(game_id, seq)
        if snapshot is None or snapshot[0] != seq:
            return None
        if snapshot_effective(snapshot[1]) != effective[:position]:
            return None
        return Game.from_snapshot(seq, snapshot[1])
