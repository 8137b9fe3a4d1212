"""Fair shares of a serving process: requests run a few at a time, and the next to run is
the one whose owner has used the process least of late, not the one that came first
(docs/security.md, "What each owner may take").

A process that serves requests on one gevent loop (``meeple serve``, compose's API workers)
runs each request until it waits on the network, so what it does is first come, first
served: eight anonymous readers of a busy game's audit once took an honest player's action
p99 from 11 ms to 42 ms and his actions from about a thousand in eight seconds to 133, while
every one of them kept within its limits. Here a request takes one of ``slots`` places
before it runs and gives it back once its answer is made (a streamed answer's body is sent
after that). When every place is taken, a request waits, and a freed place goes to the
waiting request of the owner with the least *use*: the seconds its requests held places,
halved every ``half_life`` seconds; an owner's own requests keep their order. So an owner
that asks little is served next, whatever another asks, and an owner that asks for more
than its share waits for its own earlier requests, not others' (start-time fair queuing,
with the process as the shared resource).

A request that waits for news (``Prefer: wait``, a live stream's wait: ``aside``) gives its
place back meanwhile and takes one again, in the same order, when it goes on.

The owner is whoever the request is charged to (``service.application.owners``: the client's
address, the admin). Everything here is per process; places are kept per greenlet (or
thread), never shared between processes.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

#: Owners whose use is remembered at most (the least used are forgotten first: forgetting
#: an owner's use only ever puts it first, never behind).
REMEMBERED = 10_000


@dataclass
class _Use:
    seconds: float = 0.0
    at: float = 0.0


@dataclass
class _Waiting:
    owner: str
    order: int
    admitted: threading.Event = field(default_factory=threading.Event)


class RequestShares:
    """``slots`` places to run requests in, given out in owners' fair order."""

    def __init__(
        self,
        slots: int,
        half_life: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if slots < 1:
            raise ValueError(f"a process needs at least one place to run requests, not {slots}")
        self.slots = slots
        self.half_life = half_life
        self._clock = clock
        self._lock = threading.Lock()
        self._running = 0
        self._uses: OrderedDict[str, _Use] = OrderedDict()
        self._waiting: dict[str, deque[_Waiting]] = {}
        self._orders = itertools.count()
        self._held = threading.local()
        #: Requests that waited for a place (for tests and metrics).
        self.waited = 0

    # -- a request's place ---------------------------------------------------------------

    def enter(self, owner: str) -> None:
        """Take a place for this greenlet's request of ``owner``, waiting for one in the fair
        order when they are all taken. A greenlet holds one place at most."""
        if getattr(self._held, "owner", None) is not None:
            return
        with self._lock:
            if self._running < self.slots and not self._waiting:
                self._running += 1
                ticket = None
            else:
                ticket = _Waiting(owner, next(self._orders))
                self._waiting.setdefault(owner, deque()).append(ticket)
                self.waited += 1
        if ticket is not None:
            ticket.admitted.wait()
        self._held.owner = owner
        self._held.since = self._clock()

    def leave(self) -> None:
        """Give this greenlet's place back (nothing if it holds none) and let the next in."""
        owner = getattr(self._held, "owner", None)
        if owner is None:
            return
        self._held.owner = None
        now = self._clock()
        with self._lock:
            self._charge(owner, now - self._held.since, now)
            self._running -= 1
            self._admit_next(now)

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """Give this greenlet's place back while it waits (for news, a step), and take one
        again, in the fair order, when it goes on."""
        owner = getattr(self._held, "owner", None)
        if owner is None:
            yield
            return
        self.leave()
        try:
            yield
        finally:
            self.enter(owner)

    # -- the order -----------------------------------------------------------------------

    def use(self, owner: str) -> float:
        """The seconds of places ``owner`` held, halved every ``half_life`` seconds, now."""
        with self._lock:
            return self._use_now(owner, self._clock())

    def waiting(self) -> int:
        with self._lock:
            return sum(len(queue) for queue in self._waiting.values())

    def _use_now(self, owner: str, now: float) -> float:
        found = self._uses.get(owner)
        if found is None:
            return 0.0
        return found.seconds * 0.5 ** (max(0.0, now - found.at) / self.half_life)

    def _charge(self, owner: str, seconds: float, now: float) -> None:
        self._uses[owner] = _Use(self._use_now(owner, now) + max(0.0, seconds), now)
        self._uses.move_to_end(owner)
        while len(self._uses) > REMEMBERED:
            self._uses.popitem(last=False)

    def _admit_next(self, now: float) -> None:
        while self._running < self.slots and self._waiting:
            owner = min(
                self._waiting,
                key=lambda name: (self._use_now(name, now), self._waiting[name][0].order),
            )
            queue = self._waiting[owner]
            ticket = queue.popleft()
            if not queue:
                del self._waiting[owner]
            self._running += 1
            ticket.admitted.set()


#: The shares of this process's serving apps (one, but for tests that make many).
_installed: weakref.WeakSet[RequestShares] = weakref.WeakSet()


def install(shares: RequestShares) -> None:
    _installed.add(shares)


@contextlib.contextmanager
def aside() -> Iterator[None]:
    """While waiting (for news, a step): this greenlet's place, if it holds one, is free."""
    with contextlib.ExitStack() as stack:
        for shares in list(_installed):
            stack.enter_context(shares.aside())
        yield
