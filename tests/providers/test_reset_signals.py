"""A platform's reset given as a wait from now (Reddit's and Pinterest's reset headers in
seconds, Meta's estimated_time_to_regain_access in minutes, TikTok's one-minute windows) is
counted from the database clock, as every retry time is compared with it: a host clock
minutes off must not move the retry by as much."""

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from apps.common import db_clock
from apps.providers.errors import parse_reset_seconds
from apps.providers.meta.errors import classify as meta_classify
from apps.providers.pinterest.errors import classify as pinterest_classify
from apps.providers.reddit.errors import classify as reddit_classify
from apps.providers.tiktok.errors import classify as tiktok_classify

SKEW = timedelta(minutes=10)  # the database clock runs this far ahead of the host's


@pytest.fixture(autouse=True)
def skewed(monkeypatch):
    monkeypatch.setattr(db_clock, "_offset", SKEW)


def _close(at: datetime | None, expected: datetime) -> bool:
    return at is not None and abs((at - expected).total_seconds()) < 2


def test_reddits_reset_seconds_count_from_the_database_clock():
    response = httpx.Response(
        429,
        json={"message": "Too Many Requests", "error": 429},
        headers={"X-Ratelimit-Remaining": "0.0", "X-Ratelimit-Reset": "120"},
    )

    error = reddit_classify(response, is_create=False)

    assert _close(error.retry_at, datetime.now(UTC) + SKEW + timedelta(seconds=120))


def test_pinterests_reset_seconds_count_from_the_database_clock():
    response = httpx.Response(
        429, json={"code": 8, "message": "slow down"}, headers={"x-ratelimit-reset": "300"}
    )

    error = pinterest_classify(response, is_create=False)

    assert _close(error.retry_at, datetime.now(UTC) + SKEW + timedelta(seconds=300))


def test_metas_regain_minutes_count_from_the_database_clock():
    entry = {"type": "instagram", "call_count": 100, "estimated_time_to_regain_access": 7}
    usage = json.dumps({"17841": [entry]})
    response = httpx.Response(
        400,
        json={"error": {"code": 80002, "message": "Too many calls"}},
        headers={"X-Business-Use-Case-Usage": usage},
    )

    error = meta_classify(response, is_create=False)

    assert _close(error.retry_at, datetime.now(UTC) + SKEW + timedelta(minutes=7))


def test_tiktoks_minute_counts_from_the_database_clock():
    response = httpx.Response(
        429, json={"data": {}, "error": {"code": "rate_limit_exceeded", "message": "slow"}}
    )

    error = tiktok_classify(response, is_create=False)

    assert _close(error.retry_at, datetime.now(UTC) + SKEW + timedelta(minutes=1))


@pytest.mark.parametrize("value", [None, "", "soon", "-5", "nan"])
def test_an_unreadable_reset_is_none(value):
    assert parse_reset_seconds(value) is None
