"""Facebook Pages' read side: a post's reactions, comments and shares (GET /{post-id}
with summary fields) and its insights (GET /{post-id}/insights: post_media_view,
post_clicks; permission read_insights), and the Page's followers (GET
/{page-id}?fields=followers_count). Meta retired the post impression metrics in November
2025; views (post_media_view) replace them."""

from __future__ import annotations

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.meta.graph import FACEBOOK_GRAPH
from apps.providers.meta.metrics import read_fields, read_insights
from apps.providers.metrics import (
    PERMISSION,
    Followers,
    Offers,
    PostMetrics,
    count,
    register_reader,
)

FIELDS = "reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0),shares"


class FacebookMetrics:
    platform = "facebook"
    offers = Offers(
        post=frozenset({"likes", "replies", "reposts", "views", "clicks"}),
        followers=True,
        needs_permission={"views": "read_insights", "clicks": "read_insights"},
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        token = ctx.credentials.get("access_token", "")
        url = f"{FACEBOOK_GRAPH}/{post.provider_post_id}"
        fields = read_fields(token, url, FIELDS)
        insights = read_insights(token, f"{url}/insights", ["post_media_view", "post_clicks"])
        gaps: dict[str, str] = {}
        if insights is None:
            gaps = {"views": PERMISSION, "clicks": PERMISSION}
            insights = {}
        return PostMetrics(
            likes=count(((fields.get("reactions") or {}).get("summary") or {}).get("total_count")),
            replies=count(((fields.get("comments") or {}).get("summary") or {}).get("total_count")),
            # `shares` is absent until the first share.
            reposts=count((fields.get("shares") or {}).get("count", 0)),
            views=insights.get("post_media_view"),
            clicks=insights.get("post_clicks"),
            gaps=gaps,
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        body = read_fields(
            ctx.credentials.get("access_token", ""),
            f"{FACEBOOK_GRAPH}/{ctx.account.remote_id}",
            "followers_count",
        )
        return Followers(count=count(body.get("followers_count")))


register_reader(FacebookMetrics())
