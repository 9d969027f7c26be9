"""How often a published post's metrics are read: a decaying cadence.

Engagement moves fast in a post's first hours and hardly at all after a few weeks, and
every read spends a platform's rate limit (and on some, money), so reads thin out with the
post's age and stop at 90 days. Followers are read once a day per account.
"""

from __future__ import annotations

from datetime import datetime, timedelta

# (age below which this interval applies, the interval), in order.
POST_CADENCE: tuple[tuple[timedelta, timedelta], ...] = (
    (timedelta(hours=1), timedelta(minutes=15)),
    (timedelta(days=1), timedelta(hours=1)),
    (timedelta(days=7), timedelta(days=1)),
    (timedelta(days=90), timedelta(days=7)),
)
# No reads past this age: the last sample stands as the post's final count.
STOP_AFTER = POST_CADENCE[-1][0]
FOLLOWERS_EVERY = timedelta(days=1)
# The first read of a new post: soon, so its page shows numbers within the hour.
FIRST_READ_AFTER = timedelta(minutes=5)


def post_interval(age: timedelta) -> timedelta | None:
    """The wait before the next read of a post this old, or None once reads stop."""
    for below, interval in POST_CADENCE:
        if age < below:
            return interval
    return None


def next_post_sync(published_at: datetime, now: datetime) -> datetime | None:
    """When a post published at `published_at`, read at `now`, is read next: never past
    STOP_AFTER (the last read lands on the 90-day mark), None once that has passed."""
    interval = post_interval(now - published_at)
    if interval is None:
        return None
    return min(now + interval, published_at + STOP_AFTER)
