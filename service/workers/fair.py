"""Fair shares of the compute: bot turns and analyses are taken round-robin across their owners,
and across each owner's games, with at most a few of one owner's running at once; not first
come, first served (docs/operations.md, "Fair shares").

A job waits with its *share*: its owner (``service.application.owners``: whom its compute is
charged to) and its group (the game it is for). When a process is free, the next job is

1. of the owner that, among those with a job waiting and fewer than ``per_owner`` jobs
   running, was served least recently (an owner not served yet, or not for a day, before
   every other, in the order they came);
2. of that owner's game that came, or was last served, first;
3. that game's oldest waiting job.

So an owner with fifty games waiting is served once a round, as an owner with one is; and as
an owner with one game leaves the round after its turn and comes back with the next one, it
comes back ahead of an owner who was served since: its turn waits for the jobs running now,
not behind another owner's queue.

Two implementations of one order, held to it by one test suite (tests/unit/test_fair.py):

- ``FairQueue`` in memory, which ``FairPool`` serves with a few threads (the in-process
  runner's bots and analyses: their threads only wait for a child process's answer);
- ``RedisFairQueue``, which every process of an RQ deployment queues into; each RQ job of
  the bots' or analyses' queue then takes the fair queue's next job, whichever job it was
  queued with (``service.workers.jobs.fair_turn``). Its pushes are plain commands, so an
  append's own script can make them (``RQJobs.side_writes``), and its running jobs are
  leases: a worker that dies mid-job frees its owner's place when its lease ends.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import redis

#: How far ahead of every owner served an owner not served yet ranks (ranks are times, or
#: ticks in memory): new owners come first, in the order they came.
NOT_SERVED = 1e12
#: Seconds an owner's last service is remembered (Redis); in memory, this many owners.
SERVED_MEMORY_SECONDS = 24 * 3600.0
SERVED_MEMORY = 10_000


@dataclass(frozen=True)
class Share:
    """Whose compute a job is (``owner``), and which of the owner's games it is for (``group``)."""

    owner: str
    group: str


@dataclass(frozen=True)
class Taken:
    """A job taken from a fair queue to run now; give it back with ``done`` when it ends."""

    job_id: str
    share: Share
    item: Any


class FairQueue:
    """Waiting jobs in the fair order, in memory (not thread-safe: its user holds a lock)."""

    def __init__(self) -> None:
        self._tick = itertools.count(1)
        #: job id -> (share, item) of every waiting job
        self._waiting: dict[str, tuple[Share, Any]] = {}
        #: owner -> its rank, for owners with a job waiting (lowest first)
        self._owners: dict[str, float] = {}
        #: owner -> group -> its rank, for groups with a job waiting
        self._groups: dict[str, dict[str, float]] = {}
        #: (owner, group) -> its waiting job ids, oldest first
        self._jobs: dict[tuple[str, str], deque[str]] = {}
        #: owner -> the tick it was last served at (the latest SERVED_MEMORY owners)
        self._served: OrderedDict[str, float] = OrderedDict()
        #: owner -> the ids of its jobs running now
        self._running: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._waiting)

    def push(self, job_id: str, share: Share, item: Any) -> bool:
        """Queue a job; False if a job of that id waits already (one running may wait again)."""
        if job_id in self._waiting:
            return False
        tick = next(self._tick)
        self._waiting[job_id] = (share, item)
        if share.owner not in self._owners:
            self._owners[share.owner] = self._served.get(share.owner, tick - NOT_SERVED)
        self._groups.setdefault(share.owner, {}).setdefault(share.group, tick)
        self._jobs.setdefault((share.owner, share.group), deque()).append(job_id)
        return True

    def pop(self, per_owner: int) -> Taken | None:
        """The next job in the fair order of an owner with fewer than ``per_owner`` running,
        now counted as running; None if no such job waits."""
        for owner in sorted(self._owners, key=lambda name: (self._owners[name], name)):
            if len(self._running.get(owner, ())) >= per_owner:
                continue
            groups = self._groups[owner]
            group = min(groups, key=lambda name: (groups[name], name))
            jobs = self._jobs[(owner, group)]
            job_id = jobs.popleft()
            share, item = self._waiting.pop(job_id)
            tick = next(self._tick)
            if jobs:
                groups[group] = tick
            else:
                del groups[group], self._jobs[(owner, group)]
            if groups:
                self._owners[owner] = tick
            else:
                del self._owners[owner], self._groups[owner]
            self._served[owner] = tick
            self._served.move_to_end(owner)
            while len(self._served) > SERVED_MEMORY:
                self._served.popitem(last=False)
            self._running.setdefault(owner, set()).add(job_id)
            return Taken(job_id, share, item)
        return None

    def done(self, taken: Taken) -> None:
        """A job ``pop`` gave has ended: its owner's place is free."""
        running = self._running.get(taken.share.owner)
        if running is not None:
            running.discard(taken.job_id)
            if not running:
                del self._running[taken.share.owner]

    def waiting(self, job_id: str) -> bool:
        return job_id in self._waiting

    def running(self, job_id: str) -> bool:
        return any(job_id in ids for ids in self._running.values())

    def order(self) -> list[str]:
        """The waiting jobs' ids in the order they would be taken if no owner were at its
        limit (a waiting job's place in the queue)."""
        ahead = FairQueue()
        ahead._tick = copy.copy(self._tick)
        ahead._waiting = {job_id: (share, None) for job_id, (share, _) in self._waiting.items()}
        ahead._owners = dict(self._owners)
        ahead._groups = {owner: dict(groups) for owner, groups in self._groups.items()}
        ahead._jobs = {key: deque(jobs) for key, jobs in self._jobs.items()}
        ahead._served = OrderedDict(self._served)
        taken: list[str] = []
        while (next_one := ahead.pop(math.inf)) is not None:  # type: ignore[arg-type]
            taken.append(next_one.job_id)
            ahead.done(next_one)
        return taken

    def drain(self) -> list[Any]:
        """Take every waiting job out (the pool is closing); their items."""
        items = [item for _, item in self._waiting.values()]
        for held in (self._waiting, self._owners, self._groups, self._jobs):
            held.clear()
        return items


class FairPool:
    """``size`` threads, each running the fair queue's next job when it is free (the in-process
    runner's bots and analyses); ``per_owner()`` says how many of one owner's may run at once
    (read when a thread is free, so a changed setting counts at once)."""

    def __init__(self, name: str, size: int, per_owner: Callable[[], int]) -> None:
        self.name = name
        self.size = size
        self._per_owner = per_owner
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix=f"meeple-{name}")
        self._queue = FairQueue()
        self._lock = threading.Lock()
        self._running = 0
        self._closed = False
        #: job id -> when it was queued, of every waiting job
        self._since: dict[str, float] = {}

    def submit(self, job_id: str, share: Share, run: Callable[[], None]) -> bool:
        """Queue ``run`` under ``share``; False if a job of that id waits already or the pool
        is closed."""
        with self._lock:
            if self._closed or not self._queue.push(job_id, share, run):
                return False
            self._since[job_id] = time.time()
            self._start_next()
        return True

    def counts(self) -> tuple[int, int, float | None]:
        """Jobs waiting, jobs running, and when the longest-waiting one was queued."""
        with self._lock:
            return len(self._queue), self._running, min(self._since.values(), default=None)

    def _start_next(self) -> None:
        """Start the next jobs while threads are free (the lock held)."""
        while self._running < self.size:
            taken = self._queue.pop(max(1, self._per_owner()))
            if taken is None:
                return
            self._since.pop(taken.job_id, None)
            self._running += 1
            try:
                self._executor.submit(self._run, taken)
            except RuntimeError:  # shut down meanwhile
                self._running -= 1
                return

    def _run(self, taken: Taken) -> None:
        try:
            taken.item()
        finally:
            with self._lock:
                self._running -= 1
                self._queue.done(taken)
                if not self._closed:
                    self._start_next()

    def busy(self, job_id: str) -> bool:
        """Whether a job of that id waits or runs here."""
        with self._lock:
            return self._queue.waiting(job_id) or self._queue.running(job_id)

    def position(self, job_id: str) -> int | None:
        """A waiting job's place in the fair order (1: the next one taken); None if it does
        not wait."""
        with self._lock:
            order = self._queue.order()
        return order.index(job_id) + 1 if job_id in order else None

    def shutdown(self) -> list[Any]:
        """Stop taking jobs, wait for the running ones; the waiting jobs, never run."""
        with self._lock:
            self._closed = True
            left = self._queue.drain()
            self._since.clear()
        self._executor.shutdown(wait=True, cancel_futures=True)
        return left


# -- in Redis ---------------------------------------------------------------------------------

#: Takes the next job in the fair order. ARGV: 1 the keys' prefix, 2 now, 3 per owner, 4 the
#: lease's end, 5 the oldest service remembered, 6 NOT_SERVED. Owners that came since the last
#: take join the round first (at their last service, or NOT_SERVED ahead of the time they came); an
#: owner's running jobs whose lease ended (their workers died) are forgotten. Returns
#: {owner, group, job} or false. Its keys are built from the prefix: RQ's Redis is one server,
#: never a cluster.
_TAKE = """
local p = ARGV[1]
local owners, served, arrived = p .. ':owners', p .. ':served', p .. ':arrived'
local came = redis.call('ZRANGE', arrived, 0, -1, 'WITHSCORES')
for i = 1, #came, 2 do
  if not redis.call('ZSCORE', owners, came[i]) then
    local rank = redis.call('ZSCORE', served, came[i])
    if not rank then rank = tonumber(came[i + 1]) - tonumber(ARGV[6]) end
    redis.call('ZADD', owners, rank, came[i])
  end
end
redis.call('DEL', arrived)
redis.call('ZREMRANGEBYSCORE', served, '-inf', ARGV[5])
for _, owner in ipairs(redis.call('ZRANGE', owners, 0, -1)) do
  local running = p .. ':running:' .. owner
  redis.call('ZREMRANGEBYSCORE', running, '-inf', ARGV[2])
  local groups = p .. ':groups:' .. owner
  local group = redis.call('ZRANGE', groups, 0, 0)[1]
  if not group then
    redis.call('ZREM', owners, owner)
  elseif redis.call('ZCARD', running) < tonumber(ARGV[3]) then
    local jobs = p .. ':jobs:' .. group .. ':' .. owner
    local job = redis.call('ZRANGE', jobs, 0, 0)[1]
    if job then redis.call('ZREM', jobs, job) end
    if redis.call('ZCARD', jobs) > 0 then
      redis.call('ZADD', groups, ARGV[2], group)
    else
      redis.call('ZREM', groups, group)
    end
    if redis.call('ZCARD', groups) > 0 then
      redis.call('ZADD', owners, ARGV[2], owner)
    else
      redis.call('ZREM', owners, owner)
    end
    if job then
      redis.call('ZADD', served, ARGV[2], owner)
      local id = cjson.decode(job)['id']
      redis.call('HDEL', p .. ':waiting', id)
      redis.call('ZADD', running, ARGV[4], id)
      redis.call('PEXPIRE', running, math.ceil((tonumber(ARGV[4]) - tonumber(ARGV[2])) * 1000))
      redis.call('ZADD', p .. ':started', ARGV[4], id)
      return {owner, group, job}
    end
  end
end
return false
"""


class RedisFairQueue:
    """The fair order in Redis (RQ's), shared by every process; keys under
    ``meeple:fair:<queue>:``::

        owners            sorted set: owners with a job waiting, by rank
        arrived           sorted set: owners that came since the last take, by when they came
        served            sorted set: owners by their last service (a day's worth)
        groups:<owner>    sorted set: the owner's games with a job waiting, by rank
        jobs:<game>:<owner> sorted set: the game's waiting jobs (JSON), by when they came
        waiting           hash: job id -> owner, of every waiting job
        running:<owner>   sorted set: the owner's running job ids, by the end of their lease
        started           sorted set: every running job id, by the end of its lease

    A job runs under a lease (longer than its RQ job's timeout): a worker that died mid-job
    stops counting against its owner when the lease ends."""

    def __init__(self, connection: redis.Redis, queue: str) -> None:
        self.connection = connection
        self.prefix = f"meeple:fair:{queue}"
        self._take = connection.register_script(_TAKE)

    def _key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    def push_commands(self, job_id: str, share: Share, item: Any, now: float) -> list[Any]:
        """The plain commands that queue a job (for an append's script, or a pipeline): every
        one idempotent, so a job pushed twice waits once."""
        job = json.dumps({"id": job_id, "job": item}, sort_keys=True)
        at = repr(now)
        return [
            ("HSET", self._key("waiting"), job_id, share.owner),
            ("ZADD", self._key("arrived"), "NX", at, share.owner),
            ("ZADD", self._key("groups", share.owner), "NX", at, share.group),
            ("ZADD", self._key("jobs", share.group, share.owner), "NX", at, job),
        ]

    def push(self, job_id: str, share: Share, item: Any, now: float) -> None:
        with self.connection.pipeline(transaction=True) as pipe:
            for command in self.push_commands(job_id, share, item, now):
                pipe.execute_command(*command)
            pipe.execute()

    def pop(self, per_owner: int, now: float, lease: float) -> Taken | None:
        """The next job in the fair order, now running for ``lease`` seconds at most; None if
        none may run."""
        found = self._take(
            args=[
                self.prefix,
                repr(now),
                per_owner,
                repr(now + lease),
                repr(now - SERVED_MEMORY_SECONDS),
                repr(NOT_SERVED),
            ]
        )
        if not found:
            return None
        owner, group, job = (part.decode() if isinstance(part, bytes) else part for part in found)
        parsed = json.loads(job)
        return Taken(str(parsed["id"]), Share(owner, group), parsed["job"])

    def done(self, taken: Taken) -> bool:
        """A job ``pop`` gave has ended: its owner's place is free. Whether jobs still wait."""
        with self.connection.pipeline(transaction=False) as pipe:
            pipe.zrem(self._key("running", taken.share.owner), taken.job_id)
            pipe.zrem(self._key("started"), taken.job_id)
            pipe.hlen(self._key("waiting"))
            return bool(pipe.execute()[2])

    def waiting(self, job_id: str) -> bool:
        return bool(self.connection.hexists(self._key("waiting"), job_id))

    def running(self, job_id: str, now: float) -> bool:
        lease = self.connection.zscore(self._key("started"), job_id)
        return lease is not None and float(lease) > now

    def owner_running(self, owner: str, now: float) -> int:
        """How many of the owner's jobs run now (within their leases)."""
        return int(self.connection.zcount(self._key("running", owner), now, "+inf"))

    def running_now(self, now: float) -> int:
        """How many jobs run now (within their leases), whoever's."""
        return int(self.connection.zcount(self._key("started"), now, "+inf"))

    def owner_of(self, job_id: str) -> str | None:
        """The owner of a waiting job."""
        found = self.connection.hget(self._key("waiting"), job_id)
        return found.decode() if isinstance(found, bytes) else found

    def __len__(self) -> int:
        return int(self.connection.hlen(self._key("waiting")))
