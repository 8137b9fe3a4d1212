"""Functions the compute pool's tests run in its child processes (by dotted name)."""

from __future__ import annotations

import os
import time
from typing import Any


def add(a: int, b: int, report: Any = None) -> int:
    return a + b


def pid(report: Any = None) -> int:
    return os.getpid()


def forever(*args: Any, report: Any = None) -> None:
    """A search that never ends (a bug, a budget ignored)."""
    while True:
        time.sleep(3600)


def spin(*args: Any, report: Any = None) -> None:
    """Never ends, never sleeps: holds a CPU as a search does."""
    while True:
        pass


def counting(limit: int, report: Any) -> int:
    """Reports 1, 2, ... until told to stop or ``limit``; how many it reported."""
    done = 0
    while done < limit:
        done += 1
        if report(done):
            break
    return done


def fails(report: Any = None) -> None:
    raise ValueError("this function always fails")


def noisy(report: Any = None) -> str:
    print("a line on stdout that is not an answer")
    return "answered"


def scheduling(report: Any = None) -> dict[str, Any]:
    """How the child is scheduled: its niceness, policy and the cores it may use."""
    return {
        "nice": os.nice(0),
        "policy": os.sched_getscheduler(0),
        "cores": sorted(os.sched_getaffinity(0)),
    }
