"""Confidence intervals for what agents and analyses report (95 %)."""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The normal quantile of a two-sided 95 % interval.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def wilson(successes: float, trials: int, z: float = Z95) -> Interval:
    """Wilson's score interval of a rate (a tie counts as a share of a win)."""
    if trials <= 0:
        return Interval(0.0, 1.0)
    rate = successes / trials
    denominator = 1 + z * z / trials
    centre = (rate + z * z / (2 * trials)) / denominator
    spread = z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials))
    spread /= denominator
    # The interval holds the rate; min/max only undo rounding (0 wins: a low of 1e-17).
    return Interval(max(0.0, min(rate, centre - spread)), min(1.0, max(rate, centre + spread)))


def mean_interval(total: float, squares: float, count: int, z: float = Z95) -> Interval | None:
    """The normal interval of a mean from its sum and sum of squares; None below 2 samples."""
    if count < 2:
        return None
    mean = total / count
    variance = max(0.0, (squares - count * mean * mean) / (count - 1))
    spread = z * math.sqrt(variance / count)
    return Interval(mean - spread, mean + spread)
