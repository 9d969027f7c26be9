"""`enforce_limits` on the fakes whose lookups and status polls our reconciliation reads:
past the documented allowance, only the switched account is refused, with its platform's
status, error and reset headers, and the allowance comes back when the fake's clock
reaches the reset."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

import pytest

from loadtest.platform_fakes.base import FakeRequest, FakeResponse, PlatformFake
from loadtest.platform_fakes.bluesky import PDS_HOST, BlueskyFake
from loadtest.platform_fakes.instagram import InstagramFake
from loadtest.platform_fakes.linkedin import LinkedInFake
from loadtest.platform_fakes.pinterest import PinterestFake
from loadtest.platform_fakes.reddit import RedditFake
from loadtest.platform_fakes.threads import ThreadsFake
from loadtest.platform_fakes.tiktok import TikTokFake
from loadtest.platform_fakes.youtube import YouTubeFake
from loadtest.soak import resolve_behaviours

START = 1_800_003_600.0  # 2027-01-15 09:00 UTC, 01:00 in Los Angeles


def _get(host: str, path: str, token: str = "", headers: dict | None = None, **query: str):
    return FakeRequest(
        "GET",
        host,
        path,
        {name: [value] for name, value in query.items()},
        {"authorization": f"Bearer {token}", **(headers or {})},
    )


def _bluesky(fake, opened) -> FakeRequest:
    did = opened["remote_id"]
    return _get(
        PDS_HOST,
        "/xrpc/com.atproto.repo.getRecord",
        repo=did,
        collection="app.bsky.feed.post",
        rkey="3kabcdefghij2",
    )


def _reddit(fake, opened) -> FakeRequest:
    token = opened["credentials"]["access_token"]
    return _get("oauth.reddit.com", f"/user/{opened['handle']}/submitted", token, limit="25")


def _pinterest(fake, opened) -> FakeRequest:
    token = opened["credentials"]["access_token"]
    return _get("api.pinterest.com", f"/v5/boards/{fake.group_board}/pins", token)


def _youtube(fake, opened) -> FakeRequest:
    token = opened["credentials"]["access_token"]
    uploads = "UU" + opened["remote_id"][2:]
    return _get(
        "www.googleapis.com", "/youtube/v3/playlistItems", token, playlistId=uploads, part="snippet"
    )


def _tiktok(fake, opened) -> FakeRequest:
    request = _get("open.tiktokapis.com", "/v2/video/list/", opened["credentials"]["access_token"])
    request.method, request.query, request.body = "POST", {"fields": ["id"]}, b"{}"
    return request


def _linkedin(fake, opened) -> FakeRequest:
    author = quote(f"urn:li:person:{opened['remote_id']}")
    headers = {
        "linkedin-version": max(fake.live_versions()),
        "x-restli-protocol-version": "2.0.0",
    }
    token = opened["credentials"]["access_token"]
    return _get("api.linkedin.com", "/rest/posts", token, headers, q="author", author=author)


def _threads(fake, opened) -> FakeRequest:
    token = opened["credentials"]["access_token"]
    return _get("graph.threads.net", f"/v1.0/{opened['remote_id']}/threads", token)


def _instagram(fake, opened) -> FakeRequest:
    token = opened["credentials"]["access_token"]
    return _get("graph.instagram.com", f"/v1.0/{opened['remote_id']}/media", token)


def _xrpc_refusal(response: FakeResponse, reset_at: float, now: float) -> None:
    assert response.status == 429
    assert response.body == {"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"}
    assert response.headers["RateLimit-Limit"] == "3000"
    assert response.headers["RateLimit-Remaining"] == "0"
    assert response.headers["RateLimit-Reset"] == str(int(reset_at))  # epoch seconds
    assert response.headers["RateLimit-Policy"] == "3000;w=300"


def _reddit_refusal(response: FakeResponse, reset_at: float, now: float) -> None:
    assert response.status == 429
    assert response.body == {"message": "Too Many Requests", "error": 429}
    assert response.headers["X-Ratelimit-Used"] == "1000"
    assert response.headers["X-Ratelimit-Remaining"] == "0.0"
    assert response.headers["X-Ratelimit-Reset"] == str(math.ceil(reset_at - now))  # seconds


def _pinterest_refusal(response: FakeResponse, reset_at: float, now: float) -> None:
    assert response.status == 429
    assert response.body["code"] == 8
    assert response.headers["x-ratelimit-limit"] == "1000"
    assert response.headers["x-ratelimit-remaining"] == "0"
    assert response.headers["x-ratelimit-reset"] == str(math.ceil(reset_at - now))


def _youtube_refusal(response: FakeResponse, reset_at: float, now: float) -> None:
    assert response.status == 403
    [error] = response.body["error"]["errors"]
    assert (error["reason"], error["domain"]) == ("quotaExceeded", "youtube.quota")
    assert response.headers == {}  # Google says nothing of when to come back


def _tiktok_refusal(response: FakeResponse, reset_at: float, now: float) -> None:
    assert response.status == 429
    assert response.body["error"]["code"] == "rate_limit_exceeded"
    assert response.headers == {}


def _linkedin_refusal(response: FakeResponse, reset_at: float, now: float) -> None:
    assert response.status == 429
    assert "MEMBER DAY limit" in response.body["message"]
    assert response.headers == {}


def _meta_refusal(code: int) -> Callable[[FakeResponse, float, float], None]:
    def check(response: FakeResponse, reset_at: float, now: float) -> None:
        assert response.status == 400
        assert response.body["error"]["code"] == code
        [usage] = json.loads(response.headers["X-Business-Use-Case-Usage"]).values()
        regain = usage[0]["estimated_time_to_regain_access"]
        assert regain == math.ceil((reset_at - now) / 60)  # minutes

    return check


@dataclass(frozen=True)
class Case:
    fake: type[PlatformFake]
    request: Callable[[PlatformFake, dict], FakeRequest]
    refusal: Callable[[FakeResponse, float, float], None]
    endpoint: str
    key: Callable[[dict], str] = lambda opened: str(opened["remote_id"])

    def __str__(self) -> str:
        return self.fake.platform


CASES = [
    Case(BlueskyFake, _bluesky, _xrpc_refusal, "read"),
    Case(RedditFake, _reddit, _reddit_refusal, "client"),
    Case(PinterestFake, _pinterest, _pinterest_refusal, "read"),
    Case(YouTubeFake, _youtube, _youtube_refusal, "units"),
    Case(TikTokFake, _tiktok, _tiktok_refusal, "video_list"),
    Case(
        LinkedInFake,
        _linkedin,
        _linkedin_refusal,
        "reads",
        key=lambda opened: f"urn:li:person:{opened['remote_id']}",
    ),
    Case(ThreadsFake, _threads, _meta_refusal(4), "calls"),
    Case(InstagramFake, _instagram, _meta_refusal(80002), "calls"),
]


def _refused(response: FakeResponse) -> bool:
    """Any platform's rate-limit answer: a 429, YouTube's quotaExceeded, Meta's codes."""
    body = response.body if isinstance(response.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else {}
    reasons = {e.get("reason") for e in error.get("errors", [])}
    return response.status == 429 or "quotaExceeded" in reasons or error.get("code") in (4, 80002)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_only_the_switched_account_is_refused_until_the_reset(case):
    fake = case.fake()
    now = [START]
    fake.clock = lambda: now[0]
    strict, lenient = fake.new_account("strict"), fake.new_account("lenient")
    fake.switch(case.key(strict), "enforce_limits")
    reset_at = fake.exhaust(case.key(strict), case.endpoint)
    fake.exhaust(case.key(lenient), case.endpoint)
    now[0] += 1

    refused = fake.handle(case.request(fake, strict))
    answered = fake.handle(case.request(fake, lenient))

    case.refusal(refused, reset_at, now[0])
    assert not _refused(answered), (answered.status, answered.body)
    now[0] = reset_at - 1
    assert _refused(fake.handle(case.request(fake, strict)))
    now[0] = reset_at
    again = fake.handle(case.request(fake, strict))
    assert not _refused(again), (again.status, again.body)


def test_every_fake_with_enforced_limits_offers_the_switch():
    for case in CASES:
        assert "enforce_limits" in case.fake.account_behaviours, case


def test_the_headers_count_down_the_window_on_every_answer():
    fake = BlueskyFake()
    now = [START]
    fake.clock = lambda: now[0]
    opened = fake.new_account("counted")

    first = fake.handle(_bluesky(fake, opened))
    second = fake.handle(_bluesky(fake, opened))

    assert first.status == 400 and first.body["error"] == "RecordNotFound"
    assert (first.headers["RateLimit-Remaining"], second.headers["RateLimit-Remaining"]) == (
        "2999",
        "2998",
    )
    assert first.headers["RateLimit-Reset"] == str(int(START + 300))


def test_youtube_charges_a_search_a_hundred_units_and_resets_at_pacific_midnight():
    fake = YouTubeFake()
    now = [START]
    fake.clock = lambda: now[0]
    opened = fake.new_account("channel")
    channel = opened["remote_id"]
    fake.switch(channel, "enforce_limits")
    for _ in range(99):
        assert fake.spend(channel, "units", cost=100).refused is False

    spent = fake.spend(channel, "units", cost=100)
    refused = fake.spend(channel, "units", cost=100)

    assert (spent.refused, refused.refused) == (False, True)
    assert refused.reset_at == START + 23 * 3600  # the next midnight in Los Angeles


def test_the_soak_switches_enforce_limits_on_every_platform_by_name_or_with_all():
    platforms = tuple(case.fake.platform for case in CASES)
    wanted = [f"{platform}:enforce_limits" for platform in platforms]

    assert set(wanted) <= set(resolve_behaviours(["all"], platforms))
    assert resolve_behaviours(wanted, platforms) == tuple(wanted)


@pytest.mark.parametrize("fake_class", [ThreadsFake, InstagramFake], ids=lambda c: c.platform)
def test_metas_status_read_of_a_container_spends_the_same_budget(fake_class):
    fake = fake_class()
    opened = fake.new_account("shop")
    account, token = opened["remote_id"], opened["credentials"]["access_token"]
    container = fake.make_container(
        account, {"media_type": "IMAGE", "image_url": "https://a/b.jpg"}
    )
    host = fake.hosts[0]
    fake.switch(account, "enforce_limits")
    fake.exhaust(account, "calls")

    response = fake.handle(_get(host, f"/v1.0/{container.id}", token, fields="status"))

    assert response.status == 400 and response.body["error"]["code"] == fake.throttle_code
    assert "estimated_time_to_regain_access" in response.headers["X-Business-Use-Case-Usage"]
