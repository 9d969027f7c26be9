"""Instagram's read side (professional accounts, Instagram Login): a post's public counts
(GET /{media-id}?fields=like_count,comments_count) and its insights (GET
/{media-id}/insights: views, shares, saved; permission instagram_business_manage_insights),
and the account's followers (GET /me?fields=followers_count). Instagram counts no clicks
on a post (a feed post has no link). Likes are absent when the owner hid them."""

from __future__ import annotations

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.instagram.connect import INSTAGRAM_GRAPH
from apps.providers.meta.metrics import read_fields, read_insights
from apps.providers.metrics import (
    PERMISSION,
    Followers,
    Offers,
    PostMetrics,
    count,
    register_reader,
)


class InstagramMetrics:
    platform = "instagram"
    offers = Offers(
        post=frozenset({"likes", "replies", "reposts", "views"}),
        followers=True,
        needs_permission={
            "views": "instagram_business_manage_insights",
            "reposts": "instagram_business_manage_insights",
        },
        notes={"clicks": "A feed post carries no link: Instagram counts no clicks on it."},
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        token = ctx.credentials.get("access_token", "")
        url = f"{INSTAGRAM_GRAPH}/{post.provider_post_id}"
        fields = read_fields(token, url, "like_count,comments_count")
        insights = read_insights(token, f"{url}/insights", ["views", "shares", "saved"])
        gaps = self.offers.missing()
        if insights is None:
            gaps.update({"views": PERMISSION, "reposts": PERMISSION})
            insights = {}
        return PostMetrics(
            likes=count(fields.get("like_count")),
            replies=count(fields.get("comments_count")),
            reposts=insights.get("shares"),
            views=insights.get("views"),
            extra={"saves": insights["saved"]} if "saved" in insights else {},
            gaps=gaps,
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        body = read_fields(
            ctx.credentials.get("access_token", ""), f"{INSTAGRAM_GRAPH}/me", "followers_count"
        )
        return Followers(count=count(body.get("followers_count")))


register_reader(InstagramMetrics())
