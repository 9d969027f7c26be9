"""The call budget Threads and Instagram document for an app and one of its users, for the
reads our lookups and status polls make: "calls within 24 hours = 4800 * number of
impressions" over a rolling 24 h (Threads counts at least 10 impressions; Instagram names
no floor, so the fake uses Threads' one for both: 48,000 calls). An account switched to
`enforce_limits` is refused past it with the fake's throttling error (Instagram 80002,
Threads code 4), whose `X-Business-Use-Case-Usage` says in `estimated_time_to_regain_access`
how many minutes are left until the window that opened with the first counted call ends
(the fake's fixed window stands for Meta's rolling one)."""

from __future__ import annotations

import math

from loadtest.platform_fakes.base import FakeResponse
from loadtest.platform_fakes.limits import Allowance, LimitedReads

IMPRESSIONS_FLOOR = 10
DAILY_CALLS = Allowance(limit=4800 * IMPRESSIONS_FLOOR, window_s=24 * 3600)


class MetaCallBudget(LimitedReads):
    ALLOWANCES = {"calls": DAILY_CALLS}

    def budget_refusal(self, account: str) -> FakeResponse | None:
        """One call of `account`'s budget, or Meta's throttling answer once it is spent."""
        spent = self.spend(account, "calls")
        if not spent.refused:
            return None
        minutes = max(1, math.ceil(spent.reset_in(self.clock()) / 60))  # type: ignore[attr-defined]
        return self.error(  # type: ignore[attr-defined]
            self.throttle_code,  # type: ignore[attr-defined]
            self.throttle_message,  # type: ignore[attr-defined]
            transient=True,
            headers=self.usage_headers(account, regain_min=minutes),  # type: ignore[attr-defined]
        )
