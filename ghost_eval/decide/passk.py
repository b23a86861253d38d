"""Repeat statistics: pass@k, pass^k and a Wilson interval, per group of runs that share an identity.

pass@k is the chance that at least one of k runs passes; pass^k the chance that all k do — the
number that matters for an agent whose fix someone will execute. Both use the unbiased estimators
over n observed runs with c passes.
"""

from __future__ import annotations

import math

__all__ = ["pass_at_k", "pass_hat_k", "runs_needed", "wilson_interval"]


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"passes c={c} must be between 0 and n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"k={k} needs 1 <= k <= n={n} runs")


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k) / C(n, k)."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """C(c, k) / C(n, k): all k of k runs pass."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def wilson_interval(c: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for the pass rate; well-behaved at 0/n and n/n, unlike the normal one. `n` may be an
    effective number of independent runs (not a whole number), and `c` the same share of it."""
    if n == 0:
        return (0.0, 1.0)
    p = c / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def runs_needed(n: int, k: int) -> int:
    """How many more runs a group needs before pass^k can be computed at all."""
    return max(0, k - n)
