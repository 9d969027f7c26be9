"""A platform's documented allowances for the endpoints our lookups and status polls read,
counted per account and endpoint on the fake's clock.

Every call is counted, so a fake can report what is left in its headers; a call past the
allowance is refused only for an account switched to `enforce_limits` (a soak posts and
looks up far more per account than a real user would, so refusing everyone would measure
the limit, not the product). Each fake answers a refusal as its platform does.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

ENFORCE = "enforce_limits"


@dataclass(frozen=True)
class Allowance:
    """`limit` units per window. The window is either `window_s` long from the call that
    opened it, or ends at the next calendar reset `resets_at(now)` (a daily quota)."""

    limit: int
    window_s: float = 0.0
    resets_at: Callable[[float], float] | None = None

    def window_end(self, opened: float) -> float:
        if self.resets_at is not None:
            return self.resets_at(opened)
        return opened + self.window_s


@dataclass(frozen=True)
class Spent:
    """One call's standing in its window."""

    limit: int
    used: int
    reset_at: float  # when the window ends, on the fake's clock
    refused: bool  # past the allowance, for an account that enforces it

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    def reset_in(self, now: float) -> int:
        """Whole seconds until the reset (at least 1 while refused)."""
        return max(1, math.ceil(self.reset_at - now))


def next_midnight(zone: str) -> Callable[[float], float]:
    """The next midnight in `zone` after an instant (epoch seconds)."""
    tz = ZoneInfo(zone)

    def resets_at(now: float) -> float:
        local = datetime.fromtimestamp(now, UTC).astimezone(tz)
        midnight = datetime.combine(local.date() + timedelta(days=1), datetime.min.time(), tz)
        return midnight.timestamp()

    return resets_at


class Allowances:
    """The windows of one fake: (account, endpoint) -> (window end, units used)."""

    def __init__(self, table: dict[str, Allowance]) -> None:
        self.table = table
        self._windows: dict[tuple[str, str], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def spend(self, account: str, endpoint: str, now: float, *, enforce: bool, cost: int = 1):
        """Count one call costing `cost` units; refused (and not counted) when the window
        cannot hold it and the account `enforce`s its allowance."""
        allowance = self.table[endpoint]
        key = (str(account), endpoint)
        with self._lock:
            end, used = self._windows.get(key, (0.0, 0))
            if now >= end:
                end, used = allowance.window_end(now), 0
            refused = enforce and used + cost > allowance.limit
            if not refused:
                used += cost
            self._windows[key] = (end, used)
        return Spent(limit=allowance.limit, used=used, reset_at=end, refused=refused)

    def exhaust(self, account: str, endpoint: str, now: float) -> float:
        """Spend the whole allowance of the current window (tests); returns its end."""
        allowance = self.table[endpoint]
        key = (str(account), endpoint)
        with self._lock:
            end, _ = self._windows.get(key, (0.0, 0))
            if now >= end:
                end = allowance.window_end(now)
            self._windows[key] = (end, allowance.limit)
        return end


class LimitedReads:
    """Mixed into a fake: `ALLOWANCES` (endpoint -> Allowance) counted on the fake's `clock`,
    refused for accounts switched to `enforce_limits`."""

    ALLOWANCES: dict[str, Allowance] = {}

    def _allowances(self) -> Allowances:
        counted = self.__dict__.get("_counted_allowances")
        if counted is None:
            counted = self.__dict__.setdefault("_counted_allowances", Allowances(self.ALLOWANCES))
        return counted

    def spend(self, account: str, endpoint: str, cost: int = 1) -> Spent:
        enforce = self.switched(account, ENFORCE)  # type: ignore[attr-defined]
        now = self.clock()  # type: ignore[attr-defined]
        return self._allowances().spend(account, endpoint, now, enforce=enforce, cost=cost)

    def exhaust(self, account: str, endpoint: str) -> float:
        """Spend `account`'s whole allowance of `endpoint` now; returns when it resets."""
        return self._allowances().exhaust(account, endpoint, self.clock())  # type: ignore[attr-defined]
