"""Bluesky's read side: a post's likes, reposts (quotes apart), replies (app.bsky.feed.
getPosts, through the account's PDS) and the account's followers (app.bsky.actor.
getProfile). The network has no view or click counts."""

from __future__ import annotations

from apps.providers import httpcall
from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.bluesky.adapter import _Xrpc
from apps.providers.bluesky.errors import classify
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.metrics import Followers, Offers, PostMetrics, count, register_reader


def _read(ctx: PublishContext, nsid: str, params: dict) -> dict:
    response = _Xrpc(ctx).call("GET", nsid, is_create=False, params=params)
    if response.status_code >= 400:
        raise classify(response, is_create=False)
    return httpcall.json_body(response)


class BlueskyMetrics:
    platform = "bluesky"
    offers = Offers(
        post=frozenset({"likes", "replies", "reposts"}),
        followers=True,
        notes={
            "views": "Bluesky counts no views.",
            "clicks": "Bluesky counts no link clicks.",
        },
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        body = _read(ctx, "app.bsky.feed.getPosts", {"uris": post.provider_post_id})
        posts = body.get("posts") or []
        if not posts:
            # A deleted post is simply absent from the answer.
            raise ProviderError(
                ErrorKind.UNKNOWN, "The post no longer exists.", code="not_found", http_status=404
            )
        found = posts[0]
        return PostMetrics(
            likes=count(found.get("likeCount")),
            replies=count(found.get("replyCount")),
            reposts=count(found.get("repostCount")),
            extra={"quotes": count(found.get("quoteCount")) or 0},
            gaps=self.offers.missing(),
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        did = ctx.credentials.get("did") or ctx.account.remote_id
        body = _read(ctx, "app.bsky.actor.getProfile", {"actor": did})
        return Followers(count=count(body.get("followersCount")))


register_reader(BlueskyMetrics())
