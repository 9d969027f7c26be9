"""Mastodon's read side: a status's favourites, boosts and replies (GET
/api/v1/statuses/:id) and the account's followers (GET /api/v1/accounts/:id). Mastodon
counts no views or clicks, by design."""

from __future__ import annotations

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.mastodon.adapter import _client, _instance
from apps.providers.mastodon.errors import classify
from apps.providers.metrics import Followers, Offers, PostMetrics, count, get_json, register_reader


class MastodonMetrics:
    platform = "mastodon"
    offers = Offers(
        post=frozenset({"likes", "replies", "reposts"}),
        followers=True,
        notes={
            "views": "Mastodon counts no views or impressions.",
            "clicks": "Mastodon counts no link clicks.",
        },
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        url = f"{_instance(ctx.account)}/api/v1/statuses/{post.provider_post_id}"
        with _client(ctx.credentials) as http:
            body = get_json(http, url, classify=classify)
        # The counts are what the account's own instance knows of the status (remote
        # instances' favourites arrive by federation, some late or never).
        return PostMetrics(
            likes=count(body.get("favourites_count")),
            replies=count(body.get("replies_count")),
            reposts=count(body.get("reblogs_count")),
            gaps=self.offers.missing(),
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        account = ctx.account
        account_id = account.settings.get("account_id") or account.remote_id.split("@")[0]
        url = f"{_instance(account)}/api/v1/accounts/{account_id}"
        with _client(ctx.credentials) as http:
            body = get_json(http, url, classify=classify)
        return Followers(count=count(body.get("followers_count")))


register_reader(MastodonMetrics())
