"""Threads' read side: a post's insights (GET /{media-id}/insights: views, likes,
replies, reposts, quotes, shares; permission threads_manage_insights) and the profile's
followers (GET /me/threads_insights?metric=followers_count). Threads counts no clicks on
a post (link clicks exist only per profile)."""

from __future__ import annotations

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.meta.metrics import read_insights
from apps.providers.metrics import PERMISSION, Followers, Offers, PostMetrics, register_reader
from apps.providers.threads.connect import THREADS_GRAPH

POST_INSIGHTS = ["views", "likes", "replies", "reposts", "quotes", "shares"]


class ThreadsMetrics:
    platform = "threads"
    offers = Offers(
        post=frozenset({"likes", "replies", "reposts", "views"}),
        followers=True,
        needs_permission={
            n: "threads_manage_insights" for n in ("likes", "replies", "reposts", "views")
        },
        notes={"clicks": "Threads counts link clicks per profile, not per post."},
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        token = ctx.credentials.get("access_token", "")
        values = read_insights(
            token, f"{THREADS_GRAPH}/{post.provider_post_id}/insights", POST_INSIGHTS
        )
        if values is None:
            return PostMetrics(
                gaps={**self.offers.missing(), **{n: PERMISSION for n in self.offers.post}}
            )
        return PostMetrics(
            likes=values.get("likes"),
            replies=values.get("replies"),
            reposts=values.get("reposts"),
            views=values.get("views"),
            extra={k: values[k] for k in ("quotes", "shares") if k in values},
            gaps=self.offers.missing(),
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        token = ctx.credentials.get("access_token", "")
        values = read_insights(token, f"{THREADS_GRAPH}/me/threads_insights", ["followers_count"])
        if values is None:
            return Followers(count=None, gap=PERMISSION, detail="threads_manage_insights")
        return Followers(count=values.get("followers_count"))


register_reader(ThreadsMetrics())
