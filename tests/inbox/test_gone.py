"""Comments deleted on the platform by their authors: a complete read that no longer lists
a comment we hold marks it gone (kept and shown, never dropped); an incomplete read proves
nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.inbox.models import Comment
from apps.inbox.selectors import CommentFilters, comment_list
from apps.inbox.sync import GONE_GRACE, store_comments, sync_start
from apps.providers.comment_reading import CommentRead, RemoteComment
from tests.inbox.conftest import live_post

pytestmark = pytest.mark.django_db


def _remote(*ids: str) -> list[RemoteComment]:
    now = timezone.now()
    return [RemoteComment(platform_id=i, text=f"c{i}", created_at=now) for i in ids]


def _age_all(rendition) -> None:
    past = timezone.now() - GONE_GRACE - timedelta(minutes=1)
    Comment.objects.filter(rendition=rendition).update(created_at=past)


def test_a_complete_read_marks_what_it_lacks_gone_and_a_comment_read_again_is_back(
    workspace_a,
):
    rendition, _post = live_post(workspace_a)
    sync = sync_start(rendition)
    store_comments(sync, _remote("1", "2", "3"))
    _age_all(rendition)

    store_comments(sync, _remote("1", "3"))  # a plain list: not known to be complete
    assert not Comment.objects.filter(rendition=rendition, gone_at__isnull=False).exists()

    store_comments(sync, CommentRead(_remote("1", "3"), complete=True))
    gone = Comment.objects.get(rendition=rendition, platform_id="2")
    assert gone.gone_at is not None and not gone.is_deleted
    listed = comment_list(workspace_a, CommentFilters(state=""))
    assert gone in listed  # shown as deleted on the platform, not dropped
    assert [c.platform_id for c in listed if c.gone_at] == ["2"]

    store_comments(sync, CommentRead(_remote("1", "2", "3"), complete=True))  # it lagged
    assert Comment.objects.get(pk=gone.pk).gone_at is None


def test_a_comment_stored_moments_ago_is_not_marked_gone(workspace_a):
    """Our reply, kept as soon as it was sent, may not be listed yet."""
    rendition, _post = live_post(workspace_a)
    sync = sync_start(rendition)
    store_comments(sync, _remote("1", "2"))

    store_comments(sync, CommentRead(_remote("1"), complete=True))

    assert not Comment.objects.filter(rendition=rendition, gone_at__isnull=False).exists()


def test_the_inbox_shows_a_comment_deleted_on_the_platform(workspace_a, alice, client):
    rendition, _post = live_post(workspace_a)
    sync = sync_start(rendition)
    store_comments(sync, _remote("1", "2"))
    _age_all(rendition)
    store_comments(sync, CommentRead(_remote("1"), complete=True))
    gone = Comment.objects.get(rendition=rendition, platform_id="2")

    client.force_login(alice)
    page = client.get(f"/w/{workspace_a.slug}/inbox/{gone.pk}/")

    assert page.status_code == 200
    assert f"deleted on {gone.platform}" in page.content.decode()


def test_a_comment_deleted_on_the_platform_takes_no_reply_or_moderation(workspace_a, alice):
    from apps.common.errors import Conflict
    from apps.inbox.models import Reply
    from apps.inbox.services import comment_moderate, reply_submit

    rendition, _post = live_post(workspace_a)
    sync = sync_start(rendition)
    store_comments(sync, _remote("1"))
    _age_all(rendition)
    store_comments(sync, CommentRead([], complete=True))
    gone = Comment.objects.get(rendition=rendition, platform_id="1")

    with pytest.raises(Conflict) as refused:
        reply_submit(comment=gone, author=alice, text="Too late")
    assert refused.value.code == "COMMENT_DELETED" and "deleted on" in str(refused.value)
    with pytest.raises(Conflict):
        comment_moderate(comment=gone, action="delete")
    assert not Reply.objects.exists()
