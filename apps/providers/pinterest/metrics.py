"""Pinterest's read side: a Pin's lifetime analytics (GET /v5/pins/{id}/analytics:
impressions, saves, Pin clicks, outbound clicks; scope pins:read, business
accounts for most metrics) and the account's followers (GET /v5/user_account). Pinterest
offers no likes or reply counts for a Pin; analytics cover at most the last 90 days."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.metrics import Followers, Offers, PostMetrics, count, register_reader
from apps.providers.pinterest.api import call, client

METRIC_TYPES = "IMPRESSION,SAVE,PIN_CLICK,OUTBOUND_CLICK"


class PinterestMetrics:
    platform = "pinterest"
    offers = Offers(
        post=frozenset({"reposts", "views", "clicks"}),
        followers=True,
        notes={
            "likes": "Pinterest offers no like count for a Pin.",
            "replies": "Pinterest offers no comment count through its API.",
        },
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        today = timezone.now().date()
        params = {
            "start_date": (today - timedelta(days=89)).isoformat(),
            "end_date": today.isoformat(),
            "metric_types": METRIC_TYPES,
        }
        with client(ctx.credentials) as http:
            body = call(
                http,
                "GET",
                f"/pins/{post.provider_post_id}/analytics",
                is_create=False,
                params=params,
            )
        found = body.get("all") or {}
        # Lifetime counts where Pinterest gives them, else the summary of the 90 days asked.
        lifetime = found.get("lifetime_metrics") or found.get("summary_metrics") or {}
        outbound = count(lifetime.get("OUTBOUND_CLICK"))
        return PostMetrics(
            reposts=count(lifetime.get("SAVE")),  # a save is Pinterest's repost
            views=count(lifetime.get("IMPRESSION")),
            clicks=count(lifetime.get("PIN_CLICK")),
            extra={"outbound_clicks": outbound} if outbound is not None else {},
            gaps=self.offers.missing(),
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        with client(ctx.credentials) as http:
            body = call(http, "GET", "/user_account", is_create=False)
        return Followers(count=count(body.get("follower_count")))


register_reader(PinterestMetrics())
