"""How long an agent may think: a number of iterations (playouts), a number of seconds, or
both (whichever runs out first). Projections read no clock of their own: a time budget
carries the clock the caller gives it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """At most ``iterations`` playouts and at most ``seconds`` by ``clock``.

    With iterations alone the same seed always gives the same choice; a time budget gives as
    many playouts as the machine manages, so its choices may differ from run to run."""

    iterations: int | None = None
    seconds: float | None = None
    clock: Callable[[], float] | None = None

    def __post_init__(self) -> None:
        if self.iterations is None and self.seconds is None:
            raise ValueError("a budget needs iterations, seconds or both")
        if self.iterations is not None and self.iterations < 1:
            raise ValueError("iterations must be at least 1")
        if self.seconds is not None:
            if self.seconds <= 0:
                raise ValueError("seconds must be positive")
            if self.clock is None:
                raise ValueError("a budget in seconds needs a clock")

    def start(self) -> Callable[[int], bool]:
        """A check ``more(done)``: whether another playout fits after ``done`` of them."""
        deadline = None
        if self.seconds is not None and self.clock is not None:
            deadline = self.clock() + self.seconds
        clock = self.clock

        def more(done: int) -> bool:
            if self.iterations is not None and done >= self.iterations:
                return False
            if deadline is not None and clock is not None and done > 0:
                return clock() < deadline
            return True

        return more
