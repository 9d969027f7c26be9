"""The sandbox's read side: a post's metrics (no clicks, like a platform without them)
and the account's follower count."""

from __future__ import annotations

from django.conf import settings

from apps.providers import httpcall
from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.errors import classify_status
from apps.providers.metrics import (
    Followers,
    Offers,
    PostMetrics,
    count,
    get_json,
    register_reader,
)


def _client(credentials: dict):
    return httpcall.client(
        base_url=settings.SANDBOX_BASE_URL.rstrip("/") + "/sandbox/api/v1",
        headers={"Authorization": f"Bearer {credentials.get('access_token', '')}"},
    )


def _classify(response, *, is_create: bool):
    body = httpcall.json_body(response)
    return classify_status(
        response, is_create=is_create, code=body.get("error"), message=body.get("message", "")
    )


class SandboxMetrics:
    platform = "sandbox"
    offers = Offers(
        post=frozenset({"likes", "replies", "reposts", "views"}),
        followers=True,
        notes={"clicks": "The sandbox counts no link clicks."},
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        with _client(ctx.credentials) as http:
            body = get_json(http, f"/posts/{post.provider_post_id}/metrics", classify=_classify)
        return PostMetrics(
            likes=count(body.get("likes")),
            replies=count(body.get("replies")),
            reposts=count(body.get("reposts")),
            views=count(body.get("views")),
            gaps=self.offers.missing(),
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        with _client(ctx.credentials) as http:
            body = get_json(http, "/me", classify=_classify)
        return Followers(count=count(body.get("followers_count")))


register_reader(SandboxMetrics())
