"""TikTok's read side: a video's likes, comments, shares and views (POST
/v2/video/query/, scope video.list) and the account's followers (GET /v2/user/info/,
scope user.info.stats). TikTok counts no clicks. A post TikTok published without naming
its video (private or still moderating: only a publish id) cannot be read."""

from __future__ import annotations

from apps.providers import httpcall
from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.metrics import (
    NOT_OFFERED,
    POST_METRICS,
    Followers,
    Offers,
    PostMetrics,
    count,
    register_reader,
)
from apps.providers.tiktok.adapter import API, _call, _client
from apps.providers.tiktok.errors import classify

VIDEO_FIELDS = "id,like_count,comment_count,share_count,view_count"


class TikTokMetrics:
    platform = "tiktok"
    offers = Offers(
        post=frozenset({"likes", "replies", "reposts", "views"}),
        followers=True,
        needs_permission={"likes": "video.list", "views": "video.list"},
        notes={"clicks": "TikTok counts no clicks."},
    )

    def read_post_metrics(self, ctx: PublishContext, post: PublishedSegment) -> PostMetrics:
        video_id = post.provider_post_id
        if not video_id.isdigit():
            return PostMetrics(gaps={name: NOT_OFFERED for name in POST_METRICS})
        with _client(ctx.credentials.get("access_token", "")) as http:
            data = _call(
                http,
                f"{API}/video/query/?fields={VIDEO_FIELDS}",
                {"filters": {"video_ids": [video_id]}},
                is_create=False,
            )
        videos = data.get("videos") or []
        video = videos[0] if videos else {}
        return PostMetrics(
            likes=count(video.get("like_count")),
            replies=count(video.get("comment_count")),
            reposts=count(video.get("share_count")),
            views=count(video.get("view_count")),
            gaps=self.offers.missing(),
        )

    def read_followers(self, ctx: PublishContext) -> Followers:
        with _client(ctx.credentials.get("access_token", "")) as http:
            response = httpcall.send(
                http,
                "GET",
                f"{API}/user/info/",
                is_create=False,
                params={"fields": "follower_count"},
            )
        body = httpcall.json_body(response)
        if response.status_code != 200 or (body.get("error") or {}).get("code") != "ok":
            raise classify(response, is_create=False)
        user = (body.get("data") or {}).get("user") or {}
        return Followers(count=count(user.get("follower_count")))


register_reader(TikTokMetrics())
