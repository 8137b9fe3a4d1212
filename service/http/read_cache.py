"""Anonymous heavy reads answered once: a page of events of a game at one version, or a past
state (``state?at=N``), is the same for every spectator until the game moves on, so each
process keeps its answer (docs/security.md, "Bounded costs").

Eight anonymous readers looping over ``/events?limit=1000`` and ``state?at=`` once raised an
honest player's p99 6.7 times; with this cache a loop costs one read and fold per version of
the game, then a copy of bytes. Only spectators' answers are kept (no token: nothing a seat
may see that a spectator may not), bounded in entries and bytes, least recently used first
out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from flask import Flask, Response, current_app

#: Bytes of answers each process keeps at most.
MAX_BYTES = 32 * 1024 * 1024
#: Answers each process keeps at most.
MAX_ENTRIES = 512


class ReadCache:
    """A bounded LRU of whole answers (status 200 only)."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_entries: int = MAX_ENTRIES) -> None:
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._answers: OrderedDict[Hashable, tuple[bytes, dict[str, str]]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def answer(self, key: Hashable, build: Callable[[], Response]) -> Response:
        """The kept answer for ``key``, else ``build()``'s, kept when it is a 200."""
        with self._lock:
            found = self._answers.get(key)
            if found is not None:
                self._answers.move_to_end(key)
                self.hits += 1
        if found is not None:
            body, headers = found
            return Response(body, status=200, headers=headers)
        response = build()
        with self._lock:
            self.misses += 1
        if response.status_code != 200 or response.is_streamed:
            return response
        body = response.get_data()
        if len(body) > self.max_bytes // 4:
            return response
        headers = {key: value for key, value in response.headers.items() if key != "Content-Length"}
        with self._lock:
            if key not in self._answers:
                self._answers[key] = (body, headers)
                self._bytes += len(body)
            while self._answers and (
                self._bytes > self.max_bytes or len(self._answers) > self.max_entries
            ):
                _, (dropped, _) = self._answers.popitem(last=False)
                self._bytes -= len(dropped)
        return response


def install_read_cache(app: Flask) -> None:
    app.extensions["meeple_read_cache"] = ReadCache()


def spectators_answer(key: Hashable, build: Callable[[], Response]) -> Response:
    """``build()``'s answer for a spectator, answered once per ``key`` in this process."""
    cache: ReadCache | None = current_app.extensions.get("meeple_read_cache")
    if cache is None:
        return build()
    return cache.answer(key, build)
