"""X's read side: a post's public_metrics (GET /2/tweets/:id: likes, replies, reposts,
quotes, bookmarks, impressions) and the account's followers (GET /2/users/me). Every read
is billed on X's pay-per-use API: off unless the operator lists x in ANALYTICS_PLATFORMS,
and bounded by its daily budget. Link clicks are in non_public_metrics, which X returns
only for posts younger than 30 days: not read."""

from __future__ import annotations

from apps.providers import httpcall
from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.metrics import Followers, Offers, PostMetrics, count, get_json, register_reader
from apps.providers.x.adapter import API, _bearer
from apps.providers.x.errors import classify


class XMetrics:
    platform = "x"
    offers = Offers(
        post=frozenset({"likes", "replies", "reposts", "views"}),
        followers=True,
        billed=True,
        notes={"clicks": "Link clicks are private metrics X keeps for 30 days; not read."},
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        with httpcall.client(headers=_bearer(ctx.credentials)) as http:
            body = get_json(
                http,
                f"{API}/tweets/{post.provider_post_id}",
                classify=classify,
                params={"tweet.fields": "public_metrics"},
            )
        metrics = (body.get("data") or {}).get("public_metrics") or {}
        return PostMetrics(
            likes=count(metrics.get("like_count")),
            replies=count(metrics.get("reply_count")),
            reposts=count(metrics.get("retweet_count")),
            views=count(metrics.get("impression_count")),
            extra={
                name: count(metrics.get(f"{name[:-1]}_count")) or 0
                for name in ("quotes", "bookmarks")
            },
            gaps=self.offers.missing(),
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        with httpcall.client(headers=_bearer(ctx.credentials)) as http:
            body = get_json(
                http, f"{API}/users/me", classify=classify, params={"user.fields": "public_metrics"}
            )
        metrics = (body.get("data") or {}).get("public_metrics") or {}
        return Followers(count=count(metrics.get("followers_count")))


register_reader(XMetrics())
