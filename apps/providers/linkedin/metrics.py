"""LinkedIn's read side, and how little of it a member's connection reaches.

- A member's post: likes and comments come from GET /rest/socialActions/{urn}, which
  needs r_member_social, a permission LinkedIn grants only to approved partners. Without
  it every metric is "permission missing". LinkedIn shows members no impressions or
  clicks of their posts through the API at all.
- A page's post (author urn:li:organization): GET /rest/organizationalEntityShareStatistics
  gives impressions, clicks, likes, comments and shares, with rw_organization_admin
  (Community Management API).
- Followers: a page's through GET /rest/networkSizes/{org}?edgeType=COMPANY_FOLLOWED_BY_MEMBER
  (rw_organization_admin); a member's through GET /rest/memberFollowersCount?q=me, which
  needs r_member_followers (Community Management API as well).
"""

from __future__ import annotations

from urllib.parse import quote

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.linkedin.adapter import API, _client, _post_urn
from apps.providers.linkedin.errors import classify
from apps.providers.metrics import (
    NOT_OFFERED,
    PERMISSION,
    POST_METRICS,
    Followers,
    Offers,
    PostMetrics,
    count,
    get_json,
    register_reader,
)

MEMBER_SOCIAL = "r_member_social"
ORG_ADMIN = "rw_organization_admin"
MEMBER_FOLLOWERS = "r_member_followers"


def _granted(ctx: PublishContext) -> set[str]:
    return set(str(ctx.credentials.get("scope") or "").replace(",", " ").split())


def _author(ctx: PublishContext) -> str:
    return ctx.account.settings.get("author_urn") or f"urn:li:person:{ctx.account.remote_id}"


class LinkedInMetrics:
    platform = "linkedin"
    offers = Offers(
        post=frozenset(POST_METRICS),
        followers=True,
        needs_permission={
            "likes": f"{MEMBER_SOCIAL} (members) or {ORG_ADMIN} (pages)",
            "replies": f"{MEMBER_SOCIAL} (members) or {ORG_ADMIN} (pages)",
            "reposts": ORG_ADMIN,
            "views": ORG_ADMIN,
            "clicks": ORG_ADMIN,
        },
        notes={"views": "Impressions and clicks exist only for pages' posts."},
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        urn, granted = _post_urn(post), _granted(ctx)
        if ":organization:" in _author(ctx) and ORG_ADMIN in granted:
            return self._page_post(ctx, urn)
        if MEMBER_SOCIAL not in granted:
            return PostMetrics(gaps={name: PERMISSION for name in POST_METRICS})
        with _client(ctx.credentials) as http:
            body = get_json(
                http, f"{API}/rest/socialActions/{quote(urn, safe='')}", classify=classify
            )
        return PostMetrics(
            likes=count((body.get("likesSummary") or {}).get("totalLikes")),
            replies=count((body.get("commentsSummary") or {}).get("aggregatedTotalComments")),
            gaps={"reposts": NOT_OFFERED, "views": NOT_OFFERED, "clicks": NOT_OFFERED},
        )

    def _page_post(self, ctx: PublishContext, urn: str) -> PostMetrics:
        kind = "ugcPosts" if ":ugcPost:" in urn else "shares"
        # Rest.li 2.0 wants the list's parentheses as they are and each URN encoded once,
        # which a params dict would encode again: the query is written out here.
        query = (
            f"q=organizationalEntity&organizationalEntity={quote(_author(ctx), safe='')}"
            f"&{kind}=List({quote(urn, safe='')})"
        )
        with _client(ctx.credentials) as http:
            body = get_json(
                http, f"{API}/rest/organizationalEntityShareStatistics?{query}", classify=classify
            )
        elements = body.get("elements") or []
        if not elements:
            raise ProviderError(
                ErrorKind.UNKNOWN, "No statistics for this post.", code="not_found", http_status=404
            )
        stats = elements[0].get("totalShareStatistics") or {}
        return PostMetrics(
            likes=count(stats.get("likeCount")),
            replies=count(stats.get("commentCount")),
            reposts=count(stats.get("shareCount")),
            views=count(stats.get("impressionCount")),
            clicks=count(stats.get("clickCount")),
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        author, granted = _author(ctx), _granted(ctx)
        with _client(ctx.credentials) as http:
            if ":organization:" in author:
                if ORG_ADMIN not in granted:
                    return Followers(count=None, gap=PERMISSION, detail=ORG_ADMIN)
                body = get_json(
                    http,
                    f"{API}/rest/networkSizes/{quote(author, safe='')}",
                    classify=classify,
                    params={"edgeType": "COMPANY_FOLLOWED_BY_MEMBER"},
                )
                return Followers(count=count(body.get("firstDegreeSize")))
            if MEMBER_FOLLOWERS not in granted:
                return Followers(count=None, gap=PERMISSION, detail=MEMBER_FOLLOWERS)
            body = get_json(
                http, f"{API}/rest/memberFollowersCount", classify=classify, params={"q": "me"}
            )
        elements = body.get("elements") or [{}]
        return Followers(count=count(elements[0].get("memberFollowersCount")))


register_reader(LinkedInMetrics())
