"""The decaying read cadence of a post's metrics."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.analytics.cadence import STOP_AFTER, next_post_sync

T0 = datetime(2027, 3, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("age", "wait"),
    [
        (timedelta(minutes=5), timedelta(minutes=15)),
        (timedelta(hours=3), timedelta(hours=1)),
        (timedelta(days=2), timedelta(days=1)),
        (timedelta(days=30), timedelta(days=7)),
    ],
)
def test_reads_thin_out_with_the_post_age(age, wait):
    assert next_post_sync(T0, T0 + age) == T0 + age + wait


def test_the_last_read_lands_on_the_90_day_mark_then_reads_stop():
    assert next_post_sync(T0, T0 + timedelta(days=88)) == T0 + STOP_AFTER
    assert next_post_sync(T0, T0 + STOP_AFTER) is None
    assert next_post_sync(T0, T0 + timedelta(days=200)) is None
