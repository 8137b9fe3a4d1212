"""Auditing a game's log (DESIGN.md, "Time, undo, branch, audit").

An audit checks, in order, and stops at the first failure, naming its seq:

1. every line is the canonical JSON of its envelope (when read from a file);
2. the hash chain: seq gapless from 1, each prev_hash the previous hash, each hash right;
3. a full re-fold: every stored action is legal where it stands;
4. every automatic step recomputed from the state before it: the same action and the same
   public result (``public_hash``) as stored;
5. once the game has finished, the revealed seed against its commitment (for a branch,
   every seed it drew from: the root game's and each reseeded level's).

A branch's log is audited the same way; ``audit_branch_source`` also checks, given the
source's log, that the branch copied it faithfully up to the branch point.

It needs the whole log, secrets included: the seed is revealed only once the game ends.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from events.envelope import Envelope, canonical_json, verify_chain
from events.store import EventStore
from projections.fold import Game, ReplayError, decide_system, replay, start


@dataclass
class AuditReport:
    """The outcome of an audit: ``ok``, or the first failing ``seq`` and why."""

    ok: bool
    events: int
    seq: int | None = None
    reason: str | None = None
    finished: bool = False
    system_steps_checked: int = 0
    seed_checked: bool = False
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "events": self.events,
            "seq": self.seq,
            "reason": self.reason,
            "finished": self.finished,
            "system_steps_checked": self.system_steps_checked,
            "seed_checked": self.seed_checked,
        }


class LogFormatError(Exception):
    """A JSON Lines log that is not one canonical envelope a line."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


def parse_jsonl(raw: bytes) -> list[Envelope]:
    """Envelopes from an exported log: one canonical JSON envelope a line, each line ending
    in a newline. Anything else (a changed byte that still parses, a stray space) is refused,
    naming the line (= the seq of a sound log)."""
    if not raw:
        raise LogFormatError(1, "the file is empty")
    if not raw.endswith(b"\n"):
        raise LogFormatError(raw.count(b"\n") + 1, "the last line does not end in a newline")
    envelopes = []
    for number, line in enumerate(raw[:-1].split(b"\n"), start=1):
        try:
            value = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise LogFormatError(number, f"not a JSON envelope ({error})") from None
        if not isinstance(value, dict):
            raise LogFormatError(number, "not a JSON object")
        try:
            canonical = canonical_json(value)
        except ValueError as error:
            raise LogFormatError(number, f"not canonical JSON ({error})") from None
        if canonical != line:
            raise LogFormatError(number, "not in canonical JSON form")
        envelopes.append(value)
    return envelopes


def to_jsonl(envelopes: Iterable[Envelope]) -> bytes:
    """The exported form of a log: canonical JSON, one envelope a line."""
    return b"".join(jsonl_lines(envelopes))


def jsonl_lines(envelopes: Iterable[Envelope]) -> Iterator[bytes]:
    """The exported form of a log, a line at a time (to stream it)."""
    for envelope in envelopes:
        yield canonical_json(envelope) + b"\n"


#: Events read from the store at a time when a whole log is streamed.
READ_PAGE = 500


def read_log(
    store: EventStore, game_id: str, upto: int | None = None, page: int = READ_PAGE
) -> Iterator[Envelope]:
    """A game's events up to seq ``upto`` (default: all), read ``page`` at a time, so
    streaming a long log holds one page in memory, not the log."""
    after = 0
    while upto is None or after < upto:
        wanted = page if upto is None else min(page, upto - after)
        envelopes = store.read(game_id, after=after, limit=wanted)
        if not envelopes:
            return
        yield from envelopes
        after = envelopes[-1]["seq"]


def audit(envelopes: list[Envelope]) -> AuditReport:
    """Audit a complete log (see the module docstring)."""
    count = len(envelopes)
    if not envelopes:
        return AuditReport(False, 0, 1, "the log is empty")
    broken = verify_chain(envelopes, envelopes[0].get("game_id"))
    if broken is not None:
        return AuditReport(False, count, broken[0], broken[1])
    report = AuditReport(True, count)
    try:
        game = _audited_fold(envelopes, report)
    except ReplayError as error:
        return AuditReport(False, count, error.seq, error.reason, notes=report.notes)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        return AuditReport(False, count, report.seq or 1, f"malformed event: {error!r}")
    status = game.ruleset.status(game.state)
    report.finished = bool(status["finished"])
    if report.finished:
        for seq, seed, commitment in _seeds(game):
            if hashlib.sha256(seed.encode()).hexdigest() != commitment:
                return AuditReport(False, count, seq, "the seed does not match its commitment")
        report.seed_checked = True
    return report


def audit_branch_source(branch: list[Envelope], source: list[Envelope]) -> AuditReport:
    """Check that a branch's log copies its source: the source's chain up to the branch
    point, its hash there as recorded in ``branched_from``, and every copied event equal to
    the source's (re-chained, so compared field by field, not by hash)."""
    count = len(branch)
    if not branch or branch[0]["type"] != "branched_from":
        return AuditReport(False, count, 1, "the log does not begin with branched_from")
    data = branch[0]["data"]
    at = int(data["at"])
    if source and data["source"] != source[0]["game_id"]:
        return AuditReport(False, count, 1, f"the branch names source {data['source']!r}")
    prefix = source[:at]
    if len(prefix) != at or len(branch) < at + 1:
        return AuditReport(False, count, 1, f"the source has fewer than {at} events")
    broken = verify_chain(prefix, data["source"])
    if broken is not None:
        return AuditReport(False, count, 1, f"the source's chain breaks at its seq {broken[0]}")
    if prefix[-1]["hash"] != data["source_hash"]:
        return AuditReport(False, count, 1, "the source's hash at the branch point differs")
    for original, copy in zip(prefix, branch[1 : at + 1], strict=True):
        if any(original[name] != copy[name] for name in COPIED_FIELDS):
            return AuditReport(
                False, count, copy["seq"], "the copied event differs from the source's"
            )
    return AuditReport(True, count)


#: What a branch keeps of each copied event (the rest is re-chained in the new log).
COPIED_FIELDS = ("type", "data", "actor", "secret", "schema_version", "recorded_at")


def _seeds(game: Game) -> list[tuple[int, str, str]]:
    """(seq of the event that committed to it, seed, commitment) for every seed the game
    drew from: the root game's, and each reseeded branch level's."""
    meta = game.meta
    lineage = meta.get("lineage")
    if not lineage:
        return [(1, game.seed, meta["seed_commitment"])]
    seeds = [(len(lineage) + 1, meta["root_seed"], meta["root_seed_commitment"])]
    for depth, level in enumerate(lineage, start=1):
        if level["seed"] is not None:
            seeds.append((depth, level["seed"], level["seed_commitment"]))
    return seeds


def _audited_fold(envelopes: list[Envelope], report: AuditReport) -> Game:
    game = start(envelopes[0], lambda seq: envelopes[seq - 1])
    for _, envelope in replay(envelopes, game):
        report.seq = envelope["seq"]
        if envelope["type"] == "system":
            _check_system_step(game, envelope)
            report.system_steps_checked += 1
    report.seq = None
    return game


def _check_system_step(game: Game, envelope: Envelope) -> None:
    """Recompute the automatic step due before ``envelope`` and compare it with the stored one."""
    decided = decide_system(game)
    if decided is None:
        raise ReplayError(envelope["seq"], "no automatic step was due here")
    event, _ = decided
    if event.data["action"] != envelope["data"].get("action"):
        raise ReplayError(
            envelope["seq"], "the stored automatic step differs from the recomputed one"
        )
    if event.data["public_hash"] != envelope["data"].get("public_hash"):
        raise ReplayError(envelope["seq"], "the automatic step's recorded result differs")


# -- computed once per version ---------------------------------------------------------


class AuditCache:
    """Audit outcomes, one per (game, version), computed once however many ask at once.

    A log only grows, so an audit of version N stays true of version N: a finished game's
    audit never changes, an unfinished game's holds until its next event. Requests for an
    audit being computed wait for it rather than computing it again. The ``size`` most
    recently used outcomes are kept (in this process: each API process has its own).
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._done: OrderedDict[Hashable, dict[str, Any]] = OrderedDict()
        self._running: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()
        #: how many audits were computed (not served from the cache): for tests and metrics
        self.computed = 0

    def get(self, key: Hashable, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The outcome for ``key``, computed by ``compute`` only if nobody has or is."""
        while True:
            with self._lock:
                if key in self._done:
                    self._done.move_to_end(key)
                    return self._done[key]
                running = self._running.get(key)
                if running is None:
                    running = self._running[key] = threading.Event()
                    break
            # Another request is computing it: wait, then look again (if it failed, this
            # request computes it in turn).
            running.wait()
        try:
            outcome = compute()
            with self._lock:
                self.computed += 1
                if self.size > 0:
                    self._done[key] = outcome
                    while len(self._done) > self.size:
                        self._done.popitem(last=False)
        finally:
            with self._lock:
                del self._running[key]
            running.set()
        return outcome
