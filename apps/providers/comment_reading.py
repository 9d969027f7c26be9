"""The read side of a platform: the comments under one of our posts, and what the inbox may
do with them (reply, hide, delete).

Each platform that offers it has ``apps/providers/<platform>/inbox.py`` defining ``READER``
(a ``CommentReader``); ``comment_reader(platform)`` finds it, and a platform without one gets
a reader that offers nothing and says why (``InboxOffer.note``). Reads are safe to repeat;
a reply is a write, under the same rules as a first comment: the caller commits its
attempt row before ``reply`` is called, and after a send without an answer calls
``find_reply`` before anything is sent again (``reply_lookup_is_strong`` says whether "not
found" proves there is none).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from apps.providers.base import PublishContext, PublishedSegment, SupportsFirstComment, get_adapter
from apps.providers.errors import ErrorKind, ProviderError


@dataclass(frozen=True)
class RemoteComment:
    """One comment as the platform shows it. ``parent_id`` is the comment it answers, or
    None (or the post's own id) for a comment directly under the post."""

    platform_id: str
    text: str
    created_at: datetime
    author_id: str = ""
    author_handle: str = ""
    author_name: str = ""
    parent_id: str | None = None
    url: str = ""
    is_hidden: bool = False


class CommentRead(list[RemoteComment]):
    """What one read returned, and whether it is ``complete``: every comment the post
    still has (all pages read, no time window, no depth or count cut). Only a complete
    read proves that a comment it lacks is gone from the platform; a plain list is not."""

    def __init__(self, comments: Iterable[RemoteComment] = (), *, complete: bool = False) -> None:
        super().__init__(comments)
        self.complete = complete


def read_is_complete(remote: list[RemoteComment]) -> bool:
    return isinstance(remote, CommentRead) and remote.complete


@dataclass(frozen=True)
class InboxOffer:
    """What the platform's API lets the inbox do with comments under our posts; ``note``
    names what it does not (shown in the inbox and in docs/inbox.md)."""

    read: bool = False
    reply: bool = False
    hide: bool = False
    delete: bool = False
    note: str = ""


class CommentReader:
    """A platform's comments, read and answered. The defaults refuse: a subclass
    overrides what its ``offer`` declares."""

    platform: str = ""
    offer: InboxOffer = InboxOffer()
    # "Not found" from find_reply proves there is no reply (an exact key, no listing lag).
    reply_lookup_is_strong: bool = False

    def read_comments(
        self, ctx: PublishContext, post: PublishedSegment, since: datetime | None
    ) -> list[RemoteComment]:
        """Comments and replies under the post; ``since`` is a hint (the newest seen), a
        platform that cannot filter by time returns them all. A reader that read them all
        returns a ``CommentRead`` marked complete."""
        raise self._refused("read")

    def reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment:
        raise self._refused("reply")

    def find_reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment | None:
        raise self._refused("reply")

    def hide_comment(self, ctx: PublishContext, comment_id: str, *, hidden: bool) -> None:
        raise self._refused("hide")

    def delete_comment(self, ctx: PublishContext, comment_id: str) -> None:
        raise self._refused("delete")

    def _refused(self, what: str) -> ProviderError:
        note = f" {self.offer.note}" if self.offer.note else ""
        return ProviderError(
            ErrorKind.PLAN_RESTRICTED,
            f"{self.platform or 'This platform'} does not let us {what} comments.{note}",
            code=f"inbox_{what}_unavailable",
            retryable=False,
        )


class AdapterReplies(CommentReader):
    """Replies through the adapter's first-comment calls, where commenting under a comment
    is the same call as commenting under a post (a Mastodon reply, a Graph comment)."""

    def _adapter(self) -> SupportsFirstComment:
        adapter = get_adapter(self.platform)
        assert isinstance(adapter, SupportsFirstComment)
        return adapter

    @property
    def reply_lookup_is_strong(self) -> bool:  # type: ignore[override]
        return self._adapter().comment_lookup_is_strong

    def reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment:
        return self._adapter().publish_comment(ctx, PublishedSegment(comment_id), text, key=key)

    def find_reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment | None:
        return self._adapter().find_comment(ctx, PublishedSegment(comment_id), text, key=key)


# Platforms whose API gives us no comments under our posts, and why.
NOT_OFFERED: dict[str, str] = {
    "linkedin": (
        "Reading comments needs LinkedIn's Community Management API (organization pages, "
        "an approved app); member tokens cannot list a post's comments."
    ),
    "tiktok": (
        "TikTok's Content Posting API offers no comment endpoints; the Research API that "
        "reads comments is for approved researchers, not for accounts' own posts."
    ),
    "pinterest": "Pinterest's API v5 offers no comments on Pins.",
}


class _NotOffered(CommentReader):
    def __init__(self, platform: str, note: str) -> None:
        self.platform = platform
        self.offer = InboxOffer(note=note)


def comment_reader(platform: str) -> CommentReader:
    """The platform's reader, or one that offers nothing and says why."""
    if platform in NOT_OFFERED:
        return _NotOffered(platform, NOT_OFFERED[platform])
    name = f"apps.providers.{platform}.inbox"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name not in (name, f"apps.providers.{platform}"):
            raise  # a reader that exists but is broken must not pass for an absent one
        return _NotOffered(platform, "The inbox does not read this platform yet.")
    reader: CommentReader = module.READER
    return reader
