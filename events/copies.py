"""Copied prefixes stored by reference (``events.store.CopiedPrefix``): how both backends keep
a branch's copy of its source's past without copying it (docs/history.md, "How a branch is
stored").

A stream's stored entries are envelopes and *copy markers*. A marker, stored at seq ``first``,
stands for the ``count`` seqs ``first`` to ``last``; each of them is a copy of another
stream's stored envelope, re-sealed in this stream exactly as ``NewEvent.copy_of`` appended
there would have been (type, data, actor, secret, schema_version, recorded_at kept; this
stream's game_id, seq, idempotency key and chain). The marker keeps:

- ``runs``: where the copied events are stored, in order, as (game, first seq, how many).
  They are always stored envelopes, never another marker: a copy of a stream that holds
  copies names, when it is made, the events those copies name (a branch of a branch copies
  its source's own events and, for the source's copied past, the source's source's), so a
  read resolves one level whatever the depth of the branch. Runs grow with that depth (two
  a level at most), never with the number of events;
- ``prev_hash``: the hash the first copy chains from;
- ``marks``: the hash at every ``spacing``-th seq and at the last (at most ``MARKS`` + 1
  hashes): a read from the middle re-seals from the nearest mark before it, at most
  ``spacing`` copies more than it returns, and a read that passes a mark checks it, so a
  source whose stored events changed under their copies is a ``StoreError``, never silently
  another log. A later append chains from the last mark, which is the stream's head.

A marker is a few kilobytes at most however long the prefix; what reading it costs is the
source's events read and re-sealed (sha256 each), once per read. ``seal_batch`` seals an
append's batch for both backends; ``Copies`` resolves markers when they are read.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from events.envelope import Envelope, NewEvent, canonical_json, seal
from events.store import Appended, CopiedPrefix, StoreError

#: At most this many hashes a marker keeps besides its last (see ``Marker.marks``).
MARKS = 32
#: Marks stand at least this many seqs apart: a short prefix keeps only its last hash.
MIN_SPACING = 64
#: How many (game, seq) -> hash a ``Copies`` remembers where its reads of copies ended, so
#: the next page of a long read goes on from there rather than from a mark.
REMEMBERED = 4096


@dataclass(frozen=True)
class Marker:
    """A stored run of copies (see the module docstring)."""

    first: int
    count: int
    runs: tuple[tuple[str, int, int], ...]
    prev_hash: str
    #: (seq, hash of the copy at that seq), ascending; the last is the marker's last seq
    marks: tuple[tuple[int, str], ...]
    idempotency_key: str | None

    @property
    def last(self) -> int:
        return self.first + self.count - 1

    @property
    def last_hash(self) -> str:
        return self.marks[-1][1]

    def text(self) -> str:
        """The marker as a store keeps it (in the place of an envelope): canonical JSON."""
        value = {
            "copies": {
                "count": self.count,
                "runs": [list(run) for run in self.runs],
                "prev_hash": self.prev_hash,
                "marks": [list(mark) for mark in self.marks],
                "idempotency_key": self.idempotency_key,
            }
        }
        return canonical_json(value).decode("utf-8")

    @classmethod
    def of(cls, first: int, value: dict[str, Any]) -> Marker:
        copies = value["copies"]
        return cls(
            first=first,
            count=int(copies["count"]),
            runs=tuple((str(g), int(f), int(n)) for g, f, n in copies["runs"]),
            prev_hash=str(copies["prev_hash"]),
            marks=tuple((int(seq), str(h)) for seq, h in copies["marks"]),
            idempotency_key=copies["idempotency_key"],
        )


#: A stored entry as read back: an envelope, or a marker standing for several.
Entry = Envelope | Marker

#: The stored envelopes of a game from one seq to another (both included), in seq order:
#: what a backend reads for a marker's runs.
ReadStored = Callable[[str, int, int], list[Envelope]]
#: The stored entries of a game up to a seq (from seq 1), in seq order: what a backend reads
#: of a source to copy its prefix.
ReadEntries = Callable[[str, int], list[Entry]]


def parse_entry(seq: int, text: str) -> Entry:
    """A stored entry's text as an envelope or a marker."""
    value = json.loads(text)
    if "copies" in value:
        return Marker.of(seq, value)
    envelope: Envelope = value
    return envelope


def is_marker_text(text: str) -> bool:
    """Whether a stored entry's text is a marker (without parsing it: envelopes' canonical JSON
    begins with their first field, ``actor``)."""
    return text.startswith('{"copies":')


def entry_first(entry: Entry) -> int:
    """The first seq an entry stands for."""
    return entry.first if isinstance(entry, Marker) else int(entry["seq"])


def entry_last(entry: Entry) -> int:
    """The last seq an entry stands for."""
    return entry.last if isinstance(entry, Marker) else int(entry["seq"])


@dataclass(frozen=True)
class Batch:
    """An append's batch sealed: what it reads back as, and what the store keeps."""

    envelopes: list[Envelope]
    #: (seq, text) of each stored entry (envelopes and markers), in seq order
    stored: list[tuple[int, str]]
    head_hash: str
    #: (first, last) seqs of each marker, for a backend that must find them from inside
    marked: list[tuple[int, int]]


class Copies:
    """Sealing and reading copied prefixes for one store (``read_stored``: its own reads of
    stored envelopes, ``read_entries``: of a source's entries)."""

    def __init__(self, read_stored: ReadStored, read_entries: ReadEntries) -> None:
        self._read_stored = read_stored
        self._read_entries = read_entries
        self._ends: OrderedDict[tuple[str, int], str] = OrderedDict()
        self._lock = threading.Lock()

    def seal_batch(
        self,
        game_id: str,
        events: Sequence[Appended],
        version: int,
        head_hash: str,
        recorded_at: str,
        idempotency_key: str | None,
    ) -> Batch:
        """Seal ``events`` at ``version + 1 ...`` after ``head_hash``; a ``CopiedPrefix``
        becomes a marker and the copies it stands for."""
        envelopes: list[Envelope] = []
        stored: list[tuple[int, str]] = []
        marked: list[tuple[int, int]] = []
        seq = version
        for event in events:
            if isinstance(event, CopiedPrefix):
                marker, copies = self._copy(game_id, seq + 1, event, head_hash, idempotency_key)
                envelopes.extend(copies)
                stored.append((marker.first, marker.text()))
                marked.append((marker.first, marker.last))
                seq, head_hash = marker.last, marker.last_hash
                continue
            seq += 1
            envelope = seal(game_id, seq, event, head_hash, recorded_at, idempotency_key)
            head_hash = envelope["hash"]
            envelopes.append(envelope)
            stored.append((seq, canonical_json(envelope).decode("utf-8")))
        return Batch(envelopes, stored, head_hash, marked)

    def resolve(
        self, game_id: str, entries: Iterable[Entry], after: int, limit: int | None
    ) -> list[Envelope]:
        """The envelopes after seq ``after`` (at most ``limit``) that ``entries`` (a game's
        stored entries in seq order, from one at or before ``after + 1``) stand for."""
        found: list[Envelope] = []
        for entry in entries:
            if limit is not None and len(found) >= limit:
                break
            if isinstance(entry, Marker):
                low = max(entry.first, after + 1)
                high = (
                    entry.last if limit is None else min(entry.last, low + limit - len(found) - 1)
                )
                if low <= high:
                    found.extend(self.expand(game_id, entry, low, high))
            elif entry["seq"] > after:
                found.append(entry)
        return found

    def expand(self, game_id: str, marker: Marker, low: int, high: int) -> list[Envelope]:
        """The copies at seqs ``low`` to ``high`` of ``marker`` (in game ``game_id``)."""
        base, chain = self._base(game_id, marker, low)
        marks = dict(marker.marks)
        sources = self._sources(marker, base + 1 - marker.first, high - marker.first)
        found: list[Envelope] = []
        seq = base
        for seq, envelope in enumerate(
            _sealed(game_id, base + 1, sources, chain, marker.idempotency_key), start=base + 1
        ):
            if seq in marks and envelope["hash"] != marks[seq]:
                raise StoreError(
                    f"game {game_id}: the events copied at seq {seq} no longer match their "
                    "source's (a stored event changed)"
                )
            if seq >= low:
                found.append(envelope)
        if seq != high:
            raise StoreError(f"game {game_id}: events copied at seqs {seq + 1}-{high} are gone")
        self._remember(game_id, high, found[-1]["hash"])
        return found

    # -- helpers -------------------------------------------------------------------

    def _copy(
        self,
        game_id: str,
        first: int,
        prefix: CopiedPrefix,
        prev_hash: str,
        idempotency_key: str | None,
    ) -> tuple[Marker, list[Envelope]]:
        runs: list[tuple[str, int, int]] = []
        contents: list[Envelope] = []
        covered = 0
        for entry in self._read_entries(prefix.source, prefix.length):
            if entry_first(entry) != covered + 1:
                break  # a gap: the source's log is not whole (checked below)
            if isinstance(entry, Marker):
                count = min(entry.count, prefix.length - covered)
                for run in _slice_runs(entry.runs, 0, count - 1):
                    _add_run(runs, run)
                contents.extend(self._sources(entry, 0, count - 1))
            else:
                count = 1
                _add_run(runs, (prefix.source, covered + 1, 1))
                contents.append(entry)
            covered += count
            if covered >= prefix.length:
                break
        if covered < prefix.length:
            raise ValueError(f"game {prefix.source!r} has fewer than {prefix.length} events")
        copies = list(_sealed(game_id, first, contents, prev_hash, idempotency_key))
        spacing = max(MIN_SPACING, math.ceil(prefix.length / MARKS))
        marks = [
            (copy["seq"], copy["hash"])
            for offset, copy in enumerate(copies, start=1)
            if offset % spacing == 0 or offset == len(copies)
        ]
        marker = Marker(first, prefix.length, tuple(runs), prev_hash, tuple(marks), idempotency_key)
        self._remember(game_id, marker.last, marker.last_hash)
        return marker, copies

    def _sources(self, marker: Marker, low: int, high: int) -> Iterator[Envelope]:
        """The stored envelopes the copies at offsets ``low`` to ``high`` (from 0) of
        ``marker`` copy, read a run at a time."""
        for game, first, count in _slice_runs(marker.runs, low, high):
            read = self._read_stored(game, first, first + count - 1)
            if len(read) != count or any("copies" in envelope for envelope in read):
                raise StoreError(f"game {game}: events {first}-{first + count - 1} are gone")
            yield from read

    def _base(self, game_id: str, marker: Marker, low: int) -> tuple[int, str]:
        """The latest seq before ``low`` whose hash is known (kept in the marker or
        remembered from a read), and that hash."""
        with self._lock:
            remembered = self._ends.get((game_id, low - 1))
        if remembered is not None and low - 1 >= marker.first:
            return low - 1, remembered
        base, chain = marker.first - 1, marker.prev_hash
        for seq, mark in marker.marks:
            if seq >= low:
                break
            base, chain = seq, mark
        return base, chain

    def _remember(self, game_id: str, seq: int, hash_: str) -> None:
        with self._lock:
            self._ends[(game_id, seq)] = hash_
            self._ends.move_to_end((game_id, seq))
            while len(self._ends) > REMEMBERED:
                self._ends.popitem(last=False)


def _sealed(
    game_id: str,
    first: int,
    sources: Iterable[Envelope],
    prev_hash: str,
    idempotency_key: str | None,
) -> Iterator[Envelope]:
    """The copies of ``sources`` at seqs ``first ...``, chained from ``prev_hash``."""
    for seq, source in enumerate(sources, start=first):
        event = NewEvent.copy_of(source)
        copy = seal(game_id, seq, event, prev_hash, source["recorded_at"], idempotency_key)
        prev_hash = copy["hash"]
        yield copy


def _slice_runs(
    runs: Sequence[tuple[str, int, int]], low: int, high: int
) -> list[tuple[str, int, int]]:
    """The runs that hold offsets ``low`` to ``high`` (from 0) of the concatenated runs."""
    sliced = []
    start = 0
    for game, first, count in runs:
        end = start + count - 1
        if end >= low and start <= high:
            begin = max(low, start)
            finish = min(high, end)
            sliced.append((game, first + begin - start, finish - begin + 1))
        start = end + 1
    return sliced


def _add_run(runs: list[tuple[str, int, int]], run: tuple[str, int, int]) -> None:
    """Append ``run``, merged into the last run when it goes on from it."""
    if runs and runs[-1][0] == run[0] and runs[-1][1] + runs[-1][2] == run[1]:
        game, first, count = runs[-1]
        runs[-1] = (game, first, count + run[2])
    else:
        runs.append(run)
