"""Who may undo and redo what (DESIGN.md, "Time, undo, branch, audit"): the one place of the rule.

In a normal game a seat may undo only its own actions of its current turn, and only while
nothing hidden has been revealed since (a card drawn, a plan revealed, a die rolled):

- undo always takes back the *last* effective step, so "of its current turn" means the
  trailing run of that seat's own actions: any other seat's action or an automatic step
  after them ends the turn, and they can no longer be undone;
- a step that revealed hidden information (recorded with the step as ``reveals_hidden``,
  decided by the ruleset when the step was taken) can never be undone, so undo never crosses
  it.

Redo puts back exactly the last undone step (same position in the effective history, hence
the same cards); a seat may redo only its own undone action. In a sandbox (branch) game the
holder of the sandbox token acts for every seat and may undo and redo any step - except,
in a branch made while its source was still being played, the steps before the branch
point: they hold that game's secrets (see ``plan_branch``).

Branches (``plan_branch``, and ``branch_events`` for a log in memory) and the timeline
(``timeline``) live here too: everything about moving through a game's history that is not
the fold itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from events.envelope import Envelope, NewEvent, verify_chain
from events.store import CopiedPrefix
from projections.fold import (
    STEP_TYPES,
    Fetch,
    Game,
    Rebuild,
    ReplayError,
    advance,
    apply_step,
    start,
    step_action,
)
from projections.rng import seed_commitment
from projections.ruleset import IllegalAction, Ruleset, State


def undo_event(game: Game, last_step: Envelope | None, seat: int | None) -> NewEvent:
    """The ``undone`` event for the last effective step, or IllegalAction saying why not.

    ``seat`` is the requesting seat (None for a sandbox token or the admin acting for all).
    """
    if last_step is None or not game.effective:
        raise IllegalAction("nothing_to_undo", "There is no step to undo.")
    if last_step["seq"] != game.effective[-1]:
        raise ValueError("last_step must be the last effective step")
    if not game.meta.get("sandbox"):
        _check_normal_game_undo(last_step, seat)
    elif last_step["seq"] <= game.floor:
        raise IllegalAction(
            "before_branch_point",
            "This branch redrew hidden information at its branch point (or keeps the secrets "
            "of a game still being played); the moves before it cannot be undone here.",
        )
    return NewEvent(
        type="undone",
        data={"seq": last_step["seq"]},
        actor={"seat": seat} if seat is not None else {"system": "sandbox"},
    )


def redo_event(game: Game, undone_step: Envelope | None, seat: int | None) -> NewEvent:
    """The ``redone`` event for the last undone step, or IllegalAction saying why not."""
    if undone_step is None or not game.redo:
        raise IllegalAction("nothing_to_redo", "There is no undone step to redo.")
    if undone_step["seq"] != game.redo[-1]:
        raise ValueError("undone_step must be the top of the redo stack")
    if not game.meta.get("sandbox") and undone_step["actor"].get("seat") != seat:
        raise IllegalAction("not_your_action", "You can only redo your own undone action.")
    return NewEvent(
        type="redone",
        data={"seq": undone_step["seq"]},
        actor={"seat": seat} if seat is not None else {"system": "sandbox"},
    )


def _check_normal_game_undo(last_step: Envelope, seat: int | None) -> None:
    if last_step["type"] != "action":
        raise IllegalAction(
            "turn_over",
            "An automatic step has happened since your last action; it can no longer be undone.",
        )
    if last_step["actor"].get("seat") != seat:
        raise IllegalAction(
            "not_your_action",
            "The last action is not yours: you can only undo your own actions of your turn.",
        )
    if last_step["data"].get("reveals_hidden", True):
        raise IllegalAction(
            "hidden_information_revealed",
            "That action revealed hidden information (a card, a plan, a die); it stands.",
        )


# -- branches ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BranchPlan:
    """What a branch will be, as decided from its source and who asks."""

    #: the branch's first event, ``branched_from``
    marker: NewEvent
    #: the source game and how many of its events the branch begins with
    source: str
    at: int
    reseeded: bool
    #: the seat whose unseen information was redrawn (a seat's branch of an unfinished game)
    resampled_seat: int | None
    #: whether the source was still being played: its secrets stay sealed in the branch
    sealed: bool
    #: the source's first ``at`` events copied, when the plan was made from a log in memory
    copies: tuple[NewEvent, ...] = ()

    @property
    def events(self) -> list[NewEvent]:
        """The branch's opening events as a log in memory holds them: ``branched_from``, then
        the copies (``branch_events``)."""
        return [self.marker, *self.copies]

    @property
    def stored(self) -> list[NewEvent | CopiedPrefix]:
        """What a store appends to open the branch: ``branched_from``, then the source's first
        ``at`` events by reference (read back as the same copies: docs/history.md)."""
        return [self.marker, CopiedPrefix(self.source, self.at)]


def branch_events(
    source: list[Envelope],
    at: int,
    *,
    new_seed: str,
    sandbox_token_hash: str,
    source_finished: bool,
    reseed: bool = False,
    seat: int | None = None,
    admin: bool = False,
    resample_for: int | None = None,
) -> BranchPlan:
    """The events opening a branch of ``source`` (its whole log, or at least its first
    ``at`` events) at event ``at``: ``branched_from``, then those events copied, their
    chain checked (``plan_branch`` says the rest).
    """
    if not source:
        raise ValueError("the source log is empty")
    plan = plan_branch(
        lambda seq: source[seq - 1],
        len(source),
        at,
        new_seed=new_seed,
        sandbox_token_hash=sandbox_token_hash,
        source_finished=source_finished,
        reseed=reseed,
        seat=seat,
        admin=admin,
        resample_for=resample_for,
    )
    prefix = source[:at]
    broken = verify_chain(prefix, prefix[0]["game_id"])
    if broken is not None:
        raise ReplayError(broken[0], broken[1])
    return replace(plan, copies=tuple(NewEvent.copy_of(envelope) for envelope in prefix))


def plan_branch(
    fetch: Fetch,
    length: int,
    at: int,
    *,
    new_seed: str,
    sandbox_token_hash: str,
    source_finished: bool,
    reseed: bool = False,
    seat: int | None = None,
    admin: bool = False,
    resample_for: int | None = None,
) -> BranchPlan:
    """A branch of the source at event ``at``, from the few of its events it needs (``fetch``:
    seq -> envelope, up to seq ``length``): its header and its event ``at``, whose hash the
    branch records (``source_hash``). The rest of the source is not read: the branch's store
    keeps its first ``at`` events by reference (``BranchPlan.stored``).

    ``seat`` is the source's seat asking (None for the admin, or for anyone once the source
    has finished). A reseeded branch draws from a new seed after the branch point and, seen
    from seat ``resample_for``, has everything that seat could not see redrawn (the order
    of the decks and bags, the others' hands): a deck shuffled at setup would otherwise
    deal the same cards. While the source is unfinished its seed is still secret and its
    future draws must not be previewed, so the branch is always reseeded, and a seat's
    branch redraws everything that seat could not see at ``at`` (docs/history.md).
    """

    def header_event(seq: int) -> Envelope:
        # A branch's opening events (its marker and the copied past) are one header: a
        # point inside it is no event to branch at.
        if seq > length:
            raise IllegalAction(
                "branch_point_out_of_range",
                f"Event {at} is inside this game's opening events; branch at a later event.",
            )
        return fetch(seq)

    first = header_event(1)
    header = start(first, header_event)
    if not header.version <= at <= length:
        raise IllegalAction(
            "branch_point_out_of_range",
            f"A branch starts after an event from {header.version} to {length}, not {at}.",
        )
    if at < header.sealed_until and not admin:
        raise IllegalAction(
            "before_branch_point",
            f"This game is itself a branch that keeps its source's secrets up to event "
            f"{header.sealed_until}; branch at {header.sealed_until} or later.",
        )
    sealed = not source_finished
    reseeded = reseed or sealed
    if resample_for is not None and not reseeded:
        raise IllegalAction(
            "redraw_needs_reseed", "Redrawing hidden information needs a reseeded branch."
        )
    players = len(header.meta["players"])
    if resample_for is not None and not 0 <= resample_for < players:
        raise IllegalAction("no_such_seat", f"Seats are numbered 0 to {players - 1}.")
    resampled_seat = seat if sealed and seat is not None else resample_for
    data: dict[str, Any] = {
        "source": first["game_id"],
        "at": at,
        "source_hash": fetch(at)["hash"],
        "reseed": reseeded,
        "resampled_seat": resampled_seat,
        "source_finished": source_finished,
        "seed_commitment": seed_commitment(new_seed) if reseeded else None,
    }
    secret: dict[str, Any] = {"visible_to": [], "sandbox_token_hash": sandbox_token_hash}
    if reseeded:
        secret["seed"] = new_seed
    marker = NewEvent(type="branched_from", data=data, actor={"system": "branch"}, secret=secret)
    return BranchPlan(marker, str(first["game_id"]), at, reseeded, resampled_seat, sealed)


def sealed_secret(meta: dict[str, Any], seq: int) -> bool:
    """Whether the secret part of event ``seq`` of this game stays sealed for everyone but
    the admin: in a branch made while its source was unfinished, the copied events (the
    source's seed, the other seats' secrets) stay secret even after the branch ends."""
    return seq <= int(meta.get("branch", {}).get("sealed_until", 0))


# -- the timeline ------------------------------------------------------------------------


def public_scores(ruleset: Ruleset, state: State) -> list[Any] | None:
    """Each seat's score as everyone may see it now, or None when the game does not say.

    A ruleset may offer ``scores(state)``; otherwise the final result's totals, or a
    ``scores`` list in the spectator view, or a per-seat score in its ``seats`` entries.
    """
    own = getattr(ruleset, "scores", None)
    if callable(own):
        return list(own(state))
    result = ruleset.result(state)
    if result is not None and result.get("scores"):
        totals = {entry["seat"]: entry["total"] for entry in result["scores"]}
        return [totals.get(seat) for seat in range(len(totals))]
    view = ruleset.view(state, None)
    if isinstance(view.get("scores"), list):
        return list(view["scores"])
    seats = view.get("seats")
    if isinstance(seats, list) and seats and all(isinstance(s, dict) for s in seats):
        for key in SCORE_KEYS:
            if all(isinstance(s.get(key), int | float) for s in seats):
                return [s[key] for s in seats]
    return None


#: Names the games use for a seat's running score in their views (docs/history.md).
SCORE_KEYS = ("score", "vp", "victory_points", "fame", "points")


def timeline(
    game: Game,
    envelopes: Iterable[Envelope],
    fetch: Fetch,
    rebuild: Rebuild,
    reveal_secrets: bool = False,
) -> Iterator[dict[str, Any]]:
    """One entry per event of ``envelopes`` (in seq order, each after ``game.version``, or
    within the header ``game`` was started from), folding ``game`` forward once, in place.

    An undo returns to a state the fold has stood at, so its entry reuses the round, phase
    and scores noted there rather than rebuilding the state: positions reached within the
    page are noted as they pass, and those below where the page starts that its undos reach
    are noted by one fold before it (see ``_rows_below``). The state itself is rebuilt
    (once) only when a later step or redo needs it.

    The timeline is public: a secret action is summarized from its public part only,
    unless ``reveal_secrets`` (the game is over and none of its secrets are sealed)."""
    envelopes = list(envelopes)
    summaries: dict[int, str] = {}
    rows = _rows_below(game, _lowest_position(game, envelopes), fetch, rebuild)
    redraws = _redraw_seqs(game)
    for envelope in envelopes:
        seq = envelope["seq"]
        if seq <= game.version:
            line = _header_line(game, envelope)
        else:
            line = _event_line(game, envelope, summaries, reveal_secrets)
            advance(game, envelope, fetch, rebuild)
            if seq in redraws:
                rows.clear()  # the states noted so far had not redrawn the hidden information
        row = rows.get(game.position) if game.stale else None
        if row is None:
            row = _row(game)
            rows[game.position] = row
        yield {
            "seq": seq,
            "type": envelope["type"],
            "actor": envelope["actor"],
            "round": row[0],
            "phase": row[1],
            "summary": line,
            "scores": row[2],
            "recorded_at": envelope["recorded_at"],
        }


#: What a timeline entry shows of the state after it: round, phase, public scores.
Row = tuple[Any, Any, list[Any] | None]


def _row(game: Game) -> Row:
    status = game.ruleset.status(game.state)
    return status.get("round"), status.get("phase"), public_scores(game.ruleset, game.state)


def _lowest_position(game: Game, envelopes: list[Envelope]) -> int:
    """The fewest steps the effective history holds anywhere in this page (no folding)."""
    position = lowest = game.position
    for envelope in envelopes:
        if envelope["seq"] <= game.version:
            continue
        if envelope["type"] == "undone":
            position -= 1
        elif envelope["type"] in (*STEP_TYPES, "redone"):
            position += 1
        lowest = min(lowest, position)
    return max(lowest, 0)  # below 0 the log is broken: folding it will say where


def _rows_below(game: Game, lowest: int, fetch: Fetch, rebuild: Rebuild) -> dict[int, Row]:
    """The rows at positions ``lowest`` up to (not including) where ``game`` stands, from one
    rebuild at ``lowest`` and the steps above it folded once: what the page's undos reach
    below its start. Only steps after the floor are undone, and every redraw of hidden
    information lies at or before the floor, so these are the states the undos return to."""
    if lowest >= game.position:
        return {}
    below = Game(game.ruleset, game.meta, {}, game.version, game.effective[:lowest])
    below.state = rebuild(list(below.effective), game.version + 1)
    rows = {lowest: _row(below)}
    for position in range(lowest, game.position):
        apply_step(below, fetch(game.effective[position]))
        below.effective.append(game.effective[position])
        rows[position + 1] = _row(below)
    rows.pop(game.position)  # the page's own first entry says it, from the state itself
    return rows


def _redraw_seqs(game: Game) -> set[int]:
    return {
        int(level["until"])
        for level in game.meta.get("lineage") or ()
        if level["resampled_seat"] is not None
    }


def _step_line(game: Game, envelope: Envelope, reveal_secrets: bool) -> str:
    action = step_action(envelope)
    if reveal_secrets or not (envelope.get("secret") or {}).get("action"):
        return game.ruleset.summarize(game.state, action)
    public = {**envelope["data"]["action"], "seat": action["seat"]}
    try:
        return game.ruleset.summarize(game.state, public)
    except (KeyError, TypeError, ValueError, IndexError):
        # A summary that needs the secret part cannot be given before it is revealed.
        return f"{game.meta['players'][action['seat']]}: a secret {public['type']}"


#: How a timeline says each change of a seat (service.http.resources.lobby).
SEAT_LINES = {
    "joined": "{name} joined seat {seat}",
    "left": "Seat {seat} was left open",
    "bot_seated": "Seat {seat} went to {name}",
    "token_rotated": "Seat {seat} rotated its token",
    "token_reissued": "Seat {seat} was given a new token by the admin",
}


def _seat_line(envelope: Envelope) -> str:
    data = envelope["data"]
    line = SEAT_LINES.get(str(data.get("change")), "Seat {seat} changed")
    return line.format(seat=data.get("seat"), name=data.get("name", ""))


def _header_line(game: Game, envelope: Envelope) -> str:
    data = envelope["data"]
    if envelope["type"] == "branched_from":
        luck = "new luck" if data.get("reseed") else "the same luck"
        return f"Branched from game {data['source']} after event {data['at']}, with {luck}"
    players = ", ".join(data["players"])
    return f"{game.ruleset.title} set up for {players}"


def _event_line(
    game: Game, envelope: Envelope, summaries: dict[int, str], reveal_secrets: bool
) -> str:
    seq, kind = envelope["seq"], envelope["type"]
    if kind in STEP_TYPES:
        summaries[seq] = _step_line(game, envelope, reveal_secrets)
        return summaries[seq]
    if kind == "seat_changed":
        return _seat_line(envelope)
    target = envelope["data"]["seq"] + game.offset(seq)
    what = summaries.get(target, f"event {target}")
    verb = "Undone" if kind == "undone" else "Redone"
    return f"{verb}: {what}"
