"""Each platform's metrics reader against respx: what it asks, what it reads, and what it
says it cannot get."""

import httpx
import pytest
import respx

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.meta.graph import FACEBOOK_GRAPH
from apps.providers.metrics import NOT_OFFERED, PERMISSION, POST_METRICS, get_reader, readers
from apps.providers.threads.connect import THREADS_GRAPH
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db


def _ctx(account, credentials: dict) -> PublishContext:
    return PublishContext(
        account=account, credentials=credentials, settings={}, rendition_id=1, idempotency_base="r1"
    )


def _post(post_id: str) -> PublishedSegment:
    return PublishedSegment(provider_post_id=post_id)


def test_every_platform_has_a_reader_that_declares_its_gaps():
    assert set(readers()) >= {
        "sandbox", "mastodon", "bluesky", "x", "linkedin", "threads", "instagram",
        "facebook", "youtube", "tiktok", "pinterest", "reddit",
    }  # fmt: skip
    for reader in readers().values():
        assert reader.offers.post <= set(POST_METRICS)
        for name in set(POST_METRICS) - reader.offers.post:
            assert reader.offers.missing()[name] == NOT_OFFERED


@respx.mock
def test_mastodon_reads_a_status_and_has_no_views(workspace_a):
    account = make_account(
        workspace_a, "mastodon", remote_id="9@m.example", handle="a@m.example",
        credentials={"access_token": "t"},
        settings={"instance": "https://m.example", "account_id": "9"},
    )  # fmt: skip
    respx.get("https://m.example/api/v1/statuses/55").respond(
        200, json={"favourites_count": 4, "reblogs_count": 2, "replies_count": 1}
    )
    respx.get("https://m.example/api/v1/accounts/9").respond(200, json={"followers_count": 77})
    reader = get_reader("mastodon")
    metrics = reader.read_post_metrics(_ctx(account, {"access_token": "t"}), _post("55"))
    assert (metrics.likes, metrics.reposts, metrics.replies, metrics.views) == (4, 2, 1, None)
    assert metrics.gaps == {"views": NOT_OFFERED, "clicks": NOT_OFFERED}
    assert reader.read_followers(_ctx(account, {"access_token": "t"})).count == 77


@respx.mock
def test_x_reads_public_metrics_and_a_429_carries_its_reset(workspace_a):
    account = make_account(
        workspace_a, "x", remote_id="1", handle="a", credentials={"access_token": "t"}
    )
    route = respx.get("https://api.x.com/2/tweets/99")
    route.side_effect = [
        httpx.Response(
            200,
            json={
                "data": {
                    "public_metrics": {
                        "like_count": 3,
                        "reply_count": 1,
                        "retweet_count": 2,
                        "quote_count": 5,
                        "bookmark_count": 0,
                        "impression_count": 400,
                    }
                }
            },
        ),  # fmt: skip
        httpx.Response(429, headers={"x-rate-limit-reset": "4102444800"}, json={}),
    ]
    reader = get_reader("x")
    assert reader.offers.billed
    metrics = reader.read_post_metrics(_ctx(account, {"access_token": "t"}), _post("99"))
    assert (metrics.likes, metrics.views, metrics.extra["quotes"]) == (3, 400, 5)
    assert route.calls[0].request.url.params["tweet.fields"] == "public_metrics"
    with pytest.raises(ProviderError) as err:
        reader.read_post_metrics(_ctx(account, {"access_token": "t"}), _post("99"))
    assert err.value.kind == ErrorKind.RATE_LIMITED and err.value.retry_at is not None


@respx.mock
def test_youtube_reads_statistics_and_a_missing_video_is_gone(workspace_a):
    account = make_account(
        workspace_a, "youtube", remote_id="UC1", handle="c", credentials={"access_token": "t"}
    )
    route = respx.get("https://www.googleapis.com/youtube/v3/videos")
    stats = {"viewCount": "1200", "likeCount": "30", "commentCount": "4"}
    route.side_effect = [
        httpx.Response(200, json={"items": [{"statistics": stats}]}),
        httpx.Response(200, json={"items": []}),
    ]
    reader = get_reader("youtube")
    metrics = reader.read_post_metrics(_ctx(account, {"access_token": "t"}), _post("vid"))
    assert (metrics.views, metrics.likes, metrics.replies, metrics.reposts) == (1200, 30, 4, None)
    with pytest.raises(ProviderError) as err:
        reader.read_post_metrics(_ctx(account, {"access_token": "t"}), _post("vid"))
    assert err.value.http_status == 404


@respx.mock
def test_facebook_without_read_insights_keeps_public_counts(workspace_a):
    account = make_account(
        workspace_a, "facebook", remote_id="123", handle="page", credentials={"access_token": "t"}
    )
    respx.get(f"{FACEBOOK_GRAPH}/123_9").respond(
        200,
        json={
            "reactions": {"summary": {"total_count": 8}},
            "comments": {"summary": {"total_count": 2}},
        },
    )
    respx.get(f"{FACEBOOK_GRAPH}/123_9/insights").respond(
        403, json={"error": {"code": 10, "message": "(#10) requires read_insights"}}
    )
    metrics = get_reader("facebook").read_post_metrics(
        _ctx(account, {"access_token": "t"}), _post("123_9")
    )
    assert (metrics.likes, metrics.replies, metrics.reposts) == (8, 2, 0)
    assert metrics.views is None and metrics.gaps == {"views": PERMISSION, "clicks": PERMISSION}


@respx.mock
def test_threads_reads_post_insights(workspace_a):
    account = make_account(
        workspace_a, "threads", remote_id="7", handle="t", credentials={"access_token": "t"}
    )
    respx.get(f"{THREADS_GRAPH}/m1/insights").respond(
        200,
        json={"data": [
            {"name": "views", "values": [{"value": 50}]},
            {"name": "likes", "values": [{"value": 5}]},
            {"name": "replies", "values": [{"value": 1}]},
            {"name": "reposts", "values": [{"value": 0}]},
            {"name": "quotes", "values": [{"value": 2}]},
        ]},
    )  # fmt: skip
    metrics = get_reader("threads").read_post_metrics(
        _ctx(account, {"access_token": "t"}), _post("m1")
    )
    assert (metrics.views, metrics.likes, metrics.reposts, metrics.extra["quotes"]) == (50, 5, 0, 2)


def test_linkedin_member_without_partner_scope_gets_nothing_and_says_why(workspace_a):
    account = make_account(
        workspace_a, "linkedin", remote_id="abc", handle="m",
        credentials={"access_token": "t", "scope": "openid profile w_member_social"},
    )  # fmt: skip
    with respx.mock:  # no call may leave
        metrics = get_reader("linkedin").read_post_metrics(
            _ctx(account, {"access_token": "t", "scope": "w_member_social"}),
            _post("urn:li:share:1"),
        )
        followers = get_reader("linkedin").read_followers(_ctx(account, {"access_token": "t"}))
    assert metrics.values() == dict.fromkeys(POST_METRICS)
    assert set(metrics.gaps.values()) == {PERMISSION}
    assert followers.count is None and followers.gap == PERMISSION


@respx.mock
def test_reddit_reads_score_and_comments(workspace_a):
    account = make_account(
        workspace_a, "reddit", remote_id="u1", handle="u", credentials={"access_token": "t"}
    )
    data = {"score": 41, "num_comments": 6, "num_crossposts": 1, "upvote_ratio": 0.93}
    respx.get("https://oauth.reddit.com/api/info").respond(
        200, json={"data": {"children": [{"data": data}]}}
    )
    metrics = get_reader("reddit").read_post_metrics(
        _ctx(account, {"access_token": "t"}), _post("t3_x")
    )
    assert (metrics.likes, metrics.replies, metrics.reposts) == (41, 6, 1)
    assert metrics.extra == {"upvote_ratio_pct": 93}


@respx.mock
def test_instagram_without_insights_keeps_likes_and_comments(workspace_a):
    from apps.providers.instagram.connect import INSTAGRAM_GRAPH

    account = make_account(
        workspace_a, "instagram", remote_id="17", handle="ig", credentials={"access_token": "t"}
    )
    respx.get(f"{INSTAGRAM_GRAPH}/m9").respond(200, json={"like_count": 12, "comments_count": 3})
    respx.get(f"{INSTAGRAM_GRAPH}/m9/insights").respond(
        403, json={"error": {"code": 10, "message": "(#10) Application does not have permission"}}
    )
    metrics = get_reader("instagram").read_post_metrics(
        _ctx(account, {"access_token": "t"}), _post("m9")
    )
    assert (metrics.likes, metrics.replies, metrics.views) == (12, 3, None)
    assert metrics.gaps["views"] == PERMISSION and metrics.gaps["clicks"] == NOT_OFFERED


@respx.mock
def test_tiktok_reads_a_video_and_cannot_read_a_post_it_never_named(workspace_a):
    account = make_account(
        workspace_a, "tiktok", remote_id="u", handle="tt", credentials={"access_token": "t"}
    )
    route = respx.post(url__startswith="https://open.tiktokapis.com/v2/video/query/").respond(
        200,
        json={
            "data": {"videos": [{"id": "7", "like_count": 9, "comment_count": 2,
                                 "share_count": 1, "view_count": 300}]},
            "error": {"code": "ok", "message": ""},
        },
    )  # fmt: skip
    reader = get_reader("tiktok")
    metrics = reader.read_post_metrics(_ctx(account, {"access_token": "t"}), _post("7"))
    assert (metrics.likes, metrics.views) == (9, 300)
    assert route.calls[0].request.read() == b'{"filters":{"video_ids":["7"]}}'
    unnamed = reader.read_post_metrics(_ctx(account, {"access_token": "t"}), _post("v_pub_x"))
    assert set(unnamed.gaps.values()) == {NOT_OFFERED} and not route.calls[1:]


@respx.mock
def test_pinterest_reads_lifetime_analytics(workspace_a):
    account = make_account(
        workspace_a, "pinterest", remote_id="p", handle="pin", credentials={"access_token": "t"}
    )
    respx.get("https://api.pinterest.com/v5/pins/55/analytics").respond(
        200,
        json={"all": {"lifetime_metrics": {"IMPRESSION": 900, "SAVE": 12, "PIN_CLICK": 40,
                                           "OUTBOUND_CLICK": 7}}},
    )  # fmt: skip
    metrics = get_reader("pinterest").read_post_metrics(
        _ctx(account, {"access_token": "t"}), _post("55")
    )
    assert (metrics.views, metrics.reposts, metrics.clicks, metrics.likes) == (900, 12, 40, None)
    assert metrics.extra == {"outbound_clicks": 7}


@respx.mock
def test_linkedin_reads_a_page_posts_statistics_and_a_partner_members_social_actions(
    workspace_a,
):
    page = make_account(
        workspace_a, "linkedin", remote_id="org", handle="page",
        credentials={"access_token": "t"}, settings={"author_urn": "urn:li:organization:5"},
    )  # fmt: skip
    stats = respx.get("https://api.linkedin.com/rest/organizationalEntityShareStatistics")
    stats.respond(
        200,
        json={"elements": [{"totalShareStatistics": {
            "likeCount": 4, "commentCount": 1, "shareCount": 2, "impressionCount": 90,
            "clickCount": 6,
        }}]},
    )  # fmt: skip
    reader = get_reader("linkedin")
    ctx = _ctx(page, {"access_token": "t", "scope": "rw_organization_admin"})
    metrics = reader.read_post_metrics(ctx, _post("urn:li:share:9"))
    assert metrics.values() == {"likes": 4, "replies": 1, "reposts": 2, "views": 90, "clicks": 6}
    query = stats.calls[0].request.url.query.decode()
    assert "organizationalEntity=urn%3Ali%3Aorganization%3A5" in query
    assert "shares=List(urn%3Ali%3Ashare%3A9)" in query

    member = make_account(
        workspace_a, "linkedin", remote_id="abc", handle="m", credentials={"access_token": "t"}
    )
    respx.get("https://api.linkedin.com/rest/socialActions/urn%3Ali%3Ashare%3A1").respond(
        200,
        json={"likesSummary": {"totalLikes": 7}, "commentsSummary": {"aggregatedTotalComments": 2}},
    )
    ctx = _ctx(member, {"access_token": "t", "scope": "w_member_social r_member_social"})
    metrics = reader.read_post_metrics(ctx, _post("urn:li:share:1"))
    assert (metrics.likes, metrics.replies, metrics.views) == (7, 2, None)
    assert metrics.gaps["views"] == NOT_OFFERED
