"""The sandbox's comments: the thread under a post, replies under their exact key, and
deletion (the sandbox does not hide comments)."""

from __future__ import annotations

from datetime import datetime

from apps.providers import httpcall
from apps.providers.base import PublishContext, PublishedSegment, get_adapter
from apps.providers.comment_reading import CommentReader, InboxOffer, RemoteComment
from apps.providers.sandbox.adapter import SandboxAdapter


class SandboxComments(CommentReader):
    platform = "sandbox"
    offer = InboxOffer(
        read=True, reply=True, delete=True, note="The sandbox has no hidden comments."
    )
    reply_lookup_is_strong = True  # replies are listed by their exact idempotency key

    @staticmethod
    def _adapter() -> SandboxAdapter:
        adapter = get_adapter("sandbox")
        assert isinstance(adapter, SandboxAdapter)
        return adapter

    def _call(self, ctx: PublishContext, method: str, url: str, *, is_create: bool, **kw):
        adapter = self._adapter()
        with adapter._client(ctx.credentials) as client:
            response = httpcall.send(client, method, url, is_create=is_create, **kw)
        if response.status_code != 200:
            raise adapter._classify(response, is_create=is_create)
        return response.json()

    def read_comments(
        self, ctx: PublishContext, post: PublishedSegment, since: datetime | None
    ) -> list[RemoteComment]:
        params = {"since": since.isoformat()} if since else {}
        body = self._call(
            ctx, "GET", f"/posts/{post.provider_post_id}/comments", is_create=False, params=params
        )
        return [
            RemoteComment(
                platform_id=c["id"],
                text=c["text"],
                created_at=datetime.fromisoformat(c["created_at"]),
                author_id=c["author"]["id"],
                author_handle=c["author"]["handle"],
                author_name=c["author"]["handle"],
                parent_id=c["parent"],
                url=c["url"],
            )
            for c in body["comments"]
        ]

    def reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment:
        body = self._call(
            ctx,
            "POST",
            f"/comments/{comment_id}/replies",
            is_create=True,
            json={"text": text},
            headers={"Idempotency-Key": key},
        )
        return _published(body)

    def find_reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment | None:
        body = self._call(
            ctx,
            "GET",
            f"/comments/{comment_id}/replies",
            is_create=False,
            params={"idempotency_key": key},
        )
        replies = body["replies"]
        return _published(replies[0]) if replies else None

    def delete_comment(self, ctx: PublishContext, comment_id: str) -> None:
        self._call(ctx, "DELETE", f"/comments/{comment_id}", is_create=False)


def _published(body: dict) -> PublishedSegment:
    return PublishedSegment(
        provider_post_id=str(body["id"]),
        provider_url=body.get("url", ""),
        published_at=datetime.fromisoformat(body["created_at"]),
    )


READER = SandboxComments()
