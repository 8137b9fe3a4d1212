"""events.copies without a store: what reading copies costs, and how copies of copies are named."""

from __future__ import annotations

import math

from events.copies import MARKS, MIN_SPACING, Copies, Entry, Marker, parse_entry
from events.envelope import GENESIS_HASH, Envelope, NewEvent, seal
from events.store import CopiedPrefix

AT = "2026-01-02T03:04:05.000006Z"


class Logs:
    """Stored entries by game, as a backend would keep them; counts the envelopes read."""

    def __init__(self) -> None:
        self.entries: dict[str, list[tuple[int, Entry]]] = {}
        self.read = 0
        self.copies = Copies(self.read_stored, self.read_entries)

    def read_stored(self, game_id: str, first: int, last: int) -> list[Envelope]:
        found = [e for seq, e in self.entries[game_id] if first <= seq <= last]
        self.read += len(found)
        assert not any(isinstance(e, Marker) for e in found)
        return found  # type: ignore[return-value]

    def read_entries(self, game_id: str, upto: int) -> list[Entry]:
        return [e for seq, e in self.entries.get(game_id, []) if seq <= upto]

    def append(self, game_id: str, events: list[NewEvent | CopiedPrefix]) -> list[Envelope]:
        stored = self.entries.setdefault(game_id, [])
        version = 0
        head = GENESIS_HASH
        if stored:
            last = stored[-1][1]
            version = last.last if isinstance(last, Marker) else last["seq"]
            head = last.last_hash if isinstance(last, Marker) else last["hash"]
        batch = self.copies.seal_batch(game_id, events, version, head, AT, None)
        assert [e["seq"] for e in batch.envelopes] == list(
            range(version + 1, version + 1 + len(batch.envelopes))
        )
        stored.extend((seq, parse_entry(seq, text)) for seq, text in batch.stored)
        return batch.envelopes


def steps(count: int) -> list[NewEvent | CopiedPrefix]:
    return [NewEvent("action", {"n": n}, {"seat": 0}) for n in range(1, count + 1)]


def opening(source: str, length: int) -> list[NewEvent | CopiedPrefix]:
    return [
        NewEvent("branched_from", {"source": source}, {"system": "branch"}),
        CopiedPrefix(source, length),
    ]


def test_a_read_from_the_middle_of_copies_reseals_at_most_one_spacing_more() -> None:
    logs = Logs()
    logs.append("src", steps(10_000))
    logs.append("b", opening("src", 10_000))
    marker = logs.entries["b"][1][1]
    assert isinstance(marker, Marker)
    spacing = max(MIN_SPACING, math.ceil(10_000 / MARKS))

    logs.read = 0
    logs.copies.expand("b", marker, 7_000, 7_000)

    assert 1 <= logs.read <= spacing


def test_the_next_page_of_a_long_read_goes_on_from_where_the_last_ended() -> None:
    logs = Logs()
    logs.append("src", steps(3_000))
    logs.append("b", opening("src", 3_000))
    marker = logs.entries["b"][1][1]
    assert isinstance(marker, Marker)
    logs.copies.expand("b", marker, 1_001, 1_500)

    logs.read = 0
    logs.copies.expand("b", marker, 1_501, 2_000)

    assert logs.read == 500


def test_a_copy_of_copies_names_the_events_they_name() -> None:
    logs = Logs()
    logs.append("src", steps(100))
    logs.append("b1", opening("src", 80))
    logs.append("b1", steps(5))
    logs.append("b2", opening("b1", 86))

    marker = logs.entries["b2"][1][1]
    assert isinstance(marker, Marker)
    # b1's own first event, src's first 80 (b1's copies), then b1's own 5
    assert marker.runs == (("b1", 1, 1), ("src", 1, 80), ("b1", 82, 5))


def test_copies_chain_exactly_as_the_copied_envelopes_appended_would() -> None:
    logs = Logs()
    source = logs.append("src", steps(70))
    copies = logs.append("b", opening("src", 70))

    prev = copies[0]["hash"]
    for seq, original in enumerate(source, start=2):
        expected = seal("b", seq, NewEvent.copy_of(original), prev, "ignored", None)
        assert copies[seq - 1] == expected
        prev = expected["hash"]
