"""``make bench``: run every ``bench/bench_*.py`` module's ``run(report)`` and print ratios.

Each module measures something and a baseline in the same run and calls
``report(name, value, unit, baseline, baseline_unit_value)``; the line ends with the ratio
value/baseline (higher is better for rates). Absolute numbers are printed for context only:
these machines are shared and noisy.
Run one module with ``python -m bench NAME`` (e.g. ``python -m bench fold``).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from collections.abc import Callable
from pathlib import Path


def report(name: str, value: float, unit: str, baseline: float, baseline_name: str) -> None:
    """Print one measurement with its same-run baseline and their ratio."""
    ratio = value / baseline if baseline else float("nan")
    print(
        f"{name:<58} {value:>12,.1f} {unit:<10} vs {baseline_name} {baseline:>12,.1f}"
        f"  ratio {ratio:6.3f}",
        flush=True,
    )


def best_of(repeats: int, function: Callable[[], object]) -> float:
    """The fastest of ``repeats`` runs of ``function``, in seconds (least disturbed by noise)."""
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - began)
    return best


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    wanted = [f"bench_{arg}" for arg in argv] or names
    for name in wanted:
        module = importlib.import_module(f"bench.{name}")
        print(f"== {name.removeprefix('bench_')}: {(module.__doc__ or '').strip().splitlines()[0]}")
        module.run(report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
