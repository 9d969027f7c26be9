"""Reddit's read side: a submission's score, upvote ratio and comment count (GET
/api/info?id=t3_…) and the user's followers (GET /api/v1/me: the profile's subscribers).
Reddit shows views only to moderators in its own app and counts no clicks through the API;
the score is net votes, kept as `likes`."""

from __future__ import annotations

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.metrics import Followers, Offers, PostMetrics, count, register_reader
from apps.providers.reddit.api import API, call, client


class RedditMetrics:
    platform = "reddit"
    offers = Offers(
        post=frozenset({"likes", "replies", "reposts"}),
        followers=True,
        notes={
            "views": "Reddit's API gives no view counts.",
            "clicks": "Reddit's API gives no click counts.",
        },
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        with client(ctx.credentials) as http:
            body = call(
                http,
                "GET",
                f"{API}/api/info",
                is_create=False,
                params={"id": post.provider_post_id},
            )
        children = (body.get("data") or {}).get("children") or []
        if not children:
            raise ProviderError(
                ErrorKind.UNKNOWN, "The post no longer exists.", code="not_found", http_status=404
            )
        data = children[0].get("data") or {}
        ratio = data.get("upvote_ratio")
        return PostMetrics(
            likes=count(data.get("score")),
            replies=count(data.get("num_comments")),
            reposts=count(data.get("num_crossposts")),
            extra={"upvote_ratio_pct": round(float(ratio) * 100)} if ratio is not None else {},
            gaps=self.offers.missing(),
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        with client(ctx.credentials) as http:
            body = call(http, "GET", f"{API}/api/v1/me", is_create=False)
        return Followers(count=count((body.get("subreddit") or {}).get("subscribers")))


register_reader(RedditMetrics())
