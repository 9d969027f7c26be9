"""YouTube's read side: a video's statistics (videos.list part=statistics: views, likes,
comments; dislikes are hidden since 2021) and the channel's subscribers (channels.list
mine=true). Each call spends 1 unit of the project's daily quota (10,000 by default,
shared with uploads at 1,600 each): off unless the operator lists youtube in
ANALYTICS_PLATFORMS, and bounded by its daily budget. Shares and clicks are only in the
YouTube Analytics API (another scope), not read."""

from __future__ import annotations

from apps.providers import httpcall
from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.metrics import Followers, Offers, PostMetrics, count, get_json, register_reader
from apps.providers.youtube.adapter import API
from apps.providers.youtube.errors import classify


def _client(ctx: PublishContext):
    return httpcall.client(
        headers={"Authorization": f"Bearer {ctx.credentials.get('access_token', '')}"}
    )


class YouTubeMetrics:
    platform = "youtube"
    offers = Offers(
        post=frozenset({"likes", "replies", "views"}),
        followers=True,
        read_cost=1,
        notes={
            "reposts": "YouTube's Data API counts no shares (the Analytics API does; not read).",
            "clicks": "YouTube's Data API counts no clicks.",
        },
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        with _client(ctx) as http:
            body = get_json(
                http,
                f"{API}/videos",
                classify=classify,
                params={"part": "statistics", "id": post.provider_post_id},
            )
        items = body.get("items") or []
        if not items:
            raise ProviderError(
                ErrorKind.UNKNOWN, "The video no longer exists.", code="not_found", http_status=404
            )
        stats = items[0].get("statistics") or {}
        return PostMetrics(
            likes=count(stats.get("likeCount")),  # absent when the owner hid likes
            replies=count(stats.get("commentCount")),  # absent when comments are off
            views=count(stats.get("viewCount")),
            gaps=self.offers.missing(),
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        with _client(ctx) as http:
            body = get_json(
                http,
                f"{API}/channels",
                classify=classify,
                params={"part": "statistics", "mine": "true"},
            )
        items = body.get("items") or []
        stats = items[0].get("statistics", {}) if items else {}
        if stats.get("hiddenSubscriberCount"):
            return Followers(count=None, gap="account_type", detail="The channel hides it.")
        return Followers(count=count(stats.get("subscriberCount")))


register_reader(YouTubeMetrics())
